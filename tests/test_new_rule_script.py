"""scripts/new_rule.py: the scaffold a new rule starts from (run on a copy of rules/)."""

from __future__ import annotations

import ast
import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import pytest
from mgpu_lint.rules.docs import split_sections

from tests.conftest import ROOT


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("new_rule", ROOT / "scripts/new_rule.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_scaffold_writes_a_registered_rule_fixtures_and_test(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    (tmp_path / "tests" / "rules").mkdir(parents=True)
    written = _script().scaffold(tmp_path, "MG299", "pp-over-pcie-few-layers", "interconnect",
                                 "pipeline parallelism over PCIe with few layers per stage")
    assert [str(p.relative_to(tmp_path)) for p in written] == [
        "rules/interconnect.py", "fixtures/rules/MG299/fires-example.sh",
        "fixtures/rules/MG299/silent-example.sh", "tests/rules/test_mg299.py"]
    tree = ast.parse((tmp_path / "rules/interconnect.py").read_text("utf-8"))
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef)
              and n.name == "pp_over_pcie_few_layers")
    assert set(split_sections(ast.get_docstring(fn) or "")) == {
        "What it checks", "Why it matters", "How to fix"}
    rules = next(n for n in tree.body if isinstance(n, ast.AnnAssign)
                 and getattr(n.target, "id", "") == "RULES")
    assert "pp_over_pcie_few_layers" in {e.id for e in rules.value.elts}  # type: ignore[attr-defined]
    assert max(len(line) for line in (tmp_path / "rules/interconnect.py").read_text().split("\n")) \
        <= 100
    ast.parse((tmp_path / "tests/rules/test_mg299.py").read_text("utf-8"))


@pytest.mark.parametrize("args, error", [
    (("MG29", "x", "interconnect", "s"), "not a rule code"),
    (("MG399", "x", "interconnect", "s"), "interconnect rules are MG2xx"),
    (("MG299", "Not_Kebab", "interconnect", "s"), "kebab-case"),
    (("MG201", "x", "interconnect", "s"), "exists already"),
])
def test_scaffold_refuses_bad_input(tmp_path: Path, args: tuple[str, ...], error: str) -> None:
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    with pytest.raises(SystemExit, match=error):
        _script().scaffold(tmp_path, *args)
