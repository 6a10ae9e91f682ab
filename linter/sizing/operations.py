"""Operations: cold start and the backlog it causes (lesson Example 17)."""

from __future__ import annotations


def load_time(size_bytes: float, bytes_per_s: float) -> float:
    """Seconds to load the weights from a source of the given rate."""
    return size_bytes / bytes_per_s


def cold_start_time(size_bytes: float, bytes_per_s: float, start_s: float,
                    warmup_s: float) -> float:
    """Start + load + warm-up, in seconds."""
    return start_s + load_time(size_bytes, bytes_per_s) + warmup_s


def backlog(arrival_per_s: float, served_per_s: float, cold_start_s: float) -> float:
    """Requests that pile up before new capacity arrives: (arrival − served) × cold start."""
    return (arrival_per_s - served_per_s) * cold_start_s
