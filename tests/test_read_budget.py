"""What one file may cost (linter/bounds.py): shell words lexed, launches checked, findings of
one code listed per launch.  Past each, one finding says where reading stopped or how many
were summed up; nothing after the limit is guessed at."""

from __future__ import annotations

import json

import pytest
from mgpu_lint import bounds, runner
from mgpu_lint.cli import main

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _findings(capsys: pytest.CaptureFixture[str], path) -> list[dict]:
    main(["--format", "json", "--exit-zero", str(path)])
    return json.loads(capsys.readouterr().out)["findings"]


def test_reading_stops_where_the_shell_words_run_out(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(bounds, "MAX_SHELL_WORDS", 40)
    script = tmp_path / "run.sh"
    # 1 + 3 words, then 34 of echo, then the launch that would be an MG102 (words 39 to 43)
    script.write_text(f"A=1\nvllm serve {MODEL}\necho " + "x " * 33 + "\n"
                      "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 3\n")
    found = _findings(capsys, script)
    assert [(f["code"], f["severity"], f["range"]["start"]) for f in found] == [
        ("MG001", "warning", {"line": 4, "column": 1})]
    assert "more than 40 words" in found[0]["message"]


def test_the_budget_is_the_files_across_its_texts(capsys, tmp_path, monkeypatch):
    """Each `sh -c` script of a manifest is a text of its own; together they spend one budget,
    and the place where it ran out is in the file."""
    monkeypatch.setattr(bounds, "MAX_SHELL_WORDS", 20)
    containers = "".join(f"""
    - name: c{i}
      image: vllm/vllm-openai:v0.30.0
      command: ["sh", "-c", "echo a b c; vllm serve {MODEL} --port 80{i}0"]""" for i in range(4))
    pod = tmp_path / "pod.yaml"
    pod.write_text(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:"
                   f"{containers}\n")
    found = _findings(capsys, pod)
    cut = [f for f in found if f["code"] == "MG001"]
    assert len(cut) == 1 and cut[0]["range"]["start"]["line"] == 14  # the third container's
    assert not [f for f in found if f["code"] == "MG017"]


def test_launches_past_the_limit_are_not_checked(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "MAX_LAUNCHES", 3)
    script = tmp_path / "run.sh"
    script.write_text("".join(f"vllm serve {MODEL} --port 800{i}\n" for i in range(5))
                      + "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 3\n")
    found = _findings(capsys, script)
    assert [(f["code"], f["range"]["start"]["line"]) for f in found] == [("MG001", 4)]
    assert "more than 3 launches" in found[0]["message"]


def test_findings_of_one_code_past_the_limit_are_summed_up(capsys, tmp_path):
    n = bounds.MAX_FINDINGS_PER_CODE + 50
    script = tmp_path / "run.sh"
    script.write_text(f"vllm serve {MODEL} " + " ".join(f"w{i}" for i in range(n)) + "\n")
    found = [f for f in _findings(capsys, script) if f["code"] == "MG004"]
    listed, summary = found[:-1], found[-1]
    assert len(listed) == bounds.MAX_FINDINGS_PER_CODE
    assert all("unexpected argument" in f["message"] for f in listed)
    assert summary["message"].startswith("and 50 more MG004 findings of this launch")
    assert summary["severity"] == "error"
    col = len(f"vllm serve {MODEL} ") + sum(len(f"w{i} ") for i in range(100)) + 1
    assert summary["range"]["start"] == {"line": 1, "column": col}
    assert summary["related"][0]["message"] == "the last of them"
