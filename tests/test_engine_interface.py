"""The engine interface and the rule declarations (issue 13): rules ask capabilities, never
engine names; the settings a parser keeps come from what rules declare; each rule reports only
its own code."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mgpu_lint.analyze import FileSet, deployment
from mgpu_lint.config import config_for
from mgpu_lint.engines import ENGINES
from mgpu_lint.engines.adapter import CAPABILITIES
from mgpu_lint.options import Options
from mgpu_lint.rules import ALL, CHECKS, checks_for, settings_read
from mgpu_lint.runner import read_files

ROOT = Path(__file__).resolve().parent.parent
RULE_MODULES = sorted((ROOT / "rules").glob("*.py"))
ENGINE_CONSTANTS = {"VLLM", "LLAMA_SERVER", "RPC_SERVER", "SGLANG", "ENGINE_NAMES"}


@pytest.mark.parametrize("path", RULE_MODULES, ids=lambda p: p.name)
def test_no_rule_tests_an_engine_or_an_input_kind_by_name(path: Path) -> None:
    tree = ast.parse(path.read_text("utf-8"))
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in ENGINE_CONSTANTS:
            bad.append(f"{node.lineno}: {node.id}")
        if isinstance(node, ast.Attribute) and node.attr == "engine":
            bad.append(f"{node.lineno}: .engine (ask d.adapter or a capability)")
        if isinstance(node, ast.Attribute) and node.attr == "kind" and \
                isinstance(node.value, (ast.Name, ast.Attribute)) and \
                getattr(node.value, "id", getattr(node.value, "attr", "")) in ("ctx", "context"):
            bad.append(f"{node.lineno}: context.kind (ask ctx.pod / in_container / …)")
    assert not bad, bad


@pytest.mark.parametrize("path", RULE_MODULES, ids=lambda p: p.name)
def test_rules_import_no_reader_or_parser_internals(path: Path) -> None:
    allowed = {"mgpu_lint.engines", "mgpu_lint.engines.adapter"}
    tree = ast.parse(path.read_text("utf-8"))
    bad = [f"{n.lineno}: {n.module}" for n in ast.walk(tree)
           if isinstance(n, ast.ImportFrom) and n.module and (
               n.module.startswith("mgpu_lint.sources") or
               (n.module.startswith("mgpu_lint.engines") and n.module not in allowed))]
    assert not bad, bad


def test_capabilities_are_known() -> None:
    for engine in ENGINES.values():
        assert engine.capabilities <= CAPABILITIES, engine.name
    for r in CHECKS:
        assert r.needs <= CAPABILITIES, r.code
        assert any(r.applies_to(e) for e in ENGINES.values()), f"{r.code} runs on no engine"


def test_rules_run_on_the_engines_with_their_capabilities() -> None:
    vllm, llama, rpc = ENGINES["vllm"], ENGINES["llama-server"], ENGINES["rpc-server"]
    codes = {e.name: {r.code for r in checks_for(e)} for e in (vllm, llama, rpc)}
    assert {"MG101", "MG301", "MG305", "MG801", "MG605"} <= codes["vllm"]
    assert not {"MG309", "MG501", "MG601"} & codes["vllm"]
    assert {"MG309", "MG501", "MG605", "MG705"} <= codes["llama-server"]
    assert not {"MG101", "MG301", "MG601"} & codes["llama-server"]
    assert {"MG601", "MG602", "MG606", "MG110"} <= codes["rpc-server"]
    assert not {"MG605", "MG702", "MG301", "MG309"} & codes["rpc-server"]


def test_settings_a_parser_keeps_come_from_the_rules(snapshot) -> None:  # type: ignore[no-untyped-def]
    """The table MG009 reads (which rules an unresolved value silences), derived from the rules'
    ``reads``: a rule that starts reading a setting shows up here for review."""
    tables = {name: settings_read(e) for name, e in sorted(ENGINES.items())}
    assert tables["vllm"]["tensor_parallel_size"][:3] == ("MG101", "MG102", "MG103")
    assert tables["rpc-server"]["host"] == ("MG601",)
    assert tables == snapshot


def _fixture_paths() -> list[str]:
    return sorted(str(p) for p in (ROOT / "fixtures").rglob("*") if p.is_file())


def test_each_rule_reports_only_its_own_code() -> None:
    """Every rule over every fixture: a finding's code is the rule's own (the code and severity
    of a finding come from the rule that emits it)."""
    run = read_files(_fixture_paths())
    fileset = FileSet(run.services, run.hpas, run.launches)
    options = Options()
    seen: set[str] = set()
    for launch in run.launches:
        d, _ = deployment(launch, config_for(launch.source.path, None).settings, options,
                          fileset)
        for r in checks_for(d.adapter):
            for f in r.check(d):  # type: ignore[misc]
                assert f.code == r.code, (launch.source.path, r.code, f.code)
                seen.add(r.code)
    fires = {p.parent.name for p in (ROOT / "fixtures/rules").glob("*/fires-*")}
    missing = {r.code for r in CHECKS if r.code in fires} - seen
    assert not missing, f"rules whose fires- fixtures did not run through this test: {missing}"


def test_every_rule_code_is_registered_once() -> None:
    codes = [r.code for r in ALL]
    assert len(codes) == len(set(codes))


@pytest.mark.parametrize("path", [p for p in RULE_MODULES if p.name != "registry.py"],
                         ids=lambda p: p.name)
def test_rules_report_through_their_own_metadata(path: Path) -> None:
    """A rule builds its findings with ``<rule>.finding(...)``: the code and the default
    severity come from its ``@rule`` entry, never from a literal in the body."""
    tree = ast.parse(path.read_text("utf-8"))
    direct = [n.lineno for n in ast.walk(tree)
              if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "Finding"]
    assert not direct, f"Finding(...) built directly at lines {direct}"
