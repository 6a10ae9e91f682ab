"""Text report: `path:line:col: CODE [severity] message`, the source line, a caret, math, hint."""

from __future__ import annotations

from ..findings import Finding, Severity

_COLORS = {
    Severity.ERROR: "\x1b[1;31m",
    Severity.WARNING: "\x1b[1;33m",
    Severity.INFO: "\x1b[1;36m",
}
_BOLD, _RESET = "\x1b[1m", "\x1b[0m"


def _expand_tabs(line: str, col0: int, col1: int) -> tuple[str, int, int]:
    """Tabs in the shown line become spaces, and caret columns follow them."""
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
    text = src.line_text(line)
    if text or f.span.end > f.span.start:
        stop = end_col if end_line == line else len(text) + 1
        shown, c0, c1 = _expand_tabs(text, col - 1, max(stop - 1, col))
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
    parts = [render_finding(f, color) for f in findings]
    if statistics:
        counts: dict[str, int] = {}
        for f in findings:
            counts[f.code] = counts.get(f.code, 0) + 1
        parts.append("\n".join(f"{n:>6}  {code}" for code, n in
                               sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))))
    by = summary["by_severity"]
    tail = (f"Found {summary['findings']} finding(s) ({by['error']} error, {by['warning']} "
            f"warning, {by['info']} info) in {summary['files']} file(s), "
            f"{summary['launches']} launch(es).")
    if findings:
        return "\n\n".join(parts) + "\n\n" + tail + "\n"
    return ("\n".join(parts) + "\n" if parts and statistics else "") + tail + "\n"
