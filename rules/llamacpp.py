"""llama.cpp placement: layer split, tensor split, main GPU, adapters (MG5xx).

Engine facts are from llama.cpp master 3f545bec (2026-08-22; reference/engines/llama-notes.md §4):
the device list (src/llama.cpp llama_prepare_model_devices), the split points and layer placement
(src/llama-model.cpp load_tensors) and `--fit` (common/fit.cpp).
"""

from __future__ import annotations

from collections.abc import Iterator

from mgpu_lint.deployment import Deployment
from mgpu_lint.engines.adapter import LLAMA_ARGS
from mgpu_lint.facts.llama import fit_active, gpu_backend, llama_devices
from mgpu_lint.findings import Finding, Related, Severity
from mgpu_lint.sizing.display import fixed
from mgpu_lint.sizing.llamacpp import (
    describe_layer_split,
    device_names,
    effective_proportions,
    f32,
    gpu_layer_range,
    layer_split,
    running_sums,
    split_points,
)

from .registry import Rule, rule

AUTO_SLOTS = 4  # -np auto: the server runs 4 slots (tools/server/server.cpp)


def _ts_text(d: Deployment) -> str:
    ts = d.inv.tensor_split
    win = ts.winner
    return f"{win.spelling} {win.raw}" if win is not None else "-ts"


def _mode(d: Deployment) -> str | None:
    mode = d.inv.split_mode
    return str(mode.value) if mode.known else None


def _extra_zeros(given: list[float], n: int) -> bool:
    """More -ts entries than devices, the extra ones all 0 (harmless)."""
    return len(given) > n and not any(given[n:])


def _numbers(values: list[float]) -> str:
    return ", ".join(fixed(v, 4).rstrip("0").rstrip(".") for v in values)


@rule("MG501", "llama-layer-split", Severity.INFO,
      "the layer range each llama.cpp device gets, when the split is uneven or surprising",
      needs={LLAMA_ARGS},
      reads=("model", "hf_repo", "n_gpu_layers", "tensor_split", "rpc", "device"),
      given=("tensor_split",))
def llama_layer_split(d: Deployment) -> Iterator[Finding]:
    """
    What it does: computes where llama.cpp puts each layer for a stated `-ts` (and `-ngl`)
    in the default `-sm layer` mode, and shows the ranges when the proportions are uneven, a
    device with a share gets no layer, or RPC devices take the first layers.

    Why is this bad? Proportions are not layer counts. llama.cpp assigns layers as
    src/llama-model.cpp load_tensors does: the
    `-ts` proportions become normalised running sums (3,1 → 0.75, 1.0); the output layer
    counts as layer n_layer; only the last `-ngl` units go to devices; layer il goes to the
    first device whose split point is greater than (il − first GPU unit) / GPU units, in
    float32. With 32 layers, `-ts 3,1` gives GPU0 layers 0-24 (25) and GPU1 layers 25-31 (7)
    plus the output layer. RPC devices come first in the list, so remote machines get the
    first layers. Each device also holds the KV cache of its layers, so the cache splits the
    same way.

    Use instead: choose `-ts` from the layer counts you want, not from memory sizes alone.
    """
    if _mode(d) != "layer":
        return
    ts = d.inv.tensor_split
    ngl = d.inv.n_gpu_layers
    shape = d.model.shape if d.model is not None else None
    if not ts.given or not ts.known or not ngl.known or shape is None or ts.span is None:
        return
    given = [float(v) for v in ts.value or ()]
    devices = llama_devices(d)
    if devices is not None and devices.complete:
        if len(given) != len(devices.names) and not _extra_zeros(given, len(devices.names)):
            return  # the count itself is wrong: MG502
        names = list(devices.names)
        rpc = devices.rpc if not d.inv.device.given else 0
    else:
        # local GPUs not stated: one device per -ts entry (after the RPC devices)
        rpc = devices.rpc if devices is not None else 0
        names = device_names(rpc, max(len(given) - rpc, 0), gpu_backend(d))
    if not names:
        return
    shares = effective_proportions(given, len(names))
    if not any(f32(s) for s in shares):
        return  # all zero (as the float32 llama.cpp stores): it splits by free memory (MG505)
    n_gpu = ngl.value if isinstance(ngl.value, int) and ngl.value >= 0 else None
    _, units = gpu_layer_range(shape.layers, n_gpu)
    if units == 0:
        return  # -ngl 0: nothing on the devices (MG310 explains partial offload)
    split = layer_split(shape.layers, n_gpu, shares, names)
    positive = [s for s in shares if s > 0]
    starved = [dv.name for dv, s in zip(split.devices, shares, strict=True)
               if s > 0 and dv.count == 0 and not dv.output]
    uneven = len(set(positive)) > 1
    if not (uneven or starved or rpc):
        return
    reasons = []
    if uneven:
        reasons.append(f"{_ts_text(d)} is uneven")
    if starved:
        reasons.append(f"{', '.join(starved)} get(s) no layer despite a share")
    if rpc:
        reasons.append("RPC devices come first, so remote machines get the first layers")
    math = (
        (f"split points: running sums {_numbers(running_sums(shares))} divided by "
         f"{_numbers(running_sums(shares)[-1:])} = {_numbers(split_points(shares))} (float32)"),
        (f"{shape.layers} layers + the output layer = {shape.layers + 1} units; {units} on "
        f"devices; layer il goes to the first device whose split point is > (il − first "
        f"device unit) / {units}"),
        "each device also holds the KV cache of its layers",
    )
    yield llama_layer_split.finding(
        f"llama.cpp places {describe_layer_split(split)} ({'; '.join(reasons)})",
        d.source, ts.span,
        hint="set -ts from the layer counts you want on each device",
        math=math,
        related=devices.related if devices is not None else (),
        data={"devices": [{"name": dv.name, "first": dv.layers.first if dv.layers else None,
                           "last": dv.layers.last if dv.layers else None, "count": dv.count,
                           "output": dv.output} for dv in split.devices],
              "cpu_layers": split.cpu_layers.count if split.cpu_layers else 0},
    )


