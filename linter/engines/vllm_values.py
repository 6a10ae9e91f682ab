"""vLLM's argument value types: how `vllm serve` converts each option's words.

Mirrors vLLM's argparse types (vllm/utils/argparse_utils.py and vllm/engine/arg_utils.py,
0.30.0): human-readable integers, JSON values with size suffixes, dotted sub-keys, LoRA module
specs, device ids.  Used by the walker (vllm.py) and its --config reader (vllm_config.py).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .. import bounds
from .catalog import OptionSpec
from .invocation import NEGATIVE_NUMBER, classify

_BLANK = re.compile(r"\s")  # \s in a str pattern is exactly str.isspace (Py_UNICODE_ISSPACE)


def _looks_like_option(text: str) -> bool:
    """argparse's 'O' class: starts with '-', is not a negative number and has no blank."""
    if not text.startswith("-") or text == "-":
        return False
    # the blank test first: a word with a blank (a whole `sh -c` script) is not parsed at all
    return _BLANK.search(text) is None and classify(text) != NEGATIVE_NUMBER


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
    from difflib import get_close_matches  # only for a did-you-mean

    close = same_case or get_close_matches(str(value), names, n=1, cutoff=0.6)
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
    if not spec.fields and not spec.json_object:
        return None
    value = parse_json(raw)
    if not isinstance(value, dict):
        # a config class is read with TypeAdapter(<Class>).validate_json (vllm/engine/
        # arg_utils.py get_kwargs parse_dataclass, 0.9.2 and 0.33.0), which only an object passes
        return f"expected a JSON object, got '{raw}'"
    if not spec.fields:
        return None
    for key in value:
        if key not in spec.fields:
            from difflib import get_close_matches  # only for a did-you-mean

            close = get_close_matches(str(key), spec.fields, n=1)
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
