"""JSON report: the editor contract (version 1; schema in findings.schema.json beside this)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .. import __version__
from ..findings import Finding
from ..source import SourceFile, Span

SCHEMA_VERSION = 1


def _range(source: SourceFile, span: Span) -> dict[str, Any]:
    sl, sc = source.line_col(span.start)
    el, ec = source.line_col(span.end)
    return {"start": {"line": sl, "column": sc}, "end": {"line": el, "column": ec}}


def finding_dict(f: Finding, names: dict[str, tuple[str, str]]) -> dict[str, Any]:
    name, url = names.get(f.code, (f.code.lower(), ""))
    d: dict[str, Any] = {
        "code": f.code,
        "name": name,
        "severity": f.severity.value,
        "message": f.message,
        "path": f.source.path,
        "range": _range(f.source, f.span),
        "hint": f.hint,
        "math": list(f.math),
        "related": [
            {"path": r.source.path, "range": _range(r.source, r.span), "message": r.message}
            for r in f.related
        ],
        "url": url,
    }
    if f.data:
        d["data"] = f.data
    if f.fix is not None:
        d["fix"] = {
            "title": f.fix.title,
            "safe": f.fix.safe,
            "edits": [{"range": _range(f.source, e.span), "text": e.text} for e in f.fix.edits],
        }
    return d


def render(findings: list[Finding], summary: dict, names: dict[str, tuple[str, str]]) -> str:
    return "".join(chunks(findings, summary, names))


# compact: json's C encoder runs only without indentation (3-4x faster on large runs); `| jq`
# shows it indented.  One encoder for the run: json.dumps with options builds a JSONEncoder per
# call (once per finding), with the same settings and so the same text
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def compact_json(obj: Any) -> str:
    return _ENCODER.encode(obj)


def chunks(findings: list[Finding], summary: dict, names: dict[str, tuple[str, str]],
           batch: int = 256) -> Iterator[str]:
    """The report's text in pieces, for writing as it is made, byte for byte what one
    ``json.dumps`` of the whole document gives: the document of 20,000 findings as one tree of
    dicts, then one string, then its encoding held it four times over (over 500 MiB)."""
    head = compact_json({"version": SCHEMA_VERSION, "tool": {"name": "mgpu-lint",
                                                       "version": __version__}})
    yield head[:-1] + ',"findings":['
    for i in range(0, len(findings), batch):
        # a list's compact text is its items' texts joined by ","
        yield ("," if i else "") + compact_json([finding_dict(f, names)
                                                 for f in findings[i:i + batch]])[1:-1]
    yield '],"summary":' + compact_json(summary) + "}\n"
