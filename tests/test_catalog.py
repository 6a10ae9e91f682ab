"""The catalogs against the reference research, and model/GPU/precision resolution."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mgpu_lint.catalog import knowledge as k
from mgpu_lint.catalog.models import _catalog, _gguf_type_in

from tests.conftest import DATA

REFERENCE = DATA

# the lesson's own parameter counts (Example 1) replace the computed ones for these three
LESSON_PARAMS = {"meta-llama/Llama-3.1-8B-Instruct": 8.03e9,
                 "meta-llama/Llama-3.1-70B-Instruct": 70.6e9,
                 "meta-llama/Llama-3.1-405B-Instruct": 405e9,
                 "meta-llama/Llama-3.3-70B-Instruct": 70.6e9}
REFERENCE_GPU_IDS = {
    "nvidia-h100-sxm5-80gb": "h100-sxm", "nvidia-h100-pcie-80gb": "h100-pcie",
    "nvidia-h100-nvl-94gb": "h100-nvl", "nvidia-h200-141gb": "h200",
    "nvidia-a100-sxm4-80gb": "a100-sxm-80gb", "nvidia-a100-sxm4-40gb": "a100-sxm-40gb",
    "nvidia-a100-pcie-40gb": "a100-pcie-40gb", "nvidia-a100-pcie-80gb": "a100-pcie-80gb",
    "nvidia-l40s": "l40s", "nvidia-l40": "l40", "nvidia-l4": "l4", "nvidia-a10g": "a10g",
    "nvidia-a10": "a10", "nvidia-t4": "t4", "nvidia-v100-16gb": "v100-sxm2-16gb",
    "nvidia-v100-32gb": "v100-sxm2-32gb", "nvidia-rtx-4090": "rtx-4090",
    "nvidia-rtx-6000-ada": "rtx-6000-ada", "nvidia-b200": "b200", "nvidia-gb200": "gb200",
    "amd-mi300x": "mi300x", "amd-mi325x": "mi325x",
}


def _reference(name: str) -> dict:
    return json.loads((REFERENCE / name).read_text("utf-8"))


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def test_models_match_reference_catalog() -> None:
    for ref in _reference("catalog/models.json")["models"]:
        match = k.resolve_model(ref["id"])
        assert match is not None, ref["id"]
        s = match.shape
        assert s.id == ref["id"]
        assert s.layers == ref["num_hidden_layers"], s.id
        assert s.hidden == ref["hidden_size"], s.id
        assert s.heads == ref["num_attention_heads"], s.id
        assert s.kv_heads == ref["num_key_value_heads"], s.id
        for ours, theirs in ((s.head_dim, ref["head_dim"]), (s.vocab, ref["vocab_size"]),
                             (s.max_positions, ref["max_position_embeddings"])):
            if _number(theirs) is not None:
                assert ours == theirs, s.id
        if s.id in LESSON_PARAMS:
            assert s.params == LESSON_PARAMS[s.id]
            assert s.params_exact == ref["total_params"]
        else:
            assert s.params == ref["total_params"], s.id
        experts = ref.get("num_local_experts") or ref.get("num_experts") or \
            ref.get("n_routed_experts") or 0
        assert s.experts == experts, s.id
        assert s.experts_per_token == ref.get("num_experts_per_tok", 0), s.id
        kv = ref["kv_cache"]
        per_token = kv.get("bytes_per_token_bf16") or kv.get("bytes_per_token_bf16_full_layers") \
            or kv.get("bytes_per_token_bf16_global_layers")
        assert k.resolve_model(s.id) is not None
        from mgpu_lint.sizing.memory import kv_bytes_per_token

        if "note" not in kv or s.sliding_layers == 0:
            assert kv_bytes_per_token(s) == per_token, s.id
        if ref.get("lora_target_modules"):
            assert {n: tuple(v) for n, v in ref["lora_target_modules"].items()} == k.lora_modules(s)


def test_gpus_match_reference_catalog() -> None:
    ref = _reference("catalog/gpus.json")
    assert sorted(REFERENCE_GPU_IDS) == sorted(g["id"] for g in ref["gpus"])
    for g in ref["gpus"]:
        ours = k.resolve_gpu(REFERENCE_GPU_IDS[g["id"]])
        assert ours is not None
        assert ours.memory_gb == g["memory_gb"], g["id"]
        assert ours.bandwidth_tbs == g["memory_bandwidth_tb_s"], g["id"]
        assert ours.bf16_tflops == _number(g["bf16_dense_tflops"]), g["id"]
        nvlink = g["interconnect"].get("nvlink")
        if isinstance(nvlink, dict) and "per_direction_gb_s" in nvlink:
            assert ours.nvlink_gbs_per_direction == nvlink["per_direction_gb_s"], g["id"]
        for label in str(g.get("gfd_product", "")).split(" / "):
            label = label.split(" ")[0]
            if label:  # V100 labels name SXM2 or PCIe parts, which the project keeps apart
                found = k.resolve_gpu(label)
                assert found is not None and found.memory_gb == ours.memory_gb, (g["id"], label)
        for accel in g.get("gke_accelerator", []):  # nvidia-tesla-v100 covers 16 and 32 GB
            found = k.resolve_gpu(accel.split(" ")[0])
            assert found is not None and found.name.split()[:2] == ours.name.split()[:2], accel


def test_gguf_types_match_reference() -> None:
    for t in _reference("engines/gguf-types.json"):
        if t["kind"] == "tensor_type":
            assert k.ggml_type_bytes(t["type"]) == t["block_bytes"] / t["block_weights"]
        else:
            assert k.gguf_file_type_bits(t["type"]) == t["bpw"]


def test_instance_types_match_reference_table() -> None:
    text = (REFERENCE / "catalog/k8s-labels.md").read_text("utf-8")
    rows = {"p4d.24xlarge": ("a100-sxm-40gb", 8), "p5.48xlarge": ("h100-sxm", 8),
            "g5.48xlarge": ("a10g", 8), "g4dn.12xlarge": ("t4", 4), "p3dn.24xlarge":
            ("v100-sxm2-32gb", 8), "g6.12xlarge": ("l4", 4)}
    for instance, (gpu, count) in rows.items():
        assert f"`{instance}`" in text
        m = k.resolve_node_label("node.kubernetes.io/instance-type", instance)
        assert m is not None and (m.gpu.id, m.count) == (gpu, count)


def test_lesson_reference_card() -> None:
    h100 = k.resolve_gpu("H100 SXM")
    assert h100 is not None
    assert (h100.memory_bytes, h100.bandwidth_bytes_per_s, h100.bf16_flops) == (80e9, 3.35e12,
                                                                                989e12)
    assert h100.nvlink_gbs_per_direction == 450 and h100.pcie_gbs_per_direction == 63
    assert k.resolve_gpu("L4").pcie_gbs_per_direction == 31.5


def _entries(name: str, key: str) -> list[dict[str, object]]:
    from mgpu_lint.catalog.data import _read

    return _read(name)[key]


def test_builtin_entries_validate_and_load_the_same() -> None:
    """The run-time loader reads models.json and gpus.json without validation; every entry must
    pass pydantic's (types, bounds, unknown fields, consistency) and the loader must build
    exactly the validated object (same values and types: 7 stays 7.0 where a float is meant)."""
    from mgpu_lint.catalog import shapes

    models = shapes._builtin_models()
    assert len(models) == len(_entries("models.json", "models"))
    for raw, loaded in zip(_entries("models.json", "models"), models):
        validated = k.validate_model(raw)
        assert loaded == validated and repr(loaded) == repr(validated), raw["id"]
    gpus = shapes._builtin_gpus()
    assert len(gpus) == len(_entries("gpus.json", "gpus"))
    for raw, loaded in zip(_entries("gpus.json", "gpus"), gpus):
        validated = k.validate_gpu(raw)
        assert loaded == validated and repr(loaded) == repr(validated), raw["id"]


@pytest.mark.parametrize(("fields", "error"), [
    ({"params": 0}, "params: Input should be greater than 0"),
    ({"sliding_layers": 3}, "sliding_layers exceeds layers"),
    ({"sliding_layers": 1}, "sliding_layers needs sliding_window"),
    ({"kv_lora_rank": 512}, "MLA needs both kv_lora_rank and qk_rope_head_dim"),
    ({"heads": -1}, "heads: Input should be greater than 0"),
    ({"layerz": 2}, "layerz: Extra inputs are not permitted"),
    ({"rope_scaling": {"type": "yarn", "factor": 0}},
     "rope_scaling.factor: Input should be greater than 0"),
])
def test_model_validation_refuses(fields: dict[str, object], error: str) -> None:
    from mgpu_lint.catalog.data import _first_error

    with pytest.raises(ValueError) as exc:
        k.validate_model({"id": "x/y", "params": 1e9, "layers": 2, "hidden": 64, "heads": 4,
                          **fields})
    assert error in _first_error(exc.value)


def test_gpu_validation_refuses() -> None:
    with pytest.raises(ValueError):
        k.validate_gpu({"id": "x", "memory_gb": 0, "bandwidth_tbs": 1})
    with pytest.raises(ValueError):
        k.validate_gpu({"id": "x", "memory_gb": 8, "bandwidth_tbs": 1, "nvlinkk": 1})
    assert k.validate_gpu({"id": "x", "memory_gb": 8, "bandwidth_tbs": 1}).name == "x"


def test_every_entry_has_a_source() -> None:
    for name in k.model_names():
        assert k.resolve_model(name).shape.source, name
    for name in k.gpu_names():
        assert k.resolve_gpu(name).source, name


@pytest.mark.parametrize(("ref", "model", "bits", "gguf"), [
    ("meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", None, None),
    ("Llama-3.1-70B-instruct", "meta-llama/Llama-3.1-70B-Instruct", None, None),
    ("Meta-Llama-3.1-70B-Instruct-Q4_K_M.gguf", "meta-llama/Llama-3.1-70B-Instruct", 4.8944,
     "Q4_K_M"),
    ("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q8_0", "meta-llama/Llama-3.1-8B-Instruct", 8.5008,
     "Q8_0"),
    ("/models/Llama-3.1-405B-Instruct-FP8", "meta-llama/Llama-3.1-405B-Instruct", 8.0, None),
    ("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", "meta-llama/Llama-3.3-70B-Instruct", 8.0, None),
    ("Qwen/Qwen2.5-72B-Instruct-AWQ", "Qwen/Qwen2.5-72B-Instruct", 4.0, None),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "Qwen/Qwen2.5-7B-Instruct", 8.0, None),
    ("unsloth/Qwen3-32B-bnb-4bit", "Qwen/Qwen3-32B", 4.0, None),
    ("Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen/Qwen3-30B-A3B-Thinking-2507", None, None),
    ("Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B", None, None),
    ("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3", None, None),
    ("/cache/hub/models--google--gemma-3-27b-it/snapshots/0123abcd", "google/gemma-3-27b-it",
     None, None),
    ("mistralai/Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-Instruct-v0.1", None, None),
])
def test_resolve_model(ref: str, model: str, bits: float | None, gguf: str | None) -> None:
    match = k.resolve_model(ref)
    assert match is not None
    assert match.shape.id == model
    assert (match.precision.bits if match.precision else None) == bits
    assert match.gguf_type == gguf


@pytest.mark.parametrize("ref", ["deepseek-ai/DeepSeek-R1-Distill-Qwen-32B-x", "gpt2", "",
                                 "Qwen/Qwen3-30B-A3B-Base-2507x", "/"])
def test_unknown_models(ref: str) -> None:
    assert k.resolve_model(ref) is None


def test_configured_models_add_and_override() -> None:
    extra = {"acme/Tiny-1B": {"params": 1e9, "layers": 16, "hidden": 2048, "heads": 16,
                              "kv_heads": 4},
             "Llama-3.1-8B-Instruct": {"max_positions": 8192}}
    tiny = k.resolve_model("acme/tiny-1b-instruct", extra)
    assert tiny is not None and tiny.shape.head_dim == 128 and tiny.shape.weight_bits == 16
    assert k.resolve_model("meta-llama/Llama-3.1-8B", extra).shape.max_positions == 8192
    assert "acme/Tiny-1B" in k.model_names(extra)
    with pytest.raises(k.CatalogError, match="layers"):
        k.resolve_model("x", {"bad": {"params": 1e9, "hidden": 8, "heads": 1}})
    with pytest.raises(k.CatalogError):
        k.validate_extra(gpus={"g": {"memory_gb": 0, "bandwidth_tbs": 1}})


@pytest.mark.parametrize(("name", "gpu"), [
    ("H100 SXM", "h100-sxm"), ("h100-sxm", "h100-sxm"), ("NVIDIA-H100-80GB-HBM3", "h100-sxm"),
    ("nvidia-h100-80gb", "h100-sxm"), ("RTX 4090", "rtx-4090"), ("rtx-4090", "rtx-4090"),
    ("NVIDIA-GeForce-RTX-4090", "rtx-4090"), ("nvidia-l4", "l4"), ("L40S", "l40s"),
    ("nvidia-tesla-a100", "a100-sxm-40gb"), ("A100-SXM4-40GB", "a100-sxm-40gb"),
    ("NVIDIA-A100-80GB-PCIe", "a100-pcie-80gb"), ("Tesla-T4", "t4"), ("nvidia-tesla-t4", "t4"),
    ("AMD_Instinct_MI300X_OAM", "mi300x"), ("mi300x", "mi300x"), ("H100 NVL", "h100-nvl"),
    ("B200", "b200"), ("RTX 6000 Ada", "rtx-6000-ada"), ("NVIDIA-A10G", "a10g"),
    ("RTX 3090", "rtx-3090"), ("NVIDIA-GeForce-RTX-3090", "rtx-3090"),
    ("NVIDIA-GeForce-RTX-5090", "rtx-5090"), ("NVIDIA-A800-SXM4-80GB", "a800-sxm-80gb"),
    ("A800", "a800-sxm-80gb"), ("RTX A6000", "rtx-a6000"), ("A40", "a40"), ("nvidia-a40", "a40"),
    ("H800", "h800-sxm"), ("H20", "h20"), ("NVIDIA-H20", "h20"), ("L20", "l20"),
    ("RTX 4080", "rtx-4080"), ("RTX PRO 6000", "rtx-pro-6000"),
    ("nvidia-rtx-pro-6000", "rtx-pro-6000"),
    ("MI250X", "mi250x"), ("AMD Instinct MI250X", "mi250x"), ("MI355X", "mi355x"),
    ("Instinct MI355X", "mi355x"),
])
def test_resolve_gpu(name: str, gpu: str) -> None:
    found = k.resolve_gpu(name)
    assert found is not None and found.id == gpu


def test_cuda_totals() -> None:
    # what torch.cuda.mem_get_info reports, from real logs cited in each entry's source; a card
    # without one is sized at its marketed size read as GiB, an upper bound of every report
    totals = {g: k.resolve_gpu(g).cuda_memory_gib for g in k.gpu_names()}
    assert {g: v for g, v in totals.items() if v is not None} == {
        "h100-sxm": 79.19, "rtx-3090": 23.69, "rtx-5090": 31.37, "a800-sxm-80gb": 79.33}
    for g, v in totals.items():
        gpu = k.resolve_gpu(g)
        assert v is None or 0.95 * gpu.memory_gb < v < gpu.memory_gb, g  # 80 GB reads 79.2 GiB
    # the 3090 Ti is another card (no NVLink connector, 1 TB/s): not the 3090
    assert k.resolve_gpu("RTX 3090 Ti").id == "rtx-3090-ti"
    assert not k.resolve_gpu("RTX 3090 Ti").nvlink_bridge
    assert k.resolve_gpu("A800").nvlink_gbs_per_direction == 200  # 400 GB/s both ways
    assert k.resolve_gpu("H800").nvlink_gbs_per_direction == 200
    assert k.resolve_gpu("H20").nvlink_gbs_per_direction == 450
    for bridged in ("RTX A6000", "A40", "RTX 3090"):  # PCIe cards that 2-way bridges pair
        gpu = k.resolve_gpu(bridged)
        assert gpu.nvlink_bridge and not gpu.has_nvlink, bridged


def test_amd_instinct_cards() -> None:
    # an MI250X module is two GCDs that ROCm, vLLM and Kubernetes each count as a GPU of 64 GB
    gcd = k.resolve_gpu("MI250X")
    assert (gcd.memory_gb, gcd.bandwidth_tbs, gcd.bf16_tflops) == (64, 1.6, 191.5)
    assert gcd.has_nvlink and gcd.cuda_memory_gib is None  # xGMI, not PCIe; no ROCm total seen
    assert k.resolve_gpu("MI250") is None  # the MI250 is another part
    mi355 = k.resolve_gpu("MI355X")
    assert (mi355.memory_gb, mi355.bandwidth_tbs, mi355.nvlink_gbs_per_direction) == (288, 8.0,
                                                                                       535.5)
    assert mi355.pcie_gen == 5 and mi355.source


def test_unknown_and_configured_gpus() -> None:
    assert k.resolve_gpu("A100-SXM4-40GB-MIG-1g.5gb") is None
    assert k.resolve_gpu("") is None and k.resolve_gpu("tpu-v5") is None
    extra = {"my-card": {"memory_gb": 32, "bandwidth_tbs": 1.8, "pcie_gen": 5}}
    card = k.resolve_gpu("MY CARD", extra)
    assert card is not None and card.pcie_gbs_per_direction == 63.0 and card.bf16_tflops is None
    assert "my-card" in k.gpu_names(extra)
    assert k.resolve_gpu("h100", {"h100-sxm": {"memory_gb": 81}}).memory_gb == 81


def test_node_labels() -> None:
    m = k.resolve_node_label("cloud.google.com/gke-accelerator", "nvidia-l4")
    assert m is not None and m.gpu.id == "l4" and m.count is None
    m = k.resolve_node_label("node.kubernetes.io/instance-type", "g2-standard-48")
    assert m is not None and (m.gpu.id, m.count) == ("l4", 4)
    m = k.resolve_node_label("node.kubernetes.io/instance-type", "g6.48xlarge")
    assert m is not None and m.count is None
    assert k.resolve_node_label("kubernetes.io/hostname", "nvidia-l4") is None
    assert k.resolve_node_label("node.kubernetes.io/instance-type", "m5.large") is None


def test_weight_precision_order() -> None:
    llama = k.resolve_model("Llama-3.1-70B").shape
    ds = k.resolve_model("deepseek-ai/DeepSeek-V3").shape
    oss = k.resolve_model("openai/gpt-oss-120b").shape
    assert k.weight_precision(llama) == k.Precision(16.0, "bfloat16", "checkpoint")
    assert k.weight_precision(llama, dtype="float32").bits == 32
    assert k.weight_precision(llama, quantization="fp8").bits == 8
    assert k.weight_precision(ds).bits == 8  # config says bfloat16, weights ship in FP8
    assert k.weight_precision(ds, dtype="bfloat16").bits == 8
    assert 4.4 < k.weight_precision(oss).bits < 4.5
    awq = k.resolve_model("Qwen/Qwen2.5-72B-Instruct-AWQ")
    assert k.weight_precision(awq.shape, hint=awq.precision).origin == "model name"
    int8 = k.resolve_model("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8")
    assert k.weight_precision(int8.shape, quantization="gptq", hint=int8.precision).bits == 8
    # a name stating both AWQ and INT4 is an AWQ checkpoint; GPTQ-Int4 keeps the INT4 label
    assert k.resolve_model("hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4").precision.label \
        == "AWQ 4-bit"
    assert k.resolve_model("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4").precision.label == "INT4"
    assert k.weight_precision(llama, bits=4.5).bits == 4.5
    assert k.weight_precision().bits == 16


def test_kv_and_type_sizes() -> None:
    llama = k.resolve_model("Llama-3.1-8B").shape
    assert k.kv_cache_bytes_per_value() == 2.0
    assert k.kv_cache_bytes_per_value("fp8") == 1.0
    assert k.kv_cache_bytes_per_value("auto", dtype="float32") == 4.0
    assert k.kv_cache_bytes_per_value("auto", shape=llama) == 2.0
    assert k.kv_cache_bytes_per_value("nonsense") is None
    assert k.llama_kv_bytes_per_value() == 2.0
    assert k.llama_kv_bytes_per_value("q8_0", "q8_0") == 34 / 32
    assert k.llama_kv_bytes_per_value("q8_0", "q4_0") == (34 / 32 + 18 / 32) / 2
    assert k.llama_kv_bytes_per_value("Q8_0") is None  # llama.cpp names are lower case
    assert k.llama_kv_bytes_per_value("q4_K") is None  # not a KV cache type
    assert k.gguf_file_type_bits("q4_k_m") == 4.8944
    assert k.dtype_bits("torch.float16") == 16 and k.dtype_bits("auto") is None
    assert k.quantization_bits("awq") == 4 and k.quantization_bits("compressed-tensors") is None
    assert "Q4_K_M" in k.gguf_file_types()


def test_read_local_config(tmp_path: Path) -> None:
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
           "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
           "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
           "torch_dtype": "bfloat16", "tie_word_embeddings": False,
           "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
                            "original_max_position_embeddings": 8192}}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    s = k.read_local_config(tmp_path)
    assert s is not None
    assert (s.layers, s.kv_heads, s.head_dim, s.weight_bits) == (32, 8, 128, 16)
    assert abs(s.params - 8030261248) / 8030261248 < 0.001
    assert s.rope_scaling is not None and s.rope_scaling.type == "llama3"


def test_read_local_config_moe_mla_sliding_quantized(tmp_path: Path) -> None:
    ds = {"hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
          "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128,
          "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
          "first_k_dense_replace": 3, "kv_lora_rank": 512, "q_lora_rank": 1536,
          "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
          "vocab_size": 129280, "max_position_embeddings": 163840, "torch_dtype": "bfloat16",
          "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}
    (tmp_path / "config.json").write_text(json.dumps(ds))
    s = k.read_local_config(tmp_path)
    assert s is not None and s.is_mla and s.experts == 256 and s.moe_layers == 58
    assert s.weight_bits == 8 and s.quantization == "fp8"
    assert abs(s.params - 671026419200) / 671026419200 < 0.01
    gemma = {"text_config": {"hidden_size": 5376, "num_hidden_layers": 62,
                             "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
                             "sliding_window": 1024, "sliding_window_pattern": 6,
                             "intermediate_size": 21504, "vocab_size": 262208}}
    (tmp_path / "config.json").write_text(json.dumps(gemma))
    g = k.read_local_config(tmp_path)
    assert g is not None and (g.sliding_layers, g.sliding_window) == (52, 1024)
    awq = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "quantization_config": {"quant_method": "awq", "bits": 4}}
    (tmp_path / "config.json").write_text(json.dumps(awq))
    assert k.read_local_config(tmp_path).weight_bits == 4
    (tmp_path / "config.json").write_text("[1, 2]")
    assert k.read_local_config(tmp_path) is None
    assert k.read_local_config(tmp_path / "missing") is None


def test_data_files_cite_no_reference_prose() -> None:
    """The project's data files are its own: every string is short (names, sources, notes)."""
    folder = Path(k.__file__).parent
    for name in ("models.json", "gpus.json", "gguf_types.json", "labels.json"):
        text = (folder / name).read_text("utf-8")
        longest = max((len(s) for s in re.findall(r'"((?:[^"\\]|\\.)*)"', text)), default=0)
        assert longest < 400, name


