"""The real deployment files in ../shared/corpus: never a traceback, never an internal error."""

from __future__ import annotations

import pytest
from mgpu_lint.cli import main

from tests.conftest import SHARED

CORPUS = SHARED / "corpus" / "files"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")


def test_corpus_lints_without_internal_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--no-color", "--exit-zero", str(CORPUS)])
    out = capsys.readouterr().out
    assert code == 0
    assert "MG000" not in out
    assert "Traceback" not in out


def test_corpus_launches(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["launches", str(CORPUS)])
    out = capsys.readouterr().out
    assert code == 0
    count = int(out.strip().rsplit("\n", 1)[-1].split()[0])
    assert count >= 40
