"""The Deployment: one immutable object with every fact a rule needs, each with its place.

``resolve.resolve`` builds it from a Launch (what the file says), the engine's parse of its
arguments (the Invocation) and the catalogs (model shape, GPU type).  Rules read it and nothing
else: they never parse, never read files, never print.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .launch import Context, HpaInfo, Launch, Located, ServiceInfo
from .source import SourceFile, Span

if TYPE_CHECKING:
    from .config import Settings


@dataclass(frozen=True)
class Deployment:
    launch: Launch
    settings: "Settings"
    services: tuple[ServiceInfo, ...] = ()  # Services whose selector matches the pod
    hpas: tuple[HpaInfo, ...] = ()  # HPAs whose target is the launch's object
    peers: tuple[Launch, ...] = ()  # other launches of the same file set
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def source(self) -> SourceFile:
        return self.launch.source

    @property
    def context(self) -> Context:
        return self.launch.context

    @property
    def engine(self) -> str:
        return self.launch.engine

    @property
    def program_span(self) -> Span:
        return self.launch.program.span


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def linked_services(launch: Launch, services: list[ServiceInfo]) -> tuple[ServiceInfo, ...]:
    ctx = launch.context
    if ctx.kind != "k8s":
        return ()
    return tuple(s for s in services
                 if (s.namespace or None) == (ctx.namespace or None)
                 and selects(dict(s.selector), dict(ctx.pod_labels)))


def linked_hpas(launch: Launch, hpas: list[HpaInfo]) -> tuple[HpaInfo, ...]:
    ctx = launch.context
    if ctx.kind != "k8s" or not ctx.object_name:
        return ()
    return tuple(h for h in hpas
                 if (h.namespace or None) == (ctx.namespace or None)
                 and h.target_name == ctx.object_name
                 and (h.target_kind is None or h.target_kind == ctx.object_kind))


def located_span(loc: Located | None) -> Span | None:
    return loc.span if loc is not None else None
