from __future__ import annotations

import json

import pytest
from mgpu_lint.cli import main
from mgpu_lint.sizing.display import fixed
from mgpu_lint.sizing.operations import LOAD_SOURCES, backlog, example_cold_start, load_time

from tests.rulecheck import check_fixture, fixtures_for

CODES = ["MG701", "MG702", "MG703", "MG704", "MG705"]


@pytest.mark.parametrize("path", fixtures_for(CODES))
def test_fixture(path: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    assert check_fixture(capsys, path) == snapshot


def test_example_17_table() -> None:
    """Example 17: load and cold start from four sources for 8B BF16 and 70B FP8."""
    expected = {16.1e9: [("128.8", "188.8"), ("16.1", "76.1"), ("5.4", "65.4"), ("1.6", "61.6")],
                70.6e9: [("564.8", "624.8"), ("70.6", "130.6"), ("23.5", "83.5"),
                         ("7.1", "67.1")]}
    for size, rows in expected.items():
        for (_, rate), (load, total) in zip(LOAD_SOURCES, rows, strict=True):
            assert fixed(load_time(size, rate), 1) == load
            assert fixed(example_cold_start(size, rate), 1) == total
    assert [fixed(backlog(5, 2, c), 0) for c in (70, 600)] == ["210", "1800"]


def test_mg703_estimate(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--format", "json", "fixtures/rules/MG703/fires-hub-no-cache.yaml"])
    [f] = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["code"] == "MG703"]
    assert "16.1 GB at 1 Gb/s" in f["message"]
    assert any("local NVMe, 3 GB/s: 16.1 GB / 3 GB/s = 5.4 s load" in m for m in f["math"])
