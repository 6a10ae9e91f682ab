"""Rule documentation: fixed sections, examples from the rules' own fixtures, pages up to date,
and no user-facing text that leans on a document outside the repository."""

from __future__ import annotations

import importlib.util
import json
import re
from types import ModuleType

import pytest
from mgpu_lint.cli import main
from mgpu_lint.rules import ALL
from mgpu_lint.rules.docs import HEADERS, render_text, rule_doc, split_sections

from tests.conftest import ROOT

CHECK_RULES = sorted((r for r in ALL if r.check is not None), key=lambda r: r.code)
# user text must not cite the course this project was built from: it is not shipped
OUTSIDE = re.compile(r"\blesson\b|\bExamples? \d", re.IGNORECASE)


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rule_docs", ROOT / "scripts/rule_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pages_and_examples_are_up_to_date() -> None:
    """Fails when a docstring, message or fixture changed without `python scripts/rule_docs.py`."""
    assert _script().main(["--check"]) == 0


@pytest.mark.parametrize("rule", CHECK_RULES, ids=lambda r: r.code)
def test_rule_has_the_four_sections(rule) -> None:  # type: ignore[no-untyped-def]
    doc = rule_doc(rule)
    assert set(doc.sections) == {t for _, t in HEADERS}, (
        f"{rule.code}: the docstring needs 'What it does:', 'Why is this bad?', 'Use instead:'")
    assert all(doc.sections.values()), rule.code
    assert doc.example is not None, f"{rule.code}: no fixtures/rules/{rule.code}/fires-* file"
    assert doc.example.path.startswith(f"fixtures/rules/{rule.code}/fires-")
    assert f": {rule.code} [" in doc.example.report
    assert (ROOT / doc.example.path).read_text("utf-8") == doc.example.source


def test_sections_need_all_three_headers_in_order() -> None:
    assert split_sections("What it does: a.\n\nUse instead: b.") == {}
    assert split_sections("What it does: finds x\ny.\n\nWhy is this bad? z.\n\nUse instead: w.") \
        == {"What it checks": "Finds x y.", "Why it matters": "Z.", "How to fix": "W."}


def test_rule_command_prints_the_sections(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rule", "MG203"]) == 0
    out = capsys.readouterr().out
    for title in ("What it checks:", "Why it matters:", "Example that fires "
                  "(fixtures/rules/MG203/", "How to fix:"):
        assert title in out
    assert "MG203 [info]" in out  # the example's report


def test_rule_json_has_sections_and_example(capsys: pytest.CaptureFixture[str]) -> None:
    main(["rule", "MG505", "--output-format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["sections"]["How to fix"].startswith("`-ts`")
    assert doc["example"]["path"].startswith("fixtures/rules/MG505/fires-")


def _user_texts() -> list[tuple[str, str]]:
    """Every text a user can see: rule texts, rule pages, and every pinned report."""
    out = []
    for rule in ALL:
        out.append((f"{rule.code} summary", rule.summary))
        out.append((f"{rule.code} explanation", rule.explanation))
        out.append((f"mgpu-lint rule {rule.code}", render_text(rule_doc(rule))))
    for page in sorted((ROOT / "docs").rglob("*.md")):
        out.append((str(page.relative_to(ROOT)), page.read_text("utf-8")))
    out.append(("rules/examples.json", (ROOT / "rules/examples.json").read_text("utf-8")))
    for snap in sorted(ROOT.glob("tests/**/__snapshots__/*.ambr")):
        body = "\n".join(line for line in snap.read_text("utf-8").splitlines()
                         if not line.startswith("# name:"))  # test names are not output
        out.append((str(snap.relative_to(ROOT)), body))
    return out


def test_no_user_text_cites_the_lesson(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["plan", "--help"], ["layers", "--help"], ["rules"], ["--help"]):
        main(args)
    texts = [*_user_texts(), ("command help", capsys.readouterr().out)]
    hits = [f"{where}: {m.group(0)!r} in …{text[max(0, m.start() - 60):m.end() + 20]}…"
            for where, text in texts for m in OUTSIDE.finditer(text)]
    assert not hits, "\n".join(hits[:20])
