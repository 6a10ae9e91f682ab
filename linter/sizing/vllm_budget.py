"""GPU memory as vLLM budgets it at start-up: pure functions, one pinned release at a time.

Every term follows the vLLM source named beside it (read in the 0.30.0 wheel); the constants that
vLLM measures at start-up instead of computing (the sampler's and the forward pass's activation
peak, memory outside PyTorch, the CUDA-graph estimate) are fitted to the 38 logged start-ups in
``tests/data/calibration/vllm-0.19-h100-sweep.tsv`` and carry their measured spread as
``UNCERTAINTY_BYTES`` (the allowance a verdict must clear).

The chain, per GPU (``vllm/v1/worker/gpu_worker.py`` ``determine_available_memory``):

    requested   = ceil(card × gpu_memory_utilization)          (v1/worker/utils.py request_memory)
    KV budget   = requested − weights − activation peak − non-torch − CUDA graphs
                  (or --kv-cache-memory-bytes when given)
    blocks      = floor(KV budget / bytes per block)           (v1/core/kv_cache_utils.py
                                                                 get_kv_cache_config_from_groups)
    concurrency = blocks / blocks one max-model-len request needs
                                                    (get_max_concurrency_for_kv_cache_config)
    KV tokens   = int(concurrency × max-model-len)             (get_kv_cache_capacity)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING
from ..records import dataclass

if TYPE_CHECKING:
    from ..catalog.knowledge import ModelShape

GIB = 1 << 30
BLOCK_SIZE = 16  # CacheConfig.block_size default on CUDA (vllm/config/cache.py, 0.30.0)
# vllm/model_executor/layers/vocab_parallel_embedding.py DEFAULT_VOCAB_PADDING_SIZE
VOCAB_PADDING = 64

# --------------------------------------------------------------------------- measured constants
# Activation peak of profile_run (vllm/v1/worker/gpu_model_runner.py): the forward dummy run at
# max_num_batched_tokens (_dummy_run) and, on the last pipeline stage, the sampler dummy run over
# max_num_seqs rows of full-vocabulary logits (_dummy_sampler_run: fp32 logits, softmax, top-k/
# top-p sort buffers) while the forward run's hidden states (tokens × hidden) are still held.
# PyTorch measures the peak; the bytes per element below are fitted to the sweep's logged
# "activation peak": the logits in the model dtype plus 12.1 B per logit, 0.11 GiB fixed.
SAMPLER_BYTES_PER_LOGIT = 12.1  # fp32 working copies, sort and top-k/top-p buffers
FORWARD_BYTES_PER_FFN_VALUE = 4.0  # gate/up output (2 × intermediate) in 16 bits, twice live
ACTIVATION_BASE_BYTES = int(0.11 * GIB)
# Memory outside PyTorch's allocator counted by memory_profiling (vllm/utils/mem_utils.py):
# CUDA context and cuBLAS workspaces at tp 1; NCCL and custom all-reduce buffers at tp > 1.
# Sweep: 0.24-0.27 GiB at tp 1 (0.46 once), 2.06-2.21 GiB at tp > 1, 0.07 GiB with pp only.
NON_TORCH_TP1 = int(0.25 * GIB)
NON_TORCH_TP = int(2.1 * GIB)
NON_TORCH_PP_ONLY = int(0.07 * GIB)
# profile_cudagraph_memory (gpu_model_runner.py): the sweep's logged estimates, median per class
# (tp 1: 0.49-1.39 GiB, median 0.84; tp > 1: 0.57-1.92 GiB, median 1.63).
CUDAGRAPH_TP1 = int(0.84 * GIB)
CUDAGRAPH_TP = int(1.63 * GIB)
# What the fitted terms leave unexplained on the sweep (activation and non-torch scatter, allocator
# rounding in "Model loading took"): the named overhead allowance of the memory verdicts.
UNCERTAINTY_BYTES = int(0.5 * GIB)


@dataclass(frozen=True)
class Release:
    """What changes between releases in the budget."""

    version: str
    # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS (vllm/envs.py): default "1", so the CUDA graph
    # estimate is subtracted — "CUDA graph memory profiling is enabled (default since v0.21.0)"
    # (vllm/v1/worker/gpu_worker.py determine_available_memory, 0.30.0); 0.19 only logged it
    # (calibration sweep).
    cudagraphs_subtracted: bool


def release(version: str, estimate_cudagraphs_env: str | None = None) -> Release:
    """The release's behaviour; ``estimate_cudagraphs_env`` is VLLM_MEMORY_PROFILER_ESTIMATE_
    CUDAGRAPHS when the launch sets it (vllm/envs.py: bool(int(value)))."""
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    on = parts >= (0, 21)
    if estimate_cudagraphs_env is not None and estimate_cudagraphs_env.strip().isdigit():
        on = on and bool(int(estimate_cudagraphs_env.strip()))
    return Release(version, on)


# --------------------------------------------------------------------------- defaults


def batch_defaults(card_bytes: int, device_name: str = "", usage: str = "openai"
                   ) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) when the launch sets neither: EngineArgs.
    get_batch_defaults (vllm/engine/arg_utils.py, 0.30.0) by the card's total memory, for the
    OpenAI server (``vllm serve``) or the LLM class."""
    openai = usage == "openai"
    if card_bytes >= 160 * GIB:
        return 16384, 1024
    if card_bytes >= 70 * GIB and "a100" not in device_name.lower():
        return (8192 if openai else 16384), 1024
    return (2048 if openai else 8192), 256


