"""Memory: weights, KV cache, LoRA buffers, llama.cpp devices (MG301-MG310).

The vLLM rules share one per-GPU budget (``_vllm_budget``): usable memory (card ×
--gpu-memory-utilization), weights per GPU at the resolved precision, LoRA buffers, the KV
cache that is left, and a named overhead allowance.  Every finding prints that budget as math
lines and carries the raw numbers in ``data``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mgpu_lint.catalog import knowledge
from mgpu_lint.deployment import Deployment
from mgpu_lint.engines.catalog import version_key
from mgpu_lint.findings import Finding, Related, Severity
from mgpu_lint.launch import LLAMA_SERVER, VLLM
from mgpu_lint.sizing import llamacpp as llama_sizing
from mgpu_lint.sizing import lora as lora_sizing
from mgpu_lint.sizing import memory as mem
from mgpu_lint.sizing import vllm_budget as vb
from mgpu_lint.sizing.display import fixed, percent
from mgpu_lint.sizing.vllm_launch import LaunchMemory, launch_memory, log_lines

from .registry import Rule, rule

if TYPE_CHECKING:
    from mgpu_lint.catalog.knowledge import GpuSpec, ModelShape
    from mgpu_lint.engines import Invocation, Setting
    from mgpu_lint.source import Span

# vLLM 0.30.0 vllm/config/lora.py: MaxLoRARanks = Literal[1, 8, 16, 32, 64, 128, 256, 320, 512].
# Releases without argparse choices checked a subset at start-up (LoRAConfig.__post_init__
# possible_max_ranks), so a rank outside this list is rejected by every release.
LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
# LoRAConfig fields (vLLM 0.30.0 vllm/config/lora.py): ignored unless --enable-lora builds it.
LORA_CONFIG_KEYS = ("max_loras", "max_lora_rank", "max_cpu_loras", "lora_dtype",
                    "fully_sharded_loras", "lora_target_modules", "default_mm_loras",
                    "enable_tower_connector_lora", "specialize_active_lora",
                    "enable_mixed_moe_lora_format", "enable_moe_shared_loras")
UTILIZATION_WARN = 0.95
LORA_WARN_SHARE = 0.10  # MG306: a warning above 10% of the KV budget
LORA_INFO_SHARE = 0.01  # MG306: below 1% (vLLM's default single rank-16 slot) not worth a note
LORA_BYTES_PER_VALUE = 2.0  # --lora-dtype auto follows the 16-bit activation dtype
# vllm/envs.py (0.30.0): VLLM_ALLOW_LONG_MAX_MODEL_LEN is on for "1" or "true"
ALLOW_LONG_ENV = "VLLM_ALLOW_LONG_MAX_MODEL_LEN"
TRUTHY_ENV = ("1", "true")
# hf-overrides keys that change the derived length in ways the shape does not model
OTHER_LENGTH_KEYS = ("n_positions", "max_seq_len", "seq_length", "model_max_length",
                     "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len",
                     "text_config", "original_max_position_embeddings")
FALSEY = ("off", "disabled", "false", "0")  # llama.cpp's falsey words (common/arg.cpp)
GGUF_ORIGINS = ("GGUF type", "GGUF header")


def gb(value: float, digits: int = 1) -> str:
    return f"{fixed(value / 1e9, digits)} GB"


def size(value: float) -> str:
    """MB below a gigabyte (adapters print as 83.9 MB), GB above."""
    return f"{fixed(value / 1e6, 1)} MB" if value < 1e9 else gb(value, 2)


def _int(setting: Setting) -> int | None:
    v = setting.value
    return v if setting.known and isinstance(v, int) and not isinstance(v, bool) else None


def _long(inv: Invocation, key: str) -> str:
    """The option's canonical long name in the launch's catalog."""
    spec = inv.catalog.by_key.get(key)
    names = [n for n in spec.names if n.startswith("--")] if spec is not None else []
    return names[0] if names else "--" + key.replace("_", "-")


def _flag(inv: Invocation, setting: Setting) -> str:
    """The spelling the launch used, else the canonical long name."""
    win = setting.winner
    return win.spelling if win is not None else _long(inv, setting.key)


def _gpu_phrase(d: Deployment, spec: GpuSpec) -> str:
    return f"assuming {spec.name} (no file states the GPU type)" if d.gpu is not None and \
        d.gpu.assumed else spec.name


def _gpu_related(d: Deployment) -> tuple[Related, ...]:
    g = d.gpu
    if g is None:
        return ()
    out = []
    if g.span is not None:
        out.append(Related(d.source, g.span, f"the GPU type ({g.origin})"))
    if g.request is not None and g.request.span is not None:
        out.append(Related(d.source, g.request.span, f"the GPUs ({g.request.origin})"))
    return tuple(out)


def _cap(severity: Severity, assumed: bool) -> Severity:
    return Severity.WARNING if assumed and severity == Severity.ERROR else severity


# ----------------------------------------------------------------------------- vLLM budget


@dataclass(frozen=True)
class _Budget:
    """Everything the vLLM memory rules share for one launch."""

    shape: ModelShape
    spec: GpuSpec
    assumed: bool
    tp: int
    pp: int
    dp: int
    dcp: int
    kv_value_bytes: float
    weights_total: float
    expert_weights: float
    offload: float
    lora: float
    lora_known: bool
    gpu: mem.GpuBudget
    math: tuple[str, ...]
    real: LaunchMemory | None = None  # the budget as vLLM sizes it (vllm_budget.py)

    def kv_sequence(self, tokens: int) -> float:
        return mem.kv_bytes_per_sequence(self.shape, tokens, self.kv_value_bytes, self.tp,
                                         self.pp) / self.dcp

    def lines(self, kv_needed: float | None = None, label: str = "") -> tuple[str, ...]:
        """The budget as math lines; with ``kv_needed`` the KV demand and what stays free."""
        g = self.gpu
        out = list(self.math)
        if kv_needed is not None:
            out.append(f"KV needed{label}: {gb(kv_needed)} of the {gb(g.kv)} KV budget")
            out.append(f"free: {gb(g.usable)} − {gb(g.weights)} − {gb(g.lora)} − "
                       f"{gb(kv_needed)} = {gb(g.free(kv_needed))}")
        if self.real is not None:
            out.extend(log_lines(self.real))
            out.append(f"uncertainty of the measured terms: {gib(self.real.uncertainty)}; "
                       "within it a verdict is a warning")
        else:
            out.append(f"overhead allowance (activations, CUDA graphs, CUDA context, NCCL): "
                       f"{gb(g.allowance)} ({percent(mem.OVERHEAD_SHARE, 0)} of usable); "
                       "within it a verdict is a warning")
        return tuple(out)

    def data(self, **extra: Any) -> dict[str, Any]:
        g = self.gpu
        return {"card_bytes": g.card, "utilization": g.utilization, "usable_bytes": g.usable,
                "weights_bytes": self.weights_total, "weights_per_gpu_bytes": g.weights,
                "offload_bytes": self.offload, "lora_bytes": g.lora, "kv_budget_bytes": g.kv,
                "overhead_allowance_bytes": g.allowance, "tp": self.tp, "pp": self.pp,
                "dp": self.dp, "kv_bytes_per_value": self.kv_value_bytes,
                "gpu": self.spec.id, "gpu_assumed": self.assumed,
                **(_real_data(self.real) if self.real is not None else {}), **extra}


def gib(value: float) -> str:
    return f"{value / vb.GIB:.2f} GiB"


def _real_data(m: LaunchMemory) -> dict[str, Any]:
    b = m.budget
    return {"vllm": {"gpu_memory_bytes": b.gpu_memory, "requested_bytes": b.requested,
                     "weights_bytes_per_gpu": b.weights, "activation_bytes": b.activation,
                     "non_torch_bytes": b.non_torch, "cudagraph_bytes": b.cudagraph,
                     "kv_cache_bytes_per_gpu": b.kv_budget,
                     "kv_cache_tokens": b.kv_tokens if b.kv_budget > 0 else 0,
                     "max_concurrency": round(b.max_concurrency, 2) if b.kv_budget > 0 else 0,
                     "uncertainty_bytes": m.uncertainty}}


def _lora_reservation(d: Deployment, shape: ModelShape, pp: int) -> tuple[float, bool, str] | None:
    """(bytes per GPU, modules known, math line); None when a LoRA value is broken."""
    inv = d.inv
    if inv.enable_lora.value is not True:
        return 0.0, True, ""
    loras, rank = _int(inv.max_loras), _int(inv.max_lora_rank)
    if loras is None or rank is None or loras < 1 or rank not in LORA_RANKS:
        return None
    modules = knowledge.lora_modules(shape)
    if modules is None:
        return 0.0, False, "LoRA buffers: unknown for this model's modules (not counted)"
    layers = math.ceil(shape.layers / pp)
    size = lora_sizing.lora_reservation_bytes(loras, rank, modules, layers, LORA_BYTES_PER_VALUE)
    per_rank = lora_sizing.lora_params_per_rank_per_layer(modules)
    return size, True, (f"LoRA buffers: {loras} adapters × rank {rank} × {per_rank:,} × {layers} "
                        f"layers × 2 bytes = {gb(size, 2)}")


def _vllm_budget(d: Deployment) -> _Budget | None:
    """The per-GPU budget, or None when a fact it needs is missing, broken or unresolved.
    Computed once per launch and shared by the memory rules."""
    return d.derived("memory.vllm_budget", _compute_vllm_budget)


def _compute_vllm_budget(d: Deployment) -> _Budget | None:
    inv, lay, model, g = d.inv, d.layout, d.model, d.gpu
    if d.engine != VLLM or lay is None or not lay.known or model is None or model.shape is None:
        return None
    if g is None or g.spec is None or model.kv_bytes is None:
        return None
    if lay.pcp.value > 1:
        return None
    shape, spec = model.shape, g.spec
    util_s, kvmem_s, off_s = inv.gpu_memory_utilization, inv.kv_cache_memory_bytes, \
        inv.cpu_offload_gb
    if not all(s.known for s in (util_s, kvmem_s, off_s, inv.dtype, inv.quantization,
                                 inv.kv_cache_dtype, inv.enable_lora,
                                 inv.decode_context_parallel_size)):
        return None
    util = util_s.value
    if not isinstance(util, (int, float)) or not 0 < util <= 1:
        return None  # MG305 reports it
    kvmem = _int(kvmem_s) if kvmem_s.value is not None else None
    if kvmem_s.value is not None and (kvmem is None or kvmem <= 0):
        return None
    offload_gib = off_s.value if isinstance(off_s.value, (int, float)) else 0
    dcp = _int(inv.decode_context_parallel_size) or 1
    tp, pp, dp = lay.tp.value, lay.pp.value, lay.dp.value
    lora = _lora_reservation(d, shape, pp)
    if lora is None:
        return None
    lora_bytes, lora_known, lora_line = lora
    bits = model.weights.bits
    total = mem.weights_bytes(shape.params, bits)
    experts = mem.weights_bytes(mem.expert_params(shape), bits)
    offload = float(offload_gib) * mem.GIB
    per_gpu = mem.weights_bytes_per_gpu(total, experts, tp, pp, dp, offload)
    budget = mem.GpuBudget(spec.memory_bytes, None if kvmem is not None else float(util),
                           per_gpu, lora_bytes, float(kvmem) if kvmem is not None else None)
    lines = []
    if kvmem is not None:
        lines.append(f"{_flag(d.inv, kvmem_s)} {kvmem_s.winner.raw if kvmem_s.winner else kvmem}: "
                     f"KV budget {gb(kvmem)} per GPU; weights judged against the whole "
                     f"{gb(spec.memory_bytes)} card")
    else:
        lines.append(f"usable: {gb(spec.memory_bytes)} ({spec.name}) × "
                     f"{_flag(d.inv, util_s)} {util:g} = {gb(budget.usable)} per GPU")
    lines.append(f"weights: {shape.params / 1e9:.4g}B params × {bits:g} bits "
                 f"({model.weights.label}) = {gb(total)}")
    if experts > 0 and dp > 1:
        lines.append(f"weights per GPU: {gb(total - experts)} dense / (tp {tp} × pp {pp}) + "
                     f"{gb(experts)} experts / (tp {tp} × dp {dp} × pp {pp}) = "
                     f"{gb(per_gpu + offload)}")
    else:
        lines.append(f"weights per GPU: {gb(total)} / (tp {tp} × pp {pp}) = "
                     f"{gb(per_gpu + offload)}")
    if offload > 0:
        lines.append(f"{_flag(d.inv, off_s)} {offload_gib:g} GiB stays in CPU memory: "
                     f"{gb(per_gpu)} of weights on each GPU")
    if lora_line:
        lines.append(lora_line)
    kv_per_token = mem.kv_bytes_per_token_per_gpu(shape, tp, pp, model.kv_bytes) / dcp
    layers = math.ceil(mem.full_attention_layers(shape) / pp)
    if shape.is_mla:
        what = (f"{layers} layers × (latent {shape.kv_lora_rank} + rope "
                f"{shape.qk_rope_head_dim}) × {model.kv_bytes:g} bytes (MLA, not split by tp)")
    else:
        heads = mem.kv_heads_per_gpu(shape.kv_heads, tp)
        what = (f"{layers} layers × 2 × {heads} KV heads × {shape.head_dim} × "
                f"{model.kv_bytes:g} bytes ({shape.kv_heads} KV heads / tp {tp}, at least 1)")
    if dcp > 1:
        what += f" / dcp {dcp}"
    lines.append(f"KV per token per GPU: {what} = {fixed(kv_per_token / 1024, 0)} KiB")
    if kvmem is None:
        lines.append(f"KV budget: {gb(budget.usable)} − {gb(per_gpu)} weights − "
                     f"{gb(lora_bytes)} LoRA = {gb(budget.kv)} per GPU")
    length, _ = _max_model_len(d, shape)
    real = launch_memory(d, length) if length else None
    return _Budget(shape, spec, g.assumed, tp, pp, dp, dcp, model.kv_bytes, total, experts,
                   offload, lora_bytes, lora_known, budget, tuple(lines), real)


def _real_verdict(b: _Budget) -> tuple[str | None, str]:
    """(verdict, what) of MG301 from vLLM's own budget: "exceeds"/"tight" and whether the
    weights exceed the card ("card") or leave no KV cache memory ("cache")."""
    m = b.real
    assert m is not None
    r, u = m.budget, m.uncertainty
    if r.weights > r.gpu_memory:
        return "exceeds", "card"
    if r.kv_from_flag:
        # --kv-cache-memory-bytes skips the profile: weights + KV + peak must fit the card
        need = r.weights + r.kv_budget + r.activation + r.non_torch + r.cudagraph
        return mem.memory_verdict(need, r.gpu_memory, u), "card"
    return mem.memory_verdict(0, r.kv_budget, u), "cache"


def _weights_verdict(b: _Budget) -> tuple[str | None, float, float]:
    """(verdict, need, limit) for the weights and LoRA buffers against usable memory; with
    vLLM's own budget, the weights against the card and the KV budget against zero."""
    g = b.gpu
    if b.real is not None:
        r = b.real.budget
        verdict, _ = _real_verdict(b)
        return verdict, float(r.weights), float(r.requested - r.activation - r.non_torch
                                                 - r.cudagraph)
    need = g.weights + g.lora + (g.kv_memory_bytes or 0.0)
    return mem.memory_verdict(need, g.usable, g.allowance), need, g.usable


