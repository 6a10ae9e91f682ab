"""One vLLM launch's memory as vLLM would size it: the Deployment's facts fed to vllm_budget.

Shared by the memory rules (MG301-MG303), `launches` and `plan`.  Returns None when a fact the
budget needs is unknown or broken (the rules then stay silent).
"""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING

from . import vllm_budget as vb
from ..catalog import knowledge
from ..engines.adapter import VLLM_ARGS
from ..records import dataclass

if TYPE_CHECKING:
    from ..catalog.knowledge import GpuSpec, ModelShape
    from ..deployment import Deployment

GIB = vb.GIB
ESTIMATE_CUDAGRAPHS_ENV = "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS"


@dataclass(frozen=True)
class LaunchMemory:
    budget: vb.Budget
    card_known: bool  # False: CUDA's total is not in the catalog (the marketed size is used)
    release: str
    utilization: float
    unmeasured: int = 0  # terms the sweep never measured for this layout (vb.PCP_NON_TORCH_SPREAD)

    @property
    def uncertainty(self) -> int:
        """What a verdict must clear: the fitted terms' spread, plus the card's when its CUDA
        total is not catalogued, plus what the layout's unmeasured terms may add."""
        extra = 0 if self.card_known else int(0.03 * self.budget.gpu_memory)
        return vb.UNCERTAINTY_BYTES + extra + self.unmeasured


def card_bytes(spec: GpuSpec) -> tuple[int, bool]:
    """Total memory as CUDA reports it; when the catalog has no measured value, the marketed
    size read as GiB — an upper bound (H100 80 GB: 79.19 GiB; 24 GB cards report 23.6-23.7 GiB),
    so a refusal found with it holds on the real card."""
    b = spec.cuda_memory_bytes
    if b is not None:
        return b, True
    return int(spec.memory_gb * GIB), False


def _int(s: object) -> int | None:
    v = getattr(s, "value", None)
    known = getattr(s, "known", False)
    return v if known and isinstance(v, int) and not isinstance(v, bool) else None


def launch_memory(d: Deployment, max_model_len: int) -> LaunchMemory | None:
    """The budget of ``d`` at ``max_model_len`` (None when a fact is missing)."""
    return d.derived(f"memory.vllm_launch.{max_model_len}",
                     lambda dep: _compute(dep, max_model_len))


_KNOWN = attrgetter("known")


def _compute(d: Deployment, max_model_len: int) -> LaunchMemory | None:
    inv, lay, model, g = d.inv, d.layout, d.model, d.gpu
    if not d.adapter.has(VLLM_ARGS) or lay is None or not lay.known or model is None \
            or model.shape is None:
        return None
    if g is None or g.spec is None or model.kv_bytes is None:
        return None
    settings = (inv.gpu_memory_utilization, inv.kv_cache_memory_bytes, inv.cpu_offload_gb,
                inv.max_num_seqs, inv.max_num_batched_tokens, inv.enforce_eager,
                inv.decode_context_parallel_size, inv.enable_lora)
    if not all(map(_KNOWN, settings)):
        return None
    dcp = _int(inv.decode_context_parallel_size) or 1
    pcp = lay.pcp.value
    if not context_parallel_valid(lay.tp.value, pcp, dcp):
        return None  # vLLM refuses the layout (ParallelConfig)
    if pcp > 1 and model.shape.sliding_window and model.shape.sliding_layers:
        # not modelled: vLLM's sliding-window KV manager asserts "PCP not support sliding
        # window attn now" (v1/core/single_type_kv_cache_manager.py SlidingWindowManager)
        return None
    util = inv.gpu_memory_utilization.value
    if not isinstance(util, (int, float)) or isinstance(util, bool) or not 0 < util <= 1:
        return None
    kvmem = None
    if inv.kv_cache_memory_bytes.value is not None:
        kvmem = _int(inv.kv_cache_memory_bytes)
        if kvmem is None or kvmem <= 0:
            return None
    offload = inv.cpu_offload_gb.value
    if isinstance(offload, (int, float)) and not 0 <= float(offload) * GIB < float("inf"):
        return None  # --cpu-offload-gb inf/nan/negative, or so large its bytes overflow (1e308)
    offload_bytes = int(float(offload) * GIB) if isinstance(offload, (int, float)) else 0
    seqs = _int(inv.max_num_seqs) if inv.max_num_seqs.value is not None else None
    tokens = _int(inv.max_num_batched_tokens) \
        if inv.max_num_batched_tokens.value is not None else None
    if (inv.max_num_seqs.value is not None and not seqs) or \
            (inv.max_num_batched_tokens.value is not None and not tokens):
        return None
    shape = model.shape
    if lay.pp.value > shape.layers or max_model_len <= 0:
        return None  # vLLM refuses the layout itself
    bits, method = vb.weight_format(model.weights.bits, model.weights.label,
                                    model.weights.origin, shape.quantization)
    dtype = inv.dtype.value if inv.dtype.known and isinstance(inv.dtype.value, str) else None
    # the activation dtype as kv_cache_bytes_per_value reads it: --dtype, else the checkpoint's
    if dtype and dtype != "auto":
        act_bits = 32.0 if knowledge.dtype_bits(dtype) == 32.0 else 16.0
    else:
        act_bits = 32.0 if shape.quantization is None and \
            knowledge.dtype_bits(shape.dtype) == 32.0 else 16.0
    lora = None
    if inv.enable_lora.value is True:
        lora = lora_slots(d, shape, act_bits)
        if lora is None:
            return None  # adapters vLLM would size in a way not modelled: the textbook budget
    card, known = card_bytes(g.spec)
    env = d.launch.env.get(ESTIMATE_CUDAGRAPHS_ENV)
    # MoE layers flatten tp × dp × pcp (fused_moe/config.py flatten_tp_across_dp_and_pcp);
    # dense layers are split over tp only, each pcp rank holding the tp-sharded model
    ep = lay.dp.value * pcp
    x = vb.Inputs(shape=shape, card_bytes=card, utilization=float(util), weight_bits=bits,
                  quant_method=method, kv_bytes=model.kv_bytes, max_model_len=max_model_len,
                  tp=lay.tp.value, pp=lay.pp.value, ep=ep, activation_bits=act_bits,
                  max_num_seqs=seqs, max_num_batched_tokens=tokens,
                  enforce_eager=inv.enforce_eager.value is True, kv_cache_memory_bytes=kvmem,
                  offload_bytes=offload_bytes, lora=lora, dcp=dcp, pcp=pcp,
                  device_name=g.spec.name,
                  release=str(inv.version),
                  estimate_cudagraphs_env=env.value if env is not None else None)
    unmeasured = vb.PCP_NON_TORCH_SPREAD if pcp > 1 and lay.tp.value == 1 else 0
    return LaunchMemory(vb.budget(x), known, str(inv.version), float(util), unmeasured)


