"""SGLang's own start-up refusals (MG820–MG823): argument combinations its server rejects
before a model loads, or that leave the nodes of one engine unable to meet.

Each rule mirrors one check in SGLang's source and quotes it; the comment beside it names the
file and function.  The checks were read in the wheels of 0.4.10.post2 and 0.5.5 (the catalogued
releases) and looked up in 0.5.23, where the server arguments moved to sglang/srt/arg_groups/.
A check that 0.5.23 no longer has the same way is an error only when the image pins a release
that has it, else a warning that says so (DECISIONS: a verdict resting on an unknown engine
version is at most a warning).
"""

from __future__ import annotations

from collections.abc import Iterator

from mgpu_lint.deployment import Deployment
from mgpu_lint.engines import Setting
from mgpu_lint.engines.adapter import SGLANG_ARGS
from mgpu_lint.findings import Finding, Severity
from mgpu_lint.sizing.display import gb, gib
from mgpu_lint.sizing.sglang_memory import (DEFAULT_FRACTION_RELEASES, DefaultFraction,
                                            default_mem_fraction_static,
                                            derived_context, derived_context_length,
                                            graph_max_bs, static_pool_limit,
                                            weights_per_gpu_lower_bound)
from mgpu_lint.sizing.vllm_launch import card_bytes
from mgpu_lint.versions import version_key

from .registry import Rule, rule
from .text import (cap_assumed, gpu_phrase, gpu_related, model_name, model_span,
                   setting_related)

# the catalogued releases whose source these checks were read in
READ = ("0.4.10.post2", "0.5.5")


def _pin(d: Deployment) -> str | None:
    return d.adapter.release_pin(d.launch) if d.adapter.release_pin else None


def _int(s: Setting) -> int | None:
    """A size: a known integer of at least 1."""
    v = s.int_value
    return v if v is not None and v >= 1 else None


def _sizes(d: Deployment) -> tuple[int, int, int, int] | None:
    """tp, pp, dp, nnodes when all are known (their defaults are 1)."""
    inv = d.inv
    vals = (_int(inv.tensor_parallel_size), _int(inv.pipeline_parallel_size),
            _int(inv.data_parallel_size), _int(inv.nnodes))
    if any(v is None for v in vals):
        return None
    return vals  # type: ignore[return-value]


def _dp_attention(d: Deployment) -> bool | None:
    s = d.inv.setting("enable_dp_attention")
    return bool(s.value) if s.known else None


@rule("MG820", "nodes-do-not-divide-sizes", Severity.ERROR,
      "SGLang's tp × pp is not divisible by --nnodes",
      needs={SGLANG_ARGS}, reads=("tensor_parallel_size", "pipeline_parallel_size", "nnodes"))
def nodes_do_not_divide_sizes(d: Deployment) -> Iterator[Finding]:
    """
    What it does: checks that `--nnodes` divides tp × pp.

    Why is this bad? SGLang splits the tp × pp ranks evenly over the nodes and refuses
    anything else before it starts: `assert (tp_size * pp_size) % nnodes == 0, "tp_size must
    be divisible by number of nodes"` (sglang/srt/server_args.py
    ServerArgs.check_server_args, 0.4.10.post2 and 0.5.5; arg_groups/validation_hook.py
    check_server_args in 0.5.23). `--tp 8 --nnodes 3` never starts.

    Use instead: a node count that divides tp × pp (`--tp 16 --nnodes 2`: 8 ranks per node).
    """
    sizes = _sizes(d)
    if sizes is None:
        return
    tp, pp, _, nnodes = sizes
    inv = d.inv
    if nnodes <= 1 or (tp * pp) % nnodes == 0:
        return
    where = inv.nnodes
    yield nodes_do_not_divide_sizes.finding(
        f"--nnodes {nnodes} does not divide tp {tp} × pp {pp} = {tp * pp}: {d.adapter.display} "
        "refuses to start (\"tp_size must be divisible by number of nodes\")",
        d.source, where.span or d.program_span,
        math=(f"tp × pp = {tp} × {pp} = {tp * pp}; {tp * pp} % {nnodes} = "
              f"{(tp * pp) % nnodes}",),
        hint="use a node count that divides tp × pp, or change --tp-size / --pp-size",
        related=setting_related(d, inv.tensor_parallel_size, inv.pipeline_parallel_size),
    )


