"""Parallel layouts: world size, MoE grouping, pipelines, experts (world size = tp × pp × dp; EP =
tp × dp)."""

from __future__ import annotations
from ..records import dataclass



def world_size(tp: int, pp: int = 1, pcp: int = 1) -> int:
    """GPUs of one vLLM engine: tp × pp (× prefill context parallel)."""
    return tp * pp * pcp


def total_gpus(tp: int, pp: int = 1, dp: int = 1, pcp: int = 1) -> int:
    """GPUs of all data-parallel engines: world size × dp."""
    return world_size(tp, pp, pcp) * dp


@dataclass(frozen=True)
class MoeGrouping:
    """How vLLM's MoE layers use a tp × dp group of GPUs."""

    group: int  # GPUs the MoE layers treat as one group: tp × dp (× pcp)
    expert_parallel: bool  # whole experts per GPU (EP) instead of every expert sliced

    @property
    def expert_split_ways(self) -> int:
        """Ways each expert's matrices are split (1 under expert parallelism)."""
        return 1 if self.expert_parallel else self.group

    @property
    def summary(self) -> str:
        if self.expert_parallel:
            return f"EP={self.group}: each GPU holds 1/{self.group} of the experts"
        return f"TP={self.group}: every expert split {self.group} ways"


def moe_grouping(tp: int, dp: int = 1, expert_parallel: bool = False, pcp: int = 1) -> MoeGrouping:
    """MoE layers flatten tp × dp GPUs; with --enable-expert-parallel they hold whole experts."""
    group = tp * dp * pcp
    return MoeGrouping(group, expert_parallel and group > 1)


def experts_per_rank(experts: int, ep_size: int) -> list[int]:
    """Experts on each EP rank under vLLM's linear placement: experts // ep, remainder first."""
    base, extra = divmod(experts, ep_size)
    return [base + (1 if r < extra else 0) for r in range(ep_size)]


def device_loads(expert_loads: list[int], placement: list[list[int]]) -> list[int]:
    """Work per device: the sum of the loads of the experts placed on it."""
    return [sum(expert_loads[e] for e in experts) for experts in placement]


def expert_load_imbalance(loads: list[float]) -> float:
    """Busiest device over the mean (e.g. 34 / 16 = 2.13); the busiest sets the layer time."""
    return max(loads) / (sum(loads) / len(loads))


def pipeline_busy_share(micro_batches: int, stages: int) -> float:
    """Share of stage-slots doing work: m / (m + p − 1) (0 without a micro-batch or stage)."""
    if micro_batches < 1 or stages < 1:
        return 0.0
    return micro_batches / (micro_batches + stages - 1)


def pipeline_decode_busy_share(batches_in_flight: int, stages: int) -> float:
    """Decoding keeps min(k, p) of p stages busy with k independent batches in flight."""
    if batches_in_flight < 1 or stages < 1:
        return 0.0
    return min(batches_in_flight, stages) / stages


def pipeline_decode_tokens(batches_in_flight: int, stages: int, sequences_per_batch: int,
                           slots: int) -> int:
    """Tokens produced in ``slots`` time slots of steady decoding: every batch in flight leaves
    the last stage once per ``stages`` slots."""
    return min(batches_in_flight, stages) * sequences_per_batch * slots // stages


@dataclass(frozen=True)
class RoutingResult:
    """Requests per replica and latencies under one routing policy."""

    assigned: list[list[int]]
    mean_latency: float
    max_latency: int


def route_requests(work: list[int], replicas: int, gap: int, policy: str) -> RoutingResult:
    """A request-routing simulation: one arrival every ``gap`` time units, each replica serves one
    request at a time; ``policy`` is "round-robin" (request i to replica i mod n) or
    "least-outstanding" (the replica with the fewest unfinished requests, first on ties)."""
    free_at = [0] * replicas
    finishes: list[list[int]] = [[] for _ in range(replicas)]
    assigned: list[list[int]] = [[] for _ in range(replicas)]
    total = worst = 0
    for i, w in enumerate(work):
        now = i * gap
        if policy == "round-robin":
            r = i % replicas
        else:
            open_requests = [sum(1 for t in f if t > now) for f in finishes]
            r = open_requests.index(min(open_requests))
        finish = max(now, free_at[r]) + w
        free_at[r] = finish
        finishes[r].append(finish)
        assigned[r].append(i)
        total += finish - now
        worst = max(worst, finish - now)
    return RoutingResult(assigned, total / len(work), worst)


# 12 requests of uneven length (service times) for the routing simulation MG107 prints
UNEVEN_WORK = [900, 50, 60, 800, 40, 70, 950, 30, 55, 700, 65, 45]
