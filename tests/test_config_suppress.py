"""Configuration files and suppression comments."""

from __future__ import annotations

from pathlib import Path

import pytest
from mgpu_lint.cli import main
from mgpu_lint.config import find_for_directory

BAD = "#!/bin/sh\nvllm serve 'unterminated --port 1\n"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    find_for_directory.cache_clear()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_closest_config_wins(tmp_path: Path, capsys) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.mgpu-lint]\nignore = ["MG003"]\n')
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "mgpu-lint.toml").write_text("select = ['MG003']\n")
    (tmp_path / "a.sh").write_text(BAD)
    (sub / "b.sh").write_text(BAD)
    code, out, _ = run(capsys, str(tmp_path))
    assert "a.sh" not in out
    assert "b.sh:2:12: MG003" in out
    assert code == 1


def test_per_file_ignores_and_fail_on(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".mgpu-lint.toml").write_text(
        '[per-file-ignores]\n"legacy/*" = ["MG003"]\n')
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "x.sh").write_text(BAD)
    code, out, _ = run(capsys, "legacy/x.sh")
    assert code == 0 and "MG003" not in out


@pytest.mark.parametrize("content,needle", [
    ("select = 'MG1'\n", "key `select`"),
    ("bogus = 1\n", "key `bogus`: unknown key"),
    ("gpus-per-node = 0\n", "key `gpus-per-node`"),
    ("select = ['XX1']\n", "unknown rule selector 'XX1'"),
    ("fail-on = 'sometimes'\n", "key `fail-on`"),
    ("[[\n", "not valid TOML"),
])
def test_invalid_config_exits_2(tmp_path: Path, capsys, content: str, needle: str) -> None:
    cfg = tmp_path / "mgpu-lint.toml"
    cfg.write_text(content)
    (tmp_path / "a.sh").write_text(BAD)
    code, _, err = run(capsys, "--config", str(cfg), str(tmp_path / "a.sh"))
    assert code == 2
    assert str(cfg) in err and needle in err


def test_suppression_on_the_line_before(tmp_path: Path, capsys) -> None:
    p = tmp_path / "a.sh"
    p.write_text("#!/bin/sh\n# mgpu-lint: disable=MG003\nvllm serve 'x\n")
    code, out, _ = run(capsys, str(p))
    assert code == 0 and "MG003" not in out and "MG012" not in out


def test_disable_file_and_unused(tmp_path: Path, capsys) -> None:
    p = tmp_path / "a.sh"
    p.write_text("#!/bin/sh\n# mgpu-lint: disable-file=MG003\n\n\nvllm serve 'x\n")
    code, out, _ = run(capsys, str(p))
    assert code == 0 and "MG003" not in out
    p.write_text("#!/bin/sh\n# mgpu-lint: disable=MG002\nvllm serve m\n")
    code, out, _ = run(capsys, str(p))
    assert "a.sh:2:1: MG012 [info] suppression of MG002 suppressed nothing" in out
    assert code == 0


def test_k8s_annotation(tmp_path: Path, capsys) -> None:
    p = tmp_path / "pod.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
        "    mgpu-lint/ignore: MG003\nspec:\n  containers:\n  - name: c\n    image: x\n"
        "    command: [sh, -c, \"vllm serve 'x\"]\n")
    code, out, _ = run(capsys, str(p))
    assert "MG003" not in out, out
