from __future__ import annotations

import pytest

from tests.rulecheck import check_fixture, fixtures_for

CODES = [f"MG8{n:02d}" for n in range(1, 20)]


@pytest.mark.parametrize("path", fixtures_for(CODES))
def test_fixture(path: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    assert check_fixture(capsys, path) == snapshot
