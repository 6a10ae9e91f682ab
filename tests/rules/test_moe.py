from __future__ import annotations

import pytest

from mgpu_lint.cli import main
from tests.rulecheck import check_fixture, fixtures_for

CODES = ["MG401", "MG402", "MG403", "MG404", "MG405"]


@pytest.mark.parametrize("path", fixtures_for(CODES))
def test_fixture(path: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    assert check_fixture(capsys, path) == snapshot


@pytest.mark.parametrize("flags,expected", [
    # lesson Example 13: the MoE rows
    ("-tp 8", "TP=8: every expert split 8 ways"),
    ("-dp 8", "TP=8: every expert split 8 ways"),
])
def test_example_13_grouping(flags: str, expected: str, capsys) -> None:
    main(["--no-color", "--command",
          f"CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 vllm serve Qwen/Qwen3-30B-A3B {flags}"])
    assert expected in capsys.readouterr().out
