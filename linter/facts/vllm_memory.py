"""vLLM's memory budget for one launch: the fact MG301-MG306 share, computed once per
launch (``Deployment.vllm_budget``), and the max model length vLLM uses.

The arithmetic is in ``linter/sizing/`` (``memory.py`` the textbook budget, ``vllm_budget.py``
vLLM's own, per release); this module joins it to the launch's settings, model and GPU.
"""

from __future__ import annotations

import math
from functools import cached_property
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Callable

from ..catalog import knowledge
from ..engines.adapter import VLLM_ARGS
from ..sizing import lora as lora_sizing
from ..sizing import memory as mem
from ..sizing.display import fixed, gb, gib, percent
from ..sizing.vllm_budget import largest_stage
from ..sizing.vllm_launch import LaunchMemory, context_parallel_valid, launch_memory, log_lines
from ..versions import version_key
from ..records import dataclass, field

if TYPE_CHECKING:
    from ..catalog.knowledge import GpuSpec, ModelShape
    from ..deployment import Deployment

# vLLM 0.30.0 vllm/config/lora.py: MaxLoRARanks = Literal[1, 8, 16, 32, 64, 128, 256, 320, 512].
# Releases without argparse choices checked a subset at start-up (LoRAConfig.__post_init__
# possible_max_ranks), so a rank outside this list is rejected by every release.
LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)

LORA_BYTES_PER_VALUE = 2.0  # --lora-dtype auto follows the 16-bit activation dtype

# vllm/envs.py (0.30.0): VLLM_ALLOW_LONG_MAX_MODEL_LEN is on for "1" or "true"
ALLOW_LONG_ENV = "VLLM_ALLOW_LONG_MAX_MODEL_LEN"

TRUTHY_ENV = ("1", "true")

# hf-overrides keys that change the derived length in ways the shape does not model
OTHER_LENGTH_KEYS = ("n_positions", "max_seq_len", "seq_length", "model_max_length",
                     "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len",
                     "text_config", "original_max_position_embeddings")


@dataclass(frozen=True)
class VllmBudget:
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
    make_math: Callable[[], tuple[str, ...]] = field(repr=False, compare=False)
    real: LaunchMemory | None = None  # the budget as vLLM sizes it (vllm_budget.py)

    @cached_property
    def math(self) -> tuple[str, ...]:
        """The budget's derivation, one line per step (usable, weights, KV per token …)."""
        return self.make_math()

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


def _real_data(m: LaunchMemory) -> dict[str, Any]:
    b = m.budget
    return {"vllm": {"gpu_memory_bytes": b.gpu_memory, "requested_bytes": b.requested,
                     "weights_bytes_per_gpu": b.weights, "activation_bytes": b.activation,
                     "non_torch_bytes": b.non_torch, "cudagraph_bytes": b.cudagraph,
                     "kv_cache_bytes_per_gpu": b.kv_budget,
                     "kv_cache_tokens": b.kv_tokens if b.kv_budget > 0 else 0,
                     "max_concurrency": round(b.max_concurrency, 2) if b.kv_budget > 0 else 0,
                     "uncertainty_bytes": m.uncertainty}}


def lora_buffers(d: Deployment, shape: ModelShape, pp: int) -> tuple[float, bool, str] | None:
    """(bytes per GPU, modules known, math line); None when a LoRA value is broken."""
    inv = d.inv
    if inv.enable_lora.value is not True:
        return 0.0, True, ""
    loras, rank = inv.max_loras.int_value, inv.max_lora_rank.int_value
    if loras is None or rank is None or loras < 1 or rank not in LORA_RANKS:
        return None
    modules = knowledge.lora_modules(shape)
    if modules is None:
        return 0.0, False, "LoRA buffers: unknown for this model's modules (not counted)"
    layers = largest_stage(shape.layers, pp)
    size = lora_sizing.lora_reservation_bytes(loras, rank, modules, layers, LORA_BYTES_PER_VALUE)
    per_rank = lora_sizing.lora_params_per_rank_per_layer(modules)
    return size, True, (f"LoRA buffers: {loras} adapters × rank {rank} × {per_rank:,} × {layers} "
                        f"layers × 2 bytes = {gb(size, 2)}")


