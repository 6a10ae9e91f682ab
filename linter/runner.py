"""The pipeline: discover → read → sources → engines → resolve → rules → findings.

Errors are values: an unexpected exception while linting one file becomes an MG000 finding for
that file (an internal error the user should report), never a traceback.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, Iterator, Mapping

from .analyze import FileSet, analyze
from . import bounds
from .cancel import LintCancelled, asking
from .bounds import MAX_FINDINGS_PER_FILE_CODE, cut_findings, side_cut_findings
from .discover import candidates, kind_by_name, read_source, too_big
from .findings import Finding, Severity, capped_per_file, internal_error
from .launch import HpaInfo, Launch, ServiceInfo
from .options import Options
from .policy import MAX_FILE_BYTES
from .prepass import engine_mention, may_matter
from .source import SourceFile, Span
from .sources import FileResult, extract
from .records import dataclass, field, replace
from .safeio import side_files

if TYPE_CHECKING:
    from .config import LoadedConfig


@dataclass(slots=True)
class RunResult:
    findings: list[Finding] = field(default_factory=list)
    files: list[FileResult] = field(default_factory=list)
    file_count: int = 0

    @property
    def launches(self) -> list[Launch]:
        return [la for f in self.files for la in f.launches]

    @property
    def services(self) -> list[ServiceInfo]:
        return [s for f in self.files for s in f.services]

    @property
    def hpas(self) -> list[HpaInfo]:
        return [h for f in self.files for h in f.hpas]




def extract_file(source: SourceFile, images: Mapping[str, str] | None = None) -> FileResult:
    """The launches of one file; ``images``: the configuration's `[images]` table for it."""
    try:
        if images:
            from .images import custom_images

            with custom_images(images):
                result = extract(source)
        else:
            result = extract(source)
        result.launches.sort(key=lambda la: la.program.span.start)
        result.findings.extend(cut_findings(source))
        result.findings.extend(side_cut_findings(source))
        cap = bounds.MAX_LAUNCHES
        if len(result.launches) > cap:
            first = result.launches[cap]
            result.findings.append(Finding(
                "MG001", Severity.WARNING,
                f"this file has more than {cap:,} launches (no deployment comes close): "
                "this one and the ones after it are not checked",
                first.source, first.program.span,
                hint="lint the file in parts"))
            del result.launches[cap:]
        return result
    except RecursionError as exc:
        result = FileResult(source)
        result.findings.append(internal_error(source, exc))
        return result
    except Exception as exc:  # noqa: BLE001 - errors are values (see module docstring)
        result = FileResult(source)
        result.findings.append(internal_error(source, exc))
        return result


def discover_inputs(paths: list[str], options: "Options | None" = None
                    ) -> list[tuple[str, str | None, bool]]:
    """The files to lint: (path, kind by name or content or None, named on the command line).

    Files found under directories are kept only when their kind shows (name, or content for
    names without a suffix); the excludes come from the command line, else the configuration
    that applies to the current directory (or --config), relative to that file's directory.
    """
    from .config import find_for_directory
    from .discover import excluder, sniff_file

    options = options or Options()
    cfg = options.config or find_for_directory(os.getcwd())
    s = cfg.settings
    patterns = [*(options.exclude if options.exclude is not None else s.exclude),
                *s.extend_exclude, *(options.extend_exclude or [])]
    excluded = excluder(patterns, cfg.root if cfg.path else os.getcwd())
    force = options.force_exclude or s.force_exclude
    out: list[tuple[str, str | None, bool]] = []
    for cand in candidates([p for p in paths if p != "-"], excluded, force):
        kind = kind_by_name(cand.path)
        if kind is None and not cand.explicit:
            kind = sniff_file(cand.path)
            if kind is None:
                continue
        out.append((cand.path, kind, cand.explicit))
    return out


# what reading one input gave: the finding that stands for it (it could not be read, or is not
# a kind mgpu-lint reads) or its sources' result (None: not read, or nothing in it can matter)
Outcome = tuple[Finding | None, FileResult | None]