@rule("MG821", "data-parallel-across-nodes", Severity.ERROR,
      "SGLang data-parallel replicas over several nodes",
      needs={SGLANG_ARGS},
      reads=("data_parallel_size", "nnodes", "enable_dp_attention"))
def data_parallel_across_nodes(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `--dp` above 1 with `--nnodes` above 1 and no `--enable-dp-attention`.

    Why is this bad? SGLang runs data-parallel replicas on one node only and stops: "multi-node
    data parallel is not supported unless dp attention!" (sglang/srt/server_args.py
    ServerArgs.check_server_args, 0.4.10.post2 and 0.5.5); 0.5.23 keeps the refusal
    ("multi-node data-parallel replicas are not supported; use attention DP",
    arg_groups/validation_hook.py).

    Use instead: one engine per node with its own `--dp`, replicas as separate deployments
    behind a router, or dp attention (`--enable-dp-attention`) for DeepSeek-style models.
    """
    sizes = _sizes(d)
    attention = _dp_attention(d)
    if sizes is None or attention is None or attention:
        return
    _, _, dp, nnodes = sizes
    if dp <= 1 or nnodes <= 1:
        return
    inv = d.inv
    yield data_parallel_across_nodes.finding(
        f"--dp {dp} with --nnodes {nnodes} and no --enable-dp-attention: "
        f"{d.adapter.display} refuses to start (\"multi-node data parallel is not supported "
        "unless dp attention!\")",
        d.source, inv.data_parallel_size.span or d.program_span,
        hint="run one engine per node (replicas behind a router), or add "
             "--enable-dp-attention where the model supports it",
        related=setting_related(d, inv.nnodes),
    )


@rule("MG822", "dp-attention-not-dividing-tp", Severity.ERROR,
      "SGLang's dp attention with a dp that does not divide tp",
      needs={SGLANG_ARGS},
      reads=("tensor_parallel_size", "data_parallel_size", "enable_dp_attention"))
def dp_attention_not_dividing_tp(d: Deployment) -> Iterator[Finding]:
    """
    What it does: checks `--dp` against `--tp` when `--enable-dp-attention` is on.

    Why is this bad? dp attention splits the tp ranks into dp attention groups, so SGLang
    asserts `tp_size % dp_size == 0` before it starts (sglang/srt/server_args.py
    ServerArgs._handle_data_parallelism in 0.5.5, __post_init__ in 0.4.10.post2; a bare
    AssertionError). 0.5.23 turns the flag into `--attn-dp-size` with checks of its own, not
    read here: without a pinned release this is a warning.

    Use instead: a dp that divides tp (`--tp 8 --dp 8`, `--tp 8 --dp 4`).
    """
    sizes = _sizes(d)
    if sizes is None or not _dp_attention(d):
        return
    tp, _, dp, _ = sizes
    if dp <= 1 or tp % dp == 0:
        return
    inv = d.inv
    pin = _pin(d)
    pinned = pin in READ
    severity = Severity.ERROR if pinned else Severity.WARNING
    why = "" if pinned else (f" (as SGLang {', '.join(READ)} check it; nothing pins the "
                             "release, and 0.5.23 reads the flag differently)")
    yield dp_attention_not_dividing_tp.finding(
        f"--dp {dp} does not divide --tp {tp} with --enable-dp-attention: "
        f"{d.adapter.display} stops at start-up (assert tp_size % dp_size == 0){why}",
        d.source, inv.data_parallel_size.span or d.program_span, severity=severity,
        math=(f"tp % dp = {tp} % {dp} = {tp % dp}",),
        hint="use a dp that divides tp",
        related=setting_related(d, inv.tensor_parallel_size),
    )


@rule("MG823", "nodes-without-init-address", Severity.ERROR,
      "a multi-node SGLang launch without --dist-init-addr",
      # only whether --dist-init-addr is given matters: its value ($(LWS_LEADER_ADDRESS):…)
      # may stay unresolved without silencing the rule
      needs={SGLANG_ARGS}, reads=("nnodes",))
def nodes_without_init_address(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `--nnodes` above 1 without `--dist-init-addr` (or its alias
    `--nccl-init-addr`).

    Why is this bad? The nodes of one engine meet at the address of node 0. Without it every
    scheduler initialises torch.distributed at `tcp://127.0.0.1:<port>` on its own node
    (sglang/srt/model_executor/model_runner.py ModelRunner.init_torch_distributed,
    0.4.10.post2 and 0.5.5), so the ranks of the other nodes never join and start-up waits
    until the distributed timeout; with dp attention PortArgs.init_new reads the missing
    address and fails (sglang/srt/server_args.py).

    Use instead: `--dist-init-addr HOST:PORT` of node 0 on every node (in a LeaderWorkerSet,
    `$(LWS_LEADER_ADDRESS):20000`).
    """
    nnodes = _int(d.inv.nnodes)
    addr = d.inv.setting("dist_init_addr")
    if nnodes is None or nnodes <= 1 or addr.given or not addr.known:
        return
    yield nodes_without_init_address.finding(
        f"--nnodes {nnodes} without --dist-init-addr: each node's ranks rendezvous at "
        f"127.0.0.1 on their own node, so the {nnodes} nodes never form one engine and "
        "start-up hangs until the distributed timeout",
        d.source, d.inv.nnodes.span or d.program_span,
        hint="add --dist-init-addr HOST:PORT of node 0 to every node's command",
    )


