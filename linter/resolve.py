"""Facts several rules share, computed once per launch: the parallel layout, the GPUs.

Every fact keeps where it came from (a span, or a words-only origin such as "default") so a
finding can point at it and say whether it rests on a stated fact or an assumption.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .launch import VLLM
from .source import Span

if TYPE_CHECKING:
    from .engines import Invocation, Setting


@dataclass(frozen=True, slots=True)
class Size:
    """One parallel size: its value, whether the launch states it, and where."""

    value: int
    given: bool
    span: Span | None


@dataclass(frozen=True, slots=True)
class Layout:
    """vLLM's parallel layout (vllm-notes.md §4, vLLM 0.30.0 vllm/config/parallel.py).

    world size = pp × tp × pcp (one engine); GPUs one node uses = dp_local × world size.
    ``known`` is False when a size is broken or unresolved (rules about the layout stay silent).
    """

    tp: Size
    pp: Size
    dp: Size
    dp_local: Size
    pcp: Size
    nnodes: Size
    known: bool

    @property
    def world_size(self) -> int:
        return self.tp.value * self.pp.value * self.pcp.value

    def describe_world(self) -> str:
        parts = [f"tp {self.tp.value}", f"pp {self.pp.value}"]
        if self.pcp.value > 1:
            parts.append(f"pcp {self.pcp.value}")
        return " × ".join(parts)

    @property
    def nnodes_within_dp(self) -> int:
        """Nodes one engine (world) spans: 1 on one node, else nnodes // (dp // dp_local)."""
        if self.nnodes.value <= 1:
            return 1
        engines_elsewhere = max(1, self.dp.value // max(1, self.dp_local.value))
        return max(1, self.nnodes.value // engines_elsewhere)

    @property
    def gpus_per_node(self) -> int:
        """GPUs this launch uses on its own node (vllm/v1/engine/utils.py device ranges)."""
        local_world = self.world_size // self.nnodes_within_dp
        return self.dp_local.value * local_world

    @property
    def explicit_sizes(self) -> list[tuple[str, Size]]:
        return [(name, s) for name, s in (("tp", self.tp), ("pp", self.pp), ("dp", self.dp),
                                         ("dp_local", self.dp_local), ("pcp", self.pcp))
                if s.given]


def _size(setting: "Setting", default: int = 1) -> tuple[Size, bool]:
    value = setting.value
    ok = setting.known and (not setting.given or isinstance(value, int))
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        value = default
        ok = ok and not setting.given
    return Size(value, setting.given, setting.span), ok


def layout(inv: "Invocation") -> Layout | None:
    """The launch's layout; None for engines without vLLM's parallel sizes."""
    if inv.engine != VLLM:
        return None
    tp, ok1 = _size(inv.tensor_parallel_size)
    pp, ok2 = _size(inv.pipeline_parallel_size)
    dp, ok3 = _size(inv.data_parallel_size)
    pcp, ok4 = _size(inv.prefill_context_parallel_size)
    nnodes, ok5 = _size(inv.nnodes)
    local_setting = inv.data_parallel_size_local
    if local_setting.given:
        dp_local, ok6 = _size(local_setting)
    else:
        # single node: dp_local defaults to dp; across nodes vLLM infers it as
        # max((W / nnodes) // (pp × tp × pcp), 1) with W = dp × pp × tp × pcp
        # (vllm/engine/arg_utils.py create_engine_config, vLLM 0.30.0; vllm-notes.md §5)
        world = tp.value * pp.value * pcp.value
        derived = dp.value if nnodes.value <= 1 else max(
            (dp.value * world // nnodes.value) // world, 1)
        dp_local, ok6 = Size(derived, False, None), local_setting.known
    return Layout(tp, pp, dp, dp_local, pcp, nnodes, all((ok1, ok2, ok3, ok4, ok5, ok6)))
