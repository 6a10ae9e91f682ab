"""`mgpu-lint plan`: sizing and a suggested layout for one model.

The sizing counts the GPUs for the weights plus the KV cache of the stated users × context
(``sizing.memory.gpus_needed``: ceil(total / usable per GPU)); the layout chooses TP/PP/DP from the
weights alone, keeping 40% of each GPU for the KV cache (``sizing.layout.choose_layout``). Both are
printed, with the reason when they differ, followed by `vllm serve`, SGLang
(`python3 -m sglang.launch_server`) and `llama-server` commands for the chosen layout.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import typer

from .. import bounds
from ..records import dataclass

if TYPE_CHECKING:
    from ..catalog.knowledge import GpuSpec, ModelShape, Precision
    from ..sizing.layout import Layout

DEFAULT_GPU = "h100-sxm"
MASTER_ADDR = "10.0.0.1"  # placeholder address of node 0 in the suggested multi-node commands
# SGLang's --dist-init-addr port on node 0 (any free port: PortArgs.init_new takes the ports
# after it for its own sockets, sglang/srt/server_args.py, 0.5.23); far from --port 30000
SGLANG_DIST_PORT = 20000
SGLANG_PORT = 30000  # ServerArgs.port's default (sglang/srt/server_args.py, 0.5.5 and 0.5.23)
# Catalog families whose SGLang model class runs pipeline parallel: ModelRunner asserts the
# model's forward takes `pp_proxy_tensors` ("Pipeline Parallel is not compatible with this
# model", sglang/srt/model_executor/model_runner.py, 0.5.23; the same test in 0.5.5).  Read in
# sglang/srt/models/ of both releases: LlamaForCausalLM and Phi3ForCausalLM (llama.py),
# Qwen2ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, GptOssForCausalLM,
# MixtralForCausalLM, DeepseekV2/V3ForCausalLM (deepseek_v2.py) take it; the Gemma, Granite
# and Llama 4 classes do not (and "mistral" holds Mistral3ForConditionalGeneration too).
SGLANG_PP_FAMILIES = frozenset({"llama", "phi3", "qwen2", "qwen3", "qwen3-moe", "gpt-oss",
                                "mixtral", "deepseek_v2", "deepseek-v3"})
DECODE_BATCH = 64  # decode batch of the all-reduce estimate (sizing/interconnect.py)
# GGUF file type suggested for a bit width (largest whose base type fits the bits).
GGUF_BY_BITS = ((16.0, "BF16"), (8.0, "Q8_0"), (6.0, "Q6_K"), (5.0, "Q5_K_M"), (4.0, "Q4_K_M"),
                (3.0, "Q3_K_M"), (0.0, "Q2_K"))


class PlanError(Exception):
    """A usage problem: unknown model or GPU, conflicting options."""


@dataclass(frozen=True)
class PlanInput:
    model: str
    bits: float | None = None
    dtype: str | None = None
    gpu: str = DEFAULT_GPU
    users: int = 32
    context: int = 8192
    gpus_per_node: int = 8
    nodes: int = 1
    interconnect: str | None = None
    usable: float = 0.9
    kv_cache_dtype: str | None = None


def _resolve(inp: PlanInput) -> tuple[ModelShape, Precision | None, GpuSpec]:
    from pathlib import Path

    from ..catalog.knowledge import (
        gpu_names,
        model_names,
        read_local_config,
        resolve_gpu,
        resolve_model,
    )

    shape, hint = None, None
    if Path(inp.model).is_dir():
        shape = read_local_config(inp.model)
    if shape is None:
        match = resolve_model(inp.model)
        if match is None:
            raise PlanError(f"unknown model {inp.model!r}; known models: "
                            f"{', '.join(model_names())} (or a directory with a config.json)")
        shape, hint = match.shape, match.precision
    gpu = resolve_gpu(inp.gpu)
    if gpu is None:
        raise PlanError(f"unknown GPU {inp.gpu!r}; known GPUs: {', '.join(gpu_names())}")
    return shape, hint, gpu


def compute_plan(inp: PlanInput) -> dict[str, Any]:
    """Every number of the plan, as raw floats (the JSON output)."""
    from ..catalog.knowledge import kv_cache_bytes_per_value, weight_precision
    from ..sizing import interconnect as ic
    from ..sizing.layout import KV_RESERVE, choose_layout
    from ..sizing.memory import (
        gpus_needed,
        kv_bytes,
        kv_bytes_per_sequence,
        kv_bytes_per_token,
        usable_bytes,
        weights_bytes,
    )
    from ..sizing.timing import decode_read_time

    if inp.bits is not None and inp.dtype is not None:
        raise PlanError("give --bits or --dtype, not both")
    if inp.interconnect not in (None, "nvlink", "pcie"):
        raise PlanError("--interconnect must be nvlink or pcie")
    shape, hint, gpu = _resolve(inp)
    precision = weight_precision(shape, dtype=inp.dtype, hint=hint, bits=inp.bits)
    kv_bpv = kv_cache_bytes_per_value(inp.kv_cache_dtype, dtype=inp.dtype, shape=shape)
    if kv_bpv is None:
        raise PlanError(f"unknown --kv-cache-dtype {inp.kv_cache_dtype!r}")
    interconnect = inp.interconnect or ("nvlink" if gpu.has_nvlink else "pcie")

    weights = weights_bytes(shape.params, precision.bits)
    kv = kv_bytes(shape, inp.users, inp.context, kv_bpv)
    usable = usable_bytes(gpu.memory_bytes, inp.usable)
    need = gpus_needed(weights + kv, usable)
    layout = choose_layout(weights, gpu.memory_bytes, inp.gpus_per_node, inp.nodes,
                           nvlink=interconnect == "nvlink", moe=shape.is_moe)
    bandwidth = gpu.bandwidth_bytes_per_s
    per_sequence = kv_bytes_per_sequence(shape, inp.context, kv_bpv, layout.tp, layout.pp)
    plan: dict[str, Any] = {
        "model": shape.id,
        "model_ref": inp.model,
        "gpu": gpu.id,
        "gpu_name": gpu.name,
        "precision": {"bits": precision.bits, "label": precision.label,
                      "origin": precision.origin},
        "kv_bytes_per_value": kv_bpv,
        "users": inp.users,
        "context": inp.context,
        "usable_fraction": inp.usable,
        "usable_gb_per_gpu": usable / 1e9,
        "weights_gb": weights / 1e9,
        "kv_gb": kv / 1e9,
        "total_gb": (weights + kv) / 1e9,
        "kv_per_token_kib": kv_bytes_per_token(shape, kv_bpv) / 1024,
        "gpus_needed": need,
        "read_ms_one_gpu": decode_read_time(weights, bandwidth) * 1e3,
        "read_ms_split": decode_read_time(weights, bandwidth, need) * 1e3,
        "layout": {
            "need": layout.need, "gpus": layout.gpus, "fits": layout.fits, "tp": layout.tp,
            "pp": layout.pp, "dp": layout.dp, "expert_parallel": layout.expert_parallel,
            "total_gpus": layout.total, "gpus_per_node": inp.gpus_per_node, "nodes": inp.nodes,
            "interconnect": interconnect, "kv_reserve": KV_RESERVE,
            "description": layout.describe(),
        },
        "counts_note": _counts_note(need, layout, inp, weights, usable, per_sequence),
        "all_reduce": None,
        "notes": _notes(shape, gpu, precision, inp, need, layout),
    }
    if layout.fits and layout.tp > 1:
        traffic = ic.all_reduce_traffic_per_forward(DECODE_BATCH, shape.hidden, shape.layers,
                                                    layout.tp)
        plan["all_reduce"] = {
            "tokens": DECODE_BATCH, "tp": layout.tp, "mb_per_gpu": traffic / 1e6,
            "nvlink_ms": (ic.transfer_time(traffic, gpu.nvlink_bytes_per_s) * 1e3
                          if gpu.nvlink_bytes_per_s else None),
            "pcie_ms": (ic.transfer_time(traffic, gpu.pcie_bytes_per_s) * 1e3
                        if gpu.pcie_bytes_per_s else None),
            "pcie_gen": gpu.pcie_gen,
            "weight_read_ms_per_gpu": decode_read_time(weights, bandwidth, layout.gpus) * 1e3,
        }
    sglang, why_not = _sglang_commands(shape, precision, inp, layout)
    if why_not:
        plan["notes"].append(why_not)
    plan["commands"] = {"vllm": _vllm_commands(shape, precision, inp, layout),
                        "sglang": sglang,
                        "llama_server": _llama_commands(shape, precision, inp, layout)}
    plan["vllm_budget"] = _vllm_budget(plan["commands"]["vllm"], gpu, inp)
    return plan


def _vllm_budget(commands: list[str], gpu: GpuSpec, inp: PlanInput) -> dict[str, Any] | None:
    """What vLLM would leave on the layout: the first suggested `vllm serve` command through the
    lint's own budget (linter/sizing/vllm_budget.py, vLLM's defaults for what the command does
    not set), with the built-in configuration so the plan does not depend on the directory."""
    if not commands:
        return None
    from ..analyze import FileSet
    from ..config import DEFAULT
    from ..runner import Options, read_files
    from .launches import resolved

    run = read_files([], command=commands[0])
    if not run.launches:
        return None
    dep = resolved(run.launches[0], Options(gpu=gpu.id, gpus_per_node=inp.gpus_per_node,
                                            config=DEFAULT),
                   FileSet(run.services, run.hpas, run.launches))
    if dep is None or dep["memory"]["kv_cache_bytes_per_gpu"] is None:
        return None
    return {"release": dep["vllm_release"], "max_model_len": dep["max_model_len"],
            "cuda_memory_catalogued": dep["gpu"]["cuda_memory_catalogued"], **dep["memory"]}


def _counts_note(need: int, layout: Layout, inp: PlanInput, weights: float, usable: float,
                 per_sequence: float) -> str | None:
    """How the table's GPUs, the layout's "needs N" and the GPUs the commands use relate
    (``per_sequence``: one GPU's KV bytes for one sequence under the layout's tp and pp)."""
    if not layout.fits:
        return None
    used = layout.gpus * layout.dp
    if need == layout.gpus == layout.need and used == layout.gpus:
        return None
    room = usable - weights / layout.gpus
    users = max(0, int(room // per_sequence)) if per_sequence > 0 else 0
    text = (f"ceil((weights + KV cache) / usable memory per GPU) = {need} GPU(s) for the weights"
            f" plus the KV cache of {inp.users} users x {inp.context:,} tokens; the layout sizes"
            f" for the weights alone with 40% of each GPU kept free ({layout.need} GPU(s)),"
            f" rounded up to a power of two: {layout.gpus} GPU(s) per replica,"
            f" whose {inp.usable:.0%} usable memory holds the KV cache of about {users} such"
            f" users")
    if used > layout.gpus:
        text += (f"; the commands fill the {used} GPUs present with {layout.dp} replicas of"
                 f" {layout.gpus}")
    return text


def _notes(shape: ModelShape, gpu: GpuSpec, precision: Precision, inp: PlanInput, need: int,
           layout: Layout) -> list[str]:
    from ..sizing.memory import derived_max_model_len

    notes = []
    if precision.origin == "--bits" and precision.bits < 8 and shape.quantization is None:
        notes.append(f"{precision.bits:g} bits per weight needs a pre-quantized checkpoint "
                     "(AWQ/GPTQ for vLLM, a GGUF file for llama.cpp)")
    if shape.sliding_layers and shape.sliding_window:
        notes.append(f"{shape.sliding_layers} of {shape.layers} layers keep at most "
                     f"{shape.sliding_window:,} tokens; KV per token counts the other layers")
    limit = derived_max_model_len(shape)
    if limit is not None and inp.context > limit:
        notes.append(f"context {inp.context:,} exceeds the model's limit of {limit:,} tokens")
    if layout.fits and layout.gpus > inp.gpus_per_node:
        notes.append(f"replace {MASTER_ADDR} with node 0's address; llama.cpp across nodes needs "
                     "its RPC backend (experimental, no authentication), so no llama-server "
                     "command is suggested")
    if not layout.fits:
        notes.append("lower the KV reserve (fewer or shorter contexts), quantize further, "
                     "or add nodes")
    if gpu.nvlink_bridge and not gpu.has_nvlink:
        notes.append(f"{gpu.name}: PCIe card; NVLink bridges can pair them (--interconnect "
                     "nvlink if yours are bridged)")
    if gpu.bf16_tflops is None:
        notes.append(f"{gpu.name}: BF16 FLOP/s not in the catalog")
    return notes


def _served_model(shape: ModelShape, precision: Precision, ref: str) -> tuple[str, bool]:
    """The name `vllm serve` gets (the user's Hugging Face id when given, else the catalog id)
    and whether that checkpoint is already stored at the planned precision."""
    if "/" in ref and precision.origin != "GGUF type" and not ref.lower().endswith(".gguf"):
        return ref, precision.origin == "model name"
    return shape.id, False


def _replicas(layout: Layout, inp: PlanInput) -> tuple[bool, int]:
    """Whether the layout spans nodes, and the data-parallel replicas one node holds (1 when it
    spans nodes)."""
    multi_node = layout.gpus > inp.gpus_per_node
    return multi_node, 1 if multi_node else inp.gpus_per_node // layout.gpus


def _precision_and_length(shape: ModelShape, precision: Precision, inp: PlanInput,
                          prequantized: bool, length_flag: str) -> list[str]:
    """The flags vLLM and SGLang spell alike: online FP8, --dtype, --kv-cache-dtype; then the
    context length under the engine's own name when the model's positions allow it."""
    from ..sizing.memory import derived_max_model_len

    args = []
    if precision.bits == 8 and shape.weight_bits > 8 and not prequantized:
        args += ["--quantization", "fp8"]
    if inp.dtype:
        args += ["--dtype", inp.dtype]
    if inp.kv_cache_dtype:
        args += ["--kv-cache-dtype", inp.kv_cache_dtype]
    limit = derived_max_model_len(shape)
    if limit is None or inp.context <= limit:
        args += [length_flag, str(inp.context)]
    return args


def _vllm_commands(shape: ModelShape, precision: Precision, inp: PlanInput,
                   layout: Layout) -> list[str]:
    if not layout.fits:
        return []
    served, prequantized = _served_model(shape, precision, inp.model)
    args = ["vllm", "serve", served]
    if layout.tp > 1:
        args += ["-tp", str(layout.tp)]
    if layout.pp > 1:
        args += ["-pp", str(layout.pp)]
    multi_node, replicas_per_node = _replicas(layout, inp)
    if replicas_per_node > 1:
        args += ["-dp", str(replicas_per_node)]
    if layout.expert_parallel and layout.tp * replicas_per_node > 1:
        args.append("--enable-expert-parallel")
    args += _precision_and_length(shape, precision, inp, prequantized, "--max-model-len")
    if not multi_node:
        return [" ".join(args)]
    nnodes = layout.gpus // inp.gpus_per_node
    return [" ".join(args + ["--nnodes", str(nnodes), "--node-rank", str(rank), "--master-addr",
                             MASTER_ADDR] + (["--headless"] if rank else []))
            for rank in range(nnodes)]


def _sglang_commands(shape: ModelShape, precision: Precision, inp: PlanInput,
                     layout: Layout) -> tuple[list[str], str | None]:
    """`python3 -m sglang.launch_server` for the layout, and why none is printed when SGLang
    cannot take the plan's options.

    Flags as SGLang 0.5.5's and 0.5.23's ServerArgs.add_cli_args spell them (the catalogs in
    linter/catalog/flags/sglang-*.json).  Placement follows SGLang's own loop
    (linter/facts/sglang_layout.py): one node runs tp/(nnodes per tp group) × pp-per-node GPUs
    per engine, and --dp-size engines (replicas, no --enable-dp-attention) start at GPU
    r × tp × pp (data_parallel_controller.py launch_dp_schedulers, 0.5.5 and 0.5.23), so the
    replicas of a node fill its GPUs.  Replicas never span nodes: "multi-node data-parallel
    replicas are not supported" (arg_groups/validation_hook.py check_server_args, 0.5.23;
    server_args.py check_server_args, 0.5.5) — across nodes the command is one replica, as
    the vLLM one is.  --ep-size tp only for an FP8 MoE checkpoint split over tp (below);
    other MoE layers are sharded by tp.  Not printed: --enable-dp-attention (the plan's
    layouts do not choose attention data parallel, and which model classes support it was
    not read) and an all-to-all backend (--moe-a2a-backend, which sets ep itself).
    """
    from ..engines.catalog import sglang_catalog

    if not layout.fits:
        return [], None
    catalog = sglang_catalog()
    for flag, value in (("--dtype", inp.dtype), ("--kv-cache-dtype", inp.kv_cache_dtype)):
        match = catalog.lookup(flag) if value else None
        if match is not None and match.option.choices is not None and \
                value not in match.option.choices:
            return [], (f"no SGLang command: SGLang {catalog.version} has no {flag} {value}"
                        f" (it takes {', '.join(match.option.choices)})")
    served, prequantized = _served_model(shape, precision, inp.model)
    if layout.pp > 1 and shape.family not in SGLANG_PP_FAMILIES:
        return [], (f"no SGLang command: the layout uses pp {layout.pp}, and SGLang runs "
                    "pipeline parallel only for models whose implementation takes it "
                    "(sglang/srt/model_executor/model_runner.py: \"Pipeline Parallel is not "
                    "compatible with this model\"); it was not found for this model")
    heads = _sglang_heads_refusal(shape, layout.tp)
    if heads:
        return [], f"no SGLang command: {heads}"
    fp8_stored = (prequantized and precision.bits == 8) or "fp8" in (shape.quantization or "")
    # Without expert parallel each expert's weights are split over tp, and a block-FP8
    # checkpoint raises unless intermediate / tp is a multiple of its block
    # (layers/quantization/fp8.py Fp8MoEMethod.create_weights, 0.5.5 and 0.5.23; the block
    # size is not in the catalog).  --ep-size tp keeps each expert whole on one GPU: the MoE
    # tp width is tp // ep (distributed/parallel_state.py initialize_model_parallel, 0.5.5;
    # runtime_context.py derive_parallel_widths, 0.5.23), FusedMoE asserts only that the
    # routed experts divide by ep (layers/moe/fused_moe_triton/layer.py, both), and an ep of
    # tp is what every MoE runner check accepts (1 or tp: server_args.py
    # _handle_moe_kernel_config, 0.5.5; arg_groups/moe_hook.py, 0.5.23) with the default
    # runner and no all-to-all backend.  Printed only where it is needed: elsewhere the
    # tp-sharded experts load as they are.
    expert_parallel = shape.is_moe and layout.tp > 1 and fp8_stored
    if expert_parallel and shape.experts % layout.tp:
        return [], (f"no SGLang command: at tp {layout.tp} SGLang splits each expert of an FP8 "
                    "checkpoint over the GPUs, which a block-quantized checkpoint may refuse "
                    f"(layers/quantization/fp8.py), and its {shape.experts} experts do not "
                    f"divide into --ep-size {layout.tp} (layers/moe/fused_moe_triton/layer.py)")
    args = ["python3", "-m", "sglang.launch_server", "--model-path", served]
    if layout.tp > 1:
        args += ["--tp-size", str(layout.tp)]
    if expert_parallel:
        args += ["--ep-size", str(layout.tp)]
    if layout.pp > 1:
        # pp > 1 turns SGLang's overlap schedule off by itself (arg_groups/overrides.py
        # _pipeline_parallel_overlap_disable, 0.5.23; server_args.py, 0.5.5)
        args += ["--pp-size", str(layout.pp)]
    multi_node, replicas_per_node = _replicas(layout, inp)
    if replicas_per_node > 1:
        args += ["--dp-size", str(replicas_per_node)]
    # online FP8 is `--quantization fp8` in SGLang too (QUANTIZATION_CHOICES: server_args.py
    # 0.5.5, arg_groups/choices.py 0.5.23); its length flag is --context-length
    args += _precision_and_length(shape, precision, inp, prequantized, "--context-length")
    args += ["--host", "0.0.0.0", "--port", str(SGLANG_PORT)]
    if not multi_node:
        return [" ".join(args)], None
    # the layout puts tp inside a node and pp across nodes: nnodes = pp, and each node runs
    # tp / max(nnodes // pp, 1) × max(pp // nnodes, 1) = tp GPUs (_launch_subprocesses,
    # engine.py 0.5.5; launch_tensor_parallel_group, data_parallel_controller.py 0.5.23);
    # check_server_args needs tp × pp divisible by nnodes
    nnodes = layout.pp
    return [" ".join(args + ["--nnodes", str(nnodes), "--node-rank", str(rank),
                             "--dist-init-addr", f"{MASTER_ADDR}:{SGLANG_DIST_PORT}"])
            for rank in range(nnodes)], None


def _sglang_heads_refusal(shape: ModelShape, tp: int) -> str | None:
    """SGLang's attention layers assert total_num_heads % tp_size == 0, and KV heads % tp == 0
    (KV heads ≥ tp) or tp % KV heads == 0 (fewer KV heads, which are replicated) while the model
    is built (sglang/srt/models/llama.py LlamaAttention, qwen2.py Qwen2Attention, 0.5.5 and
    0.5.23); MLA models (kv_lora_rank) shard their latent cache otherwise: not judged."""
    if tp <= 1 or shape.kv_lora_rank is not None:
        return None
    kv = shape.kv_heads
    if shape.heads % tp == 0 and (kv % tp == 0 if kv >= tp else tp % kv == 0):
        return None
    return (f"at tp {tp} SGLang's attention layers cannot split {shape.heads} heads and {kv} "
            "KV heads evenly (they assert heads % tp == 0 and that KV heads and tp divide one "
            "another: sglang/srt/models/llama.py, qwen2.py)")


def _gguf_type(shape: ModelShape, precision: Precision) -> str:
    if precision.origin == "GGUF type":
        return precision.label
    if shape.quantization == "mxfp4":
        return "MXFP4_MOE"
    return next(t for bits, t in GGUF_BY_BITS if precision.bits >= bits)


def _llama_commands(shape: ModelShape, precision: Precision, inp: PlanInput,
                    layout: Layout) -> list[str]:
    from ..engines.llamacpp import MAX_TENSOR_SPLIT

    if not layout.fits or layout.gpus > inp.gpus_per_node or layout.gpus > MAX_TENSOR_SPLIT:
        # (llama-server refuses a -ts of more entries: engines/llamacpp.py MAX_TENSOR_SPLIT)
        return []
    gguf = f"{shape.name}-{_gguf_type(shape, precision)}.gguf"
    base = ["llama-server", "-m", gguf, "-ngl", "99", "-c", str(inp.users * inp.context),
            "-np", str(inp.users)]
    if layout.gpus > 1:
        base += ["-sm", "layer", "-ts", ",".join(["1"] * layout.gpus)]
    replicas = inp.gpus_per_node // layout.gpus
    if replicas == 1:
        return [" ".join(base)]
    out = []
    for r in range(replicas):
        devices = ",".join(str(d) for d in range(r * layout.gpus, (r + 1) * layout.gpus))
        out.append(" ".join([f"CUDA_VISIBLE_DEVICES={devices}", *base, "--port", str(8080 + r)]))
    return out


def render_text(plan: dict[str, Any]) -> str:
    """The plan as text: the sizing row, then the layout line."""
    from ..sizing.display import fixed

    name = plan["model"].rsplit("/", 1)[-1]
    width = max(5, len(name))
    p, lay = plan["precision"], plan["layout"]
    lines = [
        (f"plan for {plan['model_ref']} (catalog: {plan['model']}) on {plan['gpu_name']}"
         f" ({plan['gpu']})"),
        (f"precision: {p['bits']:g} bits per weight ({p['label']}, from {p['origin']});"
         f" KV cache {plan['kv_bytes_per_value']:g} bytes per value"),
        (f"workload: {plan['users']} users x {plan['context']:,} tokens;"
         f" {plan['usable_fraction']:.0%} of each GPU usable"
         f" ({fixed(plan['usable_gb_per_gpu'], 1)} GB)"),
        "",
        (f"{'model':<{width}}  bits  weights GB  KV GB  total GB  GPUs  read ms, 1 GPU"
         "  read ms, split"),
        (f"{name:<{width}}  {fixed(p['bits'], 1):>4}  {fixed(plan['weights_gb'], 1):>10}"
         f"  {fixed(plan['kv_gb'], 1):>5}  {fixed(plan['total_gb'], 1):>8}"
         f"  {plan['gpus_needed']:>4}"
         f"  {fixed(plan['read_ms_one_gpu'], 1):>13}  {fixed(plan['read_ms_split'], 1):>14}"),
        f"KV cache per token, {name}: {fixed(plan['kv_per_token_kib'], 0)} KiB",
        "",
        (f"layout ({lay['kv_reserve']:.0%} of each GPU kept for KV cache and buffers,"
         f" {lay['gpus_per_node']} x {lay['nodes']} GPUs, {lay['interconnect']}):"),
        f"  {lay['description']}",
    ]
    if plan["counts_note"]:
        lines.append(f"  {plan['counts_note']}")
    ar = plan["all_reduce"]
    if ar:
        times = []
        if ar["nvlink_ms"] is not None:
            times.append(f"{fixed(ar['nvlink_ms'], 2)} ms on NVLink")
        if ar["pcie_ms"] is not None:
            times.append(f"{fixed(ar['pcie_ms'], 2)} ms on PCIe {ar['pcie_gen']}.0")
        lines.append(f"  all-reduce at TP={ar['tp']}, decode batch {ar['tokens']}:"
                     f" {fixed(ar['mb_per_gpu'], 1)} MB per GPU per step"
                     + (f", {', '.join(times)}" if times else "")
                     + f" (weight read {fixed(ar['weight_read_ms_per_gpu'], 2)} ms per GPU)")
    v = plan.get("vllm_budget")
    if v:
        lines.append("  " + _vllm_line(v))
    commands = (plan["commands"]["vllm"] + plan["commands"]["sglang"]
                + plan["commands"]["llama_server"])
    if commands:
        lines += ["", "suggested commands:"] + [f"  {c}" for c in commands]
    if plan["notes"]:
        lines += ["", "notes:"] + [f"  - {n}" for n in plan["notes"]]
    return "\n".join(lines) + "\n"


def _vllm_line(v: dict[str, Any]) -> str:
    """The budget of the suggested vLLM command, in the words of vLLM's start-up log."""
    from ..sizing.display import gib

    card = gib(v["gpu_memory_bytes"]) + ("" if v["cuda_memory_catalogued"] else
                                         " (marketed size: CUDA total not catalogued)")
    head = (f"vLLM {v['release']} with the vllm command below: requests {gib(v['requested_bytes'])}"
            f" of {card} per GPU, weights {gib(v['weights_bytes_per_gpu'])}")
    if v["kv_cache_bytes_per_gpu"] <= 0:
        return head + "; no memory is left for the KV cache: vLLM refuses to start"
    return (head + f", KV cache {gib(v['kv_cache_bytes_per_gpu'])}: GPU KV cache size"
            f" {v['kv_cache_tokens']:,} tokens, maximum concurrency for {v['max_model_len']:,}"
            f" tokens per request {v['max_concurrency']:.2f}x per replica")


