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


def placed(f: Finding) -> Finding:
    """``f`` in the files its places are in, when a launch joined from several files
    (``source.joined_source``) found it: its own span and each related location in their own
    file.  A fix keeps only edits of the file the finding is in; one that would edit another
    file is dropped (an edit applies to the file it names)."""
    if not f.source.parts and not any(r.source.parts for r in f.related):
        return f
    from .records import replace

    source, span = f.source.place(f.span)
    related = []
    for r in f.related:
        rs, rspan = r.source.place(r.span)
        related.append(Related(rs, rspan, r.message))
    fix = f.fix
    if fix is not None and f.source.parts:
        spans = [f.source.place(e.span) for e in fix.edits]
        if all(s is source for s, _ in spans):
            fix = replace(fix, edits=tuple(replace(e, span=sp)
                                           for e, (_, sp) in zip(fix.edits, spans)))
        else:
            fix = None
    return replace(f, source=source, span=span, related=tuple(related), fix=fix)


def internal_error(source: SourceFile, exc: BaseException) -> Finding:
    import traceback  # only for an internal error

    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    loc = f" at {where.filename.rsplit('/', 1)[-1]}:{where.lineno}" if where else ""
    return Finding("MG000", Severity.ERROR,
                   f"internal error while linting this file: {type(exc).__name__}: {exc}{loc}",
                   source, Span(0, 0), hint="please report this with the file attached")