# --------------------------------------------------------------------------- added checkpoints
# (layers, hidden, intermediate, heads, kv_heads, head_dim, vocab, max_positions, params), each
# from the config.json copies and MaxText configs cited in the entry's source list; params are
# computed from those shapes (embeddings tied where the config says so, Qwen2 q/k/v biases).
ADDED_MODELS = {
    "meta-llama/Llama-3.2-1B-Instruct": (16, 2048, 8192, 32, 8, 64, 128256, 131072, 1235814400),
    "meta-llama/Llama-3.2-3B-Instruct": (28, 3072, 8192, 24, 8, 128, 128256, 131072, 3212749824),
    "Qwen/Qwen2.5-0.5B-Instruct": (24, 896, 4864, 14, 2, 64, 151936, 32768, 494032768),
    "Qwen/Qwen2.5-1.5B-Instruct": (28, 1536, 8960, 12, 2, 128, 151936, 32768, 1543714304),
    "Qwen/Qwen2.5-3B-Instruct": (36, 2048, 11008, 16, 2, 128, 151936, 32768, 3085938688),
    "Qwen/Qwen2.5-14B-Instruct": (48, 5120, 13824, 40, 8, 128, 152064, 32768, 14770033664),
    "google/gemma-7b-it": (28, 3072, 24576, 16, 16, 256, 256000, 8192, 8537680896),
    "google/gemma-2-2b-it": (26, 2304, 9216, 8, 4, 256, 256000, 8192, 2614341888),
    "google/gemma-2-9b-it": (42, 3584, 14336, 16, 8, 256, 256000, 8192, 9241705984),
    "google/gemma-2-27b-it": (46, 4608, 36864, 32, 16, 128, 256000, 8192, 27227128320),
    "mistralai/Mistral-Nemo-Instruct-2407": (40, 5120, 14336, 32, 8, 128, 131072, 1024000,
                                             12247782400),
    "mistralai/Mistral-Small-24B-Instruct-2501": (40, 5120, 32768, 32, 8, 128, 131072, 32768,
                                                  23572403200),
    "microsoft/phi-4": (40, 5120, 17920, 40, 10, 128, 100352, 16384, 14659507200),
}


