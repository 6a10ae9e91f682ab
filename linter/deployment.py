"""The Deployment: one immutable object with every fact a rule needs, each with its place.

``resolve.resolve`` builds it from a Launch (what the file says), the engine's parse of its
arguments (the Invocation) and the catalogs (model shape, GPU type).  Rules read it and nothing
else: they never parse, never read files, never print.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, TypeVar

from .bounds import MAX_FINDINGS_PER_CODE
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


class Linked(tuple):  # type: ignore[type-arg]  # of ServiceInfo
    """The Services linking to a launch, in the run's order: one tuple shared by every launch
    of the same namespace and pod labels (``LinkIndex.services_of``), so what follows from the
    Services alone (which of them make a port public) is worked out once for all those launches
    (``derived``), not once for each."""

    def derived(self, key: object, compute: Callable[[tuple[ServiceInfo, ...]], T]) -> T:
        memo = self.__dict__.setdefault("_derived", {})
        if key not in memo:
            memo[key] = compute(self)
        return memo[key]  # type: ignore[no-any-return]


def from_services(services: tuple[ServiceInfo, ...], key: object,
                  compute: Callable[[tuple[ServiceInfo, ...]], T]) -> T:
    """``compute(services)``, once for every launch sharing them when they are a Linked (a
    Deployment built by hand has a plain tuple)."""
    if isinstance(services, Linked):
        return services.derived(key, compute)
    return compute(services)


class LinkIndex:
    """The Services and HPAs of a run that link to a launch.

    A Service links to a Kubernetes launch in its namespace whose pod labels hold every item of
    its (non-empty) selector; an HPA to the launch's object by namespace, name and (when given)
    kind.  Both in the run's order.  Services are filed under their namespace and first selector
    item, HPAs under namespace and target name, so a launch is compared only with the objects
    that can link to it (comparing every launch with every Service was quadratic: 20,000
    Deployments with their Services)."""

    def __init__(self, services: list[ServiceInfo], hpas: list[HpaInfo]) -> None:
        self.services = services
        self.hpas = hpas
        # namespace -> first selector key -> its value -> Service positions (in list order)
        self._svc: dict[str | None, dict[str, dict[str, list[int]]]] = {}
        for i, s in enumerate(services):
            if not s.selector:
                continue  # an empty selector selects nothing (``selects``)
            k, v = next(iter(s.selector.items()))
            self._svc.setdefault(s.namespace or None, {}).setdefault(k, {}) \
                .setdefault(v, []).append(i)
        self._linked: dict[tuple[str | None, frozenset[tuple[str, str]]], Linked] = {}
        self._hpa: dict[tuple[str | None, str | None], list[HpaInfo]] = {}
        for h in hpas:
            self._hpa.setdefault((h.namespace or None, h.target_name), []).append(h)

    def services_of(self, launch: Launch) -> tuple[ServiceInfo, ...]:
        ctx = launch.context
        if ctx.kind != "k8s":
            return ()
        by_key = self._svc.get(ctx.namespace or None)
        if not by_key:
            return ()
        labels = dict(ctx.pod_labels)
        # which Services select a pod depends on its namespace and labels alone: launches that
        # share them share one Linked (1,000 Deployments labelled like the 30,000 Services
        # selecting them compared each launch with each Service)
        key = (ctx.namespace or None, frozenset(labels.items()))
        hit = self._linked.get(key)
        if hit is not None:
            return hit
        found: list[int] = []
        for k, by_value in by_key.items():
            # the first selector item must match, as selects() asks of every item
            hit_k = by_value.get(labels.get(k))  # type: ignore[arg-type]
            if hit_k:
                found.extend(hit_k)
        if len(found) > 1:
            found.sort()
        linked = Linked(self.services[i] for i in found
                        if selects(dict(self.services[i].selector), labels))
        self._linked[key] = linked
        return linked

    def hpas_of(self, launch: Launch) -> tuple[HpaInfo, ...]:
        ctx = launch.context
        if ctx.kind != "k8s" or not ctx.object_name:
            return ()
        return tuple(h for h in self._hpa.get((ctx.namespace or None, ctx.object_name), ())
                     if h.target_kind is None or h.target_kind == ctx.object_kind)


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


@dataclass(frozen=True)
class Reaches:
    """The ways in ``public_reach`` found: the first MAX_FINDINGS_PER_CODE one by one, the rest
    counted, with the first and the last of them (a pod behind 30,000 LoadBalancer Services
    would get 30,000 findings, for each launch)."""

    listed: list[Reach]
    more: int = 0
    first_left_out: Reach | None = None
    last: Reach | None = None


def public_reach(d: Deployment, port: int, bound_host: bool = True) -> Reaches:
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
        if not p.published or p.unresolved or (p.container_port is not None
                                               and p.container_port != port):
            continue
        if p.host_ip in ("", "0.0.0.0", "::", "[::]"):
            out.append(Reach(f"{p.origin} publishes it on all interfaces", d.source, p.span))
    if ctx.host_network is not None and ctx.host_network.span is not None:
        out.append(Reach(f"{ctx.host_network.value} puts it on the host's interfaces",
                         d.source, ctx.host_network.span))
    svc = from_services(d.services, ("public", port), lambda s: _services_reach(s, port))
    return Reaches(*bounded(out, svc))


def bounded(own: list[T], shared: tuple[T, ...]) -> tuple[list[T], int, T | None, T | None]:
    """``own`` then ``shared``: the first MAX_FINDINGS_PER_CODE, how many more, the first and
    the last of those; it touches only the items it keeps (``shared`` is one tuple for many
    launches)."""
    total = len(own) + len(shared)
    if total <= MAX_FINDINGS_PER_CODE:
        return own + list(shared), 0, None, None
    listed = own[:MAX_FINDINGS_PER_CODE]
    listed.extend(shared[:MAX_FINDINGS_PER_CODE - len(listed)])

    def at(i: int) -> T:
        return own[i] if i < len(own) else shared[i - len(own)]

    return listed, total - MAX_FINDINGS_PER_CODE, at(MAX_FINDINGS_PER_CODE), at(total - 1)


def forwards_to(services: tuple[ServiceInfo, ...], port: int) -> tuple[ServiceInfo, ...]:
    """The Services that forward to ``port`` of the pod: a targetPort (or port) equal to it,
    a named one (it may name it), or no ports."""
    out = []
    for svc in services:
        targets = [t if t is not None else str(p) for p, t in svc.ports]
        if svc.ports and str(port) not in targets and not any(
                t is not None and not t.isdigit() for t in targets):
            continue
        out.append(svc)
    return tuple(out)


def _services_reach(services: tuple[ServiceInfo, ...], port: int) -> tuple[Reach, ...]:
    out: list[Reach] = []
    for svc in forwards_to(services, port):
        kind = svc.type.value
        if kind not in ("NodePort", "LoadBalancer") or svc.type.span is None:
            continue
        if kind == "LoadBalancer" and _internal(svc):
            continue
        out.append(Reach(f"Service `{svc.name}` of type {kind} exposes it", svc.source,
                         svc.type.span))
    return tuple(out)
