"""SARIF 2.1.0 report (GitHub code scanning), valid against the OASIS schema.

Regions are exact: 1-based lines and columns in Unicode code points (the run says so with
``columnKind``), end column exclusive.  A path under the root becomes a URI relative to
``%SRCROOT%``, any other path an absolute ``file:`` URI; the root is the repository's top level
(the nearest directory above the working directory holding ``.git``) or ``--project-root``, so
GitHub code scanning maps results to files whatever folder the linter ran in.  Text that is not a
file (``<command>``, ``<stdin>``) is an artifact with its contents and no URI.

What GitHub code scanning uses (docs.github.com, "SARIF support for code scanning"):
``partialFingerprints`` (here ``mgpuLint/v2``: rule, artifact, the logical location -- the
Kubernetes object and container, compose service, shell function, Markdown heading and block, see
``logical.py`` -- and the finding's normalised text and line, plus an occurrence count among
equal keys, so an edit elsewhere keeps every alert's identity; the logical location is also the
result's ``logicalLocations``); rule ``properties.security-severity`` (a number 0.0-10.0 as a string) and the
``security`` tag on the exposure rules (MG6xx); ``help.text`` and ``help.markdown`` (the rule's
page, as ``docs/rules/CODE.md`` has it, shown with the alert); ``helpUri`` only when the
configuration names ``docs-url`` (``rule_pages.py``: nothing publishes the pages, and a path on
the machine that ran the linter opens nowhere).  ``fixes`` carry the same edits as ``--fix``.

The log is written without indentation (json's C encoder), one result per line, each result
encoded as it is made (``| jq`` shows it indented).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from .. import __version__
from ..findings import Finding, Severity
from ..policy import FINGERPRINT_LINE_CHARS
from ..source import SourceFile, Span
# json's C encoder, compact: the pure-Python one that an indent selects took half of a
# 16,000-finding report's time
from .json_report import compact_json
from .logical import Locator
from .rule_pages import help_uri

if TYPE_CHECKING:
    from ..rules.registry import Rule

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
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


FINGERPRINT = "mgpuLint/v2"
# GitHub's scale: over 9.0 critical, 7.0-8.9 high, 4.0-6.9 medium, 0.1-3.9 low
SECURITY_SEVERITY = {Severity.ERROR: "8.1", Severity.WARNING: "5.3", Severity.INFO: "3.1"}


def project_root(start: str | None = None) -> str:
    """The git top level above ``start`` (a directory holding ``.git``, a directory or the
    file a worktree has), else ``start`` itself."""
    here = os.path.abspath(start or os.getcwd())
    d = here
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return here
        d = parent


def is_security_rule(code: str) -> bool:
    return code.startswith("MG6")


def _descriptor(rule: Rule, docs_url: str | None = None) -> dict[str, Any]:
    from ..rules.docs import render_markdown, render_text, rule_doc

    explanation = rule.explanation or rule.summary
    doc = rule_doc(rule)
    page = render_markdown(doc)
    if page.startswith("<!--"):  # the "generated, do not edit" note of the file
        page = page.split("\n", 1)[1].lstrip("\n")
    d: dict[str, Any] = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": explanation},
        "help": {"text": render_text(doc), "markdown": page},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
    }
    uri = help_uri(rule.code, docs_url)
    if uri is not None:
        d["helpUri"] = uri
    if is_security_rule(rule.code):
        d["properties"] = {"tags": ["security", "exposure"],
                           "security-severity": SECURITY_SEVERITY[rule.severity]}
    return d


def _normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def fingerprint(f: Finding, where: str, occurrence: int,
                lines: dict[tuple[int, int], str] | None = None) -> str:
    """Rule + ``where`` (the artifact and the logical location in it) + the finding's
    normalised text and line; the n-th such finding there gets ``occurrence`` n.  Line numbers
    and the order of objects in the file are not part of it.  ``lines`` keeps each normalised
    line of a report once (16,000 findings on one 200 KB line normalised it for each); a line
    longer than ``FINGERPRINT_LINE_CHARS`` stands in the key as its own SHA-256, so each finding
    hashes a bounded key (hashing that line into every key was quadratic: 3 GB for 16,000)."""
    src = f.source
    line_no = src.line_col(f.span.start)[0]
    snippet = _normalised(src.text[f.span.start:f.span.end])
    key_line = (id(src), line_no)
    line = lines.get(key_line) if lines is not None else None
    if line is None:
        line = _normalised(src.line_text(line_no)) if src.text else ""
        if len(line) > FINGERPRINT_LINE_CHARS:  # hashed once here, not once per finding
            line = hashlib.sha256(line.encode("utf-8", "surrogatepass")).hexdigest()
        if lines is not None:
            lines[key_line] = line
    key = "\0".join((f.code, where, snippet, line, str(occurrence)))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _fixes(f: Finding, artifacts: _Artifacts) -> list[dict[str, Any]]:
    if f.fix is None:
        return []
    return [{
        "description": {"text": f.fix.title + ("" if f.fix.safe else
                                               " (unsafe: changes what runs)")},
        "artifactChanges": [{
            "artifactLocation": artifacts.location(f.source),
            "replacements": [{"deletedRegion": _region(f.source, e.span),
                              "insertedContent": {"text": e.text}} for e in f.fix.edits],
        }],
    }]


def _result(f: Finding, rule_index: int, artifacts: _Artifacts, locator: Locator,
            seen: dict[tuple[str, str, str], int],
            lines: dict[tuple[int, int], str]) -> dict[str, Any]:
    physical = _physical(artifacts, f.source, f.span)
    where = physical["artifactLocation"].get("uri") or f.source.path
    logical = locator.at(f.source, f.span.start)
    if logical is not None:
        where = f"{where}\0{logical.name}"
    base = fingerprint(f, where, 0, lines)
    n = seen.get((f.code, where, base), 0)
    seen[(f.code, where, base)] = n + 1
    result: dict[str, Any] = {
        "ruleId": f.code,
        "ruleIndex": rule_index,
        "level": LEVELS[f.severity],
        "message": {"text": _text(f)},
        "locations": [{"physicalLocation": physical} if logical is None else {
            "physicalLocation": physical,
            "logicalLocations": [{"fullyQualifiedName": logical.name, "kind": logical.kind}]}],
        "partialFingerprints": {FINGERPRINT: fingerprint(f, where, n, lines)},
    }
    fixes = _fixes(f, artifacts)
    if fixes:
        result["fixes"] = fixes
    if f.related:
        result["relatedLocations"] = [
            {"id": i, "physicalLocation": _physical(artifacts, r.source, r.span),
             "message": {"text": r.message}}
            for i, r in enumerate(f.related)
        ]
    if f.data:
        result["properties"] = {"data": f.data}
    return result


def render(findings: list[Finding], rules: Iterable[Rule], root: str | None = None,
           docs_url: str | None = None) -> str:
    """The SARIF log for ``findings``; ``root`` (default: the git top level above the working
    directory, else the working directory) is %SRCROOT%."""
    return "".join(chunks(findings, rules, root, docs_url))


_RESULTS = "\0results\0"  # stands for the results in the encoded frame


def chunks(findings: list[Finding], rules: Iterable[Rule], root: str | None = None,
           docs_url: str | None = None, size: int = 1 << 16) -> Iterator[str]:
    """`render`'s text in pieces of about ``size`` characters, for writing as it is made: the
    log without indentation, each result on a line of its own, encoded as it is made (the run
    lists its ``results`` before its ``artifacts``, which the results add to), so no tree of
    every result is held."""
    descriptors = [_descriptor(r, docs_url) for r in rules]
    rule_index = {d["id"]: i for i, d in enumerate(descriptors)}
    for f in findings:
        if f.code not in rule_index:  # a code with no registry entry still gets a descriptor
            rule_index[f.code] = len(descriptors)
            descriptors.append({"id": f.code})
    artifacts = _Artifacts(root if root is not None else project_root())
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": "mgpu-lint",
            "version": __version__,
            "semanticVersion": __version__,
            "rules": descriptors,
        }},
        "originalUriBaseIds": {SRCROOT: {"uri": Path(artifacts.root).as_uri().rstrip("/") + "/"}},
        "results": _RESULTS,  # then the artifacts, which the results add to
    }
    log = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    head, _, tail = compact_json(log).partition(compact_json(_RESULTS))
    seen: dict[tuple[str, str, str], int] = {}
    locator = Locator()
    lines: dict[tuple[int, int], str] = {}  # (source id, line) -> normalised line text
    pending = [head, "["]
    held = 0
    for i, f in enumerate(findings):
        piece = compact_json(_result(f, rule_index[f.code], artifacts, locator, seen, lines))
        pending.append(("\n" if i == 0 else ",\n") + piece)
        held += len(piece)
        if held >= size:
            yield "".join(pending)
            pending.clear()
            held = 0
    pending.append("\n]" if findings else "]")
    pending.append(',"artifacts":' + compact_json(artifacts.items)
                   + ',"columnKind":"unicodeCodePoints"' + tail + "\n")
    yield "".join(pending)
