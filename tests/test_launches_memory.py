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


def test_lora_slots_are_part_of_the_loaded_weights(capsys: pytest.CaptureFixture[str]) -> None:
    base = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192"
    plain = _json(capsys, "--command", base)["memory"]
    lora = _json(capsys, "--command", f"{base} --enable-lora --max-loras 4 "
                 "--max-lora-rank 64")["memory"]
    # 4 slots of rank 64, 2 bytes: per layer A/B of qkv (3 × 4096 | 4096 + 2 × 1024), o_proj
    # (4096 | 4096), gate_up (2 × 4096 | 2 × 14336), down (14336 | 4096), × 32 layers, plus
    # embed_tokens (128256 | 4096) and the logits processor (4096 | 128256)
    per_layer = 64 * (3 * 4096 + 6144 + 4096 + 4096 + 2 * 4096 + 2 * 14336 + 14336 + 4096)
    embeddings = 2 * 64 * (128256 + 4096)
    assert lora["weights_bytes_per_gpu"] - plain["weights_bytes_per_gpu"] == \
        4 * 2 * (32 * per_layer + embeddings)
    assert lora["kv_cache_bytes_per_gpu"] == plain["kv_cache_bytes_per_gpu"] - \
        (lora["weights_bytes_per_gpu"] - plain["weights_bytes_per_gpu"])


def test_lora_slots_under_tensor_parallelism(capsys: pytest.CaptureFixture[str]) -> None:
    from mgpu_lint.catalog import knowledge
    from mgpu_lint.sizing import vllm_budget as vb

    qwen = knowledge.resolve_model("Qwen/Qwen2.5-72B-Instruct").shape
    slots = vb.LoraSlots(1, 16, 2.0)  # Qwen2ForCausalLM: no embedding slots
    # tp 2: q 32 heads × 128 and 4 KV heads × 128 per rank, intermediate 29568 / 2
    per_layer = 16 * (3 * 8192 + 4096 + 2 * 512 + 4096 + 8192 + 2 * 8192 + 2 * 14784 + 14784
                      + 8192)
    assert vb.lora_stage_bytes(qwen, slots, 0, 1, 2) == 80 * per_layer * 2
    sharded = vb.LoraSlots(1, 16, 2.0, fully_sharded=True)
    assert vb.lora_stage_bytes(qwen, sharded, 0, 1, 2) < vb.lora_stage_bytes(qwen, slots, 0, 1, 2)
    # pipeline stages: the embedding slots on the first stage, the logits slots on the last
    llama = knowledge.resolve_model("meta-llama/Llama-3.1-8B-Instruct").shape
    both = vb.LoraSlots(1, 16, 2.0, embeddings=True)
    whole = vb.lora_stage_bytes(llama, both, 0, 1, 1)
    assert vb.lora_stage_bytes(llama, both, 0, 2, 1) + vb.lora_stage_bytes(llama, both, 1, 2, 1) \
        == whole


@pytest.mark.parametrize("flags", ["--lora-target-modules o_proj", "--max-lora-rank 24"])
def test_lora_the_budget_does_not_follow_keeps_memory_null(
        capsys: pytest.CaptureFixture[str], flags: str) -> None:
    dep = _json(capsys, "--command", "vllm serve meta-llama/Llama-3.1-8B-Instruct "
                f"--max-model-len 8192 --enable-lora {flags}")
    assert dep["memory"]["kv_cache_tokens"] is None


def test_decode_context_parallelism_shards_the_full_attention_kv(
        capsys: pytest.CaptureFixture[str]) -> None:
    # FullAttentionSpec.max_memory_usage_bytes (0.30.0): cdiv(max_model_len, dcp) tokens per
    # rank; the page per rank is unchanged (ModelConfig.get_num_kv_heads ignores dcp)
    base = "vllm serve deepseek-ai/DeepSeek-V2-Lite-Chat -tp 2 --max-model-len 32768"
    one = _json(capsys, "--command", base)["memory"]
    two = _json(capsys, "--command", f"{base} --decode-context-parallel-size 2")["memory"]
    assert two["kv_cache_bytes_per_gpu"] == one["kv_cache_bytes_per_gpu"]
    assert abs(two["max_concurrency"] / one["max_concurrency"] - 2) < 0.01
    bad = _json(capsys, "--command", f"{base} --decode-context-parallel-size 3")["memory"]
    assert bad["kv_cache_tokens"] is None  # tp 2 is not divisible by 3: vLLM refuses


def test_prefill_context_parallelism_on_vllms_budget(capsys: pytest.CaptureFixture[str]) -> None:
    # 0.30.0: each pcp rank holds the tp-sharded model; the KV cache is sharded only by a DCP
    # that spans the PCP axis (the scheduler sizes blocks with dcp alone, pcp_world_size=1);
    # the profile's forward runs on each rank's share of the batch
    base = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 32768"
    one = _json(capsys, "--command", base)["memory"]
    two = _json(capsys, "--command", f"{base} --prefill-context-parallel-size 2")["memory"]
    assert two["weights_bytes_per_gpu"] == one["weights_bytes_per_gpu"]
    assert two["activation_bytes"] <= one["activation_bytes"]  # the sampler run is global
    assert 1 <= two["max_concurrency"] / one["max_concurrency"] < 1.2  # not doubled
    sharded = _json(capsys, "--command", f"{base} -pcp 2 -dcp 2")["memory"]
    assert abs(sharded["max_concurrency"] / two["max_concurrency"] - 2) < 0.01
    # DCP must be 1, pcp or tp x pcp under PCP (ParallelConfig): vLLM refuses -dcp 3
    bad = _json(capsys, "--command", f"{base} -pcp 2 -dcp 3")["memory"]
    assert bad["kv_cache_tokens"] is None