# Settings that change how many weight bytes reach the GPU (online quantization, offload, a
# load format of its own): with any of them given the checkpoint's size is no lower bound.
# Keys of the 0.4.10.post2, 0.5.5 and 0.5.23 catalogs.
_WEIGHTS_CHANGED_BY = ("quantization", "torchao_config", "modelopt_quant", "quantize_and_serve",
                       "cpu_offload_gb", "offload_group_size", "offload_mode",
                       "ple_offload_embedding", "load_format")


# The settings the default --mem-fraction-static depends on (sizing/sglang_memory.py
# default_mem_fraction_static); cuda_graph_max_bs and cuda_graph_bs are 0.4.10.post2's and
# 0.5.5's options (0.5.23 folds them into --cuda-graph-config, whose reserve is not counted).
_DEFAULT_FRACTION_READS = ("data_parallel_size", "enable_dp_attention", "speculative_algorithm",
                           "chunked_prefill_size", "max_prefill_tokens", "cuda_graph_max_bs",
                           "cuda_graph_bs", "disaggregation_mode")

# sglang/srt/environ.py (0.5.23): EnvBool(False), read by overrides.py
# post_capture_kv_sizing_planned; any value in the launch may turn it on
POST_CAPTURE_ENV = "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING"


@rule("MG824", "static-memory-below-weights", Severity.ERROR,
      "SGLang's static memory (card × --mem-fraction-static) cannot hold the weights",
      needs={SGLANG_ARGS},
      reads=("model", "tensor_parallel_size", "pipeline_parallel_size", "mem_fraction_static",
             "dtype", "quantization", "torchao_config", "modelopt_quant", "quantize_and_serve",
             "cpu_offload_gb", "offload_group_size", "offload_mode", "ple_offload_embedding",
             "load_format", *_DEFAULT_FRACTION_READS))
