"""Memory: weights, KV cache and the GPUs they need (weights = params × bits / 8; KV = 2 × layers ×
kv_heads × head_dim × bytes per token)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..bounds import ceil_int, floor_int
from ..records import dataclass

if TYPE_CHECKING:
    from ..catalog.knowledge import ModelShape, RopeScaling

# RoPE scaling types whose factor vLLM does not apply to the derived length (vLLM 0.30.0
# vllm/config/model.py; mrope keeps the positions as given)
UNSCALED_ROPE_TYPES = frozenset({"su", "longrope", "llama3", "yarn", "deepseek_yarn",
                                 "deepseek_llama_scaling", "mrope", "default"})


def weights_bytes(params: float, bits: float) -> float:
    """Bytes of weights: params × bits / 8."""
    return params * bits / 8


def kv_heads_per_gpu(kv_heads: int, tp: int) -> int:
    """KV heads each tensor-parallel rank holds: kv_heads / tp, never below one (replicated)."""
    return max(1, kv_heads // tp)


def _kv_bytes_per_layer_token(shape: ModelShape, bytes_per_value: float, tp: int) -> float:
    if shape.kv_lora_rank is not None and shape.qk_rope_head_dim is not None:
        # MLA caches one latent per token and layer; tensor parallelism does not split it.
        return (shape.kv_lora_rank + shape.qk_rope_head_dim) * bytes_per_value
    return 2 * kv_heads_per_gpu(shape.kv_heads, tp) * shape.head_dim * bytes_per_value


def full_attention_layers(shape: ModelShape) -> int:
    """Layers that cache every token (sliding-window layers keep only the window)."""
    return shape.layers - shape.sliding_layers


def kv_bytes_per_token(shape: ModelShape, bytes_per_value: float = 2.0) -> float:
    """K and V of one token over the layers that keep every token: 2 × layers × kv_heads ×
    head_dim × bytes (e.g. 128 / 320 / 504 KiB for Llama 3.1 8B / 70B / 405B in BF16); MLA
    models cache layers × (kv_lora_rank + rope dim) values."""
    return full_attention_layers(shape) * _kv_bytes_per_layer_token(shape, bytes_per_value, 1)


def kv_bytes_per_token_per_gpu(shape: ModelShape, tp: int = 1, pp: int = 1,
                               bytes_per_value: float = 2.0) -> float:
    """One GPU's share of a token's KV: kv_heads / tp (at least one head) over the layers of the
    largest pipeline stage; an MLA latent is not split by tp."""
    layers = math.ceil(full_attention_layers(shape) / pp)
    return layers * _kv_bytes_per_layer_token(shape, bytes_per_value, tp)


def kv_bytes_per_sequence(shape: ModelShape, tokens: int, bytes_per_value: float = 2.0,
                          tp: int = 1, pp: int = 1) -> float:
    """KV bytes one GPU holds for one sequence of ``tokens``: full-attention layers keep every
    token, sliding-window layers at most the window."""
    per_layer = _kv_bytes_per_layer_token(shape, bytes_per_value, tp)
    full = math.ceil(full_attention_layers(shape) / pp) * per_layer * tokens
    if not shape.sliding_layers or shape.sliding_window is None:
        return full
    sliding = math.ceil(shape.sliding_layers / pp) * per_layer
    return full + sliding * min(tokens, shape.sliding_window)


def kv_bytes(shape: ModelShape, users: int, context: int, bytes_per_value: float = 2.0,
             tp: int = 1, pp: int = 1) -> float:
    """KV cache for ``users`` sequences of ``context`` tokens (e.g. 32 × 8,192), per GPU when
    tp/pp are given, for the whole model otherwise."""
    return users * kv_bytes_per_sequence(shape, context, bytes_per_value, tp, pp)


def usable_bytes(card_bytes: float, fraction: float) -> float:
    """Memory one GPU gives the engine: card × fraction (0.9 in the textbook sizing, vLLM's default
    0.92)."""
    return card_bytes * fraction


def gpus_needed(total_bytes: float, usable_bytes_per_gpu: float) -> int:
    """Whole GPUs for weights + KV: ceil(total / usable per GPU)."""
    return ceil_int(total_bytes / usable_bytes_per_gpu)


def kv_token_capacity(kv_budget_bytes: float, bytes_per_token: float) -> int:
    """Tokens a KV budget holds (0 when the budget is negative)."""
    return max(0, floor_int(kv_budget_bytes / bytes_per_token))


def derived_max_model_len(shape: ModelShape, *, max_positions: int | None = None,
                          rope_scaling: RopeScaling | None = None) -> int | None:
    """vLLM's default --max-model-len: max positions, times the RoPE factor for the scaling types
    that do not already count it (vLLM 0.30.0 vllm/config/model.py _get_and_verify_max_len:
    su, longrope, llama3, yarn and the DeepSeek variants are unchanged; Gemma 3's length is
    already scaled).  ``max_positions`` / ``rope_scaling`` replace the shape's (--hf-overrides)."""
    positions = max_positions if max_positions is not None else shape.max_positions
    if positions is None:
        return None
    rope = rope_scaling if rope_scaling is not None else shape.rope_scaling
    if rope is None or rope.type in UNSCALED_ROPE_TYPES or "gemma3" in shape.family:
        return positions
    return int(positions * rope.factor)


