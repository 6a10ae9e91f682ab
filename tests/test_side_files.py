"""Side files (linter/safeio.py): what a launch is told when one cannot be read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mgpu_lint.cli import main

IMAGE = "vllm/vllm-openai:v0.30.0"


def lint(capsys: pytest.CaptureFixture[str], *paths: Path) -> list[dict]:
    main(["--exit-zero", "--format", "json", *map(str, paths)])
    return json.loads(capsys.readouterr().out)["findings"]


def messages(findings: list[dict], code: str) -> list[str]:
    return [f["message"] for f in findings if f["code"] == code]


def test_an_unread_side_file_says_not_read_once(tmp_path: Path, capsys) -> None:
    """Each kind of side file: the caller says it is not read, the reason says what is wrong
    (the reason ended in "; not read" too: "--config c.yaml is not read: 3,450,047 bytes, over
    the 1,048,576-byte limit; not read")."""
    (tmp_path / "c.yaml").write_text("#" * 2_000_000)
    script = tmp_path / "run.sh"
    script.write_text("vllm serve m --config c.yaml\n")
    (tmp_path / "compose").mkdir()
    os.mkfifo(tmp_path / "compose" / ".env")
    os.mkfifo(tmp_path / "compose" / "Dockerfile")
    compose = tmp_path / "compose" / "compose.yaml"
    compose.write_text("services:\n  a:\n    build: .\n    command: [\"--model\", \"m\"]\n"
                       f"  b:\n    image: {IMAGE}\n    command: [\"m\"]\n")
    (tmp_path / "image").mkdir()
    (tmp_path / "image" / "serve.sh").write_bytes(b"vllm serve m \xff\n")
    dockerfile = tmp_path / "image" / "Dockerfile"
    dockerfile.write_text(f"FROM {IMAGE}\nCOPY serve.sh /serve.sh\nENTRYPOINT [\"/serve.sh\"]\n")
    findings = lint(capsys, script, compose, dockerfile)
    assert messages(findings, "MG006") == [
        "--config c.yaml is not read: 2,000,000 bytes, over the 1,048,576-byte limit"]
    assert sorted(messages(findings, "MG001")) == [
        "the .env beside compose.yaml is not read (its variables are not used): a FIFO, not a "
        "regular file",
        "the Dockerfile of compose.yaml's build is not read (what the image runs is not known): "
        "a FIFO, not a regular file",
        "the script /serve.sh that Dockerfile starts is not read: not valid UTF-8: byte 0xff at "
        "byte offset 13",
    ]