def scheduler_sizes(card_bytes: int, max_model_len: int, *, device_name: str = "",
                    max_num_batched_tokens: int | None = None, max_num_seqs: int | None = None,
                    chunked_prefill: bool = True) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) as _set_default_max_num_seqs_and_batched_tokens_args
    sets them (vllm/engine/arg_utils.py, 0.30.0): defaults by card, raised to max_model_len
    without chunked prefill, capped at max_num_seqs × max_model_len; max_num_seqs capped at
    max_num_batched_tokens."""
    tokens_default, seqs_default = batch_defaults(card_bytes, device_name)
    seqs = max_num_seqs if max_num_seqs is not None else seqs_default
    if max_num_batched_tokens is not None:
        tokens = max_num_batched_tokens
    else:
        tokens = tokens_default if chunked_prefill else max(max_model_len, tokens_default)
        tokens = min(seqs * max_model_len, tokens)
    if max_num_seqs is None:
        seqs = min(seqs, tokens)
    return tokens, seqs


# --------------------------------------------------------------------------- weights


def pad_vocab(vocab: int) -> int:
    """pad_vocab_size (vocab_parallel_embedding.py): a multiple of 64."""
    return -(-vocab // VOCAB_PADDING) * VOCAB_PADDING


def pp_partition(layers: int, pp: int) -> list[int]:
    """Layers per pipeline stage: get_pp_indices (vllm/distributed/utils.py, 0.30.0) — equal
    shares, the remainder going to the stages before the last, from the second-to-last down."""
    parts = [layers // pp] * pp
    for i in range(2, layers % pp + 2):
        parts[-i] += 1
    return parts


def largest_stage(layers: int, pp: int) -> int:
    """Layers of the largest pipeline stage (= ceil(layers / pp)): the one place every rule
    reads "layers per stage" from."""
    return max(pp_partition(layers, pp))


@dataclass(frozen=True)
class WeightParts:
    """A checkpoint split as vLLM shards it (bytes, whole model)."""

    embedding: float  # vocab (padded) × hidden, 16-bit in quantized checkpoints
    lm_head: float  # 0 when tied (one tensor) — except on a last pipeline stage of its own
    lm_head_tied: bool
    dense_layer: float  # one decoder layer's attention + dense MLP (+ norms), split by tp
    expert_layer: float  # one MoE layer's routed experts, split by tp × dp
    layers: int
    moe_layers: int
    extra: float  # vision tower and projector (first stage, replicated over tp)


def linear_bits(bits: float, method: str | None) -> float:
    """Stored bits per weight of a quantized linear layer, with its scales: GPTQ/AWQ/W4A16
    keep one 16-bit scale per group of 128 (compressed-tensors, gptq_marlin, awq_marlin), AWQ a
    4-bit zero point per group too; 8-bit formats one scale per output channel (negligible)."""
    m = (method or "").lower()
    if bits <= 4.0 and not any(k in m for k in ("mxfp4", "nvfp4", "fp4")):
        return bits + 16 / 128 + (4 / 128 if "awq" in m else 0.0)
    return bits


def weight_parts(shape: ModelShape, bits: float, method: str | None = None,
                 activation_bits: float = 16.0) -> WeightParts:
    """The checkpoint's tensors as vLLM loads them.

    Quantized checkpoints (``bits`` < 16) keep the embedding, lm_head, norms and biases in the
    activation dtype (VocabParallelEmbedding/ParallelLMHead use UnquantizedEmbeddingMethod unless
    the method quantizes them, vllm/model_executor/layers/vocab_parallel_embedding.py); MXFP4
    (gpt-oss) quantizes the experts only.  A GGUF type's bits per weight already average the file.
    """
    params = float(shape.params_exact or shape.params)
    vocab = shape.vocab or 0
    table_params = pad_vocab(vocab) * shape.hidden if vocab else 0
    tied = bool(shape.tie_embeddings)
    head_params = 0 if tied else table_params
    raw_tables = vocab * shape.hidden * (1 if tied else 2)
    body = max(params - raw_tables, 0.0)
    moe_layers = shape.moe_layers if shape.moe_layers is not None else (
        shape.layers if shape.is_moe else 0)
    expert_params = 0.0
    if shape.is_moe and shape.intermediate is not None:
        expert_params = min(float(moe_layers * shape.experts * 3 * shape.hidden
                                  * shape.intermediate), body)
    dense_params = body - expert_params
    act = activation_bits / 8
    m = (method or "").lower()
    if "mxfp4" in m and shape.intermediate:
        # mxfp4_round_up_hidden_size_and_intermediate_size (vllm/model_executor/layers/
        # fused_moe/oracle/mxfp4.py, 0.30.0): the Marlin and TRT-LLM kernels pad the expert
        # tensors to hidden 256 and intermediate 128 (gpt-oss: 2880 -> 3072 x 2944); the H100
        # start-up of the calibration sweep loads exactly those bytes (13.64 GiB for 20b).
        pad = (-(-shape.hidden // 256) * 256) * (-(-shape.intermediate // 128) * 128) \
            / (shape.hidden * shape.intermediate)
        expert_params *= pad
    gguf = m.startswith("gguf")
    if gguf or bits >= 16:
        per = (bits if gguf else max(bits, activation_bits)) / 8
        table = per
        dense_b = expert_b = per
    elif "mxfp4" in m:
        table, dense_b, expert_b = act, act, bits / 8
    else:
        table = act
        dense_b = expert_b = linear_bits(bits, method) / 8
    extra = float(shape.vision_params or 0) * act
    return WeightParts(
        embedding=table_params * table, lm_head=head_params * table, lm_head_tied=tied,
        dense_layer=dense_params / shape.layers * dense_b,
        expert_layer=(expert_params / moe_layers * expert_b) if moe_layers else 0.0,
        layers=shape.layers, moe_layers=moe_layers, extra=extra)


def stage_weights(parts: WeightParts, stage: int, pp: int, tp: int, ep: int = 1,
                  moe_share: float = 1.0) -> float:
    """Weights one GPU of pipeline stage ``stage`` holds (bytes): its layers' dense parts / tp,
    expert parts / (tp × ep) (FusedMoE flattens tp × dp, vllm/model_executor/layers/fused_moe/
    config.py); the embedding on the first stage, lm_head on the last (vocab-parallel, / tp); a
    tied lm_head is a tensor of its own when first and last stage differ."""
    layers = pp_partition(parts.layers, pp)[stage]
    # routed experts sit on the MoE layers only; a stage holds its share of them
    moe_layers = parts.moe_layers * layers / parts.layers
    w = layers * parts.dense_layer / tp + moe_layers * parts.expert_layer * moe_share / (tp * ep)
    if stage == 0:
        w += parts.embedding / tp + parts.extra
    if stage == pp - 1:
        head = parts.embedding if parts.lm_head_tied else parts.lm_head
        if not parts.lm_head_tied or pp > 1:
            w += head / tp
    return w


# --------------------------------------------------------------------------- LoRA slots


@dataclass(frozen=True)
class LoraSlots:
    """The adapter buffers vLLM allocates with --enable-lora (one slot per --max-loras, each of
    --max-lora-rank), whatever adapters are loaded later."""

    max_loras: int
    rank: int
    bytes_per_value: float  # --lora-dtype; auto follows the model dtype (LoRAConfig)
    fully_sharded: bool = False  # --fully-sharded-loras
    embeddings: bool = False  # the model class lists embed_tokens/lm_head as embedding_modules


def lora_stage_bytes(shape: ModelShape, lora: LoraSlots, stage: int, pp: int, tp: int) -> int:
    """LoRA buffers on one GPU of pipeline stage ``stage`` (bytes), as vLLM 0.30.0 allocates them
    inside load_model (so "Model loading took" includes them: gpu_model_runner.py load_model →
    load_lora_model → LoRAModelManager._create_lora_modules, every linear layer when no
    --lora-target-modules is given).  Per decoder layer of a dense Llama-style model
    (vllm/lora/layers/*.py create_lora_weights), with L slots of rank r:

    - qkv_proj (MergedQKVParallelLinearWithLoRA): A = 3 × L × r × hidden, B = L × r × (q/tp +
      2 × kv heads per rank × head_dim); gate_up_proj (MergedColumnParallelLinearWithLoRA):
      A = 2 × L × r × hidden, B = 2 × L × r × intermediate/tp;
    - o_proj, down_proj (RowParallelLinearWithLoRA): A = L × r × input/tp, B = L × r × hidden;
    - --fully-sharded-loras splits the column layers' A (r/tp) and the row layers' B (hidden/tp);
    - with embedding modules: embed_tokens (VocabParallelEmbeddingWithLoRA, first stage)
      A = L × vocab × r, B = L × hidden × r; the logits processor (LogitsProcessorWithLoRA, last
      stage) A = L × r × hidden, B = L × vocab × r — the full vocabulary on every tp rank.

    A lower bound: it leaves out the punica metadata (a few MB) and a second embedding slot set
    that tied-embedding models may get."""
    layers = pp_partition(shape.layers, pp)[stage]
    h, hd = shape.hidden, shape.head_dim
    q = shape.heads // tp * hd
    kv = max(1, shape.kv_heads // tp) * hd  # QKVParallelLinear: replicated below one head
    inter = (shape.intermediate or 4 * h) // tp
    r, loras = lora.rank, lora.max_loras
    r_col = r // tp if lora.fully_sharded else r
    h_row = h // tp if lora.fully_sharded else h
    per_layer = (3 * r_col * h + r * (q + 2 * kv)          # qkv_proj
                 + r * q + h_row * r                       # o_proj
                 + 2 * r_col * h + 2 * r * inter           # gate_up_proj
                 + r * inter + h_row * r)                  # down_proj
    values = layers * per_layer
    if lora.embeddings and shape.vocab:
        if stage == 0:
            values += shape.vocab * r + h * r
        if stage == pp - 1:
            values += r * h + shape.vocab * r
    return int(loras * values * lora.bytes_per_value)


# --------------------------------------------------------------------------- KV cache layout


@dataclass(frozen=True)
class LayerGroups:
    """KV cache groups of one pipeline stage (_get_kv_cache_groups_uniform_page_size)."""

    page_bytes: int  # one layer's block
    group_size: int  # layers per group (padded)
    full_groups: int
    sliding_groups: int
    window: int | None
    # --decode-context-parallel-size: full-attention KV (MLA too) is sharded over the DCP ranks,
    # sliding-window groups stay replicated (kv_cache_utils.py dcp_world_size_for_kv_cache_spec)
    dcp: int = 1

    @property
    def bytes_per_block(self) -> int:
        """_get_kv_cache_bytes_per_block: the largest group's pages — group_size × page."""
        return self.page_bytes * self.group_size


def page_bytes(shape: ModelShape, kv_bytes: float, tp: int, block_size: int = BLOCK_SIZE) -> int:
    """One layer's block: block_size × 2 (K and V) × kv_heads/tp (at least 1) × head_dim × bytes
    (AttentionSpec.page_size_bytes, vllm/v1/kv_cache_interface.py); MLA stores one latent of
    kv_lora_rank + rope dim per token, not split by tp (MLAAttentionSpec, head_size_v 0)."""
    if shape.kv_lora_rank is not None and shape.qk_rope_head_dim is not None:
        return int(block_size * (shape.kv_lora_rank + shape.qk_rope_head_dim) * kv_bytes)
    heads = max(1, shape.kv_heads // tp)
    return int(block_size * 2 * heads * shape.head_dim * kv_bytes)


def layer_groups(full: int, sliding: int, page: int, window: int | None,
                 dcp: int = 1) -> LayerGroups:
    """Group the layers as vLLM does: one bucket per attention type; group size = the smaller
    bucket, or the larger when it is under 1.5× the smaller; each bucket padded up to whole
    groups (kv_cache_utils.py _get_kv_cache_groups_uniform_page_size, 0.30.0)."""
    if not sliding or not window:
        return LayerGroups(page, full + sliding, 1, 0, None, dcp)
    if not full:
        return LayerGroups(page, sliding, 0, 1, window, dcp)
    small, large = min(full, sliding), max(full, sliding)
    size = large if large < small * 1.5 else small
    return LayerGroups(page, size, -(-full // size), -(-sliding // size), window, dcp)


def blocks_per_request(groups: LayerGroups, max_model_len: int, in_flight_tokens: int,
                       block_size: int = BLOCK_SIZE) -> int:
    """Blocks one max-model-len request takes over all groups: cdiv(L, block) per full group,
    cdiv(cdiv(L, dcp), block) under decode context parallelism (FullAttentionSpec.
    max_memory_usage_bytes); per sliding group cdiv(min(window − 1 + tokens in flight, L),
    block) + 1 (SlidingWindowSpec.max_admission_blocks_per_request, kv_cache_interface.py)."""
    full = -(-(-(-max_model_len // groups.dcp)) // block_size)
    total = groups.full_groups * full
    if groups.sliding_groups and groups.window:
        tokens = min(groups.window - 1 + in_flight_tokens, max_model_len)
        total += groups.sliding_groups * (-(-tokens // block_size) + 1)
    return total


def estimate_max_model_len(groups: LayerGroups, kv_budget: int, max_model_len: int,
                           in_flight_tokens: int, block_size: int = BLOCK_SIZE) -> int:
    """estimate_max_model_len (kv_cache_utils.py): the longest length whose per-request KV fits
    the budget (binary search over 1..max_model_len, as vLLM does)."""
    def fits(n: int) -> bool:
        return blocks_per_request(groups, n, in_flight_tokens, block_size) \
            * groups.bytes_per_block <= kv_budget
    if not fits(1):
        return 0
    lo, hi, best = 1, max_model_len, 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if fits(mid):
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


# --------------------------------------------------------------------------- the budget


@dataclass(frozen=True)
class Inputs:
    shape: ModelShape
    card_bytes: int  # total memory as CUDA reports it
    utilization: float
    weight_bits: float
    quant_method: str | None  # "fp8", "gptq", "awq", "mxfp4", "gguf Q4_K_M", None for 16-bit
    kv_bytes: float
    max_model_len: int
    tp: int = 1
    pp: int = 1
    ep: int = 1  # GPUs the experts are spread over beyond tp (data-parallel size)
    activation_bits: float = 16.0
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    enforce_eager: bool = False
    kv_cache_memory_bytes: int | None = None
    offload_bytes: int = 0  # --cpu-offload-gb
    lora: LoraSlots | None = None  # --enable-lora
    dcp: int = 1  # --decode-context-parallel-size
    pcp: int = 1  # --prefill-context-parallel-size
    device_name: str = ""
    release: str = "0.30.0"
    estimate_cudagraphs_env: str | None = None


@dataclass(frozen=True)
class Budget:
    """One engine's memory per GPU as vLLM sizes it (bytes; the stage with the fewest blocks)."""

    gpu_memory: int
    requested: int
    weights: int  # the largest stage's weights per GPU (LoRA buffers included)
    activation: int
    non_torch: int
    cudagraph: int
    kv_budget: int  # negative when nothing is left
    groups: LayerGroups
    blocks: int
    blocks_per_request: int
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    kv_from_flag: bool
    lora: int = 0  # the LoRA buffers counted in weights

    @property
    def max_concurrency(self) -> float:
        return self.blocks / self.blocks_per_request if self.blocks_per_request else 0.0

    @property
    def kv_tokens(self) -> int:
        """get_kv_cache_capacity: int(max concurrency × max_model_len)."""
        return int(self.max_concurrency * self.max_model_len)

    @property
    def request_bytes(self) -> int:
        """KV one max-model-len request needs (max_memory_usage_bytes over the groups)."""
        return self.blocks_per_request * self.groups.bytes_per_block

    @property
    def weights_exceed_card(self) -> bool:
        return self.weights > self.gpu_memory

    @property
    def no_cache_memory(self) -> bool:
        """vLLM's "No available memory for the cache blocks" (_check_enough_kv_cache_memory)."""
        return self.kv_budget <= 0

    @property
    def one_request_does_not_fit(self) -> bool:
        """vLLM's "To serve at least one request with the model's max seq len" check: the
        budget less the null block (check_enough_kv_cache_memory) below one request's KV."""
        return self.kv_budget > 0 and \
            self.request_bytes > self.kv_budget - self.groups.bytes_per_block

    def estimated_max_model_len(self) -> int:
        in_flight = self.max_num_batched_tokens
        return estimate_max_model_len(self.groups, self.kv_budget - self.groups.bytes_per_block,
                                      self.max_model_len, in_flight)


def activation_peak(shape: ModelShape, tokens: int, seqs: int, tp: int, last_stage: bool,
                    activation_bytes: float = 2.0, pcp: int = 1) -> int:
    """profile_run's transient peak (gpu_model_runner.py, 0.30.0): the larger of the sampler
    dummy run over ``seqs`` rows of full-vocabulary logits (gathered on every tp rank, last
    pipeline stage only; profile_run still holds the forward's hidden states) and the forward
    dummy run at ``tokens`` (the FFN's gate/up output, intermediate / tp, times top-k for MoE),
    plus fixed buffers.

    Under prefill context parallelism (Model Runner V2, the only runner that supports it:
    vllm/config/vllm.py _get_v1_model_runner_unsupported_features) the dummy run goes through
    prepare_inputs, which hands each of the ``pcp`` ranks its DualChunkSwap share of the batch
    (v1/worker/gpu/model_runner.py prepare_inputs -> pcp_manager.py maybe_partition_pcp_batch),
    and restores the global batch before sampling (maybe_restore_pcp_for_sampling): the forward
    runs on tokens / pcp, the sampler on every row."""
    sampler = 0.0
    if last_stage:
        sampler = (SAMPLER_BYTES_PER_LOGIT + activation_bytes) * seqs \
            * pad_vocab(shape.vocab or 0) + tokens * shape.hidden * activation_bytes
    inter = shape.intermediate or 4 * shape.hidden
    if shape.is_moe:
        inter *= max(shape.experts_per_token, 1)
    local_tokens = -(-tokens // max(1, pcp))
    forward = FORWARD_BYTES_PER_FFN_VALUE * local_tokens * 2 * inter / tp
    return int(max(sampler, forward) + ACTIVATION_BASE_BYTES)


def non_torch_bytes(tp: int, pp: int, pcp: int = 1) -> int:
    """The measured class of memory outside PyTorch.  A prefill-context-parallel group without
    tp has its own NCCL communicator, a class the sweep never measured: it takes the smaller
    measured class (pp only), and the launch's uncertainty grows by the gap to the tp class
    (PCP_NON_TORCH_SPREAD), so an unmeasured buffer cannot turn into a false refusal."""
    if tp > 1:
        return NON_TORCH_TP
    return NON_TORCH_PP_ONLY if pp > 1 or pcp > 1 else NON_TORCH_TP1


# The non-torch memory a prefill-context-parallel launch without tp may hold beyond the class it
# is given (non_torch_bytes): the gap between the measured tp > 1 and pp-only classes.
PCP_NON_TORCH_SPREAD = NON_TORCH_TP - NON_TORCH_PP_ONLY


def cudagraph_bytes(tp: int, enforce_eager: bool, rel: Release) -> int:
    """The CUDA-graph estimate determine_available_memory subtracts (0 with --enforce-eager:
    cudagraph_mode NONE; 0 in releases that only log it)."""
    if enforce_eager or not rel.cudagraphs_subtracted:
        return 0
    return CUDAGRAPH_TP if tp > 1 else CUDAGRAPH_TP1


# budget() of the Inputs seen last: a file of many launches of one model on one layout asks
# for the same budget for each (3,283 such launches in one script); Inputs and Budget are
# frozen, so a hit is the same answer.  Cleared when full, so it never grows with a run.
_BUDGETS: dict[Inputs, Budget] = {}
_BUDGETS_MAX = 256


def budget(x: Inputs) -> Budget:
    """The KV cache vLLM would allocate for ``x`` (see the module docstring for the chain)."""
    try:
        hit = _BUDGETS.get(x)
    except TypeError:  # a value that cannot be hashed (none today): computed each time
        return _budget(x)
    if hit is None:
        if len(_BUDGETS) >= _BUDGETS_MAX:
            _BUDGETS.clear()
        hit = _BUDGETS[x] = _budget(x)
    return hit


def _budget(x: Inputs) -> Budget:
    rel = release(x.release, x.estimate_cudagraphs_env)
    shape = x.shape
    tokens, seqs = scheduler_sizes(x.card_bytes, x.max_model_len, device_name=x.device_name,
                                   max_num_batched_tokens=x.max_num_batched_tokens,
                                   max_num_seqs=x.max_num_seqs)
    requested = math.ceil(x.card_bytes * x.utilization)
    parts = weight_parts(shape, x.weight_bits, x.quant_method, x.activation_bits)
    page = page_bytes(shape, x.kv_bytes, x.tp)
    sliding = shape.sliding_layers if shape.sliding_window else 0
    non_torch = non_torch_bytes(x.tp, x.pp, x.pcp)
    graphs = cudagraph_bytes(x.tp, x.enforce_eager, rel)
    # max_in_flight_tokens (vllm/config/vllm.py): one batch per concurrent step (pp batches)
    in_flight = tokens * max(1, x.pp)
    best: Budget | None = None
    heaviest = heaviest_lora = 0
    layer_split = pp_partition(shape.layers, x.pp)
    for stage in range(x.pp):
        adapters = lora_stage_bytes(shape, x.lora, stage, x.pp, x.tp) if x.lora else 0
        w = max(0, int(stage_weights(parts, stage, x.pp, x.tp, x.ep)) - x.offload_bytes) \
            + adapters
        if w > heaviest:
            heaviest, heaviest_lora = w, adapters
        act = activation_peak(shape, tokens, seqs, x.tp, stage == x.pp - 1,
                              x.activation_bits / 8, x.pcp)
        if x.kv_cache_memory_bytes is not None:
            kv = x.kv_cache_memory_bytes
        else:
            kv = requested - w - act - non_torch - graphs
        n = layer_split[stage]
        stage_sliding = round(sliding * n / shape.layers)
        groups = layer_groups(n - stage_sliding, stage_sliding, page, shape.sliding_window,
                              x.dcp)
        blocks = kv // groups.bytes_per_block if kv > 0 and groups.bytes_per_block else 0
        per_req = blocks_per_request(groups, x.max_model_len, in_flight) if n else 0
        cand = Budget(x.card_bytes, requested, w, act, non_torch, graphs, kv, groups,
                      blocks, per_req, x.max_model_len, seqs, tokens,
                      x.kv_cache_memory_bytes is not None, adapters)
        # get_kv_cache_configs: every rank gets the smallest num_blocks among the ranks
        if best is None or cand.blocks < best.blocks or \
                (cand.blocks == best.blocks and cand.kv_budget < best.kv_budget):
            best = cand
    assert best is not None
    if heaviest != best.weights:
        best = Budget(best.gpu_memory, best.requested, heaviest, best.activation,
                      best.non_torch, best.cudagraph, best.kv_budget, best.groups, best.blocks,
                      best.blocks_per_request, best.max_model_len, best.max_num_seqs,
                      best.max_num_batched_tokens, best.kv_from_flag, heaviest_lora)
    return best


def weight_format(bits: float, label: str, origin: str, checkpoint_method: str | None = None
                  ) -> tuple[float, str | None]:
    """(bits per quantized weight, method) for weight_parts from a resolved precision: GGUF
    types average the whole file; MXFP4 checkpoints store 4.25-bit experts (4-bit values and an
    8-bit scale per 32, the catalog's blended bits notwithstanding); other formats below 16 bits
    quantize the linear layers only."""
    text = f"{label} {checkpoint_method or ''}".lower()
    if origin in ("GGUF type", "GGUF header"):
        return bits, f"gguf {label}"
    if "mxfp4" in text:
        return 4.25, "mxfp4"
    if bits >= 16:
        return bits, None
    for key in ("awq", "gptq", "bitsandbytes", "nvfp4", "fp4", "fp8", "int8", "int4"):
        if key in text:
            return bits, key
    return bits, label.lower()
