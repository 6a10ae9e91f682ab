"""vLLM memory: weights, KV cache and max model length against each GPU (MG301-MG305).

The budget itself is a launch fact (``linter/facts/vllm_memory.py``); these rules judge it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

from mgpu_lint.deployment import Deployment
from mgpu_lint.engines.adapter import VLLM_ARGS
from mgpu_lint.facts.vllm_memory import (
    ALLOW_LONG_ENV,
    VllmBudget,
    long_allowed,
    max_model_len,
    model_limit,
    real_verdict,
    vllm_budget,
    weights_verdict,
)
from mgpu_lint.findings import Finding, Related, Severity
from mgpu_lint.policy import UTILIZATION_WARN
from mgpu_lint.sizing import memory as mem
from mgpu_lint.sizing import vllm_budget as vb
from mgpu_lint.sizing.display import gb, gib, percent
from mgpu_lint.versions import version_key

from .registry import Rule, rule
from .text import cap_assumed, gpu_phrase, gpu_related, layout_related, model_span, setting_related

if TYPE_CHECKING:
    pass



@rule("MG301", "weights-exceed-memory", Severity.ERROR,
      "weights per GPU exceed the memory vLLM may use on each GPU",
      needs={VLLM_ARGS},
      reads=("model", "tensor_parallel_size", "pipeline_parallel_size", "gpu_memory_utilization",
          "dtype", "quantization"))
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
    file states.  With --enable-lora the weights include the adapter slots vLLM allocates
    while loading (--max-loras × --max-lora-rank on every linear layer, and on the embeddings
    where the model class lists them); LoRA on a model class the budget does not follow keeps
    the textbook budget (card × utilization − weights − adapter buffers, 5% allowance).

    Use instead: more tensor- or pipeline-parallel GPUs, a quantized checkpoint (FP8 halves
    BF16), larger GPUs, a higher --gpu-memory-utilization, --enforce-eager (no CUDA-graph
    reserve), or --cpu-offload-gb (slow: the offloaded weights cross PCIe at every step).
    """
    b = vllm_budget(d)
    if b is None:
        return
    verdict, need, limit = weights_verdict(b)
    if verdict is None:
        return
    g = b.gpu
    severity = cap_assumed(Severity.ERROR if verdict == "exceeds" else Severity.WARNING, b.assumed)
    what = "weights and LoRA buffers" if g.lora else "weights"
    if b.real is not None:
        r = b.real.budget
        _, kind = real_verdict(b)
        loaded = (f"weights and LoRA buffers ({gib(r.lora)} of them)" if r.lora else
                  "weights")
        if kind == "card" and not r.kv_from_flag:
            gpus = mem.gpus_needed(b.weights_total, r.gpu_memory)
            message = (f"{loaded} need {gib(r.weights)} per GPU (tp {b.tp} × pp {b.pp}) but the "
                       f"card has {gib(r.gpu_memory)} ({gpu_phrase(d, b.spec)}): the model does "
                       "not load (CUDA out of memory while loading the weights)")
            hint = (f"the weights alone need at least {gpus} GPUs of this type: raise tp/pp, use "
                    "a quantized checkpoint, or larger GPUs")
        elif kind == "card":
            message = (f"weights ({gib(r.weights)}), --kv-cache-memory-bytes "
                       f"({gib(r.kv_budget)}) and the activation peak "
                       f"{'exceed' if verdict == 'exceeds' else 'nearly fill'} the "
                       f"{gib(r.gpu_memory)} card ({gpu_phrase(d, b.spec)})"
                       + (": the KV cache cannot be allocated" if verdict == "exceeds" else ""))
            hint = "lower --kv-cache-memory-bytes, raise tp/pp or use a quantized checkpoint"
        elif verdict == "exceeds":
            message = (f"the {loaded} load ({gib(r.weights)} per GPU) but nothing is left for the "
                       f"KV cache ({gib(r.kv_budget)} of {gib(r.requested)} requested on "
                       f"{gpu_phrase(d, b.spec)}): vLLM refuses to start with \"No available "
                       "memory for the cache blocks\" (vllm/v1/core/kv_cache_utils.py "
                       "_check_enough_kv_cache_memory)")
            hint = ("raise --gpu-memory-utilization or tp/pp, use a quantized checkpoint, or "
                    "--enforce-eager to drop the CUDA-graph reserve")
        else:
            message = (f"the {loaded} ({gib(r.weights)} per GPU) leave {gib(r.kv_budget)} for "
                       f"the KV cache of the {gib(r.requested)} vLLM requests on "
                       f"{gpu_phrase(d, b.spec)}: within the {gib(b.real.uncertainty)} this "
                       "estimate can be off, vLLM may find no memory for the cache blocks")
            hint = "raise tp/pp or use a quantized checkpoint to leave room for the KV cache"
    elif verdict == "exceeds":
        gpus = mem.gpus_needed(b.weights_total + g.lora * b.tp * b.pp, g.usable)
        message = (f"{what} need {gb(need)} per GPU (tp {b.tp} × pp {b.pp}) but vLLM may use "
                   f"{gb(limit)} of each GPU ({gpu_phrase(d, b.spec)}): the model does not load")
        hint = (f"the weights alone need at least {gpus} GPUs of this type: raise tp/pp, use a "
                "quantized checkpoint, or larger GPUs")
    else:
        message = (f"{what} take {gb(need)} of the {gb(limit)} vLLM may use per GPU "
                   f"({gpu_phrase(d, b.spec)}): {gb(limit - need)} is left for the KV cache "
                   "and the engine's own overhead")
        hint = "raise tp/pp or use a quantized checkpoint to leave room for the KV cache"
    related = layout_related(d) + gpu_related(d) + setting_related(
        d, d.inv.gpu_memory_utilization, d.inv.cpu_offload_gb, d.inv.kv_cache_memory_bytes)
    yield weights_exceed_memory.finding(message, d.source, model_span(d), hint=hint,
                  math=b.lines(), related=related,
                  data=b.data(need_bytes=need, limit_bytes=limit, verdict=verdict),
                  severity=severity)


