"""Tensor-parallel all-reduce traffic and its time on a link (ring all-reduce: 2 (tp − 1) / tp ×
bytes per step)."""

from __future__ import annotations


from ..policy import PCIE_WARN_SHARE
from .vllm_budget import largest_stage
from ..records import dataclass


def all_reduces_per_forward(layers: int) -> int:
    """Two all-reduces per layer and forward pass: after attention and after the MLP."""
    return 2 * layers


def all_reduce_bytes(tokens: int, hidden: int, bytes_per_value: float = 2.0) -> float:
    """Size of one all-reduce: tokens × hidden activations (BF16: 2 bytes)."""
    return tokens * hidden * bytes_per_value


def ring_traffic_per_gpu(size_bytes: float, n: int) -> float:
    """Bytes each of ``n`` GPUs sends in a ring all-reduce: 2(n−1)/n × size."""
    return 2.0 * (n - 1) / n * size_bytes


def root_all_reduce_traffic(size_bytes: float, n: int) -> float:
    """Bytes the root receives (and sends again) when one device sums for all: (n−1) × size."""
    return (n - 1) * size_bytes


def ring_steps(n: int) -> int:
    """Sequential steps of one ring all-reduce: 2(n−1)."""
    return 2 * (n - 1)


def all_reduce_traffic_per_forward(tokens: int, hidden: int, layers: int, n: int,
                                   bytes_per_value: float = 2.0) -> float:
    """Bytes each GPU sends in all-reduces during one forward pass at tensor parallel ``n``."""
    size = all_reduce_bytes(tokens, hidden, bytes_per_value)
    return ring_traffic_per_gpu(size, n) * all_reduces_per_forward(layers)


def ring_steps_per_forward(layers: int, n: int) -> int:
    """Ring steps that run one after another in one forward pass: 2 × layers × 2(n−1)."""
    return all_reduces_per_forward(layers) * ring_steps(n)


def transfer_time(size_bytes: float, bytes_per_s: float) -> float:
    """Seconds to move ``size_bytes`` over a link at its per-direction bandwidth."""
    return size_bytes / bytes_per_s


def ring_latency(steps: int, seconds_per_step: float) -> float:
    """Fixed start-up cost of ``steps`` sequential ring steps."""
    return steps * seconds_per_step


@dataclass(frozen=True)
class RingAllReduce:
    owned: tuple[tuple[int, tuple[int, ...]], ...]  # per device: chunk it owns after reduce-scatter
    result: tuple[tuple[int, ...], ...]  # every device's values at the end
    sent: tuple[int, ...]  # values each device sent


def simulate_ring_all_reduce(values: list[list[int]]) -> RingAllReduce:
    """Run a ring all-reduce (reduce-scatter, then all-gather) on ``n`` devices; count values
    sent.

    Each device's list must split into ``n`` equal chunks.
    """
    n, length = len(values), len(values[0])
    chunk = length // n
    v = [list(row) for row in values]
    sent = [0] * n
    for s in range(n - 1):
        before = [list(row) for row in v]
        for d in range(n):
            c, to = (d - s) % n, (d + 1) % n
            for i in range(c * chunk, (c + 1) * chunk):
                v[to][i] += before[d][i]
            sent[d] += chunk
    owned = tuple(((d + 1) % n, tuple(v[d][((d + 1) % n) * chunk:((d + 1) % n + 1) * chunk]))
                  for d in range(n))
    for s in range(n - 1):
        before = [list(row) for row in v]
        for d in range(n):
            c, to = (d + 1 - s) % n, (d + 1) % n
            for i in range(c * chunk, (c + 1) * chunk):
                v[to][i] = before[d][i]
            sent[d] += chunk
    return RingAllReduce(owned, tuple(tuple(row) for row in v), tuple(sent))


# ----------------------------------------------------------------------------- link comparison

# The reference NVLink (H100 SXM, NVLink 4): 900 GB/s total, 450 GB/s per direction.
REFERENCE_NVLINK_BYTES_PER_S = 450e9
# MG201 is a warning when the PCIe all-reduce time of a decode step at batch 64 exceeds this
# share of the per-GPU weight-read time (DECISIONS "Thresholds"; Ex. 5 compares the two).
DECODE_BATCH = 64  # Ex. 5's busy decode step
PREFILL_TOKENS = 4096  # Ex. 5's prefill
# Ex. 5's assumed fixed cost of one ring step (a placeholder: it depends on GPUs, link, library)
RING_STEP_SECONDS = (1e-6, 5e-6)


@dataclass(frozen=True)
class AllReduceCost:
    """The all-reduce traffic of one forward pass at tensor parallel ``n``."""

    tokens: int
    size_bytes: float  # one all-reduce: tokens × hidden × 2 bytes
    traffic_bytes: float  # sent by each GPU over the whole pass

    def time_on(self, bytes_per_s: float) -> float:
        """Seconds to send the pass's traffic over a link of this per-direction bandwidth."""
        return transfer_time(self.traffic_bytes, bytes_per_s)


def layers_per_stage(layers: int, pp: int) -> int:
    """Layers of the largest pipeline stage (vLLM's get_pp_indices split); its all-reduces set
    the step."""
    return largest_stage(layers, pp)


def all_reduce_cost(tokens: int, hidden: int, layers: int, n: int,
                    bytes_per_value: float = 2.0) -> AllReduceCost:
    """Ring all-reduce: one all-reduce is tokens × hidden values; each GPU sends 2(n−1)/n of it,
    2 × layers times per pass (70B at tp 8, decode batch 64: 1.049 MB, 293.6 MB per GPU)."""
    return AllReduceCost(tokens, all_reduce_bytes(tokens, hidden, bytes_per_value),
                         all_reduce_traffic_per_forward(tokens, hidden, layers, n,
                                                        bytes_per_value))


def all_reduce_exceeds(all_reduce_s: float, weight_read_s: float,
                       share: float = PCIE_WARN_SHARE) -> bool:
    """True when the all-reduce time is above ``share`` of the weight-read time of the step."""
    return all_reduce_s > share * weight_read_s