def _max_model_len(d: Deployment, shape: ModelShape) -> tuple[int | None, bool]:
    """(the max model length vLLM uses, whether the launch states it); None when unknown,
    auto-fitted (-1) or rejected (MG304)."""
    setting = d.inv.max_model_len
    if not setting.known:
        return None, True
    if setting.value is None:
        return _model_limit(d, shape), False
    value = _int(setting)
    if value is None or value <= 0:
        return None, True
    limit = _model_limit(d, shape)
    if limit is not None and value > limit and not _long_allowed(d):
        return None, True
    return value, True


# Up to 0.25.1 (the sampled wheels 0.10.2, 0.15.1, 0.20.2, 0.25.1) _get_and_verify_max_len left
# only su, longrope and llama3 unscaled, and took yarn's length as
# original_max_position_embeddings × factor; 0.30.0 and 0.33.0 also leave yarn, deepseek_yarn,
# deepseek_llama_scaling, mrope and default as they are (vllm/config/model.py).  0.26-0.29 are
# not sampled.  Where the releases disagree about a rope type, the limit is unknown.
OLD_UNSCALED_ROPE = frozenset({"su", "longrope", "llama3"})
NEW_ROPE_RULE = "0.30.0"
LAST_OLD_ROPE_RULE = "0.25.1"


