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
from ..records import dataclass
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
    derived = derived_context(shape)
    return derived[0] if derived is not None else None


def derived_context(shape: ModelShape) -> tuple[int, str] | None:
    """``derived_context_length`` and how it was derived, for a finding's math."""
    keys = shape.length_keys
    if not keys:
        return None
    key = next(k for k in CONTEXT_LENGTH_KEYS if k in keys)
    value = keys[key]
    rope = shape.rope_scaling
    if rope is None:
        return value, f"{key} {value}"
    if rope.original_max_positions is not None or rope.type == "llama3":
        why = ("llama3" if rope.original_max_positions is None
               else "the scaling names original_max_position_embeddings")
        return value, (f"{key} {value} (the {rope.type} RoPE factor {rope.factor:g} is not "
                       f"counted: {why})")
    return int(rope.factor * value), f"{key} {value} × RoPE factor {rope.factor:g}"


def graph_max_bs(max_bs: object, listed: object) -> tuple[bool, int | None]:
    """``cuda_graph_max_bs`` as 0.5.5 reserves for it: a ``--cuda-graph-bs`` list sets it to the
    list's largest before the reserve is computed (``self.cuda_graph_max_bs =
    max(self.cuda_graph_bs)``, ServerArgs._handle_gpu_memory_settings, sglang/srt/
    server_args.py 0.5.5), else the flag's value; None for the card's default.  (False, None)
    when a value is not an integer."""
    if listed:
        items = listed if isinstance(listed, list) else [listed]
        if not all(type(v) is int for v in items):
            return False, None
        return True, max(items)
    if max_bs is not None and type(max_bs) is not int:
        return False, None
    return True, max_bs  # type: ignore[return-value]


# The catalogued releases whose default --mem-fraction-static is computed below, each read in
# its own wheel (the function each follows is named where it is used).
DEFAULT_FRACTION_RELEASES = ("0.4.10.post2", "0.5.5", "0.5.23")


@dataclass(frozen=True)
class DefaultFraction:
    """The --mem-fraction-static a release computes when the flag is not given."""

    release: str
    fraction: float
    gpu_mib: float  # the card as get_device_memory_capacity reports it (nvidia-smi, MiB)
    reserved_mib: float
    terms: tuple[str, ...]  # the reserve's terms, for the finding's math
    upper_bound: bool  # terms SGLang adds were not counted: its own default is at most this


def default_mem_fraction_static(
        release: str, gpu_mib: float, *, tp: int, pp: int, dp: int, dp_attention: bool,
        speculative: str | None, chunked_prefill_size: int | None, max_prefill_tokens: int,
        cuda_graph_max_bs: int | None, disaggregation_decode: bool = False,
        post_capture_possible: bool = False) -> DefaultFraction | None:
    """The default fraction of ``release`` on a card of ``gpu_mib`` MiB: ``round((gpu_mem −
    reserved) / gpu_mem, 3)`` with the release's reserve.  ``gpu_mib`` is
    get_device_memory_capacity's value (nvidia-smi memory.total in MiB, the smallest card:
    sglang/srt/utils.py get_nvgpu_memory_capacity, 0.4.10.post2; utils/common.py later).

    Everything SGLang does to the fraction afterwards only lowers it (multimodal models:
    adjust_mem_fraction_for_vlm, a factor of 0.95 × at most 1.05; the aiter backend on long
    contexts × 0.85), so the value returned is never below SGLang's own.  None for a release
    not read here.
    """
    if release == "0.4.10.post2":
        return _fraction_0_4_10(gpu_mib, tp * pp, speculative is not None, dp_attention)
    if release == "0.5.5":
        return _fraction_0_5_5(gpu_mib, tp, pp, dp, dp_attention, speculative,
                               chunked_prefill_size, max_prefill_tokens, cuda_graph_max_bs)
    if release == "0.5.23":
        return _fraction_0_5_23(gpu_mib, tp, pp, chunked_prefill_size, max_prefill_tokens,
                                disaggregation_decode, post_capture_possible)
    return None


def _result(release: str, gpu: float, reserved: float, terms: list[str],
            upper_bound: bool = False) -> DefaultFraction:
    return DefaultFraction(release, round((gpu - reserved) / gpu, 3), gpu, reserved,
                           tuple(terms), upper_bound)


def _fraction_0_4_10(gpu: float, parallel: int, speculative: bool,
                     dp_attention: bool) -> DefaultFraction:
    """ServerArgs.__post_init__ (sglang/srt/server_args.py, 0.4.10.post2): a reserve by the
    card's band and parallel_size = tp × pp, + 2 GiB with speculative decoding, + 4 GiB with
    dp attention."""
    if gpu < 35 * 1024:  # T4, 4080 (< 20 GiB) and A10, L40, 4090, 5090: the same formula
        reserved, band = (2.8 + parallel / 10) * 1024, f"(2.8 + {parallel}/10) GiB"
    elif gpu < 90 * 1024:  # H100, A100
        reserved, band = (9.5 + parallel / 2) * 1024, f"(9.5 + {parallel}/2) GiB"
    elif gpu < 160 * 1024:  # H20 (< 100 GiB) and H200: the same formula
        reserved, band = (12 + parallel / 2) * 1024, f"(12 + {parallel}/2) GiB"
    else:  # B200, MI300
        reserved, band = 32 * 1024, "32 GiB"
    terms = [f"{band} for tp × pp = {parallel}"]
    if speculative:
        reserved += 2 * 1024
        terms.append("2 GiB for speculative decoding")
    if dp_attention:
        reserved += 4 * 1024
        terms.append("4 GiB for dp attention")
    return _result("0.4.10.post2", gpu, reserved, terms)


