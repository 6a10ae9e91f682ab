"""`mgpu-lint plan`: Example 1's rows and Example 14's layouts through the command."""

from __future__ import annotations

import json

import pytest
import typer
from mgpu_lint.commands import plan
from mgpu_lint.sizing.display import fixed
from typer.testing import CliRunner

runner = CliRunner()


def _app() -> typer.Typer:
    app = typer.Typer()
    plan.register(app)

    @app.command("noop")
    def noop() -> None:
        """A second command keeps `plan` a sub-command, as in the real CLI."""

    return app


def run(*args: str) -> dict:
    result = runner.invoke(_app(), ["plan", *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


EXAMPLE_1 = [
    ("Llama-3.1-8B", "16", "16.1 34.4 50.4 1 4.8 4.8"),
    ("Llama-3.1-8B", "8", "8.0 34.4 42.4 1 2.4 2.4"),
    ("Llama-3.1-8B", "4.5", "4.5 34.4 38.9 1 1.3 1.3"),
    ("Llama-3.1-70B", "16", "141.2 85.9 227.1 4 42.1 10.5"),
    ("Llama-3.1-70B", "8", "70.6 85.9 156.5 3 21.1 7.0"),
    ("Llama-3.1-70B", "4.5", "39.7 85.9 125.6 2 11.9 5.9"),
    ("Llama-3.1-405B", "16", "810.0 135.3 945.3 14 241.8 17.3"),
    ("Llama-3.1-405B", "8", "405.0 135.3 540.3 8 120.9 15.1"),
    ("Llama-3.1-405B", "4.5", "227.8 135.3 363.1 6 68.0 11.3"),
]


@pytest.mark.parametrize(("model", "bits", "expected"), EXAMPLE_1)
def test_example_1_rows(model: str, bits: str, expected: str) -> None:
    p = run("--model", model, "--bits", bits)
    got = [fixed(p["weights_gb"], 1), fixed(p["kv_gb"], 1), fixed(p["total_gb"], 1),
           str(p["gpus_needed"]), fixed(p["read_ms_one_gpu"], 1), fixed(p["read_ms_split"], 1)]
    assert " ".join(got) == expected


def test_defaults_are_the_lessons() -> None:
    p = run("--model", "meta-llama/Llama-3.1-70B-Instruct")
    assert (p["gpu"], p["users"], p["context"], p["usable_fraction"]) == ("h100-sxm", 32, 8192, 0.9)
    assert p["usable_gb_per_gpu"] == pytest.approx(72.0)
    assert p["kv_per_token_kib"] == 320
    assert p["precision"] == {"bits": 16.0, "label": "bfloat16", "origin": "checkpoint"}
    assert p["weights_gb"] == pytest.approx(141.2)  # raw floats in JSON


def test_text_prints_the_lesson_row() -> None:
    result = runner.invoke(_app(), ["plan", "--model", "Llama-3.1-70B"])
    assert result.exit_code == 0
    assert "16.0       141.2   85.9     227.1     4           42.1            10.5" in result.stdout
    assert "KV cache per token, Llama-3.1-70B-Instruct: 320 KiB" in result.stdout
    assert "needs 3 GPU(s) -> TP=4, 2 replicas (DP)" in result.stdout


EXAMPLE_14 = [
    (["--model", "Llama-3.1-8B"], "needs 1 GPU(s) -> no split, 8 replicas (DP)"),
    (["--model", "Llama-3.1-70B"], "needs 3 GPU(s) -> TP=4, 2 replicas (DP)"),
    (["--model", "Qwen/Qwen2.5-32B-Instruct", "--bits", "4.5", "--gpu", "rtx-4090",
      "--gpus-per-node", "2"], "needs 2 GPU(s) -> PP=2 (PCIe: communicate once per stage)"),
    (["--model", "meta-llama/Llama-3.1-405B-Instruct-FP8", "--nodes", "2"],
     "needs 9 GPU(s) -> TP=8 inside a node, PP=2 across nodes"),
    (["--model", "Qwen/Qwen3-235B-A22B-FP8"],
     "needs 5 GPU(s) -> TP=8, expert parallel for the MoE layers"),
    (["--model", "meta-llama/Llama-3.1-405B-Instruct-FP8"],
     "does not fit: 9 GPUs needed, 8 present"),
]


@pytest.mark.parametrize(("args", "expected"), EXAMPLE_14)
def test_example_14_layouts(args: list[str], expected: str) -> None:
    assert run(*args)["layout"]["description"] == expected


def test_layout_and_commands() -> None:
    p = run("--model", "Llama-3.1-70B")
    lay = p["layout"]
    assert (lay["need"], lay["gpus"], lay["tp"], lay["pp"], lay["dp"]) == (3, 4, 4, 1, 2)
    assert p["commands"]["vllm"] == [
        "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 4 -dp 2 --max-model-len 8192"]
    # the same two replicas of tp 4 as SGLang places them (dp rank r from GPU r x tp x pp)
    assert p["commands"]["sglang"] == [
        "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct"
        " --tp-size 4 --dp-size 2 --context-length 8192 --host 0.0.0.0 --port 30000"]
    assert len(p["commands"]["llama_server"]) == 2
    assert p["all_reduce"]["tp"] == 4
    # the table's 4, the layout's "needs 3" and the commands' 8 GPUs, in one sentence
    note = p["counts_note"]
    assert "= 4 GPU(s) for the weights plus the KV cache of 32 users" in note
    assert "40% of each GPU kept free (3 GPU(s)), rounded up to a power of two: 4 GPU(s)" in note
    assert note.endswith("the commands fill the 8 GPUs present with 2 replicas of 4")


def test_what_vllm_would_leave_on_the_layout() -> None:
    # the suggested command through vLLM 0.30.0's budget: 0.92 of the 79.19 GiB CUDA reports
    v = run("--model", "Llama-3.1-70B")["vllm_budget"]
    assert (v["release"], v["max_model_len"], v["cuda_memory_catalogued"]) == ("0.30.0", 8192,
                                                                              True)
    assert v["requested_bytes"] == -(-v["gpu_memory_bytes"] * 92 // 100)
    assert abs(v["kv_cache_tokens"] / 8192 - v["max_concurrency"]) < 0.01
    assert 54 <= v["max_concurrency"] < 56  # the textbook note: about 54 users per replica
    result = runner.invoke(_app(), ["plan", "--model", "Llama-3.1-70B"])
    assert ("vLLM 0.30.0 with the vllm command below: requests 72.85 GiB of 79.19 GiB per GPU"
            in result.stdout)
    # BF16 weights of a 32B model over two 24 GB cards: the command as written does not start
    q = run("--model", "Qwen/Qwen2.5-32B-Instruct", "--bits", "4.5", "--gpu", "rtx-4090",
            "--gpus-per-node", "2")["vllm_budget"]
    assert q["kv_cache_bytes_per_gpu"] <= 0 and not q["cuda_memory_catalogued"]
    assert run("--model", "meta-llama/Llama-3.1-405B-Instruct")["vllm_budget"] is None


def test_multi_node_commands_and_served_name() -> None:
    p = run("--model", "meta-llama/Llama-3.1-405B-Instruct-FP8", "--nodes", "2")
    assert p["commands"]["vllm"] == [
        ("vllm serve meta-llama/Llama-3.1-405B-Instruct-FP8 -tp 8 -pp 2 --max-model-len 8192 "
         "--nnodes 2 --node-rank 0 --master-addr 10.0.0.1"),
        ("vllm serve meta-llama/Llama-3.1-405B-Instruct-FP8 -tp 8 -pp 2 --max-model-len 8192 "
         "--nnodes 2 --node-rank 1 --master-addr 10.0.0.1 --headless")]
    # SGLang: tp inside a node, pp across nodes; every rank names node 0's address and port
    assert p["commands"]["sglang"] == [
        ("python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-405B-Instruct-FP8"
         " --tp-size 8 --pp-size 2 --context-length 8192 --host 0.0.0.0 --port 30000"
         f" --nnodes 2 --node-rank {rank} --dist-init-addr 10.0.0.1:20000") for rank in (0, 1)]
    assert p["commands"]["llama_server"] == []
    assert "ceil((weights + KV cache) / usable memory per GPU) = 8 GPU(s)" in p["counts_note"]


def test_quantize_online_and_gguf_names() -> None:
    p = run("--model", "Llama-3.1-70B", "--bits", "8")
    assert "--quantization fp8" in p["commands"]["vllm"][0]
    assert "Llama-3.1-70B-Instruct-Q8_0.gguf" in p["commands"]["llama_server"][0]
    assert "--quantization fp8" in p["commands"]["sglang"][0]
    g = run("--model", "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf")
    assert g["precision"]["bits"] == 4.8944
    assert g["commands"]["vllm"][0].startswith("vllm serve meta-llama/Llama-3.1-8B-Instruct")
    assert "Llama-3.1-8B-Instruct-Q4_K_M.gguf" in g["commands"]["llama_server"][0]


PLANS = (["--model", "Llama-3.1-70B"], ["--model", "Llama-3.1-8B"],
         ["--model", "meta-llama/Llama-3.1-405B-Instruct-FP8", "--nodes", "2"],
         ["--model", "Qwen/Qwen3-235B-A22B-FP8"], ["--model", "openai/gpt-oss-120b"])
# more layouts for the SGLang commands: pp and replicas on one node, online FP8, dtypes
SGLANG_PLANS = PLANS + (
         ["--model", "Qwen/Qwen2.5-32B-Instruct", "--bits", "4.5", "--gpu", "rtx-4090",
          "--gpus-per-node", "4"],
         ["--model", "Llama-3.1-70B", "--bits", "8"],
         ["--model", "Llama-3.1-8B", "--dtype", "float16", "--kv-cache-dtype", "fp8_e4m3"])

NO_SGLANG: tuple[list[str], ...] = ()


def test_suggested_commands_lint_clean() -> None:
    from mgpu_lint.runner import Options, lint

    for args in SGLANG_PLANS:
        commands = run(*args)["commands"]
        assert bool(commands["sglang"]) == (args not in NO_SGLANG), args
        llama = commands["llama_server"] if args in PLANS else []
        for command in commands["vllm"] + commands["sglang"] + llama:
            findings = lint([], Options(), command=command).findings
            bad = [(f.code, f.message) for f in findings if f.severity.value != "info"]
            assert bad == [], command


def _compose(command: str, release: str, gpus: int) -> str:
    return (f"services:\n  sglang:\n    image: lmsysorg/sglang:v{release}\n"
            f"    command: {command}\n    ipc: host\n"
            "    deploy:\n      resources:\n        reservations:\n          devices:\n"
            f"            - {{driver: nvidia, count: {gpus}, capabilities: [gpu]}}\n")


@pytest.mark.parametrize("release", ["0.5.5", "0.5.23"])
def test_sglang_commands_fill_the_node_as_sglang_places_them(tmp_path, release: str) -> None:
    # each suggested SGLang command in a container with the plan's GPUs per node is clean;
    # one GPU fewer and SGLang's placement (MG101) says a scheduler has no GPU — where the
    # release's placement is known (dp replicas: 0.5.5)
    from mgpu_lint.runner import Options, lint

    short_seen = 0
    for args in SGLANG_PLANS:
        p = run(*args)
        per_node = p["layout"]["gpus_per_node"]
        for i, command in enumerate(p["commands"]["sglang"]):
            path = tmp_path / f"compose-{len(args)}-{i}.yaml"
            path.write_text(_compose(command, release, per_node))
            findings = lint([str(path)], Options()).findings
            bad = [(f.code, f.message) for f in findings if f.severity.value != "info"]
            assert bad == [], command
            path.write_text(_compose(command, release, per_node - 1))
            codes = {f.code for f in lint([str(path)], Options()).findings}
            if "--dp-size" not in command or release == "0.5.5":
                assert "MG101" in codes, command
                short_seen += 1
    assert short_seen >= 2


def test_sglang_fp8_moe_keeps_experts_whole() -> None:
    # tp 8 would split each of Qwen3-235B's experts (1536 rows) into 192, not a multiple of the
    # FP8 block of 128: --ep-size 8 puts 16 of its 128 experts whole on each GPU
    p = run("--model", "Qwen/Qwen3-235B-A22B-FP8")
    assert p["commands"]["sglang"] == [
        "python3 -m sglang.launch_server --model-path Qwen/Qwen3-235B-A22B-FP8 --tp-size 8 "
        "--ep-size 8 --context-length 8192 --host 0.0.0.0 --port 30000"]
    # a bf16 MoE keeps tp-sharded experts: no --ep-size
    assert "--ep-size" not in run("--model", "Qwen/Qwen3-30B-A3B")["commands"]["sglang"][0]


@pytest.mark.parametrize(("args", "note"), [
    (["--model", "Llama-3.1-8B", "--kv-cache-dtype", "fp8"],
     "no SGLang command: SGLang 0.5.23 has no --kv-cache-dtype fp8"),
    # Gemma 3's SGLang class takes no pp_proxy_tensors: SGLang refuses --pp-size 2
    (["--model", "google/gemma-3-27b-it", "--bits", "4.5", "--gpu", "rtx-4090",
      "--gpus-per-node", "2"],
     "no SGLang command: the layout uses pp 2"),
    # 40 heads and 10 KV heads over tp 4: SGLang's attention asserts both divide evenly
    (["--model", "microsoft/Phi-3-medium-4k-instruct", "--gpu", "t4", "--interconnect",
      "nvlink"], "no SGLang command: at tp 4 SGLang's attention layers cannot split 40 heads"),
])
def test_no_sglang_command_where_sglang_would_refuse(args: list[str], note: str) -> None:
    p = run(*args)
    assert p["commands"]["sglang"] == [] and p["commands"]["vllm"]
    assert any(n.startswith(note) for n in p["notes"]), p["notes"]


@pytest.mark.parametrize(("args", "message"), [
    (["--model", "no-such-model"], "unknown model 'no-such-model'; known models: "),
    (["--model", "Llama-3.1-8B", "--gpu", "tpu"], "unknown GPU 'tpu'; known GPUs: a10, "),
    (["--model", "Llama-3.1-8B", "--bits", "8", "--dtype", "float16"], "not both"),
    (["--model", "Llama-3.1-8B", "--kv-cache-dtype", "fp3"], "unknown --kv-cache-dtype"),
    (["--model", "Llama-3.1-8B", "--interconnect", "wifi"], "nvlink or pcie"),
    (["--model", "Llama-3.1-8B", "--format", "xml"], "is not one of 'text', 'json'"),
    # a -ts entry and a device id per GPU of the node: 10^9 took 3.9 GB and a traceback
    (["--model", "Llama-3.1-8B", "--gpus-per-node", "1000000000"], "'--gpus-per-node'"),
])
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    result = runner.invoke(_app(), ["plan", *args])
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stdout == ""


def test_local_config_directory(tmp_path) -> None:
    cfg = {"hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 16,
           "num_key_value_heads": 4, "intermediate_size": 8192, "vocab_size": 32000,
           "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    p = run("--model", str(tmp_path), "--context", "4096")
    assert p["kv_per_token_kib"] == 2 * 16 * 4 * 128 * 2 / 1024
    assert p["gpus_needed"] == 1


@pytest.mark.parametrize("args", [
    ["--model", "Llama-3.1-70B"],
    ["--model", "meta-llama/Llama-3.1-405B-Instruct-FP8", "--nodes", "2"],
    ["--model", "openai/gpt-oss-120b", "--gpu", "L40S", "--gpus-per-node", "4"],
    ["--model", "meta-llama/Llama-3.1-405B-Instruct"],
])
def test_text_snapshot(args: list[str], snapshot) -> None:
    result = runner.invoke(_app(), ["plan", *args])
    assert result.exit_code == 0
    assert result.stdout == snapshot


def test_no_llama_server_command_that_llama_server_refuses() -> None:
    """A layout of more than 15 GPUs would need a -ts of that many entries: llama-server
    refuses 16 or more (engines/llamacpp.py MAX_TENSOR_SPLIT), so none is suggested."""
    p = run("--model", "meta-llama/Llama-3.1-405B-Instruct", "--gpus-per-node", "32")
    assert p["layout"]["gpus"] == 32 and p["commands"]["vllm"]
    assert p["commands"]["llama_server"] == []
