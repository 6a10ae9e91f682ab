"""Hostile inputs (SPEC §7 "Never crash"): each bounded in time, nothing executed or written.

Where a hang or a crash of the whole process is possible (the C YAML composer aborts on very deep
nesting; an alias bomb could be expanded; a huge file could be read), the CLI runs in a
subprocess with a timeout, so a segfault or a hang fails the test instead of killing pytest.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from mgpu_lint.cli import main
from mgpu_lint.runner import Options, RunResult, lint, read_files

from .conftest import FIXTURES, ROOT

TIMEOUT = 30  # seconds; every input here lints in well under a second when handled correctly

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.30.0
          args:
            - meta-llama/Llama-3.1-70B-Instruct
            - --tensor-parallel-size
            - "4"
            - --max-model-len=8192
          resources:
            limits:
              nvidia.com/gpu: "4"
"""


def no_core_dump() -> None:
    """In the child: a crash should fail the test quickly, not spend seconds writing a core."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def cli(*args: str, cwd: Path = ROOT, timeout: float = TIMEOUT) -> tuple[int, dict]:
    """Run the CLI in its own process; return the exit code and the JSON report."""
    proc = subprocess.run(
        [sys.executable, "-m", "mgpu_lint.cli", "--format", "json", *args],
        check=False, capture_output=True, cwd=cwd, timeout=timeout,
        preexec_fn=no_core_dump,
    )
    assert proc.returncode in (0, 1), (
        f"exit {proc.returncode} (negative: killed by signal)\n{proc.stderr.decode()[-2000:]}")
    report = json.loads(proc.stdout)
    codes = [f["code"] for f in report["findings"]]
    assert "MG000" not in codes, report["findings"]
    return proc.returncode, report


def codes_of(report: dict) -> list[str]:
    return [f["code"] for f in report["findings"]]


def argv_of(run: RunResult) -> list[list[str]]:
    return [[la.program.text, *(w.text for w in la.args)] for la in run.launches]


# --------------------------------------------------------------------------- YAML bombs, depth

def billion_laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_billion_laughs(tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text(billion_laughs())
    _, report = cli("bomb.yaml", cwd=tmp_path)
    assert report["summary"]["files"] == 1


def test_alias_bomb_inside_a_deployment(tmp_path: Path) -> None:
    """The bomb's aliases sit where the Kubernetes walker looks: labels, env, args, resources."""
    anchors = "\n".join("    " + ln for ln in billion_laughs().splitlines())
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: bomb\n  labels:\n"
        f"{anchors}\n"
        "spec:\n  template:\n    metadata: {annotations: {x: *a9}}\n    spec:\n"
        "      volumes: *a9\n      containers:\n"
        "        - {name: a, image: vllm/vllm-openai:v0.30.0, command: *a9, args: *a9,"
        " env: *a9, resources: {limits: *a9}}\n"
        "        - name: b\n          image: vllm/vllm-openai:v0.30.0\n"
        "          args: [serve, m, *a9]\n          env: [{name: A, value: *a9}]\n"
        "          volumeMounts: *a9\n"
    )
    (tmp_path / "bomb.yaml").write_text(text)
    cli("bomb.yaml", cwd=tmp_path)


DEEP = 30_000


@pytest.mark.parametrize("name,text", [
    ("flow-sequence", "[" * DEEP + "]" * DEEP + "\n"),
    ("flow-mapping", "{a: " * DEEP + "b" + "}" * DEEP + "\n"),
    # block mappings, two and one space(s) more per level, beyond the 1,000-level limit
    ("block-mapping", "".join("  " * i + f"k{i}:\n" for i in range(1100)) + "  " * 1100 + "v\n"),
    ("block-mapping-1-space",
     "".join(" " * i + f"k{i}:\n" for i in range(1500)) + " " * 1500 + "v\n"),
    ("block-sequence", "- " * DEEP + "x\n"),
    # nested explicit keys: `? ` opens a block mapping per level with no indentation
    ("explicit-keys", "? " * DEEP + "x\n"),
    # a quote inside a plain scalar (`x '`) is not a quoted string: the brackets after it nest
    ("quote-in-plain-scalar", "a: [x ', " + "[" * DEEP + "]" * DEEP + "]\n"),
])
def test_deep_nesting_is_mg002(tmp_path: Path, name: str, text: str) -> None:
    # the comment names an engine, so the pre-pass (linter/prepass.py) lets the file be composed
    (tmp_path / f"{name}.yaml").write_text("# image: vllm/vllm-openai\n" + text)
    _, report = cli(f"{name}.yaml", cwd=tmp_path)
    assert "MG002" in codes_of(report), report["findings"]


