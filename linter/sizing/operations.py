"""Operations: cold start and the backlog it causes (start + size / download rate + warm-up)."""

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


# Assumed start-up figures (illustrative: measure your own).
START_SECONDS = 20.0  # container and process start
WARMUP_SECONDS = 40.0  # engine warm-up (CUDA graphs, compilation, llama.cpp's empty run)
LOAD_SOURCES: tuple[tuple[str, float], ...] = (
    ("Hub download, 1 Gb/s", 0.125e9),
    ("network volume, 1 GB/s", 1e9),
    ("local NVMe, 3 GB/s", 3e9),
    ("host page cache, 10 GB/s", 10e9),
)
HUB_DOWNLOAD_BYTES_PER_S = LOAD_SOURCES[0][1]
LOCAL_NVME_BYTES_PER_S = LOAD_SOURCES[2][1]


def example_cold_start(size_bytes: float, bytes_per_s: float) -> float:
    """The reference cold start: 20 s start + size / rate + 40 s warm-up (8B BF16 from the Hub at
    1 Gb/s: 188.8 s; 70B FP8: 624.8 s)."""
    return cold_start_time(size_bytes, bytes_per_s, START_SECONDS, WARMUP_SECONDS)