@pytest.mark.parametrize("model", sorted(ADDED_MODELS))
def test_added_models_match_their_configs(model: str) -> None:
    s = k.resolve_model(model).shape
    assert s.id == model and s.source
    layers, hidden, inter, heads, kv, head_dim, vocab, positions, params = ADDED_MODELS[model]
    assert (s.layers, s.hidden, s.intermediate, s.heads, s.kv_heads, s.head_dim, s.vocab,
            s.max_positions) == (layers, hidden, inter, heads, kv, head_dim, vocab, positions)
    assert s.params == params and s.dtype == "bfloat16" and s.weight_bits == 16
    assert not s.is_moe and not s.is_mla


def test_added_model_details() -> None:
    from mgpu_lint.sizing.memory import kv_bytes_per_token

    # Gemma 2 alternates local (4096-token window) and global layers: half the layers slide
    for name, half in (("google/gemma-2-2b-it", 13), ("google/gemma-2-9b-it", 21),
                       ("google/gemma-2-27b-it", 23)):
        s = k.resolve_model(name).shape
        assert (s.sliding_window, s.sliding_layers) == (4096, half)
    gemma2 = k.resolve_model("google/gemma-2-27b-it").shape
    assert kv_bytes_per_token(gemma2) == 23 * 2 * 16 * 128 * 2  # global layers only
    gemma = k.resolve_model("google/gemma-7b-it").shape
    assert gemma.sliding_layers == 0 and kv_bytes_per_token(gemma) == 28 * 2 * 16 * 256 * 2
    for name in ("meta-llama/Llama-3.2-1B-Instruct", "meta-llama/Llama-3.2-3B-Instruct"):
        rope = k.resolve_model(name).shape.rope_scaling
        assert rope is not None and (rope.type, rope.factor, rope.original_max_positions) == \
            ("llama3", 32.0, 8192)
    phi = k.resolve_model("microsoft/phi-4").shape  # SPEC's MG102 example: 10 KV heads at tp 4
    assert phi.heads % 4 == 0 and phi.kv_heads % 4 != 0 and 4 % phi.kv_heads != 0


