"""GitHub Actions workflow commands: one `::error file=…,line=…::message` line per finding.

Escaping follows the Actions runner: in the message (data) `%`, CR and LF are percent-encoded; in
property values `:` and `,` are too.  Text that is not a file (``<command>``, ``<stdin>``) gets no
`file` property: its place goes into the message instead.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding, Severity
from .sarif import is_pseudo_path

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_finding(f: Finding) -> str:
    line, col = f.source.line_col(f.span.start)
    end_line, end_col = f.source.line_col(f.span.end)
    lines = [f.message, *f.math]
    if f.hint:
        lines.append(f"hint: {f.hint}")
    props: list[tuple[str, str]] = []
    if is_pseudo_path(f.source.path):
        lines[0] = f"{f.source.path}:{line}:{col}: {f.message}"
    else:
        props = [("file", f.source.path), ("line", str(line)), ("col", str(col)),
                 ("endLine", str(end_line)), ("endColumn", str(end_col))]
    props.append(("title", f.code))
    head = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    message = escape_data("\n".join(lines))
    return f"::{COMMANDS[f.severity]} {head}::{message}"


def chunks(findings: list[Finding], batch: int = 256) -> Iterator[str]:
    """The report in pieces of ``batch`` lines, for writing as they are made (one string of
    every line held the whole report at once)."""
    for i in range(0, len(findings), batch):
        yield "".join(render_finding(f) + "\n" for f in findings[i:i + batch])


def render(findings: list[Finding]) -> str:
    return "".join(chunks(findings))
