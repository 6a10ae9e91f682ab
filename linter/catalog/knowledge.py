"""What mgpu-lint knows about models, GPUs and number formats.

The facts live in data files beside this module (``models.json``, ``gpus.json``,
``gguf_types.json``, ``labels.json``), each entry with its source. They are validated by pydantic
on first use and cached, so a process pays for one load. Users add or override models and GPUs in
the configuration file; those dictionaries arrive here as the ``extra`` argument.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class CatalogError(ValueError):
    """A user-supplied model or GPU entry that does not validate."""


class RopeScaling(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    type: str
    factor: float = Field(gt=0)
    original_max_positions: int | None = None


class ModelShape(BaseModel):
    """The shape of one model checkpoint, as far as memory and parallelism care."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    id: str
    family: str = "custom"
    aliases: tuple[str, ...] = ()
    params: float = Field(gt=0, description="parameter count used for weight memory")
    params_exact: int | None = None
    active_params: float | None = None
    layers: int = Field(gt=0)
    hidden: int = Field(gt=0)
    intermediate: int | None = Field(default=None, description="FFN width (per expert for MoE)")
    heads: int = Field(gt=0)
    kv_heads: int = Field(gt=0)
    head_dim: int = Field(gt=0)
    vocab: int | None = None
    max_positions: int | None = None
    rope_scaling: RopeScaling | None = None
    dtype: str = Field(default="bfloat16", description="storage format of the checkpoint")
    quantization: str | None = None
    weight_bits: float = Field(default=16.0, gt=0, description="average stored bits per weight")
    experts: int = Field(default=0, ge=0)
    experts_per_token: int = Field(default=0, ge=0)
    shared_experts: int = Field(default=0, ge=0)
    moe_layers: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    sliding_window: int | None = None
    sliding_layers: int = Field(default=0, ge=0)
    lora_modules: dict[str, tuple[int, int]] | None = None
    tie_embeddings: bool | None = Field(
        default=None, description="config.json tie_word_embeddings (lm_head is the embedding)")
    vision_params: float | None = Field(
        default=None, ge=0, description="vision tower + projector params vLLM loads beside params")
    note: str | None = None
    source: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            if "kv_heads" not in data and "heads" in data:
                data["kv_heads"] = data["heads"]
            if "head_dim" not in data and data.get("hidden") and data.get("heads"):
                data["head_dim"] = data["hidden"] // data["heads"]
            if "weight_bits" not in data and data.get("dtype"):
                data["weight_bits"] = dtype_bits(str(data["dtype"])) or 16.0
        return data

    @model_validator(mode="after")
    def _consistent(self) -> ModelShape:
        if self.sliding_layers > self.layers:
            raise ValueError("sliding_layers exceeds layers")
        if self.sliding_layers and not self.sliding_window:
            raise ValueError("sliding_layers needs sliding_window")
        if (self.kv_lora_rank is None) != (self.qk_rope_head_dim is None):
            raise ValueError("MLA needs both kv_lora_rank and qk_rope_head_dim")
        return self

    def __hash__(self) -> int:
        return hash((self.id, self.params, self.layers, self.hidden))

    @property
    def name(self) -> str:
        """The id without its organisation."""
        return self.id.rsplit("/", 1)[-1]

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank is not None