@pytest.mark.parametrize(("ref", "model"), [
    ("google/gemma-7b-it", "google/gemma-7b-it"),
    ("google/gemma-2-27b-it", "google/gemma-2-27b-it"),
    ("Qwen/Qwen2.5-1.5B-Instruct", "Qwen/Qwen2.5-1.5B-Instruct"),
    ("Qwen/Qwen2.5-Coder-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct"),
    ("Qwen/Qwen2.5-Coder-1.5B-Instruct", "Qwen/Qwen2.5-1.5B-Instruct"),
    ("Qwen/Qwen2.5-Coder-3B-Instruct", "Qwen/Qwen2.5-3B-Instruct"),
    ("Qwen/Qwen2.5-Coder-14B-Instruct", "Qwen/Qwen2.5-14B-Instruct"),
    ("Qwen/Qwen2.5-Coder-32B-Instruct-AWQ", "Qwen/Qwen2.5-32B-Instruct"),
    ("Qwen/QwQ-32B", "Qwen/Qwen2.5-32B-Instruct"),
    ("meta-llama/Llama-3.2-1B-Instruct", "meta-llama/Llama-3.2-1B-Instruct"),
    ("unsloth/Llama-3.2-3B-Instruct-bnb-4bit", "meta-llama/Llama-3.2-3B-Instruct"),
    ("deepseek-ai/DeepSeek-V3-0324", "deepseek-ai/DeepSeek-V3"),
    ("deepseek-ai/DeepSeek-V3.1", "deepseek-ai/DeepSeek-V3"),
    ("microsoft/phi-4", "microsoft/phi-4"),
    ("mistralai/Mistral-Nemo-Instruct-2407", "mistralai/Mistral-Nemo-Instruct-2407"),
    ("bartowski/Mistral-Nemo-Instruct-2407-GGUF:Q4_K_M", "mistralai/Mistral-Nemo-Instruct-2407"),
    ("mistralai/Mistral-Small-24B-Instruct-2501", "mistralai/Mistral-Small-24B-Instruct-2501"),
])
def test_resolve_added_models(ref: str, model: str) -> None:
    match = k.resolve_model(ref)
    assert match is not None and match.shape.id == model