# ----------------------------------------------------------------------------- per-GPU budgets

# Memory the textbook arithmetic leaves out (activations, CUDA graphs, the CUDA context, NCCL):
# a named allowance of 5% of the usable memory.  A verdict inside it is a warning, an error
# needs the configuration to fail by more than it (DECISIONS "Memory and assumptions").
OVERHEAD_SHARE = 0.05
GIB = 1 << 30


def expert_params(shape: ModelShape) -> float:
    """Parameters in the routed experts (3 matrices of hidden × intermediate per expert and MoE
    layer); 0 for dense models or when the FFN width is unknown."""
    if not shape.is_moe or shape.intermediate is None:
        return 0.0
    moe_layers = shape.moe_layers if shape.moe_layers is not None else shape.layers
    return min(float(moe_layers * shape.experts * 3 * shape.hidden * shape.intermediate),
               shape.params)


def weights_bytes_per_gpu(weights: float, expert_weights: float = 0.0, tp: int = 1, pp: int = 1,
                          dp: int = 1, offload_bytes: float = 0.0) -> float:
    """One GPU's weights under vLLM: dense parts / (tp × pp); expert parts / (tp × dp × pp),
    since MoE layers flatten tp × dp; minus ``--cpu-offload-gb`` (never below 0)."""
    dense = (weights - expert_weights) / (tp * pp)
    experts = expert_weights / (tp * dp * pp)
    return max(0.0, dense + experts - offload_bytes)


@dataclass(frozen=True)
class GpuBudget:
    """One GPU's memory as vLLM divides it (bytes).

    ``usable`` is card × --gpu-memory-utilization; with --kv-cache-memory-bytes the KV budget is
    that value and the weights are judged against the whole card.
    """

    card: float
    utilization: float | None  # None when --kv-cache-memory-bytes sets the KV budget
    weights: float
    lora: float
    kv_memory_bytes: float | None = None

    @property
    def usable(self) -> float:
        if self.utilization is None:
            return self.card
        return usable_bytes(self.card, self.utilization)

    @property
    def allowance(self) -> float:
        """The overhead allowance: activations, CUDA graphs, CUDA context (5% of usable)."""
        return OVERHEAD_SHARE * self.usable

    @property
    def kv(self) -> float:
        """Memory left for the KV cache (negative when weights and LoRA buffers do not fit)."""
        if self.kv_memory_bytes is not None:
            return self.kv_memory_bytes
        return self.usable - self.weights - self.lora

    def free(self, kv: float) -> float:
        """What stays unused after weights, LoRA buffers and ``kv`` bytes of KV cache."""
        return self.usable - self.weights - self.lora - kv


def memory_verdict(need: float, limit: float, allowance: float) -> str | None:
    """"exceeds" when ``need`` is above ``limit`` by more than the allowance, "tight" when it is
    within the allowance on either side, None when it fits with room to spare."""
    if need - limit > allowance:
        return "exceeds"
    if need - limit > -allowance:
        return "tight"
    return None


