"""The Deployment: one immutable object with every fact a rule needs, each with its place.

``resolve.resolve`` builds it from a Launch (what the file says), the engine's parse of its
arguments (the Invocation) and the catalogs (model shape, GPU type).  Rules read it and nothing
else: they never parse, never read files, never print.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, TypeVar

from .engines import ENGINES, Engine
from .launch import Context, HpaInfo, Launch, Located, ServiceInfo
from .source import SourceFile, Span
from .records import dataclass

if TYPE_CHECKING:
    from .config import Settings
    from .engines import Invocation
    from .facts.peers import GpuPeer
    from .resolve import GpuFacts, Layout, ModelFacts


T = TypeVar("T")


@dataclass(frozen=True)
class Deployment:
    launch: Launch
    inv: "Invocation"
    settings: "Settings"
    layout: "Layout | None" = None  # vLLM's parallel sizes (None for llama.cpp engines)
    model: "ModelFacts | None" = None  # None: no usable model reference
    gpu: "GpuFacts | None" = None
    services: tuple[ServiceInfo, ...] = ()  # Services whose selector matches the pod
    hpas: tuple[HpaInfo, ...] = ()  # HPAs whose target is the launch's object
    gpu_peers: tuple["GpuPeer", ...] = ()  # earlier launches of the file on one of its GPUs

    def derived(self, key: str, compute: Callable[["Deployment"], T]) -> T:
        """A fact derived from this deployment, computed once and shared by the rules that
        read it (a rule family's budget, for example)."""
        memo = self.__dict__.setdefault("_derived", {})
        if key not in memo:
            memo[key] = compute(self)
        return memo[key]  # type: ignore[no-any-return]

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
    def adapter(self) -> Engine:
        """What rules may ask of the launch's engine (``engines/adapter.py``)."""
        return ENGINES[self.launch.engine]

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


@dataclass(frozen=True)
class Reach:
    """A way in from outside the host or cluster, and where the file opens it."""

    message: str
    source: SourceFile
    span: Span


INTERNAL_LB_ANNOTATIONS = {
    "networking.gke.io/load-balancer-type": "internal",
    "cloud.google.com/load-balancer-type": "internal",
    "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
    "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
    "service.beta.kubernetes.io/azure-load-balancer-internal": "true",
    "service.beta.kubernetes.io/oci-load-balancer-internal": "true",
    "service.kubernetes.io/ibm-load-balancer-cloud-provider-ip-type": "private",
}


def _internal(service: ServiceInfo) -> bool:
    return any(service.annotations.get(k, "").lower() == v
               for k, v in INTERNAL_LB_ANNOTATIONS.items())


def public_reach(d: Deployment, port: int, bound_host: bool = True) -> list[Reach]:
    """Every way ``port`` of the launch is reachable from outside (DECISIONS: public means a
    port published on all interfaces, NodePort, LoadBalancer without an internal annotation,
    hostPort or hostNetwork).  ``bound_host`` False leaves out the server's own bind address
    (for a rule that judges the bind address separately)."""
    ctx = d.context
    out: list[Reach] = []
    if bound_host and ctx.kind == "shell" and ctx.image is None:
        # a script that runs the server on the machine itself (not in a container): an explicit
        # all-interfaces host is the exposure (the defaults are not judged: README-style
        # commands would all be reported)
        host = d.inv.host
        if host.given and host.known and str(host.value) in ("0.0.0.0", "::", "[::]") \
                and host.span is not None:
            out.append(Reach(f"--host {host.value} listens on every interface of the machine "
                             "that runs this script", d.source, host.span))
    for p in ctx.ports:
        if not p.published or (p.container_port is not None and p.container_port != port):
            continue
        if p.host_ip in ("", "0.0.0.0", "::", "[::]"):
            out.append(Reach(f"{p.origin} publishes it on all interfaces", d.source, p.span))
    if ctx.host_network is not None and ctx.host_network.span is not None:
        out.append(Reach(f"{ctx.host_network.value} puts it on the host's interfaces",
                         d.source, ctx.host_network.span))
    for svc in d.services:
        kind = svc.type.value
        if kind not in ("NodePort", "LoadBalancer") or svc.type.span is None:
            continue
        if kind == "LoadBalancer" and _internal(svc):
            continue
        targets = [t if t is not None else str(p) for p, t in svc.ports]
        if svc.ports and str(port) not in targets and not any(
                t is not None and not t.isdigit() for t in targets):
            continue
        out.append(Reach(f"Service `{svc.name}` of type {kind} exposes it", svc.source,
                         svc.type.span))
    return out