def _model_limit(d: Deployment, shape: ModelShape) -> int | None:
    """vLLM's derived max model length, with --hf-overrides (and --rope-scaling, in the
    releases that have it) applied; None when unknown."""
    limit = _model_limit_030(d, shape)
    if limit is None or d.engine != VLLM:
        return limit
    release = version_key(d.inv.version)
    if release >= version_key(NEW_ROPE_RULE):
        return limit
    kind = _rope_kind(d, shape)
    if kind is None or kind in OLD_UNSCALED_ROPE or kind not in mem.UNSCALED_ROPE_TYPES:
        return limit  # both rules agree (no scaling, su/longrope/llama3, or a multiplied type)
    return None  # yarn and friends: scaled differently before 0.30 (see above)


def _rope_kind(d: Deployment, shape: ModelShape) -> str | None:
    """The RoPE type vLLM sees: --hf-overrides' over --rope-scaling over the model's."""
    hf = d.inv.hf_overrides
    if hf.known and isinstance(hf.value, dict):
        for key in ("rope_scaling", "rope_parameters"):
            raw = hf.value.get(key)
            if isinstance(raw, dict):
                kind = raw.get("rope_type") or raw.get("type")
                return kind if isinstance(kind, str) else None
    flag = _rope_override(d)
    if isinstance(flag, knowledge.RopeScaling):
        return flag.type
    return shape.rope_scaling.type if shape.rope_scaling is not None else None


def _rope_override(d: Deployment) -> knowledge.RopeScaling | None | bool:
    """`--rope-scaling` (vLLM up to 0.10.2): its RoPE scaling, None when absent, False when
    unreadable."""
    s = d.inv.setting("rope_scaling")
    if not s.given:
        return None
    if not s.known or not isinstance(s.value, dict):
        return False
    kind, factor = s.value.get("rope_type") or s.value.get("type"), s.value.get("factor")
    if not isinstance(kind, str) or not isinstance(factor, (int, float)) or factor <= 0:
        return False
    return knowledge.RopeScaling(type=kind, factor=float(factor))


def _model_limit_030(d: Deployment, shape: ModelShape) -> int | None:
    """vLLM 0.30.0's derived max model length, with --hf-overrides applied; None when
    unknown."""
    hf = d.inv.hf_overrides
    if not hf.known:
        return None
    flag_rope = _rope_override(d)
    if flag_rope is False:
        return None
    if hf.value is None:
        return mem.derived_max_model_len(shape, rope_scaling=flag_rope)
    if not isinstance(hf.value, dict):
        return None
    over = hf.value
    if any(k in over for k in OTHER_LENGTH_KEYS):
        return None
    positions = over.get("max_position_embeddings")
    if positions is not None and (not isinstance(positions, int) or positions <= 0):
        return None
    rope = flag_rope  # --hf-overrides' own rope_scaling replaces it
    for key in ("rope_scaling", "rope_parameters"):
        if key not in over:
            continue
        raw = over[key]
        if not isinstance(raw, dict):
            return None
        kind, factor = raw.get("rope_type") or raw.get("type"), raw.get("factor")
        if not isinstance(kind, str) or not isinstance(factor, (int, float)) or factor <= 0:
            return None
        rope = knowledge.RopeScaling(type=kind, factor=float(factor))
        if kind in mem.UNSCALED_ROPE_TYPES and positions is None:
            return None  # whether the positions already count the factor depends on the config
    return mem.derived_max_model_len(shape, max_positions=positions, rope_scaling=rope)


def _long_allowed(d: Deployment) -> bool:
    """VLLM_ALLOW_LONG_MAX_MODEL_LEN on, or set to a value we cannot see (then not judged)."""
    env = d.launch.env.get(ALLOW_LONG_ENV)
    return env is not None and (env.value is None or env.value.strip().lower() in TRUTHY_ENV)


def _model_span(d: Deployment) -> Span:
    return d.model.span if d.model is not None and d.model.span is not None else d.program_span


def _layout_related(d: Deployment) -> tuple[Related, ...]:
    lay = d.layout
    if lay is None:
        return ()
    return tuple(Related(d.source, s.span, f"{n} {s.value}") for n, s in lay.explicit_sizes
                 if s.span is not None)


def _setting_related(d: Deployment, *settings: Setting) -> tuple[Related, ...]:
    return tuple(Related(d.source, s.span, f"{_flag(d.inv, s)} {s.winner.raw if s.winner else ''}"
                         .strip()) for s in settings if s.given and s.span is not None)


@rule("MG301", "weights-exceed-memory", Severity.ERROR,
      "weights per GPU exceed the memory vLLM may use on each GPU")
