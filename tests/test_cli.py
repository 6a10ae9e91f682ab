"""The command line: inputs, exit codes, selection."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from mgpu_lint.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_command_clean(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--command", "vllm serve Qwen/Qwen3-8B --port 8000")
    assert code == 0
    assert "1 launch(es)" in out


def test_bad_inputs_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    for path in ("fixtures/bad/blob.yaml", "fixtures/bad/latin1.yaml", "fixtures/bad/invalid.yaml",
                 "fixtures/bad/unbalanced-quote.sh"):
        code, out, _ = run(capsys, path)
        assert code == 1, path
        assert "MG00" in out


def test_helm_template_is_info_and_passes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "fixtures/bad/helm-template.yaml")
    assert code == 0 and "MG011" in out
    code, _, _ = run(capsys, "--fail-on", "info", "fixtures/bad/helm-template.yaml")
    assert code == 1


def test_missing_path_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "does/not/exist.yaml")
    assert code == 2 and "no such file" in err
    code, _, err = run(capsys)
    assert code == 2


def test_select_and_ignore(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--ignore", "MG0", "fixtures/bad/invalid.yaml")
    assert code == 0 and "MG002" not in out
    # the more specific (longer) code wins, as in ruff
    code, out, _ = run(capsys, "--ignore", "MG0", "--select", "MG002", "fixtures/bad/invalid.yaml")
    assert "MG002" in out
    code, out, _ = run(capsys, "--select", "MG0", "--ignore", "MG002",
                       "fixtures/bad/invalid.yaml")
    assert code == 0 and "MG002" not in out


def test_unknown_kind_named_explicitly(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "notes.txt"
    p.write_text("hello\n")
    code, out, _ = run(capsys, str(p))
    assert code == 0 and "MG017" in out


def test_stdin_with_filename(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    import io

    data = b"#!/bin/sh\nvllm serve 'unterminated\n"
    monkeypatch.setattr(sys, "stdin", type("S", (), {"buffer": io.BytesIO(data)})())
    code, out, _ = run(capsys, "--format", "json", "-", "--stdin-filename", "run.sh")
    doc = json.loads(out)
    assert code == 1
    assert doc["findings"][0]["path"] == "run.sh"
    assert doc["findings"][0]["code"] == "MG003"
    assert doc["findings"][0]["range"]["start"] == {"line": 2, "column": 12}


def test_endless_stdin_is_read_to_one_byte_past_the_limit(capsys, monkeypatch, tmp_path) -> None:
    """`yes | mgpu-lint -` read forever (10 GB in 30 s): at most max-file-size + 1 bytes are read,
    and the text is over the limit (MG001, not linted)."""
    asked: list[int | None] = []

    class Endless:
        def read(self, n: int | None = None) -> bytes:
            asked.append(n)
            if n is None or n < 0:
                raise AssertionError("reads an endless stream to its end")
            return b"y\n" * (n // 2) + b"y" * (n % 2)

    monkeypatch.setattr(sys, "stdin", type("S", (), {"buffer": Endless()})())
    cfg = tmp_path / "mgpu-lint.toml"
    cfg.write_text("max-file-size = 1000\n")
    code, out, _ = run(capsys, "--format", "json", "--config", str(cfg), "-")
    assert asked == [1001]
    finding, = json.loads(out)["findings"]
    assert (code, finding["code"], finding["path"]) == (1, "MG001", "<stdin>")
    assert finding["message"] == ("file is more than 1,000 bytes, over the 1,000-byte limit; "
                                  "not read")


def test_path_named_like_a_subcommand_is_linted(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rules").write_text("#!/bin/sh\nvllm serve m --port 1\n")
    code, out, _ = run(capsys, "rules")
    assert code == 0 and "1 launch(es)" in out


def test_rules_and_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules")
    assert code == 0 and "MG002  yaml-syntax" in out
    code, out, _ = run(capsys, "rule", "mg003")
    assert code == 0 and "backslash" in out
    code, _, err = run(capsys, "rule", "MG999")
    assert code == 2


def test_console_script_runs() -> None:
    proc = subprocess.run([sys.executable, "-m", "mgpu_lint.cli", "--command",
                           "llama-server -m x.gguf"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr


def test_valid_yaml_prints_no_python_warning(tmp_path) -> None:
    # an anchor defined twice is valid YAML 1.2 (an alias refers to the most recent one), and
    # ruamel.yaml's ReusedAnchorWarning went to stderr with a path into site-packages
    path = tmp_path / "pod.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: &a x}\nspec:\n  containers:\n"
                    "  - name: &a c\n    image: vllm/vllm-openai:v0.10.2\n    args: [--model, m]\n")
    proc = subprocess.run([sys.executable, "-m", "mgpu_lint.cli", "--exit-zero", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
