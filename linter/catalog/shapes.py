"""What a catalog entry is: a model shape (``models.json``), a GPU (``gpus.json``), the
result of a name look-up.

Plain frozen dataclasses, read from the built-in JSON without validation on first use and cached
(pydantic's import and schema building cost more than a one-file lint: issue 19).  Entries that
come from outside the package (the configuration's models and GPUs, a local ``config.json``, a
GGUF header) go through ``validate_model`` / ``validate_gpu``: pydantic, built lazily from these
same classes (each field's ``metadata`` holds its bounds), with the same checks the models had.
The tests validate every built-in entry that way and require the same result as the loader.
"""

from __future__ import annotations

import typing
from functools import cache
from typing import Any

from .data import _catalog, _read
from .precision import Precision, dtype_bits
from .. import records
from ..records import dataclass, field


def _bound(default: Any = records.MISSING, description: str | None = None,
           **limits: float) -> Any:
    """A field with pydantic bounds (``gt``/``ge``) that only ``validate_*`` apply."""
    meta: dict[str, Any] = dict(limits)
    if description:
        meta["description"] = description
    return field(default=default, metadata=meta)


@dataclass(frozen=True, slots=True, kw_only=True)
class RopeScaling:
    type: str
    factor: float = _bound(gt=0)
    original_max_positions: int | None = None


@dataclass(frozen=True, kw_only=True)
class ModelShape:
    """The shape of one model checkpoint, as far as memory and parallelism care."""

    id: str
    family: str = "custom"
    aliases: tuple[str, ...] = ()
    params: float = _bound(gt=0, description="parameter count used for weight memory")
    params_exact: int | None = None
    active_params: float | None = None
    layers: int = _bound(gt=0)
    hidden: int = _bound(gt=0)
    intermediate: int | None = _bound(default=None,
                                      description="FFN width (per expert for MoE)")
    heads: int = _bound(gt=0)
    kv_heads: int = _bound(gt=0)
    head_dim: int = _bound(gt=0)
    vocab: int | None = None
    max_positions: int | None = None
    rope_scaling: RopeScaling | None = None
    dtype: str = _bound(default="bfloat16", description="storage format of the checkpoint")
    quantization: str | None = None
    weight_bits: float = _bound(default=16.0, gt=0, description="average stored bits per weight")
    experts: int = _bound(default=0, ge=0)
    experts_per_token: int = _bound(default=0, ge=0)
    shared_experts: int = _bound(default=0, ge=0)
    moe_layers: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    sliding_window: int | None = None
    sliding_layers: int = _bound(default=0, ge=0)
    lora_modules: dict[str, tuple[int, int]] | None = None
    tie_embeddings: bool | None = _bound(
        default=None, description="config.json tie_word_embeddings (lm_head is the embedding)")
    vision_params: float | None = _bound(
        default=None, ge=0, description="vision tower + projector params vLLM loads beside params")
    length_keys: dict[str, int] | None = _bound(
        default=None, description="the context-length keys a local config.json sets "
        "(max_sequence_length, seq_length, max_seq_len, model_max_length, "
        "max_position_embeddings); None when the shape did not come from one")
    note: str | None = None
    source: tuple[str, ...] = ()

    @staticmethod
    def prepare(data: Any) -> Any:
        """The defaults that depend on other fields, filled in before anything else."""
        if isinstance(data, dict):
            data = dict(data)
            if "kv_heads" not in data and "heads" in data:
                data["kv_heads"] = data["heads"]
            if "head_dim" not in data and data.get("hidden") and data.get("heads"):
                data["head_dim"] = data["hidden"] // data["heads"]
            if "weight_bits" not in data and data.get("dtype"):
                data["weight_bits"] = dtype_bits(str(data["dtype"])) or 16.0
        return data

    def problem(self) -> str | None:
        """What makes the shape inconsistent (validate_model refuses it), else None."""
        if self.sliding_layers > self.layers:
            return "sliding_layers exceeds layers"
        if self.sliding_layers and not self.sliding_window:
            return "sliding_layers needs sliding_window"
        if (self.kv_lora_rank is None) != (self.qk_rope_head_dim is None):
            return "MLA needs both kv_lora_rank and qk_rope_head_dim"
        return None

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


