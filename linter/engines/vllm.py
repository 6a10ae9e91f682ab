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

import difflib
import json
import re
from pathlib import Path
from typing import Any

from ..findings import Finding, Related, Severity
from ..fixes import replace_span, split_glued
from ..launch import ENTRY_VLLM_API_SERVER, ENTRY_VLLM_SERVE, VLLM, Launch
from ..source import Span, Word
from .catalog import (
    FlagCatalog,
    Match,
    OptionSpec,
    choose_vllm_version,
    version_key,
    vllm_catalog,
    vllm_versions,
)
from .invocation import (
    NEGATIVE_NUMBER,
    Builder,
    Invocation,
    ModelRef,
    OptionToken,
    OptionValue,
    classify,
)

# Options whose value rules need, and the rules skipped when it is unknown (MG009 names them).
NEEDED: dict[str, tuple[str, ...]] = {
    "model": ("MG010", "MG102", "MG301", "MG302", "MG304", "MG401", "MG402"),
    "tensor_parallel_size": ("MG101", "MG102", "MG103", "MG105", "MG201", "MG301", "MG401",
                             "MG403", "MG404", "MG405"),
    "pipeline_parallel_size": ("MG101", "MG104", "MG203", "MG301"),
    "data_parallel_size": ("MG101", "MG107", "MG401", "MG403", "MG404", "MG405"),
    "data_parallel_size_local": ("MG101",),
    "prefill_context_parallel_size": ("MG101",),
    "nnodes": ("MG101", "MG105", "MG106"),
    "node_rank": ("MG106",),
    "max_model_len": ("MG302", "MG303", "MG304"),
    "gpu_memory_utilization": ("MG108", "MG301", "MG302", "MG303", "MG305"),
    "kv_cache_memory_bytes": ("MG302", "MG303"),
    "max_num_seqs": ("MG203", "MG303"),
    "kv_cache_dtype": ("MG302", "MG303"),
    "dtype": ("MG301", "MG302"),
    "quantization": ("MG301",),
    "enable_expert_parallel": ("MG401", "MG402", "MG403", "MG404"),
    "enable_eplb": ("MG403", "MG404"),
    "eplb_config": ("MG403",),
    "device_ids": ("MG101",),
    "max_loras": ("MG306",),
    "max_lora_rank": ("MG306", "MG307"),
}

# A value check that a rule makes instead of MG006 (one cause, one finding: DECISIONS.md).
CHECKED_BY_RULE = {"max_lora_rank": "MG307"}

BOOL_WORDS = frozenset({"true", "false", "True", "False", "1", "0", "yes", "no", "on", "off"})
# Entry-point behaviours by release (first release that behaves the new way):
# api_server module: a positional model is rejected up to 0.9.2 and ignored from 0.10.0
# (vllm-versions/README.md "Entry points").
FIRST_IGNORING_RELEASE = "0.10.0"
# `vllm serve` up to 0.7.3: the positional model is required (nargs=None) and
# ServeSubcommand.cmd raises ValueError when --model differs from its default (vllm/scripts.py
# 0.6.6.post1, vllm/entrypoints/cli/serve.py 0.7.3).  From 0.8 the model is optional and
# FlexibleArgumentParser.parse_args raises ValueError on a `--model` word, up to 0.10.2
# (vllm/utils.py 0.8.5, vllm/utils/__init__.py 0.9.2, 0.10.0, 0.10.2); from 0.11 it warns and
# moves the model to the front (vllm/utils/argparse_utils.py 0.11.2).
FIRST_OPTIONAL_MODEL_RELEASE = "0.8.0"
FIRST_MODEL_REWRITE_RELEASE = "0.11.0"
# the api_server module prints a deprecation warning from 0.29.0 (vllm-versions/README.md)
FIRST_DEPRECATED_API_SERVER = "0.29.0"
MODEL_MESSAGE = ("With `vllm serve`, you should provide the model as a positional argument "
                 "instead of via the `--model` option.")
PARSER_MODEL_MESSAGE = ("With `vllm serve`, you should provide the model as a positional argument "
                        "or in a config file instead of via the `--model` option.")
