"""`launches` shows the resolved deployment and vLLM's memory budget (issue 16)."""

from __future__ import annotations

import json

import pytest
from mgpu_lint.cli import main

KEYS = {"gpu_memory_bytes", "requested_bytes", "weights_bytes_per_gpu", "activation_bytes",
        "non_torch_bytes", "cudagraph_bytes", "kv_cache_bytes_per_gpu", "kv_cache_tokens",
        "max_concurrency"}


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["launches", *args])
    return code, capsys.readouterr().out


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    code, out = _run(capsys, "--format", "json", *args)
    assert code == 0, out
    return json.loads(out)["launches"][0]["deployment"]


def test_memory_object_in_integer_bytes_like_vllm_logs(capsys: pytest.CaptureFixture[str]) -> None:
    dep = _json(capsys, "--command", "vllm serve meta-llama/Llama-3.1-8B-Instruct "
                "--gpu-memory-utilization 0.95 --max-model-len 8192", "--target-version", "0.19.1")
    mem = dep["memory"]
    assert set(mem) == KEYS
    assert all(isinstance(mem[k], int) for k in KEYS - {"max_concurrency"})
    assert mem["gpu_memory_bytes"] == int(79.19 * (1 << 30))
    assert mem["cudagraph_bytes"] == 0  # 0.19 logs the estimate without subtracting it
    # the calibration start-up logged 476,016 tokens
    assert abs(mem["kv_cache_tokens"] / 476016 - 1) < 0.05
    assert dep["gpu"]["origin"] == "default" and dep["gpu"]["assumed"]


def test_gpu_option_and_eager_reach_the_budget(capsys: pytest.CaptureFixture[str]) -> None:
    dep = _json(capsys, "--gpu", "L4", "--command",
                "vllm serve meta-llama/Llama-3.1-8B-Instruct --enforce-eager")
    assert dep["gpu"] == {"type": "l4", "name": "NVIDIA L4 24GB", "origin": "--gpu",
                          "assumed": False, "cuda_memory_catalogued": False}
    assert dep["memory"]["cudagraph_bytes"] == 0
    assert dep["max_model_len"] == 131072
    assert dep["memory"]["max_concurrency"] < 1  # one 131,072-token request does not fit


def test_unknown_model_leaves_memory_null(capsys: pytest.CaptureFixture[str]) -> None:
    dep = _json(capsys, "--command", "vllm serve acme/unknown-model-7b")
    assert dep["memory"]["kv_cache_tokens"] is None
    assert dep["memory"]["gpu_memory_bytes"] is not None


def test_text_form_prints_vllm_log_lines(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "--command",
                     "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192")
    assert code == 0
    assert "GPU KV cache size: " in out
    assert "Maximum concurrency for 8,192 tokens per request: " in out


def test_bad_gpu_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _run(capsys, "--gpu", "Z9000", "--command", "vllm serve x")
    assert code == 2
