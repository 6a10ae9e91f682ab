"""No string in the package cites the lesson the sizing started from: user-facing text (and the
docstrings `--help` and `rule` may show) cites the formula or the engine source instead."""

from __future__ import annotations

import ast
import re

from tests.conftest import ROOT

CITATION = re.compile(r"\blesson|\bExample \d|\bEx\. ?\d", re.IGNORECASE)


def test_no_string_literal_cites_the_lesson() -> None:
    found = []
    for package in ("linter", "rules"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                        and CITATION.search(node.value):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def _strings(value: object):  # type: ignore[no-untyped-def]
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_no_catalog_string_cites_the_lesson() -> None:
    """The data files shipped in the package (catalog notes and sources, rule examples) cite
    the model card, the spec or the arithmetic, not the lesson."""
    import json

    found = []
    for package in ("linter", "rules"):
        for path in sorted((ROOT / package).rglob("*.json")):
            for text in _strings(json.loads(path.read_text(encoding="utf-8"))):
                if CITATION.search(text):
                    found.append(f"{path.relative_to(ROOT)}: {text[:60]}")
    assert found == []
