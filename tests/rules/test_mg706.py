"""MG706 probe-path-not-served: its fixtures, pinned with --select MG706."""

from __future__ import annotations

import pytest

from tests.rulecheck import check_fixture, fixtures_for


@pytest.mark.parametrize("path", fixtures_for(["MG706"]))
def test_fixture(path: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    assert check_fixture(capsys, path) == snapshot