def test_aliases_share_the_shape_and_count() -> None:
    # aliases only where the parameter count is identical (same config shape)
    for alias, base in (("Qwen/Qwen2.5-Coder-7B-Instruct", 7615616512),
                        ("Qwen/QwQ-32B", 32763876352),
                        ("deepseek-ai/DeepSeek-V3.1", 671026419200)):
        assert k.resolve_model(alias).shape.params == base


# (layers, hidden, intermediate, heads, kv_heads, head_dim, vocab, max_positions, tied, dtype,
# params): the config.json values each entry's source list cites; params as computed from them
# (Llama 2 7B: keras-hub's 6,738,415,616; Phi-3-mini: keras-hub's 3,821,079,552;
# R1-Distill-Qwen-32B: the HF safetensors count 32,763,876,352).
CONFIG_MODELS = {
    "meta-llama/Llama-2-7b-hf": (32, 4096, 11008, 32, 32, 128, 32000, 4096, False, "float16",
                                 6738415616),
    "meta-llama/Llama-2-13b-hf": (40, 5120, 13824, 40, 40, 128, 32000, 4096, False, "float16",
                                  13015864320),
    "meta-llama/Llama-2-70b-hf": (80, 8192, 28672, 64, 8, 128, 32000, 4096, False, "float16",
                                  68976648192),
    "meta-llama/Meta-Llama-3-8B-Instruct": (32, 4096, 14336, 32, 8, 128, 128256, 8192, False,
                                            "bfloat16", 8030261248),
    "meta-llama/Meta-Llama-3-70B-Instruct": (80, 8192, 28672, 64, 8, 128, 128256, 8192, False,
                                             "bfloat16", 70553706496),
    "Qwen/Qwen3-0.6B": (28, 1024, 3072, 16, 8, 128, 151936, 40960, True, "bfloat16", 596049920),
    "Qwen/Qwen3-1.7B": (28, 2048, 6144, 16, 8, 128, 151936, 40960, True, "bfloat16",
                        1720574976),
    "Qwen/Qwen3-4B": (36, 2560, 9728, 32, 8, 128, 151936, 40960, True, "bfloat16", 4022468096),
    "Qwen/Qwen3-14B": (40, 5120, 17408, 40, 8, 128, 151936, 40960, False, "bfloat16",
                       14768307200),
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B": (64, 5120, 27648, 40, 8, 128, 152064, 131072,
                                                 False, "bfloat16", 32763876352),
    "microsoft/Phi-3-mini-4k-instruct": (32, 3072, 8192, 32, 32, 96, 32064, 4096, False,
                                         "bfloat16", 3821079552),
    "microsoft/Phi-3-mini-128k-instruct": (32, 3072, 8192, 32, 32, 96, 32064, 131072, False,
                                           "bfloat16", 3821079552),
    "microsoft/Phi-3-medium-4k-instruct": (40, 5120, 17920, 40, 10, 128, 32064, 4096, False,
                                           "bfloat16", 13960238080),
    "microsoft/Phi-3-medium-128k-instruct": (40, 5120, 17920, 40, 10, 128, 32064, 131072, False,
                                             "bfloat16", 13960238080),
    "ibm-granite/granite-3.1-8b-instruct": (40, 4096, 12800, 32, 8, 128, 49155, 131072, True,
                                            "bfloat16", 8170848256),
    "Qwen/Qwen2.5-VL-7B-Instruct": (28, 3584, 18944, 28, 4, 128, 152064, 128000, False,
                                    "bfloat16", 7615616512),
    "Qwen/Qwen2.5-VL-3B-Instruct": (36, 2048, 11008, 16, 2, 128, 151936, 128000, True,
                                    "bfloat16", 3085938688),
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B": (28, 1536, 8960, 12, 2, 128, 151936, 131072,
                                                  False, "bfloat16", 1777088000),
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B": (28, 3584, 18944, 28, 4, 128, 152064, 131072,
                                                False, "bfloat16", 7615616512),
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B": (48, 5120, 13824, 40, 8, 128, 152064, 131072,
                                                 False, "bfloat16", 14770033664),
    "ibm-granite/granite-3.3-8b-instruct": (40, 4096, 12800, 32, 8, 128, 49159, 131072, True,
                                            "bfloat16", 8170864640),
    "ibm-granite/granite-3.3-2b-instruct": (40, 2048, 8192, 32, 8, 64, 49159, 131072, True,
                                            "bfloat16", 2533539840),
    "ibm-granite/granite-3.1-2b-instruct": (40, 2048, 8192, 32, 8, 64, 49155, 131072, True,
                                            "bfloat16", 2533531648),
    "microsoft/Phi-4-mini-instruct": (32, 3072, 8192, 24, 8, 128, 200064, 131072, True,
                                      "bfloat16", 3836021760),
    # CodeLlama 13B/34B/70B: the Llama 2 layers with 16384 positions; 34B and 70B use 8 KV heads
    "codellama/CodeLlama-13b-hf": (40, 5120, 13824, 40, 40, 128, 32016, 16384, False, "bfloat16",
                                   13016028160),
    "codellama/CodeLlama-34b-hf": (48, 8192, 22016, 64, 8, 128, 32000, 16384, False, "bfloat16",
                                   33743970304),
    "codellama/CodeLlama-70b-hf": (80, 8192, 28672, 64, 8, 128, 32016, 16384, False, "bfloat16",
                                   68976910336),
    # Granite 3.0: the 3.1 layers at 4,096 positions
    "ibm-granite/granite-3.0-8b-instruct": (40, 4096, 12800, 32, 8, 128, 49155, 4096, True,
                                            "bfloat16", 8170848256),
    "ibm-granite/granite-3.0-2b-instruct": (40, 2048, 8192, 32, 8, 64, 49155, 4096, True,
                                            "bfloat16", 2533531648),
    "Qwen/Qwen2.5-VL-72B-Instruct": (80, 8192, 29568, 64, 8, 128, 152064, 128000, False,
                                     "bfloat16", 72706203648),
}


