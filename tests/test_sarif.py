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
    # nothing publishes a site for mgpu-lint: no link names one
    assert "informationUri" not in driver
    assert run["columnKind"] == "unicodeCodePoints"
    by_id = {d["id"]: d for d in driver["rules"]}
    for rule in ALL:
        d = by_id[rule.code]
        assert d["name"] == rule.name
        assert d["shortDescription"]["text"] == rule.summary
        assert d["fullDescription"]["text"] == (rule.explanation or rule.summary)
        # no docs-url configured: no helpUri (a path on this machine opens nowhere on GitHub);
        # the help is the rule's page itself, as docs/rules/CODE.md has it
        assert "helpUri" not in d
        page = (ROOT / "docs" / "rules" / f"{rule.code}.md").read_text("utf-8")
        assert d["help"]["markdown"] == page.split("\n", 2)[2]
        assert d["help"]["text"].startswith(f"{rule.code} {rule.name} (")
        assert rule.summary in d["help"]["text"]
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


# --------------------------------------------------------------------------- code scanning

SERVE = ("#!/bin/sh\n# serve\nexport X=1\n"
         "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-le 8192 --tensor-paralel-size 2\n"
         "llama-server -m /m.gguf --host 0.0.0.0 --port 8080\n")


def _results(tmp_path: Path, name: str, text: str, capsys: pytest.CaptureFixture[str],
             *args: str) -> dict[str, Any]:
    path = tmp_path / name
    path.write_text(text)
    return sarif(capsys, "--project-root", str(tmp_path), *args, str(path))["runs"][0]