def weights_exceed_memory(d: Deployment) -> Iterator[Finding]:
    """
    What it does: sizes one GPU as vLLM does at start-up (linter/sizing/vllm_budget.py, from
    vLLM 0.30.0's gpu_worker.py determine_available_memory): the card as CUDA reports it,
    requested = ceil(card × --gpu-memory-utilization), the weights per GPU as vLLM loads them
    (quantized linear layers with their scales, 16-bit embeddings and lm_head, split over
    tp/pp and the experts over tp × dp), the activation peak, memory outside PyTorch and the
    CUDA-graph estimate.  It reports weights larger than the card, and a KV budget at or below
    zero.  --cpu-offload-gb moves that many GiB per GPU to CPU memory.

    Why is this bad? Weights larger than the card fail the load with CUDA out of memory.
    Weights that load but leave no KV budget fail next: "No available memory for the cache
    blocks. Try increasing `gpu_memory_utilization`" (vllm/v1/core/kv_cache_utils.py
    _check_enough_kv_cache_memory).  For example Llama 3.1 405B in BF16 is 810.0 GB of
    weights: 94.5 GiB per GPU on 8 × H100 (79.19 GiB each).

    Within the uncertainty of the measured terms (0.5 GiB, more when the card's CUDA total is
    not catalogued) the finding is a warning; so is any verdict that rests on a GPU type no
    file states.  LoRA launches keep the textbook budget (card × utilization − weights −
    adapter buffers, 5% allowance).

    Use instead: more tensor- or pipeline-parallel GPUs, a quantized checkpoint (FP8 halves
    BF16), larger GPUs, a higher --gpu-memory-utilization, --enforce-eager (no CUDA-graph
    reserve), or --cpu-offload-gb (slow: the offloaded weights cross PCIe at every step).
    """
    b = _vllm_budget(d)
    if b is None:
        return
    verdict, need, limit = _weights_verdict(b)
    if verdict is None:
        return
    g = b.gpu
    severity = _cap(Severity.ERROR if verdict == "exceeds" else Severity.WARNING, b.assumed)
    what = "weights and LoRA buffers" if g.lora else "weights"
    if b.real is not None:
        r = b.real.budget
        _, kind = _real_verdict(b)
        if kind == "card" and not r.kv_from_flag:
            gpus = mem.gpus_needed(b.weights_total, r.gpu_memory)
            message = (f"weights need {gib(r.weights)} per GPU (tp {b.tp} × pp {b.pp}) but the "
                       f"card has {gib(r.gpu_memory)} ({_gpu_phrase(d, b.spec)}): the model does "
                       "not load (CUDA out of memory while loading the weights)")
            hint = (f"the weights alone need at least {gpus} GPUs of this type: raise tp/pp, use "
                    "a quantized checkpoint, or larger GPUs")
        elif kind == "card":
            message = (f"weights ({gib(r.weights)}), --kv-cache-memory-bytes "
                       f"({gib(r.kv_budget)}) and the activation peak "
                       f"{'exceed' if verdict == 'exceeds' else 'nearly fill'} the "
                       f"{gib(r.gpu_memory)} card ({_gpu_phrase(d, b.spec)})"
                       + (": the KV cache cannot be allocated" if verdict == "exceeds" else ""))
            hint = "lower --kv-cache-memory-bytes, raise tp/pp or use a quantized checkpoint"
        elif verdict == "exceeds":
            message = (f"the weights load ({gib(r.weights)} per GPU) but nothing is left for the "
                       f"KV cache ({gib(r.kv_budget)} of {gib(r.requested)} requested on "
                       f"{_gpu_phrase(d, b.spec)}): vLLM refuses to start with \"No available "
                       "memory for the cache blocks\" (vllm/v1/core/kv_cache_utils.py "
                       "_check_enough_kv_cache_memory)")
            hint = ("raise --gpu-memory-utilization or tp/pp, use a quantized checkpoint, or "
                    "--enforce-eager to drop the CUDA-graph reserve")
        else:
            message = (f"the weights ({gib(r.weights)} per GPU) leave {gib(r.kv_budget)} for "
                       f"the KV cache of the {gib(r.requested)} vLLM requests on "
                       f"{_gpu_phrase(d, b.spec)}: within the {gib(b.real.uncertainty)} this "
                       "estimate can be off, vLLM may find no memory for the cache blocks")
            hint = "raise tp/pp or use a quantized checkpoint to leave room for the KV cache"
    elif verdict == "exceeds":
        gpus = mem.gpus_needed(b.weights_total + g.lora * b.tp * b.pp, g.usable)
        message = (f"{what} need {gb(need)} per GPU (tp {b.tp} × pp {b.pp}) but vLLM may use "
                   f"{gb(limit)} of each GPU ({_gpu_phrase(d, b.spec)}): the model does not load")
        hint = (f"the weights alone need at least {gpus} GPUs of this type: raise tp/pp, use a "
                "quantized checkpoint, or larger GPUs")
    else:
        message = (f"{what} take {gb(need)} of the {gb(limit)} vLLM may use per GPU "
                   f"({_gpu_phrase(d, b.spec)}): {gb(limit - need)} is left for the KV cache "
                   "and the engine's own overhead")
        hint = "raise tp/pp or use a quantized checkpoint to leave room for the KV cache"
    related = _layout_related(d) + _gpu_related(d) + _setting_related(
        d, d.inv.gpu_memory_utilization, d.inv.cpu_offload_gb, d.inv.kv_cache_memory_bytes)
    yield Finding("MG301", severity, message, d.source, _model_span(d), hint=hint,
                  math=b.lines(), related=related,
                  data=b.data(need_bytes=need, limit_bytes=limit, verdict=verdict))


@rule("MG302", "kv-cannot-hold-one-sequence", Severity.ERROR,
      "the KV cache cannot hold one --max-model-len sequence")
def kv_cannot_hold_one_sequence(d: Deployment) -> Iterator[Finding]:
    """
    What it does: repeats vLLM's own start-up check (check_enough_kv_cache_memory,
    vllm/v1/core/kv_cache_utils.py, 0.30.0): the KV budget of the vLLM memory model (see
    MG301) less one null block, against the blocks one --max-model-len request takes in every
    KV cache group (full-attention layers cdiv(L, 16) blocks, sliding-window layers
    cdiv(min(window − 1 + tokens in flight, L), 16) + 1, groups padded as vLLM pads them; MLA
    latents and FP8 KV change the page).  Without --max-model-len, vLLM uses the model's
    derived limit (max positions, with RoPE scaling).  Silent when MG301 reports no KV
    budget at all (never both for one shortfall).

    Why is this bad? vLLM refuses to start: "To serve at least one request with the model's max
    seq len (L), (X GiB KV cache is needed, which is larger than the available KV cache memory
    (Y GiB). Based on the available memory, the estimated maximum model length is N." The
    finding quotes the message with vLLM's estimated maximum length.  For example Llama 3.1
    70B in BF16 at tp 2 on H100 at 0.95 leaves 3.8 GiB of KV per GPU; 32,000 tokens need 4.9.

    Use instead: a smaller --max-model-len (at most the estimated maximum), more GPUs, FP8 KV
    cache (--kv-cache-dtype fp8), a higher --gpu-memory-utilization, or --max-model-len auto to
    let vLLM fit it.
    """
    b = _vllm_budget(d)
    if b is not None and b.real is not None:
        yield from _one_request(d, b)
        return
    if b is None or _weights_verdict(b)[1] > b.gpu.usable:
        return
    length, stated = _max_model_len(d, b.shape)
    if length is None:
        return
    need = b.kv_sequence(length)
    g = b.gpu
    verdict = mem.memory_verdict(need, g.kv, g.allowance)
    if verdict is None or (verdict == "tight" and _weights_verdict(b)[0] is not None):
        return  # a tight budget is MG301's finding
    fits = mem.max_tokens_in(b.shape, g.kv * b.dcp, b.kv_value_bytes, b.tp, b.pp)
    setting = d.inv.max_model_len
    source = f"{_flag(d.inv, setting)} {length:,}" if stated else \
        f"the model's default max length {length:,} (no {_flag(d.inv, setting)})"
    if verdict == "exceeds":
        severity = _cap(Severity.ERROR, b.assumed)
        message = (f"{source} needs {gb(need)} of KV cache per GPU for one sequence, but "
                   f"{gb(max(g.kv, 0.0))} is left ({_gpu_phrase(d, b.spec)}): vLLM refuses to "
                   f"start; at most {fits:,} tokens fit")
    else:
        severity = Severity.WARNING
        message = (f"{source} needs {gb(need)} of KV cache per GPU for one sequence, about all "
                   f"of the {gb(g.kv)} left ({_gpu_phrase(d, b.spec)}): the engine's own "
                   f"overhead may leave too little; {fits:,} tokens fit at zero overhead")
    span = setting.span if stated and setting.span is not None else _model_span(d)
    yield Finding("MG302", severity, message, d.source, span,
                  hint=f"lower {_flag(d.inv, setting)} to at most {fits:,}, add GPUs, or use "
                       f"{_long(d.inv, 'kv_cache_dtype')} fp8",
                  math=b.lines(need, f" for one {length:,}-token sequence"),
                  related=_layout_related(d) + _gpu_related(d),
                  data=b.data(kv_needed_bytes=need, max_model_len=length, max_tokens=fits,
                              verdict=verdict))


