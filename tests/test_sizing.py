"""Every number the lesson prints in Examples 1, 4, 5, 7, 8, 11, 13, 14, 15 and 17, computed by
the public functions in mgpu_lint.sizing and rounded as the lesson prints (display.fixed)."""

from __future__ import annotations

import pytest
from mgpu_lint.catalog.knowledge import resolve_gpu, resolve_model
from mgpu_lint.sizing import interconnect as ic
from mgpu_lint.sizing.display import fixed, percent
from mgpu_lint.sizing.layout import choose_layout, power_of_two_at_least
from mgpu_lint.sizing.llamacpp import (
    assign_layers,
    describe_layer_split,
    f32,
    layer_split,
    split_points,
)
from mgpu_lint.sizing.lora import (
    base_plus_adapters_bytes,
    lora_bytes,
    lora_params,
    lora_params_per_rank_per_layer,
    lora_reservation_bytes,
    merged_models_bytes,
)
from mgpu_lint.sizing.memory import (
    derived_max_model_len,
    gpus_needed,
    kv_bytes,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    kv_bytes_per_token_per_gpu,
    kv_heads_per_gpu,
    kv_token_capacity,
    usable_bytes,
    weights_bytes,
)
from mgpu_lint.sizing.operations import backlog, cold_start_time, load_time
from mgpu_lint.sizing.parallel import (
    device_loads,
    expert_load_imbalance,
    experts_per_rank,
    moe_grouping,
    pipeline_busy_share,
    pipeline_decode_busy_share,
    pipeline_decode_tokens,
    total_gpus,
    world_size,
)
from mgpu_lint.sizing.timing import decode_read_time, prefill_compute_time

H100 = resolve_gpu("H100 SXM")


def shape(name: str):
    match = resolve_model(name)
    assert match is not None, name
    return match.shape


# Example 1: model, bits, weights GB, KV GB, total GB, GPUs, read ms 1 GPU, read ms split
EXAMPLE_1 = """
8B     16.0        16.1   34.4      50.4     1            4.8             4.8
8B      8.0         8.0   34.4      42.4     1            2.4             2.4
8B      4.5         4.5   34.4      38.9     1            1.3             1.3
70B    16.0       141.2   85.9     227.1     4           42.1            10.5
70B     8.0        70.6   85.9     156.5     3           21.1             7.0
70B     4.5        39.7   85.9     125.6     2           11.9             5.9
405B   16.0       810.0  135.3     945.3    14          241.8            17.3
405B    8.0       405.0  135.3     540.3     8          120.9            15.1
405B    4.5       227.8  135.3     363.1     6           68.0            11.3
"""
MODELS = {"8B": "meta-llama/Llama-3.1-8B-Instruct", "70B": "meta-llama/Llama-3.1-70B-Instruct",
          "405B": "meta-llama/Llama-3.1-405B-Instruct"}


@pytest.mark.parametrize("row", EXAMPLE_1.strip().splitlines())
def test_example_1_why_split(row: str) -> None:
    name, bits, *expected = row.split()
    s = shape(MODELS[name])
    assert H100 is not None
    kv = kv_bytes(s, users=32, context=8192)
    weights = weights_bytes(s.params, float(bits))
    gpus = gpus_needed(weights + kv, usable_bytes(H100.memory_bytes, 0.9))
    got = [fixed(weights / 1e9, 1), fixed(kv / 1e9, 1), fixed((weights + kv) / 1e9, 1), str(gpus),
           fixed(decode_read_time(weights, H100.bandwidth_bytes_per_s) * 1e3, 1),
           fixed(decode_read_time(weights, H100.bandwidth_bytes_per_s, gpus) * 1e3, 1)]
    assert got == expected


@pytest.mark.parametrize(("name", "kib"), [("8B", "128"), ("70B", "320"), ("405B", "504")])
def test_example_1_kv_per_token(name: str, kib: str) -> None:
    assert fixed(kv_bytes_per_token(shape(MODELS[name])) / 1024, 0) == kib


