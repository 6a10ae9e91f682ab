"""Suppressions: `# mgpu-lint: disable=CODES` comments, `disable-file`, the k8s annotation.

A directive at the end of a line covers findings on that line; on a line of its own it covers the
next line.  "The line before" also means the line before the enclosing command or YAML node: a
finding inside a launch is covered by a directive on (or just before) the launch's first line
(a `#` comment cannot sit inside a backslash-continued command).  `disable-file=CODES` covers the
whole file.  The Kubernetes annotation `mgpu-lint/ignore: CODES` on an object or its pod template
covers that object's launches.  A directive that covers nothing is reported (MG012).
"""

from __future__ import annotations

import heapq
import re
from typing import Callable, Iterable

from .bounds import MAX_FINDINGS_PER_CODE
from .findings import Finding, Severity, not_listed
from .source import SourceFile, Span
from .records import dataclass

_DIRECTIVE = re.compile(r"#\s*mgpu-lint:\s*(disable-file|disable)\s*=\s*([A-Za-z0-9, ]+)")


@dataclass(slots=True)
class Directive:
    codes: tuple[str, ...]
    span: Span
    file_wide: bool
    lines: tuple[int, ...]  # 1-based lines it covers (empty for file-wide)
    used: set[str] | None = None  # the codes it suppressed something of (made on the first)


def parse_codes(text: str) -> tuple[str, ...]:
    return tuple(c.strip().upper() for c in re.split(r"[,\s]+", text) if c.strip())


def directives(source: SourceFile) -> list[Directive]:
    text = source.text
    if "mgpu-lint:" not in text:
        return []
    found: list[Directive] = []
    # the codes of each distinct list as written, parsed once and shared: a file of 370,000
    # `disable=MG102` kept 36 MiB of copies of the same tuple
    parsed: dict[str, tuple[str, ...]] = {}
    for m in _DIRECTIVE.finditer(text):
        line, _ = source.line_col(m.start())
        line_text = source.line_text(line)
        own_line = line_text.lstrip().startswith("#")
        listed = m.group(2)
        codes = parsed.get(listed)
        if codes is None:
            codes = parsed[listed] = parse_codes(listed)
        span = Span(m.start(), m.end())
        if m.group(1) == "disable-file":
            found.append(Directive(codes, span, True, ()))
        else:
            found.append(Directive(codes, span, False, (line + 1,) if own_line else (line,)))
    return found


def _covers(code: str, codes: tuple[str, ...]) -> bool:
    return any(code.startswith(c) for c in codes)


def annotation_codes(findings: Iterable[Finding], ignores: list[tuple[Span, str]]
                     ) -> dict[int, tuple[str, ...]]:
    """The codes that the `mgpu-lint/ignore` annotations (``ignores``: the object's span and
    the annotation's value) of the objects enclosing each finding name, by the finding's id.

    Findings in order of place meet the objects in order of start, the ones they are in kept
    in a heap by end (objects are YAML nodes: nested or apart, so few are open at a time).
    Each finding looked through every object: 1,000 launches beside 88,000 annotated
    ConfigMaps (9.5 MiB) took 24 s."""
    objects = sorted(((span.start, span.end, n, parse_codes(listed))
                      for n, (span, listed) in enumerate(ignores)), key=lambda o: o[0])
    out: dict[int, tuple[str, ...]] = {}
    open_: list[tuple[int, int, tuple[str, ...]]] = []  # (end, index in ignores, codes)
    i = 0
    for f in sorted(findings, key=lambda f: f.span.start):
        at = f.span.start
        while i < len(objects) and objects[i][0] <= at:
            _start, end, n, named = objects[i]
            heapq.heappush(open_, (end, n, named))
            i += 1
        while open_ and open_[0][0] <= at:
            heapq.heappop(open_)
        codes = tuple(c for _end, _i, cs in sorted(open_, key=lambda o: o[1]) for c in cs)
        if codes:
            out[id(f)] = codes
    return out


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
    index = _Index(dirs)
    kept: list[Finding] = []
    for f in findings:
        line, _ = source.line_col(f.span.start)
        covered = index.covers(f.code, {line, *anchors.get(id(f), ())})
        if not covered and not _covers(f.code, annotations.get(id(f), ())):
            kept.append(f)
    return kept, dirs


class _Index:
    """The directives by (line, code) (line 0: file-wide).  Each finding looked through every
    directive, and a file-wide one marked every directive it matched: 1,000 findings beside
    230,000 directives (9 MiB) ran over 120 s."""

    def __init__(self, dirs: list[Directive]) -> None:
        # a group of one directive (nearly all) is the directive itself, not a list of it
        self.groups: dict[tuple[int, str], Directive | list[Directive]] = {}
        groups = self.groups
        for d in dirs:
            for line in (0,) if d.file_wide else d.lines:
                for code in (d.codes if len(d.codes) == 1 else dict.fromkeys(d.codes)):
                    key = (line, code)
                    group = groups.get(key)
                    if group is None:
                        groups[key] = d
                    elif isinstance(group, list):
                        group.append(d)
                    else:
                        groups[key] = [group, d]
        self.marked: set[tuple[int, str]] = set()  # groups whose directives are marked used

    def covers(self, code: str, lines: set[int]) -> bool:
        """Whether a directive for one of ``lines`` (or file-wide) covers ``code``: it names
        the code or a prefix of it.  Each such directive is marked as having used it."""
        hit = False
        for line in (0, *lines):
            for k in range(1, len(code) + 1):
                key = (line, code[:k])
                group = self.groups.get(key)
                if group is None:
                    continue
                hit = True
                if key not in self.marked:
                    self.marked.add(key)
                    for d in group if isinstance(group, list) else (group,):
                        if d.used is None:
                            d.used = set()
                        d.used.add(key[1])
        return hit


def unused(source: SourceFile, dirs: list[Directive],
           is_selected: Callable[[str], bool]) -> list[Finding]:
    """MG012 for each directive with a code that suppressed nothing: the first
    MAX_FINDINGS_PER_CODE of the file one by one, the rest summed up in one finding (a file of
    300,000 stale comments would print 300,000 findings)."""
    out: list[Finding] = []
    left_out: list[Directive] = []
    for d in dirs:
        missing = [c for c in d.codes if (d.used is None or c not in d.used) and is_selected(c)
                   and c != "MG012"]
        if not missing:
            continue
        if len(out) == MAX_FINDINGS_PER_CODE:
            left_out.append(d)
            continue
        out.append(Finding(
            "MG012", Severity.INFO,
            f"suppression of {', '.join(missing)} suppressed nothing",
            source, d.span, hint="remove it, or the codes that no longer apply"))
    if left_out:
        out.append(not_listed(
            "MG012", Severity.INFO, "suppressions that suppressed nothing in this file",
            source, left_out[0].span, left_out[-1].span, len(left_out), MAX_FINDINGS_PER_CODE,
            hint="remove them, or the codes that no longer apply"))
    return out
