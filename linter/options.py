"""Command-line choices that override the configuration (shared by the CLI, the runner, the
sub-commands and the language server)."""

from __future__ import annotations

from typing import TYPE_CHECKING
from .records import dataclass

if TYPE_CHECKING:
    from .config import LoadedConfig


@dataclass(frozen=True)
class Options:
    """Command-line choices that override the configuration."""

    select: list[str] | None = None
    ignore: list[str] | None = None
    extend_select: list[str] | None = None
    gpu: str | None = None
    gpus_per_node: int | None = None
    target_version: str | None = None
    config: "LoadedConfig | None" = None
    exclude: list[str] | None = None
    extend_exclude: list[str] | None = None
    force_exclude: bool = False