@rule("MG302", "kv-cannot-hold-one-sequence", Severity.ERROR,
      "the KV cache cannot hold one --max-model-len sequence",
      needs={VLLM_ARGS},
      reads=("model", "max_model_len", "gpu_memory_utilization", "kv_cache_memory_bytes",
          "kv_cache_dtype", "dtype"))
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
    b = vllm_budget(d)
    if b is not None and b.real is not None:
        yield from _one_request(d, b)
        return
    if b is None or weights_verdict(b)[1] > b.gpu.usable:
        return
    length, stated = max_model_len(d, b.shape)
    if length is None:
        return
    need = b.kv_sequence(length)
    g = b.gpu
    verdict = mem.memory_verdict(need, g.kv, g.allowance)
    if verdict is None or (verdict == "tight" and weights_verdict(b)[0] is not None):
        return  # a tight budget is MG301's finding
    fits = mem.max_tokens_in(b.shape, g.kv * b.dcp, b.kv_value_bytes, b.tp, b.pp)
    setting = d.inv.max_model_len
    source = f"{d.inv.spelling(setting)} {length:,}" if stated else \
        f"the model's default max length {length:,} (no {d.inv.spelling(setting)})"
    if verdict == "exceeds":
        severity = cap_assumed(Severity.ERROR, b.assumed)
        message = (f"{source} needs {gb(need)} of KV cache per GPU for one sequence, but "
                   f"{gb(max(g.kv, 0.0))} is left ({gpu_phrase(d, b.spec)}): vLLM refuses to "
                   f"start; at most {fits:,} tokens fit")
    else:
        severity = Severity.WARNING
        message = (f"{source} needs {gb(need)} of KV cache per GPU for one sequence, about all "
                   f"of the {gb(g.kv)} left ({gpu_phrase(d, b.spec)}): the engine's own "
                   f"overhead may leave too little; {fits:,} tokens fit at zero overhead")
    span = setting.span if stated and setting.span is not None else model_span(d)
    yield kv_cannot_hold_one_sequence.finding(message, d.source, span,
                  hint=f"lower {d.inv.spelling(setting)} to at most {fits:,}, add GPUs, or use "
                       f"{d.inv.long_name('kv_cache_dtype')} fp8",
                  math=b.lines(need, f" for one {length:,}-token sequence"),
                  related=layout_related(d) + gpu_related(d),
                  data=b.data(kv_needed_bytes=need, max_model_len=length, max_tokens=fits,
                              verdict=verdict), severity=severity)


