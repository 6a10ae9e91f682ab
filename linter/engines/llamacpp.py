"""`llama-server` argument walker (llama.cpp common/arg.cpp, master 3f545bec, 2026-08-22).

Exact lookup after ``_`` → ``-`` in words starting with ``--``; no ``--flag=value`` form; a value
is always the next word, whatever it looks like (``-fa -ngl 99`` gives ``-ngl`` to ``-fa``); no
positional arguments.  ``LLAMA_ARG_*`` environment variables are applied first, then argv; the
22 accumulating options add env and argv values up.  Facts: reference/engines/llama-notes.md §3.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import bounds, images
from ..findings import Finding, Related, Severity
from ..fixes import join_words, replace_word
from ..launch import LLAMA_SERVER, Launch
from ..script_env import env_items
from ..source import Span, Word
from .adapter import HTTP_API, LLAMA_ARGS, Bind, Engine
from .catalog import FlagCatalog, OptionSpec, llama_catalog
from .invocation import NEGATIVE_NUMBER, Builder, Invocation, ModelRef, OptionValue, classify

if TYPE_CHECKING:
    from ..deployment import Deployment

# Options that name the model (llama-server runs as a router when none is given).
MODEL_KEYS = ("model", "hf_repo", "model_url", "docker_repo")

TRUTHY = frozenset({"on", "enabled", "true", "1"})
FALSEY = frozenset({"off", "disabled", "false", "0"})
MAX_TENSOR_SPLIT = 15  # llama_max_devices() = 16; ">= 16 entries" is an error
INT32 = 2**31 - 1
_STOI = re.compile(r"\s*([+-]?\d+)")
_STOF = re.compile(
    r"\s*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))", re.IGNORECASE)
_SPLIT_ANY = re.compile(r"[,/]+")
# Deprecated flags whose replacement sets the same value (common/arg.cpp, master 3f545bec: each
# handler sets params.load_mode to the mode `--load-mode` names): the safe fix's new spelling.
RENAMED: dict[str, list[str]] = {
    "--mlock": ["--load-mode", "mlock"],        # LLAMA_LOAD_MODE_MLOCK
    "--mmap": ["--load-mode", "mmap"],          # LLAMA_LOAD_MODE_MMAP
    "--no-mmap": ["--load-mode", "none"],       # LLAMA_LOAD_MODE_NONE
    "-dio": ["--load-mode", "dio"],             # LLAMA_LOAD_MODE_DIRECT_IO
    "--direct-io": ["--load-mode", "dio"],
    "-ndio": ["--load-mode", "none"],           # LLAMA_LOAD_MODE_NONE
    "--no-direct-io": ["--load-mode", "none"],
}
# Spellings llama.cpp renamed without keeping the old one (llama-server rejects them): the new
# name of the same setting, an unsafe fix (llama.cpp b8852, #21741 renamed --clear-idle to
# --cache-idle-slots, params.clear_idle to cache_idle_slots, nothing else; b9581, #24190, then
# changed what the setting does without a unified KV cache, so the old spelling's meaning is
# not kept exactly).  Every other deprecated spelling llama-server still accepts at master
# 3f545bec (common/arg.cpp, "DEPRECATED" handlers) is in RENAMED above or is a no-op (-dt); the
# old names kept as plain aliases (-td for --spec-draft-threads, #22397) are not deprecated.
RENAMED_AWAY: dict[str, str] = {
    "--clear-idle": "--cache-idle-slots",
    "--no-clear-idle": "--no-cache-idle-slots",
}


def parse_llama(launch: Launch, version: str | None = None,
                needed: Mapping[str, tuple[str, ...]] | None = None
                ) -> tuple[Invocation, list[Finding]]:
    catalog = llama_catalog()
    b = Builder(launch, catalog, catalog.version, needed or {})
    _apply_env(b, launch)
    _walk(b, launch, catalog)
    _env_overridden(b)
    b.duplicates(b.argv, describe=_describe)
    return b.build(LLAMA_SERVER, launch.entry, _model(b)), b.findings


def _describe(occ: OptionValue) -> str:
    return occ.spelling if occ.raw is None else f"{occ.spelling} {occ.raw}"


def _apply_env(b: Builder, launch: Launch) -> None:
    for name, var in env_items(launch.env, b.catalog.by_env):
        match = b.catalog.by_env[name]
        spec = match.option
        span = var.span or launch.program.span
        common = {"key": spec.key, "spelling": name, "origin": "env", "flag_span": span,
                  "value_span": var.span, "raw": var.value, "negative": match.negative}
        if var.value is None:
            rules = b.needed.get(spec.key)
            if rules:
                b.report("MG009", Severity.INFO,
                         f"{name} comes from outside the file (a secret, a configMap or the "
                         f"host): {', '.join(rules)} skipped for this launch", span)
            b.add(OptionValue(**common, known=False), before=True)
            continue
        if spec.is_bool:
            value = _env_bool(var.value, match.negative)
            if value is None:
                b.report("MG006", Severity.ERROR,
                         f"invalid boolean value for {name}: '{var.value}' (llama.cpp accepts "
                         "on/off, enabled/disabled, true/false, 1/0)", span)
                b.add(OptionValue(**common, known=False), before=True)
            elif value or spec.neg or match.negative:
                # a void flag's variable fires only on a truthy value
                b.add(OptionValue(**common, value=[value] if spec.accumulates else value),
                      before=True)
            continue
        value, error = convert(spec, var.value)
        if error is not None:
            b.report("MG006", Severity.ERROR, f"invalid value for {name}: {error}", span)
            b.add(OptionValue(**common, known=False), before=True)
            continue
        b.add(OptionValue(**common, value=value), before=True)


def _env_bool(value: str, negative: bool) -> bool | None:
    if negative:
        return False  # LLAMA_ARG_NO_X: any value means false
    if value in TRUTHY:
        return True
    if value in FALSEY:
        return False
    return None


def _lookup_spelling(text: str) -> str:
    return text.replace("_", "-") if text.startswith("--") else text


def _walk(b: Builder, launch: Launch, catalog: FlagCatalog) -> None:
    # an unquoted expansion to nothing is no argument at all (the shell drops it)
    words = tuple(w for w in launch.args if w.text or w.quoted or launch.list_form)
    seen_spellings: dict[str, OptionValue] = {}
    swallowed = False  # the previous flag's value was a flag: its own value follows
    i = 0
    while i < len(words):
        word = words[i]
        text = word.text
        match = catalog.lookup(_lookup_spelling(text))
        if match is None:
            if swallowed and not text.startswith("-"):
                swallowed = False
                i += 1
                continue
            i = _not_an_option(b, catalog, words, i)
            continue
        swallowed = False
        spec = match.option
        flag_span = word.span
        if spec.removed:
            b.report("MG004", Severity.ERROR,
                     f"{text} {spec.removed}; llama-server stops at start-up", flag_span)
            _add_unknown(b, spec, text, flag_span)
            i += 1 + (spec.nargs if isinstance(spec.nargs, int) else 0)
            continue
        if spec.deprecated:
            new = RENAMED.get(text)
            b.report("MG008", Severity.WARNING, f"{text} is deprecated: {spec.deprecated}",
                     flag_span, fix=replace_word(b.source, word, new, b.launch.list_form,
                                                 f"Write {' '.join(new)}", safe=True)
                     if new else None)
        previous = seen_spellings.get(text)
        if not spec.takes_value:
            value: Any = not match.negative
            occ = OptionValue(key=spec.key, spelling=text, flag_span=flag_span,
                              value=[value] if spec.accumulates else value,
                              negative=match.negative)
            b.add(occ)
            _repeat_warning(b, spec, previous, occ)
            seen_spellings[text] = occ
            i += 1
            continue
        nargs = spec.nargs if isinstance(spec.nargs, int) else 1
        values = words[i + 1:i + 1 + nargs]
        if len(values) < nargs:
            b.report("MG005", Severity.ERROR,
                     f"{text} needs a value: llama.cpp fails with \"expected value for "
                     f"argument\"", flag_span, hint=_value_hint(spec, text))
            _add_unknown(b, spec, text, flag_span)
            i += 1 + len(values)
            continue
        swallowed_flag = next((w for w in values if catalog.lookup(_lookup_spelling(w.text))
                               and classify(w.text) != NEGATIVE_NUMBER), None)
        if swallowed_flag is not None:
            b.report(
                "MG005", Severity.ERROR,
                f"{text} needs a value: llama.cpp takes the next word, {swallowed_flag.text}, "
                f"as its value" + (f" and fails (unknown value for {spec.display}: "
                                   f"'{swallowed_flag.text}')" if spec.choices else ""),
                flag_span, hint=_value_hint(spec, text),
                related=(Related(b.source, swallowed_flag.span, "taken as the value"),),
            )
            _add_unknown(b, spec, text, flag_span)
            swallowed = True
            i += 1 + nargs
            continue
        if spec.key in SCALED and _scaled_pairs(b, spec, text, flag_span, words, i):
            i += 1 + nargs + (1 if _two_value_form(words, i) else 0)
            continue
        occ = _valued(b, spec, text, flag_span, values)
        _repeat_warning(b, spec, previous, occ)
        seen_spellings[text] = occ
        i += 1 + nargs


# `--lora-scaled` and `--control-vector-scaled` take FNAME:SCALE[,...]: each comma item is split
# on ':' and must give exactly two parts, the second read by std::stof, else llama.cpp throws
# "lora-scaled format: FNAME:SCALE" (common/arg.cpp, the options' handlers; llama.cpp master).
# Until commit 487674fbb (#18056, December 2025) both took two words, FNAME SCALE.
SCALED = {"lora_scaled": "lora-scaled", "control_vector_scaled": "control-vector-scaled"}


def _two_value_form(words: tuple[Word, ...], i: int) -> bool:
    """`--lora-scaled FNAME SCALE`: a value without ':' followed by a number."""
    if i + 2 >= len(words) or ":" in words[i + 1].text:
        return False
    scale = words[i + 2].text
    return bool(scale) and stof(scale) is not None and _STOF.fullmatch(scale) is not None


def _scaled_pairs(b: Builder, spec: OptionSpec, text: str, flag_span: Span,
                  words: tuple[Word, ...], i: int) -> bool:
    """MG006 for a value that is not FNAME:SCALE[,...] (True when reported)."""
    value = words[i + 1]
    if value.unresolved:
        return False
    name = SCALED[spec.key]
    if _two_value_form(words, i):
        scale = words[i + 2]
        b.report(
            "MG006", Severity.ERROR,
            f"{text} {value.text} {scale.text}: llama.cpp no longer takes the file and the "
            f"scale as two words; it reads `{value.text}` as FNAME:SCALE and stops "
            f"(\"{name} format: FNAME:SCALE\", common/arg.cpp)",
            Span(value.span.start, scale.span.end),
            hint=f"write {text} {value.text}:{scale.text}",
            fix=join_words(b.source, value, scale, ":", f"Write {value.text}:{scale.text}"),
        )
        b.add(OptionValue(key=spec.key, spelling=text, flag_span=flag_span,
                          value_span=Span(value.span.start, scale.span.end),
                          raw=f"{value.text} {scale.text}", known=False))
        return True
    for item in value.text.split(","):
        parts = item.split(":")
        if len(parts) != 2 or stof(parts[1]) is None:
            b.report(
                "MG006", Severity.ERROR,
                f"invalid value for {text}: `{item}` is not FNAME:SCALE; llama.cpp stops "
                f"(\"{name} format: FNAME:SCALE\", common/arg.cpp)",
                value.span, hint=f"write {text} FILE.gguf:0.5 (comma-separated for several)",
            )
            b.add(OptionValue(key=spec.key, spelling=text, flag_span=flag_span,
                              value_span=value.span, raw=value.text, known=False))
            return True
    return False


def _value_hint(spec: OptionSpec, text: str) -> str:
    if spec.choices:
        return f"write {text} VALUE, one of {', '.join(map(str, spec.choices))}"
    return f"write {text} VALUE"


def _valued(b: Builder, spec: OptionSpec, text: str, flag_span: Span,
            values: list[Word] | tuple[Word, ...]) -> OptionValue:
    first, last = values[0], values[-1]
    value_span = Span(first.span.start, last.span.end)
    raw = " ".join(w.text for w in values)
    refs = tuple(r for w in values for r in w.unresolved)
    if refs:
        b.report_unresolved(spec, refs)
        occ = OptionValue(key=spec.key, spelling=text, flag_span=flag_span,
                          value_span=value_span, raw=raw, known=False)
        b.add(occ)
        return occ
    typed: list[Any] = []
    for w in values:
        value, error = convert(spec, w.text)
        if error is not None:
            b.report("MG006", Severity.ERROR, f"invalid value for {text}: {error}", w.span)
            occ = OptionValue(key=spec.key, spelling=text, flag_span=flag_span,
                              value_span=value_span, raw=raw, known=False)
            b.add(occ)
            return occ
        typed.append(value)
    value = typed[0] if len(typed) == 1 else typed
    occ = OptionValue(key=spec.key, spelling=text, flag_span=flag_span, value_span=value_span,
                      raw=raw, value=value,
                      items=list_items(spec, first) if spec.sep and len(values) == 1 else ())
    b.add(occ)
    return occ


def _repeat_warning(b: Builder, spec: OptionSpec, previous: OptionValue | None,
                    occ: OptionValue) -> None:
    """llama.cpp warns when one spelling of an accumulating option is repeated."""
    if previous is None or not spec.accumulates or spec.key == "spec_type":
        return
    b.report(
        "MG008", Severity.WARNING,
        f"{occ.spelling} given more than once: llama.cpp deprecates repeating it (every value "
        "is still used)",
        occ.flag_span,
        hint=f"give one {occ.spelling} with comma-separated values" if spec.sep else None,
        related=(Related(b.source, previous.flag_span, "first occurrence"),),
    )


def _add_unknown(b: Builder, spec: OptionSpec, text: str, flag_span: Span) -> None:
    b.add(OptionValue(key=spec.key, spelling=text, flag_span=flag_span, known=False))


def _not_an_option(b: Builder, catalog: FlagCatalog, words: tuple[Word, ...], i: int) -> int:
    """An unknown flag, a glued flag and value, or a stray positional word."""
    word = words[i]
    text = word.text
    if word.unresolved and text.startswith("$"):
        if word.may_set_anything:
            b.open_span = b.open_span or word.span
        return i + 1  # an unexpanded $ARGS: what it holds is not known
    head, sep, rest = text.partition(" ") if " " in text else text.partition("=")
    head_match = catalog.lookup(_lookup_spelling(head)) if sep else None
    if head_match is not None and sep == " ":
        b.glued(word, head, rest, "llama-server", "rejects it (invalid argument)")
        _add_unknown(b, head_match.option, head, word.span)
        return i + 1
    if head_match is not None:
        b.report(
            "MG004", Severity.ERROR,
            f"invalid argument {text}: llama.cpp has no --flag=value form",
            word.span, hint=f"write {head} {rest}",
        )
        _add_unknown(b, head_match.option, head, word.span)
        return i + 1
    if text.startswith("-") and classify(text) != NEGATIVE_NUMBER:
        retired = catalog.retired_by_spelling.get(text)
        suggestion = catalog.suggest(_lookup_spelling(text))
        message = f"invalid argument {text}: llama-server does not accept it"
        hint = retired.hint if retired else None
        if retired is None and suggestion:
            message += f"; did you mean {suggestion}?"
        # did-you-mean is a guess at what was meant: an unsafe fix; so is a renamed flag's new
        # name (RENAMED_AWAY)
        new = RENAMED_AWAY.get(text) or (suggestion if retired is None else None)
        fix = replace_word(b.source, word, [new], b.launch.list_form, f"Replace with {new}",
                           safe=False) if new else None
        b.report("MG004", Severity.ERROR, message, word.span, hint=hint, fix=fix)
        renamed = catalog.lookup(RENAMED_AWAY[text]) if text in RENAMED_AWAY else None
        if renamed is not None and not renamed.option.takes_value:
            return i + 1  # a switch: the next word is not its value
        nxt = words[i + 1] if i + 1 < len(words) else None
        # its value (if it had one) is not a second problem
        return i + 2 if nxt is not None and not nxt.text.startswith("-") else i + 1
    previous = words[i - 1] if i > 0 else None
    prev_match = catalog.lookup(_lookup_spelling(previous.text)) if previous else None
    if previous is not None and prev_match is not None and prev_match.option.is_bool:
        neg = prev_match.option.neg
        b.report(
            "MG006", Severity.ERROR,
            f"{previous.text} takes no value: `{text}` reaches llama-server as a separate "
            "argument (invalid argument)",
            word.span,
            hint=f"write {previous.text} alone" + (f" (or {neg[0]} to turn it off)" if neg
                                                   else ""),
        )
        return i + 1
    hint = "give the model with -m FILE" if text.endswith(".gguf") else None
    b.report("MG004", Severity.ERROR,
             f"invalid argument `{text}`: llama-server takes no positional arguments",
             word.span, hint=hint)
    return i + 1


def _env_overridden(b: Builder) -> None:
    """llama.cpp applies env first and warns when argv overrides a variable."""
    for env_occ in b.before:
        spec = b.catalog.by_key[env_occ.key]
        if spec.accumulates:
            continue
        winner = next((o for o in reversed(b.argv) if o.key == env_occ.key), None)
        if winner is None:
            continue
        b.report(
            "MG007", Severity.WARNING,
            f"{env_occ.spelling}={env_occ.raw if env_occ.raw is not None else '…'} (line "
            f"{b.line(env_occ.span)}) is overridden by {_describe(winner)} (line "
            f"{b.line(winner.span)})",
            env_occ.span,
            hint="set the value in one place",
            related=(Related(b.source, winner.span, "this value wins"),),
        )


def _model(b: Builder) -> ModelRef | None:
    occs = [o for o in b.before + b.argv if o.key in MODEL_KEYS]
    if not occs:
        return None  # router mode: models are loaded on request
    argv = [o for o in occs if o.origin == "argv"]
    occ = (argv or occs)[-1]
    return ModelRef(value=occ.value if occ.known else None, span=occ.value_span,
                    origin=occ.spelling, known=occ.known)


# ------------------------------------------------------------------------------ value types
def stoi(raw: str) -> int | None:
    """``std::stoi``: leading blanks, a sign and digits; trailing garbage is ignored."""
    match = _STOI.match(raw)
    if match is None:
        return None
    value = int(match.group(1))
    return value if -INT32 - 1 <= value <= INT32 else None


def stof(raw: str) -> float | None:
    """``std::stof``: the longest leading float; trailing garbage is ignored."""
    match = _STOF.match(raw)
    return float(match.group(1)) if match else None


def convert(spec: OptionSpec, raw: str) -> tuple[Any, str | None]:
    """The typed value of one llama.cpp argument, or the reason the engine rejects it."""
    kind = spec.type
    if kind == "int":
        value = stoi(raw)
        if value is None:
            return None, f"'{raw}' is not an integer"
        if spec.choices and str(value) not in spec.choices:
            return None, f"'{raw}' is not one of {', '.join(map(str, spec.choices))}"
        return ([value] if spec.accumulates else value), None
    if kind == "float":
        fvalue = stof(raw)
        return (fvalue, None) if fvalue is not None else (None, f"'{raw}' is not a number")
    if kind == "ngl":
        if raw == "auto":
            return -1, None
        if raw == "all":
            return -2, None
        value = stoi(raw)
        return (value, None) if value is not None else (
            None, f"'{raw}' is not an integer, auto or all")
    if kind in ("float_list", "uint_list"):
        return _number_list(spec, raw)
    if kind == "hostport_list":
        return _endpoints(raw)
    items = _split(spec, raw)
    if spec.choices:
        for item in items:
            if item not in spec.choices:
                from difflib import get_close_matches  # only for a bad choice

                close = get_close_matches(item, [str(c) for c in spec.choices], n=1,
                                          cutoff=0.6)
                return None, (
                    f"'{item}' is not one of {', '.join(map(str, spec.choices))}"
                    + (f"; did you mean '{close[0]}'? (values are case-sensitive)"
                       if close else ""))
    if spec.accumulates:
        return items, None
    return (items if spec.sep else raw), None


def list_items(spec: OptionSpec, word: Word) -> tuple[tuple[str, Span], ...]:
    """The non-empty items of a list value word and their spans, split on the option's
    separator as llama.cpp splits it (the catalog's ``sep``: ',' or ',' and '/')."""
    sep = _SPLIT_ANY if spec.sep == "[,/]" else re.compile(re.escape(spec.sep or ","))
    out, start = [], 0
    for m in [*sep.finditer(word.text), None]:
        end = m.start() if m is not None else len(word.text)
        if end > start:
            out.append((word.text[start:end], word.sub(start, end)))
        if m is not None:
            start = m.end()
    return tuple(out)


def _split(spec: OptionSpec, raw: str) -> list[str]:
    if not spec.sep:
        return [raw]
    if spec.sep == "[,/]":
        return [x for x in _SPLIT_ANY.split(raw) if x]
    return [x for x in raw.split(spec.sep) if x]


def _number_list(spec: OptionSpec, raw: str) -> tuple[Any, str | None]:
    parts = _SPLIT_ANY.split(raw)
    if parts and parts[-1] == "":
        parts.pop()
    if not parts or parts[0] == "":
        return None, f"'{raw}' starts with a separator (llama.cpp: std::stof fails)"
    if len(parts) > MAX_TENSOR_SPLIT:
        return None, (f"{len(parts)} entries: llama.cpp accepts at most {MAX_TENSOR_SPLIT} "
                      "(one per device)")
    values: list[float | int] = []
    for part in parts:
        number = stof(part) if spec.type == "float_list" else stoi(part)
        if number is None:
            return None, f"'{part}' is not a number"
        if spec.type == "float_list" and not bounds.plausible_float(number, bounds.MAX_SPLIT):
            # llama.cpp takes it (std::stof) but its running sums of the shares are then
            # negative, NaN or infinite (src/llama-model.cpp load_tensors): no split to check
            return None, (f"'{part}' is not a share from 0 to {bounds.MAX_SPLIT:g}; the layer "
                          "split it gives is meaningless and is not checked")
        values.append(number)
    return values, None


def _endpoints(raw: str) -> tuple[Any, str | None]:
    out: list[tuple[str, int]] = []
    for item in raw.split(","):
        host, sep, port = item.partition(":")
        number = stoi(port) if sep else None
        if not host or number is None:
            return None, f"'{item}' is not host:port"
        out.append((host, number))
    return out, None


# llama.cpp's own images set ENV LLAMA_ARG_HOST=0.0.0.0 (.devops/{cpu,cuda,rocm,vulkan,intel,
# musa}.Dockerfile, llama.cpp master 2026-08-22); without it llama-server binds 127.0.0.1
# (common/common.h common_params::hostname).
LLAMA_IMAGES = ("ghcr.io/ggml-org/llama.cpp", "ghcr.io/ggerganov/llama.cpp", "local/llama.cpp")


def _default_bind(d: Deployment) -> Bind | None:
    """Without --host or LLAMA_ARG_HOST: the image's ENV, else 127.0.0.1; None for a custom
    image, which may set LLAMA_ARG_HOST."""
    image = d.context.image
    if image is None:
        return Bind("127.0.0.1", "llama-server's default (common/common.h)") \
            if d.context.interactive else None
    ref = images.parse_image(image.value)
    if ref.repository in LLAMA_IMAGES:
        return Bind("0.0.0.0", f"LLAMA_ARG_HOST=0.0.0.0 in the {ref.repository} image")
    return None


ENGINE = Engine(
    name=LLAMA_SERVER, display="llama-server", label="llama-server",
    capabilities=frozenset({HTTP_API, LLAMA_ARGS}),
    parse=parse_llama, catalog=lambda version: llama_catalog(),
    default_port=8080,  # common/common.h common_params::port (llama.cpp master 2026-08-22)
    host_flag="--host", default_bind=_default_bind,
    api_key_env=("LLAMA_API_KEY",),  # common/arg.cpp --api-key env LLAMA_API_KEY
    api_key_settings=("api_key_file",),
    cache_env=(("LLAMA_CACHE", ""),),  # common/common.cpp fs_get_cache_directory
    # common/arg.cpp: -hf downloads from the Hugging Face Hub, -dr from Docker Hub, -mu a URL
    hub_settings=(("hf_repo", "the Hugging Face Hub"), ("docker_repo", "Docker Hub"),
                  ("model_url", "a URL")),
)
