"""The command line as users get it: a venv made from the built wheel, without the test extras.

Every sub-command's usage errors (unknown option, missing or malformed value, missing argument)
must print one line on stderr and exit 2 -- never a traceback. The dev environment may hold
packages a user's does not (once: `click`, which typer 0.29 no longer installs), so this runs the
installed `mgpu-lint` script of a clean venv in a subprocess.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow

TIMEOUT = 300  # a venv plus a pip install on a cold cache

# (argv, text the one error line must contain)
USAGE_ERRORS = [
    (["plan", "--bogus"], "No such option: --bogus"),
    (["plan"], "--model"),
    (["plan", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--bits", "abc"], "--bits"),
    (["layers", "--n-layer", "32"], "No such option: --n-layer"),
    (["launches", "--bogus"], "No such option: --bogus"),
    (["server", "--bogus"], "No such option: --bogus"),
    (["rules", "--bogus"], "No such option: --bogus"),
    (["rule"], "Missing argument"),
    (["rule", "MG999"], "unknown rule"),
    (["--bogus", "x.yaml"], "No such option: --bogus"),
    (["check", "--format", "xml", "x.yaml"], "--format"),
    (["--gpus-per-node", "many", "x.yaml"], "--gpus-per-node"),
    ([], "give a PATH"),
    (["no/such/file.yaml"], "no such file"),
]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `mgpu-lint` script of a fresh venv holding only the wheel and its dependencies."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    # a copy of the package's files, so the build never writes into the working tree
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for d in ("linter", "rules", "grammars"):
        shutil.copytree(ROOT / d, src / d, ignore=shutil.ignore_patterns("__pycache__"))
    dist = work / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist),
                    str(src)], check=True, timeout=TIMEOUT)
    wheel = next(dist.glob("*.whl"))
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=TIMEOUT)
    pip = venv / "bin" / "pip"
    subprocess.run([str(pip), "install", "--quiet", str(wheel)], check=True, timeout=TIMEOUT)
    return venv / "bin" / "mgpu-lint"


def _run(exe: Path, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    return subprocess.run([str(exe), *argv], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(("argv", "expected"), USAGE_ERRORS,
                         ids=[" ".join(a) or "<none>" for a, _ in USAGE_ERRORS])
def test_usage_error_is_one_line_exit_2(installed: Path, tmp_path: Path, argv: list[str],
                                        expected: str) -> None:
    proc = _run(installed, argv, tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert expected in lines[0]
    assert lines[0].startswith("mgpu-lint")


def test_installed_cli_lints_and_helps(installed: Path, tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\nvllm serve Qwen/Qwen3-8B --tensor-paralel-size 2\n")
    proc = _run(installed, [str(script)], tmp_path)
    assert proc.returncode == 1 and "MG004" in proc.stdout, proc.stdout + proc.stderr
    for argv in (["--help"], ["plan", "--help"], ["rules"], ["rule", "MG101"]):
        proc = _run(installed, argv, tmp_path)
        assert proc.returncode == 0, (argv, proc.stderr)
        assert proc.stdout and "Traceback" not in proc.stderr
