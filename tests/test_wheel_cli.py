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
    (["bogus-command"], "bogus-command: no such file or directory"),
    (["--select", "MG999", "x.yaml"], "unknown rule selector 'MG999'; did you mean"),
    (["--ignore", "bogus", "x.yaml"], "unknown rule selector 'bogus'"),
    (["--extend-select", "MG1,XX", "x.yaml"], "unknown rule selector 'XX'"),
    (["--gpus-per-node", "0", "x.yaml"], "'--gpus-per-node': 0 is not in the range"),
    (["--gpus-per-node", "-3", "x.yaml"], "'--gpus-per-node': -3 is not in the range"),
    (["--output-format", "xml", "x.yaml"], "'xml' is not one of"),
    (["--color", "sometimes", "x.yaml"], "Invalid value for '--color'"),
    (["--format"], "Option '--format' requires an argument."),
    (["--target-version", "banana", "x.yaml"], "Invalid value for '--target-version'"),
    (["check", "--statistics", "--output-format", "sarif", "x.yaml"], "--statistics"),
    (["rule", "--all", "MG101"], "not both"),
    (["rule", "--output-format", "xml", "MG101"], "--output-format"),
    (["rules", "--format", "xml"], "--format"),
    (["launches", "--target-version", "banana"], "--target-version"),
]

# (configuration file, its text, text the one error line must contain)
CONFIG_ERRORS = [
    ("pyproject.toml", '[tool.mgpu-lint]\nselect = ["MG1"\n', "pyproject.toml:2:"),
    ("mgpu-lint.toml", 'select = ["MG999"]\n', "mgpu-lint.toml:1: key `select`: unknown rule"),
    ("mgpu-lint.toml", '[per-file-ignores]\n"a/*" = ["MG0", "nope"]\n', "'nope'"),
    ("mgpu-lint.toml", "gpus-per-node = 0\n", "mgpu-lint.toml:1: key `gpus-per-node`"),
    (".mgpu-lint.toml", "colour = 'always'\n", ".mgpu-lint.toml:1: key `colour`: unknown key"),
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
    for d in ("linter", "rules", "grammars", "docs"):
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


def test_installed_package_ships_the_rule_pages(installed: Path, tmp_path: Path) -> None:
    """The links in JSON (and the language server's codeDescription) name the rule pages of
    the installed package, which must be there, as docs/rules has them."""
    import json
    from urllib.parse import urlparse
    from urllib.request import url2pathname

    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\nvllm serve Qwen/Qwen3-8B --tensor-paralel-size 2\n")
    proc = _run(installed, ["--format", "json", str(script)], tmp_path)
    (found,) = [f for f in json.loads(proc.stdout)["findings"] if f["code"] == "MG004"]
    page = Path(url2pathname(urlparse(found["url"]).path))
    assert found["url"].startswith("file://") and page.name == "MG004.md"
    assert page.is_relative_to(installed.parents[1])  # inside the venv, not the checkout
    assert page.read_text("utf-8") == (ROOT / "docs" / "rules" / "MG004.md").read_text("utf-8")
    shipped = {p.name for p in page.parent.glob("*.md")}
    assert shipped == {p.name for p in (ROOT / "docs" / "rules").glob("*.md")}


@pytest.mark.parametrize(("name", "text", "expected"), CONFIG_ERRORS,
                         ids=[f"{n}:{t.splitlines()[-1]}" for n, t, _ in CONFIG_ERRORS])
def test_config_error_is_one_line_exit_2(installed: Path, tmp_path: Path, name: str, text: str,
                                         expected: str) -> None:
    (tmp_path / name).write_text(text)
    (tmp_path / "run.sh").write_text("#!/bin/sh\nvllm serve Qwen/Qwen3-8B\n")
    proc = _run(installed, ["run.sh"], tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("mgpu-lint: error: ") and expected in lines[0]


def test_installed_cli_warns_when_nothing_was_linted(installed: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing to lint\n")
    proc = _run(installed, ["."], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("mgpu-lint: warning: no files were linted")
    proc = _run(installed, ["--version"], tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("mgpu-lint ")