def test_kv_per_gpu_under_tensor_parallel() -> None:
    s = shape("Llama-3.1-70B")  # 8 KV heads
    per_token = kv_bytes_per_token(s)
    assert kv_bytes_per_token_per_gpu(s, tp=2) == per_token / 2
    assert kv_bytes_per_token_per_gpu(s, tp=8) == per_token / 8
    assert kv_bytes_per_token_per_gpu(s, tp=16) == per_token / 8  # one KV head per GPU at least
    assert kv_heads_per_gpu(4, 8) == 1
    assert kv_bytes_per_token_per_gpu(s, tp=1, pp=2) == per_token / 2
    assert kv_token_capacity(per_token * 10.5, per_token) == 10
    assert kv_token_capacity(-1.0, per_token) == 0


def test_mla_latent_is_not_split_by_tensor_parallel() -> None:
    s = shape("deepseek-ai/DeepSeek-V3")
    assert kv_bytes_per_token(s) == 61 * (512 + 64) * 2 == 70272
    assert kv_bytes_per_token_per_gpu(s, tp=8) == 70272


def test_sliding_window_layers_keep_at_most_the_window() -> None:
    s = shape("openai/gpt-oss-120b")  # 18 full layers, 18 layers with a 128-token window
    assert kv_bytes_per_token(s) == 18 * 2 * 8 * 64 * 2
    per_layer = 2 * 8 * 64 * 2
    assert kv_bytes_per_sequence(s, 100) == 36 * per_layer * 100
    assert kv_bytes_per_sequence(s, 8192) == 18 * per_layer * 8192 + 18 * per_layer * 128
    g = shape("google/gemma-3-27b-it")
    assert fixed(kv_bytes_per_token(g) / 1024, 0) == "80"


def test_derived_max_model_len() -> None:
    assert derived_max_model_len(shape("Llama-3.1-8B")) == 131072  # llama3 rope: unchanged
    assert derived_max_model_len(shape("deepseek-ai/DeepSeek-V3")) == 4096 * 40  # yarn
    assert derived_max_model_len(shape("Qwen3-32B")) == 40960


def test_example_4_ring_all_reduce() -> None:
    values = [[(d + 1) * 10 + i for i in range(8)] for d in range(4)]
    ring = ic.simulate_ring_all_reduce(values)
    assert ring.owned == ((1, (108, 112)), (2, (116, 120)), (3, (124, 128)), (0, (100, 104)))
    assert all(row == (100, 104, 108, 112, 116, 120, 124, 128) for row in ring.result)
    assert ring.sent == (12, 12, 12, 12)
    assert ic.ring_traffic_per_gpu(8, 4) == 12
    assert ic.root_all_reduce_traffic(8, 4) == 24
    assert ic.ring_steps(4) == 6


EXAMPLE_5 = [(1, "0.016", "4.6", "0.01", "0.15"), (64, "1.049", "293.6", "0.65", "9.32"),
             (4096, "67.109", "18790.5", "41.76", "596.52")]


@pytest.mark.parametrize(("tokens", "mb", "per_gpu", "nvlink", "pcie"), EXAMPLE_5)
def test_example_5_all_reduce_cost(tokens: int, mb: str, per_gpu: str, nvlink: str,
                                   pcie: str) -> None:
    s = shape("Llama-3.1-70B")
    assert (s.hidden, s.layers) == (8192, 80)
    traffic = ic.all_reduce_traffic_per_forward(tokens, s.hidden, s.layers, 8)
    assert fixed(ic.all_reduce_bytes(tokens, s.hidden) / 1e6, 3) == mb
    assert fixed(traffic / 1e6, 1) == per_gpu
    assert fixed(ic.transfer_time(traffic, 450e9) * 1e3, 2) == nvlink
    assert fixed(ic.transfer_time(traffic, 31.5e9) * 1e3, 2) == pcie


def test_example_5_latency_and_references() -> None:
    assert ic.all_reduces_per_forward(80) == 160
    steps = ic.ring_steps_per_forward(80, 8)
    assert (ic.ring_steps(8), steps) == (14, 2240)
    assert fixed(ic.ring_latency(steps, 1e-6) * 1e3, 2) == "2.24"
    assert fixed(ic.ring_latency(steps, 5e-6) * 1e3, 2) == "11.20"
    assert H100 is not None and H100.bf16_flops is not None
    per_gpu = weights_bytes(70.6e9, 16) / 8
    assert fixed(per_gpu / 1e9, 2) == "17.65"
    assert fixed(decode_read_time(per_gpu, H100.bandwidth_bytes_per_s) * 1e3, 2) == "5.27"
    assert fixed(prefill_compute_time(70.6e9, 4096, 8, H100.bf16_flops) * 1e3, 1) == "73.1"
    assert H100.nvlink_gbs_per_direction == 450


