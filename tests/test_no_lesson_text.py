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