def _one_request(d: Deployment, b: _Budget) -> Iterator[Finding]:
    """MG302 from vLLM's own check: the KV budget less the null block against the blocks one
    max-model-len request takes (kv_cache_utils.py check_enough_kv_cache_memory, 0.30.0)."""
    if _weights_verdict(b)[0] is not None:
        return  # no memory for the cache blocks at all: MG301's finding, never both
    m = b.real
    assert m is not None
    r = m.budget
    length, stated = _max_model_len(d, b.shape)
    if length is None:
        return
    avail = r.kv_budget - r.groups.bytes_per_block
    need = r.request_bytes
    verdict = mem.memory_verdict(need, avail, m.uncertainty)
    if verdict is None:
        return
    estimated = r.estimated_max_model_len()
    setting = d.inv.max_model_len
    source = f"{_flag(d.inv, setting)} {length:,}" if stated else \
        f"the model's default max length {length:,} (no {_flag(d.inv, setting)})"
    quote = (f"\"To serve at least one request with the model's max seq len ({length}), "
             f"({gib(need)} KV cache is needed, which is larger than the available KV cache "
             f"memory ({gib(avail)}). Based on the available memory, the estimated maximum "
             f"model length is {estimated}.\" (vllm/v1/core/kv_cache_utils.py "
             "_check_enough_kv_cache_memory)")
    if verdict == "exceeds":
        # a card whose CUDA total is not catalogued is sized at its marketed size read as GiB,
        # an upper bound (H100 80 GB reports 79.19 GiB; 24 GB cards 23.58-23.69 GiB in vLLM
        # logs): a refusal found with it holds on the real card
        severity = _cap(Severity.ERROR, b.assumed)
        message = (f"{source}: one request needs {gib(need)} of KV cache per GPU but vLLM has "
                   f"{gib(avail)} ({_gpu_phrase(d, b.spec)}): vLLM refuses to start: {quote}")
    else:
        severity = Severity.WARNING
        message = (f"{source}: one request needs {gib(need)} of KV cache per GPU, about all of "
                   f"the {gib(avail)} vLLM has ({_gpu_phrase(d, b.spec)}); within the "
                   f"{gib(m.uncertainty)} this estimate can be off, vLLM may refuse to start "
                   f"(estimated maximum model length {estimated:,})")
    span = setting.span if stated and setting.span is not None else _model_span(d)
    yield Finding("MG302", severity, message, d.source, span,
                  hint=f"lower {_flag(d.inv, setting)} to at most {estimated:,}, add GPUs, or "
                       f"use {_long(d.inv, 'kv_cache_dtype')} fp8",
                  math=b.lines(), related=_layout_related(d) + _gpu_related(d),
                  data=b.data(kv_needed_bytes=need, kv_available_bytes=avail,
                              max_model_len=length, max_tokens=estimated, verdict=verdict))


@rule("MG303", "kv-below-concurrency", Severity.WARNING,
      "the KV cache holds fewer tokens than the expected concurrency")
def kv_below_concurrency(d: Deployment) -> Iterator[Finding]:
    """
    What it does: compares the KV cache of each engine with the expected concurrency:
    min(users, --max-num-seqs) sequences of min(context, --max-model-len) tokens, spread over
    the data-parallel engines. users and context come from the configuration (`users`,
    `context`; defaults 32 × 8,192); the message says when it
    rests on those defaults.

    Why is this bad? The KV cache is what serves users at the same time.
    70B in BF16 on 4 × H100 fits: 35.3 GB of weights and 38.3 GB of KV per GPU, 21.5 GB needed
    for 32 × 8K. On 2 × H100 the weights leave 1.4 GB: vLLM starts, but queues all but a few
    requests (preemption, long time to first token).

    Use instead: more GPUs (tp, or dp replicas), FP8 KV cache, a quantized checkpoint, or state
    the real concurrency in mgpu-lint.toml (`users`, `context`).
    """
    b = _vllm_budget(d)
    if b is None or _weights_verdict(b)[0] is not None:
        return
    length, _ = _max_model_len(d, b.shape)
    if d.inv.max_model_len.given and length is None:
        return
    s = d.settings
    seqs_cap = _int(d.inv.max_num_seqs) if d.inv.max_num_seqs.given else None
    if d.inv.max_num_seqs.given and seqs_cap is None:
        return
    users = min(s.users, seqs_cap) if seqs_cap is not None else s.users
    context = min(s.context, length) if length is not None else s.context
    g = b.gpu
    per_engine = math.ceil(users / b.dp)
    if b.real is not None:
        # vLLM's real capacity: the blocks it allocates over the blocks one context-long
        # request takes in every group (get_max_concurrency_for_kv_cache_config)
        r = b.real.budget
        if any(f.code == "MG302" for f in _one_request(d, b)):
            return  # MG302
        per_request = vb.blocks_per_request(r.groups, context, r.max_num_batched_tokens)
        fits = r.blocks // per_request if per_request else 0
        need = per_engine * per_request * r.groups.bytes_per_block
        if per_engine <= fits:
            return
    else:
        if length is not None and mem.memory_verdict(b.kv_sequence(length), g.kv,
                                                     g.allowance):
            return  # MG302
        need = per_engine * b.kv_sequence(context)
        if need <= g.kv:
            return
        fits = max(0, math.floor(g.kv / b.kv_sequence(context)))
    left = b.real.budget.kv_budget if b.real is not None else g.kv
    assumed = not {"users", "context"} & s.stated
    where = ("assuming the default concurrency of 32 users × 8,192 tokens (set `users` and "
             "`context` in mgpu-lint.toml)" if assumed else
             f"concurrency from the configuration: {s.users} users × {s.context:,} tokens")
    dp_text = f" per engine ({users} / dp {b.dp})" if b.dp > 1 else ""
    message = (f"the KV cache holds {fits} sequences of {context:,} tokens per GPU but "
               f"{per_engine} run at once{dp_text} ({gb(need)} needed, {gb(left)} left on "
               f"{_gpu_phrase(d, b.spec)}); {where}")
    yield Finding("MG303", Severity.WARNING, message, d.source, _model_span(d),
                  hint=f"add GPUs or replicas, use {_long(d.inv, 'kv_cache_dtype')} fp8, or "
                       f"lower {_flag(d.inv, d.inv.max_num_seqs)} to what fits",
                  math=((f"concurrency: min({s.users} users, {_flag(d.inv, d.inv.max_num_seqs)} "
                        f"{seqs_cap if seqs_cap is not None else 'default'}) × min({s.context:,}, "
                        f"max model len {'unknown' if length is None else format(length, ',')}) "
                        "= "
                        f"{users} × {context:,} tokens"),
                        *b.lines(need, f" for {per_engine} × {context:,} tokens")),
                  related=_layout_related(d) + _gpu_related(d),
                  data=b.data(kv_needed_bytes=need, sequences=per_engine, context=context,
                              sequences_that_fit=fits, concurrency_assumed=assumed))


@rule("MG304", "max-model-len-exceeds-model", Severity.ERROR,
      "--max-model-len above the model's derived limit")
def max_model_len_exceeds_model(d: Deployment) -> Iterator[Finding]:
    """
    What it does: compares --max-model-len with the limit vLLM derives from the model's
    config (max_position_embeddings, times the RoPE scaling factor for linear/dynamic scaling;
    llama3, yarn and longrope lengths are taken as they are), with --hf-overrides applied.
    Silent when VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set or the limit is unknown.

    Why is this bad? vLLM 0.30.0 refuses to start: "User-specified max_model_len (X) is greater
    than the derived max_model_len (…). To allow overriding this maximum, set the env var
    VLLM_ALLOW_LONG_MAX_MODEL_LEN=1" (vllm/config/model.py). With the variable set, positions
    past the trained range produce NaNs (RoPE) or out-of-bounds errors.

    Use instead: a --max-model-len within the model's limit, or a RoPE scaling override
    (--hf-overrides) that the model supports.
    """
    model = d.model
    setting = d.inv.max_model_len
    if d.engine != VLLM or model is None or model.shape is None or not setting.given:
        return
    value = _int(setting)
    if value is None or value <= 0 or setting.span is None or _long_allowed(d):
        return
    limit = _model_limit(d, model.shape)
    if limit is None or value <= limit:
        return
    rope = model.shape.rope_scaling
    how = f"{model.shape.max_positions:,} positions" + (
        f", {rope.type} RoPE scaling ×{rope.factor:g}" if rope is not None else "")
    if d.inv.hf_overrides.given:
        how += f", with {_flag(d.inv, d.inv.hf_overrides)}"
    yield Finding(
        "MG304", Severity.ERROR,
        f"{_flag(d.inv, setting)} {value:,} is above {model.shape.name}'s limit of "
        f"{limit:,} tokens ({how}): vLLM refuses to start",
        d.source, setting.span,
        hint=f"use at most {limit:,}, or set {ALLOW_LONG_ENV}=1 only if the model really "
             "handles longer positions",
        math=(f"derived max model len: {limit:,} ({how})",
              f"{_flag(d.inv, setting)}: {value:,} > {limit:,}"),
        related=(Related(d.source, _model_span(d), "the model"),),
        data={"max_model_len": value, "limit": limit},
    )