def register(app: typer.Typer) -> None:
    @app.command("plan")
    def plan_cmd(
        model: str = typer.Option(..., "--model", "-m", help="model id, name, GGUF file or "
                                                             "directory with config.json"),
        bits: float | None = typer.Option(None, "--bits", min=1.0, max=32.0,
                                             help="bits per weight (16, 8, 4.5 …)"),
        dtype: str | None = typer.Option(None, "--dtype", help="vLLM --dtype (bfloat16 …)"),
        gpu: str = typer.Option(DEFAULT_GPU, "--gpu", help="GPU type (H100 SXM, nvidia-l4 …)"),
        # at most bounds.MAX_TOKENS, as in the configuration: 10^30 users printed 31-digit
        # llama-server -np values and 10^29 GB of KV cache
        users: int = typer.Option(32, "--users", min=1, max=bounds.MAX_TOKENS,
                                  help="concurrent sequences"),
        context: int = typer.Option(8192, "--context", min=1, max=bounds.MAX_TOKENS,
                                    help="tokens per sequence"),
        # bounded as check's option: the llama-server commands list one -ts entry and one
        # CUDA_VISIBLE_DEVICES id per GPU (10^9 took 3.9 GB and ended in a traceback)
        gpus_per_node: int = typer.Option(8, "--gpus-per-node", min=1,
                                          max=bounds.MAX_GPUS_PER_NODE, help="GPUs per node"),
        nodes: int = typer.Option(1, "--nodes", min=1, help="nodes"),
        interconnect: str | None = typer.Option(
            None, "--interconnect", help="nvlink or pcie (default: the GPU's)"),
        usable: float = typer.Option(0.9, "--usable", min=0.01, max=1.0,
                                     help="share of each GPU the engine may use"),
        kv_cache_dtype: str | None = typer.Option(None, "--kv-cache-dtype",
                                                     help="vLLM --kv-cache-dtype (auto, fp8 …)"),
        fmt: str = typer.Option("text", "--output-format", "--format", help="text or json"),
    ) -> None:
        """Size a model for users x context and choose a tensor/pipeline/data-parallel layout."""
        if fmt not in ("text", "json"):
            typer.echo("mgpu-lint plan: error: Invalid value for '--output-format': "
                       f"{fmt!r} is not one of 'text', 'json'. (see `mgpu-lint plan --help`)",
                       err=True)
            raise typer.Exit(2)
        inp = PlanInput(model=model, bits=bits, dtype=dtype, gpu=gpu, users=users,
                        context=context, gpus_per_node=gpus_per_node, nodes=nodes,
                        interconnect=interconnect, usable=usable, kv_cache_dtype=kv_cache_dtype)
        try:
            plan = compute_plan(inp)
        except PlanError as exc:
            typer.echo(f"mgpu-lint plan: error: {exc} (see `mgpu-lint plan --help`)", err=True)
            raise typer.Exit(2) from None
        if fmt == "json":
            typer.echo(json.dumps(plan, indent=2))
        else:
            typer.echo(render_text(plan), nl=False)