@dataclass(frozen=True, kw_only=True)
class GpuSpec:
    """One GPU model: memory (vendor bytes), bandwidth, compute and links."""

    id: str
    name: str = ""
    vendor: str = "unknown"
    architecture: str = "unknown"
    compute_capability: str | None = None
    memory_gb: float = _bound(gt=0, description="vendor GB (80 GB = 80e9 bytes)")
    cuda_memory_gib: float | None = _bound(default=None, gt=0,
        description="total memory as torch.cuda.mem_get_info reports it (GiB); what vLLM's "
                    "gpu_memory_utilization multiplies")
    bandwidth_tbs: float = _bound(gt=0, description="memory bandwidth, TB/s")
    bf16_tflops: float | None = _bound(default=None, description="dense BF16; null when unsourced")
    form_factor: str = "unknown"
    nvlink_generation: str | None = None
    nvlink_gbs_per_direction: float | None = None
    nvlink_bridge: bool = _bound(
        default=False, description="PCIe card that NVLink bridges can pair")
    bridge_gbs_per_direction: float | None = None
    pcie_gen: int | None = None
    pcie_gbs_per_direction: float | None = None
    aliases: tuple[str, ...] = ()
    node_labels: tuple[str, ...] = ()
    gke_accelerators: tuple[str, ...] = ()
    note: str | None = None
    source: tuple[str, ...] = ()

    @staticmethod
    def prepare(data: Any) -> Any:
        """The defaults that depend on other fields, filled in before anything else."""
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


# ---------------------------------------------------------------------------------------------
# Loading: the built-in JSON as it is (checked by the tests), anything else through pydantic


@cache
def _conversions(cls: type) -> tuple[frozenset[str], frozenset[str]]:
    """The fields of ``cls`` whose JSON form needs converting: floats (JSON integers become
    floats, as pydantic makes them) and tuples (JSON lists)."""
    floats, tuples = set(), set()
    for f in records.fields(cls):
        ann = str(f.type)
        if ann.startswith("float"):
            floats.add(f.name)
        elif ann.startswith("tuple["):
            tuples.add(f.name)
    return frozenset(floats), frozenset(tuples)


def _build(cls: type, data: dict[str, Any]) -> Any:
    floats, tuples = _conversions(cls)
    out = {}
    for k, v in data.items():
        if v is not None:
            if k in floats and type(v) is int:
                v = float(v)
            elif k in tuples:
                v = tuple(v)
        out[k] = v
    return cls(**out)


def _load_model(data: dict[str, Any]) -> ModelShape:
    data = ModelShape.prepare(data)
    rope = data.get("rope_scaling")
    if rope is not None:
        data["rope_scaling"] = _build(RopeScaling, rope)
    lora = data.get("lora_modules")
    if lora is not None:
        data["lora_modules"] = {k: tuple(v) for k, v in lora.items()}
    return _build(ModelShape, data)


@cache
def _builtin_models() -> tuple[ModelShape, ...]:
    return tuple(_load_model(m) for m in _read("models.json")["models"])


@cache
def _builtin_gpus() -> tuple[GpuSpec, ...]:
    return tuple(_build(GpuSpec, GpuSpec.prepare(g)) for g in _read("gpus.json")["gpus"])


@cache
def _schema(cls: type) -> Any:
    """A pydantic model with the fields, types, defaults and bounds of the dataclass ``cls``
    (unknown fields refused), and for ModelShape its consistency check."""
    from pydantic import ConfigDict, Field, create_model, model_validator

    hints = typing.get_type_hints(cls)
    fields: dict[str, Any] = {}
    for f in records.fields(cls):
        ann = hints[f.name]
        if f.name == "rope_scaling":
            ann = _schema(RopeScaling) | None
        default = ... if f.default is records.MISSING else f.default
        fields[f.name] = (ann, Field(default, **f.metadata))
    validators: dict[str, Any] = {}
    if cls is ModelShape:
        def _consistent(self: Any) -> Any:
            problem = ModelShape.problem(self)  # only reads fields the schema has
            if problem is not None:
                raise ValueError(problem)
            return self

        validators["_consistent"] = model_validator(mode="after")(_consistent)
    return create_model(f"{cls.__name__}Schema", __config__=ConfigDict(extra="forbid"),
                        __validators__=validators, **fields)


def _from_schema(cls: type, model: Any) -> Any:
    values = {f.name: getattr(model, f.name) for f in records.fields(cls)}
    if cls is ModelShape and values["rope_scaling"] is not None:
        values["rope_scaling"] = RopeScaling(**values["rope_scaling"].model_dump())
    return cls(**values)


def validate_model(data: dict[str, Any]) -> ModelShape:
    """A model shape from outside the package, validated (raises pydantic's ValidationError,
    a ValueError)."""
    return _from_schema(ModelShape, _schema(ModelShape).model_validate(ModelShape.prepare(data)))


def validate_gpu(data: dict[str, Any]) -> GpuSpec:
    """A GPU from outside the package, validated (raises pydantic's ValidationError)."""
    return _from_schema(GpuSpec, _schema(GpuSpec).model_validate(GpuSpec.prepare(data)))


def as_dict(entry: ModelShape | GpuSpec) -> dict[str, Any]:
    """An entry's fields (nested RopeScaling as a dict), to merge configured fields into."""
    return records.asdict(entry)
