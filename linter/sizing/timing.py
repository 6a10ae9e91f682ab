"""Time of one step from bytes read and arithmetic done (decode: weights / gpus / bandwidth;
prefill: 2 × params × tokens / FLOP/s)."""

from __future__ import annotations


def decode_read_time(weights_bytes: float, bandwidth_bytes_per_s: float, gpus: int = 1) -> float:
    """Seconds to read the weights once, split over ``gpus`` reading at the same time."""
    return weights_bytes / gpus / bandwidth_bytes_per_s


def prefill_compute_time(params: float, tokens: int, gpus: int, flops_per_s: float) -> float:
    """Seconds of arithmetic for a prefill: 2 × params × tokens FLOPs over ``gpus``."""
    return 2 * params * tokens / gpus / flops_per_s


def decode_step_time(weight_read_s: float, all_reduce_s: float) -> float:
    """A decode step that reads the weights and then waits for its all-reduces, with no overlap
    (e.g. 5.27 + 9.32 = 14.6 ms over PCIe 4.0 against 5.27 + 0.65 = 5.9 ms over NVLink)."""
    return weight_read_s + all_reduce_s