def test_small_gemma3_text_models() -> None:
    # Gemma 3 1B and 270M: text-only, one KV head of 256, a 512-token window on five layers of
    # six; params = keras-hub's published counts (norm weights included)
    from mgpu_lint.sizing.memory import kv_bytes_per_token

    for name, layers, hidden, inter, sliding, params in (
            ("google/gemma-3-1b-it", 26, 1152, 6912, 22, 999885952),
            ("google/gemma-3-270m", 18, 640, 2048, 15, 268098176)):
        s = k.resolve_model(name).shape
        assert (s.layers, s.hidden, s.intermediate, s.heads, s.kv_heads, s.head_dim) == \
            (layers, hidden, inter, 4, 1, 256)
        assert (s.vocab, s.max_positions, s.tie_embeddings, s.dtype) == \
            (262144, 32768, True, "bfloat16")
        assert (s.sliding_window, s.sliding_layers) == (512, sliding)
        assert s.params == params and s.vision_params is None and s.rope_scaling is None
        # the textbook per-token figure counts the global layers only
        assert kv_bytes_per_token(s) == (layers - sliding) * 2 * 1 * 256 * 2
    for ref in ("google/gemma-3-1b-pt", "unsloth/gemma-3-1b-it-bnb-4bit",
                "ggml-org/gemma-3-1b-it-GGUF:Q4_K_M"):
        assert k.resolve_model(ref).shape.id == "google/gemma-3-1b-it"
    assert k.resolve_model("google/gemma-3-270m-it").shape.id == "google/gemma-3-270m"


def test_qwen25_vl_loads_its_vision_tower() -> None:
    # the ViT vLLM loads beside the text decoder, from the config's vision_config: a patch
    # embedding (Conv3d 3 → 1280, kernel 2 × 14 × 14), 32 blocks (qkv 1280 → 3840, proj, SwiGLU
    # 1280 → 3420 with biases, two norms) and the merger (5120 → 5120 → 3584)
    block = 2 * 1280 + (1280 * 3840 + 3840) + (1280 * 1280 + 1280) + 2 * (1280 * 3420 + 3420) \
        + (3420 * 1280 + 1280)
    vision = 3 * 2 * 14 * 14 * 1280 + 32 * block + 1280 + (5120 * 5120 + 5120) \
        + (5120 * 3584 + 3584)
    s = k.resolve_model("Qwen/Qwen2.5-VL-7B-Instruct-AWQ").shape
    assert s.vision_params == vision
    assert s.params + vision == 8292166656
    assert k.resolve_model("Qwen/Qwen2.5-VL-32B-Instruct") is None  # no max positions sourced
    # Qwen2.5-VL-3B: the same tower with the merger projecting to the 2048-wide decoder
    vision3b = vision - (5120 * 3584 + 3584) + (5120 * 2048 + 2048)
    s3 = k.resolve_model("Qwen/Qwen2.5-VL-3B-Instruct").shape
    assert s3.vision_params == vision3b
    assert s3.params + vision3b == 3754622976  # the "3.75B" its config's parameter count gives
    # Qwen2.5-VL-72B: a wider ViT MLP (3456) and the merger projecting to the 8192-wide decoder
    block72 = 2 * 1280 + (1280 * 3840 + 3840) + (1280 * 1280 + 1280) \
        + 2 * (1280 * 3456 + 3456) + (3456 * 1280 + 1280)
    vision72 = 3 * 2 * 14 * 14 * 1280 + 32 * block72 + 1280 + (5120 * 5120 + 5120) \
        + (5120 * 8192 + 8192)
    s72 = k.resolve_model("Qwen/Qwen2.5-VL-72B-Instruct-AWQ").shape
    assert s72.vision_params == vision72
    assert s72.params == k.resolve_model("Qwen/Qwen2.5-72B-Instruct").shape.params
    assert s72.params + vision72 == 73410777344  # "73.4B"


