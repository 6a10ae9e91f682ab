"""The pre-commit hook, through the real `pre-commit try-repo` (it builds a venv and installs us).

The hook repository is a fresh git repository holding a copy of this working tree's package (the
directories pyproject.toml maps, pyproject.toml, the README and .pre-commit-hooks.yaml), so the
test checks what is on disk, committed or not.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

pytestmark = pytest.mark.slow

pytest.importorskip("pre_commit", reason="pre-commit is not installed (the test extra has it)")

TIMEOUT = 240  # seconds for one pre-commit run: a venv and a pip install on a cold cache
BAD_SCRIPT = '#!/bin/sh\nvllm serve "Qwen/Qwen3-8B --port 8000\n'
GOOD_SCRIPT = "#!/bin/sh\nvllm serve Qwen/Qwen3-8B --port 8000\n"
GOOD_DOCKERFILE = (
    "FROM vllm/vllm-openai:v0.30.0\n"
    'ENTRYPOINT ["vllm", "serve", "Qwen/Qwen3-8B", "--port", "8000"]\n'
)
GOOD_MARKDOWN = "# Serving\n\n```bash\nvllm serve Qwen/Qwen3-8B --port 8000\n```\n"


def git_env() -> dict[str, str]:
    """This environment without a surrounding git's variables (a test run inside a git hook)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    return env


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
                   cwd=repo, env=git_env(), check=True, capture_output=True, timeout=60)


def project_files() -> list[str]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_dirs = pyproject["tool"]["setuptools"]["package-dir"].values()
    return ["pyproject.toml", pyproject["project"]["readme"], ".pre-commit-hooks.yaml",
            *sorted(set(package_dirs))]


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("hook-repo")
    for name in project_files():
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, repo / name)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hook")
    return repo


def try_repo(hook_repo: Path, work: Path, files: dict[str, str]) -> subprocess.Popen[str]:
    """Start `pre-commit try-repo --verbose` on ``files`` in a new git repository ``work``."""
    work.mkdir()
    for name, text in files.items():
        (work / name).write_text(text, encoding="utf-8")
    git(work, "init", "-q")
    git(work, "add", "-A")
    return subprocess.Popen(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "mgpu-lint",
         "--color", "never", "--verbose", "--files", *files],
        cwd=work, env={**git_env(), "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        out, _ = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        return -1, f"pre-commit did not finish in {TIMEOUT} s:\n{out}"
    return proc.returncode, out


def test_hook_fails_on_a_broken_launch_and_passes_on_good_files(
        hook_repo: Path, tmp_path: Path) -> None:
    # both runs at once: each builds its own venv (try-repo uses a throw-away store)
    runs = [
        try_repo(hook_repo, tmp_path / "bad", {"serve.sh": BAD_SCRIPT}),
        try_repo(hook_repo, tmp_path / "good", {
            "serve.sh": GOOD_SCRIPT, "Dockerfile.vllm": GOOD_DOCKERFILE,
            "README.md": GOOD_MARKDOWN}),
    ]
    (bad_code, bad), (good_code, good) = [finish(p) for p in runs]
    assert bad_code == 1, bad
    assert "Failed" in bad
    assert "serve.sh:2:12: MG003 [error] unbalanced double quote" in bad
    assert good_code == 0, good
    assert "Passed" in good
    # all three files went to one mgpu-lint run (require_serial), and each had its launch
    assert "Found 0 finding(s) (0 error, 0 warning, 0 info) in 3 file(s), 3 launch(es)." in good


def readme_hook_configs() -> list[dict]:
    """The `.pre-commit-config.yaml` snippets the README shows."""
    import re

    from ruamel.yaml import YAML

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    return [YAML(typ="safe").load(b) for b in blocks if "repos:" in b]


def test_readme_snippets_match_the_hook_and_the_version() -> None:
    from ruamel.yaml import YAML

    hooks = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "mgpu-lint")
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    configs = readme_hook_configs()
    remote = [r for c in configs for r in c["repos"] if r["repo"] != "local"]
    local = [r for c in configs for r in c["repos"] if r["repo"] == "local"]
    assert remote and local
    for r in remote:
        assert r["rev"] == f"v{version}"  # the tag of this release
        assert [h["id"] for h in r["hooks"]] == ["mgpu-lint"]
        assert "OWNER" not in r["repo"]
    for r in local:
        (h,) = r["hooks"]
        assert h["entry"] == hook["entry"] and h["types_or"] == hook["types_or"]
        assert h["require_serial"] is True
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](../" not in text and "`../" not in text and "/work/" not in text


def test_readme_local_hook_runs(tmp_path: Path) -> None:
    """The README's `repo: local` snippet, as written, with pre-commit and this mgpu-lint."""
    from ruamel.yaml import YAML

    config = next(c for c in readme_hook_configs() if c["repos"][0]["repo"] == "local")
    work = tmp_path / "work"
    work.mkdir()
    stream = io.StringIO()
    YAML().dump(config, stream)
    (work / ".pre-commit-config.yaml").write_text(stream.getvalue())
    (work / "serve.sh").write_text(BAD_SCRIPT)
    (work / "notes.txt").write_text("no launch here\n")
    git(work, "init", "-q")
    git(work, "add", "-A")
    env = {**git_env(), "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
           f"{os.environ.get('PATH', '')}", "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files", "--color",
                           "never", "--verbose"], cwd=work, env=env, capture_output=True,
                          text=True, timeout=TIMEOUT)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "serve.sh:2:12: MG003 [error] unbalanced double quote" in out
    assert "notes.txt" not in out  # no type the hook takes
