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


def not_listed(code: str, severity: Severity, what: str, source: SourceFile, first: Span,
               last: Span, count: int, listed: int, hint: str | None = None) -> Finding:
    """The one finding that stands for ``count`` findings of ``code`` left out after the first
    ``listed``: at the first of them, the last as related, and ``data.not_listed`` the count
    (what a reader of the JSON sums; a file's cap counts it as that many)."""
    return Finding(code, severity,
                   f"and {count:,} more {what} from here on, not listed one by one (the first "
                   f"{listed:,} are)",
                   source, first, hint=hint,
                   related=(Related(source, last, "the last of them"),) if last != first else (),
                   data={"not_listed": count})


def findings_of(code: str, count: int) -> str:
    """``MG004 findings`` (``finding`` for one), as a summary names what it stands for."""
    return f"{code} finding{'' if count == 1 else 's'}"


def _stands_for(f: Finding) -> int:
    n = f.data.get("not_listed") if f.data else None
    return n if isinstance(n, int) else 1


@dataclass(slots=True)
class _LeftOut:
    """The findings of one code of one file past the cap: where their summary goes in the
    output, how many they stand for, their worst severity, the first and the last."""
    index: int
    count: int
    severity: Severity
    first: Finding
    last: Finding


def capped_per_file(findings: list[Finding], limit: int) -> list[Finding]:
    """``findings`` (sorted) with at most ``limit`` of one code in one file; the rest of each
    are one finding at the first left out (``not_listed``), with the worst severity among them.
    A summary stands at its first left-out finding's place and code, so the order holds."""
    counts: dict[tuple[str, str], int] = {}
    over: dict[tuple[str, str], _LeftOut] = {}
    out: list[Finding] = []
    for f in findings:
        key = (f.source.path, f.code)
        n = counts[key] = counts.get(key, 0) + 1
        if n <= limit:
            out.append(f)
            continue
        o = over.get(key)
        if o is None:
            over[key] = _LeftOut(len(out), _stands_for(f), f.severity, f, f)
            out.append(f)  # its place, replaced by the summary below
            continue
        o.count += _stands_for(f)
        o.last = f
        if f.severity.rank > o.severity.rank:
            o.severity = f.severity
    for (_, code), o in over.items():
        out[o.index] = not_listed(code, o.severity, f"{findings_of(code, o.count)} in this file",
                                  o.first.source, o.first.span, o.last.span, o.count, limit)
    return out


def internal_error(source: SourceFile, exc: BaseException) -> Finding:
    import traceback  # only for an internal error

    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    loc = f" at {where.filename.rsplit('/', 1)[-1]}:{where.lineno}" if where else ""
    return Finding("MG000", Severity.ERROR,
                   f"internal error while linting this file: {type(exc).__name__}: {exc}{loc}",
                   source, Span(0, 0), hint="please report this with the file attached")
