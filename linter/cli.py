"""Command line: `mgpu-lint [check] PATH…` and the sub-commands.

One front end, one look: every command's help is click's plain layout (``Usage:``, ``Options:``,
``Commands:``), every usage error is one line ``mgpu-lint[ COMMAND]: error: … (see `… --help`)``
on stderr with exit 2, and exit codes mean the same everywhere (0 clean, 1 findings, 2 usage or
configuration error).

The lint path (`mgpu-lint PATH…`, `mgpu-lint check PATH…`) is parsed here from the option table
``LINT_OPTIONS`` without importing typer: typer costs ~45 ms of CPU at start-up against ~2 ms for
this parser (`python -X importtime`, 2026-12-01), and one file in CI or a pre-commit hook is
dominated by start-up. The messages copy click's wording so the two halves read alike. The other
sub-commands (`rules`, `rule`, `plan`, `layers`, `launches`, `server`) are a typer app with rich
output turned off, which also provides shell completion (`--install-completion`). A path that is
also a sub-command name is linted when it exists as a file.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, NamedTuple, Sequence

from . import bounds

PROG = "mgpu-lint"
# sub-command → one-line summary (the first line of its typer docstring; a test checks they match)
SUBCOMMANDS = {
    "check": "Lint files, directories, stdin (-) or one --command (the default command).",
    "rules": "List every rule: code, name, default severity, summary.",
    "rule": "Explain one rule (or --all), with the math behind it.",
    "plan": "Size a model for users x context and choose a tensor/pipeline/data-parallel layout.",
    "layers": "Print llama.cpp's layer assignment per device for -ngl, -ts and --rpc.",
    "launches": "Print every engine launch found: program position, engine, argv words, GPUs.",
    "server": "Run the language server over stdio: diagnostics for open documents in an editor.",
}
FORMATS = ("text", "json", "sarif", "github")
SEVERITIES = ("error", "warning", "info")
COLORS = ("auto", "always", "never")
# what shell completion (typer) sees: the environment variable its scripts set
COMPLETE_VAR = "_MGPU_LINT_COMPLETE"


class UsageError(Exception):
    """A bad command line: one line on stderr, exit 2."""


# -- the option table ---------------------------------------------------------------------------
# One row per option of the lint command. ``value`` names the value (None: a flag); ``kind``
# converts it: "choice" (one of ``choices``), "int" (at least ``minimum``), "list" (comma-separated,
# repeatable, accumulated) or "str". Adding an option is adding a row here.


class Opt(NamedTuple):
    names: tuple[str, ...]
    dest: str
    help: str
    value: str | None = None
    kind: str = "str"
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None


LINT_OPTIONS: tuple[Opt, ...] = (
    Opt(("--output-format", "--format"), "output_format", "output format [default: text]",
        "FORMAT", "choice", FORMATS),
    Opt(("--select",), "select", "rule codes or prefixes to check (MG1,MG301); replaces the "
        "configuration's", "CODES", "list"),
    Opt(("--extend-select",), "extend_select", "codes or prefixes to add to the selection",
        "CODES", "list"),
    Opt(("--ignore",), "ignore", "codes or prefixes to skip (the most specific of select and "
        "ignore wins)", "CODES", "list"),
    Opt(("--exclude",), "exclude", "file or directory globs to skip, replacing the default "
        "list (.git, .venv, node_modules, ...)", "GLOBS", "list"),
    Opt(("--extend-exclude",), "extend_exclude", "globs to skip in addition to `exclude`",
        "GLOBS", "list"),
    Opt(("--force-exclude",), "force_exclude", "apply the excludes to files named on the "
        "command line too (for pre-commit)"),
    Opt(("--config",), "config", "configuration file (TOML) instead of the closest one", "FILE"),
    Opt(("--target-version",), "target_version", "vLLM release (vllm==0.30.0) for launches "
        "whose file pins none; an image tag or pip pin in the file wins", "VERSION"),
    Opt(("--gpu",), "gpu", "GPU type when no file states it (H100 SXM)", "NAME"),
    Opt(("--gpus-per-node",), "gpus_per_node", "GPUs per node [default: 8]", "N", "int",
        minimum=1, maximum=bounds.MAX_GPUS_PER_NODE),
    Opt(("--fail-on",), "fail_on", "lowest severity that fails the run [default: warning]",
        "SEVERITY", "choice", SEVERITIES),
    Opt(("--exit-zero",), "exit_zero", "exit 0 even with findings"),
    Opt(("--stdin-filename",), "stdin_filename", "name of the text read from - (its suffix "
        "picks the kind; without one the content does)", "PATH"),
    Opt(("--command",), "command_text", "lint one command line, e.g. 'vllm serve MODEL -tp 4'",
        "TEXT"),
    Opt(("--statistics",), "statistics", "print a table of findings per code (code, name, "
        "count) instead of the findings"),
    Opt(("--show-settings",), "show_settings", "print the configuration file that applies to "
        "the first PATH and the merged settings, then exit"),
    Opt(("--show-files",), "show_files", "print the files that would be linted, then exit"),
    Opt(("--color",), "color", "colour the text output (NO_COLOR / FORCE_COLOR apply to auto) "
        "[default: auto]", "WHEN", "choice", COLORS),
    Opt(("--no-color",), "no_color", "the same as --color never"),
    Opt(("-q", "--quiet"), "quiet", "print only the findings"),
    Opt(("-V", "--version"), "version", "print the version and exit"),
    Opt(("-h", "--help"), "help", "Show this message and exit."),
)
# fixes (issue 18): the only options under which files are written
FIX_OPTIONS: tuple[Opt, ...] = (
    Opt(("--fix",), "fix", "apply the safe fixes to the files (the only option that writes "
        "files), then report what is left"),
    Opt(("--unsafe-fixes",), "unsafe_fixes", "with --fix, --diff or --fix-only: also apply the "
        "fixes that change what runs (a did-you-mean flag, a GPU count)"),
    Opt(("--diff",), "diff", "print the fixes as a unified diff and write nothing (exit 1 when "
        "there is one)"),
    Opt(("--fix-only",), "fix_only", "apply the fixes and report nothing else (exit 0)"),
    Opt(("--project-root",), "project_root", "SARIF: the directory %SRCROOT% names (default: "
        "the git top level above the working directory, else the working directory)", "DIR"),
)
LINT_OPTIONS = LINT_OPTIONS + FIX_OPTIONS
_BY_NAME = {name: opt for opt in LINT_OPTIONS for name in opt.names}


def _convert(opt: Opt, name: str, raw: str) -> Any:
    """One option value, checked; messages follow click's wording."""
    if opt.kind == "choice":
        if raw not in opt.choices:
            listed = ", ".join(repr(c) for c in opt.choices)
            raise UsageError(f"Invalid value for '{name}': {raw!r} is not one of {listed}.")
        return raw
    if opt.kind == "int":
        try:
            value = int(raw)
        except ValueError:
            raise UsageError(f"Invalid value for '{name}': {raw!r} is not a valid integer.") \
                from None
        lo, hi = opt.minimum, opt.maximum
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            rng = f"{lo}<=x<={hi}" if lo is not None and hi is not None else \
                f"x>={lo}" if lo is not None else f"x<={hi}"
            raise UsageError(f"Invalid value for '{name}': {value} is not in the range {rng}.")
        return value
    if opt.kind == "list":
        return [part.strip() for part in raw.split(",") if part.strip()]
    return raw