def static_memory_below_weights(d: Deployment) -> Iterator[Finding]:
    """
    What it does: compares the model's weights per GPU — at least parameters × bits / (tp ×
    pp) — with the memory SGLang lets its static pool take: the card × `--mem-fraction-static`.
    When the flag is not given, the fraction is the default the release computes from the
    card, tp × pp and the prefill and CUDA-graph sizes: (card − reserve) / card, with the
    reserve of sglang/srt/server_args.py ServerArgs.__post_init__ (0.4.10.post2),
    _handle_gpu_memory_settings (0.5.5) or arg_groups/memory_hook.py
    handle_gpu_memory_settings (0.5.23; its CUDA-graph reserve is not counted, so the
    fraction used is at most SGLang's). Without a pinned release the newest catalogued
    release's default is used and the finding is a warning.

    Why is this bad? SGLang sizes its KV cache as what is left of card × mem-fraction-static
    after the weights (sglang/srt/model_executor/model_runner.py profile_max_num_token,
    0.5.5; pool_configurator.py in 0.5.23). When the weights take all of it, no token fits and
    SGLang stops: "Not enough memory. Please try to increase --mem-fraction-static"; weights
    larger than the card fail earlier, with CUDA out of memory while loading.

    Launches that quantize online (`--quantization`, `--torchao-config`, `--modelopt-quant`)
    or offload weights (`--cpu-offload-gb`, `--offload-*`) are not checked: the checkpoint's
    size is then no lower bound of what loads.

    Use instead: a higher `--mem-fraction-static` (leaving room for activations and CUDA
    graphs), more GPUs (`--tp-size`), or a quantized checkpoint.
    """
    m, g, inv = d.model, d.gpu, d.inv
    if m is None or m.shape is None or g is None or g.spec is None:
        return
    sizes = _sizes(d)
    if sizes is None:
        return
    for key in _WEIGHTS_CHANGED_BY:
        s = inv.setting(key)
        if s.given or not s.known:
            return  # quantized online or offloaded: the checkpoint's bytes are not what loads
    tp, pp, dp, _ = sizes
    fraction = inv.setting("mem_fraction_static")
    default: DefaultFraction | None = None
    pin = _pin(d)
    if fraction.given:
        f = fraction.value
    else:
        default = _default_fraction(d, g.spec.memory_gb, tp, pp, dp, pin)
        f = default.fraction if default is not None else 1.0  # unknown: the whole card
    if not fraction.known or isinstance(f, bool) or not isinstance(f, (int, float)) or \
            not 0 < f <= 1:
        return
    card, measured = card_bytes(g.spec)
    weights = weights_per_gpu_lower_bound(m.shape.params, m.weights.bits, tp, pp)
    limit = static_pool_limit(card, f)
    if weights < limit:
        return
    on = gpu_phrase(d, g.spec)
    severity = cap_assumed(Severity.ERROR, g.assumed)
    if weights >= card:
        what = (f"the card has {gib(card)} ({on}): the weights do not load (CUDA out of "
                "memory)")
    else:
        if default is None:
            source = f"--mem-fraction-static {f:g}"
        else:
            source = (f"the default --mem-fraction-static SGLang {default.release} computes, "
                      f"{'at most ' if default.upper_bound else ''}{f:g},")
        what = (f"{d.adapter.display} keeps at most {gib(limit)} for weights and KV cache "
                f"({source} of {gib(card)}, {on}): no KV token fits and it stops (\"Not "
                "enough memory. Please try to increase --mem-fraction-static\")")
        if default is not None and pin is None:
            what += (f"; nothing pins the release, so SGLang {default.release}, the newest "
                     "catalogued, is assumed")
            severity = Severity.WARNING
    card_note = "" if measured else " (marketed size read as GiB: an upper bound)"
    related = (*gpu_related(d), *setting_related(d, inv.tensor_parallel_size,
                                           inv.pipeline_parallel_size))
    pool = (f"static pool limit: {gib(card)}{card_note} × {f:g} = {gib(limit)}",)
    if default is not None:
        pool = (f"default --mem-fraction-static (SGLang {default.release}): reserve "
                f"{' + '.join(default.terms)} = {default.reserved_mib:g} MiB; "
                f"round(({default.gpu_mib:g} − {default.reserved_mib:g}) / "
                f"{default.gpu_mib:g}, 3) = {f:g}", *pool)
    yield static_memory_below_weights.finding(
        f"the weights of {model_name(d)} take at least {gib(weights)} per GPU (tp {tp} × pp "
        f"{pp}) but {what}",
        d.source, fraction.span if fraction.given and fraction.span is not None and
        weights < card else model_span(d),
        severity=severity,
        math=(f"weights: {m.shape.params / 1e9:g}B params × {m.weights.bits:g} bits "
              f"({m.weights.label}, {m.weights.origin}) = {gb(weights * tp * pp)}",
              f"at least per GPU: {gb(weights * tp * pp)} / (tp {tp} × pp {pp}) = "
              f"{gib(weights)}",
              *(pool if weights < card else (f"card: {gib(card)}{card_note}",))),
        hint="raise --mem-fraction-static, add GPUs (--tp-size), or use a quantized checkpoint"
        if weights < card else "add GPUs (--tp-size / --pp-size) or use a quantized checkpoint",
        related=related,
    )


