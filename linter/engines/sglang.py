"""`python -m sglang.launch_server` / `sglang serve` argument walker.

SGLang parses its command line with a plain ``argparse.ArgumentParser()`` (``prepare_server_args``
in sglang/srt/server_args.py, 0.4.10.post2 and 0.5.5) to which ``ServerArgs.add_cli_args`` adds
every option; this walker follows CPython's argparse (3.10-3.12, ``_parse_optional``,
``_get_option_tuples``, ``consume_optional``):

- exact spellings only: no ``_`` → ``-`` normalisation (``--tp_size`` is unrecognized);
- ``--flag=value``; ``allow_abbrev`` is on, so an unambiguous prefix of a long option is that
  option — ``--tp 8`` is ``--tp-size 8`` and ``--dp 2`` is ``--dp-size 2`` (neither is declared;
  SGLang's own documentation writes them), while a prefix that several options share fails
  ("ambiguous option: --pp could match --pp-max-micro-batch-size, --pp-size" in 0.5.5);
- ``store_true`` flags take no value (``--flag=x``: "ignored explicit argument");
- ``nargs`` '?', '+', '*' take the following words that do not look like options;
- no positional arguments: any other word is "unrecognized arguments";
- ``--model-path`` (alias ``--model``) is required.

The release is the one an `lmsysorg/sglang:vX.Y.Z…` image tag names, when it has a catalog.
Otherwise (no image, `latest`, a custom tag, an uncatalogued release) nothing says which
release runs, and SGLang adds flags and choices in every release (0.5.23, the newest on PyPI,
is the newest catalogued): the flags are checked against it, and a verdict that rests on the flag
set is a warning when another catalogued release differs or the word is close to a known flag
(ambiguous prefix, a typo), else information (a flag or choice 0.5.23 lacks).  What no release
accepts stays an error: `--tp_size` for a known `--tp-size` (argparse never rewrites `_`), a
value for a store_true flag, a missing value, a positional word, no --model-path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..findings import Finding, Severity
from ..launch import ENTRY_SGLANG_SERVE, SGLANG, Launch
from ..source import Span, Word
from ..versions import pip_pin_pattern, version_key
from .adapter import GPU_LAYOUT, HTTP_API, SGLANG_ARGS, Bind, Engine
from .catalog import SGLANG_VERSIONS, FlagCatalog, Match, OptionSpec, sglang_catalog
from .invocation import Builder, Invocation, ModelRef, OptionValue

MODEL_KEY = "model_path"  # dest of --model-path/--model (ServerArgs.add_cli_args)
# the release tags of the lmsysorg/sglang image: v0.5.5, v0.5.5-cu126, v0.4.10.post2-cu126-b200
_IMAGE_TAG = re.compile(r"(?:^|/)lmsysorg/sglang:v(\d+\.\d+\.\d+(?:\.post\d+)?)(?:-|$)")


_PIP_PIN = pip_pin_pattern("sglang")


def pinned_release(launch: Launch) -> str | None:
    """The catalogued release a `pip install sglang==X` in the launch's file installs (a
    Dockerfile's RUN, a setup script: it replaces what the image holds), else the one its
    image tag names, if any."""
    m = _PIP_PIN.search(launch.source.text) if "sglang==" in launch.source.text or \
        "sglang[" in launch.source.text else None
    if m is None:
        image = launch.context.image
        m = _IMAGE_TAG.search(image.value) if image is not None else None
    return m.group(1) if m and m.group(1) in SGLANG_VERSIONS else None


def _is_negative_number(text: str) -> bool:
    # argparse's _negative_number_matcher: '^-\d+$|^-\d*\.\d+$'
    body = text[1:]
    if body.isdigit():
        return True
    head, dot, tail = body.partition(".")
    return bool(dot) and tail.isdigit() and (head == "" or head.isdigit())


def _resolve(catalog: FlagCatalog, text: str) -> tuple[str, Any]:
    """How argparse's ``_parse_optional`` reads one word against a release's options.

    ("positional", None), ("option", (Match, explicit value or None)), ("ambiguous", [spellings])
    or ("unknown", None) (an option-looking word no option matches)."""
    if not text or text[0] != "-":
        return "positional", None
    match = catalog.lookup(text)
    if match is not None:
        return "option", (match, None)
    if len(text) == 1:
        return "positional", None
    if "=" in text:
        head, _, value = text.partition("=")
        match = catalog.lookup(head)
        if match is not None:
            return "option", (match, value)
    # _get_option_tuples: prefixes of long options (and of `-x` options for a single dash)
    if text.startswith("--"):
        prefix, sep, value = text.partition("=")
        found = [(m, value if sep else None) for m in catalog.prefixed(prefix)]
    else:
        prefix, sep, value = text.partition("=")
        short, short_value = text[:2], text[2:]
        found = []
        for m in catalog.prefixed("-"):
            if m.spelling.startswith("--"):
                continue
            if m.spelling == short:
                found.append((m, short_value))
            elif m.spelling.startswith(prefix):
                found.append((m, value if sep else None))
    # several spellings of one option are one option (a miss, never a false "ambiguous")
    keys = {m.option.key for m, _ in found}
    if len(keys) > 1:
        return "ambiguous", sorted({m.spelling for m, _ in found})
    if found:
        return "option", found[0]
    if _is_negative_number(text) or " " in text:
        return "positional", None
    return "unknown", None


def _looks_like_option(catalog: FlagCatalog, text: str) -> bool:
    """argparse marks a word 'O' (cannot be a value) unless ``_parse_optional`` says
    positional; '--' ends the options."""
    return text == "--" or _resolve(catalog, text)[0] != "positional"


class _Walker:
    def __init__(self, launch: Launch, b: Builder, catalog: FlagCatalog, pinned: bool) -> None:
        self.launch = launch
        self.pinned = pinned
        self.b = b
        self.catalog = catalog
        self.others = [sglang_catalog(v) for v in SGLANG_VERSIONS if v != catalog.version]
        # an unquoted expansion to nothing is no argument at all (the shell drops it)
        self.words = tuple(w for w in launch.args if w.text or w.quoted or launch.list_form)
        self.positional: list[Word] = []
        # `sglang serve` takes a first positional word, and --model, as the model from 0.5.23
        # (sglang/cli/serve.py _normalize_positional_model_path, cli/utils.py
        # try_get_model_path); 0.5.5 only --model-path (cli/utils.py get_model_path)
        self._serve_reads_model = version_key(catalog.version) >= version_key("0.5.23")

    # ------------------------------------------------------------------ releases
    def _accepted_by(self, text: str) -> list[str]:
        """The other catalogued releases that read ``text`` as an option."""
        return [c.version for c in self.others if _resolve(c, text)[0] == "option"]

    def _severity(self, others: list[str], typo: bool = False) -> tuple[Severity, str]:
        """A verdict about the flag set: an error only for the pinned release; without a pin a
        warning when another catalogued release differs or the word is close to a known one
        (a typo), else information (a later release may have it)."""
        if self.pinned:
            return Severity.ERROR, ""
        if others:
            return Severity.WARNING, (
                f" (SGLang {', '.join(others)} accepts it; nothing in the launch says which "
                "release runs)")
        return Severity.WARNING if typo else Severity.INFO, (
            f" (assuming SGLang {self.catalog.version}, the newest catalogued release: a later "
            "one may accept it; pin the image tag, lmsysorg/sglang:vX.Y.Z, to check it exactly)")

    # ------------------------------------------------------------------ walking
    def walk(self) -> None:
        words = self.words
        i = 0
        while i < len(words):
            word = words[i]
            text = word.text
            if text == "--":
                self.positional.extend(words[i + 1:])
                break
            if word.may_split and not text.startswith("-"):
                # `$ARGS`: what it holds is unknown; when it may hold any option, the settings
                # the launch does not state are unknown too (as vLLM's walker has it)
                if word.may_set_anything:
                    self.b.open_span = self.b.open_span or word.span
                i += 1
                continue
            kind, info = _resolve(self.catalog, text)
            if kind == "positional":
                if text.startswith("-") and " " in text and self._glued(word):
                    i += 1
                    continue
                self.positional.append(word)
                i += 1
            elif kind == "ambiguous":
                i = self._ambiguous(i, info)
            elif kind == "unknown":
                i = self._unknown_flag(i)
            else:
                match, explicit = info
                i = self._option(i, match, explicit)
        for word in self.positional:
            if word.unresolved:
                continue
            self._positional(word)

    def _glued(self, word: Word) -> bool:
        head, _, rest = word.text.partition(" ")
        kind, info = _resolve(self.catalog, head)
        if kind != "option":
            return False
        self.b.glued(word, head, rest, "SGLang", "rejects it (argparse: unrecognized arguments)")
        self._stated(info[0].option, head, word.span, known=False)
        return True

    def _positional(self, word: Word) -> None:
        serve = self.launch.entry == ENTRY_SGLANG_SERVE
        first = self.words and word is self.words[0]
        if serve and first:
            # sglang/cli/serve.py _normalize_positional_model_path (0.5.23) takes a first
            # positional word as --model-path; 0.5.5 (sglang/cli/utils.py get_model_path)
            # does not
            if self._serve_reads_model:
                self.b.add(OptionValue(key=MODEL_KEY, spelling="the positional model",
                                       flag_span=word.span, value_span=word.span,
                                       raw=word.text, value=word.text))
                if self.pinned:
                    return
            # a pinned release that does not read it stops; otherwise the release decides
            self.b.report(
                "MG016", Severity.ERROR if self.pinned else Severity.WARNING,
                f"`{word.text}` is given as a positional model: `sglang serve` of SGLang 0.5.5 "
                "reads the model only from --model-path and stops with \"Error: --model-path "
                "is required\" (later releases take a first positional word as the model)",
                word.span, hint=f"write --model-path {word.text}",
            )
            return
        self.b.report(
            "MG004", Severity.ERROR,
            f"unexpected argument `{word.text}`: SGLang takes no positional arguments and "
            "exits (argparse: unrecognized arguments)",
            word.span,
            hint=f"write --model-path {word.text}" if first else
            "remove it, or give it to the flag it belongs to",
        )

    def _ambiguous(self, i: int, names: list[str]) -> int:
        word = self.words[i]
        written = word.text.partition("=")[0]
        others = self._accepted_by(word.text)
        severity, why = self._severity(others)
        self.b.report(
            "MG004", severity,
            f"ambiguous option {written}: SGLang {self.catalog.version} (argparse) rejects it "
            f"because it could match {', '.join(names)}{why}",
            word.sub(0, len(written)), hint="write the full flag name",
        )
        # argparse stops at the ambiguous word: the words after it that are no option are
        # its values in the release that accepts it (nargs '+' for --cuda-graph-bs), never
        # positional arguments of their own
        return self._skip_values(i + 1, limit=None) if "=" not in word.text else i + 1

    def _unknown_flag(self, i: int) -> int:
        word = self.words[i]
        if word.unresolved:
            return i + 1
        written = word.text.partition("=")[0]
        dashed = written[:2] + written[2:].replace("_", "-") if "_" in written else None
        underscored = self.catalog.lookup(dashed) if dashed else None
        others = [] if underscored else self._accepted_by(word.text)
        severity, why = self._severity(others)
        if underscored is not None:
            # plain argparse in every release (prepare_server_args, 0.4.10.post2-0.5.23)
            severity, why = Severity.ERROR, ""
            suggestion: str | None = dashed
            message = (f"unknown flag {written}: SGLang's argparse does not read `_` as `-`, "
                       f"so it exits (unrecognized arguments); did you mean {dashed}?")
        elif not others:
            suggestion = self.catalog.suggest(written)
            severity, why = self._severity([], typo=suggestion is not None)
            message = (f"unknown flag {written}: SGLang {self.catalog.version} exits "
                       "(unrecognized arguments)" +
                       (f"; did you mean {suggestion}?" if suggestion else "") + why)
        else:
            suggestion = None
            message = (f"{written} is not a flag of SGLang {self.catalog.version}, which exits "
                       f"(unrecognized arguments){why}")
        self.b.report("MG004", severity, message, word.sub(0, len(written)),
                      hint=None if suggestion or others or not self.pinned else
                      "run `python -m sglang.launch_server --help` for the flag list")
        meant = self.catalog.lookup(suggestion) if suggestion and \
            severity == Severity.ERROR else None
        if meant is not None:
            # argparse exits after parsing: the option meant is not its default either
            self._stated(meant.option, written, word.sub(0, len(written)), known=False)
        # the value an unknown flag may have had is not a second problem
        return self._skip_values(i + 1) if "=" not in word.text else i + 1

    def _skip_values(self, i: int, limit: int | None = 1) -> int:
        n = 0
        while i < len(self.words) and (limit is None or n < limit) and \
                not _looks_like_option(self.catalog, self.words[i].text):
            i += 1
            n += 1
        return i

    def _option(self, i: int, match: Match, explicit: str | None) -> int:
        word = self.words[i]
        spec = match.option
        text = word.text
        written = text if explicit is None else text[:len(text) - len(explicit) - 1]
        flag_span = word.sub(0, len(written))
        if word.unresolved and self.b.unresolved_in(word, flag_span):
            return self._skip_values(i + 1)
        if spec.type == "help":
            return i + 1
        if not spec.takes_value:
            if explicit is not None:
                self.b.report(
                    "MG006", Severity.ERROR,
                    f"{written} takes no value: SGLang fails with \"argument {match.spelling}: "
                    f"ignored explicit argument '{explicit}'\"",
                    word.sub(len(written) + 1), hint=f"write {written} alone",
                )
                self._stated(spec, written, flag_span, known=False)
                return i + 1
            # argparse.BooleanOptionalAction's --no-x stores False (0.5.23); a store_const
            # flag stores its const
            value = False if match.negative else (spec.const if spec.const is not None
                                                  else True)
            self.b.add(OptionValue(key=spec.key, spelling=written, flag_span=flag_span,
                                   value=value))
            return i + 1
        if explicit is not None:
            start = len(text) - len(explicit)
            items = [(word, start)]
            self._set(spec, written, flag_span, items)
            return i + 1
        j = i + 1
        items = []
        limit = 1 if spec.nargs in (1, "?") else None
        while j < len(self.words) and (limit is None or len(items) < limit) and \
                not _looks_like_option(self.catalog, self.words[j].text):
            items.append((self.words[j], 0))
            j += 1
        if not items:
            if spec.nargs == "?":
                self.b.add(OptionValue(key=spec.key, spelling=written, flag_span=flag_span,
                                       value=spec.const))
                return j
            if spec.nargs == "*":
                self.b.add(OptionValue(key=spec.key, spelling=written, flag_span=flag_span,
                                       value=[]))
                return j
            what = "expected at least one argument" if spec.nargs == "+" else \
                "expected one argument"
            self.b.report(
                "MG005", Severity.ERROR,
                f"{written} needs a value: SGLang fails with \"argument "
                f"{'/'.join(spec.names)}: {what}\"",
                flag_span, hint=f"write {written} VALUE",
            )
            self._stated(spec, written, flag_span, known=False)
            return j
        self._set(spec, written, flag_span, items)
        return j

    def _set(self, spec: OptionSpec, written: str, flag_span: Span,
             items: list[tuple[Word, int]]) -> None:
        first, last = items[0], items[-1]
        value_span = Span(first[0].sub(first[1]).start, last[0].span.end)
        raws = [w.text[s:] for w, s in items]
        raw = " ".join(raws)
        values: list[Any] = []
        for (w, s), text in zip(items, raws):
            span = w.sub(s)
            refs = self.b.unresolved_in(w, span)
            if refs:
                self.b.report_unresolved(spec, refs)
                self._stated(spec, written, flag_span, known=False, value_span=value_span,
                             raw=raw)
                return
            value, error, choice = _convert(spec, text)
            if error is not None:
                # the choices change between releases; the types do not
                severity, why = self._severity([]) if choice else (Severity.ERROR, "")
                self.b.report(
                    "MG006", severity,
                    f"invalid value for {written}: {error}; SGLang exits (argparse){why}", span)
                self._stated(spec, written, flag_span, known=False, value_span=value_span,
                             raw=raw)
                return
            values.append(value)
        many = spec.nargs in ("+", "*")
        self.b.add(OptionValue(key=spec.key, spelling=written, flag_span=flag_span,
                               value_span=value_span, raw=raw,
                               value=values if many else values[0]))

    def _stated(self, spec: OptionSpec, written: str, flag_span: Span, *, known: bool,
                value_span: Span | None = None, raw: str | None = None) -> None:
        self.b.add(OptionValue(key=spec.key, spelling=written, flag_span=flag_span,
                               value_span=value_span, raw=raw, known=known))

    # ------------------------------------------------------------------ the model
    def model(self) -> ModelRef | None:
        occs = [o for o in self.b.argv if o.key == MODEL_KEY]
        if not occs:
            # prepare_server_args merges a --config file's settings first (0.5.5): the model
            # may be there
            if not any(f.code in ("MG004", "MG014", "MG016") for f in self.b.findings) and \
                    not any(w.may_split or w.unresolved for w in self.words) and \
                    not any(o.key == "config" for o in self.b.argv):
                self.b.report(
                    "MG016", Severity.ERROR,
                    "no model: SGLang requires --model-path and exits (\"the following "
                    "arguments are required: --model-path/--model\")",
                    self.launch.program.span, hint="add --model-path MODEL",
                )
            return None
        win = occs[-1]
        if self.launch.entry == ENTRY_SGLANG_SERVE and win.known and \
                win.spelling == "--model" and not (self.pinned and self._serve_reads_model):
            # sglang/cli/utils.py get_model_path (0.5.5) looks for the exact words
            # `--model-path X` / `--model-path=X` before argparse runs; 0.5.23
            # (try_get_model_path) also takes `--model`
            self.b.report(
                "MG016", Severity.ERROR if self.pinned else Severity.WARNING,
                f"`sglang serve` of SGLang 0.5.5 finds the model only as --model-path spelled "
                f"out: with {win.spelling} it stops with \"Error: --model-path is required\" "
                "(later releases also take --model)",
                win.flag_span, hint="write --model-path",
            )
        return ModelRef(value=win.value if win.known else None, span=win.span,
                        origin=win.spelling, known=win.known)


def _convert(spec: OptionSpec, raw: str) -> tuple[Any, str | None, bool]:
    """argparse's ``type=`` call and ``choices`` test (``_get_value``, ``_check_value``):
    the value, the error, and whether the error is a choice."""
    value: Any = raw
    if spec.type == "int":
        try:
            value = int(raw)  # argparse calls int() itself: "+8", " 8", "1_0" are accepted
        except ValueError:
            return None, f"invalid int value: '{raw}'", False
    elif spec.type == "float":
        try:
            value = float(raw)
        except ValueError:
            return None, f"invalid float value: '{raw}'", False
    if spec.choices is not None and value not in spec.choices:
        shown = ", ".join(repr(c) for c in spec.choices)
        return None, f"invalid choice: '{raw}' (choose from {shown})", True
    return value, None, False


def parse_with(launch: Launch, needed: Mapping[str, tuple[str, ...]], engine: str,
               catalog_for: Any, walker: type[_Walker]) -> tuple[Invocation, list[Finding]]:
    """Walk ``launch`` with ``walker`` over the catalog of the release it pins (else the
    newest): SGLang's server and the router that starts it parse the same way."""
    pinned = pinned_release(launch)
    catalog = catalog_for(pinned) if pinned else catalog_for()
    b = Builder(launch, catalog, catalog.version, dict(needed))
    w = walker(launch, b, catalog, pinned is not None)
    w.walk()
    model = w.model()
    b.duplicates(b.argv, describe=lambda o: o.spelling if o.raw is None else
                 f"{o.spelling} {o.raw}")
    return b.build(engine, launch.entry, model), b.findings