def test_nesting_at_the_limit_still_parses(tmp_path: Path) -> None:
    """Depth 999 is legal YAML and is composed, not refused (no false MG002)."""
    (tmp_path / "ok.yaml").write_text("# vllm\na: " + "[" * 999 + "]" * 999 + "\n")
    _, report = cli("ok.yaml", cwd=tmp_path)
    assert "MG002" not in codes_of(report)


# --------------------------------------------------------------------------- size, bytes, text

def test_huge_sparse_file_is_mg001_without_reading_it(tmp_path: Path) -> None:
    """64 GiB of holes: reading it would take minutes and the memory; the size check must not."""
    path = tmp_path / "huge.yaml"
    with open(path, "wb") as fh:
        fh.truncate(64 * 1024**3)
    _, report = cli("huge.yaml", cwd=tmp_path, timeout=15)
    [finding] = report["findings"]
    assert finding["code"] == "MG001" and "limit" in finding["message"]


def test_file_just_over_the_limit_in_a_walked_directory(tmp_path: Path) -> None:
    (tmp_path / "big.yaml").write_bytes(b"a: b\n" + b"#" * (10 * 1024 * 1024))
    (tmp_path / "ok.yaml").write_text(DEPLOYMENT)
    _, report = cli(".", cwd=tmp_path)
    assert [(f["path"], f["code"]) for f in report["findings"] if f["code"] == "MG001"] == [
        ("./big.yaml", "MG001")]
    assert report["summary"]["launches"] == 1


BINARY_NAMES = ("x.yaml", "x.sh", "Dockerfile", "x.md")


@pytest.mark.parametrize("name", BINARY_NAMES)
@pytest.mark.parametrize("data", [
    b"\x7fELF\x02\x01\x01\0\0\0" + bytes(range(256)) * 4,  # NUL bytes: binary
    bytes(range(128, 256)) * 8,  # no NUL but not UTF-8
    b"apiVersion: v1\nkind: Pod\nmetadata: {name: caf\xe9}\n",  # Latin-1
    b"vllm serve m --port 8000 \xff\xfe\n",
], ids=["elf", "high-bytes", "latin1", "trailing-ff"])
def test_binary_and_non_utf8_are_mg001(tmp_path: Path, name: str, data: bytes) -> None:
    (tmp_path / name).write_bytes(data)
    run = lint([str(tmp_path / name)], Options())
    assert [f.code for f in run.findings] == ["MG001"]