@rule("MG305", "gpu-memory-utilization-range", Severity.ERROR,
      "--gpu-memory-utilization outside (0, 1) (1 on a CUDA GPU), or above 0.95")
def gpu_memory_utilization_range(d: Deployment) -> Iterator[Finding]:
    """
    What it does: checks --gpu-memory-utilization, the share of each GPU's memory one vLLM
    instance may use (default 0.92 in 0.30.0, 0.9 in older releases).

    Why is this bad? A value outside (0, 1] is rejected at start-up ("Input should be greater
    than 0" / "less than or equal to 1", CacheConfig, vLLM 0.30.0). 1.0 on an NVIDIA GPU is
    refused too: each worker asks for total × utilization bytes and compares it with the free
    memory measured after the CUDA context and NCCL are up, which is always less than the whole
    card ("Free memory on device … on startup is less than desired GPU memory utilization",
    vllm/v1/worker/utils.py request_memory, called from gpu_worker.py Worker.init_device;
    vllm/v1/worker/gpu_worker.py in 0.10.2). Above 0.95 the rest of the card (under 4 GB of an
    80 GB GPU) must hold the CUDA context, NCCL buffers and other processes: out-of-memory
    errors at start-up or under load. From vLLM 0.21 CUDA graphs are budgeted inside the pool
    (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, on by default; gpu_worker.py
    determine_available_memory); before that they sat outside it.

    Use instead: 0.9–0.95; to give the KV cache an exact size use --kv-cache-memory-bytes.
    """
    setting = d.inv.gpu_memory_utilization
    value = setting.value
    if d.engine != VLLM or not setting.given or not setting.known or setting.span is None:
        return
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return
    flag = _flag(d.inv, setting)
    if not 0 < value <= 1:
        yield Finding("MG305", Severity.ERROR,
                      f"{flag} {value:g} is outside (0, 1]: vLLM rejects it at start-up",
                      d.source, setting.span,
                      hint="a share of the GPU's memory between 0 and 1, e.g. 0.9",
                      data={"utilization": value})
        return
    spec = d.gpu.spec if d.gpu is not None else None
    if value == 1 and (spec is None or spec.vendor == "NVIDIA"):
        # vllm/v1/worker/utils.py request_memory (0.30.0; the same test in gpu_worker.py
        # init_device in 0.10.2): requested = ceil(total × 1.0) = the whole card, compared with
        # the free memory after the CUDA context and NCCL are created, which is always less
        raw = setting.winner.raw if setting.winner is not None and setting.winner.raw \
            else f"{value:g}"
        yield Finding("MG305", Severity.ERROR,
                      f"{flag} {raw} asks for the whole of each GPU: on CUDA vLLM refuses to start "
                      "(\"Free memory on device … on startup is less than desired GPU memory "
                      "utilization\", vllm/v1/worker/utils.py request_memory): the CUDA context "
                      "and NCCL already hold part of the card when it measures",
                      d.source, setting.span, hint="use at most 0.95 (the default is 0.92)",
                      data={"utilization": value})
        return
    if value <= UTILIZATION_WARN:
        return
    rest = ""
    math_lines: tuple[str, ...] = ()
    if spec is not None:
        left = spec.memory_bytes * (1 - value)
        rest = f" ({gb(left)} per GPU, {_gpu_phrase(d, spec)})" if d.gpu is not None and \
            d.gpu.assumed else f" ({gb(left)} of {spec.name})"
        math_lines = ((f"outside vLLM's pool: {gb(spec.memory_bytes)} × (1 − {value:g}) = "
                      f"{gb(left)} per GPU"),)
    # CUDA graphs are inside vLLM's budget from 0.21 (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
    # on by default; vllm/v1/worker/gpu_worker.py determine_available_memory, 0.30.0 logs "CUDA
    # graph memory profiling is enabled (default since v0.21.0)"); before, they sat outside it
    graphs = "" if version_key(d.inv.version) >= version_key("0.21.0") else " and CUDA graphs"
    yield Finding("MG305", Severity.WARNING,
                  f"{flag} {value:g} leaves {percent(1 - value)} of each GPU{rest} for the CUDA "
                  f"context, NCCL buffers{graphs} and anything else on the card",
                  d.source, setting.span, hint="use at most 0.95 (the default is 0.92)",
                  math=math_lines, data={"utilization": value})


@rule("MG306", "lora-reservation", Severity.INFO,
      "GPU memory reserved for --max-loras × --max-lora-rank adapters")
def lora_reservation(d: Deployment) -> Iterator[Finding]:
    """
    What it does: computes the adapter buffers vLLM allocates on every GPU when LoRA is on:
    max_loras × max_lora_rank × Σ(in + out) over the adapted projections × layers × 2 bytes
    (create_lora_weights, vllm/lora/layers/base_linear.py), whatever adapters are loaded. Info
    when the flags are set; a warning when the buffers take over 10% of the KV budget.

    Why is this bad? For Llama 3.1 8B, --max-loras 4 --max-lora-rank 64
    reserves 1.34 GB per GPU that the KV cache does not get. Serving 20 variants as one base
    plus rank-16 adapters needs 17.7 GB, against 321.2 GB as merged models. Reservations under
    1% of the KV budget (vLLM's default single rank-16 slot) are not reported.

    Use instead: a --max-lora-rank equal to the largest adapter's rank and --max-loras equal to
    the distinct adapters one batch needs.
    """
    b = _vllm_budget(d)
    inv = d.inv
    if b is None or inv.enable_lora.value is not True or not b.lora_known or \
            _weights_verdict(b)[0] is not None:
        return  # without room for the KV cache the weights are MG301's finding
    g = b.gpu
    room = g.usable - g.weights if g.kv_memory_bytes is None else g.kv_memory_bytes
    if room <= 0:
        return
    share = g.lora / room
    warn = share > LORA_WARN_SHARE
    if not warn and (share < LORA_INFO_SHARE or not (inv.max_loras.given or
                                                       inv.max_lora_rank.given)):
        return
    loras, rank = _int(inv.max_loras), _int(inv.max_lora_rank)
    modules = knowledge.lora_modules(b.shape)
    if modules is None or loras is None or rank is None:
        return
    adapter = lora_sizing.lora_bytes(rank, modules, b.shape.layers, LORA_BYTES_PER_VALUE)
    math_lines = list(b.lines())
    math_lines.append(f"LoRA share of the KV budget: {gb(g.lora, 2)} / {gb(room)} = "
                      f"{percent(share)}")
    math_lines.append(f"one rank-{rank} adapter: {size(adapter)}")
    served = inv.lora_modules.value if inv.lora_modules.known else None
    count = len(served) if isinstance(served, list) else 0
    extra: dict[str, Any] = {"lora_share": share, "adapter_bytes": adapter}
    if count > 1:
        base = b.weights_total
        shared = lora_sizing.base_plus_adapters_bytes(count, base, adapter)
        merged = lora_sizing.merged_models_bytes(count, base)
        math_lines.append(f"{count} adapters from one base: {gb(base)} + {count} × {size(adapter)} "
                          f"(rank {rank}) = {gb(shared)}; as merged models {gb(merged)}")
        extra.update(variants=count, base_plus_adapters_bytes=shared, merged_bytes=merged)
    flags = f"{_flag(d.inv, inv.max_loras)} {loras} × {_flag(d.inv, inv.max_lora_rank)} {rank}"
    setting = inv.max_lora_rank if inv.max_lora_rank.given else inv.max_loras \
        if inv.max_loras.given else inv.enable_lora
    span = setting.span or _model_span(d)
    if warn:
        message = (f"{flags} reserve {gb(g.lora, 2)} per GPU for LoRA buffers, "
                   f"{percent(share)} of the {gb(room)} the KV cache would get")
        severity = Severity.WARNING
    else:
        message = (f"{flags} reserve {gb(g.lora, 2)} per GPU for LoRA buffers "
                   f"({percent(share)} of the KV budget), whatever adapters are loaded")
        severity = Severity.INFO
    yield Finding("MG306", severity, message, d.source, span,
                  hint=f"set {_flag(d.inv, inv.max_lora_rank)} to the largest adapter's rank and "
                       f"{_flag(d.inv, inv.max_loras)} to the adapters one batch needs",
                  math=tuple(math_lines), related=_setting_related(d, inv.max_loras),
                  data=b.data(**extra))


