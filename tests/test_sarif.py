"""SARIF output: valid against the official 2.1.0 schema, exact regions, rules and artifacts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mgpu_lint import __version__
from mgpu_lint.cli import main
from mgpu_lint.findings import Finding, Related, Severity
from mgpu_lint.report.sarif import render
from mgpu_lint.rules import ALL
from mgpu_lint.source import SourceFile, Span

from tests.conftest import DATA, FIXTURES, ROOT

SCHEMA = DATA / "sarif-schema-2.1.0.json"
BAD = sorted(str(p.relative_to(ROOT)) for p in (FIXTURES / "bad").iterdir())
BROKEN_COMMAND = "vllm serve 'Qwen/Qwen3-8B --port 8000"


def sarif(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    main(["--format", "sarif", *args])
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def log(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    return sarif(capsys, *BAD, "fixtures/compose/llama-rpc.yaml", "--command", BROKEN_COMMAND)


def results_by_uri(run: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in run["results"]:
        loc = r["locations"][0]["physicalLocation"]["artifactLocation"]
        artifact = run["artifacts"][loc["index"]]
        key = artifact.get("location", {}).get("uri") or artifact["description"]["text"]
        out.setdefault(key, []).append(r)
    return out


def test_valid_against_official_schema(log: dict[str, Any]) -> None:
    import jsonschema

    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(
        schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
    assert log["version"] == "2.1.0"


def test_driver_and_rules(log: dict[str, Any]) -> None:
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "mgpu-lint" and driver["version"] == __version__
    assert driver["informationUri"].startswith("https://")
    assert run["columnKind"] == "unicodeCodePoints"
    by_id = {d["id"]: d for d in driver["rules"]}
    for rule in ALL:
        d = by_id[rule.code]
        assert d["name"] == rule.name
        assert d["shortDescription"]["text"] == rule.summary
        assert d["fullDescription"]["text"] == (rule.explanation or rule.summary)
        assert d["helpUri"] == rule.url
        level = {"error": "error", "warning": "warning", "info": "note"}[rule.severity.value]
        assert d["defaultConfiguration"]["level"] == level
    assert run["results"]
    for r in run["results"]:
        assert driver["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["level"] in ("error", "warning", "note")


def test_regions_are_exact_and_end_exclusive(log: dict[str, Any]) -> None:
    run = log["runs"][0]
    found = results_by_uri(run)
    (quote,) = found["fixtures/bad/unbalanced-quote.sh"]
    assert quote["ruleId"] == "MG003" and quote["level"] == "error"
    assert quote["message"]["text"].startswith("unbalanced double quote")
    assert "hint: close the quote" in quote["message"]["text"]
    assert quote["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2, "startColumn": 12, "endLine": 2, "endColumn": 13}
    (backslash,) = found["fixtures/bad/space-after-backslash.sh"]
    assert backslash["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2, "startColumn": 45, "endLine": 2, "endColumn": 47}
    (helm,) = found["fixtures/bad/helm-template.yaml"]
    assert helm["ruleId"] == "MG011" and helm["level"] == "note"


def test_command_is_an_artifact_with_contents(log: dict[str, Any]) -> None:
    run = log["runs"][0]
    (command,) = results_by_uri(run)["<command>"]
    loc = command["locations"][0]["physicalLocation"]
    assert "uri" not in loc["artifactLocation"]
    assert run["artifacts"][loc["artifactLocation"]["index"]]["contents"]["text"] == BROKEN_COMMAND
    assert loc["region"] == {"startLine": 1, "startColumn": 12, "endLine": 1, "endColumn": 13}


def test_relative_uris_and_base(log: dict[str, Any]) -> None:
    run = log["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == ROOT.as_uri() + "/"
    files = [a["location"] for a in run["artifacts"] if "location" in a]
    assert {f["uri"] for f in files} >= {"fixtures/bad/blob.yaml", "fixtures/compose/llama-rpc.yaml"}
    assert all(f["uriBaseId"] == "%SRCROOT%" for f in files)


def test_related_locations(log: dict[str, Any]) -> None:
    run = log["runs"][0]
    (rpc,) = [r for r in results_by_uri(run)["fixtures/compose/llama-rpc.yaml"]
              if r["ruleId"] == "MG602"]
    (related,) = rpc["relatedLocations"]
    assert related["id"] == 0 and related["message"]["text"] == "the RPC server starts here"
    region = related["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (5, 16)
    index = related["physicalLocation"]["artifactLocation"]["index"]
    assert run["artifacts"][index]["location"]["uri"] == "fixtures/compose/llama-rpc.yaml"


def test_no_findings_is_a_valid_empty_run(capsys: pytest.CaptureFixture[str]) -> None:
    log = sarif(capsys, "--command", "vllm serve Qwen/Qwen3-8B --port 8000")
    assert log["runs"][0]["results"] == [] and log["runs"][0]["artifacts"] == []


def test_code_points_paths_and_unregistered_codes(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    text = "# é🙂\nvllm serve x --bad\n"
    inside = SourceFile(str(root / "deploy dir" / "serve.sh"), text, "shell")
    same = SourceFile(str(root / "deploy dir" / "." / "serve.sh"), text, "shell")
    outside = SourceFile(str(tmp_path / "elsewhere.sh"), text, "shell")
    start = text.index("--bad")
    emoji = Span(text.index("🙂"), text.index("🙂") + 1)
    findings = [
        Finding("MG004", Severity.ERROR, "unknown flag", inside, Span(start, start + 5),
                related=(Related(outside, emoji, "an emoji"),)),
        Finding("MG999", Severity.WARNING, "not in the registry", outside, Span(0, 1)),
        Finding("MG007", Severity.INFO, "same file, other spelling", same, Span(0, 1)),
    ]
    run = json.loads(render(findings, ALL, root=str(root)))["runs"][0]
    first, second, third = run["results"]
    assert first["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2, "startColumn": 14, "endLine": 2, "endColumn": 19}
    assert first["relatedLocations"][0]["physicalLocation"]["region"] == {
        "startLine": 1, "startColumn": 4, "endLine": 1, "endColumn": 5}
    uris = [a["location"] for a in run["artifacts"]]
    assert uris == [{"uri": "deploy%20dir/serve.sh", "uriBaseId": "%SRCROOT%"},
                    {"uri": (tmp_path / "elsewhere.sh").as_uri()}]
    assert third["locations"][0]["physicalLocation"]["artifactLocation"]["index"] == 0
    descriptor = run["tool"]["driver"]["rules"][second["ruleIndex"]]
    assert descriptor["id"] == "MG999" and second["level"] == "warning"