def extract_input(src: SourceFile | None, err: Finding | None, explicit: bool,
                  config_of: "Callable[[str], LoadedConfig] | None" = None) -> Outcome:
    """One input read (``src``, or the MG001 ``err`` of its reading) run through its source;
    ``explicit``: named on the command line (an unknown kind is then an MG017)."""
    if err is not None:
        return err, None
    assert src is not None
    if src.kind == "unknown":
        if explicit:
            return Finding(
                "MG017", Severity.INFO,
                "not a file kind mgpu-lint reads (Kubernetes/compose YAML or JSON, shell "
                "script, Dockerfile, Markdown); nothing checked", src, Span(0, 0),
                hint="name the file so its kind shows (.yaml, .sh, Dockerfile, .md) or add a "
                     "shell shebang"), None
        return None, None
    table = config_of(src.path).settings.images if config_of is not None else None
    if not table and not may_matter(src.text, src.kind):
        # no launch, linked object or directive can be in it (linter/prepass.py); a custom
        # image need not name an engine, so a configured `[images]` table reads every file
        return None, None
    return None, extract_file(src, table)


def text_source(name: str, text: str, limit: int
                ) -> tuple[SourceFile | None, Finding | None]:
    """An input given as text (stdin, an editor's document) read as a file named ``name``."""
    from .discover import decode

    data = text.encode("utf-8", "surrogateescape")
    return (decode(name, data, kind_by_name(name)) if len(data) <= limit else
            (None, too_big(name, f"more than {limit:,} bytes", limit)))


@side_files()
def read_files(paths: list[str], stdin_text: str | None = None,
               stdin_filename: str | None = None, command: str | None = None,
               max_bytes: int | None = None,
               found: list[tuple[str, str | None, bool]] | None = None,
               config_of: "Callable[[str], LoadedConfig] | None" = None,
               outcome_of: "Callable[[str, str | None, bool], Outcome] | None" = None
               ) -> RunResult:
    """Read every input and run the sources on it (no rules yet); ``found``: the files
    discover_inputs chose (by default, everything under ``paths`` with the default excludes);
    ``config_of``: the configuration that applies to a file (its `[images]` table reaches the
    sources here, the one place they receive configuration); ``outcome_of``: what reading a
    file of ``found`` gives, instead of reading it here (the language server's document and the
    files beside it, kept from one lint to the next: linter/context.py)."""
    run = RunResult()
    limit = max_bytes or MAX_FILE_BYTES

    def outcomes() -> Iterator[tuple[Outcome, bool]]:
        if command is not None:
            yield extract_input(SourceFile("<command>", command, "command"), None, True,
                                config_of), True
        for path, kind, explicit in found if found is not None else discover_inputs(paths):
            if outcome_of is not None:
                yield outcome_of(path, kind, explicit), explicit
            else:
                yield extract_input(*read_source(path, kind, limit), explicit, config_of), \
                    explicit
        if "-" in paths or stdin_text is not None:
            yield extract_input(*text_source(stdin_filename or "<stdin>", stdin_text or "",
                                             limit), True, config_of), True

    named: list[FileResult] = []  # files named on the command line without a launch (MG017)
    for (err, result), explicit in outcomes():
        run.file_count += 1
        if err is not None:
            run.findings.append(err)
            continue
        if result is None:
            continue
        run.files.append(result)
        run.findings.extend(result.findings)
        if explicit and not result.launches:
            # its own reading found none (a launch in a followed script still counts as its)
            named.append(result)
    _adopt_followed(run)
    joined: set[int] = set()
    if any(r.kserve for r in run.files):
        from .sources import join_kserve

        joins, joined = join_kserve(run.files)
        run.findings.extend(joins)
    # a Dockerfile that a compose service in this run is built from: its launch is checked there
    built = {la.context.built_from for r in run.files for la in r.launches if la.context.built_from}
    for result in named:
        if built and os.path.realpath(result.source.path) in built:
            continue
        if id(result) not in joined and result.source.budget.cut is None and not any(
                f.severity is Severity.ERROR or f.code in ("MG011", "MG001")
                for f in result.findings):
            # (MG001: reading stopped short, so "no launch was understood" would be a guess)
            no_launch = no_launch_found(result.source)
            if no_launch is not None:
                run.findings.append(no_launch)
    return run


