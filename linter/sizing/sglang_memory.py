"""SGLang's static memory pool (weights + KV cache) against the card, as its runner sizes it.

``ModelRunner.profile_max_num_token`` (sglang/srt/model_executor/model_runner.py, 0.5.5; the
same slack in 0.5.23's pool_configurator.py) keeps ``rest = available − total × (1 −
mem_fraction_static)`` for the KV cache, where ``total`` is the free memory measured before the
weights load and ``available`` the free memory after.  Since ``total`` is at most the card and
``available ≤ total − weights``, ``rest ≤ card × mem_fraction_static − weights``: when the
weights reach that, no KV token fits and SGLang stops ("Not enough memory. Please try to increase
--mem-fraction-static.").  The weights are counted as a lower bound — parameters × bits over tp ×
pp, the average per GPU (vocab, experts and layers split; anything replicated or kept in 16 bits
only adds) — so a refusal found this way holds on the real card.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..catalog.models import CONTEXT_LENGTH_KEYS
from .memory import weights_bytes

if TYPE_CHECKING:
    from ..catalog.knowledge import ModelShape


def weights_per_gpu_lower_bound(params: float, bits: float, tp: int, pp: int) -> float:
    """The average weight bytes per GPU: no GPU of the layout holds less than the heaviest."""
    return weights_bytes(params, bits) / (tp * pp)


def static_pool_limit(card_bytes: float, fraction: float) -> float:
    """The most the weights and KV pool may take: card × --mem-fraction-static."""
    return card_bytes * fraction


def derived_context_length(shape: ModelShape) -> int | None:
    """The context length SGLang derives from the model's config.json, or None when the shape
    did not come from one whose keys say it exactly.

    ``get_context_length`` (sglang/srt/utils/hf_transformers_utils.py, 0.5.5; identical in
    0.4.10.post2's hf_transformers_utils.py and 0.5.23's utils/hf_transformers/common.py) takes
    the first of CONTEXT_LENGTH_KEYS the config sets, times ``rope_scaling["factor"]`` unless
    the scaling names ``original_max_position_embeddings`` or is ``rope_type`` llama3.  With
    none of the keys it returns 2048, but a config class may then supply its own default: not
    judged.  A config.json whose scaling has no factor gives no RopeScaling here, and SGLang's
    ``rope_scaling.get("factor", 1)`` is 1 too.
    """
    keys = shape.length_keys
    if not keys:
        return None
    value = next(keys[k] for k in CONTEXT_LENGTH_KEYS if k in keys)
    rope = shape.rope_scaling
    if rope is None or rope.original_max_positions is not None or rope.type == "llama3":
        return value
    return int(rope.factor * value)
