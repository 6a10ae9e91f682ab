"""JSON report: the editor contract (version 1; schema in findings.schema.json beside this)."""

from __future__ import annotations

import json
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
    doc = {
        "version": SCHEMA_VERSION,
        "tool": {"name": "mgpu-lint", "version": __version__},
        "findings": [finding_dict(f, names) for f in findings],
        "summary": summary,
    }
    # compact: json's C encoder runs only without indentation (3-4x faster on large runs);
    # `| jq` shows it indented
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n"