def _default_fraction(d: Deployment, memory_gb: float, tp: int, pp: int, dp: int,
                      pin: str | None) -> DefaultFraction | None:
    """The --mem-fraction-static the pinned release (else the newest catalogued) computes, or
    None when a setting it depends on is unknown.

    The card is read as its marketed size in GiB × 1024 MiB: at least what nvidia-smi reports
    (H100 80 GB: 81559 MiB of 81920), which only raises the fraction, and in the same band of
    SGLang's table (the band edges, 20/35/60/90/160 GiB, are far from marketed sizes)."""
    release = pin or DEFAULT_FRACTION_RELEASES[-1]
    inv = d.inv
    keys = ("enable_dp_attention", "speculative_algorithm", "chunked_prefill_size",
            "max_prefill_tokens", "cuda_graph_max_bs", "cuda_graph_bs", "disaggregation_mode")
    s = {k: inv.setting(k) for k in keys}
    if not all(v.known for v in s.values()):
        return None
    chunked = _signed_int(s["chunked_prefill_size"].value)
    max_prefill = _tokens(s["max_prefill_tokens"])
    if (s["chunked_prefill_size"].value is not None and chunked is None) or max_prefill is None:
        return None
    readable, graph_bs = graph_max_bs(s["cuda_graph_max_bs"].value, s["cuda_graph_bs"].value)
    if not readable:
        return None
    spec = s["speculative_algorithm"].value
    env = d.launch.env
    # 0.5.23 sizes the pool after graph capture when the variable is set or for a Muse Spark
    # model, which only a local config.json could be
    post_capture = POST_CAPTURE_ENV in env or (d.model is not None and d.model.shape is not None
                                               and d.model.shape.length_keys is not None)
    return default_mem_fraction_static(
        release, memory_gb * 1024, tp=tp, pp=pp, dp=dp,
        dp_attention=bool(s["enable_dp_attention"].value),
        speculative=spec if isinstance(spec, str) else None, chunked_prefill_size=chunked,
        max_prefill_tokens=max_prefill, cuda_graph_max_bs=graph_bs,
        disaggregation_decode=s["disaggregation_mode"].value == "decode",
        post_capture_possible=post_capture)


def _signed_int(v: object) -> int | None:
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        return int(v.strip())
    return v if type(v) is int else None


# sglang/srt/environ.py (0.5.5, 0.5.23): EnvBool(False), read by ModelConfig
# _derive_context_length; 0.4.10.post2 reads it with get_bool_env_var(..., default="True")
ALLOW_LONGER_CONTEXT_ENV = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"

# The first catalogued release whose default refuses a longer --context-length (0.4.10.post2
# only warns); the releases between were not read.
REFUSES_LONGER_CONTEXT = "0.5.5"


@rule("MG825", "context-length-above-model", Severity.ERROR,
      "SGLang's --context-length above the length the model's config.json gives",
      needs={SGLANG_ARGS}, reads=("model", "context_length", "json_model_override_args"))
