"""Whole reports pinned per fixture: what `mgpu-lint` and `mgpu-lint launches` print."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mgpu_lint.cli import main

from tests.conftest import ROOT, fixture_files


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


@pytest.mark.parametrize("path", fixture_files())
def test_lint_text(path: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    code, out = run_cli(capsys, "--no-color", path)
    assert code in (0, 1)
    assert out == snapshot


@pytest.mark.parametrize("path", fixture_files())
def test_lint_json_matches_schema(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "linter/report/findings.schema.json").read_text())
    code, out = run_cli(capsys, "--format", "json", path)
    doc = json.loads(out)
    jsonschema.validate(doc, schema)
    assert code == (1 if any(f["severity"] != "info" for f in doc["findings"]) else 0)


@pytest.mark.parametrize("path", [p for p in fixture_files() if "/bad/" not in p])
def test_launches(path: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    code, out = run_cli(capsys, "launches", path)
    assert code == 0
    assert out == snapshot


def test_launches_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_cli(capsys, "launches", "--format", "json", "fixtures/shell/serve.sh")
    doc = json.loads(out)
    (la,) = doc["launches"]
    assert la["engine"] == "vllm" and la["at"] == "7:31"
    assert la["gpus"] == {"count": 2, "origin": "CUDA_VISIBLE_DEVICES", "vendor": "nvidia",
                          "at": "7:22"}
    assert la["argv"][0] == {"word": "meta-llama/Llama-3.1-8B-Instruct", "at": "7:43"}
    assert la["env"]["VLLM_API_KEY"] == "changeme"
    # the default of ${PORT:-8000} is read where it is written
    assert la["argv"][-1] == {"word": "8000", "at": "10:21"}


def test_fixture_dir_is_walked(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_cli(capsys, "--exit-zero", "fixtures")
    assert code == 0
    assert "MG000" not in out
    n_files = sum(1 for p in Path(ROOT / "fixtures").rglob("*")
                  if p.is_file() and not p.name.startswith("."))
    assert f"in {n_files} file(s)" in out