CONFIG_MAX_BYTES = 1 << 20
# the raw-word tests of FlexibleArgumentParser.parse_args (vllm/utils/argparse_utils.py, 0.30.0)
_MODEL_WORD = re.compile(r"^--model(=.+|$)")
_CONFIG_WORD = re.compile(r"^--config(=.+|$)")
_SERVED_WORD = re.compile(r"^--served[-_]model[-_]name(=.+|$)")


def parse_vllm(launch: Launch, version: str | None) -> tuple[Invocation, list[Finding]]:
    requested = version or (launch.version_pin.value if launch.version_pin else None)
    choice = choose_vllm_version(requested)
    catalog = vllm_catalog(choice.version)
    b = Builder(launch, catalog, choice.version, NEEDED)
    if choice.note is not None:
        versions = vllm_versions()
        pin_span = launch.version_pin.span if launch.version_pin and \
            launch.version_pin.span else launch.program.span
        b.report(
            "MG015", Severity.INFO, choice.note, pin_span,
            hint="flags that changed between the two releases may be reported wrongly; "
                 f"catalogued: one release of each line from {versions[0]} to {versions[-1]}",
        )
    walker = _Walker(launch, b, catalog, requested if choice.note is not None else None,
                     requested if choice.note is None and requested and version_key(requested)
                     else choice.version)
    # nothing pins the release: verdicts that would flip under another release are warnings
    walker.release_assumed = requested is None
    walker.entry_point()
    walker.walk()
    model = walker.finish_model()
    b.duplicates(b.before + b.argv, describe=_describe)
    findings = b.findings
    if not launch.entry_known:
        # the image's entrypoint for this release is unknown (api_server module or `vllm
        # serve`): how it takes the model is not judged (images.md)
        findings = [f for f in findings if f.code != "MG016"]
    return b.build(VLLM, launch.entry, model), findings


def _describe(occ: OptionValue) -> str:
    if occ.origin == "config":
        return f"`{occ.spelling}` in the --config file"
    if occ.raw is None:
        return occ.spelling
    return f"{occ.spelling} {occ.raw}"