def parse_lint_args(argv: Sequence[str]) -> tuple[dict[str, Any], list[str]]:
    """The lint command's options and paths (raises UsageError)."""
    values: dict[str, Any] = {opt.dest: (False if opt.value is None else None)
                              for opt in LINT_OPTIONS}
    paths: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            paths.extend(args[i:])
            break
        if not arg.startswith("-") or arg == "-":
            paths.append(arg)
            continue
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        opt = _BY_NAME.get(name)
        if opt is None:
            import difflib

            close = difflib.get_close_matches(name, list(_BY_NAME), n=1)
            raise UsageError(f"No such option: {name}"
                             + (f" Did you mean {close[0]}?" if close else ""))
        if opt.value is None:
            if eq:
                raise UsageError(f"Option '{name}' does not take a value.")
            values[opt.dest] = True
            continue
        if eq:
            raw = inline
        elif i < len(args):
            raw = args[i]
            i += 1
        else:
            raise UsageError(f"Option '{name}' requires an argument.")
        value = _convert(opt, name, raw)
        if opt.kind == "list" and values[opt.dest] is not None:
            values[opt.dest] = values[opt.dest] + value
        else:
            values[opt.dest] = value
    return values, paths


def lint_help(prog: str = PROG) -> str:
    """The lint command's help, in click's plain layout (like the typer sub-commands')."""
    import textwrap

    rows = []
    for opt in LINT_OPTIONS:
        left = ", ".join(opt.names)
        if opt.value is not None:
            left += " [" + "|".join(opt.choices) + "]" if opt.kind == "choice" else \
                f" {opt.value}"
        rows.append((left, opt.help))
    width = min(max(len(left) for left, _ in rows) + 2, 34)
    usage = f"{prog} [check]" if prog == PROG else prog
    out = [f"Usage: {usage} [OPTIONS] [PATH]...", ""]
    out += textwrap.wrap("Lint the launch commands of multi-GPU LLM inference servers (vLLM, "
                         "llama.cpp) in Kubernetes YAML/JSON, compose files, shell scripts, "
                         "Dockerfiles and Markdown. PATH is a file, a directory or - (stdin). "
                         "Exit 0: nothing at or above --fail-on; 1: findings; 2: usage or "
                         "configuration error.", 78, initial_indent="  ",
                         subsequent_indent="  ")
    out += ["", "Options:"]
    for left, text in rows:
        wrapped = textwrap.wrap(text, max(78 - width - 2, 30))
        if len(left) + 2 > width:
            out.append(f"  {left}")
            out += [" " * (width + 2) + w for w in wrapped]
        else:
            out.append(f"  {left:<{width}}{wrapped[0]}")
            out += [" " * (width + 2) + w for w in wrapped[1:]]
    if prog == PROG:
        out += ["", "Commands:"]
        name_w = max(len(n) for n in SUBCOMMANDS) + 2
        for name, summary in SUBCOMMANDS.items():
            out.append(f"  {name:<{name_w}}{summary}")
        out += ["", f"`{PROG} COMMAND --help` shows a command's options; "
                f"`{PROG} --install-completion` installs shell completion."]
    return "\n".join(out) + "\n"


