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

from .memory import weights_bytes


def weights_per_gpu_lower_bound(params: float, bits: float, tp: int, pp: int) -> float:
    """The average weight bytes per GPU: no GPU of the layout holds less than the heaviest."""
    return weights_bytes(params, bits) / (tp * pp)


def static_pool_limit(card_bytes: float, fraction: float) -> float:
    """The most the weights and KV pool may take: card × --mem-fraction-static."""
    return card_bytes * fraction