EXAMPLE_7 = {2: "50.0% 66.7% 80.0% 88.9% 94.1% 97.0%",
             4: "25.0% 40.0% 57.1% 72.7% 84.2% 91.4%",
             8: "12.5% 22.2% 36.4% 53.3% 69.6% 82.1%"}


@pytest.mark.parametrize("stages", [2, 4, 8])
def test_example_7_busy_share(stages: int) -> None:
    got = " ".join(percent(pipeline_busy_share(m, stages)) for m in (1, 2, 4, 8, 16, 32))
    assert got == EXAMPLE_7[stages]


def test_example_6_7_decoding_batches_in_flight() -> None:
    assert percent(pipeline_busy_share(4, 4)) == "57.1%"
    rows = [(percent(pipeline_decode_busy_share(k, 4), 0), pipeline_decode_tokens(k, 4, 8, 100))
            for k in range(1, 5)]
    assert rows == [("25%", 200), ("50%", 400), ("75%", 600), ("100%", 800)]


def test_example_8_expert_imbalance() -> None:
    assert fixed(expert_load_imbalance([34, 8, 10, 12]), 2) == "2.13"
    loads = [16, 18, 4, 4, 6, 4, 5, 7]
    assert device_loads(loads, [[0, 1], [2, 3], [4, 5], [6, 7]]) == [34, 8, 10, 12]
    assert device_loads(loads, [[0, 7], [1, 6], [2, 5], [3, 4]]) == [23, 23, 8, 10]
    assert experts_per_rank(10, 4) == [3, 3, 2, 2]


EXAMPLE_11 = [
    (99, [1, 1], "GPU0 layers 0-16 (17), GPU1 layers 17-31 (15), output on GPU1"),
    (99, [3, 1], "GPU0 layers 0-24 (25), GPU1 layers 25-31 (7), output on GPU1"),
    (99, [22, 10], "GPU0 layers 0-22 (23), GPU1 layers 23-31 (9), output on GPU1"),
    (20, [1, 1], ("CPU layers 0-12 (13), GPU0 layers 13-22 (10), GPU1 layers 23-31 (9), "
                  "output on GPU1")),
    (99, [1, 1, 1], ("GPU0 layers 0-10 (11), GPU1 layers 11-21 (11), GPU2 layers 22-31 (10), "
                     "output on GPU2")),
]


@pytest.mark.parametrize(("ngl", "ts", "expected"), EXAMPLE_11)
def test_example_11_layer_split(ngl: int, ts: list[float], expected: str) -> None:
    assert describe_layer_split(layer_split(32, ngl, ts)) == expected


def test_layer_split_float32_details() -> None:
    assert split_points([3, 1]) == [0.75, 1.0]
    assert split_points([22, 10]) == [0.6875, 1.0]
    assert f32(0.1) != 0.1 and f32(0.5) == 0.5
    assert assign_layers(32, 0, [1, 1]) == [None] * 33  # -ngl 0: everything on the CPU
    assert assign_layers(32, None, [1, 1]) == assign_layers(32, 99, [1, 1])  # auto/all
    split = layer_split(32, 1, [1, 1])  # only the output layer is offloaded
    assert split.output_on == "GPU0" and split.devices[0].count == 0
    assert split.cpu_layers is not None and split.cpu_layers.count == 32


EXAMPLE_13 = [
    # tp, pp, dp, ep, moe, GPUs, engines, per engine, expert layers
    (8, 1, 1, False, False, 8, 1, 8, "no expert layers"),
    (4, 2, 1, False, False, 8, 1, 8, "no expert layers"),
    (1, 1, 8, False, False, 8, 8, 1, "no expert layers"),
    (8, 1, 1, False, True, 8, 1, 8, "TP=8: every expert split 8 ways"),
    (8, 1, 1, True, True, 8, 1, 8, "EP=8: each GPU holds 1/8 of the experts"),
    (1, 1, 8, False, True, 8, 8, 1, "TP=8: every expert split 8 ways"),
    (1, 1, 8, True, True, 8, 8, 1, "EP=8: each GPU holds 1/8 of the experts"),
    (2, 1, 4, True, True, 8, 4, 2, "EP=8: each GPU holds 1/8 of the experts"),
]