def usage_error(prog: str, message: str) -> int:
    print(f"{prog}: error: {message} (see `{prog} --help`)", file=sys.stderr)
    return 2


def use_color(mode: str | None, stream: Any) -> bool:
    """--color always/never decide; auto: FORCE_COLOR, then NO_COLOR, then whether a terminal."""
    if mode == "always":
        return True
    if mode == "never":
        return False
    force = os.environ.get("FORCE_COLOR")
    if force is not None and force not in ("", "0", "false"):
        return True
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def lint_main(argv: Sequence[str], prog: str = PROG) -> int:
    try:
        args, paths = parse_lint_args(argv)
    except UsageError as exc:
        return usage_error(prog, str(exc))
    if args["help"]:
        sys.stdout.write(lint_help(prog))
        return 0
    if args["version"]:
        from . import __version__

        print(f"{PROG} {__version__}")
        return 0
    from .config import ConfigError, check_selectors, find_for_directory, load_file

    try:
        for dest, flag in (("select", "--select"), ("ignore", "--ignore"),
                           ("extend_select", "--extend-select")):
            if args[dest] == []:
                raise ValueError(f"Invalid value for '{flag}': no rule code given")
            args[dest] = check_selectors(args[dest], flag)
    except ValueError as exc:
        return usage_error(prog, str(exc))
    try:
        explicit = load_file(args["config"]) if args["config"] else None
        cwd_config = explicit or find_for_directory(os.getcwd())
    except ConfigError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    target = None
    if args["target_version"] is not None:
        from .config import normalise_target_version

        try:
            target = normalise_target_version(args["target_version"])
        except ValueError as exc:
            return usage_error(prog, f"Invalid value for '--target-version': {exc}")
    if args["gpu"] is not None:
        from .catalog.knowledge import gpu_names, resolve_gpu

        if resolve_gpu(args["gpu"]) is None:
            return usage_error(prog, f"Invalid value for '--gpu': unknown GPU {args['gpu']!r}; "
                                     f"known: {', '.join(gpu_names())}")
    fmt = args["output_format"] or "text"
    if args["statistics"] and fmt not in ("text", "json"):
        return usage_error(prog, "--statistics prints a table (text) or JSON, not " + fmt)
    from .options import Options

    options = Options(select=args["select"], ignore=args["ignore"],
                      extend_select=args["extend_select"], gpu=args["gpu"],
                      gpus_per_node=args["gpus_per_node"], target_version=target,
                      config=explicit, exclude=args["exclude"],
                      extend_exclude=args["extend_exclude"],
                      force_exclude=args["force_exclude"])
    if args["show_settings"]:
        from .config import render_settings

        try:
            sys.stdout.write(render_settings(paths[0] if paths else ".", options))
        except ConfigError as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 2
        return 0
    if not paths and args["command_text"] is None:
        return usage_error(prog, "give a PATH, - (stdin) or --command")
    for p in paths:
        if p != "-" and not os.path.exists(p):
            return usage_error(prog, f"{p}: no such file or directory")
    if args["show_files"]:
        from .runner import discover_inputs

        try:
            found = discover_inputs(paths, options)
        except ConfigError as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 2
        for path, _kind, _explicit in found:
            print(path)
        if "-" in paths:
            print(args["stdin_filename"] or "-")
        if not found and "-" not in paths:
            print(f"{PROG}: warning: no files to lint under the given path(s)", file=sys.stderr)
        return 0
    stdin_text = None
    if "-" in paths:
        from .policy import MAX_FILE_BYTES

        # no more than one byte past the size limit (the runner then says it is over): `yes |
        # mgpu-lint -` read forever, 10 GB in 30 s
        limit = options.config.settings.max_file_size if options.config else MAX_FILE_BYTES
        stdin_text = sys.stdin.buffer.read(limit + 1).decode("utf-8", "surrogateescape")
    from .findings import Severity
    from .runner import lint

    try:
        run = lint(paths, options, stdin_text, args["stdin_filename"], args["command_text"])
    except ConfigError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    if run.file_count == 0:
        print(f"{PROG}: warning: no files were linted (nothing under the given path(s) is a "
              "kind mgpu-lint reads, or every file was excluded)", file=sys.stderr)
    if args["fix"] or args["fix_only"] or args["diff"]:
        args["_stdin_name"] = (args["stdin_filename"] or "<stdin>") if "-" in paths else None
        stop, written = _run_fixes(args, options, run)
        if stop is not None:
            return stop
        if written:  # report what is left, from the files as they are now
            run = lint(paths, options, stdin_text, args["stdin_filename"], args["command_text"])
    findings = run.findings
    out = sys.stdout
    args["_config"] = explicit
    if args["statistics"]:
        out.write(_statistics(findings, json_output=fmt == "json"))
    else:
        _report(fmt, findings, run, args, out)
    if args["exit_zero"]:
        return 0
    fail_on = Severity(args["fail_on"] or cwd_config.settings.fail_on or "warning")
    return 1 if any(f.severity.rank >= fail_on.rank for f in findings) else 0


