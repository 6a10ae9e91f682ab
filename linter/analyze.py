"""Per launch: parse the engine's arguments, resolve the deployment, run the rules."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from .deployment import Deployment, linked_hpas, linked_services
from .engines import parse_launch
from .facts.peers import GpuPeer, physical_gpus
from .findings import Finding, Severity, internal_error
from .launch import RPC_SERVER, HpaInfo, Launch, ServiceInfo
from .resolve import ModelFacts, gpu_facts, layout, model_facts
from .rules import checks_for

if TYPE_CHECKING:
    from .config import Settings
    from .engines import Invocation
    from .options import Options


@dataclass
class FileSet:
    """Objects of the whole run that refer to each other (Services, HPAs, all launches), and
    what is computed once per launch for every rule that needs it (its parse, its GPUs)."""

    services: list[ServiceInfo]
    hpas: list[HpaInfo]
    launches: list[Launch]
    _parsed: dict[tuple[int, str | None], tuple[Invocation, list[Finding]]] = field(
        default_factory=dict, repr=False)
    _gpu_index: dict[int, dict[str, list[tuple[int, Launch]]]] = field(default_factory=dict,
                                                                        repr=False)

    @cached_property
    def by_source(self) -> dict[int, tuple[Launch, ...]]:
        groups: dict[int, list[Launch]] = {}
        for la in self.launches:
            groups.setdefault(id(la.source), []).append(la)
        return {k: tuple(v) for k, v in groups.items()}

    def parse(self, launch: Launch, version: str | None) -> tuple[Invocation, list[Finding]]:
        """The launch's parse, once per launch and target-version (a peer's parse is shared
        with the launch's own analysis)."""
        key = (id(launch), version)
        hit = self._parsed.get(key)
        if hit is None:
            hit = self._parsed[key] = parse_launch(launch, version)
        return hit[0], list(hit[1])

    def gpu_peers(self, launch: Launch, version: str | None) -> tuple[GpuPeer, ...]:
        """Earlier launches of the same file given one of this launch's physical GPUs, in
        file order.  An index of GPU ids per file keeps this linear in the launches."""
        mine = physical_gpus(launch)
        if mine is None:
            return ()
        index = self._gpu_index.get(id(launch.source))
        if index is None:
            index = self._gpu_index[id(launch.source)] = {}
            for pos, la in enumerate(self.by_source.get(id(launch.source), ())):
                claim = physical_gpus(la)
                for gpu in claim[0] if claim is not None else ():
                    index.setdefault(gpu, []).append((pos, la))
        start = launch.program.span.start
        found: dict[int, Launch] = {}
        for gpu in mine[0]:
            for pos, la in index.get(gpu, ()):
                if la.program.span.start >= start:
                    break
                found[pos] = la
        out = []
        for pos in sorted(found):
            la = found[pos]
            claim = physical_gpus(la)
            assert claim is not None
            out.append(GpuPeer(la, self.parse(la, version)[0], claim[0], claim[1]))
        return tuple(out)


def effective_settings(settings: Settings, options: Options) -> Settings:
    """`--target-version` on the command line outranks the configuration's (DECISIONS
    "Release precedence"): rules that ask whether a release is pinned read it here."""
    if options.target_version and options.target_version != settings.target_version:
        return dataclasses.replace(settings, target_version=options.target_version)
    return settings


def deployment(launch: Launch, settings: Settings, options: Options,
               fileset: FileSet) -> tuple[Deployment, list[Finding]]:
    """The Deployment the rules see, and the findings of parsing and resolving it."""
    settings = effective_settings(settings, options)
    inv, findings = fileset.parse(launch, settings.target_version)
    model = model_facts(inv, launch, settings) if launch.engine != RPC_SERVER else None
    if model is not None and model.shape is None:
        findings.append(unknown_model(launch, model))
    d = Deployment(
        launch=launch,
        inv=inv,
        settings=settings,
        layout=layout(inv),
        model=model,
        gpu=gpu_facts(launch, settings, options.gpu, options.gpus_per_node),
        services=linked_services(launch, fileset.services),
        hpas=linked_hpas(launch, fileset.hpas),
        gpu_peers=fileset.gpu_peers(launch, settings.target_version),
    )
    return d, findings


def analyze(launch: Launch, settings: Settings, options: Options,
            fileset: FileSet) -> list[Finding]:
    d, findings = deployment(launch, settings, options, fileset)
    for r in checks_for(d.adapter):
        try:
            findings.extend(r.check(d))  # type: ignore[misc]
        except Exception as exc:  # noqa: BLE001 - one rule's bug must not hide the others
            findings.append(internal_error(launch.source, exc))
    return findings


def unknown_model(launch: Launch, model: ModelFacts) -> Finding:
    span = model.span if model.span is not None else launch.program.span
    return Finding(
        "MG010", Severity.INFO,
        f"model `{model.ref}` has no known shape: memory, attention-head and expert checks are "
        "skipped for this launch",
        launch.source, span,
        hint="add its shape under [models] in mgpu-lint.toml (params, layers, hidden, heads, "
             "kv_heads, head_dim …), or keep its config.json beside the manifest",
    )