def test_qwen3_coder_480b_shape() -> None:
    s = k.resolve_model("Qwen/Qwen3-Coder-480B-A35B-Instruct").shape
    assert (s.layers, s.hidden, s.heads, s.kv_heads, s.head_dim, s.max_positions) == \
        (62, 6144, 96, 8, 128, 262144)
    assert (s.experts, s.experts_per_token, s.moe_layers, s.intermediate) == (160, 8, 62, 2560)
    # 480B total, 35B active: the routed experts not chosen are 152 of 160 in all 62 layers
    assert s.params - 62 * 152 * 3 * 6144 * 2560 == s.active_params
    assert k.resolve_model("Qwen/Qwen3-Coder-30B-A3B-Instruct") is None  # its own shape


def test_kimi_k2_is_deepseek_v3_with_384_experts() -> None:
    from mgpu_lint.sizing.memory import kv_bytes_per_token

    s = k.resolve_model("moonshotai/Kimi-K2-Instruct").shape
    assert (s.layers, s.hidden, s.heads, s.vocab, s.max_positions) == (61, 7168, 64, 163840, 131072)
    assert (s.experts, s.experts_per_token, s.shared_experts, s.moe_layers, s.intermediate) == \
        (384, 8, 1, 60, 2048)
    assert s.is_mla and (s.kv_lora_rank, s.qk_rope_head_dim) == (512, 64)
    assert (s.dtype, s.quantization, s.weight_bits) == ("fp8", "fp8", 8)
    # the checkpoint's safetensors hold 1,026,470,731,056 values: these params plus the FP8
    # block scales (fp32, one per 128 x 128 block) and the 56-value rotary buffers of 61 layers
    attention_scales = 5 * 56 + 128 * 4 + 56 * 64 + 12 * 56 + 96 * 12
    mlp_scales = 3 * 56 * 144 + 60 * (384 + 1) * 3 * 56 * 16
    assert s.params + 61 * attention_scales + mlp_scales + 61 * 56 == 1026470731056
    # MLA caches one latent per layer, whatever tp is
    assert kv_bytes_per_token(s) == 61 * (512 + 64) * 2


@pytest.mark.parametrize("model", sorted(CONFIG_MODELS))
def test_config_models_match_their_configs(model: str) -> None:
    s = k.resolve_model(model).shape
    assert s.id == model and s.source
    *shape, tied, dtype, params = CONFIG_MODELS[model]
    assert [s.layers, s.hidden, s.intermediate, s.heads, s.kv_heads, s.head_dim, s.vocab,
            s.max_positions] == shape
    assert (s.tie_embeddings, s.dtype, s.params, s.weight_bits) == (tied, dtype, params, 16)
    assert not s.is_moe and not s.is_mla and s.sliding_layers == 0 and s.rope_scaling is None