@rule("MG502", "tensor-split-device-count", Severity.WARNING,
      "`-ts` has a different number of entries than llama.cpp has devices",
      needs={LLAMA_ARGS}, reads=("tensor_split", "device"), given=("tensor_split",))
def tensor_split_device_count(d: Deployment) -> Iterator[Finding]:
    """
    What it does: compares the number of `-ts` entries with the devices llama.cpp sees: the
    GPUs the launch gets (CUDA_VISIBLE_DEVICES, the container's GPU limit, compose devices,
    `--gpus`) plus one per `--rpc` server, which come first — or exactly the `-dev` list.

    Why is this bad? llama.cpp reads only the first n_devices entries of `-ts` and treats
    missing ones as 0 (src/llama-model.cpp load_tensors). Extra entries are silently ignored;
    too few entries leave the remaining devices with no layers, so the model crowds onto the
    first devices. With `--rpc`, the RPC devices take the first entries: an entry meant for a
    local GPU goes to a remote one.

    Use instead: one entry per device, RPC devices first.
    """
    if _mode(d) == "none":
        return
    ts = d.inv.tensor_split
    if not ts.given or not ts.known or ts.span is None:
        return
    devices = llama_devices(d)
    if devices is None or not devices.complete:
        return
    given = [float(v) for v in ts.value or ()]
    n = len(devices.names)
    if len(given) == n or n == 0:
        return
    if _extra_zeros(given, n):
        return
    if len(given) > n:
        ignored = given[n:]
        effect = (f"llama.cpp uses the first {n} and ignores {_numbers(ignored)}")
    else:
        missing = list(devices.names[len(given):])
        effect = f"{', '.join(missing)} get(s) proportion 0 and no layers"
    yield tensor_split_device_count.finding(
        f"{_ts_text(d)} has {len(given)} entr{'y' if len(given) == 1 else 'ies'} but llama.cpp "
        f"sees {n} device(s) ({', '.join(devices.names)}; {devices.origin}): {effect}",
        d.source, ts.span,
        hint=f"give {n} proportions, in llama.cpp's device order (RPC devices first)",
        related=devices.related,
    )


@rule("MG503", "tensor-split-ignored", Severity.WARNING,
      "`-ts` with `-sm none`: only the main GPU is used",
      needs={LLAMA_ARGS}, reads=("tensor_split", "split_mode"), given=("tensor_split",))
