from __future__ import annotations

import pytest

from mgpu_lint.cli import main
from tests.rulecheck import check_fixture, fixtures_for

CODES = ["MG101", "MG102", "MG103", "MG104", "MG105", "MG106", "MG107", "MG108", "MG109"]


@pytest.mark.parametrize("path", fixtures_for(CODES))
def test_fixture(path: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    assert check_fixture(capsys, path) == snapshot


def lint(capsys: pytest.CaptureFixture[str], command: str) -> str:
    main(["--no-color", "--command", command])
    return capsys.readouterr().out


def test_world_size_message_carries_the_numbers(capsys) -> None:
    out = lint(capsys, "CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve meta-llama/Llama-3.1-70B-Instruct"
                       " -tp 4 -pp 2")
    assert "MG101 [error] world size 8 (tp 4 × pp 2) needs 8 GPUs" in out
    assert "gets 4 GPUs (CUDA_VISIBLE_DEVICES at line 1)" in out


def test_data_parallel_on_one_node(capsys) -> None:
    # Example 13: -tp 2 -dp 4 is 8 GPUs on one node
    out = lint(capsys, "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 vllm serve "
                       "meta-llama/Llama-3.1-8B-Instruct -tp 2 -dp 4")
    assert "MG101" not in out
    out = lint(capsys, "CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve "
                       "meta-llama/Llama-3.1-8B-Instruct -tp 2 -dp 4")
    assert "4 local engines (dp) × world size 2" in out


def test_external_rank_is_one_engine(capsys) -> None:
    out = lint(capsys, "CUDA_VISIBLE_DEVICES=1 vllm serve meta-llama/Llama-3.1-8B-Instruct "
                       "--data-parallel-size 2 --data-parallel-rank 1")
    assert "MG101" not in out


def test_ray_backend_is_not_compared(capsys) -> None:
    out = lint(capsys, "CUDA_VISIBLE_DEVICES=0 vllm serve meta-llama/Llama-3.1-70B-Instruct "
                       "-tp 8 --distributed-executor-backend ray")
    assert "MG101" not in out