def context_length_above_model(d: Deployment) -> Iterator[Finding]:
    """
    What it does: compares `--context-length` with the context length SGLang derives from the
    model's config.json (a local model directory beside the manifest): the first of
    max_sequence_length, seq_length, max_seq_len, model_max_length, max_position_embeddings,
    times the RoPE scaling factor unless the scaling names original_max_position_embeddings
    or is llama3 (sglang/srt/utils/hf_transformers_utils.py get_context_length, 0.5.5; the
    same in 0.4.10.post2 and 0.5.23).

    Why is this bad? From 0.5.5 SGLang refuses at start-up: "ValueError: User-specified
    context_length (…) is greater than the derived context_length (…)" unless
    SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is set (sglang/srt/configs/model_config.py
    ModelConfig._derive_context_length, 0.5.5 and 0.5.23). 0.4.10.post2 allows it by default
    and only warns that outputs may be wrong or CUDA may fail. Models from the catalog are not
    checked: only a config.json says which key and scaling SGLang reads.

    Use instead: a `--context-length` within the model's, or the scaling the model supports
    via `--json-model-override-args` (then the derived length grows with it).
    """
    m = d.model
    if m is None or m.shape is None:
        return
    ctx = _tokens(d.inv.setting("context_length"))
    over = d.inv.setting("json_model_override_args")
    if ctx is None or over.given or not over.known:
        return  # overrides may set the length keys or the scaling
    found = derived_context(m.shape)
    if found is None or ctx <= found[0]:
        return
    derived, how = found
    env = d.launch.env.get(ALLOW_LONGER_CONTEXT_ENV)
    pin = _pin(d)
    refuses = env is None and pin is not None and \
        version_key(pin) >= version_key(REFUSES_LONGER_CONTEXT)
    if refuses:
        what = (f"{d.adapter.display} {pin} refuses to start (\"User-specified context_length "
                f"({ctx}) is greater than the derived context_length ({derived})\")")
    elif env is not None:
        what = (f"{ALLOW_LONGER_CONTEXT_ENV} lets {d.adapter.display} start, warning that "
                "outputs may be wrong or CUDA may fail past the model's length")
    else:
        what = (f"{d.adapter.display} 0.5.5 and later refuse to start unless "
                f"{ALLOW_LONGER_CONTEXT_ENV} is set; 0.4.10.post2 starts with a warning that "
                "outputs may be wrong (nothing pins the release)" if pin is None else
                f"{d.adapter.display} {pin} starts with a warning that outputs may be wrong "
                "or CUDA may fail past the model's length")
    yield context_length_above_model.finding(
        f"--context-length {ctx} is above the {derived} tokens {model_name(d)}'s config.json "
        f"gives: {what}",
        d.source, d.inv.setting("context_length").span or d.program_span,
        severity=Severity.ERROR if refuses else Severity.WARNING,
        math=(f"derived context length: {how} = {derived}",
              f"--context-length {ctx} > {derived}"),
        hint="lower --context-length to the model's length, or extend the model's RoPE "
             "scaling with --json-model-override-args",
    )


# ModelRunner asserts max_req_len > 0 and max_req_input_len = max_req_len - 5 > 0 (tp_worker.py
# TpModelWorker.__init__, 0.4.10.post2 and 0.5.5): a pool of 6 tokens or fewer never starts;
# 0.5.23 asserts only max_req_len > 0 (TpModelWorker validation): 1 token
SMALLEST_POOL = {"0.4.10.post2": 7, "0.5.5": 7, "0.5.23": 2}


@rule("MG826", "max-total-tokens-below-context", Severity.WARNING,
      "SGLang's --max-total-tokens below the context length: longer requests are refused",
      needs={SGLANG_ARGS},
      reads=("model", "context_length", "max_total_tokens", "json_model_override_args"))
