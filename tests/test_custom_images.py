"""The configuration's `[images]` table: custom images whose entry point is an engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from mgpu_lint.cli import main
from mgpu_lint.config import find_for_directory

TABLE = """\
[tool.mgpu-lint.images]
"registry.corp/llm/vllm-*" = "vllm serve"
"registry.corp/llm/old-api:2*" = "python3 -m vllm.entrypoints.openai.api_server"
"ghcr.io/me/llamacpp:*" = "llama-server"
"""

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers:
  - name: table
    image: registry.corp/llm/vllm-h100:2024.1
    args: [Qwen/Qwen3-8B, --tensor-parallel-size, "2", --no-such-flag]
    resources: {limits: {nvidia.com/gpu: 2}}
  - name: api
    image: registry.corp/llm/old-api:2.3
    args: [--model, Qwen/Qwen3-8B, --port, "8000"]
  - name: tag-not-matched
    image: registry.corp/llm/old-api:1.0
    args: [--model, Qwen/Qwen3-8B]
  - name: not-in-table
    image: registry.corp/other/server:1
    args: [--model, Qwen/Qwen3-8B]
"""

COMPOSE = """\
services:
  llm:
    image: ghcr.io/me/llamacpp:b5000
    command: ["-m", "/models/m.gguf", "-ngl", "99", "--no-such-flag"]
"""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    find_for_directory.cache_clear()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n\n" + TABLE)
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / "compose.yaml").write_text(COMPOSE)
    return tmp_path


def test_table_entries_start_launches(tree: Path, capsys, snapshot) -> None:
    code, out, err = run(capsys, "launches", "pod.yaml", "compose.yaml")
    assert code == 0, err
    assert out == snapshot


def test_table_entries_are_linted_like_known_images(tree: Path, capsys, snapshot) -> None:
    code, out, err = run(capsys, "--select", "MG004,MG101,MG008", "pod.yaml", "compose.yaml")
    assert code == 1, err
    assert out == snapshot


def test_without_the_table_no_launch(tree: Path, capsys) -> None:
    (tree / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    code, out, _ = run(capsys, "launches", "pod.yaml", "compose.yaml")
    assert out.strip().endswith("0 launch(es)")


@pytest.mark.parametrize("entry,needle", [
    ('"bash -c true"', "is not an engine entry point"),
    ('"vllm serve Qwen/Qwen3-8B"', "is not an engine entry point"),
    ('"vllm \'serve"', "No closing quotation"),
    ("3", "key `images.x/*`: Input should be a valid string"),
])
def test_bad_entry_is_a_usage_error(tmp_path: Path, capsys, entry: str, needle: str) -> None:
    cfg = tmp_path / "mgpu-lint.toml"
    cfg.write_text(f'gpu = "H100"\n\n[images]\n"x/*" = {entry}\n')
    (tmp_path / "a.yaml").write_text(POD)
    code, _, err = run(capsys, "--config", str(cfg), str(tmp_path / "a.yaml"))
    assert code == 2
    assert needle in err
    assert f"{cfg}:3: key `images" in err  # the [images] table's line
    assert len(err.strip().splitlines()) == 1