def tensor_split_ignored(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `-ts/--tensor-split` together with `-sm none`.

    Why is this bad? With split mode `none` llama.cpp keeps only the device `-mg` names and
    drops the others before the split is computed (src/llama.cpp llama_prepare_model_devices):
    the proportions have nothing to split, and the model sits on one GPU.

    Use instead: `-sm layer` (the default) to split by the proportions, or drop `-ts` and pick
    the GPU with `-mg`.
    """
    if _mode(d) != "none":
        return
    ts = d.inv.tensor_split
    mode = d.inv.split_mode
    if not ts.given or not ts.known or ts.span is None:
        return
    mg = d.inv.main_gpu
    main = mg.value if mg.known and isinstance(mg.value, int) else 0
    related = (Related(d.source, mode.span, "split mode none"),) if mode.span else ()
    yield tensor_split_ignored.finding(
        f"{_ts_text(d)} is ignored with -sm none: llama.cpp uses only the main GPU "
        f"(-mg {main}) and drops the other devices",
        d.source, ts.span,
        hint="use -sm layer to split by these proportions, or remove -ts",
        related=related,
    )


@rule("MG504", "main-gpu-out-of-range", Severity.ERROR,
      "`-mg` names a device that does not exist",
      needs={LLAMA_ARGS}, reads=("split_mode", "main_gpu"), given=("main_gpu",))
def main_gpu_out_of_range(d: Deployment) -> Iterator[Finding]:
    """
    What it does: compares `-mg/--main-gpu` with the number of devices llama.cpp sees (RPC
    devices first, then the local GPUs, or the `-dev` list).

    Why is this bad? With `-sm none`, llama.cpp keeps only devices[main_gpu]; an index past
    the end fails the load with "invalid value for main_gpu" (src/llama.cpp). In every other
    mode libllama does not read `-mg` at all (llama.cpp 3f545bec: the help text's "with
    split-mode = row" clause has no use in src/), so the value is ignored.

    Severity: an error with `-sm none` on a stated device count; a warning when the count
    assumes one device per RPC server; an info in the other split modes.

    Use instead: an index below the device count (RPC devices count first).
    """
    mg = d.inv.main_gpu
    mode = _mode(d)
    if not mg.given or not mg.known or not isinstance(mg.value, int) or mode is None:
        return
    devices = llama_devices(d)
    if devices is None or not devices.complete or not devices.names:
        return
    n = len(devices.names)
    if mg.value < n:
        return
    listed = f"{n} device(s): {', '.join(devices.names)} ({devices.origin})"
    if mode == "none":
        severity = Severity.ERROR if devices.certain else Severity.WARNING
        message = (f"-mg {mg.value} with -sm none but llama.cpp sees {listed}: the load fails "
                   "with \"invalid value for main_gpu\"")
    else:
        severity = Severity.INFO
        message = (f"-mg {mg.value} is past the {listed}; with -sm {mode} llama.cpp does not "
                   "use -mg, so it is ignored")
    yield main_gpu_out_of_range.finding(message, d.source, mg.span or d.program_span,
                  hint=f"use an index from 0 to {n - 1} (RPC devices count first)",
                  related=devices.related, severity=severity)


@rule("MG505", "split-follows-free-memory", Severity.INFO,
      "no `-ts`: the layer split is decided by free memory at load time",
      needs={LLAMA_ARGS})
def split_follows_free_memory(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds llama-server launches in `-sm layer` mode over two or more devices
    without `-ts`.

    Why is this bad? Without `-ts` the proportions are each device's free
    memory when the model loads: free 22 and 10 GB give 23 and 9 of 32 layers. Another process
    holding memory on one GPU (a second server, a notebook, a leftover context) shifts layers
    to the others, so the same command gives different splits on different days. When `--fit`
    is active (the default, unless `-ngl` or `-ts` is given or `-fit off`), fit measures free
    memory and writes per-device layer counts at load time, and may lower the context when
    `-c` is 0 (common/fit.cpp). Either way the split cannot be known from the files.

    Use instead: `-ts` with the proportions you want (which also keeps `--fit` away from the
    split).
    """
    if _mode(d) != "layer" or d.inv.tensor_split.given:
        return
    devices = llama_devices(d)
    if devices is None or len(devices.names) < 2:
        return
    where = (f"{'' if devices.complete else 'at least '}{len(devices.names)} devices "
             f"({', '.join(devices.names)}; {devices.origin})")
    if fit_active(d):
        message = (f"no -ts over {where}: --fit decides the layer split at load time from each "
                   "device's free memory (and may lower the context)")
    else:
        message = (f"no -ts over {where}: llama.cpp splits the layers in proportion to each "
                   "device's free memory at load time, so memory held by other processes "
                   "shifts layers")
    yield split_follows_free_memory.finding(message, d.source, d.program_span,
        hint="pass -ts (e.g. -ts " + ",".join("1" for _ in devices.names)
             + ") to fix the split",
        math=(("free 22 GB and 10 GB → split points 0.6875, 1.0 → 23 and 9 of 32 layers "
              "(llama.cpp src/llama-model.cpp load_tensors)"),),
        related=devices.related,
    )


@rule("MG506", "lora-not-batched", Severity.INFO,
      "several llama.cpp LoRA adapters with several slots: mixed requests are not batched",
      needs={LLAMA_ARGS}, reads=("parallel",))
def lora_not_batched(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds llama-server launches that load two or more LoRA adapters (`--lora`,
    `--lora-scaled`) and serve several slots (`-np` > 1, or auto: 4 slots).

    Why is this bad? The llama-server README: "requests with different
    LoRA configurations will not be batched together, which may result in performance
    degradation". Traffic that mixes adapters runs as several small batches, each reading the
    whole base model, unlike vLLM, which batches up to `--max-loras` adapters in one forward
    pass.

    Use instead: route each adapter's traffic to its own server or slot group, merge a hot
    adapter into the weights, or serve multi-adapter traffic with vLLM `--enable-lora`.
    """
    lora, scaled = d.inv.lora, d.inv.lora_scaled
    if not lora.known or not scaled.known:
        return
    adapters = list(lora.value or ()) + list(scaled.value or ())
    if len(adapters) < 2:
        return
    np_ = d.inv.parallel
    if not np_.known or not isinstance(np_.value, int):
        return
    slots = AUTO_SLOTS if np_.value < 0 else np_.value
    if slots < 2:
        return
    first = lora if lora.given else scaled
    span = first.span or d.program_span
    how = f"-np {np_.value}" if np_.given else f"-np auto ({AUTO_SLOTS} slots)"
    related = (Related(d.source, np_.span, f"{slots} slots"),) if np_.span else ()
    yield lora_not_batched.finding(
        f"{len(adapters)} LoRA adapters with {how}: llama-server does not batch requests with "
        "different LoRA configurations together, so mixed traffic runs as smaller batches",
        d.source, span,
        hint="give each adapter its own server, or use vLLM --enable-lora to batch adapters",
        related=related,
    )


@rule("MG507", "row-split-unsupported-device", Severity.ERROR,
      "`-sm row` with RPC devices: the load fails",
      needs={LLAMA_ARGS})
def row_split_unsupported_device(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds llama-server launches with `-sm row` whose device list contains RPC
    devices (`--rpc` without a `-dev` list that leaves them out).

    Why is this bad? Row mode gives every device a split buffer type, which only CUDA- and
    SYCL-style backends provide; for any other device the load throws "device RPC0 does not
    support split buffers" (src/llama-model.cpp make_gpu_buft_list; the RPC backend exports no
    ggml_backend_split_buffer_type, ggml/src/ggml-rpc/ggml-rpc.cpp, llama.cpp 3f545bec).

    Use instead: `-sm layer` (the default) across machines: only hidden states cross the
    network, once per device boundary.
    """
    if _mode(d) != "row":
        return
    devices = llama_devices(d)
    if devices is None or not devices.rpc:
        return
    mode = d.inv.split_mode
    rpc_name = next(n for n in devices.names if n.startswith("RPC"))
    yield row_split_unsupported_device.finding(
        f"-sm row with RPC devices ({devices.origin}): llama.cpp fails to load with \"device "
        f"{rpc_name} does not support split buffers\"",
        d.source, mode.span or d.program_span,
        hint="use -sm layer across machines",
        related=devices.related,
    )


RULES: list[Rule] = [llama_layer_split, tensor_split_device_count, tensor_split_ignored,
                     main_gpu_out_of_range, split_follows_free_memory, lora_not_batched,
                     row_split_unsupported_device]