def max_total_tokens_below_context(d: Deployment) -> Iterator[Finding]:
    """
    What it does: compares `--max-total-tokens` with the context length SGLang serves: the
    `--context-length` given, else the one it derives from a local model's config.json (as
    MG825 does), else a catalog model's max_position_embeddings when it has no RoPE scaling.

    Why is this bad? SGLang caps its KV pool at min(the profiled size, `--max-total-tokens`)
    (sglang/srt/model_executor/model_runner.py ModelRunner.init_memory_pool, 0.4.10.post2
    and 0.5.5; mem_cache/kv_cache_configurator.py _apply_token_constraints, 0.5.23) and
    takes `max_req_len = min(context_len - 1, max_total_num_tokens - 1)`
    (sglang/srt/managers/tp_worker.py TpModelWorker), so no request longer than the pool is
    served: the scheduler refuses prompts of `max_req_input_len` or more tokens. It still
    starts (0.5.23 logs "KV pool holds … tokens, fewer than --context-length"), so this is a
    warning; a pool too small for any request (6 tokens or fewer; 1 in 0.5.23) stops with
    "Memory pool size is too small". A value above what the card holds is capped to the
    profiled pool with a log line: not reported.

    Use instead: a `--max-total-tokens` of at least the context length, or a matching
    `--context-length`.
    """
    total_setting = d.inv.setting("max_total_tokens")
    total = _tokens(total_setting)
    if total is None:
        return
    pin = _pin(d)
    smallest = SMALLEST_POOL.get(pin) if pin else min(SMALLEST_POOL.values())
    span = total_setting.span or d.program_span
    if smallest is not None and total < smallest:
        yield max_total_tokens_below_context.finding(
            f"--max-total-tokens {total} leaves no room for a request: {d.adapter.display} "
            f"stops at start-up (\"Memory pool size is too small\": a pool of {total} tokens "
            "holds no request)", d.source, span, severity=Severity.ERROR,
            hint="use a --max-total-tokens of at least the context length")
        return
    ctx, where = _served_context(d)
    if ctx is None or total >= ctx:
        return
    yield max_total_tokens_below_context.finding(
        f"--max-total-tokens {total} is below the {ctx}-token context length ({where}): "
        f"{d.adapter.display} starts, but its KV pool holds at most {total} tokens, so "
        f"requests longer than {total - 1} tokens are refused",
        d.source, span,
        math=(f"max_req_len = min(context_len - 1, max_total_tokens - 1) = min({ctx - 1}, "
              f"{total - 1}) = {total - 1}",),
        hint="raise --max-total-tokens to the context length, or lower --context-length",
    )


def _served_context(d: Deployment) -> tuple[int | None, str]:
    """The context length SGLang serves, and where it comes from."""
    given = d.inv.setting("context_length")
    if given.given or not given.known:
        return _tokens(given), "--context-length"
    over = d.inv.setting("json_model_override_args")
    m = d.model
    if over.given or not over.known or m is None or m.shape is None:
        return None, ""
    derived = derived_context_length(m.shape)
    if derived is not None:
        return derived, f"{model_name(d)}'s config.json"
    shape = m.shape
    if shape.length_keys is None and shape.rope_scaling is None and shape.max_positions:
        return shape.max_positions, f"{model_name(d)}'s max_position_embeddings"
    return None, ""


def _tokens(s: Setting) -> int | None:
    """A token count: an integer, or digits only (0.5.23 parses --context-length and
    --max-total-tokens with human_readable_int, sglang/srt/utils/common.py, where plain digits
    are int(value); its k/Ki suffixes are left unread)."""
    v = s.value
    if s.known and isinstance(v, str) and v.strip().isascii() and v.strip().isdigit():
        v = int(v.strip())
    return v if s.known and type(v) is int and v >= 1 else None


RULES: list[Rule] = [nodes_do_not_divide_sizes, data_parallel_across_nodes,
                     dp_attention_not_dividing_tp, nodes_without_init_address,
                     static_memory_below_weights, context_length_above_model,
                     max_total_tokens_below_context]