class _Walker:
    def __init__(self, launch: Launch, b: Builder, catalog: FlagCatalog,
                 substitute_for: str | None, name: str) -> None:
        self.launch = launch
        self.b = b
        self.catalog = catalog
        # an unquoted expansion to nothing is no argument at all (the shell drops it)
        self.words = tuple(w for w in launch.args if w.text or w.quoted or launch.list_form)
        self.substitute_for = substitute_for
        self.name = name  # the release as messages name it ("0.8.5" for the 0.8.5.post1 catalog)
        # the release whose behaviour applies: the pinned one when it names a release
        self.release = version_key(substitute_for or "") or version_key(b.version)
        self.api_server = launch.entry == ENTRY_VLLM_API_SERVER
        self.positional: list[Word] = []
        self.model_broken = False
        self.release_assumed = False  # no image tag, pip pin or target-version states it
        self.configs: list[tuple[Word, Span]] = []
        self.greedy: tuple[str, Word] | None = None  # last nargs='+' option and its last word
        self.config_data: dict[str, Any] | None = None  # the --config file, when read
        # a shell expansion that may give no word or several (`$ARGS` unknown, `${X:+…}`):
        # what it holds is unknown, so it is never the model and later positionals may be
        # the values of flags it holds
        self.unknown_words: Word | None = None

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

    # ---------------------------------------------------------------- walking argv
    def walk(self) -> None:
        words = self.words
        i = 0
        if (self.launch.image_entrypoint and self.launch.entry == ENTRY_VLLM_SERVE and words
                and words[0].text == "serve"):
            self.b.report(
                "MG016", Severity.ERROR,
                "`serve` repeated: the image's entrypoint is already `vllm serve`, so this runs "
                "`vllm serve serve …`; vLLM takes `serve` as the model and rejects the real one "
                "(unrecognized arguments)",
                words[0].span, hint="drop `serve` from the arguments",
            )
            self.model_broken = True
            i = 1
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
            if word.may_split and not text.startswith("-"):
                self.unknown_words = self.unknown_words or word
                i += 1
                continue
            if text.startswith("-O") and self._o_is_preprocessed():
                i = self._optimization_level(i)
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

    def _o_is_preprocessed(self) -> bool:
        """`-O`, `-O3`, `-O=3` are vLLM's pre-processed optimization level (not argparse)."""
        return self.catalog.lookup("-O") is None and "optimization_level" in self.catalog.by_key

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
        if resolved is None:
            return False
        spec = resolved.option
        self.b.report(
            "MG014", Severity.ERROR,
            f"`{word.text}` is one argument: vLLM receives the flag and its value as a single "
            f"word and rejects it (unrecognized arguments)",
            word.span,
            hint=f'split it into two list items: "{head}", "{rest.strip()}"'
            if self.launch.list_form else f"unquote it: {head} {rest.strip()}",
            fix=split_glued(self.b.source, word, head, self.launch.list_form),
        )
        self._unknown(spec, head, word.span)
        return True

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
        if spec.deprecated and not (spec.key == "model" and (
                self.api_server or not self.launch.entry_known)):
            self.b.report("MG008", Severity.WARNING,
                          f"{written} is deprecated: {spec.deprecated}", flag_span)
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
            hint = None if suggestion else "run `vllm serve --help=all` for the flag list"
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
        # into a second "unexpected argument"
        if self.positional or self.model_broken or self.api_server:
            return self._skip_values(i + 1)
        return i + 1

    def _flag(self, i: int, tok: OptionToken, spec: OptionSpec, match: Match, written: str,
              flag_span: Span) -> int:
        word = self.words[i]
        if tok.value_start is not None:
            self.b.report(
                "MG006", Severity.ERROR,
                f"{written} takes no value: vLLM fails with \"ignored explicit argument "
                f"'{word.text[tok.value_start:]}'\"",
                word.sub(tok.value_start),
                hint=f"write {written} alone" + (
                    f" (or {spec.neg[0]} to turn it off)" if spec.neg else ""),
            )
            self._unknown(spec, written, flag_span)
            return i + 1
        nxt = self.words[i + 1] if i + 1 < len(self.words) else None
        if nxt is not None and nxt.text in BOOL_WORDS and (self.positional or self.model_broken):
            self.b.report(
                "MG006", Severity.ERROR,
                f"{written} takes no value: `{nxt.text}` reaches vLLM as an extra argument "
                "(unrecognized arguments)",
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
            close = difflib.get_close_matches(first, spec.fields, n=1)
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
        refs = self.b.unresolved_in(word, value_span)
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
        self.b.report("MG006", Severity.ERROR, f"invalid value for {written}: {error}", span)
        self._unknown(spec, written, flag_span or span, value_span=span, raw=raw)

    def _unknown(self, spec: OptionSpec, written: str, flag_span: Span, *,
                 value_span: Span | None = None, raw: str | None = None,
                 subkeys: tuple[str, ...] = ()) -> None:
        self.b.add(OptionValue(key=spec.key, spelling=written, flag_span=flag_span,
                               value_span=value_span, raw=raw, known=False, subkeys=subkeys))

    # ---------------------------------------------------------------- positionals and model
    def _positional(self, word: Word) -> None:
        if self.api_server:
            self.positional.append(word)
            return
        if self.unknown_words is not None and (self.positional or self.model_broken):
            return  # the unknown words before it may hold a flag that takes it as a value
        if self.positional or self.model_broken:
            taken = self.positional[0].text if self.positional else "serve"
            self.b.report(
                "MG004", Severity.ERROR,
                f"unexpected argument `{word.text}`: vllm serve takes one positional model "
                f"(`{taken}` is already the model), so vLLM fails with \"unrecognized "
                "arguments\"",
                word.span,
            )
            return
        self.positional.append(word)

    def finish_model(self) -> ModelRef | None:
        flag_model = [o for o in self.b.argv if o.key == "model"]
        config_model = [o for o in self.b.before if o.key == "model"]
        if self.api_server:
            return self._api_server_model(flag_model + config_model)
        if self.model_broken:
            return ModelRef(value=None, span=None, origin="positional", known=False)
        if self._serve_rejects_order():
            return ModelRef(value=None, span=None, origin="positional", known=False)
        if not self.positional and self.unknown_words is None and \
                self._serve_rejects_model(flag_model, config_model):
            occs = flag_model or config_model
            if occs:
                occ = occs[-1]
                return ModelRef(value=occ.value if occ.known else None, span=occ.value_span,
                                origin=occ.spelling, known=occ.known)
            return ModelRef(value=None, span=None, origin="positional", known=False)
        if self.positional:
            word = self.positional[0]
            if flag_model:
                self.b.report(
                    "MG016", Severity.ERROR,
                    f"the model is given twice: `{word.text}` as the positional model and "
                    f"{flag_model[-1].spelling} {flag_model[-1].raw}",
                    flag_model[-1].span,
                    hint="keep only the positional model: `vllm serve MODEL …`",
                    related=(Related(self.b.source, word.span, "positional model"),),
                )
                return ModelRef(value=word.text, span=word.span, origin="positional",
                                known=False)
            return self._word_model(word, "positional")
        occs = flag_model or config_model
        if occs:
            occ = occs[-1]
            return ModelRef(value=occ.value if occ.known else None, span=occ.value_span,
                            origin=occ.spelling if occ.origin == "argv" else "config",
                            known=occ.known)
        if self.configs and not any(o.origin == "config" for o in self.b.before):
            # a --config file that could not be read may name the model
            return ModelRef(value=None, span=None, origin="config", known=False)
        if self.unknown_words is not None:
            # the model may be among the words of an unknown expansion
            word = self.unknown_words
            return ModelRef(value=None, span=word.span, origin="positional", known=False)
        self._no_model()
        return ModelRef(value=self._default_model(), span=None, origin="default", known=False)

    def _serve_rejects_model(self, flag_model: list[OptionValue],
                             config_model: list[OptionValue]) -> bool:
        """MG016 where `vllm serve` without a positional model fails in this release: the model
        is required up to 0.7, and --model is rejected up to 0.10 (True when reported)."""
        version = self.name
        hint = "write the model first: `vllm serve MODEL …`"
        if self.before(FIRST_OPTIONAL_MODEL_RELEASE):
            default = self._default_model()
            given = [o for o in flag_model + config_model if not (o.known and o.value == default)]
            for occ in given:
                self.b.report(
                    "MG016", Severity.ERROR,
                    f"vLLM {version} takes the model only as the positional argument of vllm "
                    f"serve: with {occ.spelling} it fails (ValueError: \"{MODEL_MESSAGE}\")",
                    occ.span, hint=hint,
                )
            if not given:
                self.b.report(
                    "MG016", Severity.ERROR,
                    f"no model given: vllm serve in vLLM {version} requires the model as its "
                    "first argument (\"the following arguments are required: model_tag\")",
                    self.launch.program.span, hint=hint,
                )
            return True
        if not self.before(FIRST_MODEL_REWRITE_RELEASE):
            return False
        words = [w for w in self.words if w.text == "--model"]
        for word in words:
            self.b.report(
                "MG016", Severity.ERROR,
                f"vLLM {version} rejects the --model option with vllm serve (ValueError: "
                f"\"{PARSER_MODEL_MESSAGE}\"); only `--model=M` slips through",
                word.span, hint=hint,
            )
        return bool(words)

    def _serve_rejects_order(self) -> bool:
        """MG016 where `vllm serve` refuses a launch whose first argument is not the model
        (vllm/utils/argparse_utils.py FlexibleArgumentParser.parse_args and
        _pull_args_from_config, vLLM 0.30.0; the --served-model-name check from 0.20.2, the
        --config one from 0.10.2 in the sampled wheels).  Both look at the raw words after
        `serve`, after a `--model M` word has been moved to the front (0.11 on)."""
        words = self.words
        if not words or not words[0].text.startswith("-") or any(
                _MODEL_WORD.match(w.text) for w in words):
            return False
        if any(w.unresolved for w in words[:1]):
            return False
        hint = "write the model first: `vllm serve MODEL …`"
        if not self.before("0.20.2") and not any(_CONFIG_WORD.match(w.text) for w in words):
            served = next((w for w in words if _SERVED_WORD.match(w.text)), None)
            if served is not None:
                later = (f"; vLLM checks only the first argument, so `{self.positional[0].text}` "
                         "later does not count") if self.positional else ""
                if self.greedy is not None and self.greedy[0] == served.text.split("=")[0]:
                    later = (f"; {self.greedy[0]} would also take `{self.greedy[1].text}` as "
                             "one more served name")
                self.b.report(
                    "MG016", Severity.ERROR,
                    f"{served.text.split('=')[0]} without the model as the first argument: vLLM "
                    "refuses to start (ValueError: \"`model` should be provided as the first "
                    "positional argument when using `vllm serve`\", vllm/utils/argparse_utils.py "
                    f"FlexibleArgumentParser.parse_args){later}",
                    Span(served.span.start, served.span.start + len(served.text.split("=")[0])),
                    hint=hint,
                )
                return True
        if self.before("0.10.2") or self.config_data is None or "model" in self.config_data \
                or not any(w.text == "--config" for w in words):
            return False
        config_word = self.configs[0][0]
        later = (f"; `{self.positional[0].text}` after the first argument does not count"
                 if self.positional else "")
        self.b.report(
            "MG016", Severity.ERROR,
            f"--config {config_word.text} has no `model:` and the first argument is not a "
            "model: vLLM refuses to start (ValueError: \"No model specified! Please specify "
            "model either as a positional argument or in a config file.\", "
            f"vllm/utils/argparse_utils.py _pull_args_from_config){later}",
            config_word.span, hint=hint + ", or add `model:` to the config file",
        )
        return True

    def _api_server_model(self, flag_model: list[OptionValue]) -> ModelRef:
        for word in self.positional:
            rejects = self.before(FIRST_IGNORING_RELEASE)
            behaviour = ("rejects it (unrecognized arguments)" if rejects else
                         "ignores it and serves --model (default "
                         f"{self._default_model()})")
            self.b.report(
                "MG016", Severity.ERROR,
                f"positional model `{word.text}` with python -m vllm.entrypoints.openai."
                f"api_server: this entry point takes the model from --model and {behaviour}",
                word.span,
                hint=f"write --model {word.text}, or use `vllm serve {word.text}`",
            )
        if flag_model:
            occ = flag_model[-1]
            return ModelRef(value=occ.value if occ.known else None, span=occ.value_span,
                            origin=occ.spelling, known=occ.known)
        if not self.positional:
            self._no_model()
        return ModelRef(value=self._default_model(), span=None, origin="default", known=False)

    def _no_model(self) -> None:
        hint = ("write the model first: `vllm serve MODEL …`" if not self.api_server
                else "add --model MODEL")
        extra = ""
        if self.greedy is not None:
            extra = (f"; {self.greedy[0]} takes every following word, including "
                     f"`{self.greedy[1].text}`")
            hint = f"put the model right after serve, before {self.greedy[0]}"
        self.b.report(
            "MG016", Severity.ERROR,
            f"no model given: vLLM serves its default model {self._default_model()}{extra}",
            self.launch.program.span, hint=hint,
        )

    def _default_model(self) -> str:
        spec = self.catalog.by_key.get("model")
        return str(spec.default) if spec is not None and spec.default else "its default"

    def _word_model(self, word: Word, origin: str) -> ModelRef:
        refs = word.unresolved
        if refs:
            spec = self.catalog.by_key.get("model")
            if spec is not None:
                self.b.report_unresolved(spec, refs)
            return ModelRef(value=None, span=word.span, origin=origin, known=False)
        return ModelRef(value=word.text, span=word.span, origin=origin)

    # ---------------------------------------------------------------- --config FILE.yaml
    def _read_configs(self) -> None:
        for extra, _ in self.configs[1:]:
            self.b.report("MG006", Severity.ERROR,
                          "only one --config file is allowed: vLLM fails on the second",
                          extra.span)
        word, flag_span = self.configs[0]
        name = word.text
        if word.unresolved:
            return
        if not name.endswith((".yaml", ".yml")):
            self.b.report("MG006", Severity.ERROR,
                          f"--config {name}: vLLM reads only .yaml/.yml config files",
                          word.span)
            return
        data = self._load_yaml(word)
        if data is None:
            return
        self.config_data = data
        self._apply_config(data, word, flag_span)

    def _load_yaml(self, word: Word) -> dict[str, Any] | None:
        # Files named inside a manifest are read only relative to it (DECISIONS.md "The file set")
        src = self.launch.source.path
        if src.startswith("<") or src == "-" or Path(word.text).is_absolute():
            return None
        path = Path(src).parent / word.text
        if not path.exists():
            return None
        from .. import safeio

        try:  # regular files only, size limit, nesting guard and alias budget (linter/safeio.py)
            text = safeio.read_text(str(path), CONFIG_MAX_BYTES)
            data = safeio.loads_yaml(text)
        except safeio.SideFileError as exc:
            self.b.report("MG006", Severity.ERROR,
                          f"--config {word.text} is not read: {exc.message}", word.span)
            return None
        why = safeio.unencodable(data)
        if why is not None:
            self.b.report("MG006", Severity.ERROR,
                          f"--config {word.text} holds {why}, not an option value vLLM's "
                          "command line can take; the file is not checked", word.span)
            return None
        if not isinstance(data, dict):
            self.b.report("MG006", Severity.ERROR,
                          f"--config {word.text} must hold a mapping of option names to values",
                          word.span)
            return None
        return data

    def _apply_config(self, data: dict[str, Any], word: Word, flag_span: Span) -> None:
        """vLLM's ``_pull_args_from_config``: keys become flags, CLI values win."""
        span = word.span
        for key, value in data.items():
            spelling = "--" + str(key).replace("_", "-")
            written = f"{key}: {_yaml_text(value)}"
            match = self.catalog.lookup(spelling)
            if match is None or match.option.type == "help":
                suggestion = self.catalog.suggest(spelling)
                self.b.report(
                    "MG004", Severity.ERROR,
                    f"`{key}` in {word.text} is not a vLLM option (it becomes {spelling})"
                    + (f"; did you mean `{suggestion[2:]}`?" if suggestion else ""),
                    span,
                )
                continue
            spec = match.option
            if spec.is_bool:
                if value is True:
                    occ = OptionValue(key=spec.key, spelling=written, origin="config",
                                      flag_span=span, value_span=span, value=True)
                elif value is False and self.api_server and spec.neg:
                    occ = OptionValue(key=spec.key, spelling=written, origin="config",
                                      flag_span=span, value_span=span, value=False,
                                      negative=True)
                elif value is False:
                    self.b.report(
                        "MG006", Severity.WARNING,
                        f"`{key}: false` in {word.text} is silently dropped by vllm serve "
                        f"(it only adds {spec.neg[0] if spec.neg else spelling} when the "
                        "top-level parser knows it); the setting keeps its default",
                        span, hint=f"write {spec.neg[0]} on the command line"
                        if spec.neg else f"remove `{key}` from the file",
                    )
                    continue
                else:
                    self.b.report("MG006", Severity.ERROR,
                                  f"`{key}` in {word.text} is a boolean: write true or false",
                                  span)
                    continue
                self.b.add(occ, before=True)
                continue
            raws = ([_yaml_text(v) for v in value] if isinstance(value, list)
                    else [_yaml_text(value)])
            if not isinstance(value, list) or spec.nargs == "+":
                values: list[Any] = []
                error: str | None = None
                for raw in raws:
                    item, error = convert(spec, raw)
                    if error is None and spec.choices is not None and \
                            spec.key not in CHECKED_BY_RULE:
                        error = _check_choice(spec, item)
                    if error is not None:
                        break
                    values.append(item)
                if error is None:
                    typed: Any = values if spec.nargs == "+" else values[0]
                    if spec.repeat == "append":
                        typed = values
                    self.b.add(OptionValue(key=spec.key, spelling=written, origin="config",
                                           flag_span=span, value_span=span,
                                           raw=" ".join(raws), value=typed), before=True)
                    continue
            else:
                error = f"{spelling} takes one value, the file gives a list"
            self.b.report("MG006", Severity.ERROR,
                          f"invalid value for `{key}` in {word.text}: {error}", span)
            self.b.add(OptionValue(key=spec.key, spelling=written, origin="config",
                                   flag_span=span, value_span=span, known=False), before=True)


def _looks_like_option(text: str) -> bool:
    """argparse's 'O' class: starts with '-', is not a negative number and has no blank."""
    if not text.startswith("-") or text == "-":
        return False
    return classify(text) != NEGATIVE_NUMBER and not any(c.isspace() for c in text)


def _yaml_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _choices(spec: OptionSpec) -> str:
    return ", ".join(str(c) for c in spec.choices or ())


def _check_choice(spec: OptionSpec, value: Any) -> str | None:
    choices = spec.choices or ()
    if value is None and spec.nullable:
        return None
    if value in choices:
        return None
    names = [str(c) for c in choices]
    same_case = [c for c in names if c.lower() == str(value).lower()]
    close = same_case or difflib.get_close_matches(str(value), names, n=1, cutoff=0.6)
    return (f"invalid choice: '{value}' (choose from {_choices(spec)})"
            + (f"; did you mean '{close[0]}'?" if close else ""))


# ------------------------------------------------------------------------------ value types
_HR = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_JSON_SUFFIX = re.compile(r"(?<![\w.\"])(\d+(?:\.\d+)?)([kKmMgGtT])(?![\w\"])")
_UUID = re.compile(r"^(GPU|MIG)-[0-9a-fA-F-]+$|^[0-9a-fA-F]{8}-[0-9a-fA-F-]{27}$")


def human_readable_int(raw: str) -> int:
    """vLLM's ``human_readable_int`` (vllm/utils/argparse_utils.py, 0.30.0): 1k = 1000,
    1K = 1024, 25.6k = 25600; decimals with binary suffixes are rejected."""
    value = raw.strip()
    match = _HR.fullmatch(value)
    if match:
        number, suffix = match.groups()
        if suffix in _DECIMAL:
            return int(float(number) * _DECIMAL[suffix])
        if "." in number:
            raise ValueError(
                f"Decimals are not allowed with binary suffixes like {suffix}. Did you mean to "
                f"use {number}{suffix.lower()} instead?")
        return int(number) * _BINARY[suffix]
    return int(value)


def parse_json(raw: str) -> Any:
    """json.loads, after vLLM's expansion of bare numbers with k/m/g/t suffixes.  Nesting past
    safeio.MAX_JSON_DEPTH is a ValueError (json.loads would recurse into a RecursionError)."""
    try:
        return _json_loads(raw)
    except ValueError:
        expanded = _JSON_SUFFIX.sub(lambda m: str(human_readable_int(m.group(0))), raw)
        return _json_loads(expanded)


def _json_loads(raw: str) -> Any:
    """json.loads with a nesting limit (linter/safeio.py): deeper is a ValueError, not the
    RecursionError json.loads would raise."""
    from ..safeio import MAX_JSON_DEPTH, json_depth_exceeds

    if json_depth_exceeds(raw) is not None:
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
    return json.loads(raw)


def _dotted_scalar(raw: str) -> Any:
    """Value of a dotted key: JSON, else a human-readable int, else the string."""
    try:
        return _json_loads(raw)
    except ValueError:
        pass
    try:
        return human_readable_int(raw)
    except ValueError:
        return raw


# Sizes that drive per-GPU, per-rank or per-node work in the rules: beyond linter/bounds.py's
# plausibility the value is an MG006 finding and the rules that need it stay silent.
_GPU_BOUNDED = frozenset({
    "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
    "data_parallel_size_local", "data_parallel_rank", "prefill_context_parallel_size",
    "decode_context_parallel_size", "nnodes", "node_rank"})
_TOKEN_BOUNDED = frozenset({"max_model_len", "max_num_seqs", "max_num_batched_tokens"})


def convert(spec: OptionSpec, raw: str) -> tuple[Any, str | None]:
    """The typed value of one vLLM argument word, or an error message as argparse prints it
    (or, for a size no deployment has, one saying so: see linter/bounds.py)."""
    value, error = _convert(spec, raw)
    if error is None and isinstance(value, int) and not isinstance(value, bool):
        from .. import bounds

        upper = (bounds.MAX_GPUS if spec.key in _GPU_BOUNDED
                 else bounds.MAX_TOKENS if spec.key in _TOKEN_BOUNDED else None)
        if upper is not None and value > upper:
            return None, (f"{value} is beyond any deployment (at most {upper:,} is checked); "
                          "the rules that use it are skipped")
    return value, error


def _convert(spec: OptionSpec, raw: str) -> tuple[Any, str | None]:
    if spec.nullable and raw in ("", "None"):
        return None, None
    kind = spec.type
    if kind == "bool":
        # vllm/utils.py StoreBoolean (0.7.3): only true/false, any case
        if raw.lower() in ("true", "false"):
            return raw.lower() == "true", None
        return None, f"Invalid boolean value: {raw}. Expected 'true' or 'false'."
    try:
        if kind == "int":
            return int(raw), None
        if kind == "float":
            return float(raw), None
        if kind == "hrint":
            return human_readable_int(raw), None
        if kind == "hrint_auto":
            return (-1, None) if raw in ("auto", "-1") else (human_readable_int(raw), None)
        if kind == "json":
            return parse_json(raw), _json_fields(spec, raw)
        if kind == "json_or_str":
            return (parse_json(raw), None) if raw.strip().startswith("{") else (raw, None)
        if kind == "lora_modules":
            return _lora_module(raw)
        if kind == "id_list":
            return _device_ids(raw)
    except ValueError as exc:
        if kind in ("json", "json_or_str"):
            return None, f"'{raw}' is not valid JSON ({exc})"
        if kind in ("hrint", "hrint_auto") and "Decimals" in str(exc):
            return None, str(exc)
        expected = {"hrint": "int (k/K suffixes allowed)", "hrint_auto": "int, -1 or auto"}
        return None, f"invalid {expected.get(kind, kind)} value: '{raw}'"
    return raw, None


def _json_fields(spec: OptionSpec, raw: str) -> str | None:
    if not spec.fields:
        return None
    value = parse_json(raw)
    if not isinstance(value, dict):
        return f"expected a JSON object, got '{raw}'"
    for key in value:
        if key not in spec.fields:
            close = difflib.get_close_matches(str(key), spec.fields, n=1)
            return (f"{spec.display} has no field `{key}`" +
                    (f"; did you mean `{close[0]}`?" if close else ""))
    return None


def _lora_module(raw: str) -> tuple[Any, str | None]:
    # vllm/entrypoints/openai/cli_args.py LoRAParserAction (0.30.0): name=path, else JSON
    if "=" in raw and "," not in raw:
        parts = raw.split("=")
        if len(parts) != 2:
            return None, f"'{raw}' is not name=path"
        return {"name": parts[0], "path": parts[1]}, None
    try:
        value = _json_loads(raw)
    except ValueError:
        return None, f"Invalid JSON format for --lora-modules: {raw}"
    if not isinstance(value, dict) or "name" not in value or "path" not in value:
        return None, f"Invalid fields for --lora-modules: {raw} (needs name and path)"
    return value, None


def _device_ids(raw: str) -> tuple[Any, str | None]:
    # vllm/engine/arg_utils.py (0.30.0) L1976-2001: ints or UUIDs, no duplicates, no mixing
    items = [x.strip() for x in raw.split(",")]
    ints = [x for x in items if x.isdigit()]
    uuids = [x for x in items if not x.isdigit()]
    if any(not _UUID.match(x) for x in uuids):
        bad = next(x for x in uuids if not _UUID.match(x))
        return None, f"'{bad}' is neither a device index nor a GPU UUID"
    if ints and uuids:
        return None, "--device-ids must not mix integer IDs and UUIDs"
    if len(set(items)) != len(items):
        return None, "--device-ids must not contain duplicates"
    return [int(x) for x in ints] if ints else items, None