def _run_fixes(args: dict[str, Any], options: Any, run: Any) -> tuple[int | None, bool]:
    """--fix / --fix-only / --diff: (the exit code to stop with or None, whether files were
    written).  Text that is not a file (stdin, --command) is never written."""
    from .fixes import fix_text, fixable, unified_diff, write_atomically
    from .report.sarif import is_pseudo_path
    from .runner import lint

    unsafe = bool(args["unsafe_fixes"])
    by_path: dict[str, list[Any]] = {}
    texts: dict[str, str] = {}
    of_file: dict[str, list[Any]] = {}
    for f in run.findings:
        of_file.setdefault(f.source.path, []).append(f)
        if fixable(f, unsafe) and not is_pseudo_path(f.source.path) and \
                f.source.path != args.get("_stdin_name"):
            by_path.setdefault(f.source.path, []).append(f)
            texts[f.source.path] = f.source.text
    results = []
    for path in sorted(by_path):
        def relint(text: str, path: str = path) -> list[Any]:
            return lint([], options, stdin_text=text, stdin_filename=path).findings
        # all of the file's findings: the parse errors it has before any fix are fix_text's
        # baseline (counting only the fixable ones made every pass of a file with an MG001 or
        # MG003 look as if its fixes broke parsing)
        ff = fix_text(path, texts[path], of_file[path], relint, unsafe)
        if ff.after != ff.before:
            results.append(ff)
    n = sum(len(ff.applied) for ff in results)
    files = f"{len(results)} file{'' if len(results) == 1 else 's'}"
    if args["diff"]:
        for ff in results:
            sys.stdout.write(unified_diff(ff))
        print(f"{n} fix{'' if n == 1 else 'es'} in {files} (not applied: --diff writes "
              "nothing)", file=sys.stderr)
        return (1 if results else 0), False
    for ff in results:
        write_atomically(ff.path, ff.after)
    if n or args["fix_only"]:
        print(f"fixed {n} finding{'' if n == 1 else 's'} in {files}", file=sys.stderr)
    if args["fix_only"]:
        return 0, bool(results)
    return None, bool(results)


