"""The layout rule: how many GPUs a model needs and which split to use."""

from __future__ import annotations


from ..bounds import ceil_int
from ..records import dataclass

KV_RESERVE = 0.4  # share of each GPU the rule keeps for KV cache and buffers


def power_of_two_at_least(n: int) -> int:
    """Smallest power of two ≥ n (so that attention heads divide evenly)."""
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


@dataclass(frozen=True)
class Layout:
    need: int  # GPUs for the weights with the reserve kept free
    gpus: int  # need rounded up to a power of two: GPUs of one replica
    total: int  # GPUs present: per node × nodes
    gpus_per_node: int
    nvlink: bool
    moe: bool

    @property
    def fits(self) -> bool:
        return self.gpus <= self.total

    @property
    def tp(self) -> int:
        if not self.fits or self.gpus == 1:
            return 1
        if self.gpus <= self.gpus_per_node:
            return self.gpus if self.nvlink else 1
        return self.gpus_per_node

    @property
    def pp(self) -> int:
        return self.gpus // self.tp if self.fits else 1

    @property
    def dp(self) -> int:
        """Replicas that fit in the GPUs present."""
        return self.total // self.gpus if self.fits else 0

    @property
    def expert_parallel(self) -> bool:
        return self.fits and self.moe and self.gpus > 1

    def describe(self) -> str:
        """Printed as ``needs 3 GPU(s) -> TP=4, 2 replicas (DP)``."""
        if not self.fits:
            return f"does not fit: {self.need} GPUs needed, {self.total} present"
        if self.gpus == 1:
            text = "no split"
        elif self.gpus <= self.gpus_per_node:
            text = f"TP={self.gpus}" if self.nvlink else \
                f"PP={self.gpus} (PCIe: communicate once per stage)"
        else:
            text = f"TP={self.gpus_per_node} inside a node, PP={self.pp} across nodes"
        if self.dp > 1:
            text += f", {self.dp} replicas (DP)"
        if self.expert_parallel:
            text += ", expert parallel for the MoE layers"
        return f"needs {self.need} GPU(s) -> {text}"


def layout_gpus_needed(weights_bytes: float, gpu_bytes: float, reserve: float = KV_RESERVE) -> int:
    """GPUs for the weights when ``reserve`` of each GPU stays free: ceil(w / ((1 − r) × card))."""
    return ceil_int(weights_bytes / ((1 - reserve) * gpu_bytes))


def choose_layout(weights_bytes: float, gpu_bytes: float, gpus_per_node: int, nodes: int = 1,
                  nvlink: bool = True, moe: bool = False, reserve: float = KV_RESERVE) -> Layout:
    """Keep 40% of each GPU, round up to a power of two, prefer TP inside an NVLink
    node, PP across nodes (or over PCIe), fill the rest with replicas."""
    need = layout_gpus_needed(weights_bytes, gpu_bytes, reserve)
    return Layout(need=need, gpus=power_of_two_at_least(need), total=gpus_per_node * nodes,
                  gpus_per_node=gpus_per_node, nvlink=nvlink, moe=moe)
