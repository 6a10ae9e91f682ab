"""Every logged vLLM start-up of the calibration sweep is a test case for the vLLM budget.

The data (tests/data/calibration/) is reference data we were given; `bench/calibration.py`
prints the distribution.  Tolerance: ±5% on the KV-cache tokens vLLM logged, as issue 16 asks.
"""

from __future__ import annotations

import pytest
from mgpu_lint.catalog import knowledge
from mgpu_lint.sizing import vllm_budget as vb

from tests.calibration import GIB, Row, inputs, rows

ROWS = rows()
# Rows whose model the catalog does not know yet, and why (shapes come only from a sourced
# config.json).
KNOWN_GAPS: dict[str, str] = {}


def test_the_sweep_is_complete() -> None:
    assert len(ROWS) == 38
    assert all(r.max_model_len > 0 and r.kv_tokens > 0 for r in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.case)
def test_kv_tokens_within_5_percent(row: Row) -> None:
    x = inputs(row)
    if x is None:
        assert row.case in KNOWN_GAPS, f"{row.model} does not resolve"
        return
    assert row.case not in KNOWN_GAPS
    b = vb.budget(x)
    assert b.kv_tokens == pytest.approx(row.kv_tokens, rel=0.05)
    if row.blocks is not None:
        assert b.blocks == pytest.approx(row.blocks, rel=0.05)
    assert b.weights / GIB == pytest.approx(row.weights_gib, rel=0.08)
    assert not b.no_cache_memory and not b.one_request_does_not_fit  # vLLM started


def _budget(model: str, **kw: object) -> vb.Budget:
    match = knowledge.resolve_model(model)
    assert match is not None
    args: dict = dict(shape=match.shape, card_bytes=int(79.19 * GIB), utilization=0.9,
                      weight_bits=16.0, quant_method=None, kv_bytes=2.0, max_model_len=8192)
    args.update(kw)
    return vb.budget(vb.Inputs(**args))


def test_requested_is_the_ceiling_of_card_times_utilization() -> None:
    b = _budget("meta-llama/Llama-3.1-8B-Instruct", card_bytes=1001, utilization=0.5)
    assert b.requested == 501


def test_gemma3_groups_pad_sliding_layers_to_the_full_group_size() -> None:
    # 52 sliding + 10 full layers: groups of 10, 6 sliding groups (8 padding layers) + 1 full
    b = _budget("google/gemma-3-27b-it")
    g = b.groups
    assert (g.group_size, g.sliding_groups, g.full_groups) == (10, 6, 1)
    assert g.bytes_per_block == 10 * 16 * 2 * 16 * 128 * 2
    # at 8K a 1024 window admits min(1023 + 8192, 8192) tokens: 513 blocks per sliding group
    assert b.blocks_per_request == 512 + 6 * 513