def _report(fmt: str, findings: list[Any], run: Any, args: dict[str, Any], out: Any) -> None:
    from .findings import Severity

    summary = {
        "findings": len(findings),
        "files": run.file_count,
        "launches": len(run.launches),
        "by_severity": {s.value: sum(1 for f in findings if f.severity is s)
                        for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)},
    }
    if fmt == "json":
        from .report.json_report import chunks as json_chunks

        codes = {f.code for f in findings}
        for chunk in json_chunks(findings, summary, _rule_names(_docs_url(args), codes)):
            out.write(chunk)
    elif fmt == "sarif":
        from .report.sarif import chunks as sarif_chunks
        from .rules import ALL

        for chunk in sarif_chunks(findings, ALL, root=args.get("project_root"),
                                  docs_url=_docs_url(args)):
            out.write(chunk)
    elif fmt == "github":
        from .report.github import chunks as github_chunks

        for chunk in github_chunks(findings):
            out.write(chunk)
    else:
        from .report.text import chunks as text_chunks

        color = use_color("never" if args["no_color"] else args["color"], out)
        for chunk in text_chunks(findings, summary, color=color, tail=not args["quiet"]):
            out.write(chunk)


def _statistics(findings: list[Any], json_output: bool) -> str:
    """Findings per code, most frequent first: a table (code, name, count) or a JSON list."""
    names = _rule_names()
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.code] = counts.get(f.code, 0) + 1
    rows = [(code, names.get(code, (code.lower(), ""))[0], n)
            for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    if json_output:
        import json

        return json.dumps([{"code": c, "name": name, "count": n} for c, name, n in rows],
                          indent=2) + "\n"
    if not rows:
        return ""
    name_w = max(len(name) for _, name, _ in rows)
    count_w = max(len(str(n)) for *_, n in rows)
    return "".join(f"{c}  {name:<{name_w}}  {n:>{count_w}}\n" for c, name, n in rows)


def _rule_names(docs_url: str | None = None,
                codes: set[str] | None = None) -> dict[str, tuple[str, str]]:
    """Code -> (name, link to its page: ``docs-url`` or the shipped page; "" when none), for
    every rule or only ``codes`` (each link is a file look-up)."""
    from .rules import ALL

    return {r.code: (r.name, r.url(docs_url) or "") for r in ALL
            if codes is None or r.code in codes}


def _docs_url(args: dict[str, Any]) -> str | None:
    """``docs-url`` of the configuration at the project root (or the working directory)."""
    from .config import config_for

    root = args.get("project_root")
    return config_for(os.path.join(root or os.getcwd(), "x"), args.get("_config")).settings.docs_url


# -- the typer sub-commands ---------------------------------------------------------------------


def _typer_app():  # type: ignore[no-untyped-def]
    import typer

    from .commands import check, launches, layers, plan, rules_cmd, server

    app = typer.Typer(
        name=PROG,
        help="Static analysis of multi-GPU LLM inference server launches. Lint with "
             f"`{PROG} [check] PATH…` (see `{PROG} check --help`).",
        add_completion=True,
        no_args_is_help=True,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    for module in (check, rules_cmd, launches, plan, layers, server):
        module.register(app)
    return app


def _run_subcommand(argv: list[str]) -> int:
    """Run a typer sub-command; a usage error is one line on stderr and exit 2.

    typer 0.29 vendors click as `typer._click` (there is no `click` package to import), so the
    errors are caught through typer's public names: `typer.Exit` and the base class
    `typer.TyperException` of every click usage error (`NoSuchOption`, `MissingParameter`,
    `BadParameter`, ...), which carry `exit_code` and `format_message()`.
    """
    import typer

    app = _typer_app()
    try:
        result = app(argv, prog_name=PROG, standalone_mode=False)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except typer.Exit as exc:
        return int(getattr(exc, "exit_code", 0) or 0)
    except typer.Abort:
        return 130
    except typer.TyperException as exc:
        ctx = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
            print(ctx.get_help(), file=sys.stderr)
            return 2
        name = PROG if ctx is None else ctx.command_path
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        if ctx is None:
            print(f"{name}: error: {message}", file=sys.stderr)
        else:
            usage_error(name, message)
        code = getattr(exc, "exit_code", 2)
        return code if isinstance(code, int) and code else 2
    return result if isinstance(result, int) else 0


_TYPER_TOP = ("--install-completion", "--show-completion")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    run: Callable[[], int]
    if COMPLETE_VAR in os.environ or (argv and argv[0] in _TYPER_TOP):
        run = lambda: _run_subcommand(argv)  # noqa: E731 - shell completion is typer's
    elif argv and argv[0] == "check":
        run = lambda: lint_main(argv[1:], f"{PROG} check")  # noqa: E731
    elif argv and argv[0] in SUBCOMMANDS and not os.path.isfile(argv[0]):
        run = lambda: _run_subcommand(argv)  # noqa: E731
    else:
        run = lambda: lint_main(argv)  # noqa: E731
    import gc

    from .policy import GC_YOUNG

    # a lint allocates an object or more per YAML node, word and character map: with the
    # interpreter's young threshold (700) the collector ran thousands of times on 1,000 files,
    # every tenth time through the older generation too (the catalogs, the files read so far)
    threshold = gc.get_threshold()
    gc.set_threshold(GC_YOUNG, *threshold[1:])
    try:
        return run()
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    finally:
        gc.set_threshold(*threshold)


def console() -> None:
    """The `mgpu-lint` program (the console script and ``python -m``): main's exit status,
    without the interpreter's teardown.  At exit Python frees every object one by one, and a
    run holds every file's nodes, words, maps and findings until then (2% of the instructions
    of a lint of 200 manifests); nothing is left to do once the output is flushed (mgpu-lint
    registers no exit handlers, and --fix closes what it writes).  A flush that fails (a
    closed pipe) takes the ordinary exit, with what Python does then."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - the interpreter's own exit reports it as before
        sys.exit(code)
    os._exit(code)


if __name__ == "__main__":
    console()