def _one_request(d: Deployment, b: VllmBudget) -> Iterator[Finding]:
    """MG302 from vLLM's own check: the KV budget less the null block against the blocks one
    max-model-len request takes (kv_cache_utils.py check_enough_kv_cache_memory, 0.30.0)."""
    if weights_verdict(b)[0] is not None:
        return  # no memory for the cache blocks at all: MG301's finding, never both
    m = b.real
    assert m is not None
    r = m.budget
    length, stated = max_model_len(d, b.shape)
    if length is None:
        return
    avail = r.kv_budget - r.groups.bytes_per_block
    need = r.request_bytes
    verdict = mem.memory_verdict(need, avail, m.uncertainty)
    if verdict is None:
        return
    estimated = r.estimated_max_model_len()
    setting = d.inv.max_model_len
    source = f"{d.inv.spelling(setting)} {length:,}" if stated else \
        f"the model's default max length {length:,} (no {d.inv.spelling(setting)})"
    quote = (f"\"To serve at least one request with the model's max seq len ({length}), "
             f"({gib(need)} KV cache is needed, which is larger than the available KV cache "
             f"memory ({gib(avail)}). Based on the available memory, the estimated maximum "
             f"model length is {estimated}.\" (vllm/v1/core/kv_cache_utils.py "
             "_check_enough_kv_cache_memory)")
    if verdict == "exceeds":
        # a card whose CUDA total is not catalogued is sized at its marketed size read as GiB,
        # an upper bound (H100 80 GB reports 79.19 GiB; 24 GB cards 23.58-23.69 GiB in vLLM
        # logs): a refusal found with it holds on the real card
        severity = cap_assumed(Severity.ERROR, b.assumed)
        message = (f"{source}: one request needs {gib(need)} of KV cache per GPU but vLLM has "
                   f"{gib(avail)} ({gpu_phrase(d, b.spec)}): vLLM refuses to start: {quote}")
    else:
        severity = Severity.WARNING
        message = (f"{source}: one request needs {gib(need)} of KV cache per GPU, about all of "
                   f"the {gib(avail)} vLLM has ({gpu_phrase(d, b.spec)}); within the "
                   f"{gib(m.uncertainty)} this estimate can be off, vLLM may refuse to start "
                   f"(estimated maximum model length {estimated:,})")
    span = setting.span if stated and setting.span is not None else model_span(d)
    yield kv_cannot_hold_one_sequence.finding(message, d.source, span,
                  hint=f"lower {d.inv.spelling(setting)} to at most {estimated:,}, add GPUs, or "
                       f"use {d.inv.long_name('kv_cache_dtype')} fp8",
                  math=b.lines(), related=layout_related(d) + gpu_related(d),
                  data=b.data(kv_needed_bytes=need, kv_available_bytes=avail,
                              max_model_len=length, max_tokens=estimated, verdict=verdict),
                              severity=severity)


@rule("MG303", "kv-below-concurrency", Severity.WARNING,
      "the KV cache holds fewer tokens than the expected concurrency",
      needs={VLLM_ARGS},
      reads=("max_model_len", "gpu_memory_utilization", "kv_cache_memory_bytes", "max_num_seqs",
          "kv_cache_dtype"))
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
    b = vllm_budget(d)
    if b is None or weights_verdict(b)[0] is not None:
        return
    length, _ = max_model_len(d, b.shape)
    if d.inv.max_model_len.given and length is None:
        return
    s = d.settings
    seqs_cap = d.inv.max_num_seqs.int_value if d.inv.max_num_seqs.given else None
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
               f"{gpu_phrase(d, b.spec)}); {where}")
    yield kv_below_concurrency.finding(message, d.source, model_span(d),
                  hint=f"add GPUs or replicas, use {d.inv.long_name('kv_cache_dtype')} fp8, or "
                       f"lower {d.inv.spelling(d.inv.max_num_seqs)} to what fits",
                  math=((f"concurrency: min({s.users} users, {d.inv.spelling(d.inv.max_num_seqs)} "
                        f"{seqs_cap if seqs_cap is not None else 'default'}) × min({s.context:,}, "
                        f"max model len {'unknown' if length is None else format(length, ',')}) "
                        "= "
                        f"{users} × {context:,} tokens"),
                        *b.lines(need, f" for {per_engine} × {context:,} tokens")),
                  related=layout_related(d) + gpu_related(d),
                  data=b.data(kv_needed_bytes=need, sequences=per_engine, context=context,
                              sequences_that_fit=fits, concurrency_assumed=assumed))


