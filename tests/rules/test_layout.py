from __future__ import annotations

import pytest
from mgpu_lint.cli import main
from mgpu_lint.sizing.display import fixed
from mgpu_lint.sizing.parallel import UNEVEN_WORK, route_requests

from tests.rulecheck import check_fixture, fixtures_for
from tests.rulecheck import lint_command as lint

CODES = ["MG101", "MG102", "MG103", "MG104", "MG105", "MG106", "MG107", "MG108", "MG109",
         "MG110"]


@pytest.mark.parametrize("path", fixtures_for(CODES))
def test_fixture(path: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    assert check_fixture(capsys, path) == snapshot


def test_world_size_message_carries_the_numbers(capsys) -> None:
    out = lint(capsys, "CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve meta-llama/Llama-3.1-70B-Instruct"
                       " -tp 4 -pp 2")
    assert "MG101 [error] world size 8 (tp 4 × pp 2) needs 8 GPUs on this node" in out
    assert "the command gets 4 GPUs (CUDA_VISIBLE_DEVICES at <command>:1)" in out


def test_limit_location_in_message(capsys) -> None:
    main(["--no-color", "fixtures/rules/MG101/fires-tp4-pp2-four-gpus.yaml"])
    out = capsys.readouterr().out
    assert ("world size 8 (tp 4 × pp 2) needs 8 GPUs on this node but the container gets 4 GPUs "
            "(nvidia.com/gpu limit at fires-tp4-pp2-four-gpus.yaml:33)") in out


@pytest.mark.parametrize("flags", [
    # lesson, Example 13: every layout of one 8-GPU server uses exactly 8 GPUs
    "meta-llama/Llama-3.1-70B-Instruct -tp 8",
    "meta-llama/Llama-3.1-70B-Instruct -tp 4 -pp 2",
    "meta-llama/Llama-3.1-8B-Instruct -tp 1 -dp 8",
    "Qwen/Qwen3-30B-A3B -tp 8",
    "Qwen/Qwen3-30B-A3B -tp 8 --enable-expert-parallel",
    "Qwen/Qwen3-30B-A3B -tp 1 -dp 8",
    "Qwen/Qwen3-30B-A3B -tp 1 -dp 8 --enable-expert-parallel",
    "Qwen/Qwen3-30B-A3B -tp 2 -dp 4 --enable-expert-parallel",
])
def test_example_13_layouts_use_8_gpus(flags: str, capsys) -> None:
    out = lint(capsys, f"CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 vllm serve {flags}")
    assert "MG101" not in out
    assert "[error]" not in out and "[warning]" not in out


def test_data_parallel_on_one_node(capsys) -> None:
    out = lint(capsys, "CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve "
                       "meta-llama/Llama-3.1-8B-Instruct -tp 2 -dp 4")
    assert "4 local engines (dp) × world size 2 (tp 2 × pp 1) needs 8 GPUs" in out


def test_device_ids_narrow_the_gpus(capsys) -> None:
    out = lint(capsys, "CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve meta-llama/Llama-3.1-70B-Instruct"
                       " -tp 4 --device-ids 0,1")
    assert "gets 2 GPUs (--device-ids 0,1 of 4 GPUs" in out


def test_external_rank_is_one_engine(capsys) -> None:
    out = lint(capsys, "CUDA_VISIBLE_DEVICES=1 vllm serve meta-llama/Llama-3.1-8B-Instruct "
                       "--data-parallel-size 2 --data-parallel-rank 1")
    assert "MG101" not in out


def test_ray_backend_without_a_cluster_runs_a_local_ray(capsys) -> None:
    # ray.init() with no address starts a local Ray on these GPUs, and the placement group of
    # 8 GPUs never comes (vllm/v1/executor/ray_utils.py _wait_until_pg_ready, DECISIONS "Ray")
    out = lint(capsys, "CUDA_VISIBLE_DEVICES=0 vllm serve meta-llama/Llama-3.1-70B-Instruct "
                       "-tp 8 --distributed-executor-backend ray")
    assert "MG101" in out and "waits 1,800 s for a placement group of 8 GPUs" in out


def test_ray_backend_in_a_ray_cluster_is_not_compared(capsys) -> None:
    out = lint(capsys, "RAY_ADDRESS=10.0.0.1:6379 CUDA_VISIBLE_DEVICES=0 vllm serve "
                       "meta-llama/Llama-3.1-70B-Instruct -tp 8 --distributed-executor-backend ray")
    assert "MG101" not in out


def test_unknown_count_stays_silent(capsys) -> None:
    out = lint(capsys, "docker run --gpus all vllm/vllm-openai:v0.30.0 "
                       "meta-llama/Llama-3.1-70B-Instruct -tp 4")
    assert "MG101" not in out


def test_multi_node_sizes_come_from_nnodes(capsys) -> None:
    out = lint(capsys, "vllm serve meta-llama/Llama-3.1-405B-Instruct-FP8 -tp 16 --nnodes 2 "
                       "--node-rank 0 --master-addr 10.0.0.1")
    assert "tp 16 is larger than the 8 GPUs --nnodes 2 puts on each node" in out
    assert "assuming" not in out.split("MG105", 1)[1].split("\n", 1)[0]


def test_heads_hint_names_valid_sizes(capsys) -> None:
    out = lint(capsys, "vllm serve microsoft/phi-4 -tp 4")
    assert "use -tp 2 or 5" in out


def test_example_9_routing_numbers() -> None:
    rr = route_requests(UNEVEN_WORK, 3, 100, "round-robin")
    lo = route_requests(UNEVEN_WORK, 3, 100, "least-outstanding")
    assert rr.assigned == [[0, 3, 6, 9], [1, 4, 7, 10], [2, 5, 8, 11]]
    assert (fixed(rr.mean_latency, 1), rr.max_latency) == ("601.3", 2450)
    assert lo.assigned == [[0, 7, 9, 10], [1, 2, 3, 8, 11], [4, 5, 6]]
    assert (fixed(lo.mean_latency, 1), lo.max_latency) == ("415.0", 950)


def test_mg108_names_the_first_earlier_engine_that_passes_one(tmp_path, capsys) -> None:
    """Each engine is reported with the first earlier engine on its GPU whose utilisation adds
    up with its own past 1, whatever lower or equal ones sit between them."""
    import json

    utils = [0.5, 0.3, 0.5, 0.6, 0.45, 0.2, 0.55]
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n" + "".join(
        f"CUDA_VISIBLE_DEVICES=0 vllm serve meta-llama/Llama-3.1-8B-Instruct --port {8000 + i} "
        f"--gpu-memory-utilization {u} &\n" for i, u in enumerate(utils)))
    main(["--exit-zero", "--output-format", "json", "--select", "MG108", str(script)])
    found = json.loads(capsys.readouterr().out)["findings"]
    pairs = [tuple(f["data"]["utilization"]) for f in found]
    want = []
    for i, u in enumerate(utils):
        first = next((p for p in utils[:i] if u + p > 1), None)
        if first is not None:
            want.append((u, first))
    assert want and sorted(pairs) == sorted(want)
