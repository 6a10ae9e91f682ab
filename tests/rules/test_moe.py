from __future__ import annotations

import pytest

from tests.rulecheck import check_fixture, fixtures_for
from tests.rulecheck import lint_command as lint

CODES = ["MG401", "MG402", "MG403", "MG404", "MG405"]
EIGHT_GPUS = "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7"


@pytest.mark.parametrize("path", fixtures_for(CODES))
def test_fixture(path: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    assert check_fixture(capsys, path) == snapshot


@pytest.mark.parametrize("flags,expected", [
    # lesson, Example 13: the MoE rows without expert parallelism
    ("-tp 8", "TP=8: every expert split 8 ways"),
    ("-tp 1 -dp 8", "TP=8: every expert split 8 ways"),
])
def test_example_13_sliced(flags: str, expected: str, capsys) -> None:
    out = lint(capsys, f"{EIGHT_GPUS} vllm serve Qwen/Qwen3-30B-A3B {flags}")
    assert f"MG401 [info] Qwen3-30B-A3B has 128 experts and no --enable-expert-parallel: its MoE " \
           f"layers run as {expected}" in out


@pytest.mark.parametrize("flags,expected", [
    # lesson, Example 13: with -ep the same 8 GPUs hold 1/8 of the experts each
    ("-tp 1 -dp 8 --enable-expert-parallel", "tp 1 × dp 8 = 8 GPUs: EP=8: each GPU holds 1/8"),
    ("-tp 2 -dp 4 --enable-expert-parallel", "tp 2 × dp 4 = 8 GPUs: EP=8: each GPU holds 1/8"),
])
def test_example_13_expert_parallel(flags: str, expected: str, capsys) -> None:
    out = lint(capsys, f"{EIGHT_GPUS} vllm serve Qwen/Qwen3-30B-A3B {flags}")
    assert "MG401" not in out
    assert expected in out  # MG405's grouping line


def test_example_8_imbalance_in_eplb_hint(capsys) -> None:
    out = lint(capsys, "vllm serve Qwen/Qwen3-30B-A3B -tp 8 --enable-expert-parallel")
    assert "busiest 34 / mean 16 = imbalance 2.13" in out


def test_example_14_moe_layout_is_quiet(capsys) -> None:
    # lesson, Example 14: MoE 235B FP8 on 8 x 80 GB -> TP=8 with expert parallelism
    out = lint(capsys, "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 vllm serve "
                       "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 -tp 8 --enable-expert-parallel")
    assert "[error]" not in out and "[warning]" not in out
    assert "MG401" not in out and "MG403" not in out


def test_redundant_experts_as_string(capsys) -> None:
    # pydantic coerces "4" like 4: 128 + 4 over 8 ranks is uneven
    out = lint(capsys, "vllm serve Qwen/Qwen3-30B-A3B -dp 8 --enable-expert-parallel "
                       "--enable-eplb --eplb-config '{\"num_redundant_experts\": \"4\"}'")
    assert "MG403 [error] 128 + 4 redundant = 132 experts over an EP group of 8" in out


def test_uneven_placement_counts(capsys) -> None:
    out = lint(capsys, "vllm serve Qwen/Qwen3-30B-A3B -dp 3 --enable-expert-parallel")
    assert "2 rank(s) hold 43 experts and 1 hold 42" in out
