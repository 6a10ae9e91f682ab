"""Text report: `path:line:col: CODE [severity] message`, the source line, a caret, math, hint."""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding, Severity

_COLORS = {
    Severity.ERROR: "\x1b[1;31m",
    Severity.WARNING: "\x1b[1;33m",
    Severity.INFO: "\x1b[1;36m",
}
_BOLD, _RESET = "\x1b[1m", "\x1b[0m"
# A source line longer than this is shown as an excerpt around the span (the rest elided with
# "…"), so a report costs the same per finding however long the line: many findings on one
# megabyte line stay linear.
MAX_SHOWN = 400
_CONTEXT = 100  # characters kept on each side of the span in an excerpt
_MAX_CARET = 200


def _line_bounds(src, line: int) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Offsets [begin, end) of a 1-based line without its line break (and a trailing CR)."""
    starts = src.line_starts()
    begin = starts[line - 1]
    end = starts[line] - 1 if line < len(starts) else len(src.text)
    if end > begin and src.text[end - 1] == "\r":
        end -= 1
    return begin, end


def _excerpt(src, line: int, col0: int, col1: int) -> tuple[str, int, int]:  # type: ignore
    """The line's text to show and the 0-based columns of the span in it: the whole line when
    it is short, else a window of the span (cut to _MAX_CARET) with _CONTEXT either side."""
    begin, end = _line_bounds(src, line)
    length = end - begin
    if length <= MAX_SHOWN:
        return src.text[begin:end], col0, col1
    col1 = min(max(col1, col0), length, col0 + _MAX_CARET)
    lo = max(0, col0 - _CONTEXT)
    hi = min(length, col1 + _CONTEXT)
    text = src.text[begin + lo:begin + hi]
    lead = "…" if lo > 0 else ""
    trail = "…" if hi < length else ""
    return lead + text + trail, col0 - lo + len(lead), col1 - lo + len(lead)


def _expand_tabs(line: str, col0: int, col1: int) -> tuple[str, int, int]:
    """Tabs in the shown line become spaces, and caret columns follow them."""
    if "\t" not in line:
        # every column maps to itself; a column outside [0, len] to the line's width, as below
        n = len(line)
        c1 = min(col1, n)
        return line, col0 if 0 <= col0 <= n else n, c1 if 0 <= c1 else n
    out = []
    pos = {}
    width = 0
    for i, ch in enumerate(line):
        pos[i] = width
        if ch == "\t":
            step = 4 - width % 4
            out.append(" " * step)
            width += step
        else:
            out.append(ch)
            width += 1
    pos[len(line)] = width
    return "".join(out), pos.get(col0, width), pos.get(min(col1, len(line)), width)


def render_finding(f: Finding, color: bool = False) -> str:
    src = f.source
    line, col = src.line_col(f.span.start)
    end_line, end_col = src.line_col(f.span.end)
    sev = f.severity.value
    head_sev = f"{_COLORS[f.severity]}{sev}{_RESET}" if color else sev
    head = f"{src.path}:{line}:{col}: {f.code} [{head_sev}] {f.message}"
    out = [f"{_BOLD}{head}{_RESET}" if color else head]
    begin, end = _line_bounds(src, line) if line <= len(src.line_starts()) else (0, 0)
    if end > begin or f.span.end > f.span.start:
        stop = end_col if end_line == line else end - begin + 1
        text, e0, e1 = _excerpt(src, line, col - 1, max(stop - 1, col))
        shown, c0, c1 = _expand_tabs(text, e0, e1)
        gutter = f"{line:>5} | "
        out.append(f"{gutter}{shown}")
        caret = " " * c0 + "^" * max(1, c1 - c0)
        out.append(" " * (len(gutter) - 2) + "| " + (f"{_COLORS[f.severity]}{caret}{_RESET}"
                                                     if color else caret))
    for m in f.math:
        out.append(f"      = {m}")
    if f.hint:
        out.append(f"      = hint: {f.hint}")
    for r in f.related:
        rl, rc = r.source.line_col(r.span.start)
        out.append(f"      --> {r.source.path}:{rl}:{rc}: {r.message}")
    return "\n".join(out)


def render(findings: list[Finding], summary: dict, color: bool = False,
           statistics: bool = False) -> str:
    return "".join(chunks(findings, summary, color, statistics))


def chunks(findings: list[Finding], summary: dict, color: bool = False,
           statistics: bool = False, tail: bool = True) -> Iterator[str]:
    """``render``'s text in pieces, for writing as it is made: 20,000 findings rendered into
    one string, joined, then encoded held their text three times over.  ``tail`` False leaves
    out the closing count (``--quiet``), and then a run without findings prints nothing."""
    if not tail and not findings:
        return
    n = 0
    for f in findings:
        yield ("\n\n" if n else "") + render_finding(f, color)
        n += 1
    if statistics:
        counts: dict[str, int] = {}
        for f in findings:
            counts[f.code] = counts.get(f.code, 0) + 1
        yield ("\n\n" if n else "") + "\n".join(
            f"{k:>6}  {code}" for code, k in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        n += 1
    if not tail:
        yield "\n"
        return
    by = summary["by_severity"]
    last = (f"Found {summary['findings']} finding(s) ({by['error']} error, {by['warning']} "
            f"warning, {by['info']} info) in {summary['files']} file(s), "
            f"{summary['launches']} launch(es).")
    if findings:
        yield "\n\n" + last + "\n"
    else:
        yield ("\n" if n else "") + last + "\n"
