"""Suppressions: `# mgpu-lint: disable=CODES` comments, `disable-file`, the k8s annotation.

A directive at the end of a line covers findings on that line; on a line of its own it covers the
next line.  "The line before" also means the line before the enclosing command or YAML node: a
finding inside a launch is covered by a directive on (or just before) the launch's first line
(a `#` comment cannot sit inside a backslash-continued command).  `disable-file=CODES` covers the
whole file.  The Kubernetes annotation `mgpu-lint/ignore: CODES` on an object or its pod template
covers that object's launches.  A directive that covers nothing is reported (MG012).
"""

from __future__ import annotations

import re
from typing import Callable

from .findings import Finding, Severity
from .source import SourceFile, Span
from .records import dataclass, field

_DIRECTIVE = re.compile(r"#\s*mgpu-lint:\s*(disable-file|disable)\s*=\s*([A-Za-z0-9, ]+)")


@dataclass(slots=True)
class Directive:
    codes: tuple[str, ...]
    span: Span
    file_wide: bool
    lines: tuple[int, ...]  # 1-based lines it covers (empty for file-wide)
    used: set[str] = field(default_factory=set)


def parse_codes(text: str) -> tuple[str, ...]:
    return tuple(c.strip().upper() for c in re.split(r"[,\s]+", text) if c.strip())


def directives(source: SourceFile) -> list[Directive]:
    text = source.text
    if "mgpu-lint:" not in text:
        return []
    found: list[Directive] = []
    for m in _DIRECTIVE.finditer(text):
        line, _ = source.line_col(m.start())
        line_text = source.line_text(line)
        own_line = line_text.lstrip().startswith("#")
        codes = parse_codes(m.group(2))
        span = Span(m.start(), m.end())
        if m.group(1) == "disable-file":
            found.append(Directive(codes, span, True, ()))
        else:
            found.append(Directive(codes, span, False, (line + 1,) if own_line else (line,)))
    return found


def _covers(code: str, codes: tuple[str, ...]) -> bool:
    return any(code.startswith(c) for c in codes)


def apply(findings: list[Finding], source: SourceFile, anchors: dict[int, tuple[int, ...]],
          annotations: dict[int, tuple[str, ...]]) -> tuple[list[Finding], list[Directive]]:
    """Drop suppressed findings of one file; return the survivors and the file's directives.

    ``anchors`` maps a finding's id to the first lines of what encloses it (its launch, its
    container); ``annotations`` maps a finding's id to the codes its Kubernetes object's
    `mgpu-lint/ignore` annotation names.
    """
    dirs = directives(source)
    if not dirs and not annotations:
        return list(findings), dirs  # nothing can suppress (no line to look up per finding)
    kept: list[Finding] = []
    for f in findings:
        line, _ = source.line_col(f.span.start)
        lines = {line, *anchors.get(id(f), ())}
        suppressed = _covers(f.code, annotations.get(id(f), ()))
        for d in dirs:
            if _covers(f.code, d.codes) and (d.file_wide or lines.intersection(d.lines)):
                d.used.update(c for c in d.codes if f.code.startswith(c))
                suppressed = True
        if not suppressed:
            kept.append(f)
    return kept, dirs


def unused(source: SourceFile, dirs: list[Directive],
           is_selected: Callable[[str], bool]) -> list[Finding]:
    out = []
    for d in dirs:
        missing = [c for c in d.codes if c not in d.used and is_selected(c) and c != "MG012"]
        if missing:
            out.append(Finding(
                "MG012", Severity.INFO,
                f"suppression of {', '.join(missing)} suppressed nothing",
                source, d.span, hint="remove it, or the codes that no longer apply"))
    return out