@rule("MG307", "lora-rank-invalid", Severity.ERROR,
      "--max-lora-rank not among the ranks vLLM accepts")
def lora_rank_invalid(d: Deployment) -> Iterator[Finding]:
    """
    What it does: checks --max-lora-rank against the ranks vLLM supports: 1, 8, 16, 32, 64,
    128, 256, 320, 512 in 0.30.0 (MaxLoRARanks, vllm/config/lora.py); older releases accepted a
    subset (LoRAConfig.__post_init__ possible_max_ranks, e.g. 8–64, later 8–256), checked only
    with --enable-lora.

    Why is this bad? vLLM rejects the value ("argument --max-lora-rank: invalid choice: 24
    (choose from 1, 8, 16, 32, 64, 128, 256, 320, 512)"): the server does not start. The rank is
    a buffer size, not the adapters' rank: round up to the next supported value.

    Use instead: the smallest supported rank at or above your largest adapter's rank.
    """
    setting = d.inv.max_lora_rank
    rank = _int(setting)
    if d.engine != VLLM or rank is None or not setting.given or setting.span is None:
        return
    spec = d.inv.catalog.by_key.get(setting.key)
    listed = spec is not None and spec.choices is not None
    allowed = tuple(int(c) for c in spec.choices if isinstance(c, int)) if listed and spec \
        else LORA_RANKS
    if not listed and d.inv.enable_lora.value is not True:
        return  # older releases check the rank only when LoRA is on
    if rank in allowed:
        return
    larger = [r for r in allowed if r > rank]
    hint = f"use {larger[0]}" if larger else f"use at most {allowed[-1]}"
    yield Finding("MG307", Severity.ERROR,
                  f"{_flag(d.inv, setting)} {rank} is not a rank vLLM {d.inv.version} accepts "
                  f"({', '.join(map(str, allowed))}): the server does not start",
                  d.source, setting.span, hint=hint, data={"rank": rank,
                                                           "allowed": list(allowed)})


@rule("MG308", "lora-without-enable", Severity.ERROR,
      "LoRA flags without --enable-lora")
