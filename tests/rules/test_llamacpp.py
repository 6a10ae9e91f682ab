"""MG501-MG507: llama.cpp placement, with the lesson's Example 11 table."""

from __future__ import annotations

import json

import pytest
from mgpu_lint.cli import main
from mgpu_lint.sizing.llamacpp import (
    describe_layer_split,
    device_names,
    effective_proportions,
    layer_split,
)

from tests.rulecheck import check_fixture, fixtures_for

CODES = ["MG501", "MG502", "MG503", "MG504", "MG505", "MG506", "MG507"]


@pytest.mark.parametrize("path", fixtures_for(CODES))
def test_fixture(path: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    assert check_fixture(capsys, path) == snapshot


EXAMPLE_11 = [
    ("-ngl 99 -ts 1,1", 99, [1, 1],
     "GPU0 layers 0-16 (17), GPU1 layers 17-31 (15), output on GPU1"),
    ("-ngl 99 -ts 3,1", 99, [3, 1],
     "GPU0 layers 0-24 (25), GPU1 layers 25-31 (7), output on GPU1"),
    ("-ngl 99, free 22/10 GB", 99, [22, 10],
     "GPU0 layers 0-22 (23), GPU1 layers 23-31 (9), output on GPU1"),
    ("-ngl 20 -ts 1,1", 20, [1, 1],
     "CPU layers 0-12 (13), GPU0 layers 13-22 (10), GPU1 layers 23-31 (9), output on GPU1"),
    ("-ngl 99 -ts 1,1,1", 99, [1, 1, 1],
     "GPU0 layers 0-10 (11), GPU1 layers 11-21 (11), GPU2 layers 22-31 (10), output on GPU2"),
]


@pytest.mark.parametrize(("label", "ngl", "split", "expected"), EXAMPLE_11)
def test_example_11_table(label: str, ngl: int, split: list[float], expected: str) -> None:
    assert describe_layer_split(layer_split(32, ngl, [float(x) for x in split])) == expected


def test_device_order_and_padding() -> None:
    assert device_names(2, 2) == ["RPC0", "RPC1", "CUDA0", "CUDA1"]
    assert effective_proportions([3, 1, 1], 2) == [3, 1]
    assert effective_proportions([1], 3) == [1, 0.0, 0.0]


def _findings(capsys: pytest.CaptureFixture[str], path: str, code: str) -> list[dict]:
    main(["--format", "json", path])
    out = json.loads(capsys.readouterr().out)
    return [f for f in out["findings"] if f["code"] == code]


def test_mg501_prints_example_11(capsys: pytest.CaptureFixture[str]) -> None:
    [f] = _findings(capsys, "fixtures/rules/MG501/fires-uneven-ts.sh", "MG501")
    assert "CUDA0 layers 0-24 (25), CUDA1 layers 25-31 (7), output on CUDA1" in f["message"]
    assert any("= 0.75, 1 (float32)" in m for m in f["math"])


def test_mg504_severity_follows_split_mode(capsys: pytest.CaptureFixture[str]) -> None:
    [err] = _findings(capsys, "fixtures/rules/MG504/fires-main-gpu-past-devices.yaml", "MG504")
    [info] = _findings(capsys, "fixtures/rules/MG504/fires-ignored-in-layer-mode.sh", "MG504")
    assert (err["severity"], info["severity"]) == ("error", "info")


def test_mg505_one_info_per_launch(capsys: pytest.CaptureFixture[str]) -> None:
    found = _findings(capsys, "fixtures/rules/MG505/fires-no-ts-fit.yaml", "MG505")
    assert len(found) == 1 and "--fit decides" in found[0]["message"]
