"""Memory: weights, KV cache and the GPUs they need (lesson Example 1)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..catalog.knowledge import ModelShape


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
    head_dim × bytes (Ex. 1: 128 / 320 / 504 KiB for Llama 3.1 8B / 70B / 405B in BF16); MLA
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
    """KV cache for ``users`` sequences of ``context`` tokens (Ex. 1: 32 × 8,192), per GPU when
    tp/pp are given, for the whole model otherwise."""
    return users * kv_bytes_per_sequence(shape, context, bytes_per_value, tp, pp)


def usable_bytes(card_bytes: float, fraction: float) -> float:
    """Memory one GPU gives the engine: card × fraction (lesson 0.9, vLLM default 0.92)."""
    return card_bytes * fraction


def gpus_needed(total_bytes: float, usable_bytes_per_gpu: float) -> int:
    """Whole GPUs for weights + KV: ceil(total / usable per GPU) (Ex. 1)."""
    return math.ceil(total_bytes / usable_bytes_per_gpu)


def kv_token_capacity(kv_budget_bytes: float, bytes_per_token: float) -> int:
    """Tokens a KV budget holds (0 when the budget is negative)."""
    return max(0, math.floor(kv_budget_bytes / bytes_per_token))


def derived_max_model_len(shape: ModelShape) -> int | None:
    """vLLM's default --max-model-len: max positions, with RoPE scaling applied as vLLM does
    (llama3/longrope/su unchanged; yarn: original positions × factor; others × factor)."""
    if shape.max_positions is None:
        return None
    rope = shape.rope_scaling
    if rope is None or rope.type in ("llama3", "longrope", "su", "mrope"):
        return shape.max_positions
    if rope.type == "yarn" and rope.original_max_positions:
        return int(rope.original_max_positions * rope.factor)
    return int(shape.max_positions * rope.factor)
