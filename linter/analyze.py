"""Per launch: parse the engine's arguments, resolve the deployment, run the rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .findings import Finding
from .launch import HpaInfo, Launch, ServiceInfo

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
    return []