def lora_without_enable(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds LoRA flags on a vLLM launch that does not turn LoRA on.

    Why is this bad? vLLM builds its LoRA configuration only with --enable-lora
    (vllm/engine/arg_utils.py, 0.30.0; no flag implies it). --lora-modules then asks for
    adapters the engine cannot load: the server fails at start-up with "LoRA is not enabled.
    Use --enable-lora to enable LoRA." (vllm/v1/worker/lora_model_runner_mixin.py) — an error.
    The other LoRA flags (--max-loras, --max-lora-rank, --max-cpu-loras, --lora-dtype …) are
    silently ignored — a warning: whoever wrote them expects LoRA to be on.

    Use instead: add --enable-lora, or remove the LoRA flags.
    """
    inv = d.inv
    if d.engine != VLLM or not inv.enable_lora.known or inv.enable_lora.value is True:
        return
    modules = inv.lora_modules
    enable = _long(inv, inv.enable_lora.key)
    if modules.given and modules.flag_span is not None:
        yield Finding("MG308", Severity.ERROR,
                      f"{_flag(d.inv, modules)} without {enable}: vLLM cannot load the adapters "
                      "and fails at start-up (\"LoRA is not enabled\")",
                      d.source, modules.flag_span, hint=f"add {enable}")
    keys = [k for k in LORA_CONFIG_KEYS if k in inv.catalog.by_key]
    ignored = [s for s in (inv.setting(k) for k in keys)
               if s.given and s.flag_span is not None and s.value is not False]
    if ignored and not modules.given:
        names = ", ".join(_flag(d.inv, s) for s in ignored)
        yield Finding("MG308", Severity.WARNING,
                      f"{names} without {enable}: vLLM ignores "
                      f"{'it' if len(ignored) == 1 else 'them'} (LoRA is off)",
                      d.source, ignored[0].flag_span,
                      hint=f"add {enable}, or remove the LoRA flags",
                      related=tuple(Related(d.source, s.flag_span, _flag(d.inv, s))
                                    for s in ignored[1:] if s.flag_span is not None))


# ----------------------------------------------------------------------------- llama.cpp


def _fit_active(d: Deployment) -> bool:
    """llama.cpp's --fit rewrites -ngl/-ts unless the user set them or turned it off
    (common/fit.cpp, llama-notes.md §4)."""
    inv = d.inv
    fit = inv.fit
    off = fit.given and str(fit.value).lower() in FALSEY
    return not (off or inv.n_gpu_layers.given or inv.tensor_split.given)


def _slots(n_parallel: int) -> int:
    """Server slots: -np, or 4 when auto (-1) (tools/server/server.cpp)."""
    return n_parallel if n_parallel > 0 else mem.LLAMA_AUTO_SLOTS


@rule("MG309", "llama-device-memory", Severity.ERROR,
      "llama.cpp: weights and KV cache of a device's layers exceed its memory")
def llama_device_memory(d: Deployment) -> Iterator[Finding]:
    """
    What it does: places the layers as llama.cpp does (src/llama-model.cpp load_tensors:
    normalised running sums of -ts, or equal shares of identical free GPUs; the output layer
    counts as layer n_layer; only the last -ngl units go to GPUs) and adds, per device, its layers'
    weights
    (GGUF bits per weight) and KV cache (-c cells, -np slots, -ctk/-ctv types; the output layer
    on the last device). Silent while --fit is active (no -ngl/-ts and no -fit off): then
    llama.cpp chooses the split and may shorten the context at load time.

    Why is this bad? A device asked to hold more than its memory fails the load
    ("cudaMalloc failed: out of memory"). With -c 0 (the default) the KV cache covers the
    model's whole trained context: 131,072 tokens of Llama 3.1 8B in f16 are 17.2 GB.

    Use instead: a -ts that follows the devices' memory, a smaller -c, a quantized KV cache
    (-ctk q8_0 -ctv q8_0), fewer -ngl layers, or leave -ngl/-ts to --fit.
    """
    inv, model, g = d.inv, d.model, d.gpu
    if d.engine != LLAMA_SERVER or model is None or model.shape is None or g is None \
            or g.spec is None or model.kv_bytes is None or _fit_active(d):
        return
    needed = (inv.n_gpu_layers, inv.tensor_split, inv.ctx_size, inv.parallel, inv.split_mode,
              inv.kv_unified, inv.kv_offload, inv.main_gpu)
    if not all(s.known for s in needed):
        return
    if any(s.given for s in (inv.rpc, inv.device, inv.override_tensor, inv.cpu_moe,
                             inv.n_cpu_moe)):
        return  # devices or tensor placement we cannot see
    mode = str(inv.split_mode.value)
    if mode not in ("layer", "none"):
        return
    shape = model.shape
    ngl = inv.n_gpu_layers.value if isinstance(inv.n_gpu_layers.value, int) else None
    count = g.count
    ts = inv.tensor_split.value if inv.tensor_split.given else None
    equal_split = False
    if mode == "none":
        proportions = [1.0]
        names = [f"GPU{inv.main_gpu.value}"]
    elif ts:
        n = count if count is not None else len(ts)
        proportions = [float(x) for x in ts[:n]] + [0.0] * max(0, n - len(ts))
        names = [f"GPU{i}" for i in range(n)]
    elif count:
        proportions, names, equal_split = [1.0] * count, [f"GPU{i}" for i in range(count)], True
    else:
        return
    if not any(llama_sizing.f32(p) > 0 for p in proportions):
        return  # all zero as the float32 llama.cpp stores them (-ts 1e-320)
    n_ctx = _int(inv.ctx_size)
    n_parallel = _int(inv.parallel)
    if n_ctx is None or n_parallel is None:
        return
    if n_ctx <= 0:
        if shape.max_positions is None:
            return
        n_ctx = shape.max_positions
    unified = n_parallel < 0 or inv.kv_unified.value is True
    slots = _slots(n_parallel)
    cells = mem.llama_kv_cells(n_ctx, slots, unified, shape.max_positions)
    split = llama_sizing.layer_split(shape.layers, ngl, proportions, names)
    layer = mem.llama_layer_bytes(shape, model.weights.bits)
    kv_on_gpu = inv.kv_offload.value is not False
    kv_layer = mem.llama_kv_bytes_per_layer(shape, cells, model.kv_bytes) if kv_on_gpu else 0.0
    devices = mem.llama_device_memory([(dev.name, dev.count, dev.output)
                                       for dev in split.devices], layer, kv_layer)
    card = g.spec.memory_bytes
    allowance = mem.OVERHEAD_SHARE * card
    verdicts = [(dev, mem.memory_verdict(dev.total, card, allowance)) for dev in devices]
    worst = [(dev, v) for dev, v in verdicts if v is not None]
    if not worst:
        return
    bits_stated = model.weights.origin in GGUF_ORIGINS
    assumed = g.assumed or equal_split or not bits_stated
    exceeds = any(v == "exceeds" for _, v in worst)
    severity = _cap(Severity.ERROR if exceeds else Severity.WARNING, assumed)
    assumptions = []
    if g.assumed:
        assumptions.append(f"assuming {g.spec.name} (no file states the GPU type)")
    if equal_split:
        assumptions.append("assuming equal free memory on every GPU (no -ts)")
    if not bits_stated:
        assumptions.append(f"assuming {model.weights.bits:g} bits per weight (no GGUF type "
                           "in the model name)")
    parts = [f"{dev.name} needs {gb(dev.total)} ({gb(dev.weights)} weights + {gb(dev.kv)} KV)"
             for dev, _ in worst]
    verb = "exceeding" if exceeds else "close to"
    message = (f"{'; '.join(parts)}, {verb} its {gb(card)}"
               + (f" ({'; '.join(assumptions)})" if assumptions else "")
               + (": the model does not load" if exceeds else ""))
    stated_ctx = _int(inv.ctx_size)
    ctx_flag = _flag(d.inv, inv.ctx_size)
    context = f"{ctx_flag} {stated_ctx:,}" if stated_ctx else \
        f"trained context {n_ctx:,} ({ctx_flag} 0)"
    math_lines = [f"layer split: {llama_sizing.describe_layer_split(split)}",
                  (f"weights: {shape.params / 1e9:.4g}B params × "
                  f"{model.weights.bits:g} bits ({model.weights.label}) = "
                  f"{gb(mem.weights_bytes(shape.params, model.weights.bits))}; "
                  f"{gb(layer.layer, 2)} per layer, output layer {gb(layer.output, 2)}, "
                  "token embeddings on the CPU"),
                  f"KV cache: {cells:,} cells ({context}, "
                  f"{'unified' if unified else str(slots) + ' slots'}), "
                  + (f"{fixed(kv_layer / 1e6, 1)} MB per layer" if kv_on_gpu else
                     "in host memory (-nkvo)")]
    math_lines += [f"{dev.name}: {dev.layers} layers{' + output' if dev.output else ''} → "
                   f"{gb(dev.weights)} + {gb(dev.kv)} KV = {gb(dev.total)} of {gb(card)}"
                   for dev in devices]
    math_lines.append(f"overhead allowance (compute buffers, CUDA context): {gb(allowance)} "
                      f"({percent(mem.OVERHEAD_SHARE, 0)} of each device); within it a verdict "
                      "is a warning")
    related = _gpu_related(d) + _setting_related(d, inv.n_gpu_layers, inv.tensor_split,
                                                 inv.ctx_size)
    yield Finding("MG309", severity, message, d.source, _model_span(d),
                  hint=f"lower {ctx_flag}, quantize the KV cache ({_long(inv, 'cache_type_k')} / "
                       f"{_long(inv, 'cache_type_v')} q8_0), move layers with "
                       f"{_long(inv, 'tensor_split')}, or offload fewer layers",
                  math=tuple(math_lines), related=related,
                  data={"devices": [{"name": dev.name, "layers": dev.layers,
                                     "output": dev.output, "weights_bytes": dev.weights,
                                     "kv_bytes": dev.kv} for dev in devices],
                        "device_bytes": card, "kv_cells": cells,
                        "overhead_allowance_bytes": allowance})


@rule("MG310", "partial-offload", Severity.INFO,
      "-ngl below the layer count: some layers stay on the CPU")
def partial_offload(d: Deployment) -> Iterator[Finding]:
    """
    What it does: reports llama-server launches whose -ngl offloads fewer units than the
    model has (its layers plus the output layer), and which layers stay on the CPU.

    Why is this bad? llama.cpp offloads from the end: with -ngl 20 on a
    32-layer model, layers 0-12 stay on the CPU. Every generated token then reads those layers'
    weights from system memory with the CPU, at a fraction of the GPU's bandwidth, and the GPU
    waits: a small CPU share already dominates the time per token.

    Use instead: -ngl all (or a number at least the layer count + 1) when the model fits, or
    leave -ngl to --fit, which offloads as many layers as the free memory allows.
    """
    inv, model = d.inv, d.model
    setting = inv.n_gpu_layers
    ngl = _int(setting)
    if d.engine != LLAMA_SERVER or model is None or model.shape is None or ngl is None \
            or ngl < 0 or not setting.given or setting.span is None:
        return
    shape = model.shape
    units = shape.layers + 1
    if ngl >= units:
        return
    start, count = llama_sizing.gpu_layer_range(shape.layers, ngl)
    layer = mem.llama_layer_bytes(shape, model.weights.bits)
    cpu_layers = min(start, shape.layers)
    on_cpu = cpu_layers * layer.layer
    if count == 0:
        where = f"every layer (0-{shape.layers - 1}) and the output layer stay on the CPU"
    else:
        where = (f"layers 0-{cpu_layers - 1} ({cpu_layers} of {shape.layers}) stay on the CPU"
                 f", layers {cpu_layers}-{shape.layers - 1} and the output layer go to the GPU")
    spec = d.gpu.spec if d.gpu is not None else None
    math_lines = [(f"units: {shape.layers} layers + output = {units}; {_flag(d.inv, setting)} "
                   f"{ngl} puts the last "
                  f"{count} on GPUs (first GPU unit: {start})"),
                  (f"on the CPU: {cpu_layers} × {gb(layer.layer, 2)} = {gb(on_cpu)} of weights "
                  f"({model.weights.label}) read from system memory for every token")]
    if spec is not None:
        gpu_ms = fixed(on_cpu / spec.bandwidth_bytes_per_s * 1e3, 2)
        math_lines.append(f"the same bytes take {gpu_ms} ms at the {spec.bandwidth_tbs:g} TB/s "
                          f"of the GPU ({_gpu_phrase(d, spec)})")
    yield Finding("MG310", Severity.INFO,
                  f"{_flag(d.inv, setting)} {ngl} offloads {count} of {units} units: {where} "
                  f"({gb(on_cpu)} of weights read by the CPU at every token)",
                  d.source, setting.span,
                  hint=f"use {_flag(d.inv, setting)} all when the model fits, or leave it to "
                       f"{_long(inv, 'fit')}",
                  math=tuple(math_lines),
                  data={"n_gpu_layers": ngl, "cpu_layers": cpu_layers, "gpu_units": count,
                        "cpu_weights_bytes": on_cpu})


RULES: list[Rule] = [weights_exceed_memory, kv_cannot_hold_one_sequence, kv_below_concurrency,
                     max_model_len_exceeds_model, gpu_memory_utilization_range, lora_reservation,
                     lora_rank_invalid, lora_without_enable, llama_device_memory,
                     partial_offload]