@rule("MG304", "max-model-len-exceeds-model", Severity.ERROR,
      "--max-model-len above the model's derived limit",
      needs={VLLM_ARGS}, reads=("model", "max_model_len"), given=("max_model_len",))
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
    if model is None or model.shape is None or not setting.given:
        return
    value = setting.int_value
    if value is None or value <= 0 or setting.span is None or long_allowed(d):
        return
    limit = model_limit(d, model.shape)
    if limit is None or value <= limit:
        return
    rope = model.shape.rope_scaling
    how = f"{model.shape.max_positions:,} positions" + (
        f", {rope.type} RoPE scaling ×{rope.factor:g}" if rope is not None else "")
    if d.inv.hf_overrides.given:
        how += f", with {d.inv.spelling(d.inv.hf_overrides)}"
    yield max_model_len_exceeds_model.finding(
        f"{d.inv.spelling(setting)} {value:,} is above {model.shape.name}'s limit of "
        f"{limit:,} tokens ({how}): vLLM refuses to start",
        d.source, setting.span,
        hint=f"use at most {limit:,}, or set {ALLOW_LONG_ENV}=1 only if the model really "
             "handles longer positions",
        math=(f"derived max model len: {limit:,} ({how})",
              f"{d.inv.spelling(setting)}: {value:,} > {limit:,}"),
        related=(Related(d.source, model_span(d), "the model"),),
        data={"max_model_len": value, "limit": limit},
    )


def _utilization_hint(d: Deployment) -> str:
    """The hint names the default of the launch's own release (0.9 up to 0.19, 0.92 from
    0.20 in the catalogued releases: EngineArgs.gpu_memory_utilization)."""
    default = d.inv.default("gpu_memory_utilization")
    tail = f" (vLLM {d.inv.version} defaults to {default:g})" \
        if isinstance(default, (int, float)) else ""
    return f"use at most {UTILIZATION_WARN:g}{tail}"


@rule("MG305", "gpu-memory-utilization-range", Severity.ERROR,
      "--gpu-memory-utilization outside (0, 1) (1 on a CUDA GPU), or above 0.95",
      needs={VLLM_ARGS}, reads=("gpu_memory_utilization",), given=("gpu_memory_utilization",))
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
    if not setting.given or not setting.known or setting.span is None:
        return
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return
    flag = d.inv.spelling(setting)
    if not 0 < value <= 1:
        yield gpu_memory_utilization_range.finding(
                      f"{flag} {value:g} is outside (0, 1]: vLLM rejects it at start-up",
                      d.source, setting.span,
                      hint="a share of the GPU's memory between 0 and 1, e.g. 0.9",
                      data={"utilization": value})
        return
    if d.gpu is None:
        return  # not GPUs (TPU chips): the range is CacheConfig's, the rest is CUDA's
    spec = d.gpu.spec
    if value == 1 and (spec is None or spec.vendor == "NVIDIA"):
        # vllm/v1/worker/utils.py request_memory (0.30.0; the same test in gpu_worker.py
        # init_device in 0.10.2): requested = ceil(total × 1.0) = the whole card, compared with
        # the free memory after the CUDA context and NCCL are created, which is always less
        raw = setting.winner.raw if setting.winner is not None and setting.winner.raw \
            else f"{value:g}"
        yield gpu_memory_utilization_range.finding(
                      f"{flag} {raw} asks for the whole of each GPU: on CUDA vLLM refuses to start "
                      "(\"Free memory on device … on startup is less than desired GPU memory "
                      "utilization\", vllm/v1/worker/utils.py request_memory): the CUDA context "
                      "and NCCL already hold part of the card when it measures",
                      d.source, setting.span, hint=_utilization_hint(d),
                      data={"utilization": value})
        return
    if value <= UTILIZATION_WARN:
        return
    rest = ""
    math_lines: tuple[str, ...] = ()
    if spec is not None:
        left = spec.memory_bytes * (1 - value)
        rest = f" ({gb(left)} per GPU, {gpu_phrase(d, spec)})" if d.gpu is not None and \
            d.gpu.assumed else f" ({gb(left)} of {spec.name})"
        math_lines = ((f"outside vLLM's pool: {gb(spec.memory_bytes)} × (1 − {value:g}) = "
                      f"{gb(left)} per GPU"),)
    # CUDA graphs are inside vLLM's budget from 0.21 (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
    # on by default; vllm/v1/worker/gpu_worker.py determine_available_memory, 0.30.0 logs "CUDA
    # graph memory profiling is enabled (default since v0.21.0)"); before, they sat outside it
    graphs = "" if version_key(d.inv.version) >= version_key("0.21.0") else " and CUDA graphs"
    yield gpu_memory_utilization_range.finding(
                  f"{flag} {value:g} leaves {percent(1 - value)} of each GPU{rest} for the CUDA "
                  f"context, NCCL buffers{graphs} and anything else on the card",
                  d.source, setting.span, hint=_utilization_hint(d),
                  math=math_lines, data={"utilization": value}, severity=Severity.WARNING)


RULES: list[Rule] = [weights_exceed_memory, kv_cannot_hold_one_sequence, kv_below_concurrency,
                     max_model_len_exceeds_model, gpu_memory_utilization_range]
