"""Whole trees through the linter: never a traceback, never an internal error (MG000).

The in-repo fixture tree always runs.  The corpus of real third-party deployment files is not in the
repository (it is not ours to redistribute); when a checkout has it beside the repo
(``../shared/corpus/files``) or ``MGPU_LINT_CORPUS`` names a directory, the same checks run over it
too, otherwise those two cases are skipped with that reason.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mgpu_lint.cli import main

from tests.conftest import FIXTURES, SHARED

CORPUS = Path(os.environ.get("MGPU_LINT_CORPUS") or SHARED / "corpus" / "files")
TREES = [pytest.param(FIXTURES, 150, id="fixtures"),
         pytest.param(CORPUS, 40, id="corpus", marks=pytest.mark.skipif(
             not CORPUS.is_dir(), reason=f"optional third-party corpus not present at {CORPUS}"))]


@pytest.mark.parametrize("tree, _launches", TREES)
def test_tree_lints_without_internal_errors(tree: Path, _launches: int,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--no-color", "--exit-zero", str(tree)])
    out = capsys.readouterr().out
    assert code == 0
    assert "MG000" not in out
    assert "Traceback" not in out


@pytest.mark.parametrize("tree, launches", TREES)
def test_tree_launches(tree: Path, launches: int, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["launches", str(tree)])
    out = capsys.readouterr().out
    assert code == 0
    count = int(out.strip().rsplit("\n", 1)[-1].split()[0])
    assert count >= launches
