from __future__ import annotations

import pytest

from tests.rulecheck import check_fixture, fixtures_for

CODES = ["MG820", "MG821", "MG822", "MG823", "MG824", "MG825", "MG826"]


@pytest.mark.parametrize("path", fixtures_for(CODES))
def test_fixture(path: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    assert check_fixture(capsys, path) == snapshot