def test_sliding_window_admission_saves_memory_only_past_the_window() -> None:
    g = vb.layer_groups(13, 13, 1, 4096)
    assert vb.blocks_per_request(g, 8192, 8192) == 512 + 513  # min(4095 + 8192, 8192)
    assert vb.blocks_per_request(g, 8192, 2048) == 512 + 385  # 6143 tokens held
    assert vb.blocks_per_request(g, 131072, 2048) == 8192 + -(-(4095 + 2048) // 16) + 1


def test_mla_page_is_one_latent_not_split_by_tp() -> None:
    shape = knowledge.resolve_model("deepseek-ai/DeepSeek-V2-Lite-Chat").shape  # type: ignore
    assert vb.page_bytes(shape, 2.0, 1) == vb.page_bytes(shape, 2.0, 8) == 16 * 576 * 2


def test_pipeline_partition_follows_get_pp_indices() -> None:
    assert vb.pp_partition(32, 4) == [8, 8, 8, 8]
    assert vb.pp_partition(61, 4) == [15, 15, 16, 15]
    assert vb.pp_partition(62, 4) == [15, 16, 16, 15]


def test_batch_defaults_follow_the_card() -> None:
    assert vb.batch_defaults(int(79.19 * GIB), "NVIDIA H100 80GB HBM3") == (8192, 1024)
    assert vb.batch_defaults(int(79.2 * GIB), "NVIDIA A100-SXM4-80GB") == (2048, 256)
    assert vb.batch_defaults(int(22.0 * GIB)) == (2048, 256)
    assert vb.batch_defaults(int(178 * GIB)) == (16384, 1024)


def test_cuda_graph_estimate_is_subtracted_from_0_21() -> None:
    assert not vb.release("0.19.0").cudagraphs_subtracted
    assert vb.release("0.21.0").cudagraphs_subtracted
    assert not vb.release("0.30.0", "0").cudagraphs_subtracted


def test_cuda_graphs_are_subtracted_from_0_30_unless_eager() -> None:
    base = _budget("meta-llama/Llama-3.1-8B-Instruct", release="0.19.0")
    new = _budget("meta-llama/Llama-3.1-8B-Instruct", release="0.30.0")
    eager = _budget("meta-llama/Llama-3.1-8B-Instruct", release="0.30.0", enforce_eager=True)
    assert base.cudagraph == 0 and eager.cudagraph == 0 and new.cudagraph > 0
    assert new.kv_budget == base.kv_budget - new.cudagraph == eager.kv_budget - new.cudagraph


def test_kv_cache_memory_bytes_replaces_the_profiled_budget() -> None:
    b = _budget("meta-llama/Llama-3.1-8B-Instruct", kv_cache_memory_bytes=4 * GIB)
    assert b.kv_budget == 4 * GIB and b.kv_from_flag
    assert b.blocks == 4 * GIB // b.groups.bytes_per_block


def test_an_8b_model_at_29k_context_on_a_24gb_card_is_refused() -> None:
    # L4 / A10 class card, 0.9: 8B BF16 leaves too little KV for one 29,000-token request
    b = _budget("meta-llama/Llama-3.1-8B-Instruct", card_bytes=int(22.05 * GIB),
                max_model_len=29000)
    assert not b.weights_exceed_card and not b.no_cache_memory
    assert b.one_request_does_not_fit
    assert 0 < b.estimated_max_model_len() < 29000


def test_gpt_oss_120b_on_one_h100_leaves_no_cache_memory() -> None:
    b = _budget("openai/gpt-oss-120b", weight_bits=4.25, quant_method="mxfp4",
                max_model_len=131072)
    assert not b.weights_exceed_card
    assert b.no_cache_memory or b.one_request_does_not_fit


def test_quantized_names_resolve_to_the_base_shape_with_their_precision() -> None:
    for name, bits in (("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16", 4.0),
                       ("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8", 8.0),
                       ("RedHatAI/Qwen2.5-7B-Instruct-FP8-dynamic", 8.0)):
        m = knowledge.resolve_model(name)
        assert m is not None and m.precision is not None, name
        assert m.precision.bits == bits


def _command(row: Row) -> str:
    dtype, _, quant = (p.strip() for p in row.dtype.partition("/"))
    cmd = (f"vllm serve {row.model} -tp {row.tp} -pp {row.pp} --gpu-memory-utilization "
           f"{row.utilization} --max-model-len {row.max_model_len}")
    if dtype == "float32":
        cmd += " --dtype float32"
    if quant == "fp8":
        cmd += " --quantization fp8"
    if row.kv_dtype != "auto":
        cmd += f" --kv-cache-dtype {row.kv_dtype}"
    return cmd


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.case)
def test_no_memory_error_on_a_launch_vllm_started(row: Row,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from mgpu_lint.cli import main

    main(["--format", "json", "--exit-zero", "--gpu", "H100 SXM", "--target-version",
          "0.19.1", "--command", _command(row)])
    found = json.loads(capsys.readouterr().out)["findings"]
    assert not [f for f in found if f["code"] in ("MG301", "MG302") and
                f["severity"] == "error"], _command(row)
