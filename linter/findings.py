"""Findings: small immutable values produced by sources, engines and rules."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any

from .source import SourceFile, Span
from .records import dataclass, field

if TYPE_CHECKING:
    from .fixes import Fix


class Severity(str, Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Severity.INFO: 1, Severity.WARNING: 2, Severity.ERROR: 3}


@dataclass(frozen=True, slots=True)
class Related:
    source: SourceFile
    span: Span
    message: str


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem at one place.  ``severity`` is always explicit (rules pick per finding)."""

    code: str
    severity: Severity
    message: str
    source: SourceFile
    span: Span
    hint: str | None = None
    math: tuple[str, ...] = ()
    related: tuple[Related, ...] = ()
    data: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    fix: Fix | None = field(default=None, compare=False, hash=False)

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.source.path, self.span.start, self.span.end, self.code)


def internal_error(source: SourceFile, exc: BaseException) -> Finding:
    import traceback  # only for an internal error

    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    loc = f" at {where.filename.rsplit('/', 1)[-1]}:{where.lineno}" if where else ""
    return Finding("MG000", Severity.ERROR,
                   f"internal error while linting this file: {type(exc).__name__}: {exc}{loc}",
                   source, Span(0, 0), hint="please report this with the file attached")