def _adopt_followed(run: RunResult) -> None:
    """Launches a file's reader found in another file (a Dockerfile's ENTRYPOINT script) belong
    to that file's result, so its suppression comments and positions apply; when that file was
    linted too, its own reading of the same lines gives way to the one that knows the image."""
    if all(la.source is r.source for r in run.files for la in r.launches):
        return  # nothing read from another file: no path to resolve (a realpath per file)
    by_path = {os.path.realpath(r.source.path): r for r in run.files}
    adopted: set[int] = set()  # two Dockerfiles may start the same script: both readings stay
    for result in list(run.files):
        foreign = [la for la in result.launches if la.source is not result.source]
        if not foreign:
            continue
        result.launches = [la for la in result.launches if la.source is result.source]
        for la in foreign:
            key = os.path.realpath(la.source.path)
            home = by_path.get(key)
            if home is None:
                home = by_path[key] = FileResult(la.source)
                run.files.append(home)
            elif home.source.text == la.source.text:
                la = replace(la, source=home.source)
                home.launches = [own for own in home.launches if id(own) in adopted
                                 or own.program.span != la.program.span]
            else:
                continue  # the file changed between the two reads
            adopted.add(id(la))
            home.launches.append(la)
            home.launches.sort(key=lambda x: x.program.span.start)


def _object_lines(launch: Launch, source: SourceFile) -> tuple[int, ...]:
    """The first line of the launch's object when it is in ``source`` (a launch joined from
    several files: its object is the InferenceService, its program in the runtime's file)."""
    span = launch.context.object_span
    if span is None:
        return ()
    there, at = launch.source.place(span)
    return (there.line_col(at.start)[0],) if there is source else ()


def no_launch_found(src: SourceFile) -> Finding | None:
    """MG017 for a named file with no launch, only when it names an engine where a launch would
    be written (DECISIONS: "MG017 fires only when the file mentions an engine"): a workflow,
    a values file or a README that never names one is simply not a deployment file, and
    pre-commit over a repository names every such file."""
    hit = engine_mention(src.text, src.kind)
    if hit is None:
        return None
    start, end = hit
    word = src.text[start:end]
    return Finding(
        "MG017", Severity.INFO,
        f"`{word}` is named here, but no engine launch was understood in this "
        f"{_KIND_NAMES.get(src.kind, 'file')}; nothing checked",
        src, Span(start, end),
        hint=f"`mgpu-lint launches {src.path}` shows what is read; a launch behind a wrapper "
             "script or a custom image's entrypoint is not followed")


_KIND_NAMES = {"yaml": "YAML file", "shell": "shell script", "dockerfile": "Dockerfile",
               "markdown": "Markdown file (fenced blocks)", "command": "command line"}




def selector(options: Options, cfg: "LoadedConfig", path: str) -> Callable[[str], bool]:
    s = cfg.settings
    select = options.select if options.select is not None else s.select
    ignore = [*s.ignore, *(options.ignore or []), *cfg.ignored_for(path)]
    select = list(select) if select is not None else None
    extend = [*s.extend_select, *(options.extend_select or [])]

    def is_selected(code: str) -> bool:
        best_sel = max((len(p) for p in (select or ["MG"]) + extend if code.startswith(p)),
                       default=-1)
        best_ign = max((len(p) for p in ignore if code.startswith(p)), default=-1)
        return best_sel >= 0 and best_sel >= best_ign

    return is_selected


@dataclass(slots=True)
class Focus:
    """The one file of a run whose findings are wanted (the language server's document, linted
    with the files beside it): its path, and the text read for it (None: nothing in it was
    read by a source; set by the reading, runner.read_files' ``outcome_of``)."""

    path: str
    source: SourceFile | None


def touches(launch: Launch, focus: SourceFile, fileset: FileSet) -> bool:
    """Whether a finding of ``launch`` can be placed in ``focus``: its own launch, one joined
    from it (findings.placed), or one that a Service or HPA of it links to (MG602, MG704
    report at the Service's type, the HPA's metric)."""
    if launch.source is focus or any(p is focus for _, p in launch.source.parts):
        return True
    links = fileset.links
    return any(s.source is focus for s in links.services_of(launch)) or \
        any(h.source is focus for h in links.hpas_of(launch))