def max_tokens_in(shape: ModelShape, budget: float, bytes_per_value: float = 2.0, tp: int = 1,
                  pp: int = 1) -> int:
    """Longest sequence whose KV fits ``budget`` on one GPU (the inverse of
    kv_bytes_per_sequence: sliding-window layers stop growing past the window)."""
    if budget <= 0:
        return 0
    full = kv_bytes_per_sequence(shape, 1, bytes_per_value, tp, pp)
    window = shape.sliding_window if shape.sliding_layers else None
    if window is None:
        return floor_int(budget / full)
    at_window = kv_bytes_per_sequence(shape, window, bytes_per_value, tp, pp)
    if budget <= at_window:
        return floor_int(budget / full)
    growth = kv_bytes_per_sequence(shape, window + 1, bytes_per_value, tp, pp) - at_window
    return window + floor_int((budget - at_window) / growth) if growth > 0 else window


# ----------------------------------------------------------------------------- llama.cpp devices

LLAMA_CTX_PAD = 256  # llama_context pads n_ctx (and each slot's context) to a multiple of 256
LLAMA_AUTO_SLOTS = 4  # -np auto: 4 slots sharing one unified KV cache (tools/server/server.cpp)


def llama_kv_cells(n_ctx: int, n_parallel: int, unified: bool, n_ctx_train: int | None) -> int:
    """KV cells llama-server allocates: n_ctx padded to 256 with a unified cache; otherwise
    n_parallel slots of GGML_PAD(n_ctx / n_parallel, 256), each capped at n_ctx_train
    (llama-notes.md §5: ``-c 4096 -np 3`` → 3 × 1536 = 4608)."""
    if unified or n_parallel <= 1:
        return _pad(n_ctx)
    per_slot = _pad(n_ctx // n_parallel)
    if n_ctx_train is not None:
        per_slot = min(per_slot, n_ctx_train)
    return per_slot * n_parallel


def _pad(n: int) -> int:
    return -(-n // LLAMA_CTX_PAD) * LLAMA_CTX_PAD


@dataclass(frozen=True)
class LayerBytes:
    """Weights of one repeating layer, of the output layer and of the token embeddings."""

    layer: float
    output: float
    embeddings: float


def llama_layer_bytes(shape: ModelShape, bits: float) -> LayerBytes:
    """Split a GGUF's weights into layers: the output layer and the token embeddings are
    vocab × hidden each (when the vocabulary is known), the rest is spread over the layers."""
    total = weights_bytes(shape.params, bits)
    table = weights_bytes(shape.vocab * shape.hidden, bits) if shape.vocab else 0.0
    table = min(table, total / 3)
    return LayerBytes((total - 2 * table) / shape.layers, table, table)


def llama_kv_bytes_per_layer(shape: ModelShape, cells: int, bytes_per_value: float) -> float:
    """Mean KV bytes of one layer for ``cells`` cells: full-attention layers keep every cell,
    sliding-window layers at most the window per cell stream (averaged over the layers)."""
    per_cell = 2 * shape.kv_heads * shape.head_dim * bytes_per_value
    sliding_cells = min(cells, shape.sliding_window) if shape.sliding_window else cells
    total = (full_attention_layers(shape) * cells + shape.sliding_layers * sliding_cells) \
        * per_cell
    return total / shape.layers


@dataclass(frozen=True)
class DeviceMemory:
    """What one llama.cpp device holds: its layers' weights and KV cache."""

    name: str
    layers: int
    output: bool
    weights: float
    kv: float

    @property
    def total(self) -> float:
        return self.weights + self.kv


def llama_device_memory(counts: list[tuple[str, int, bool]], layer: LayerBytes,
                        kv_per_layer: float) -> list[DeviceMemory]:
    """Per device (name, repeating layers, output layer here): weights and KV in bytes.
    ``kv_per_layer`` is 0 when the KV cache stays in host memory (-nkvo)."""
    return [DeviceMemory(name, n, out, n * layer.layer + (layer.output if out else 0.0),
                         n * kv_per_layer) for name, n, out in counts]
