"""`vllm serve` / `python -m vllm.entrypoints.openai.api_server` argument walker.

Mirrors vLLM's ``FlexibleArgumentParser`` (vllm/utils/argparse_utils.py in 0.30.0) on top of
argparse: ``_`` → ``-`` in long names (before the first '.'), ``--flag=value``, unambiguous
prefixes (``allow_abbrev``), ``-O<level>``, dotted JSON sub-keys, ``--config FILE.yaml``, one
positional model.  Each launch is checked against the flag catalog of the release it pins
(``choose_vllm_version``); what differs between releases beyond the flag set (how each entry
point takes the model, ``-O``) is keyed on the release below.  Facts: reference/engines/
vllm-notes.md §3 and §8, vllm-versions/README.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

from ..findings import Finding, Severity
from ..fixes import Fix, drop_flag, drop_flag_prefix, replace_span
from ..launch import ENTRY_VLLM_API_SERVER, ENTRY_VLLM_SERVE, PYTHON_PROGRAM, VLLM, Launch
from ..prepass import installs
from ..source import Span, Word
from .adapter import GPU_LAYOUT, HTTP_API, PARALLEL_LAYOUT, VLLM_ARGS, Bind, Engine
from .catalog import (
    FlagCatalog,
    Match,
    OptionSpec,
    VersionChoice,
    choose_vllm_version,
    version_key,
    vllm_catalog,
    vllm_value_releases,
    vllm_versions,
)
from .invocation import NEGATIVE_NUMBER, Builder, Invocation, OptionToken, OptionValue, classify
from .vllm_config import CHECKED_BY_RULE, ConfigMixin
from .vllm_model import FIRST_DEPRECATED_API_SERVER, ModelMixin
from .vllm_values import _check_choice, _choices, _dotted_scalar, _looks_like_option, convert

# A value check that a rule makes instead of MG006 (one cause, one finding: DECISIONS.md).
BOOL_WORDS = frozenset({"true", "false", "True", "False", "1", "0", "yes", "no", "on", "off"})

# Deprecated vLLM spellings that are pure renames: the new spelling, a safe MG008 fix.  vLLM
# 0.11.2 and 0.12.0, vllm/engine/arg_utils.py EngineArgs.add_cli_args: `--cuda-graph-sizes` is
# added with the very kwargs of `--cudagraph-capture-sizes` (get_kwargs(CompilationConfig), only
# the help differs, deprecated=True), and create_engine_config copies either one into
# compilation_config.cudagraph_capture_sizes.  Not when both are given (or a --config file or
# an unknown `$ARGS` may give the new one): then vLLM refuses ("cudagraph_capture_sizes and
# compilation_config.cudagraph_capture_sizes are mutually exclusive"), where two
# --cudagraph-capture-sizes would be last-wins.  Before 0.11 `--cuda-graph-sizes` was a
# SchedulerConfig field whose single value was a maximum (0.10.2), so only the catalogued
# releases that mark it deprecated get the fix.
RENAMED: dict[str, str] = {"cuda_graph_sizes": "--cudagraph-capture-sizes"}

# vLLM-Omni (image `vllm/vllm-omni`): its `vllm` console script (pyproject.toml
# [project.scripts] vllm = "vllm_omni.entrypoints.cli.main:main") runs vLLM's own CLI unless
# `--omni` is in argv; with it, `serve` is vLLM's serve parser (`make_arg_parser`) plus the
# options below, and the server starts the model's stages, each with its own engine arguments
# and devices from a stage config (`--stage-configs-path`, else the model's
# vllm_omni/model_executor/stage_configs/<model>.yaml: `devices`, `gpu_memory_utilization`, …).
# vllm-project/vllm-omni be81443c (2025-12-28) vllm_omni/entrypoints/cli/main.py `main`,
# cli/serve.py OmniServeCommand.subparser_init.  Name -> whether it takes a value.
OMNI_IMAGE = "vllm/vllm-omni"
# From 0.30.0 vLLM's own `vllm` command hands a command line holding the word `--omni` to
# vLLM-Omni before reading any option (vllm/entrypoints/cli/main.py `maybe_run_omni`, 0.30.0;
# absent from 0.29.0): vllm_omni's CLI when that package is installed, else it logs "--omni
# flag requires a valid instance of vllm-omni to be installed." and exits 1.  `--omni` is no
# option of vLLM's parsers (`python -m vllm.entrypoints.openai.api_server --omni`: argparse's
# "unrecognized arguments").  vLLM's wheel names no vllm-omni requirement or extra (METADATA,
# 0.30.0), so vLLM's image, which installs that wheel, has no vLLM-Omni.
FIRST_OMNI_HANDOFF = "0.30.0"
OMNI_MISSING = "--omni flag requires a valid instance of vllm-omni to be installed."
OMNI_OPTIONS: dict[str, bool] = {
    "--omni": False, "--stage-configs-path": True, "--init-sleep-seconds": True,
    "--init-timeout": True, "--shm-threshold-bytes": True, "--log-stats": False,
    "--log-file": True, "--batch-timeout": True, "--worker-backend": True,
    "--ray-address": True, "--num-gpus": True, "--usp": True, "--ulysses-degree": True,
    "--cache-backend": True, "--cache-config": True, "--vae-use-slicing": False,
    "--vae-use-tiling": False, "--boundary-ratio": True, "--flow-shift": True,
}


def _installs_omni(text: str) -> bool:
    """Whether a line of ``text`` installs vLLM-Omni (`pip install vllm-omni`, `uv pip install
    vllm_omni==…`): the `vllm` it runs then hands --omni launches to it."""
    for name in ("vllm-omni", "vllm_omni"):
        at = text.find(name)
        while at >= 0:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            end = len(text) if end < 0 else end
            if installs(text, start, end):
                return True
            at = text.find(name, end)
    return False


def parse_vllm(launch: Launch, version: str | None,
               needed: Mapping[str, tuple[str, ...]]) -> tuple[Invocation, list[Finding]]:
    """``needed``: the rules that read each setting (MG009 names those an unresolved value
    skips)."""
    requested = version or (launch.version_pin.value if launch.version_pin else None)
    return parse_with(launch, requested, choose_vllm_version(requested), needed, VLLM,
                      vllm_catalog, _Walker)


def parse_with(launch: Launch, requested: str | None, choice: VersionChoice,
               needed: Mapping[str, tuple[str, ...]], engine: str,
               catalog_of: Callable[[str], FlagCatalog], walker_class: type[_Walker]
               ) -> tuple[Invocation, list[Finding]]:
    """Walk a launch against ``catalog_of(choice.version)`` (vLLM's entry points and the demo
    server, engines/vllm_demo.py, which has a parser of its own).  Nothing requested: nothing
    pins the release, so verdicts another release would flip are warnings."""
    catalog = catalog_of(choice.version)
    b = Builder(launch, catalog, choice.version, needed)
    if choice.note is not None:
        versions = vllm_versions()
        pin_span = launch.version_pin.span if launch.version_pin and \
            launch.version_pin.span else launch.program.span
        b.report(
            "MG015", Severity.INFO, choice.note, pin_span,
            hint="flags that changed between the two releases may be reported wrongly; "
                 f"catalogued: one release of each line from {versions[0]} to {versions[-1]}",
        )
    walker = walker_class(launch, b, catalog, requested if choice.note is not None else None,
                          requested if choice.note is None and requested and
                          version_key(requested) else choice.version)
    # nothing pins the release: verdicts that would flip under another release are warnings
    walker.release_assumed = requested is None
    walker.entry_point()
    walker.walk()
    model = walker.finish_model()
    b.duplicates(b.before + b.argv, describe=_describe)
    findings = b.findings
    if not launch.entry_known:
        # the image's entrypoint for this release is unknown (api_server module or `vllm
        # serve`): how it takes the model is not judged (images.md); a repeated entrypoint is
        # rejected by both
        findings = [f for f in findings if f.code != "MG016" or f is walker.repeated]
    return b.build(engine, launch.entry, model), findings


def _describe(occ: OptionValue) -> str:
    if occ.origin == "config":
        return f"`{occ.spelling}` in the --config file"
    if occ.raw is None:
        return occ.spelling
    return f"{occ.spelling} {occ.raw}"


_LEVELS = ("0", "1", "2", "3")  # compilation levels a bare --compilation-config took
# the modules `python -m` starts vLLM's servers with
_VLLM_MODULES = frozenset({"vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server",
                           "vllm.entrypoints.cli.main"})


class _Walker(ModelMixin, ConfigMixin):
    # the module a `python -m` launch of this parser runs, for messages
    module = "vllm.entrypoints.openai.api_server"
    help_hint = "run `vllm serve --help=all` for the flag list"

    def __init__(self, launch: Launch, b: Builder, catalog: FlagCatalog,
                 substitute_for: str | None, name: str) -> None:
        self.launch = launch
        self.b = b
        self.catalog = catalog
        # an unquoted expansion to nothing is no argument at all (the shell drops it)
        self.words = tuple(launch.args) if launch.list_form else \
            tuple(w for w in launch.args if w.text or w.quoted)
        self.substitute_for = substitute_for
        self.name = name  # the release as messages name it ("0.8.5" for the 0.8.5.post1 catalog)
        # the release whose behaviour applies: the pinned one when it names a release
        self.release = version_key(substitute_for or "") or version_key(b.version)
        self.api_server = launch.entry == ENTRY_VLLM_API_SERVER
        self.positional: list[Word] = []
        self.model_broken = False
        # the arguments begin with the program the image already runs (_repeated_entrypoint):
        # what follows is not judged as more positionals, that one error explains them
        self.entry_repeated = False
        self.repeated: Finding | None = None  # its MG016
        self.release_assumed = False  # no image tag, pip pin or target-version states it
        self.configs: list[tuple[Word, Span]] = []
        self.greedy: tuple[str, Word] | None = None  # last nargs='+' option and its last word
        self.config_data: dict[str, Any] | None = None  # the --config file, when read
        # a shell expansion that may give no word or several (`$ARGS` unknown, `${X:+…}`):
        # what it holds is unknown, so it is never the model and later positionals may be
        # the values of flags it holds
        self.unknown_words: Word | None = None
        # deprecated renamed spellings met (RENAMED): reported after the walk, which tells
        # whether the new spelling is given too
        self.renamed: list[tuple[OptionSpec, str, Span]] = []

    def before(self, release: str) -> bool:
        """Whether the launch's release is older than ``release``."""
        return self.release < version_key(release)

    def entry_point(self) -> None:
        """MG008 for the api_server module where it is a deprecated shim."""
        assumed = self.release_assumed
        if not self.api_server or self.before(FIRST_DEPRECATED_API_SERVER) or \
                self.launch.operator is not None:
            return
        module = next((w for w in self.launch.prefix_args if w.text.endswith("api_server")),
                      self.launch.program)
        which = (f"assuming vLLM {self.name}, as nothing pins the release" if assumed
                 else f"vLLM {self.name}")
        self.b.report(
            "MG008", Severity.WARNING,
            f"python -m vllm.entrypoints.openai.api_server is deprecated from vLLM "
            f"{FIRST_DEPRECATED_API_SERVER} ({which}: it warns that the module may be removed)",
            module.span, hint="run `vllm serve MODEL [options]` instead, or pin the release "
                              "(image tag, pip pin, --target-version)" if assumed else
                              "run `vllm serve MODEL [options]` instead",
        )

    @cached_property
    def _model_flag(self) -> bool:
        """A `--model` word gives the model (asked once per launch, at its first unknown flag)."""
        return any(w.text == "--model" or w.text.startswith("--model=") for w in self.words)

    # ---------------------------------------------------------------- walking argv
    def _repeated_entrypoint(self) -> int:
        """How many leading arguments restate the program the image's entrypoint already runs
        (`serve`, `vllm serve`, `python3 -m vllm.entrypoints.openai.api_server`), reported
        once; the launch is then broken (MG016) and its model unknown.

        The image appends the arguments to its entrypoint (`vllm serve` or the api_server
        module, reference/engines/images.md), and both parsers reject these words.  In 0.30.0
        both are built by `make_arg_parser` (vllm/entrypoints/launchers/cli_args.py), whose one
        positional is `model_tag` (nargs="?"), and read with `parse_args` (cli/main.py;
        launchers/api_server/entry.py `main`), which exits on any word left over ("unrecognized
        arguments"): `vllm serve vllm serve M` has two too many (FlexibleArgumentParser.
        parse_args, vllm/utils/argparse_utils.py, moves a `--model` value to the front but
        keeps every other word).  The api_server module took no positional up to 0.9.2.  `-m`
        is no option of either, unless the release's catalog has a `-m…` option argparse
        could take it as an abbreviation of."""
        words = self.words
        texts = [w.text for w in words[:4]]
        program = texts[0].rsplit("/", 1)[-1] if texts else ""
        if texts[:1] == ["serve"] and self.launch.entry == ENTRY_VLLM_SERVE and \
                self.launch.entry_known:
            n = 1
        elif program == "vllm" and texts[1:2] == ["serve"]:
            n = 2
        elif PYTHON_PROGRAM.match(program) and texts[1:2] == ["-m"] and len(texts) > 2 and \
                texts[2] in _VLLM_MODULES and not self.catalog.prefixed("-m"):
            n = 4 if texts[2] == "vllm.entrypoints.cli.main" and texts[3:4] == ["serve"] else 3
        else:
            return 0
        restated = " ".join(texts[:n])
        entry = ("`vllm serve`" if self.launch.entry == ENTRY_VLLM_SERVE else
                 f"`python3 -m {self.module}`") if self.launch.entry_known else "vLLM"
        self.b.report(
            "MG016", Severity.ERROR,
            f"`{restated}` repeats the image's entrypoint: the image already runs {entry}, so "
            f"these words become its arguments and vLLM exits (unrecognized arguments)",
            Span(words[0].span.start, words[n - 1].span.end),
            hint=f"drop `{restated}` from the arguments: the image runs it",
        )
        self.repeated = self.b.findings[-1]
        self.model_broken = True
        self.entry_repeated = True
        return n

    @cached_property
    def omni_handoff(self) -> tuple[Word, str] | None:
        """The `--omni` word and who reads the launch it is in: "image" (the vLLM-Omni image,
        whose `vllm` is vLLM-Omni's), "installed" (vLLM's `vllm` command from 0.30.0 hands it
        to vLLM-Omni, which the file installs), "maybe" (the same, where nothing says whether
        vLLM-Omni is installed), "missing"
        (the same on vLLM's image, which has no vLLM-Omni: vLLM exits).  None without the word,
        or where vLLM's parser reads it (an unknown flag: the api_server module, a release
        before 0.30.0)."""
        word = next((w for w in self.words if w.text == "--omni"), None)
        if word is None:
            return None
        image = self.launch.context.image
        entry = None
        if image:
            from ..images import CUSTOM, lookup, parse_image

            if parse_image(image.value).repository == OMNI_IMAGE:
                return word, "image"
            entry = lookup(image.value)
            if entry is not None and entry.engine == CUSTOM:
                entry = None
        if self.launch.entry != ENTRY_VLLM_SERVE or self.before(FIRST_OMNI_HANDOFF):
            return None
        if entry is not None:
            return word, "missing"
        return word, "installed" if _installs_omni(self.launch.source.text) else "maybe"

    @property
    def omni(self) -> Word | None:
        """The `--omni` word of a launch vLLM-Omni reads (OMNI_OPTIONS), else None."""
        return self.omni_handoff[0] if self.omni_handoff is not None else None

    def walk(self) -> None:
        words = self.words
        i = self._repeated_entrypoint() if self.launch.image_entrypoint else 0
        handoff = self.omni_handoff
        if handoff is not None and handoff[1] == "missing":
            image = self.launch.context.image.value if self.launch.context.image else "vLLM"
            self.b.report(
                "MG004", Severity.ERROR,
                f"--omni hands this launch to vLLM-Omni, which the {image} "
                f"image does not have: vLLM {self.name} exits before reading any option "
                f'("{OMNI_MISSING}", vllm/entrypoints/cli/main.py)',
                handoff[0].span,
                hint=f"run it on the {OMNI_IMAGE} image (vLLM-Omni's options are then read "
                     "too), or drop --omni to serve with vLLM alone")
        elif handoff is not None and handoff[1] == "maybe":
            self.b.report(
                "MG004", Severity.WARNING,
                f"--omni hands this launch to vLLM-Omni (vLLM {self.name}'s `vllm` command does, "
                "before reading any option): it runs only where the vllm-omni package is "
                f'installed, else vLLM exits ("{OMNI_MISSING}", vllm/entrypoints/cli/main.py)',
                handoff[0].span,
                hint=f"install vllm-omni beside vLLM, or run on the {OMNI_IMAGE} image; "
                     "vLLM-Omni's stage configs are not checked")
        if handoff is not None and handoff[1] != "missing":
            # the stages' engine arguments and devices come from a stage config the linter
            # does not read: what the command does not state is unknown (OMNI_OPTIONS)
            self.b.open_span = self.b.open_span or handoff[0].span
        only_positionals = False
        while i < len(words):
            word = words[i]
            text = word.text
            if only_positionals:
                self._positional(word)
                i += 1
                continue
            if text == "--":
                only_positionals = True
                i += 1
                continue
            # (``word.unresolved`` first: most words hold no variable, and ``may_split`` runs
            # a generator per word)
            if word.unresolved and word.may_split and not text.startswith("-"):
                self.unknown_words = self.unknown_words or word
                if word.may_set_anything:
                    self.b.open_span = self.b.open_span or word.span
                i += 1
                continue
            if text.startswith("-O"):
                if self._o_is_preprocessed():
                    i = self._optimization_level(i)
                    continue
                key = self._o_level_key()
                nxt = self._compilation_level(i, key) if key is not None else None
                if nxt is not None:
                    i = nxt
                    continue
            tok = classify(text)
            if tok is None or tok == NEGATIVE_NUMBER:
                if text.startswith("-") and any(c.isspace() for c in text) and \
                        self._glued(word):
                    i += 1
                    continue
                self._positional(word)
                i += 1
                continue
            assert isinstance(tok, OptionToken)
            i = self._option(i, tok)
        if self.configs:
            self._read_configs()
        for spec, written, flag_span in self.renamed:
            self._report_renamed(spec, written, flag_span)

    def _report_renamed(self, spec: OptionSpec, written: str, flag_span: Span) -> None:
        """MG008 for a deprecated spelling of RENAMED, with the new spelling as a safe fix where
        nothing else in the launch may set the new one."""
        new = RENAMED[spec.key]
        target = self.catalog.lookup(new)
        alone = target is not None and self.substitute_for is None and \
            self.b.open_span is None and self.unknown_words is None and \
            not any(w.may_set_anything for w in self.words) and \
            not (self.configs and self.config_data is None) and \
            not any(o.key == target.option.key for o in self.b.before + self.b.argv)
        fix = replace_span(self.b.source, flag_span, written, new, f"Write {new}", safe=True) \
            if alone else None
        self.b.report("MG008", Severity.WARNING, f"{written} is deprecated: {spec.deprecated}",
                      flag_span, fix=fix)

    def _o_is_preprocessed(self) -> bool:
        """`-O`, `-O3`, `-O=3` are vLLM's pre-processed optimization level (not argparse)."""
        return self.catalog.lookup("-O") is None and "optimization_level" in self.catalog.by_key

    def _o_level_key(self) -> str | None:
        """The CompilationConfig field `-O3`, `-O=3` and `-O 3` set in a release whose parser
        rewrites them before argparse; None where it does not.  FlexibleArgumentParser.
        parse_args: `-O<n>` / `-O=<n>` become `-O.level=<n>` and `-O <0-3>` `-O.level <n>`
        (vllm/utils/__init__.py, 0.9.2 and 0.10.2), `-O.mode` from 0.11 (vllm/utils/
        argparse_utils.py, 0.11.2); up to 0.8.5 argparse reads `-O3` itself and
        CompilationConfig.from_cli takes the bare level (vllm/config.py, 0.8.5.post1); from 0.12
        `-O` is the optimization level (``_optimization_level``)."""
        match = self.catalog.lookup("-O")
        if match is None or match.option.key != "compilation_config" or \
                not match.option.json_object:
            return None
        return "mode" if not self.before("0.11.2") else "level"

    def _compilation_level(self, i: int, key: str) -> int | None:
        """Read `-O3`, `-O=3`, `-O 3` as CompilationConfig field ``key`` (``_o_level_key``);
        the index after the words read, or None for every other `-O` word (a JSON value,
        `-O.key`), which argparse reads."""
        word = self.words[i]
        text = word.text
        if text == "-O":
            nxt = self.words[i + 1] if i + 1 < len(self.words) else None
            if nxt is None or nxt.text not in _LEVELS:
                return None
            value_word, start, after = nxt, 0, i + 2
        elif len(text) > 2 and text[2] != ".":
            value_word, start, after = word, 3 if text[2] == "=" else 2, i + 1
        else:
            return None
        spec = self.catalog.by_key["compilation_config"]
        value_span = value_word.sub(start)
        raw = value_word.text[start:]
        flag_span = word.sub(0, 2) if value_word is word else word.span
        refs = self.b.unresolved_in(value_word, value_span)
        if refs:
            self.b.report_unresolved(spec, refs)
            self._unknown(spec, "-O", flag_span, subkeys=(key,), value_span=value_span)
        else:
            self.b.add(OptionValue(key=spec.key, spelling="-O", flag_span=flag_span,
                                   value_span=value_span, raw=raw, value=_dotted_scalar(raw),
                                   subkeys=(key,)))
        return after

    def _optimization_level(self, i: int) -> int:
        word = self.words[i]
        spec = self.catalog.by_key["optimization_level"]
        text = word.text
        if text == "-O":
            nxt = self.words[i + 1] if i + 1 < len(self.words) else None
            if nxt is not None and nxt.text in ("0", "1", "2", "3"):
                self._set_value(spec, "-O", word.span, nxt, 0, len(nxt.text), False, ())
                return i + 2
            if nxt is not None and nxt.text.lstrip().startswith("{"):
                # up to 0.11 `-O` was the short form of --compilation-config
                self.b.report(
                    "MG006", Severity.ERROR,
                    f"-O takes an optimization level (0-3) in vLLM {self.name}: since 0.12 "
                    "it is no longer the short form of --compilation-config",
                    nxt.span, hint=f"write -cc {nxt.text} (or --compilation-config)",
                )
                self._unknown(spec, "-O", word.span, value_span=nxt.span, raw=nxt.text)
                return i + 2
            self.b.report("MG005", Severity.ERROR, "-O needs a level: -O0 … -O3 (or -O 3)",
                          word.span)
            self._unknown(spec, "-O", word.span)
            return i + 1
        start = 3 if text.startswith("-O=") else 2
        self._set_value(spec, text[:start], word.sub(0, start), word, start, len(text), False, ())
        return i + 1

    def _glued(self, word: Word) -> bool:
        head, _, rest = word.text.partition(" ")
        head = head.split("\t")[0]
        resolved = self._resolve_exact(head)
        spelled = None
        if resolved is None:
            resolved = self._glued_abbreviation(head)
            if resolved is None:
                return False
            spelled = resolved.spelling
        spec = resolved.option
        self.b.glued(word, head, rest, "vLLM", "rejects it (unrecognized arguments)", spelled)
        self._unknown(spec, head, word.span)
        return True

    def _model_first(self, i: int, tok: OptionToken) -> Fix | None:
        """MG008's safe fix for `vllm serve --model M …`: drop `--model`, leaving `serve M …`.

        vLLM 0.30.0 ``FlexibleArgumentParser.parse_args`` (vllm/utils/argparse_utils.py) does
        exactly this itself when ``args[0] == "serve"``: it takes the first ``--model M`` or
        ``--model=M`` and rebuilds the argv as ``["serve", M, *before, *after]``.  With
        ``--model`` the first word after ``serve`` there is nothing before it, so the fixed
        command is the argv vLLM builds: the meaning is the same.  Anywhere else the model
        would have to move, which is not done here."""
        word = self.words[i]
        if i != 0 or not self.launch.args or word is not self.launch.args[0] or \
                self.launch.entry != ENTRY_VLLM_SERVE or tok.dashes != "--" or \
                word.text[:7] != "--model":
            return None
        title = "Write the model first (vLLM moves --model there itself)"
        if tok.value_start is not None:
            return drop_flag_prefix(self.b.source, word, word.text[:tok.value_start],
                                    self.launch.list_form, title)
        if word.text != "--model" or i + 1 >= len(self.words):
            return None
        value = self.words[i + 1]
        if value.text.startswith("-") or value.unresolved and not value.quoted:
            return None  # not a model, or a word the shell may split
        return drop_flag(self.b.source, word, value, title)

    def _glued_abbreviation(self, head: str) -> Match | None:
        """The option an abbreviated flag glued to its value (`"--tensor-parallel 2"`) is meant
        as: the one long option the prefix resolves to (argparse's ``_get_option_tuples``, as
        ``_abbreviations``), one that takes a value, and only where MG013 would spell it out
        (not a prefix of another option's spelling, not a retired flag).  The whole word is
        still one argument to argparse: a space in it makes ``_parse_optional`` take it as a
        positional (CPython 3.10-3.13 argparse)."""
        tok = classify(head)
        if not isinstance(tok, OptionToken) or tok.dashes != "--" or tok.subkeys or \
                tok.value_start is not None:
            return None
        candidates = self._abbreviations(self._normalize(tok), tok)
        if len({m.option.key + ("-" if m.negative else "") for m, _ in candidates}) != 1:
            return None
        match = candidates[0][0]
        other = self.catalog.lookup(head[1:])
        if match.negative or not match.option.takes_value or \
                (other is not None and other.option.key != match.option.key) or \
                head in self.catalog.retired_by_spelling:
            return None
        return match

    def _normalize(self, tok: OptionToken) -> str:
        if tok.dashes == "--":
            return "--" + tok.name.replace("_", "-")
        return "-" + tok.name

    def _resolve_exact(self, head: str) -> Match | None:
        tok = classify(head)
        if not isinstance(tok, OptionToken):
            return None
        return self.catalog.lookup(self._normalize(tok))

    def _option(self, i: int, tok: OptionToken) -> int:
        word = self.words[i]
        spelling = self._normalize(tok)
        written = word.text[:len(tok.dashes) + len(tok.name)]
        flag_span = word.sub(0, tok.flag_end)
        match = self.catalog.lookup(spelling)
        attached: str | None = None
        abbreviated = False
        if match is None:
            candidates = self._abbreviations(spelling, tok)
            distinct = {m.option.key + ("-" if m.negative else "") for m, _ in candidates}
            if not candidates:
                return self._unknown_flag(i, spelling, written, flag_span)
            if len(distinct) > 1:
                names = ", ".join(sorted({m.spelling for m, _ in candidates}))
                self.b.report(
                    "MG004", Severity.ERROR,
                    f"ambiguous option {written}: vLLM (argparse) rejects it because it could "
                    f"match {names}",
                    flag_span, hint="write the full flag name",
                )
                return self._skip_values(i + 1)
            match, attached = candidates[0]
            abbreviated = attached is None
        spec = match.option
        if word.unresolved and self.b.unresolved_in(word, flag_span):
            return self._skip_values(i + 1)
        if abbreviated and not self._abbreviation(spec, match, written, flag_span):
            return self._consume_unknown(i, spec, written, flag_span, tok)
        if spec.type == "help":
            return i + 1
        # `--model` is deprecated only for `vllm serve`; with an unknown image entrypoint the
        # entry point is not known
        if spec.deprecated and spec.key in RENAMED and not abbreviated:
            self.renamed.append((spec, written, flag_span))
        elif spec.deprecated and not (spec.key == "model" and (
                self.api_server or not self.launch.entry_known)):
            self.b.report("MG008", Severity.WARNING,
                          f"{written} is deprecated: {spec.deprecated}", flag_span,
                          fix=self._model_first(i, tok) if spec.key == "model" else None)
        if tok.subkeys:
            return self._dotted(i, tok, spec, written, flag_span)
        if attached is not None:  # -n2: argparse's single-character option with its value
            start = 2
            self._set_value(spec, written[:2], word.sub(0, 2), word, start, len(word.text),
                            False, ())
            return i + 1
        if not spec.takes_value:
            return self._flag(i, tok, spec, match, written, flag_span)
        if tok.value_start is not None:
            if spec.key == "config":
                self.b.report(
                    "MG006", Severity.WARNING,
                    f"{word.text}: vLLM loads a config file only from the two-word form "
                    "`--config FILE`; with `=` the file is not read and its settings are ignored",
                    word.sub(tok.value_start), hint=f"write --config {word.text[tok.value_start:]}",
                )
            if spec.nargs == "+":
                self._set_values(spec, written, flag_span, [(word, tok.value_start)])
            else:
                self._set_value(spec, written, flag_span, word, tok.value_start,
                                len(word.text), False, ())
            return i + 1
        return self._take_values(i, spec, written, flag_span)

    def _abbreviations(self, spelling: str,
                       tok: OptionToken) -> list[tuple[Match, str | None]]:
        """argparse's ``_get_option_tuples`` (Python 3.11): prefix matches, and for a single
        dash also a one-character option with its value attached (``-n2``)."""
        out: list[tuple[Match, str | None]] = []
        if tok.dashes == "--":
            return [(m, None) for m in self.catalog.prefixed(spelling)]
        short = spelling[:2]
        for m in self.catalog.prefixed("-"):
            name = m.spelling
            if name == short and len(spelling) > 2:
                out.append((m, spelling[2:]))
            elif name.startswith(spelling) and not name.startswith("--"):
                out.append((m, None))
        return out

    def _abbreviation(self, spec: OptionSpec, match: Match, written: str,
                      flag_span: Span) -> bool:
        """MG013; False when the prefix resolves to an option the user cannot have meant."""
        other = self.catalog.lookup(written[1:]) if written.startswith("--") else None
        retired = self.catalog.retired_by_spelling.get(written)
        if other is not None and other.option.key != spec.key:
            why = (f"vLLM takes {written} as an abbreviation of {match.spelling}, not "
                   f"{other.option.display} ({other.spelling})")
            hint = f"write {other.spelling} or {other.option.display}"
        elif retired is not None:
            why = (f"{written} is no longer a vLLM option; vLLM takes it as an abbreviation of "
                   f"{match.spelling}")
            hint = retired.hint or f"write {match.spelling} if that is what you mean"
        else:
            self.b.report(
                "MG013", Severity.WARNING,
                f"{written} is an abbreviation: vLLM resolves it to {match.spelling}",
                flag_span,
                hint=f"write {match.spelling}: a new flag in a later release can make the "
                     "prefix ambiguous and the launch then fails",
                fix=replace_span(self.b.source, flag_span, written, match.spelling,
                                 f"Write {match.spelling}", safe=True),
            )
            return True
        self.b.report("MG013", Severity.ERROR, why, flag_span, hint=hint)
        return False

    def _consume_unknown(self, i: int, spec: OptionSpec, written: str, flag_span: Span,
                         tok: OptionToken) -> int:
        """Skip a broken option's values, marking the option stated but unknown."""
        self._unknown(spec, written, flag_span)
        if not spec.takes_value or tok.value_start is not None:
            return i + 1
        return self._skip_values(i + 1, limit=None if spec.nargs == "+" else 1)

    def _parser_omni(self, word: Word) -> None:
        """MG004 for `--omni` where vLLM's own parser reads it (FIRST_OMNI_HANDOFF): not an
        option of any vLLM release, so no did-you-mean; what it is for is said instead."""
        if self.launch.entry != ENTRY_VLLM_SERVE:
            where = (f"`python -m {self.module}` rejects it (unrecognized arguments): only "
                     f"the `vllm` command of vLLM {FIRST_OMNI_HANDOFF} and later reads it")
        else:
            where = (f"vLLM {self.name}'s `vllm` command rejects it (unrecognized arguments): "
                     f"from {FIRST_OMNI_HANDOFF} it hands such a launch to vLLM-Omni")
        self.b.report(
            "MG004", Severity.ERROR,
            f"--omni is not a vLLM option but vLLM-Omni's (the vllm-omni package); {where}",
            word.span, hint=f"run `vllm serve … --omni` on the {OMNI_IMAGE} image, or drop "
                            "--omni to serve with vLLM alone")

    def _skip_values(self, i: int, limit: int | None = 1) -> int:
        n = 0
        while i < len(self.words) and (limit is None or n < limit) and \
                not _looks_like_option(self.words[i].text):
            i += 1
            n += 1
        return i

    def _unknown_flag(self, i: int, spelling: str, written: str, flag_span: Span) -> int:
        word = self.words[i]
        if word.unresolved:
            return i + 1
        if self.omni is not None and spelling in OMNI_OPTIONS:
            # vLLM-Omni's own option (argparse: `--name value` or `--name=value`)
            valued = OMNI_OPTIONS[spelling] and "=" not in word.text
            return i + 2 if valued else i + 1
        if spelling == "--omni" and "=" not in word.text:
            self._parser_omni(word)
            return i + 1
        retired = self.catalog.retired_by_spelling.get(spelling)
        severity = Severity.WARNING if self.substitute_for else Severity.ERROR
        assumed = (f" (checked against vLLM {self.b.version}'s flags: vLLM "
                   f"{self.substitute_for} may accept it)" if self.substitute_for else "")
        if retired is not None and self.release_assumed:
            # another release accepts it, and nothing says which release runs (DECISIONS:
            # a verdict resting on an unknown engine version is at most a warning)
            severity = Severity.WARNING
            assumed = (f" (assuming vLLM {self.name}, as nothing pins the release: pin the "
                       "image tag or `pip install vllm==X` to check it exactly)")
        hint: str | None
        suggestion: str | None = None
        version = self.name
        if retired is not None and retired.last is not None:
            again = (f" (and accepted again from {retired.since})"
                     if retired.since is not None else "")
            message = (f"{written} was removed after vLLM {retired.last}{again}: vLLM "
                       f"{version} rejects it{assumed}")
            hint = retired.hint
        elif retired is not None:
            message = (f"{written} is not a vLLM {version} flag: it was added later (vLLM "
                       f"{retired.since} accepts it){assumed}")
            hint = f"pin vLLM {retired.since} or later to use it"
        else:
            suggestion = self.catalog.suggest(spelling)
            message = f"unknown flag {written}" + (
                f"; did you mean {suggestion}?" if suggestion else "") + assumed
            hint = None if suggestion else self.help_hint
        # did-you-mean is a guess at what was meant: an unsafe fix
        fix = replace_span(self.b.source, flag_span, written, suggestion,
                           f"Replace with {suggestion}", safe=False) \
            if retired is None and suggestion else None
        self.b.report("MG004", severity, message, flag_span, hint=hint, fix=fix)
        meant = self.catalog.lookup(suggestion) if retired is None and suggestion else None
        if meant is not None and not self.substitute_for:
            # argparse exits at the first unrecognized argument ("unrecognized arguments: …",
            # vllm/utils/argparse_utils.py FlexibleArgumentParser.parse_args → argparse), so the
            # setting the user meant is not the engine's default either: no rule computes from
            # it (DECISIONS "A mistyped flag whose intent is clear …")
            self._unknown(meant.option, written, flag_span)
        # argparse leaves the words after an unknown flag as positionals; do not turn its value
        # into a second "unexpected argument", nor into the model when `--model` gives it
        # (FlexibleArgumentParser.parse_args moves a `--model` value to the front, 0.30.0)
        if self.positional or self.model_broken or self.api_server or self._model_flag:
            return self._skip_values(i + 1)
        return i + 1

    def _valued_elsewhere(self, spec: OptionSpec) -> tuple[Severity, str]:
        """An unpinned launch's value for a bare flag: an error, unless another catalogued
        release takes a value there (StoreBoolean up to 0.7.3: `--enable-chunked-prefill=false`
        is valid) -- then a warning that says which release it assumes (DECISIONS: a verdict
        resting on an unknown engine version is at most a warning)."""
        others = vllm_value_releases(spec.key) if self.release_assumed else ()
        if not others:
            return Severity.ERROR, ""
        versions = vllm_versions()
        run = versions[versions.index(others[0]):versions.index(others[-1]) + 1]
        which = (others[0] if len(others) == 1 else
                 f"{others[0]} to {others[-1]}" if run == others else ", ".join(others))
        return Severity.WARNING, (
            f" (assuming vLLM {self.name}, as nothing pins the release: vLLM {which} "
            f"take{'s' if len(others) == 1 else ''} a value there)")

    def _flag(self, i: int, tok: OptionToken, spec: OptionSpec, match: Match, written: str,
              flag_span: Span) -> int:
        word = self.words[i]
        if tok.value_start is not None:
            severity, assumed = self._valued_elsewhere(spec)
            self.b.report(
                "MG006", severity,
                f"{written} takes no value: vLLM {self.name} fails with \"ignored explicit "
                f"argument '{word.text[tok.value_start:]}'\"{assumed}",
                word.sub(tok.value_start),
                hint=f"write {written} alone" + (
                    f" (or {spec.neg[0]} to turn it off)" if spec.neg else ""),
            )
            self._unknown(spec, written, flag_span)
            return i + 1
        nxt = self.words[i + 1] if i + 1 < len(self.words) else None
        if nxt is not None and nxt.text in BOOL_WORDS and (self.positional or self.model_broken):
            severity, assumed = self._valued_elsewhere(spec)
            self.b.report(
                "MG006", severity,
                f"{written} takes no value: `{nxt.text}` reaches vLLM {self.name} as an extra "
                f"argument (unrecognized arguments){assumed}",
                nxt.span,
                hint=f"write {written} alone" + (
                    f", or {spec.neg[0]} to turn it off" if spec.neg else ""),
            )
            self._unknown(spec, written, flag_span)
            return i + 2
        self.b.add(OptionValue(key=spec.key, spelling=written, flag_span=flag_span,
                               value=not match.negative, negative=match.negative))
        return i + 1

    def _take_values(self, i: int, spec: OptionSpec, written: str, flag_span: Span) -> int:
        j = i + 1
        if spec.nargs == "+":
            items: list[tuple[Word, int]] = []
            while j < len(self.words) and not _looks_like_option(self.words[j].text):
                items.append((self.words[j], 0))
                j += 1
            if not items:
                self._missing(spec, written, flag_span, "expected at least one argument")
                return j
            self._set_values(spec, written, flag_span, items)
            self.greedy = (written, items[-1][0]) if len(items) > 1 else None
            return j
        nxt = self.words[j] if j < len(self.words) else None
        if nxt is None or _looks_like_option(nxt.text):
            if spec.nargs == "?":
                self.b.add(OptionValue(key=spec.key, spelling=written, flag_span=flag_span,
                                       value=spec.const))
                return j
            self._missing(spec, written, flag_span, "expected one argument")
            return j
        if spec.key == "config" and nxt.text:
            self.configs.append((nxt, flag_span))
        self._set_value(spec, written, flag_span, nxt, 0, len(nxt.text), False, ())
        return j + 1

    def _missing(self, spec: OptionSpec, written: str, flag_span: Span, what: str) -> None:
        self.b.report(
            "MG005", Severity.ERROR,
            f"{written} needs a value: vLLM fails with \"argument {written}: {what}\"",
            flag_span,
            hint=f"write {written} VALUE" + (f" (one of {_choices(spec)})" if spec.choices
                                             else ""),
        )
        self._unknown(spec, written, flag_span)

    def _dotted(self, i: int, tok: OptionToken, spec: OptionSpec, written: str,
                flag_span: Span) -> int:
        word = self.words[i]
        if tok.value_start is not None:
            value_word, start, nxt_i = word, tok.value_start, i + 1
        elif i + 1 < len(self.words):
            value_word, start, nxt_i = self.words[i + 1], 0, i + 2
        else:
            self._missing(spec, written, flag_span, "expected one argument")
            return i + 1
        value_span = value_word.sub(start)
        raw = value_word.text[start:]
        occ_spelling = word.text[:tok.flag_end]
        refs = self.b.unresolved_in(value_word, value_span)
        if spec.type not in ("json", "json_or_str"):
            self._invalid(spec, written, raw, value_span,
                          f"{written} is not a JSON option, so dotted keys "
                          f"({occ_spelling}) do not apply")
            return nxt_i
        first = tok.subkeys[0].rstrip("+")
        if spec.fields and first not in spec.fields:
            from difflib import get_close_matches  # only for a did-you-mean

            close = get_close_matches(first, spec.fields, n=1)
            self.b.report(
                "MG006", Severity.ERROR,
                f"{spec.display} has no field `{first}`" +
                (f"; did you mean `{close[0]}`?" if close else ""),
                word.sub(len(tok.dashes) + len(tok.name) + 1, tok.flag_end),
                hint=f"fields: {', '.join(spec.fields)}",
            )
            self._unknown(spec, occ_spelling, flag_span, subkeys=tok.subkeys)
            return nxt_i
        if refs:
            self.b.report_unresolved(spec, refs)
            self._unknown(spec, occ_spelling, flag_span, subkeys=tok.subkeys, value_span=value_span)
            return nxt_i
        value: Any
        if tok.subkeys[-1].endswith("+"):
            value = [_dotted_scalar(x) for x in raw.split(",")]
        else:
            value = _dotted_scalar(raw)
        self.b.add(OptionValue(key=spec.key, spelling=occ_spelling, flag_span=flag_span,
                               value_span=value_span, raw=raw, value=value,
                               subkeys=tok.subkeys))
        return nxt_i

    def _set_value(self, spec: OptionSpec, written: str, flag_span: Span, word: Word,
                   start: int, end: int, negative: bool, subkeys: tuple[str, ...]) -> None:
        raw = word.text[start:end]
        value_span = word.sub(start, end)
        refs = self.b.unresolved_in(word, value_span) if word.unresolved else ()
        if refs:
            self.b.report_unresolved(spec, refs)
            self._unknown(spec, written, flag_span, value_span=value_span, raw=raw)
            return
        value, error = convert(spec, raw)
        if error is None and spec.choices is not None and spec.key not in CHECKED_BY_RULE:
            error = _check_choice(spec, value)
        if error is not None:
            self._invalid(spec, written, raw, value_span, error, flag_span)
            return
        if spec.repeat == "append":
            value = [value]
        self.b.add(OptionValue(key=spec.key, spelling=written, flag_span=flag_span,
                               value_span=value_span, raw=raw, value=value, negative=negative,
                               subkeys=subkeys))

    def _set_values(self, spec: OptionSpec, written: str, flag_span: Span,
                    items: list[tuple[Word, int]]) -> None:
        values: list[Any] = []
        first, last = items[0], items[-1]
        value_span = Span(first[0].sub(first[1]).start, last[0].span.end)
        raws = [w.text[s:] for w, s in items]
        for w, s in items:
            span = w.sub(s)
            refs = self.b.unresolved_in(w, span)
            if refs:
                self.b.report_unresolved(spec, refs)
                self._unknown(spec, written, flag_span, value_span=value_span,
                              raw=" ".join(raws))
                return
            value, error = convert(spec, w.text[s:])
            if error is None and spec.choices is not None:
                error = _check_choice(spec, value)
            if error is not None:
                self._invalid(spec, written, w.text[s:], span, error, flag_span)
                return
            values.append(value)
        self.b.add(OptionValue(key=spec.key, spelling=written, flag_span=flag_span,
                               value_span=value_span, raw=" ".join(raws), value=values))

    def _invalid(self, spec: OptionSpec, written: str, raw: str, span: Span, error: str,
                 flag_span: Span | None = None) -> None:
        severity, assumed = Severity.ERROR, ""
        if spec.key == "compilation_config" and raw in _LEVELS and self.release_assumed:
            # vLLM 0.8.5 reads a bare level (vllm/config.py CompilationConfig.from_cli: `if
            # cli_value in ["0", "1", "2", "3"]: return cls(level=int(cli_value))`, 0.8.5.post1);
            # 0.9.2 validates it as JSON (TypeAdapter(CompilationConfig).validate_json) and fails
            severity = Severity.WARNING
            assumed = (f" (assuming vLLM {self.name}, as nothing pins the release: vLLM 0.8.5 "
                       "reads a bare level there)")
        self.b.report("MG006", severity, f"invalid value for {written}: {error}{assumed}", span)
        self._unknown(spec, written, flag_span or span, value_span=span, raw=raw)

    def _unknown(self, spec: OptionSpec, written: str, flag_span: Span, *,
                 value_span: Span | None = None, raw: str | None = None,
                 subkeys: tuple[str, ...] = ()) -> None:
        self.b.add(OptionValue(key=spec.key, spelling=written, flag_span=flag_span,
                               value_span=value_span, raw=raw, known=False, subkeys=subkeys))


def _default_bind(d: object) -> Bind:
    # vLLM binds (args.host or "", args.port): every interface unless --host is given
    # (vllm/entrypoints/launchers/launcher.py setup_server, 0.30.0)
    return Bind("", "vLLM's default (no --host: every interface)")


ENGINE = Engine(
    name=VLLM, display="vLLM", label="vLLM",
    capabilities=frozenset({HTTP_API, GPU_LAYOUT, PARALLEL_LAYOUT, VLLM_ARGS}),
    parse=parse_vllm, catalog=vllm_catalog, choose_release=choose_vllm_version,
    default_port=8000,  # vllm/entrypoints/openai/cli_args.py FrontendArgs.port (0.30.0)
    host_flag="--host", default_bind=_default_bind,
    api_key_env=("VLLM_API_KEY",),  # vllm/envs.py VLLM_API_KEY, read when --api-key is absent
    download_dir_key="download_dir", hub_model_ref=True,
    # vllm/envs.py VLLM_USE_MODELSCOPE: models come from ModelScope, not the Hugging Face Hub
    other_hub_env=("VLLM_USE_MODELSCOPE",),
)