@pytest.mark.parametrize(
    ("tp", "pp", "dp", "ep", "moe", "gpus", "engines", "per_engine", "experts"), EXAMPLE_13)
def test_example_13_vllm_layouts(tp: int, pp: int, dp: int, ep: bool, moe: bool, gpus: int,
                                 engines: int, per_engine: int, experts: str) -> None:
    assert total_gpus(tp, pp, dp) == gpus
    assert world_size(tp, pp) == per_engine
    assert dp == engines
    grouping = moe_grouping(tp, dp, ep)
    assert (grouping.summary if moe else "no expert layers") == experts
    if moe:
        assert grouping.expert_split_ways == (1 if ep else 8)


EXAMPLE_14 = [
    ((16.1, 80, 8, 1, True, False), "needs 1 GPU(s) -> no split, 8 replicas (DP)"),
    ((141.2, 80, 8, 1, True, False), "needs 3 GPU(s) -> TP=4, 2 replicas (DP)"),
    ((18.5, 24, 2, 1, False, False), "needs 2 GPU(s) -> PP=2 (PCIe: communicate once per stage)"),
    ((405, 80, 8, 2, True, False), "needs 9 GPU(s) -> TP=8 inside a node, PP=2 across nodes"),
    ((235, 80, 8, 1, True, True), "needs 5 GPU(s) -> TP=8, expert parallel for the MoE layers"),
    ((405, 80, 8, 1, True, False), "does not fit: 9 GPUs needed, 8 present"),
]


@pytest.mark.parametrize(("setup", "expected"), EXAMPLE_14)
def test_example_14_choose_layout(setup: tuple, expected: str) -> None:
    weights_gb, gpu_gb, per_node, nodes, nvlink, moe = setup
    layout = choose_layout(weights_gb * 1e9, gpu_gb * 1e9, per_node, nodes, nvlink, moe)
    assert layout.describe() == expected


def test_example_14_layout_fields() -> None:
    layout = choose_layout(141.2e9, 80e9, 8)
    assert (layout.need, layout.gpus, layout.tp, layout.pp, layout.dp) == (3, 4, 4, 1, 2)
    multi = choose_layout(405e9, 80e9, 8, nodes=2)
    assert (multi.gpus, multi.tp, multi.pp, multi.dp) == (16, 8, 2, 1)
    pcie = choose_layout(18.5e9, 24e9, 2, nvlink=False)
    assert (pcie.tp, pcie.pp) == (1, 2)
    assert [power_of_two_at_least(n) for n in (1, 2, 3, 5, 9)] == [1, 2, 4, 8, 16]


def test_example_15_multi_lora() -> None:
    s = shape("Llama-3.1-8B")
    assert s.lora_modules is not None
    modules = s.lora_modules
    assert lora_params_per_rank_per_layer(modules) == 81920
    base = weights_bytes(s.params, 16)
    rows = []
    for rank in (8, 16, 64):
        params = lora_params(rank, modules, s.layers)
        size = lora_bytes(rank, modules, s.layers)
        rows.append((f"{params:,}", fixed(size / 1e6, 1), fixed(100.0 * size / base, 2)))
    assert rows == [("20,971,520", "41.9", "0.26"), ("41,943,040", "83.9", "0.52"),
                    ("167,772,160", "335.5", "2.09")]
    assert fixed(lora_reservation_bytes(4, 64, modules, s.layers) / 1e9, 2) == "1.34"
    assert fixed(merged_models_bytes(20, base) / 1e9, 1) == "321.2"
    adapter = lora_bytes(16, modules, s.layers)
    assert fixed(base_plus_adapters_bytes(20, base, adapter) / 1e9, 1) == "17.7"


EXAMPLE_17 = [
    (16.1e9, 0.125e9, "128.8", "188.8"), (16.1e9, 1e9, "16.1", "76.1"),
    (16.1e9, 3e9, "5.4", "65.4"), (16.1e9, 10e9, "1.6", "61.6"),
    (70.6e9, 0.125e9, "564.8", "624.8"), (70.6e9, 1e9, "70.6", "130.6"),
    (70.6e9, 3e9, "23.5", "83.5"), (70.6e9, 10e9, "7.1", "67.1"),
]


