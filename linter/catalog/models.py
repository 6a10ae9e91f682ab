"""Model names → shapes: the built-in catalog (``models.json``) and configured models,
name normalisation, precision hints in names, LoRA modules, and a local ``config.json``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from .. import bounds
from .data import CatalogError, _catalog, _first_error, _frozen
from .precision import (
    Precision,
    dtype_bits,
    quantization_bits,
)
from .shapes import ModelMatch, ModelShape, _builtin_models, as_dict, validate_model

_GGUF_SHARD = re.compile(r"-\d{5}-of-\d{5}$", re.IGNORECASE)


_SEPARATORS = re.compile(r"[-_\s:]+")


# Name tokens that say nothing about the shape: variants, packaging, quantization.
_DROP = frozenset({
    "instruct", "chat", "it", "hf", "thinking", "gguf", "mlx", "fp8", "dynamic", "kv", "awq",
    "gptq",
    "int4", "int8", "bnb", "4bit", "8bit", "w4a16", "w8a8", "w8a16", "nvfp4", "fp4", "mxfp4",
    "bf16", "fp16", "f16",
    # unsloth's dynamic quantizations repeat their name: unsloth/Qwen3-14B-unsloth-bnb-4bit
    "unsloth",
})


# Extra spellings of built-in models (beyond the id's last component and the entries' aliases).
_ALIASES = {
    "mistralai/Mixtral-8x7B-Instruct-v0.1": ("Mixtral-8x7B",),
    "mistralai/Mixtral-8x22B-Instruct-v0.1": ("Mixtral-8x22B",),
}


# Names in which a dropped variant word marks another checkpoint, not a packaging of the same one:
# they stay unknown rather than take a neighbour's shape.  Kimi-K2-Thinking stores its routed
# experts in INT4 (compressed-tensors, its config.json's quantization_config), so it must not
# resolve to the FP8 Kimi-K2-Instruct.
_OTHER_CHECKPOINTS: tuple[tuple[str, ...], ...] = (("kimi", "k2", "thinking"),)


def _other_checkpoint(name: str) -> bool:
    tokens = _name_tokens(name)
    for words in _OTHER_CHECKPOINTS:
        n = len(words)
        if any(tuple(tokens[i:i + n]) == words for i in range(len(tokens) - n + 1)):
            return True
    return False


# The first row whose words the name holds wins.  AWQ comes before the bare bit widths so that
# hugging-quants' "-AWQ-INT4" names keep AWQ's zero points in the weight budget: vLLM 0.30.0
# allocates, beside the 16-bit scales, a 4-bit zero point per group of 128 for every output
# column (quantization/auto_awq.py AutoAWQMarlinLinearMethod.create_weights, "qzeros"), which
# sizing/vllm_budget.py linear_bits counts for the "awq" method only.  It stays after the 8-bit
# rows: AutoAWQ checkpoints are 4-bit, and a name saying 8 bits is taken at its word.
_NAME_HINTS: tuple[tuple[frozenset[str], float, str], ...] = (
    (frozenset({"mxfp4"}), 4.25, "MXFP4"),
    (frozenset({"nvfp4", "fp4"}), 4.5, "NVFP4"),
    (frozenset({"int8", "w8a8", "w8a16", "8bit"}), 8.0, "INT8"),
    (frozenset({"fp8"}), 8.0, "FP8"),
    (frozenset({"awq"}), 4.0, "AWQ 4-bit"),
    (frozenset({"int4", "w4a16", "4bit"}), 4.0, "INT4"),
    (frozenset({"gptq"}), 4.0, "GPTQ 4-bit"),
)


# RedHatAI's "-quantized.w8a8" / "-quantized.w4a16": a dot inside the name (Qwen2.5 keeps its own)
_QUANTIZED_SUFFIX = re.compile(r"[-_.]quantized[-_.]", re.IGNORECASE)


def _name_tokens(name: str) -> list[str]:
    return [t for t in _SEPARATORS.split(_QUANTIZED_SUFFIX.sub("-", name).lower()) if t]


def _model_key(name: str) -> str:
    tokens = _name_tokens(name)
    if tokens and tokens[0] == "meta" and len(tokens) > 1:
        tokens = tokens[1:]
    return "".join(t for t in tokens if t not in _DROP)


@cache
def _gguf_types_by_rank() -> tuple[tuple[str, ...], dict[str, int], re.Pattern[str]]:
    """The GGUF file types, longest first, and one pattern that finds each place one begins.

    The lookahead makes every start position a match (overlapping ones too), and at each position
    the alternation takes the first type in rank order that fits there.
    """
    ranked = tuple(sorted(_catalog().file_types, key=len, reverse=True))
    alternatives = "|".join(re.escape(t) for t in ranked)
    return (ranked, {t: i for i, t in enumerate(ranked)},
            re.compile(rf"(?<![A-Z0-9])(?=({alternatives})(?![A-Z0-9]))"))


def _gguf_type_in(name: str) -> str | None:
    """The longest GGUF file type written in ``name`` as a whole word (case-insensitive)."""
    ranked, rank, pattern = _gguf_types_by_rank()
    found = [rank[m.group(1)] for m in pattern.finditer(name.upper())]
    return ranked[min(found)] if found else None


def _name_hint(name: str) -> Precision | None:
    tokens = set(_name_tokens(name))
    for words, bits, label in _NAME_HINTS:
        if tokens & words:
            return Precision(bits, label, "model name")
    return None


def _candidate_names(ref: str) -> list[str]:
    """The path components of ``ref`` that may name the model, most specific first."""
    parts = [p for p in ref.replace("\\", "/").split("/") if p]
    if not parts:
        return []
    out = []
    if len(parts) >= 3 and parts[-2] == "snapshots":
        cached = parts[-3]
        if cached.startswith("models--"):
            out.append(cached.split("--")[-1])
    out.append(parts[-1])
    org, sep, rest = parts[-1].partition("_")
    if sep and org and rest:
        # bartowski's GGUF repositories prefix the organisation: Qwen_Qwen3-4B-GGUF
        out.append(rest)
    return out


def _strip_file(name: str, gguf_type: str | None) -> str:
    stem = re.sub(r"\.gguf$", "", name, flags=re.IGNORECASE)
    stem = _GGUF_SHARD.sub("", stem)
    if gguf_type:
        stem = re.sub(rf"[-_.:]?{re.escape(gguf_type)}(?![A-Za-z0-9])", "", stem,
                      flags=re.IGNORECASE)
    return stem


@cache
def _model_index(extra_json: str) -> dict[str, ModelShape]:
    index: dict[str, ModelShape] = {}
    for shape in _builtin_models():
        for n in (shape.id, *shape.aliases, *_ALIASES.get(shape.id, ())):
            index.setdefault(_model_key(n.rsplit("/", 1)[-1]), shape)
    for name, fields in json.loads(extra_json).items():
        key = _model_key(name.rsplit("/", 1)[-1])
        base = index.get(key)
        data = {**(as_dict(base) if base else {"id": name}), **fields}
        try:
            index[key] = validate_model(data)
        except ValueError as exc:  # pydantic's ValidationError
            raise CatalogError("models", name, _first_error(exc)) from None
        # the plausibility a config.json shape passes (``layers = 1e15`` or ``params = inf``
        # pass gt=0 and reach the arithmetic as such)
        problem = bounds.shape_problem(index[key])
        if problem is not None:
            raise CatalogError("models", name, problem)
    return index


# A path component is at most 255 bytes (NAME_MAX in linux/limits.h; ENAMETOOLONG beyond) and a
# Hugging Face repository name far less, so a longer component names no model file or repository.
_MAX_NAME = 255


def resolve_model(ref: str, extra: Mapping[str, Any] | None = None) -> ModelMatch | None:
    """The shape of the model ``ref`` names, or None.

    ``ref`` may be a Hugging Face id (organisation optional), a local path (matched by its last
    component; Hugging Face cache paths by their repository), or a GGUF file name. Variant and
    quantization suffixes (``-Instruct``, ``-FP8``, ``-AWQ``, ``-Q4_K_M.gguf`` …) are ignored for
    the shape and returned as a precision hint. ``extra`` maps names to shape fields from the
    configuration; an entry naming a built-in model overrides its fields.
    """
    index = _model_index(_frozen(extra))
    for name in _candidate_names(ref.strip()):
        if len(name) > _MAX_NAME:
            continue  # no file or repository has that name; searching it costs time per byte
        gguf_type = _gguf_type_in(name)
        if _other_checkpoint(name):
            continue
        key = _model_key(_strip_file(name, gguf_type))
        shape = index.get(key)
        if shape is None:
            continue
        hint = (Precision(_catalog().file_types[gguf_type].bpw, gguf_type, "GGUF type")
                if gguf_type else _name_hint(name))
        return ModelMatch(shape=shape, matched=key, precision=hint, gguf_type=gguf_type)
    return None


def model_names(extra: Mapping[str, Any] | None = None) -> list[str]:
    """Ids of every known model (built-in and configured)."""
    return sorted({s.id for s in _model_index(_frozen(extra)).values()})


def lora_modules(shape: ModelShape) -> dict[str, tuple[int, int]] | None:
    """(in, out) of each LoRA-adaptable projection of one layer, when known or derivable.

    Llama-style dense models (separate q/k/v/o and gate/up/down projections) derive from the shape.
    """
    if shape.lora_modules is not None:
        return dict(shape.lora_modules)
    if shape.is_moe or shape.is_mla or shape.intermediate is None:
        return None
    if shape.family not in {"llama", "qwen2", "qwen3", "mistral"}:
        return None
    h, q, kv, inter = shape.hidden, shape.heads * shape.head_dim, \
        shape.kv_heads * shape.head_dim, shape.intermediate
    return {"q_proj": (h, q), "k_proj": (h, kv), "v_proj": (h, kv), "o_proj": (q, h),
            "gate_proj": (h, inter), "up_proj": (h, inter), "down_proj": (inter, h)}


CONFIG_JSON_MAX_BYTES = 4 * 1024 * 1024


def read_local_config(dir_path: str, spend: Any = None) -> ModelShape | None:
    """A shape from the ``config.json`` in ``dir_path`` (None when absent or unusable, or not
    read: ``spend`` is the budget to count it against, safeio.memo's).

    The parameter count is estimated from the shape (embeddings, attention, MLP or experts).
    """
    from .. import safeio

    path = os.path.join(dir_path, "config.json")
    name = os.path.basename(os.path.normpath(dir_path)) or str(dir_path)
    # every launch naming the directory asks: read once a run (safeio.memo)
    try:
        return safeio.memo(path, ("config.json", name), lambda p: _read_config(p, name),
                           spend=spend, limit=CONFIG_JSON_MAX_BYTES)
    except safeio.SideBudgetSpent:
        return None


def _read_config(path: str, name: str) -> ModelShape | None:
    from .. import safeio

    try:  # regular file, size and nesting limits (linter/safeio.py)
        cfg = safeio.loads_json(safeio.read_text(path, CONFIG_JSON_MAX_BYTES))
    except safeio.SideFileError:
        return None
    if not isinstance(cfg, dict):
        return None
    text = cfg.get("text_config")
    lengths = None if "text_config" in cfg else _length_keys(cfg)
    if isinstance(text, dict):
        cfg = {**{k: v for k, v in cfg.items() if k != "text_config"}, **text}
    try:
        shape = _shape_from_config(cfg, name, lengths)
    except (TypeError, ValueError, KeyError, ArithmeticError, RecursionError):  # ValueError:
        # pydantic's ValidationError too
        return None  # ArithmeticError: zero heads, 1e400, huge integers as floats
    # numbers no real checkpoint has would drive loops and allocations: the model is unknown
    return shape if bounds.shape_problem(shape) is None else None


# The keys Hugging Face-style loaders read a context length from, in the order they prefer them
# (sglang/srt/utils/hf_transformers_utils.py CONTEXT_LENGTH_KEYS, 0.5.5; the same list in
# 0.4.10.post2's hf_transformers_utils.py and 0.5.23's utils/hf_transformers/common.py).
CONTEXT_LENGTH_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length",
                       "max_position_embeddings")


def _length_keys(cfg: dict[str, Any]) -> dict[str, int] | None:
    """The context-length keys of a top-level config.json, or None when one is not a positive
    integer or the RoPE scaling is written in a way not modelled (then no length is derived
    from them)."""

    rope = cfg.get("rope_scaling")
    if "rope_parameters" in cfg or (rope and not isinstance(rope, dict)):
        return None
    out = {}
    for key in CONTEXT_LENGTH_KEYS:
        if key not in cfg or cfg[key] is None:
            continue
        v = cfg[key]
        if type(v) is not int or not 0 < v <= bounds.MAX_TOKENS:
            return None
        out[key] = v
    return out


def _shape_from_config(cfg: dict[str, Any], name: str,
                       lengths: dict[str, int] | None = None) -> ModelShape:
    layers, hidden = int(cfg["num_hidden_layers"]), int(cfg["hidden_size"])
    heads = int(cfg["num_attention_heads"])
    kv_heads = int(cfg.get("num_key_value_heads") or heads)
    head_dim = int(cfg.get("head_dim") or hidden // heads)
    experts = int(cfg.get("num_local_experts") or cfg.get("n_routed_experts")
                  or cfg.get("num_experts") or 0)
    inter = cfg.get("moe_intermediate_size") if experts else cfg.get("intermediate_size")
    inter = int(inter or cfg.get("intermediate_size") or 4 * hidden)
    moe_layers = 0
    if experts:
        step = int(cfg.get("interleave_moe_layer_step") or cfg.get("decoder_sparse_step") or 1)
        moe_layers = (layers - int(cfg.get("first_k_dense_replace") or 0)) // max(step, 1)
    mla = cfg.get("kv_lora_rank") is not None
    if mla:
        head_dim = int(cfg.get("qk_nope_head_dim", 0)) + int(cfg.get("qk_rope_head_dim", 0))
    sliding_window, sliding_layers = _sliding(cfg, layers)
    rope = cfg.get("rope_scaling")
    rope_scaling = None
    if isinstance(rope, dict) and rope.get("factor"):
        rope_scaling = {"type": str(rope.get("rope_type") or rope.get("type") or "unknown"),
                        "factor": float(rope["factor"]),
                        "original_max_positions": rope.get("original_max_position_embeddings")}
    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16")
    params = _estimate_params(cfg, layers, hidden, heads, kv_heads, head_dim, inter, experts,
                              moe_layers)
    quant = cfg.get("quantization_config")
    method, bits = _checkpoint_quantization(quant, dtype)
    if method in ("mxfp4", "gpt_oss_mxfp4") and experts:
        expert_weights = moe_layers * experts * 3 * hidden * inter
        other = max(params - expert_weights, 0)
        bits = (expert_weights * 4.25 + other * 16) / params
    return validate_model(dict(
        id=name, family=str(cfg.get("model_type") or "custom"), params=params, layers=layers,
        hidden=hidden, intermediate=inter, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
        vocab=cfg.get("vocab_size"), max_positions=cfg.get("max_position_embeddings"),
        rope_scaling=rope_scaling, dtype=method or dtype, quantization=method, weight_bits=bits,
        experts=experts, experts_per_token=int(cfg.get("num_experts_per_tok") or 0),
        shared_experts=int(cfg.get("n_shared_experts") or 0), moe_layers=moe_layers or None,
        kv_lora_rank=cfg.get("kv_lora_rank") if mla else None,
        qk_rope_head_dim=cfg.get("qk_rope_head_dim") if mla else None,
        sliding_window=sliding_window, sliding_layers=sliding_layers,
        tie_embeddings=(bool(cfg["tie_word_embeddings"]) if "tie_word_embeddings" in cfg
                        else None),
        length_keys=lengths,
        note="read from config.json; params estimated from the shape",
        source=("local config.json",),
    ))


def _sliding(cfg: dict[str, Any], layers: int) -> tuple[int | None, int]:
    window = cfg.get("sliding_window") or cfg.get("attention_chunk_size")
    if not window or cfg.get("use_sliding_window") is False:
        return None, 0
    types = cfg.get("layer_types")
    if isinstance(types, list):
        n = sum(1 for t in types if "sliding" in str(t) or "chunk" in str(t))
    elif cfg.get("sliding_window_pattern"):
        n = layers - layers // int(cfg["sliding_window_pattern"])
    elif isinstance(cfg.get("no_rope_layers"), list):
        n = sum(1 for x in cfg["no_rope_layers"] if x)
    else:
        n = layers
    return (int(window), n) if n else (None, 0)


def _estimate_params(cfg: dict[str, Any], layers: int, hidden: int, heads: int, kv_heads: int,
                     head_dim: int, inter: int, experts: int, moe_layers: int) -> float:
    vocab = int(cfg.get("vocab_size") or 0)
    embed = vocab * hidden * (1 if cfg.get("tie_word_embeddings") else 2)
    if cfg.get("kv_lora_rank") is not None:
        rope, lora = int(cfg.get("qk_rope_head_dim", 0)), int(cfg["kv_lora_rank"])
        v = int(cfg.get("v_head_dim") or head_dim)
        q_rank = cfg.get("q_lora_rank")
        q = hidden * q_rank + q_rank * heads * head_dim if q_rank else hidden * heads * head_dim
        attn = (q + hidden * (lora + rope) + lora * heads * (head_dim - rope + v)
                + heads * v * hidden)
    else:
        attn = 2 * hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim
    dense_inter = int(cfg.get("intermediate_size") or inter)
    dense_layers = layers - moe_layers
    mlp = dense_layers * 3 * hidden * dense_inter
    if experts:
        shared = int(cfg.get("n_shared_experts") or 0)
        shared_inter = int(cfg.get("shared_expert_intermediate_size") or shared * inter)
        mlp += moe_layers * (3 * hidden * (experts * inter + shared_inter) + hidden * experts)
    return float(embed + layers * attn + mlp)


def _checkpoint_quantization(quant: Any, dtype: str) -> tuple[str | None, float]:
    if not isinstance(quant, dict):
        return None, dtype_bits(dtype) or 16.0
    method = str(quant.get("quant_method") or "unknown").lower()
    if quant.get("load_in_4bit"):
        return method, 4.0
    if quant.get("load_in_8bit"):
        return method, 8.0
    if isinstance(quant.get("bits"), int):
        return method, float(quant["bits"])
    for group in (quant.get("config_groups") or {}).values():
        weights = group.get("weights") if isinstance(group, dict) else None
        if isinstance(weights, dict) and isinstance(weights.get("num_bits"), int):
            return method, float(weights["num_bits"])
    return method, quantization_bits(method) or dtype_bits(dtype) or 16.0