@pytest.mark.parametrize(("ref", "model", "bits"), [
    ("meta-llama/Llama-2-7b-chat-hf", "meta-llama/Llama-2-7b-hf", None),
    ("TheBloke/Llama-2-13B-chat-AWQ", "meta-llama/Llama-2-13b-hf", 4.0),
    ("TheBloke/Llama-2-70B-Chat-GPTQ", "meta-llama/Llama-2-70b-hf", 4.0),
    ("llama-2-7b-chat.Q4_K_M.gguf", "meta-llama/Llama-2-7b-hf", 4.8944),
    ("meta-llama/Meta-Llama-3-8B", "meta-llama/Meta-Llama-3-8B-Instruct", None),
    ("unsloth/llama-3-8b-Instruct-bnb-4bit", "meta-llama/Meta-Llama-3-8B-Instruct", 4.0),
    ("unsloth/Qwen3-14B-unsloth-bnb-4bit", "Qwen/Qwen3-14B", 4.0),
    ("unsloth/Llama-3.2-3B-Instruct-unsloth-bnb-4bit", "meta-llama/Llama-3.2-3B-Instruct", 4.0),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "Qwen/Qwen2.5-7B-Instruct", 4.0),
    ("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", "meta-llama/Llama-3.1-70B-Instruct", 4.0),
    ("bartowski/Qwen_Qwen3-4B-GGUF:Q4_K_M", "Qwen/Qwen3-4B", 4.8944),
    ("bartowski/meta-llama_Llama-3.3-70B-Instruct-GGUF", "meta-llama/Llama-3.3-70B-Instruct",
     None),
    ("meta-llama/Meta-Llama-3-70B-Instruct", "meta-llama/Meta-Llama-3-70B-Instruct", None),
    ("Qwen/Qwen3-1.7B-FP8", "Qwen/Qwen3-1.7B", 8.0),
    ("Qwen/Qwen3-4B-AWQ", "Qwen/Qwen3-4B", 4.0),
    ("Qwen/Qwen3-14B-GGUF:Q4_K_M", "Qwen/Qwen3-14B", 4.8944),
    ("casperhansen/deepseek-r1-distill-qwen-32b-awq", "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
     4.0),
    ("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "meta-llama/Llama-3.1-8B-Instruct", None),
    ("microsoft/Phi-3-medium-128k-instruct", "microsoft/Phi-3-medium-128k-instruct", None),
    ("RedHatAI/granite-3.1-8b-instruct-FP8-dynamic", "ibm-granite/granite-3.1-8b-instruct", 8.0),
    ("RedHatAI/granite-3.1-8b-instruct-quantized.w4a16", "ibm-granite/granite-3.1-8b-instruct",
     4.0),
    ("ibm-granite/granite-3.1-8b-base", "ibm-granite/granite-3.1-8b-instruct", None),
    ("unsloth/DeepSeek-R1-Distill-Qwen-1.5B-GGUF:Q8_0", "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
     8.5008),
    ("unsloth/DeepSeek-R1-Distill-Qwen-14B-bnb-4bit", "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B",
     4.0),
    ("casperhansen/deepseek-r1-distill-qwen-7b-awq", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", 4.0),
    ("deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "meta-llama/Llama-3.3-70B-Instruct", None),
    ("RedHatAI/DeepSeek-R1-Distill-Llama-70B-FP8-dynamic", "meta-llama/Llama-3.3-70B-Instruct",
     8.0),
    ("Qwen/Qwen2.5-VL-3B-Instruct-AWQ", "Qwen/Qwen2.5-VL-3B-Instruct", 4.0),
    ("ibm-granite/granite-3.1-2b-base", "ibm-granite/granite-3.1-2b-instruct", None),
    ("RedHatAI/granite-3.3-8b-instruct-quantized.w8a8", "ibm-granite/granite-3.3-8b-instruct",
     8.0),
    ("bartowski/ibm-granite_granite-3.3-2b-instruct-GGUF:Q4_K_M",
     "ibm-granite/granite-3.3-2b-instruct", 4.8944),
    ("microsoft/Phi-4-mini-instruct", "microsoft/Phi-4-mini-instruct", None),
    ("moonshotai/Kimi-K2-Instruct", "moonshotai/Kimi-K2-Instruct", None),
    ("moonshotai/Kimi-K2-Base", "moonshotai/Kimi-K2-Instruct", None),
    ("unsloth/Kimi-K2-Instruct-GGUF:Q2_K", "moonshotai/Kimi-K2-Instruct", 3.1593),
    ("RedHatAI/Kimi-K2-Instruct-quantized.w8a8", "moonshotai/Kimi-K2-Instruct", 8.0),
    ("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "Qwen/Qwen3-Coder-480B-A35B-Instruct", 8.0),
    ("unsloth/Qwen3-Coder-480B-A35B-Instruct-GGUF:Q4_K_M", "Qwen/Qwen3-Coder-480B-A35B-Instruct",
     4.8944),
    ("codellama/CodeLlama-13b-Instruct-hf", "codellama/CodeLlama-13b-hf", None),
    ("ibm-granite/granite-3.2-8b-instruct", "ibm-granite/granite-3.1-8b-instruct", None),
    ("ibm-granite/granite-3.2-2b-instruct", "ibm-granite/granite-3.1-2b-instruct", None),
    ("bartowski/ibm-granite_granite-3.2-2b-instruct-GGUF:Q5_K_M",
     "ibm-granite/granite-3.1-2b-instruct", 5.7036),
    ("ibm-granite/granite-3.0-8b-instruct", "ibm-granite/granite-3.0-8b-instruct", None),
    ("RedHatAI/Qwen2.5-VL-72B-Instruct-FP8-dynamic", "Qwen/Qwen2.5-VL-72B-Instruct", 8.0),
    ("TheBloke/CodeLlama-34B-Instruct-AWQ", "codellama/CodeLlama-34b-hf", 4.0),
    ("codellama/CodeLlama-70b-Instruct-hf", "codellama/CodeLlama-70b-hf", None),
    ("microsoft/Phi-3.5-mini-instruct", "microsoft/Phi-3-mini-128k-instruct", None),
    ("bartowski/Phi-3.5-mini-instruct-GGUF:Q4_K_M", "microsoft/Phi-3-mini-128k-instruct", 4.8944),
])
def test_config_model_names(ref: str, model: str, bits: float | None) -> None:
    m = k.resolve_model(ref)
    assert m is not None and m.shape.id == model
    assert (m.precision.bits if m.precision else None) == bits


@pytest.mark.parametrize("ref", [
    # other shapes or context lengths than any entry: unknown rather than a neighbour's numbers
    "Qwen/Qwen3-4B-Instruct-2507", "Qwen/Qwen3-4B-Thinking-2507",
    # Phi-3.5-MoE and the vision variant are other architectures
    "microsoft/Phi-3.5-MoE-instruct", "microsoft/Phi-3.5-vision-instruct",
    "meta-llama/Llama-2-7b-32k",
    # no config seen for these base checkpoints
    "ibm-granite/granite-3.0-8b-base", "ibm-granite/granite-3.3-8b-base",
    # Kimi K2's later checkpoints: 262,144 positions (0905), INT4 experts (Thinking)
    "moonshotai/Kimi-K2-Instruct-0905", "moonshotai/Kimi-K2-Thinking",
    "unsloth/Kimi-K2-Thinking-GGUF:Q4_K_M", "moonshotai/Kimi-K2.5",
    # vLLM 0.30.0 no longer runs Phi3SmallForCausalLM (registry.py _PREVIOUSLY_SUPPORTED_MODELS)
    "microsoft/Phi-3-small-8k-instruct",
])
def test_neighbours_of_config_models_stay_unknown(ref: str) -> None:
    assert k.resolve_model(ref) is None


def test_gh200_is_the_96gb_part_kubeais_profile_selects() -> None:
    # kubeai charts/kubeai/values-nvidia-k8s-device-plugin.yaml: nvidia-gpu-gh200 selects
    # nvidia.com/gpu.memory 97871 MiB, the 96 GB HBM3 part
    for name in ("GH200", "NVIDIA-GH200-480GB", "gh200-96gb"):
        gpu = k.resolve_gpu(name)
        assert gpu is not None and (gpu.memory_gb, gpu.bandwidth_tbs) == (96, 4.0), name
    m = k.resolve_node_label("kubeai.org/resourceProfile", "gh200")
    assert m is not None and m.gpu.id == "gh200-96gb"
    assert k.resolve_gpu("H200").id == "h200"
    assert k.names_gpu_type("kubeai.org/resourceProfile")
    assert not k.names_gpu_type("node.kubernetes.io/instance-type")


def _gguf_type_by_search(name: str) -> str | None:
    """The file type ``name`` names, found type by type, longest first, ties in catalog order."""
    upper = name.upper()
    for t in sorted(_catalog().file_types, key=len, reverse=True):
        if re.search(rf"(?<![A-Z0-9]){re.escape(t)}(?![A-Z0-9])", upper):
            return t
    return None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(k.gguf_file_types()),
                          st.sampled_from(["-", "_", ".", "x", "K", "M", "0", "q", "gguf", "/"])),
                max_size=8).map("".join))
def test_gguf_type_in_a_name_is_the_longest_written_as_a_word(name: str) -> None:
    """One pattern over every start position gives what searching each type in turn gives."""
    assert _gguf_type_in(name) == _gguf_type_by_search(name)