@side_files()  # the files read and the launches analysed share one cache
def lint(paths: list[str], options: Options, stdin_text: str | None = None,
         stdin_filename: str | None = None, command: str | None = None,
         cancelled: Callable[[], bool] | None = None,
         found: list[tuple[str, str | None, bool]] | None = None,
         outcome_of: Callable[[str, str | None, bool], Outcome] | None = None,
         focus: Focus | None = None) -> RunResult:
    """Everything: read, find launches, analyse them, apply configuration and suppressions.

    ``cancelled``, when given, is asked after the files are read and before each launch is
    analysed, and while the files are read (linter/cancel.py); when it answers True the run
    stops there with `LintCancelled`.  ``found`` and ``outcome_of``: the files to lint and what
    reading each gives (read_files); ``focus``: only that file's findings are made (the launches
    that can place one there are analysed, the others are context) and returned."""
    from . import suppress
    from .config import config_for

    max_bytes = options.config.settings.max_file_size if options.config else None
    with asking(cancelled):
        run = read_files(paths, stdin_text, stdin_filename, command, max_bytes,
                         found if found is not None else discover_inputs(paths, options),
                         config_of=lambda path: config_for(path, options.config),
                         outcome_of=outcome_of)
    if cancelled is not None and cancelled():
        raise LintCancelled
    fileset = FileSet(run.services, run.hpas, run.launches)
    # the results whose findings are not wanted (a file of the focus's path read by another
    # file's source from disk, not from the editor's text, is not the focus either)
    others: set[int] = set() if focus is None else {
        id(r.source) for r in run.files if r.source is not focus.source}
    by_source: dict[int, list[Finding]] = {}
    sources: dict[int, SourceFile] = {}
    anchors: dict[int, tuple[int, ...]] = {}
    annotations: dict[int, tuple[str, ...]] = {}
    for f in run.findings:
        by_source.setdefault(id(f.source), []).append(f)
        sources[id(f.source)] = f.source
    for result in run.files:
        src = result.source
        sources[id(src)] = src
        cfg = config_for(src.path, options.config)
        for launch in result.launches:
            if cancelled is not None and cancelled():
                raise LintCancelled
            if focus is not None and (focus.source is None
                                      or not touches(launch, focus.source, fileset)):
                continue
            try:
                made = analyze(launch, cfg.settings, options, fileset)
                made = [*made, *side_cut_findings(launch.source)]
            except Exception as exc:  # noqa: BLE001 - errors are values
                made = [internal_error(src, exc)]
            first = src.line_col(launch.program.span.start)[0]
            lines = (first,)
            if launch.context.container_name is not None and launch.context.container_name.span:
                lines = (first, src.line_col(launch.context.container_name.span.start)[0])
            for f in made:
                if f.source is src:
                    anchors[id(f)] = lines
                else:
                    # placed in another file of a joined launch (findings.placed): the lines
                    # of its object there (the InferenceService) enclose it
                    anchors[id(f)] = _object_lines(launch, f.source)
                    sources[id(f.source)] = f.source
                by_source.setdefault(id(f.source), []).append(f)
    if focus is not None:
        by_source = {key: fs for key, fs in by_source.items()
                     if key not in others and sources[key].path == focus.path}
    for result in run.files:
        src = result.source
        if id(src) in others:
            continue
        if result.ignores:
            annotations.update(suppress.annotation_codes(by_source.get(id(src), ()),
                                                         result.ignores))
    final: list[Finding] = []
    for key, findings in by_source.items():
        src = sources[key]
        cfg = config_for(src.path, options.config)
        is_selected = selector(options, cfg, src.path)
        codes = {code: is_selected(code) for code in {f.code for f in findings}}
        chosen = [f for f in findings if codes[f.code]]
        kept, dirs = suppress.apply(chosen, src, anchors, annotations)
        final.extend(kept)
        if dirs and is_selected("MG012"):
            final.extend(suppress.unused(src, dirs, is_selected))
    for result in run.files:
        if id(result.source) not in by_source and id(result.source) not in others:
            src = result.source
            dirs = suppress.directives(src)
            cfg = config_for(src.path, options.config)
            is_selected = selector(options, cfg, src.path)
            if dirs and is_selected("MG012"):
                final.extend(suppress.unused(src, dirs, is_selected))
    # one finding per place: a rule that runs per launch may see the same object twice (two
    # containers scaled by one HPA)
    unique = {(f.source.path, f.span.start, f.span.end, f.code, f.message): f for f in final}
    # at most MAX_FINDINGS_PER_FILE_CODE of a code in a file, the rest summed up at the first
    # left out: 1,000 launches of 220 bad flags were 203,000 findings (SARIF 130 MB, 14.5 s)
    run.findings = capped_per_file(sorted(unique.values(), key=lambda f: f.sort_key()),
                                   MAX_FINDINGS_PER_FILE_CODE)
    return run
