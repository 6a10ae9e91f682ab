from __future__ import annotations

import pytest

from tests.rulecheck import check_fixture, fixtures_for

CODES = ["MG601", "MG602", "MG603", "MG604", "MG605", "MG606"]


@pytest.mark.parametrize("path", fixtures_for(CODES))
def test_fixture(path: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    assert check_fixture(capsys, path) == snapshot
