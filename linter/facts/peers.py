"""Launches of one file that are given the same physical GPU (MG108): found once per file
through an index of GPU ids, each peer parsed once (``FileSet.parse``), never by a rule."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..engines import ENGINES
from ..resolve import VISIBLE_DEVICE_VARS
from ..records import dataclass

if TYPE_CHECKING:
    from ..engines import Invocation
    from ..launch import Launch
    from ..source import Span


@dataclass(frozen=True)
class GpuPeer:
    """An earlier launch of the same file that shares at least one physical GPU."""

    launch: Launch
    inv: Invocation
    ids: frozenset[str]  # the host GPU ids it runs on
    span: Span | None  # where the file states them

    def engine_has(self, *capabilities: str) -> bool:
        return ENGINES[self.launch.engine].has(*capabilities)


def physical_gpus(la: Launch) -> tuple[frozenset[str], Span | None] | None:
    """The host GPU ids a launch runs on, when the file states them (compose/docker device
    ids, CUDA_VISIBLE_DEVICES on the host or within all GPUs); None when the scheduler picks
    (Kubernetes) or the file does not say."""
    ctx = la.context
    if ctx.pod or ctx.tpu is not None:
        return None
    req = ctx.gpus
    cvd = next((la.env[k] for k in VISIBLE_DEVICE_VARS if k in la.env), None)
    visible = [x.strip() for x in cvd.value.split(",") if x.strip()] \
        if cvd is not None and cvd.value is not None and cvd.value.strip() != "all" else None
    if req is None:
        return (frozenset(visible), cvd.span) if visible and cvd is not None else None
    if req.origin in VISIBLE_DEVICE_VARS:
        return frozenset(req.device_ids), req.span
    if req.device_ids:
        base = list(req.device_ids)
        if visible is None or cvd is None:
            return frozenset(base), req.span
        if not all(v.isdigit() and int(v) < len(base) for v in visible):
            return None
        return frozenset(base[int(v)] for v in visible), cvd.span
    if visible and cvd is not None and req.count is None:
        return frozenset(visible), cvd.span
    return None
