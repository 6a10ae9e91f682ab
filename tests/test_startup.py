"""What a one-file lint imports (issue 19: start-up).  Not a timing test: the modules a run loads
are what its start-up costs, and each of these was measured with `python -X importtime`
(lark + its grammars 25-40 ms, pydantic 45 ms and more, typer 45-90 ms, dataclasses with
inspect ~7 ms, importlib.resources ~5 ms, tomllib ~3 ms).  The timing itself is bench/run.py's ("one-file cold start")."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

# never needed to lint a file: validation (pydantic), the sub-commands' front end (typer, click,
# rich), the language server, the grammar compiler, package-resource machinery
NEVER = ("pydantic", "typer", "click", "rich", "pygls", "lark", "importlib.resources",
         "mgpu_lint.lsp", "mgpu_lint.commands")
# only when the run needs them: a configuration file, a did-you-mean, an internal error, a
# report format other than the one chosen, the reader of another input kind
NOT_HERE = ("tomllib", "tomli", "difflib", "traceback", "mgpu_lint.report.text",
            "mgpu_lint.report.sarif", "mgpu_lint.report.github", "mgpu_lint.sources.dockerfile",
            # records and the rule table stand in for them (~7 ms: inspect, ast, dis, tokenize)
            "dataclasses", "inspect",
            # a number printed half-up (sizing/display.py; ~3 ms), not every run
            "decimal")

SCRIPT = """
import contextlib, io, json, sys
from mgpu_lint.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)))
"""


def imported(tmp_path: Path, *argv: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", SCRIPT, *argv], capture_output=True, text=True,
                          cwd=tmp_path, check=True, timeout=120)
    return set(json.loads(proc.stdout.splitlines()[-1]))


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


@pytest.mark.parametrize("fixture", ["k8s/vllm-deployment-tp4.yaml", "shell/serve.sh"])
def test_one_file_lint_imports_only_what_it_needs(tmp_path: Path, fixture: str) -> None:
    target = tmp_path / Path(fixture).name
    shutil.copy(FIXTURES / fixture, target)  # no configuration above tmp_path
    modules = imported(tmp_path, "--exit-zero", "--output-format", "json", target.name)
    assert "mgpu_lint.report.json_report" in modules  # the run did lint and report
    assert loaded(modules, NEVER) == []
    assert loaded(modules, NOT_HERE) == []


def test_a_configuration_file_is_read_with_tomllib(tmp_path: Path) -> None:
    """The counterpart: a pyproject.toml with our table is parsed (tomllib is imported then)."""
    shutil.copy(FIXTURES / "shell" / "serve.sh", tmp_path / "serve.sh")
    (tmp_path / "pyproject.toml").write_text('[tool.mgpu-lint]\nselect = ["MG1"]\n')
    modules = imported(tmp_path, "--exit-zero", "serve.sh")
    assert {"tomllib", "tomli"} & modules
    assert "mgpu_lint.report.text" in modules