def test_non_utf8_reports_the_offending_byte(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_bytes(b"a: b\nc: caf\xe9\n")
    run = read_files([str(tmp_path / "x.yaml")])
    [finding] = run.findings
    assert finding.code == "MG001" and "0xe9" in finding.message
    assert finding.source.line_col(finding.span.start) == (2, 7)


def test_utf8_bom_is_transparent(tmp_path: Path) -> None:
    (tmp_path / "plain.yaml").write_text(DEPLOYMENT)
    (tmp_path / "bom.yaml").write_bytes(b"\xef\xbb\xbf" + DEPLOYMENT.encode())
    plain, bom = (read_files([str(tmp_path / n)]) for n in ("plain.yaml", "bom.yaml"))
    assert not bom.findings and argv_of(bom) == argv_of(plain) != []
    assert [w.span for w in bom.launches[0].args] == [w.span for w in plain.launches[0].args]


def test_crlf_line_endings(tmp_path: Path) -> None:
    (tmp_path / "lf.yaml").write_text(DEPLOYMENT)
    (tmp_path / "crlf.yaml").write_bytes(DEPLOYMENT.replace("\n", "\r\n").encode())
    script = "#!/bin/sh\nvllm serve m \\\n  --tensor-parallel-size 2 \\\n  --port 8000\n"
    (tmp_path / "crlf.sh").write_bytes(script.replace("\n", "\r\n").encode())
    lf, crlf = (read_files([str(tmp_path / n)]) for n in ("lf.yaml", "crlf.yaml"))
    assert not crlf.findings and argv_of(crlf) == argv_of(lf) != []
    text = crlf.files[0].source.text
    for word in crlf.launches[0].args:
        assert word.text in text[word.span.start:word.span.end]
    sh = read_files([str(tmp_path / "crlf.sh")])
    assert not any(f.code == "MG000" for f in sh.findings)
    assert argv_of(sh) == [["vllm", "m", "--tensor-parallel-size", "2", "--port", "8000"]]


def test_tabs(tmp_path: Path) -> None:
    # a tab as YAML indentation is a syntax error, reported as such
    (tmp_path / "tab-indent.yaml").write_text(DEPLOYMENT.replace("    spec:", "\tspec:"))
    # tabs between shell words are separators
    (tmp_path / "tab.sh").write_text("#!/bin/sh\nvllm\tserve\tm\t--port\t8000\t\\\n\t-tp 2\n")
    run = lint([str(tmp_path / "tab-indent.yaml"), str(tmp_path / "tab.sh")], Options())
    codes = {(Path(f.source.path).name, f.code) for f in run.findings}
    assert ("tab-indent.yaml", "MG002") in codes
    assert not any(c == "MG000" for _, c in codes)
    [launch] = run.launches
    assert [w.text for w in launch.args][-4:] == ["--port", "8000", "-tp", "2"]


# --------------------------------------------------------------------------- the file system

def test_symlink_loops_in_a_walked_directory(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "deploy.yaml").write_text(DEPLOYMENT)
    os.symlink("..", tree / "sub" / "up")  # directory loop
    os.symlink(tree, tree / "sub" / "root")  # absolute loop
    os.symlink("self.yaml", tree / "self.yaml")  # a link to itself
    os.symlink("b.yaml", tree / "a.yaml")
    os.symlink("a.yaml", tree / "b.yaml")  # a two-link cycle
    _, report = cli("tree", cwd=tmp_path)
    assert report["summary"]["launches"] == 1


def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "secret.yaml"
    path.write_text(DEPLOYMENT)
    path.chmod(0)
    try:
        try:
            path.read_bytes()
        except PermissionError:
            pass
        else:
            pytest.skip("running as root (or with CAP_DAC_OVERRIDE): mode 000 does not stop "
                        "reads, so the MG001 'cannot read' path cannot be exercised here")
        code, report = cli("secret.yaml", cwd=tmp_path)
        assert code == 1 and codes_of(report) == ["MG001"]
        assert "cannot read" in report["findings"][0]["message"]
    finally:
        path.chmod(0o644)


def test_dangling_symlink_and_fifo_in_a_walked_directory(tmp_path: Path) -> None:
    """Walking skips what is not a regular file: a dangling link, and a FIFO named .yaml (opening
    it would block forever with no writer)."""
    os.symlink("missing.yaml", tmp_path / "dangling.yaml")
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "ok.yaml").write_text(DEPLOYMENT)
    _, report = cli(".", cwd=tmp_path, timeout=15)
    assert report["summary"]["launches"] == 1


# --------------------------------------------------------------------------- nothing executed

TAGS = ("!!python/object/apply:os.system", "!!python/object/new:os.system",
        "!!python/name:os.system", "!custom")


def test_custom_tags_never_execute(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    for i, tag in enumerate(TAGS):
        payload = f'{tag} ["touch {marker}"]'
        text = (
            f"top: {payload}\n---\n"
            + DEPLOYMENT.replace('            - "4"', f'            - "4"\n            - {payload}')
            + f"          env:\n            - name: X\n              value: {payload}\n"
        )
        (tmp_path / f"tags{i}.yaml").write_text(text)
    _, report = cli(".", cwd=tmp_path)
    assert report["summary"]["launches"] == len(TAGS)
    run = lint([str(tmp_path)], Options())
    assert not any(f.code == "MG000" for f in run.findings)
    assert not marker.exists()


# --------------------------------------------------------------------------- inputs untouched

def _snapshot(root: Path) -> dict[str, tuple[str, int, int]]:
    return {
        str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(),
                                   p.stat().st_mtime_ns, p.stat().st_mode)
        for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_inputs_are_never_modified(capsys: pytest.CaptureFixture[str]) -> None:
    before = _snapshot(FIXTURES)
    cli("fixtures/")
    assert main(["--format", "text", "fixtures/"]) in (0, 1)
    capsys.readouterr()
    assert _snapshot(FIXTURES) == before