def vllm_budget(d: Deployment) -> VllmBudget | None:
    """The per-GPU budget, or None when a fact it needs is missing, broken or unresolved.
    Computed once per launch and shared by the memory rules."""
    return d.derived("memory.vllm_budget", _compute_vllm_budget)


_KNOWN = attrgetter("known")


def _compute_vllm_budget(d: Deployment) -> VllmBudget | None:
    inv, lay, model, g = d.inv, d.layout, d.model, d.gpu
    if not d.adapter.has(VLLM_ARGS) or lay is None or not lay.known or model is None \
            or model.shape is None:
        return None
    if g is None or g.spec is None or model.kv_bytes is None:
        return None
    shape, spec = model.shape, g.spec
    util_s, kvmem_s, off_s = inv.gpu_memory_utilization, inv.kv_cache_memory_bytes, \
        inv.cpu_offload_gb
    if not all(map(_KNOWN, (util_s, kvmem_s, off_s, inv.dtype, inv.quantization,
                            inv.kv_cache_dtype, inv.enable_lora,
                            inv.decode_context_parallel_size))):
        return None
    util = util_s.value
    if not isinstance(util, (int, float)) or not 0 < util <= 1:
        return None  # MG305 reports it
    kvmem = kvmem_s.int_value if kvmem_s.value is not None else None
    if kvmem_s.value is not None and (kvmem is None or kvmem <= 0):
        return None
    offload_gib = off_s.value if isinstance(off_s.value, (int, float)) else 0
    dcp = inv.decode_context_parallel_size.int_value or 1
    tp, pp, dp, pcp = lay.tp.value, lay.pp.value, lay.dp.value, lay.pcp.value
    if not context_parallel_valid(tp, pcp, dcp):
        return None  # vLLM refuses the layout (ParallelConfig)
    lora = lora_buffers(d, shape, pp)
    if lora is None:
        return None
    lora_bytes, lora_known, lora_line = lora
    bits = model.weights.bits
    total = mem.weights_bytes(shape.params, bits)
    experts = mem.weights_bytes(mem.expert_params(shape), bits)
    offload = float(offload_gib) * mem.GIB
    # MoE layers flatten tp × dp × pcp (fused_moe/config.py flatten_tp_across_dp_and_pcp)
    per_gpu = mem.weights_bytes_per_gpu(total, experts, tp, pp, dp * pcp, offload)
    budget = mem.GpuBudget(spec.memory_bytes, None if kvmem is not None else float(util),
                           per_gpu, lora_bytes, float(kvmem) if kvmem is not None else None)

    def math_lines() -> tuple[str, ...]:
        # the budget as math lines, made only when a finding prints them: formatting ~10
        # numbers per launch was a tenth of the per-launch time (issue 19).  It reads the
        # launch's settings through ``inv``, not ``d``: the budget is memoised on ``d``
        lines = []
        if kvmem is not None:
            raw = kvmem_s.winner.raw if kvmem_s.winner else kvmem
            lines.append(f"{inv.spelling(kvmem_s)} {raw}: "
                         f"KV budget {gb(kvmem)} per GPU; weights judged against the whole "
                         f"{gb(spec.memory_bytes)} card")
        else:
            lines.append(f"usable: {gb(spec.memory_bytes)} ({spec.name}) × "
                         f"{inv.spelling(util_s)} {util:g} = {gb(budget.usable)} per GPU")
        lines.append(f"weights: {shape.params / 1e9:.4g}B params × {bits:g} bits "
                     f"({model.weights.label}) = {gb(total)}")
        if experts > 0 and dp * pcp > 1:
            spread = (f"dp {dp} × " if dp > 1 else "") + (f"pcp {pcp} × " if pcp > 1 else "")
            lines.append(f"weights per GPU: {gb(total - experts)} dense / (tp {tp} × pp {pp}) + "
                         f"{gb(experts)} experts / (tp {tp} × {spread}pp {pp}) = "
                         f"{gb(per_gpu + offload)}")
        else:
            lines.append(f"weights per GPU: {gb(total)} / (tp {tp} × pp {pp}) = "
                         f"{gb(per_gpu + offload)}")
        if offload > 0:
            lines.append(f"{inv.spelling(off_s)} {offload_gib:g} GiB stays in CPU memory: "
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
        return tuple(lines)

    length, _ = max_model_len(d, shape)
    real = launch_memory(d, length) if length else None
    if pcp > 1 and real is None:
        return None  # prefill context parallelism is judged on vLLM's budget only
    return VllmBudget(shape, spec, g.assumed, tp, pp, dp, dcp, model.kv_bytes, total, experts,
                      offload, lora_bytes, lora_known, budget, math_lines, real)


def real_verdict(b: VllmBudget) -> tuple[str | None, str]:
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


def weights_verdict(b: VllmBudget) -> tuple[str | None, float, float]:
    """(verdict, need, limit) for the weights and LoRA buffers against usable memory; with
    vLLM's own budget, the weights against the card and the KV budget against zero."""
    g = b.gpu
    if b.real is not None:
        r = b.real.budget
        verdict, _ = real_verdict(b)
        return verdict, float(r.weights), float(r.requested - r.activation - r.non_torch
                                                 - r.cudagraph)
    need = g.weights + g.lora + (g.kv_memory_bytes or 0.0)
    return mem.memory_verdict(need, g.usable, g.allowance), need, g.usable


def max_model_len(d: Deployment, shape: ModelShape) -> tuple[int | None, bool]:
    """(the max model length vLLM uses, whether the launch states it); None when unknown,
    auto-fitted (-1) or rejected (MG304)."""
    setting = d.inv.max_model_len
    if not setting.known:
        return None, True
    if setting.value is None:
        return model_limit(d, shape), False
    value = setting.int_value
    if value is None or value <= 0:
        return None, True
    limit = model_limit(d, shape)
    if limit is not None and value > limit and not long_allowed(d):
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


def model_limit(d: Deployment, shape: ModelShape) -> int | None:
    """vLLM's derived max model length, with --hf-overrides (and --rope-scaling, in the
    releases that have it) applied; None when unknown.  Once per deployment for the model's
    own shape: four memory rules ask for it."""
    if d.model is None or shape is not d.model.shape:
        return _model_limit(d, shape)
    return d.derived("model_limit", lambda d: _model_limit(d, shape))


def _model_limit(d: Deployment, shape: ModelShape) -> int | None:
    limit = model_limit_030(d, shape)
    if limit is None or not d.adapter.has(VLLM_ARGS):
        return limit
    release = version_key(d.inv.version)
    if release >= version_key(NEW_ROPE_RULE):
        return limit
    kind = rope_kind(d, shape)
    if kind is None or kind in OLD_UNSCALED_ROPE or kind not in mem.UNSCALED_ROPE_TYPES:
        return limit  # both rules agree (no scaling, su/longrope/llama3, or a multiplied type)
    return None  # yarn and friends: scaled differently before 0.30 (see above)


def rope_kind(d: Deployment, shape: ModelShape) -> str | None:
    """The RoPE type vLLM sees: --hf-overrides' over --rope-scaling over the model's."""
    hf = d.inv.hf_overrides
    if hf.known and isinstance(hf.value, dict):
        for key in ("rope_scaling", "rope_parameters"):
            raw = hf.value.get(key)
            if isinstance(raw, dict):
                kind = raw.get("rope_type") or raw.get("type")
                return kind if isinstance(kind, str) else None
    flag = rope_override(d)
    if isinstance(flag, knowledge.RopeScaling):
        return flag.type
    return shape.rope_scaling.type if shape.rope_scaling is not None else None


def rope_override(d: Deployment) -> knowledge.RopeScaling | None | bool:
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


def model_limit_030(d: Deployment, shape: ModelShape) -> int | None:
    """vLLM 0.30.0's derived max model length, with --hf-overrides applied; None when
    unknown."""
    hf = d.inv.hf_overrides
    if not hf.known:
        return None
    flag_rope = rope_override(d)
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


def long_allowed(d: Deployment) -> bool:
    """VLLM_ALLOW_LONG_MAX_MODEL_LEN on, or set to a value we cannot see (then not judged)."""
    env = d.launch.env.get(ALLOW_LONG_ENV)
    return env is not None and (env.value is None or env.value.strip().lower() in TRUTHY_ENV)
