"""MG201-MG204: interconnect costs, with the lesson's Example 5-7 numbers."""

from __future__ import annotations

import json

import pytest
from mgpu_lint.cli import main
from mgpu_lint.sizing.display import fixed, percent
from mgpu_lint.sizing.interconnect import (
    RING_STEP_SECONDS,
    all_reduce_cost,
    all_reduce_exceeds,
    ring_latency,
    ring_steps_per_forward,
)
from mgpu_lint.sizing.parallel import pipeline_busy_share
from mgpu_lint.sizing.timing import decode_read_time, decode_step_time, prefill_compute_time

from tests.rulecheck import check_fixture, fixtures_for

CODES = ["MG201", "MG202", "MG203", "MG204"]


@pytest.mark.parametrize("path", fixtures_for(CODES))
def test_fixture(path: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    assert check_fixture(capsys, path) == snapshot


def _findings(capsys: pytest.CaptureFixture[str], path: str, code: str) -> list[dict]:
    main(["--format", "json", path])
    out = json.loads(capsys.readouterr().out)
    return [f for f in out["findings"] if f["code"] == code]


def test_example_5_table() -> None:
    """Example 5: 70B (hidden 8,192, 80 layers) at tp 8, NVLink 450 GB/s, PCIe 4.0 31.5 GB/s."""
    rows = {1: ("0.016", "4.6", "0.01", "0.15"), 64: ("1.049", "293.6", "0.65", "9.32"),
            4096: ("67.109", "18790.5", "41.76", "596.52")}
    for tokens, (size, sent, nv, pcie) in rows.items():
        c = all_reduce_cost(tokens, 8192, 80, 8)
        assert fixed(c.size_bytes / 1e6, 3) == size
        assert fixed(c.traffic_bytes / 1e6, 1) == sent
        assert fixed(c.time_on(450e9) * 1e3, 2) == nv
        assert fixed(c.time_on(31.5e9) * 1e3, 2) == pcie
    steps = ring_steps_per_forward(80, 8)
    assert steps == 2240
    assert [fixed(ring_latency(steps, s) * 1e3, 2) for s in RING_STEP_SECONDS] == ["2.24", "11.20"]
    read = decode_read_time(70.6e9 * 2, 3.35e12, 8)
    assert fixed(70.6e9 * 2 / 8 / 1e9, 2) == "17.65" and fixed(read * 1e3, 2) == "5.27"
    assert fixed(prefill_compute_time(70.6e9, 4096, 8, 989e12) * 1e3, 1) == "73.1"
    busy = all_reduce_cost(64, 8192, 80, 8)
    assert fixed(decode_step_time(read, busy.time_on(31.5e9)) * 1e3, 1) == "14.6"
    assert fixed(decode_step_time(read, busy.time_on(450e9)) * 1e3, 1) == "5.9"
    # DECISIONS: warning when PCIe at batch 64 exceeds a quarter of the weight read
    assert all_reduce_exceeds(busy.time_on(31.5e9), read)
    assert not all_reduce_exceeds(busy.time_on(450e9), read)


def test_mg201_prints_example_5_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    [f] = _findings(capsys, "fixtures/rules/MG201/fires-70b-tp8-l40s.yaml", "MG201")
    assert f["severity"] == "warning"
    assert "293.6 MB per GPU" in f["message"] and "9.32 ms" in f["message"]
    math = "\n".join(f["math"])
    for text in ("0.016 MB per all-reduce, 4.6 MB sent per GPU: 0.01 ms", "0.15 ms on PCIe 4.0",
                 "1.049 MB per all-reduce, 293.6 MB sent per GPU: 0.65 ms",
                 "67.109 MB per all-reduce, 18790.5 MB sent per GPU: 41.76 ms",
                 "596.52 ms on PCIe 4.0", "141.2 GB / (tp 8 × pp 1) = 17.65 GB"):
        assert text in math


def test_mg201_bridgeable_card_is_info(capsys: pytest.CaptureFixture[str]) -> None:
    [f] = _findings(capsys, "fixtures/rules/MG201/fires-bridgeable-a100-pcie.yaml", "MG201")
    assert f["severity"] == "info" and "unless the GPUs are bridged" in f["message"]


def test_mg203_busy_share(capsys: pytest.CaptureFixture[str]) -> None:
    """Examples 6-7: 4 stages, 4 micro-batches = 57.1%; 2 in flight = 40.0% (m/(m+p−1))."""
    assert percent(pipeline_busy_share(4, 4)) == "57.1%"
    [f] = _findings(capsys, "fixtures/rules/MG203/fires-max-num-seqs-below-stages.sh", "MG203")
    assert "40.0%" in f["message"]


def test_mg204_latency(capsys: pytest.CaptureFixture[str]) -> None:
    [f] = _findings(capsys, "fixtures/rules/MG204/fires-disable-custom-ar-h100.yaml", "MG204")
    math = "\n".join(f["math"])
    assert "160 all-reduces × 14 steps = 2240" in math
    assert "2.24 ms per decode step, against a 5.27 ms weight read" in math