def context_parallel_valid(tp: int, pcp: int, dcp: int) -> bool:
    """vLLM's check of the context-parallel sizes (vllm/config/parallel.py ParallelConfig,
    0.30.0): without PCP, DCP reuses the TP ranks and must divide tp; with PCP, DCP is off or
    spans the PCP axis or the whole TP × PCP axis."""
    if dcp < 1 or pcp < 1:
        return False
    if pcp == 1:
        return tp % dcp == 0
    return dcp in (1, pcp, tp * pcp)


# vLLM 0.30.0 vllm/config/lora.py: MaxLoRARanks = Literal[1, 8, 16, 32, 64, 128, 256, 320, 512]
LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
# Model classes whose LoRA modules lora_stage_bytes follows (dense qkv/o/gate_up/down linear
# layers), and whether they list embed_tokens/lm_head as embedding_modules (vLLM 0.30.0
# vllm/model_executor/models/llama.py LlamaForCausalLM and qwen3.py Qwen3ForCausalLM do;
# qwen2.py Qwen2ForCausalLM and mistral.py MistralForCausalLM do not).
LORA_FAMILIES = {"llama": True, "qwen3": True, "qwen2": False, "mistral": False}
LORA_DTYPE_BYTES = {"float16": 2.0, "bfloat16": 2.0, "float32": 4.0}


def lora_slots(d: Deployment, shape: ModelShape, activation_bits: float) -> vb.LoraSlots | None:
    """The adapter slots --enable-lora allocates (None when vLLM would size them in a way the
    budget does not follow: an unknown model class, MoE, --lora-target-modules, a rank vLLM
    rejects)."""
    inv = d.inv
    family = LORA_FAMILIES.get(shape.family)
    if family is None or knowledge.lora_modules(shape) is None:
        return None
    loras, rank = _int(inv.max_loras), _int(inv.max_lora_rank)
    if loras is None or rank is None or loras < 1 or rank not in LORA_RANKS:
        return None
    targets, dtype = inv.setting("lora_target_modules"), inv.setting("lora_dtype")
    sharded = inv.fully_sharded_loras
    if not (targets.known and dtype.known and sharded.known) or targets.value:
        return None
    if dtype.value in (None, "auto"):
        per_value = activation_bits / 8  # LoRAConfig: auto follows the model dtype
    elif isinstance(dtype.value, str) and dtype.value in LORA_DTYPE_BYTES:
        per_value = LORA_DTYPE_BYTES[dtype.value]
    else:
        return None
    return vb.LoraSlots(loras, rank, per_value, sharded.value is True, family)


def log_lines(m: LaunchMemory) -> tuple[str, ...]:
    """The budget as vLLM logs it at start-up (gpu_worker.py, kv_cache_utils.py)."""
    b = m.budget
    card = "" if m.card_known else " (CUDA total not catalogued: the marketed size)"

    def gib(v: int) -> str:
        return f"{v / GIB:.2f} GiB"
    lines = [f"vLLM {m.release}: requested memory ceil({gib(b.gpu_memory)}{card} × "
             f"{m.utilization:g}) "
             f"= {gib(b.requested)} (v1/worker/utils.py request_memory)",
             f"Model loading took {gib(b.weights)} per GPU"
             + (f" ({gib(b.lora)} of it LoRA buffers)" if b.lora else "")
             + f"; activation peak {gib(b.activation)}; "
             f"non-torch {gib(b.non_torch)}; CUDA graphs {gib(b.cudagraph)}"]
    if b.kv_from_flag:
        lines.append(f"KV cache memory {gib(b.kv_budget)} (--kv-cache-memory-bytes)")
    else:
        lines.append(f"Available KV cache memory: {gib(b.kv_budget)} = requested − weights − "
                     "activation − non-torch − CUDA graphs (gpu_worker.py "
                     "determine_available_memory)")
    if b.kv_budget > 0:
        lines.append(f"GPU KV cache size: {b.kv_tokens:,} tokens ({b.blocks:,} blocks of "
                     f"{b.groups.bytes_per_block:,} bytes); Maximum concurrency for "
                     f"{b.max_model_len:,} tokens per request: {b.max_concurrency:.2f}x")
    return tuple(lines)