def _band_0_5_5(gpu: float, tp: int) -> tuple[int, int]:
    """chunked_prefill_size and cuda_graph_max_bs by the card (ServerArgs.
    _handle_gpu_memory_settings, 0.5.5; CUDA cards: the NPU bands are left out)."""
    if gpu < 20 * 1024:
        return 2048, 8
    if gpu < 35 * 1024:
        return 2048, 24 if tp < 4 else 80
    if gpu < 60 * 1024:
        return 4096, 32 if tp < 4 else 160
    if gpu < 160 * 1024:  # H100, A100 (< 90 GiB) and H20, H200: the same values
        return 8192, 256 if tp < 4 else 512
    return 16384, 512


def _activation(chunked: int | None, band_chunked: int, max_prefill: int) -> tuple[int, str]:
    cps = band_chunked if chunked is None else chunked
    if cps > 0:
        return max(cps, 2048), f"max(chunked_prefill_size {cps}, 2048)"
    return max(max_prefill, 2048), f"max(max_prefill_tokens {max_prefill}, 2048)"


def _fraction_0_5_5(gpu: float, tp: int, pp: int, dp: int, dp_attention: bool,
                    speculative: str | None, chunked: int | None, max_prefill: int,
                    graph_bs: int | None) -> DefaultFraction:
    """ServerArgs._handle_gpu_memory_settings (sglang/srt/server_args.py, 0.5.5), MiB:
    512 + max(chunked_prefill_size, 2048) × 1.5 + cuda_graph_max_bs × 2 + tp × pp / 8 × 1024,
    with dp attention + cuda_graph_max_bs × dp × 3 (× 4.5 above a max_bs of 300), at least
    10240 on cards above 60 GiB, then + 6 GiB for a STANDALONE draft model or 2 GiB for the
    other speculative algorithms but NGRAM."""
    band_chunked, band_bs = _band_0_5_5(gpu, tp)
    bs = band_bs if graph_bs is None else graph_bs
    act, act_text = _activation(chunked, band_chunked, max_prefill)
    reserved = 512 + act * 1.5 + bs * 2 + tp * pp / 8 * 1024
    terms = [f"512 + {act_text} × 1.5 + cuda_graph_max_bs {bs} × 2 + tp {tp} × pp {pp} / 8 × "
             "1024 MiB"]
    if dp_attention:
        reserved += bs * dp * 3 + (bs * dp * 1.5 if bs > 300 else 0)
        terms.append(f"dp attention: {bs} × dp {dp} × {4.5 if bs > 300 else 3:g} MiB")
    reserved = _at_least_10_gib(gpu, reserved, terms)
    if speculative == "STANDALONE":
        reserved += 6 * 1024
        terms.append("6 GiB for the STANDALONE draft model")
    elif speculative is not None and speculative != "NGRAM":
        reserved += 2 * 1024
        terms.append(f"2 GiB for {speculative} draft models")
    return _result("0.5.5", gpu, reserved, terms)


def _fraction_0_5_23(gpu: float, tp: int, pp: int, chunked: int | None, max_prefill: int,
                     decode: bool, post_capture: bool) -> DefaultFraction:
    """handle_gpu_memory_settings (sglang/srt/arg_groups/memory_hook.py, 0.5.23), MiB: 512 +
    activation tokens × 1.5 + tp × pp / 8 × 1024 + the CUDA-graph reserve
    (reserve_for_graph_mb), at least 10240 on cards above 60 GiB, + 2048 for DeepEP
    (reserve_for_deepep_a2a_mb).  The graph and DeepEP reserves depend on the capture plan
    other hooks build and are not counted (the fraction is an upper bound); a decode-only
    server counts max(running requests × draft tokens, 2048) activation tokens, at least
    2048.  With post-capture KV sizing (SGLANG_ENABLE_POST_CAPTURE_KV_SIZING, off by default
    in environ.py, or a Muse Spark model: muse_spark_hook.py) the reserve is 1536 + tp × pp /
    8 × 1024 (overrides.py post_capture_kv_sizing_planned)."""
    parallel = f"tp {tp} × pp {pp} / 8 × 1024"
    if post_capture:
        reserved = 1536 + tp * pp / 8 * 1024
        return _result("0.5.23", gpu, reserved, [f"1536 + {parallel} MiB (post-capture KV "
                                                 "sizing may apply)"], upper_bound=True)
    band_chunked = 2048 if gpu < 20 * 1024 else 4096 if gpu < 60 * 1024 else \
        8192 if gpu < 160 * 1024 else 16384
    if decode:
        act, act_text = 2048, "at least 2048 (decode server)"
    else:
        act, act_text = _activation(chunked, band_chunked, max_prefill)
    reserved = 512 + act * 1.5 + tp * pp / 8 * 1024
    terms = [f"512 + {act_text} × 1.5 + {parallel} MiB (CUDA-graph reserve not counted)"]
    reserved = _at_least_10_gib(gpu, reserved, terms)
    return _result("0.5.23", gpu, reserved, terms, upper_bound=True)


def _at_least_10_gib(gpu: float, reserved: float, terms: list[str]) -> float:
    """0.5.5 and 0.5.23 reserve at least 10 GiB on a card above 60 GiB (both functions above:
    ``if gpu_mem > 60 * 1024: reserved_mem = max(reserved_mem, 10 * 1024)``)."""
    if gpu > 60 * 1024 and reserved < 10 * 1024:
        terms.append("at least 10240 MiB on a card above 60 GiB")
        return 10 * 1024
    return reserved