@pytest.mark.parametrize(("size", "rate", "load", "total"), EXAMPLE_17)
def test_example_17_cold_start(size: float, rate: float, load: str, total: str) -> None:
    assert fixed(load_time(size, rate), 1) == load
    assert fixed(cold_start_time(size, rate, 20, 40), 1) == total


def test_example_17_backlog() -> None:
    assert fixed(backlog(5, 2, 70), 0) == "210"
    assert fixed(backlog(5, 2, 600), 0) == "1800"
    # the sizes in Example 17 are Example 1's weights: 8B BF16 and 70B FP8
    assert fixed(weights_bytes(shape("Llama-3.1-8B").params, 16) / 1e9, 1) == "16.1"
    assert fixed(weights_bytes(shape("Llama-3.1-70B").params, 8) / 1e9, 1) == "70.6"


def test_fixed_rounds_half_up_like_java() -> None:
    assert fixed(2.125, 2) == "2.13"
    assert fixed(0.15, 1) == "0.2"
    assert fixed(1e22, 1) == "10000000000000000000000.0"


def test_sglang_default_fraction_per_release() -> None:
    """The default --mem-fraction-static of each catalogued SGLang release, computed by hand
    from its source: server_args.py __post_init__ (0.4.10.post2), _handle_gpu_memory_settings
    (0.5.5), arg_groups/memory_hook.py handle_gpu_memory_settings (0.5.23)."""
    from mgpu_lint.engines.catalog import SGLANG_VERSIONS
    from mgpu_lint.sizing.sglang_memory import (DEFAULT_FRACTION_RELEASES,
                                                default_mem_fraction_static as f)

    assert DEFAULT_FRACTION_RELEASES == SGLANG_VERSIONS
    common = dict(pp=1, dp=1, dp_attention=False, speculative=None, chunked_prefill_size=None,
                  max_prefill_tokens=16384, cuda_graph_max_bs=None)
    h100 = 80 * 1024
    # 0.4.10.post2: (9.5 + tp/2) GiB on 35-90 GiB cards
    assert f("0.4.10.post2", h100, tp=2, **common).reserved_mib == 10.5 * 1024
    # T4: (2.8 + 1/10) GiB, + 2 GiB speculative, + 4 GiB dp attention
    r = f("0.4.10.post2", 16 * 1024, tp=1, **{**common, "speculative": "EAGLE",
                                               "dp_attention": True})
    assert r.reserved_mib == (2.9 + 2 + 4) * 1024
    # 0.5.5: 512 + 8192 × 1.5 + 256 × 2 + 2/8 × 1024
    r = f("0.5.5", h100, tp=2, **common)
    assert (r.reserved_mib, r.fraction) == (13568, round((h100 - 13568) / h100, 3))
    # tp 8: cuda_graph_max_bs 512; dp attention + 512 × 8 × 4.5; STANDALONE + 6 GiB
    r = f("0.5.5", h100, tp=8, **{**common, "dp": 8, "dp_attention": True,
                                  "speculative": "STANDALONE"})
    assert r.reserved_mib == 512 + 8192 * 1.5 + 1024 + 1024 + 512 * 8 * 4.5 + 6 * 1024
    # the 10240 MiB floor above 60 GiB: chunked prefill 2048 given, --cuda-graph-max-bs 8
    r = f("0.5.5", h100, tp=1, **{**common, "chunked_prefill_size": 2048,
                                  "cuda_graph_max_bs": 8})
    assert r.reserved_mib == 10240
    # a 24 GB card: no floor; chunked prefill -1 counts max_prefill_tokens
    r = f("0.5.5", 24 * 1024, tp=1, **{**common, "chunked_prefill_size": -1})
    assert r.reserved_mib == 512 + 16384 * 1.5 + 24 * 2 + 128
    # 0.5.23: the graph reserve is not counted (an upper bound of the fraction)
    r = f("0.5.23", h100, tp=2, **common)
    assert (r.reserved_mib, r.upper_bound) == (512 + 8192 * 1.5 + 256, True)
    assert f("0.5.23", h100, tp=2, **common, post_capture_possible=True).reserved_mib == 1792
    assert f("0.5.4", h100, tp=2, **common) is None