def parse_sglang(launch: Launch, version: str | None,
                 needed: Mapping[str, tuple[str, ...]]) -> tuple[Invocation, list[Finding]]:
    """``version`` (vLLM's target-version) and the launch's pin are vLLM facts: not used."""
    return parse_with(launch, needed, SGLANG, sglang_catalog, _Walker)


def _default_bind(d: object) -> Bind:
    # ServerArgs.host = "127.0.0.1" (sglang/srt/server_args.py, 0.4.10.post2 and 0.5.5),
    # passed to uvicorn by launch_server (sglang/srt/entrypoints/http_server.py)
    return Bind("127.0.0.1", "SGLang's default")


def _no_api(d: Any) -> bool:
    """Node ranks 1 and up start the schedulers and a dummy health-check server, never the
    API (sglang/srt/entrypoints/engine.py _launch_subprocesses: `if server_args.node_rank >= 1`
    … launch_dummy_health_check_server, 0.5.5).  A LeaderWorkerSet worker is such a rank
    (its --node-rank is $(LWS_WORKER_INDEX), 1 and up in the worker template)."""
    rank = d.inv.node_rank
    if rank.int_value is not None:
        return rank.int_value >= 1
    return rank.given and d.context.role == "worker"


def _layout(inv: Invocation, launch: Launch) -> object:
    # resolve (which facts/ builds on) imports the engines: this module imports it when asked
    from ..facts.sglang_layout import layout

    return layout(inv, pinned_release(launch))


ENGINE = Engine(
    name=SGLANG, display="SGLang", label="SGLang",
    # PARALLEL_LAYOUT (vLLM's arithmetic) is not claimed: with --enable-dp-attention the dp
    # ranks live inside tp, and GPUs are placed by SGLang's own loop — the layout of
    # linter/facts/sglang_layout.py, which GPU_LAYOUT's rule (MG101) checks.
    capabilities=frozenset({GPU_LAYOUT, HTTP_API, SGLANG_ARGS}),
    parse=parse_sglang, catalog=sglang_catalog,
    default_port=30000,  # ServerArgs.port (sglang/srt/server_args.py, 0.4.10.post2, 0.5.5)
    host_flag="--host", default_bind=_default_bind,
    # --api-key only: http_server.py adds add_api_key_middleware when server_args.api_key is
    # set; no environment variable sets it (0.5.5)
    hub_model_ref=True, no_api=_no_api, layout=_layout, release_pin=pinned_release,
)
