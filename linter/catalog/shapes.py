"""What a catalog entry is: a model shape (``models.json``), a GPU (``gpus.json``), the
result of a name look-up; validated by pydantic on first use and cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .data import _catalog, _read
from .precision import Precision, dtype_bits


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


@cache
def _builtin_models() -> tuple[ModelShape, ...]:
    return tuple(ModelShape.model_validate(m) for m in _read("models.json")["models"])


@cache
def _builtin_gpus() -> tuple[GpuSpec, ...]:
    return tuple(GpuSpec.model_validate(g) for g in _read("gpus.json")["gpus"])