def test_prefill_context_parallelism_spreads_the_experts(
        capsys: pytest.CaptureFixture[str]) -> None:
    # FusedMoEParallelConfig flattens tp x dp x pcp: the experts split over all of them
    base = "vllm serve Qwen/Qwen3-30B-A3B -tp 2 --max-model-len 8192"
    pcp = _json(capsys, "--command", f"{base} --prefill-context-parallel-size 2")["memory"]
    dp = _json(capsys, "--command", f"{base} --data-parallel-size 2")["memory"]
    tp = _json(capsys, "--command", base)["memory"]
    assert pcp["weights_bytes_per_gpu"] == dp["weights_bytes_per_gpu"] < \
        tp["weights_bytes_per_gpu"]


def test_prefill_context_parallelism_with_sliding_windows_is_not_sized(
        capsys: pytest.CaptureFixture[str]) -> None:
    # vLLM's sliding-window KV manager asserts PCP is unsupported there: no numbers, no verdict
    dep = _json(capsys, "--command", "vllm serve google/gemma-3-27b-it -tp 2 -pcp 2")
    assert dep["memory"]["kv_cache_tokens"] is None


def test_prefill_context_parallel_forward_runs_on_each_ranks_share() -> None:
    from mgpu_lint.catalog import knowledge
    from mgpu_lint.sizing import vllm_budget as vb

    shape = knowledge.resolve_model("meta-llama/Llama-3.1-8B-Instruct").shape
    # a stage without the sampler: only the forward dummy run, on tokens / pcp per rank
    whole = vb.activation_peak(shape, 8192, 256, 1, last_stage=False) - vb.ACTIVATION_BASE_BYTES
    half = vb.activation_peak(shape, 8192, 256, 1, last_stage=False, pcp=2) \
        - vb.ACTIVATION_BASE_BYTES
    assert abs(half * 2 - whole) <= 2
    # an unmeasured NCCL group (pcp without tp) takes the smaller class and widens the allowance
    assert vb.non_torch_bytes(1, 1, 2) == vb.NON_TORCH_PP_ONLY
    assert vb.PCP_NON_TORCH_SPREAD == vb.NON_TORCH_TP - vb.NON_TORCH_PP_ONLY > 0


def test_awq_int4_names_keep_awqs_zero_points(capsys: pytest.CaptureFixture[str]) -> None:
    # hugging-quants' "-AWQ-INT4" is an AutoAWQ checkpoint: vLLM 0.30.0 loads a 4-bit zero point
    # per group of 128 beside each 16-bit scale (auto_awq.py create_weights "qzeros"), so it
    # weighs what the plain "-AWQ" name weighs, and more than a GPTQ-Int4 name by those zeros
    def weights(model: str) -> int:
        dep = _json(capsys, "--gpu", "H100", "--command",
                    f"vllm serve {model} --tensor-parallel-size 2 --max-model-len 16384")
        return dep["memory"]["weights_bytes_per_gpu"]

    awq_int4 = weights("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4")
    assert awq_int4 == weights("someone/Llama-3.1-70B-Instruct-AWQ")
    gptq = weights("someone/Llama-3.1-70B-Instruct-GPTQ-Int4")
    # the quantized linear layers: everything but the two 128,256 x 8192 tables, split over tp 2
    linear = (70553706496 - 2 * 128256 * 8192) / 2
    assert abs((awq_int4 - gptq) - linear * 4 / 128 / 8) / (linear * 4 / 128 / 8) < 0.01


def test_sglang_launch_shows_its_catalog_and_layout(capsys: pytest.CaptureFixture[str],
                                                    tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An SGLang launch: the catalog its image tag pins (else the newest), and the layout
    SGLang places on the node; no vLLM memory budget."""
    compose = tmp_path / "compose.yaml"
    compose.write_text(
        "services:\n  sgl:\n    image: lmsysorg/sglang:v0.5.5-cu126\n"
        "    command: python3 -m sglang.launch_server --model-path Qwen/Qwen3-32B --tp 4 --dp 2\n"
        "    deploy:\n      resources:\n        reservations:\n          devices:\n"
        "            - {driver: nvidia, count: 8, capabilities: [gpu]}\n", "utf-8")
    code, out = _run(capsys, "--format", "json", str(compose))
    assert code == 0, out
    la = json.loads(out)["launches"][0]
    assert la["catalog"] == "sglang 0.5.5"
    assert la["release"] == {"requested": "0.5.5", "from": "image tag or pip install"}
    lay = la["deployment"]["layout"]
    assert (lay["tp"], lay["dp"], lay["gpus_per_node"], lay["known"]) == (4, 2, 8, True)
    assert "memory" not in la["deployment"]
    compose.write_text(compose.read_text("utf-8").replace("v0.5.5-cu126", "latest"), "utf-8")
    code, out = _run(capsys, str(compose))
    assert "flags: sglang 0.5.23 catalog (the newest catalogued: the image pins none)" in out
    assert "not known: the rules skip it" in out  # where --dp copies go differs per release
