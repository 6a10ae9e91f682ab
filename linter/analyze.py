"""Per launch: parse the engine's arguments, resolve the deployment, run the rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .deployment import Deployment, linked_hpas, linked_services
from .findings import Finding
from .launch import HpaInfo, Launch, ServiceInfo
from .resolve import layout

if TYPE_CHECKING:
    from .config import Settings
    from .runner import Options


@dataclass(frozen=True)
class FileSet:
    """Objects of the whole run that refer to each other (Services, HPAs, all launches)."""

    services: list[ServiceInfo]
    hpas: list[HpaInfo]
    launches: list[Launch]


def analyze(launch: Launch, settings: "Settings", options: "Options",
            fileset: FileSet) -> list[Finding]:
    from .engines import parse_launch
    from .rules import CHECKS
    from .runner import internal_error

    inv, findings = parse_launch(launch, options.target_version or settings.target_version)
    d = Deployment(
        launch=launch,
        inv=inv,
        settings=settings,
        layout=layout(inv),
        services=linked_services(launch, fileset.services),
        hpas=linked_hpas(launch, fileset.hpas),
        peers=tuple(la for la in fileset.launches if la is not launch),
    )
    for r in CHECKS:
        try:
            findings.extend(r.check(d))  # type: ignore[misc]
        except Exception as exc:  # noqa: BLE001 - one rule's bug must not hide the others
            findings.append(internal_error(launch.source, exc))
    return findings
