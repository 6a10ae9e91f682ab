from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SHARED = ROOT.parent / "shared"  # the product documents and corpus; absent in a user's clone
DATA = ROOT / "tests" / "data"  # reference dumps the tests compare against (see tests/data/README.md)


@pytest.fixture(autouse=True)
def _run_from_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths in reports are as given on the command line: run every test from the repo root."""
    monkeypatch.chdir(ROOT)


def fixture_files() -> list[str]:
    """Reader fixtures (rule fixtures under fixtures/rules/ have their own tests)."""
    return sorted(
        str(p.relative_to(ROOT)) for p in FIXTURES.rglob("*")
        if p.is_file() and not p.name.startswith(".")
        and "rules" not in p.relative_to(FIXTURES).parts[:1]
    )
