"""Per launch: parse the engine's arguments, resolve the deployment, run the rules."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from .deployment import Deployment, linked_hpas, linked_services
from .findings import Finding, Severity
from .launch import RPC_SERVER, HpaInfo, Launch, ServiceInfo
from .resolve import ModelFacts, gpu_facts, layout, model_facts

if TYPE_CHECKING:
    from .config import Settings
    from .runner import Options


@dataclass(frozen=True)
class FileSet:
    """Objects of the whole run that refer to each other (Services, HPAs, all launches)."""

    services: list[ServiceInfo]
    hpas: list[HpaInfo]
    launches: list[Launch]

    @cached_property
    def by_source(self) -> dict[int, tuple[Launch, ...]]:
        groups: dict[int, list[Launch]] = {}
        for la in self.launches:
            groups.setdefault(id(la.source), []).append(la)
        return {k: tuple(v) for k, v in groups.items()}


def analyze(launch: Launch, settings: "Settings", options: "Options",
            fileset: FileSet) -> list[Finding]:
    from .engines import parse_launch
    from .rules import CHECKS
    from .runner import internal_error

    if options.target_version and options.target_version != settings.target_version:
        # `--target-version` on the command line outranks the configuration's (DECISIONS
        # "Release precedence"); rules that re-parse peers or ask whether a release is pinned
        # read it from the settings
        settings = dataclasses.replace(settings, target_version=options.target_version)
    inv, findings = parse_launch(launch, settings.target_version)
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
        peers=tuple(la for la in fileset.by_source.get(id(launch.source), ()) if la is not launch),
    )
    for r in CHECKS:
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
