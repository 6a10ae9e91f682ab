"""llama.cpp memory: each device's layers, weights and KV cache (MG309-MG310).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from mgpu_lint.deployment import Deployment
from mgpu_lint.engines.adapter import LLAMA_ARGS
from mgpu_lint.facts.llama import fit_active
from mgpu_lint.findings import Finding, Severity
from mgpu_lint.sizing import llamacpp as llama_sizing
from mgpu_lint.sizing import memory as mem
from mgpu_lint.sizing.display import fixed, gb, percent

from .registry import Rule, rule
from .text import cap_assumed, gpu_phrase, gpu_related, model_span, setting_related

if TYPE_CHECKING:
    pass

GGUF_ORIGINS = ("GGUF type", "GGUF header")


def _slots(n_parallel: int) -> int:
    """Server slots: -np, or 4 when auto (-1) (tools/server/server.cpp)."""
    return n_parallel if n_parallel > 0 else mem.LLAMA_AUTO_SLOTS


@rule("MG309", "llama-device-memory", Severity.ERROR,
      "llama.cpp: weights and KV cache of a device's layers exceed its memory",
      needs={LLAMA_ARGS},
      reads=("model", "hf_repo", "n_gpu_layers", "tensor_split", "ctx_size", "parallel",
          "cache_type_k", "cache_type_v", "rpc", "device"))
def llama_device_memory(d: Deployment) -> Iterator[Finding]:
    """
    What it does: places the layers as llama.cpp does (src/llama-model.cpp load_tensors:
    normalised running sums of -ts, or equal shares of identical free GPUs; the output layer
    counts as layer n_layer; only the last -ngl units go to GPUs) and adds, per device, its layers'
    weights
    (GGUF bits per weight) and KV cache (-c cells, -np slots, -ctk/-ctv types; the output layer
    on the last device). Silent while --fit is active (no -ngl/-ts and no -fit off): then
    llama.cpp chooses the split and may shorten the context at load time.

    Why is this bad? A device asked to hold more than its memory fails the load
    ("cudaMalloc failed: out of memory"). With -c 0 (the default) the KV cache covers the
    model's whole trained context: 131,072 tokens of Llama 3.1 8B in f16 are 17.2 GB.

    Use instead: a -ts that follows the devices' memory, a smaller -c, a quantized KV cache
    (-ctk q8_0 -ctv q8_0), fewer -ngl layers, or leave -ngl/-ts to --fit.
    """
    inv, model, g = d.inv, d.model, d.gpu
    if model is None or model.shape is None or g is None \
            or g.spec is None or model.kv_bytes is None or fit_active(d):
        return
    needed = (inv.n_gpu_layers, inv.tensor_split, inv.ctx_size, inv.parallel, inv.split_mode,
              inv.kv_unified, inv.kv_offload, inv.main_gpu)
    if not all(s.known for s in needed):
        return
    if any(s.given for s in (inv.rpc, inv.device, inv.override_tensor, inv.cpu_moe,
                             inv.n_cpu_moe)):
        return  # devices or tensor placement we cannot see
    mode = str(inv.split_mode.value)
    if mode not in ("layer", "none"):
        return
    shape = model.shape
    ngl = inv.n_gpu_layers.value if isinstance(inv.n_gpu_layers.value, int) else None
    count = g.count
    ts = inv.tensor_split.value if inv.tensor_split.given else None
    equal_split = False
    if mode == "none":
        proportions = [1.0]
        names = [f"GPU{inv.main_gpu.value}"]
    elif ts:
        n = count if count is not None else len(ts)
        proportions = [float(x) for x in ts[:n]] + [0.0] * max(0, n - len(ts))
        names = [f"GPU{i}" for i in range(n)]
    elif count:
        proportions, names, equal_split = [1.0] * count, [f"GPU{i}" for i in range(count)], True
    else:
        return
    if not any(llama_sizing.f32(p) > 0 for p in proportions):
        return  # all zero as the float32 llama.cpp stores them (-ts 1e-320)
    n_ctx = inv.ctx_size.int_value
    n_parallel = inv.parallel.int_value
    if n_ctx is None or n_parallel is None:
        return
    if n_ctx <= 0:
        if shape.max_positions is None:
            return
        n_ctx = shape.max_positions
    unified = n_parallel < 0 or inv.kv_unified.value is True
    slots = _slots(n_parallel)
    cells = mem.llama_kv_cells(n_ctx, slots, unified, shape.max_positions)
    split = llama_sizing.layer_split(shape.layers, ngl, proportions, names)
    layer = mem.llama_layer_bytes(shape, model.weights.bits)
    kv_on_gpu = inv.kv_offload.value is not False
    kv_layer = mem.llama_kv_bytes_per_layer(shape, cells, model.kv_bytes) if kv_on_gpu else 0.0
    devices = mem.llama_device_memory([(dev.name, dev.count, dev.output)
                                       for dev in split.devices], layer, kv_layer)
    card = g.spec.memory_bytes
    allowance = mem.OVERHEAD_SHARE * card
    verdicts = [(dev, mem.memory_verdict(dev.total, card, allowance)) for dev in devices]
    worst = [(dev, v) for dev, v in verdicts if v is not None]
    if not worst:
        return
    bits_stated = model.weights.origin in GGUF_ORIGINS
    assumed = g.assumed or equal_split or not bits_stated
    exceeds = any(v == "exceeds" for _, v in worst)
    severity = cap_assumed(Severity.ERROR if exceeds else Severity.WARNING, assumed)
    assumptions = []
    if g.assumed:
        assumptions.append(f"assuming {g.spec.name} ({g.assumption})")
    if equal_split:
        assumptions.append("assuming equal free memory on every GPU (no -ts)")
    if not bits_stated:
        assumptions.append(f"assuming {model.weights.bits:g} bits per weight (no GGUF type "
                           "in the model name)")
    parts = [f"{dev.name} needs {gb(dev.total)} ({gb(dev.weights)} weights + {gb(dev.kv)} KV)"
             for dev, _ in worst]
    verb = "exceeding" if exceeds else "close to"
    message = (f"{'; '.join(parts)}, {verb} its {gb(card)}"
               + (f" ({'; '.join(assumptions)})" if assumptions else "")
               + (": the model does not load" if exceeds else ""))
    stated_ctx = inv.ctx_size.int_value
    ctx_flag = d.inv.spelling(inv.ctx_size)
    context = f"{ctx_flag} {stated_ctx:,}" if stated_ctx else \
        f"trained context {n_ctx:,} ({ctx_flag} 0)"
    math_lines = [f"layer split: {llama_sizing.describe_layer_split(split)}",
                  (f"weights: {shape.params / 1e9:.4g}B params × "
                  f"{model.weights.bits:g} bits ({model.weights.label}) = "
                  f"{gb(mem.weights_bytes(shape.params, model.weights.bits))}; "
                  f"{gb(layer.layer, 2)} per layer, output layer {gb(layer.output, 2)}, "
                  "token embeddings on the CPU"),
                  f"KV cache: {cells:,} cells ({context}, "
                  f"{'unified' if unified else str(slots) + ' slots'}), "
                  + (f"{fixed(kv_layer / 1e6, 1)} MB per layer" if kv_on_gpu else
                     "in host memory (-nkvo)")]
    math_lines += [f"{dev.name}: {dev.layers} layers{' + output' if dev.output else ''} → "
                   f"{gb(dev.weights)} + {gb(dev.kv)} KV = {gb(dev.total)} of {gb(card)}"
                   for dev in devices]
    math_lines.append(f"overhead allowance (compute buffers, CUDA context): {gb(allowance)} "
                      f"({percent(mem.OVERHEAD_SHARE, 0)} of each device); within it a verdict "
                      "is a warning")
    related = gpu_related(d) + setting_related(d, inv.n_gpu_layers, inv.tensor_split,
                                                 inv.ctx_size)
    yield llama_device_memory.finding(message, d.source, model_span(d),
                  hint=f"lower {ctx_flag}, quantize the KV cache "
                       f"({inv.long_name('cache_type_k')} / "
                       f"{inv.long_name('cache_type_v')} q8_0), move layers with "
                       f"{inv.long_name('tensor_split')}, or offload fewer layers",
                  math=tuple(math_lines), related=related,
                  data={"devices": [{"name": dev.name, "layers": dev.layers,
                                     "output": dev.output, "weights_bytes": dev.weights,
                                     "kv_bytes": dev.kv} for dev in devices],
                        "device_bytes": card, "kv_cells": cells,
                        "overhead_allowance_bytes": allowance}, severity=severity)


@rule("MG310", "partial-offload", Severity.INFO,
      "-ngl below the layer count: some layers stay on the CPU",
      needs={LLAMA_ARGS}, reads=("model", "hf_repo", "n_gpu_layers"), given=("n_gpu_layers",))
def partial_offload(d: Deployment) -> Iterator[Finding]:
    """
    What it does: reports llama-server launches whose -ngl offloads fewer units than the
    model has (its layers plus the output layer), and which layers stay on the CPU.

    Why is this bad? llama.cpp offloads from the end: with -ngl 20 on a
    32-layer model, layers 0-12 stay on the CPU. Every generated token then reads those layers'
    weights from system memory with the CPU, at a fraction of the GPU's bandwidth, and the GPU
    waits: a small CPU share already dominates the time per token.

    Use instead: -ngl all (or a number at least the layer count + 1) when the model fits, or
    leave -ngl to --fit, which offloads as many layers as the free memory allows.
    """
    inv, model = d.inv, d.model
    setting = inv.n_gpu_layers
    ngl = setting.int_value
    if model is None or model.shape is None or ngl is None \
            or ngl < 0 or not setting.given or setting.span is None:
        return
    shape = model.shape
    units = shape.layers + 1
    if ngl >= units:
        return
    start, count = llama_sizing.gpu_layer_range(shape.layers, ngl)
    layer = mem.llama_layer_bytes(shape, model.weights.bits)
    cpu_layers = min(start, shape.layers)
    on_cpu = cpu_layers * layer.layer
    if count == 0:
        where = f"every layer (0-{shape.layers - 1}) and the output layer stay on the CPU"
    else:
        where = (f"layers 0-{cpu_layers - 1} ({cpu_layers} of {shape.layers}) stay on the CPU"
                 f", layers {cpu_layers}-{shape.layers - 1} and the output layer go to the GPU")
    spec = d.gpu.spec if d.gpu is not None else None
    math_lines = [(f"units: {shape.layers} layers + output = {units}; {d.inv.spelling(setting)} "
                   f"{ngl} puts the last "
                  f"{count} on GPUs (first GPU unit: {start})"),
                  (f"on the CPU: {cpu_layers} × {gb(layer.layer, 2)} = {gb(on_cpu)} of weights "
                  f"({model.weights.label}) read from system memory for every token")]
    if spec is not None:
        gpu_ms = fixed(on_cpu / spec.bandwidth_bytes_per_s * 1e3, 2)
        math_lines.append(f"the same bytes take {gpu_ms} ms at the {spec.bandwidth_tbs:g} TB/s "
                          f"of the GPU ({gpu_phrase(d, spec)})")
    yield partial_offload.finding(
                  f"{d.inv.spelling(setting)} {ngl} offloads {count} of {units} units: {where} "
                  f"({gb(on_cpu)} of weights read by the CPU at every token)",
                  d.source, setting.span,
                  hint=f"use {d.inv.spelling(setting)} all when the model fits, or leave it to "
                       f"{inv.long_name('fit')}",
                  math=tuple(math_lines),
                  data={"n_gpu_layers": ngl, "cpu_layers": cpu_layers, "gpu_units": count,
                        "cpu_weights_bytes": on_cpu})


RULES: list[Rule] = [llama_device_memory, partial_offload]
