from __future__ import annotations

import json

import pytest
from mgpu_lint.catalog import knowledge
from mgpu_lint.cli import main
from mgpu_lint.sizing import memory as mem
from mgpu_lint.sizing.display import fixed

from tests.rulecheck import check_fixture, fixtures_for

CODES = ["MG301", "MG302", "MG303", "MG304", "MG305", "MG306", "MG307", "MG308", "MG309",
         "MG310"]


@pytest.mark.parametrize("path", fixtures_for(CODES))
def test_fixture(path: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    assert check_fixture(capsys, path) == snapshot


def findings(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict]:
    main(["--format", "json", "--exit-zero", *args])
    return json.loads(capsys.readouterr().out)["findings"]


def memory_findings(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict]:
    return [f for f in findings(capsys, *args) if f["code"].startswith("MG3")]


def gb(value: float) -> str:
    return fixed(value / 1e9, 1)


def test_example_1_70b_bf16_fits_four_h100_with_32_users(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert memory_findings(capsys, "--gpu", "H100 SXM", "--command",
                           "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 4 "
                           "--max-model-len 8192") == []
    # the same budget through the functions the rules call
    shape = knowledge.resolve_model("meta-llama/Llama-3.1-70B-Instruct").shape
    weights = mem.weights_bytes(shape.params, 16)
    per_gpu = mem.weights_bytes_per_gpu(weights, 0.0, tp=4)
    budget = mem.GpuBudget(80e9, 0.92, per_gpu, 0.0)
    kv = mem.kv_bytes(shape, 32, 8192, 2.0, tp=4)
    assert (gb(weights), gb(per_gpu), gb(budget.kv), gb(kv)) == ("141.2", "35.3", "38.3", "21.5")
    assert mem.memory_verdict(kv, budget.kv, budget.allowance) is None


def test_example_1_405b_bf16_does_not_fit_eight_h100(capsys: pytest.CaptureFixture[str]) -> None:
    found = memory_findings(capsys, "--gpu", "H100 SXM", "--command",
                            "vllm serve meta-llama/Llama-3.1-405B-Instruct -tp 8")
    assert [(f["code"], f["severity"]) for f in found] == [("MG301", "error")]
    data = found[0]["data"]
    assert gb(data["weights_bytes"]) == "810.0"
    assert gb(data["weights_per_gpu_bytes"]) == "101.3"
    assert gb(data["usable_bytes"]) == "73.6"


def test_assumed_gpu_is_at_most_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    found = memory_findings(capsys, "--command",
                            "vllm serve meta-llama/Llama-3.1-405B-Instruct -tp 8")
    assert [(f["code"], f["severity"]) for f in found] == [("MG301", "warning")]
    assert "assuming" in found[0]["message"]


def test_example_15_lora_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    modules = " ".join(f"team{i}=/adapters/team{i}" for i in range(20))
    found = memory_findings(capsys, "--gpu", "H100 SXM", "--command",
                            "vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora "
                            f"--max-loras 20 --lora-modules {modules}")
    assert [f["code"] for f in found] == ["MG306"]
    data = found[0]["data"]
    assert fixed(data["adapter_bytes"] / 1e6, 1) == "83.9"
    assert gb(data["base_plus_adapters_bytes"]) == "17.7"
    assert gb(data["merged_bytes"]) == "321.2"
    found = memory_findings(capsys, "--gpu", "H100 SXM", "--command",
                            "vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora "
                            "--max-loras 4 --max-lora-rank 64")
    assert fixed(found[0]["data"]["lora_bytes"] / 1e9, 2) == "1.34"


def test_kv_per_gpu_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    """70B at tp 2 on 0.95 × 79.19 GiB: vLLM leaves 3.8 GiB of KV per GPU; one 32,000-token
    request needs 4.9 GiB: vLLM's own refusal, with its estimated maximum length."""
    found = memory_findings(capsys, "--gpu", "H100 SXM", "--command",
                            "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 2 "
                            "--max-model-len 32000 --gpu-memory-utilization 0.95")
    assert [(f["code"], f["severity"]) for f in found] == [("MG302", "error")]
    data = found[0]["data"]
    assert data["kv_needed_bytes"] == 2000 * 80 * 16 * 2 * 4 * 128 * 2
    assert data["max_tokens"] == 25088
    assert "the estimated maximum model length is 25088" in found[0]["message"]


def test_no_cache_memory_is_mg301_never_mg302(capsys: pytest.CaptureFixture[str]) -> None:
    # gpt-oss-120b on one H100: the MXFP4 weights load, one 131,072-token request does not fit
    found = memory_findings(capsys, "--gpu", "H100 SXM", "--command",
                            "vllm serve openai/gpt-oss-120b")
    codes = [(f["code"], f["severity"]) for f in found]
    assert ("MG302", "error") in codes or ("MG301", "error") in codes
    assert not {"MG301", "MG302"} <= {c for c, _ in codes}


def test_8b_default_length_on_a_24gb_card_is_refused(
        capsys: pytest.CaptureFixture[str]) -> None:
    found = memory_findings(capsys, "--gpu", "RTX 4090", "--command",
                            "vllm serve meta-llama/Llama-3.1-8B-Instruct")
    assert [(f["code"], f["severity"]) for f in found] == [("MG302", "error")]
    assert "estimated maximum model length is" in found[0]["message"]


def test_fp8_kv_and_mla(capsys: pytest.CaptureFixture[str]) -> None:
    shape = knowledge.resolve_model("deepseek-ai/DeepSeek-V3").shape
    # the MLA latent is not split by tp: 61 layers × 576 values × 1 byte in FP8
    assert mem.kv_bytes_per_sequence(shape, 1, 1.0, tp=8) == 61 * 576
    found = memory_findings(capsys, "--gpu", "H200", "--command",
                            "vllm serve deepseek-ai/DeepSeek-V3 -tp 8 --kv-cache-dtype fp8 "
                            "--max-model-len 163840")
    assert found == []


def test_cpu_offload_moves_weights_off_the_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    cmd = "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 2 --max-model-len 4096"
    found = memory_findings(capsys, "--gpu", "H100 SXM", "--command",
                            cmd + " --gpu-memory-utilization 0.85")
    assert [(f["code"], f["severity"]) for f in found] == [("MG301", "error")]
    assert "No available memory for the cache blocks" in found[0]["message"]
    found = memory_findings(capsys, "--gpu", "H100 SXM", "--command",
                            cmd + " --gpu-memory-utilization 0.85 --cpu-offload-gb 20")
    assert [f["code"] for f in found] == ["MG303"]  # it starts; 25 of 32 sequences fit


def test_max_tokens_in_inverts_the_sequence_size() -> None:
    shape = knowledge.resolve_model("google/gemma-3-27b-it").shape
    for tokens in (100, 1024, 5000, 40000):
        need = mem.kv_bytes_per_sequence(shape, tokens, 2.0, tp=2)
        assert mem.max_tokens_in(shape, need, 2.0, tp=2) == tokens


def test_derived_length_follows_vllm_0_30() -> None:
    gemma = knowledge.resolve_model("google/gemma-3-27b-it").shape
    assert mem.derived_max_model_len(gemma) == 131072  # Gemma 3's length is already scaled
    llama = knowledge.resolve_model("meta-llama/Llama-3.1-8B-Instruct").shape
    linear = knowledge.RopeScaling(type="linear", factor=2.0)
    assert mem.derived_max_model_len(llama, max_positions=8192, rope_scaling=linear) == 16384


def test_llama_kv_cells() -> None:
    assert mem.llama_kv_cells(4096, 3, False, None) == 4608  # llama-notes §5
    assert mem.llama_kv_cells(8000, 4, True, None) == 8192