class GpuSpec(BaseModel):
    """One GPU model: memory (vendor bytes), bandwidth, compute and links."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    id: str
    name: str = ""
    vendor: str = "unknown"
    architecture: str = "unknown"
    compute_capability: str | None = None
    memory_gb: float = Field(gt=0, description="vendor GB (80 GB = 80e9 bytes)")
    cuda_memory_gib: float | None = Field(
        default=None, gt=0,
        description="total memory as torch.cuda.mem_get_info reports it (GiB); what vLLM's "
                    "gpu_memory_utilization multiplies")
    bandwidth_tbs: float = Field(gt=0, description="memory bandwidth, TB/s")
    bf16_tflops: float | None = Field(default=None, description="dense BF16; null when unsourced")
    form_factor: str = "unknown"
    nvlink_generation: str | None = None
    nvlink_gbs_per_direction: float | None = None
    nvlink_bridge: bool = Field(default=False, description="PCIe card that NVLink bridges can pair")
    bridge_gbs_per_direction: float | None = None
    pcie_gen: int | None = None
    pcie_gbs_per_direction: float | None = None
    aliases: tuple[str, ...] = ()
    node_labels: tuple[str, ...] = ()
    gke_accelerators: tuple[str, ...] = ()
    note: str | None = None
    source: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            data.setdefault("name", data.get("id", ""))
            gen = data.get("pcie_gen")
            if data.get("pcie_gbs_per_direction") is None and gen is not None:
                data["pcie_gbs_per_direction"] = _catalog().pcie.get(str(gen))
        return data

    @property
    def memory_bytes(self) -> float:
        return self.memory_gb * 1e9

    @property
    def cuda_memory_bytes(self) -> int | None:
        """Total memory CUDA reports (None when the catalog has no measured value)."""
        v = self.cuda_memory_gib
        return None if v is None else int(v * (1 << 30))

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return self.bandwidth_tbs * 1e12

    @property
    def bf16_flops(self) -> float | None:
        return None if self.bf16_tflops is None else self.bf16_tflops * 1e12

    @property
    def has_nvlink(self) -> bool:
        """GPUs joined by NVLink (or xGMI) in their server, not only by an optional bridge."""
        return self.nvlink_gbs_per_direction is not None

    @property
    def nvlink_bytes_per_s(self) -> float | None:
        v = self.nvlink_gbs_per_direction
        return None if v is None else v * 1e9

    @property
    def pcie_bytes_per_s(self) -> float | None:
        v = self.pcie_gbs_per_direction
        return None if v is None else v * 1e9


@dataclass(frozen=True)
class Precision:
    """Bits per stored weight and where that number came from."""

    bits: float
    label: str
    # "--quantization", "--dtype", "model name", "GGUF type", "checkpoint", "--bits", "default"
    origin: str


@dataclass(frozen=True)
class ModelMatch:
    shape: ModelShape
    matched: str  # the catalog key that matched
    precision: Precision | None = None  # hint found in the name (FP8, AWQ, Q4_K_M …)
    gguf_type: str | None = None


@dataclass(frozen=True)
class GpuMatch:
    gpu: GpuSpec
    count: int | None  # GPUs per node when the label says (instance types)
    source: str


# --------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class _GgufFileType:
    bpw: float
    base_type: str
    base_bpw: float
    alias_of: str | None = None


@dataclass(frozen=True)
class _GgufTensorType:
    block_bytes: int
    block_weights: int
    kv_cache: bool


@dataclass(frozen=True)
class _InstanceType:
    gpu: str
    count: int | None
    source: str


@dataclass(frozen=True)
class _Catalog:
    pcie: dict[str, float]
    file_types: dict[str, _GgufFileType]
    tensor_types: dict[str, _GgufTensorType]
    label_keys: dict[str, tuple[str, ...]]
    accelerators: dict[str, str]
    instance_types: dict[str, _InstanceType]


def _read(name: str) -> Any:
    return json.loads(resources.files("mgpu_lint.catalog").joinpath(name).read_text("utf-8"))


@cache
def _catalog() -> _Catalog:
    gpus, gguf, labels = _read("gpus.json"), _read("gguf_types.json"), _read("labels.json")
    return _Catalog(
        pcie={k: float(v) for k, v in gpus["pcie_gbs_per_direction"].items()},
        file_types={k: _GgufFileType(**v) for k, v in gguf["file_types"].items()},
        tensor_types={k: _GgufTensorType(**v) for k, v in gguf["tensor_types"].items()},
        label_keys={k: tuple(v) for k, v in labels["label_keys"].items()},
        accelerators=dict(labels["accelerators"]),
        instance_types={k: _InstanceType(**v) for k, v in labels["instance_types"].items()},
    )


@cache
def _builtin_models() -> tuple[ModelShape, ...]:
    return tuple(ModelShape.model_validate(m) for m in _read("models.json")["models"])


@cache
def _builtin_gpus() -> tuple[GpuSpec, ...]:
    return tuple(GpuSpec.model_validate(g) for g in _read("gpus.json")["gpus"])


# --------------------------------------------------------------------------- models

_GGUF_SHARD = re.compile(r"-\d{5}-of-\d{5}$", re.IGNORECASE)
_SEPARATORS = re.compile(r"[-_\s:]+")
# Name tokens that say nothing about the shape: variants, packaging, quantization.
_DROP = frozenset({
    "instruct", "chat", "it", "hf", "thinking", "gguf", "mlx", "fp8", "dynamic", "kv", "awq",
    "gptq",
    "int4", "int8", "bnb", "4bit", "8bit", "w4a16", "w8a8", "w8a16", "nvfp4", "fp4", "mxfp4",
    "bf16", "fp16", "f16",
})
# Extra spellings of built-in models (beyond the id's last component and the entries' aliases).
_ALIASES = {
    "mistralai/Mixtral-8x7B-Instruct-v0.1": ("Mixtral-8x7B",),
    "mistralai/Mixtral-8x22B-Instruct-v0.1": ("Mixtral-8x22B",),
}
_NAME_HINTS: tuple[tuple[frozenset[str], float, str], ...] = (
    (frozenset({"mxfp4"}), 4.25, "MXFP4"),
    (frozenset({"nvfp4", "fp4"}), 4.5, "NVFP4"),
    (frozenset({"int8", "w8a8", "w8a16", "8bit"}), 8.0, "INT8"),
    (frozenset({"fp8"}), 8.0, "FP8"),
    (frozenset({"int4", "w4a16", "4bit"}), 4.0, "INT4"),
    (frozenset({"awq"}), 4.0, "AWQ 4-bit"),
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


def _gguf_type_in(name: str) -> str | None:
    upper = name.upper()
    for t in sorted(_catalog().file_types, key=len, reverse=True):
        if re.search(rf"(?<![A-Z0-9]){re.escape(t)}(?![A-Z0-9])", upper):
            return t
    return None


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
    return out


def _strip_file(name: str, gguf_type: str | None) -> str:
    stem = re.sub(r"\.gguf$", "", name, flags=re.IGNORECASE)
    stem = _GGUF_SHARD.sub("", stem)
    if gguf_type:
        stem = re.sub(rf"[-_.:]?{re.escape(gguf_type)}(?![A-Za-z0-9])", "", stem,
                      flags=re.IGNORECASE)
    return stem


def _frozen(extra: Mapping[str, Any] | None) -> str:
    return json.dumps(extra or {}, sort_keys=True, default=str)


@cache
def _model_index(extra_json: str) -> dict[str, ModelShape]:
    index: dict[str, ModelShape] = {}
    for shape in _builtin_models():
        for n in (shape.id, *shape.aliases, *_ALIASES.get(shape.id, ())):
            index.setdefault(_model_key(n.rsplit("/", 1)[-1]), shape)
    for name, fields in json.loads(extra_json).items():
        key = _model_key(name.rsplit("/", 1)[-1])
        base = index.get(key)
        data = {**(base.model_dump() if base else {"id": name}), **fields}
        try:
            index[key] = ModelShape.model_validate(data)
        except ValidationError as exc:
            raise CatalogError(
                f"model {name!r} in the configuration: {_first_error(exc)}") from None
    return index


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"{where}: {err['msg']}" if where else err["msg"]


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


# --------------------------------------------------------------------------- local config.json


CONFIG_JSON_MAX_BYTES = 4 * 1024 * 1024


def read_local_config(dir_path: str | Path) -> ModelShape | None:
    """A shape from the ``config.json`` in ``dir_path`` (None when absent or unusable).

    The parameter count is estimated from the shape (embeddings, attention, MLP or experts).
    """
    from .. import bounds, safeio

    path = Path(dir_path) / "config.json"
    try:  # regular file, size and nesting limits (linter/safeio.py)
        cfg = safeio.loads_json(safeio.read_text(str(path), CONFIG_JSON_MAX_BYTES))
    except safeio.SideFileError:
        return None
    if not isinstance(cfg, dict):
        return None
    text = cfg.get("text_config")
    if isinstance(text, dict):
        cfg = {**{k: v for k, v in cfg.items() if k != "text_config"}, **text}
    try:
        shape = _shape_from_config(cfg, Path(dir_path).name or str(dir_path))
    except (ValidationError, TypeError, ValueError, KeyError, ArithmeticError, RecursionError):
        return None  # ArithmeticError: zero heads, 1e400, huge integers as floats
    # numbers no real checkpoint has would drive loops and allocations: the model is unknown
    return shape if bounds.shape_problem(shape) is None else None


def _shape_from_config(cfg: dict[str, Any], name: str) -> ModelShape:
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
    return ModelShape(
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
        note="read from config.json; params estimated from the shape",
        source=("local config.json",),
    )


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


# --------------------------------------------------------------------------- GPUs

_GPU_PREFIXES = ("nvidia", "tesla", "geforce", "amd", "instinct")


def _gpu_raw_key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _gpu_key(name: str) -> str:
    key = _gpu_raw_key(name)
    stripped = True
    while stripped:
        stripped = False
        for p in _GPU_PREFIXES:
            if key.startswith(p) and len(key) > len(p):
                key, stripped = key[len(p):], True
    return key.removesuffix("shared") if key.endswith("shared") and len(key) > 6 else key


@cache
def _gpu_index(extra_json: str) -> dict[str, GpuSpec]:
    """Keys: exact label and accelerator values (punctuation removed) first, then names with
    vendor prefixes removed, so that ``nvidia-tesla-a100`` (A100 40GB) beats the alias ``A100``."""
    builtins = _builtin_gpus()
    by_id = {g.id: g for g in builtins}
    index: dict[str, GpuSpec] = {}
    for gpu in builtins:
        for n in (*gpu.node_labels, *gpu.gke_accelerators):
            index.setdefault(_gpu_raw_key(n), gpu)
    for accel, gid in _catalog().accelerators.items():
        index.setdefault(_gpu_raw_key(accel), by_id[gid])
    for gpu in builtins:
        for n in (gpu.id, gpu.name, *gpu.aliases, *gpu.node_labels):
            index.setdefault(_gpu_key(n), gpu)
    for name, fields in json.loads(extra_json).items():
        base = _lookup_gpu(index, name)
        data = {**(base.model_dump() if base else {"id": name}), **fields}
        if base and "pcie_gen" in fields and "pcie_gbs_per_direction" not in fields:
            data["pcie_gbs_per_direction"] = None
        try:
            gpu = GpuSpec.model_validate(data)
        except ValidationError as exc:
            raise CatalogError(f"GPU {name!r} in the configuration: {_first_error(exc)}") from None
        for n in (name, gpu.id, gpu.name, *gpu.aliases):
            index[_gpu_raw_key(n)] = index[_gpu_key(n)] = gpu
    return index


def _lookup_gpu(index: dict[str, GpuSpec], name: str) -> GpuSpec | None:
    raw = _gpu_raw_key(name)
    return index.get(raw) or index.get(_gpu_key(name)) if raw else None


def resolve_gpu(name: str, extra: Mapping[str, Any] | None = None) -> GpuSpec | None:
    """The GPU ``name`` means: catalog id, marketing name, node-label value or cloud accelerator.

    Matching ignores case and punctuation (``H100 SXM``, ``h100-sxm``, ``NVIDIA-H100-80GB-HBM3``,
    ``nvidia-l4``). ``extra`` maps names to GPU fields from the configuration.
    """
    return _lookup_gpu(_gpu_index(_frozen(extra)), name)


def gpu_names(extra: Mapping[str, Any] | None = None) -> list[str]:
    """Ids of every known GPU (built-in and configured)."""
    return sorted({g.id for g in _gpu_index(_frozen(extra)).values()})


def resolve_node_label(key: str, value: str,
                       extra: Mapping[str, Any] | None = None) -> GpuMatch | None:
    """The GPU (and per-node count, when known) a Kubernetes node label selects."""
    cat = _catalog()
    if key in cat.label_keys["instance_type"]:
        inst = cat.instance_types.get(value.strip().lower())
        if inst is None:
            return None
        gpu = resolve_gpu(inst.gpu, extra)
        return GpuMatch(gpu, inst.count, inst.source) if gpu else None
    if key in cat.label_keys["product"] or key in cat.label_keys["accelerator"]:
        gpu = resolve_gpu(value, extra)
        return GpuMatch(gpu, None, f"node label {key}") if gpu else None
    return None


def validate_extra(models: Mapping[str, Any] | None = None,
                   gpus: Mapping[str, Any] | None = None) -> None:
    """Raise CatalogError when a configured model or GPU entry does not validate."""
    _model_index(_frozen(models))
    _gpu_index(_frozen(gpus))


# --------------------------------------------------------------------------- precision

_DTYPE_BITS = {"float32": 32.0, "float": 32.0, "fp32": 32.0, "f32": 32.0,
               "bfloat16": 16.0, "bf16": 16.0, "float16": 16.0, "half": 16.0, "fp16": 16.0,
               "f16": 16.0, "fp8": 8.0, "float8": 8.0, "mxfp4": 4.25}
# vLLM --quantization methods and the bits per weight they store (nominal for integer formats).
_QUANT_BITS = {"fp8": 8.0, "fbgemm_fp8": 8.0, "fp8_per_tensor": 8.0, "fp8_per_block": 8.0,
               "fp8_per_channel": 8.0, "deepseek_v4_fp8": 8.0, "modelopt": 8.0, "mxfp8": 8.0,
               "modelopt_mxfp8": 8.0, "experts_int8": 8.0, "int8_per_channel_weight_only": 8.0,
               "awq": 4.0, "auto_awq": 4.0, "awq_marlin": 4.0, "gptq": 4.0, "auto_gptq": 4.0,
               "gptq_marlin": 4.0, "moe_wna16": 4.0, "bitsandbytes": 4.0,
               "mxfp4": 4.25, "gpt_oss_mxfp4": 4.25, "modelopt_fp4": 4.5, "nvfp4_per_token": 4.5}
# vLLM --kv-cache-dtype values and bytes per cached value ("auto" follows the model dtype).
_KV_BYTES = {"bfloat16": 2.0, "float16": 2.0, "fp8": 1.0, "fp8_e4m3": 1.0, "fp8_e5m2": 1.0,
             "fp8_inc": 1.0, "fp8_ds_mla": 1.0, "fp8_per_token_head": 1.0,
             "int8_per_token_head": 1.0, "int4_per_token_head": 0.5, "nvfp4": 0.5625,
             "nvfp4_4over6": 0.5625, "nvfp4_ds_mla": 0.5625, "turboquant_3bit_nc": 0.375,
             "turboquant_4bit_nc": 0.5, "turboquant_k3v4_nc": 0.4375, "turboquant_k8v4": 0.75}


def dtype_bits(dtype: str) -> float | None:
    """Bits per value of a dtype name (``bfloat16``, ``half``, ``float32`` …); None for auto."""
    return _DTYPE_BITS.get(dtype.strip().lower().removeprefix("torch."))


def quantization_bits(method: str) -> float | None:
    """Bits per weight that a vLLM ``--quantization`` method stores (None when it varies)."""
    return _QUANT_BITS.get(method.strip().lower())


def gguf_file_type_bits(file_type: str) -> float | None:
    """Whole-file average bits per weight of a GGUF file type (``Q4_K_M`` → 4.8944)."""
    ft = _catalog().file_types.get(file_type.strip().upper())
    return ft.bpw if ft else None


def gguf_file_types() -> list[str]:
    return sorted(_catalog().file_types)


def ggml_type_bytes(tensor_type: str) -> float | None:
    """Bytes per value of a ggml tensor type (``q8_0`` → 34/32); case-sensitive as llama.cpp."""
    tt = _catalog().tensor_types.get(tensor_type)
    return tt.block_bytes / tt.block_weights if tt else None


def weight_precision(shape: ModelShape | None = None, *, dtype: str | None = None,
                     quantization: str | None = None, hint: Precision | None = None,
                     bits: float | None = None) -> Precision:
    """Bits per stored weight for a launch.

    Order: an explicit ``bits``; ``--quantization`` (with the name's bit width when it states
    one); a GGUF type or name hint; the checkpoint's own quantization; ``--dtype``; the
    checkpoint dtype; 16.
    """
    if bits is not None:
        return Precision(float(bits), f"{bits:g}-bit", "--bits")
    if quantization and quantization.lower() not in ("none", "auto"):
        q = quantization_bits(quantization)
        if hint is not None and hint.origin == "model name" and q is not None and q < 16:
            return Precision(hint.bits, f"{quantization} ({hint.label})", "--quantization")
        if q is not None:
            return Precision(q, quantization, "--quantization")
    if hint is not None:
        return hint
    if shape is not None and shape.quantization:
        return Precision(shape.weight_bits, shape.dtype, "checkpoint")
    if dtype and dtype.lower() != "auto":
        d = dtype_bits(dtype)
        if d is not None:
            return Precision(d, dtype, "--dtype")
    if shape is not None:
        return Precision(shape.weight_bits, shape.dtype, "checkpoint")
    return Precision(16.0, "bfloat16", "default")


def kv_cache_bytes_per_value(kv_cache_dtype: str | None = None, *, dtype: str | None = None,
                             shape: ModelShape | None = None) -> float | None:
    """Bytes per cached K or V value under vLLM's ``--kv-cache-dtype`` (None when unknown).

    ``auto`` follows the activation dtype: ``--dtype`` when given, else 4 bytes for float32
    checkpoints and 2 otherwise (quantized checkpoints compute in 16 bits).
    """
    kind = (kv_cache_dtype or "auto").strip().lower()
    if kind != "auto":
        return _KV_BYTES.get(kind)
    d = dtype_bits(dtype) if dtype and dtype.lower() != "auto" else None
    if d is None and shape is not None and shape.quantization is None:
        d = dtype_bits(shape.dtype)
    return 4.0 if d == 32.0 else 2.0


def llama_kv_bytes_per_value(cache_type_k: str = "f16", cache_type_v: str = "f16") -> float | None:
    """Mean bytes per cached value for llama.cpp ``-ctk``/``-ctv`` (None for a type the cache
    does not accept)."""
    sizes = []
    for name in (cache_type_k, cache_type_v):
        tt = _catalog().tensor_types.get(name)
        if tt is None or not tt.kv_cache:
            return None
        sizes.append(tt.block_bytes / tt.block_weights)
    return (sizes[0] + sizes[1]) / 2
