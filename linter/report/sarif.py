"""SARIF 2.1.0 report (GitHub code scanning), valid against the OASIS schema.

Regions are exact: 1-based lines and columns in Unicode code points (the run says so with
``columnKind``), end column exclusive.  A path under the root (the working directory) becomes a
URI relative to ``%SRCROOT%``; any other path an absolute ``file:`` URI.  Text that is not a file
(``<command>``, ``<stdin>``) is an artifact with its contents and no URI.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from .. import __version__
from ..findings import Finding, Severity
from ..source import SourceFile, Span

if TYPE_CHECKING:
    from ..rules.registry import Rule

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://mgpu-lint.dev"
SRCROOT = "%SRCROOT%"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def is_pseudo_path(path: str) -> bool:
    """``<command>`` and ``<stdin>`` name text that is not a file."""
    return path.startswith("<") and path.endswith(">")


class _Artifacts:
    """The run's ``artifacts`` array: one entry per file or text a location points into."""

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        self.items: list[dict[str, Any]] = []
        self.by_path: dict[str, int] = {}
        self.by_uri: dict[str, int] = {}  # `./a.sh` and `a.sh` are one artifact

    def location(self, source: SourceFile) -> dict[str, Any]:
        i = self.by_path.get(source.path)
        if i is None:
            artifact = self._artifact(source)
            uri = artifact.get("location", {}).get("uri")
            i = self.by_uri.get(uri) if uri is not None else None
            if i is None:
                i = len(self.items)
                self.items.append(artifact)
                if uri is not None:
                    self.by_uri[uri] = i
            self.by_path[source.path] = i
        loc = dict(self.items[i].get("location", {}))
        loc["index"] = i
        return loc

    def _artifact(self, source: SourceFile) -> dict[str, Any]:
        if is_pseudo_path(source.path):
            return {"contents": {"text": source.text}, "description": {"text": source.path}}
        absolute = os.path.abspath(source.path)
        try:
            rel = os.path.relpath(absolute, self.root)
        except ValueError:  # another drive (Windows)
            rel = os.pardir
        if rel.split(os.sep, 1)[0] == os.pardir:
            return {"location": {"uri": Path(absolute).as_uri()}}
        return {"location": {"uri": quote(PurePath(rel).as_posix()), "uriBaseId": SRCROOT}}


def _region(source: SourceFile, span: Span) -> dict[str, int]:
    start_line, start_col = source.line_col(span.start)
    end_line, end_col = source.line_col(span.end)
    return {"startLine": start_line, "startColumn": start_col,
            "endLine": end_line, "endColumn": end_col}


def _physical(artifacts: _Artifacts, source: SourceFile, span: Span) -> dict[str, Any]:
    return {"artifactLocation": artifacts.location(source), "region": _region(source, span)}


def _text(f: Finding) -> str:
    parts = [f.message, *f.math]
    if f.hint:
        parts.append(f"hint: {f.hint}")
    return "\n".join(parts)


def _descriptor(rule: Rule) -> dict[str, Any]:
    explanation = rule.explanation or rule.summary
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": explanation},
        "help": {"text": explanation, "markdown": explanation},
        "helpUri": rule.url,
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
    }


def _result(f: Finding, rule_index: int, artifacts: _Artifacts) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.code,
        "ruleIndex": rule_index,
        "level": LEVELS[f.severity],
        "message": {"text": _text(f)},
        "locations": [{"physicalLocation": _physical(artifacts, f.source, f.span)}],
    }
    if f.related:
        result["relatedLocations"] = [
            {"id": i, "physicalLocation": _physical(artifacts, r.source, r.span),
             "message": {"text": r.message}}
            for i, r in enumerate(f.related)
        ]
    if f.data:
        result["properties"] = {"data": f.data}
    return result


def render(findings: list[Finding], rules: Iterable[Rule], root: str | None = None) -> str:
    """The SARIF log for ``findings``; ``root`` (default: the working directory) is %SRCROOT%."""
    descriptors = [_descriptor(r) for r in rules]
    rule_index = {d["id"]: i for i, d in enumerate(descriptors)}
    for f in findings:
        if f.code not in rule_index:  # a code with no registry entry still gets a descriptor
            rule_index[f.code] = len(descriptors)
            descriptors.append({"id": f.code, "helpUri": f"{INFORMATION_URI}/rules/{f.code}"})
    artifacts = _Artifacts(root if root is not None else os.getcwd())
    results = [_result(f, rule_index[f.code], artifacts) for f in findings]
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": "mgpu-lint",
            "version": __version__,
            "semanticVersion": __version__,
            "informationUri": INFORMATION_URI,
            "rules": descriptors,
        }},
        "originalUriBaseIds": {SRCROOT: {"uri": Path(artifacts.root).as_uri().rstrip("/") + "/"}},
        "artifacts": artifacts.items,
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    log = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