def test_fingerprints_stable_under_an_unrelated_edit(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    before = _results(tmp_path, "serve.sh", SERVE, capsys)
    # lines added above, a comment changed: every finding moves down, none changes
    edited = SERVE.replace("# serve\n", "# serve the model\n# on two GPUs\n\n")
    after = _results(tmp_path, "serve.sh", edited, capsys)

    def prints(run: dict[str, Any]) -> dict[str, tuple[str, int]]:
        return {r["partialFingerprints"]["mgpuLint/v2"]:
                (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
                for r in run["results"]}

    a, b = prints(before), prints(after)
    assert len(a) == len(before["results"]) >= 3  # distinct per result
    assert set(a) == set(b)
    assert all(b[k][1] == a[k][1] + 2 for k in a)
    # a change to the finding itself gives a new fingerprint
    changed = _results(tmp_path, "serve.sh", SERVE.replace("--max-model-le ", "--max-mod "),
                       capsys)
    assert set(prints(changed)) != set(a)


def test_identical_findings_get_distinct_fingerprints(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    line = "llama-server -m /m.gguf --host 0.0.0.0 --port 8080\n"
    run = _results(tmp_path, "twice.sh", "#!/bin/sh\n" + line + line, capsys)
    same = [r["partialFingerprints"]["mgpuLint/v2"] for r in run["results"]
            if r["ruleId"] == "MG605"]
    assert len(same) == 2 and len(set(same)) == 2


def test_a_long_line_is_part_of_the_fingerprint_as_its_digest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A line longer than FINGERPRINT_LINE_CHARS stands in the key as its SHA-256: the findings
    on it keep distinct fingerprints, an edit elsewhere keeps them, and a change of that line
    elsewhere changes them, as for a short line."""
    from mgpu_lint.policy import FINGERPRINT_LINE_CHARS

    ports = " ".join(f"--port {8000 + i}" for i in range(FINGERPRINT_LINE_CHARS // 10))
    line = f"vllm serve Qwen/Qwen3-8B {ports}"
    assert len(line) > FINGERPRINT_LINE_CHARS

    def prints(text: str) -> list[str]:
        run = _results(tmp_path, "long.sh", text, capsys)
        return [r["partialFingerprints"]["mgpuLint/v2"] for r in run["results"]
                if r["ruleId"] == "MG007"]

    base = prints(f"#!/bin/sh\n{line}\n")
    assert len(base) == len(set(base)) >= 100
    assert prints(f"#!/bin/sh\n# started by hand\n\n{line}\n") == base
    assert not set(prints(f"#!/bin/sh\n{line} -tp 1\n")) & set(base)


def test_security_rules_are_tagged(log: dict[str, Any]) -> None:
    for d in log["runs"][0]["tool"]["driver"]["rules"]:
        props = d.get("properties", {})
        if d["id"].startswith("MG6"):
            assert "security" in props["tags"]
            assert 0.0 < float(props["security-severity"]) <= 10.0
        else:
            assert "security-severity" not in props


def test_fixes_carry_the_same_edits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _results(tmp_path, "serve.sh", SERVE, capsys)
    by_rule = {r["ruleId"]: r for r in run["results"]}
    (fix,) = by_rule["MG013"]["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "serve.sh"
    (rep,) = change["replacements"]
    assert rep["insertedContent"]["text"] == "--max-model-len"
    assert rep["deletedRegion"] == {"startLine": 4, "startColumn": 37, "endLine": 4,
                                    "endColumn": 51}
    assert "unsafe" in by_rule["MG004"]["fixes"][0]["description"]["text"]


def test_srcroot_is_the_repository_top_level(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "deploy" / "k8s").mkdir(parents=True)
    (repo / "deploy" / "k8s" / "serve.sh").write_text(SERVE)
    monkeypatch.chdir(repo / "deploy")
    run = sarif(capsys, "k8s/serve.sh")["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.as_uri() + "/"
    assert run["artifacts"][0]["location"] == {"uri": "deploy/k8s/serve.sh",
                                               "uriBaseId": "%SRCROOT%"}


def test_help_uri_from_the_configured_docs_url(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".mgpu-lint.toml").write_text(
        'docs-url = "https://docs.example.org/mgpu-lint/{code}.html"\n')
    (tmp_path / "serve.sh").write_text(SERVE)
    monkeypatch.chdir(tmp_path)
    run = sarif(capsys, "serve.sh")["runs"][0]
    uris = {d["id"]: d["helpUri"] for d in run["tool"]["driver"]["rules"]}
    assert uris["MG101"] == "https://docs.example.org/mgpu-lint/MG101.html"
    # JSON's url is the same link
    main(["--format", "json", "serve.sh"])
    found = json.loads(capsys.readouterr().out)["findings"]
    assert found and all(f["url"] == f"https://docs.example.org/mgpu-lint/{f['code']}.html"
                         for f in found)


def test_github_upload_requirements(log: dict[str, Any]) -> None:
    """docs.github.com "SARIF support for code scanning": one run per tool, rule ids resolvable,
    a message text, a fingerprint, at most 10 locations and 1000 related locations per result,
    at most 20 tags per rule, security-severity a number from 0.0 to 10.0 as a string."""
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    ids = [d["id"] for d in rules]
    assert len(ids) == len(set(ids))
    for d in rules:
        assert len(d.get("properties", {}).get("tags", [])) <= 20
        sev = d.get("properties", {}).get("security-severity")
        assert sev is None or (isinstance(sev, str) and 0.0 <= float(sev) <= 10.0)
    for r in run["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["message"]["text"]
        assert r["partialFingerprints"]["mgpuLint/v2"]
        assert 1 <= len(r["locations"]) <= 10 and len(r.get("relatedLocations", [])) <= 1000


# --------------------------------------------------------------------------- logical locations

def _deployment(name: str, container: str = "vllm") -> str:
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n"
            f"  namespace: serving\nspec:\n  template:\n    spec:\n      containers:\n"
            f"        - name: {container}\n          image: vllm/vllm-openai:v0.8.5\n"
            f"          args: [\"--model\", \"Qwen/Qwen2.5-7B-Instruct\", "
            f"\"--tensor-paralel-size\", \"2\"]\n")


CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: unrelated\ndata:\n  a: b\n"

COMPOSE_SERVICE = ("  {name}:\n    image: vllm/vllm-openai:v0.8.5\n"
                   "    command: [\"--model\", \"Qwen/Qwen2.5-7B-Instruct\", "
                   "\"--tensor-paralel-size\", \"2\"]\n")

SHELL_FUNCTION = ("{name}() {{\n  vllm serve Qwen/Qwen2.5-7B-Instruct \\\n"
                  "    --tensor-paralel-size 2\n}}\n")

MARKDOWN_SECTION = ("## {name}\n\n```sh\nvllm serve Qwen/Qwen2.5-7B-Instruct "
                    "--tensor-paralel-size 2\n```\n\n")


def _prints(run: dict[str, Any], code: str = "MG004") -> dict[str, str]:
    """Fingerprint -> logical location, for the results of ``code``."""
    out = {}
    for r in run["results"]:
        if r["ruleId"] == code:
            (logical,) = r["locations"][0]["logicalLocations"]
            out[r["partialFingerprints"]["mgpuLint/v2"]] = logical["fullyQualifiedName"]
    return out


@pytest.mark.parametrize(("name", "before", "after", "logical"), [
    ("deploy.yaml",
     _deployment("a") + "---\n" + _deployment("b"),
     # objects inserted above (one with the same finding), an unrelated line reformatted, a
     # comment added
     _deployment("new") + "---\n" + CONFIGMAP + "---\n" + _deployment("a").replace("  namespace: serving\n",
                                                    "  namespace:   serving   # ours\n")
     + "---\n# the second one\n" + _deployment("b"),
     {"Deployment/serving/a/spec.template.spec.containers[vllm]",
      "Deployment/serving/b/spec.template.spec.containers[vllm]"}),
    ("compose.yaml",
     "services:\n" + COMPOSE_SERVICE.format(name="one") + COMPOSE_SERVICE.format(name="two"),
     "services:\n  other:\n    image: busybox\n" + COMPOSE_SERVICE.format(name="new")
     + COMPOSE_SERVICE.format(name="one")
     + "\n\n" + COMPOSE_SERVICE.format(name="two"),
     {"services.one", "services.two"}),
    ("serve.sh",
     "#!/bin/sh\n" + SHELL_FUNCTION.format(name="first") + SHELL_FUNCTION.format(name="second"),
     "#!/bin/sh\nset -eu\nhelper() {\n  echo hi\n}\n" + SHELL_FUNCTION.format(name="new")
     + SHELL_FUNCTION.format(name="first")
     + "\n" + SHELL_FUNCTION.format(name="second"),
     {"first()/vllm", "second()/vllm"}),
    ("README.md",
     "# Serving\n\n" + MARKDOWN_SECTION.format(name="One node")
     + MARKDOWN_SECTION.format(name="Two nodes"),
     "# Serving\n\nSome words.\n\n## Before\n\n```sh\necho hi\n```\n\n"
     + MARKDOWN_SECTION.format(name="One node") + MARKDOWN_SECTION.format(name="Two nodes"),
     {"One node/block 1", "Two nodes/block 1"}),
])
def test_fingerprints_follow_the_logical_object(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str], name: str,
                                                before: str, after: str,
                                                logical: set[str]) -> None:
    """The same finding in two objects has two fingerprints; inserting an object above and
    reformatting lines that are not the finding's keeps both."""
    first = _prints(_results(tmp_path, name, before, capsys))
    assert set(first.values()) == logical and len(first) == 2
    second = _prints(_results(tmp_path, name, after, capsys))
    assert {k: second.get(k) for k in first} == first


def test_renaming_the_object_changes_the_fingerprint(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    one = _prints(_results(tmp_path, "d.yaml", _deployment("a"), capsys))
    renamed = _prints(_results(tmp_path, "d.yaml", _deployment("z"), capsys))
    other_container = _prints(_results(tmp_path, "d.yaml", _deployment("a", "engine"), capsys))
    assert len({*one, *renamed, *other_container}) == 3


def test_logical_locations_of_a_dockerfile_and_of_text_with_none() -> None:
    from mgpu_lint.report.logical import Locator

    text = ("FROM python:3.12 AS build\nRUN pip install x\n"
            "FROM vllm/vllm-openai:v0.8.5\nENTRYPOINT [\"vllm\", \"serve\", \\\n  \"m\"]\n")
    docker = SourceFile("Dockerfile", text, "dockerfile")
    at = Locator().at
    assert at(docker, text.index("pip")).name == "build/RUN"  # type: ignore[union-attr]
    assert at(docker, text.index('"m"')).name == \
        "vllm/vllm-openai:v0.8.5/ENTRYPOINT"  # type: ignore[union-attr]
    assert at(SourceFile("<command>", "vllm serve m", "command"), 3) is None
    broken = SourceFile("x.yaml", "a: [\n", "yaml")
    assert at(broken, 1) is None


def test_bisected_yaml_names_are_the_linear_search_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """Long mappings, sequences and document lists are searched by bisection when their
    entries lie in order (logical._disjoint); every offset of 30 seeded random multi-document
    files (compose services, named containers, aliases and merge keys whose nodes lie
    elsewhere, flow collections, empty values) gets the name the entry-by-entry search gave."""
    import random

    from mgpu_lint.report import logical

    def names(text: str, indexed: int) -> list[Any]:
        monkeypatch.setattr(logical, "_INDEXED", indexed)
        at = logical._yaml_index(text)
        return [at(i) for i in range(len(text) + 1)]

    rng = random.Random(20)
    for _ in range(30):
        docs = []
        for d in range(rng.randrange(1, 20)):
            if rng.random() < 0.3:
                body = "".join(f"  s{i}:\n    <<: *a\n    image: x{i}\n" if rng.random() < 0.3
                               else f"  s{i}: {{image: y}}\n" if rng.random() < 0.3
                               else f"  s{i}:\n" for i in range(rng.randrange(24)))
                docs.append("x-a: &a {ipc: host}\nservices:\n" + body)
            else:
                items = "".join(f"      - name: c{i}\n        args: [a, b]\n" if rng.random() < 0.6
                                else "      - *c\n" if rng.random() < 0.5 else "      -\n"
                                for i in range(rng.randrange(24)))
                docs.append(f"kind: Pod\nmetadata: {{name: p{d}}}\nx: &c {{name: z}}\n"
                            f"spec:\n  containers:\n{items}" + "".join(
                                f"k{i}: {i}\n" for i in range(rng.randrange(20))))
        text = "---\n".join(docs)
        assert names(text, 2) == names(text, 10**9)
