"""Interconnect cost: all-reduce over PCIe, pipeline bubbles (MG2xx)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from mgpu_lint.deployment import Deployment
from mgpu_lint.engines.adapter import LLAMA_ARGS, VLLM_ARGS
from mgpu_lint.findings import Finding, Related, Severity
from mgpu_lint.resolve import node_gpus
from mgpu_lint.sizing.display import fixed, percent
from mgpu_lint.sizing.interconnect import (
    DECODE_BATCH,
    PREFILL_TOKENS,
    REFERENCE_NVLINK_BYTES_PER_S,
    RING_STEP_SECONDS,
    all_reduce_cost,
    all_reduce_exceeds,
    all_reduces_per_forward,
    layers_per_stage,
    ring_latency,
    ring_steps,
    ring_steps_per_forward,
)
from mgpu_lint.sizing.memory import weights_bytes
from mgpu_lint.sizing.parallel import pipeline_busy_share, pipeline_decode_busy_share
from mgpu_lint.sizing.timing import decode_read_time, decode_step_time, prefill_compute_time

from .llamacpp import llama_devices
from .registry import Rule, rule

if TYPE_CHECKING:
    from mgpu_lint.catalog.knowledge import GpuSpec

# vLLM 0.30.0 vllm/distributed/device_communicators/custom_all_reduce.py: the custom kernel runs
# only for these group sizes, on one node, and for more than two GPUs only when they are fully
# connected (NVLink); otherwise vLLM already falls back to NCCL.
CUSTOM_ALL_REDUCE_SIZES = frozenset({2, 4, 6, 8, 16})


def _pcie_only(d: Deployment) -> GpuSpec | None:
    """The stated GPU type when its GPUs talk over PCIe only; None when they have NVLink/xGMI,
    or when nobody states the type (never judge a link on an assumption)."""
    gpu = d.gpu
    if gpu is None or gpu.spec is None or gpu.assumed or gpu.spec.has_nvlink:
        return None
    return gpu.spec


def _pcie_label(spec: GpuSpec) -> str:
    return f"PCIe {spec.pcie_gen}.0" if spec.pcie_gen else "PCIe"


def _gpu_related(d: Deployment) -> tuple[Related, ...]:
    gpu = d.gpu
    if gpu is None or gpu.span is None or gpu.spec is None:
        return ()
    return (Related(d.source, gpu.span, f"{gpu.spec.name} ({gpu.origin})"),)


def _mb(x: float) -> str:
    return fixed(x / 1e6, 1)


def _ms(x: float) -> str:
    return fixed(x * 1e3, 2)


def _gbs(x: float) -> str:
    text = fixed(x / 1e9, 2)
    return text.rstrip("0").rstrip(".")


@rule("MG201", "tensor-parallel-over-pcie", Severity.WARNING,
      "tensor parallelism on GPUs joined only by PCIe",
      needs={VLLM_ARGS}, reads=("tensor_parallel_size",))
def tensor_parallel_over_pcie(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds vLLM launches with `--tensor-parallel-size` > 1 on a GPU type whose
    GPUs have no NVLink (L4, L40S, RTX cards, A10, T4, the PCIe versions of A100/H100), and
    prints the all-reduce traffic of a forward pass and its time on NVLink and on the card's
    PCIe link.

    Why is this bad? Tensor parallelism performs two all-reduces per
    layer and forward pass, each of tokens × hidden BF16 values; a ring all-reduce sends
    2(n−1)/n of it per GPU. For a 70B model (hidden 8,192, 80 layers) at tp 8 a decode step of
    64 sequences moves 293.6 MB per GPU: 0.65 ms on NVLink (450 GB/s per direction) but 9.32 ms
    over PCIe 4.0 (31.5 GB/s), more than the 5.27 ms each GPU spends reading its weights; a
    4,096-token prefill moves 18.8 GB per GPU, 596.5 ms over PCIe against 73.1 ms of arithmetic.

    Severity: a warning when, at decode batch 64, the PCIe all-reduce time exceeds a quarter of
    the per-GPU weight-read time; an info otherwise, and always an info for A100 PCIe, H100 PCIe
    and H100 NVL, which NVLink bridges can pair ("unless the GPUs are bridged"). Silent when the
    GPU type is not stated (the default H100 SXM has NVLink) and when tp spans nodes (MG105).

    Use instead: pipeline parallelism (`-tp 1 -pp N`: one activation transfer per stage
    boundary instead of 2 × layers all-reduces), replicas if the model fits one GPU, or
    llama.cpp's default `-sm layer`.
    """
    lay = d.layout
    if lay is None or not lay.known or lay.tp.value <= 1:
        return
    spec = _pcie_only(d)
    if spec is None or spec.pcie_bytes_per_s is None or d.gpu is None:
        return
    tp, pp = lay.tp.value, lay.pp.value
    if tp > node_gpus(lay, d.gpu, d.context).count:
        return  # every all-reduce crosses the network: MG105
    shape = d.model.shape if d.model is not None else None
    if d.model is None or shape is None:
        return
    pcie = spec.pcie_bytes_per_s
    bridged = spec.nvlink_bridge
    if bridged and spec.bridge_gbs_per_direction:
        nvlink, nv_name = spec.bridge_gbs_per_direction * 1e9, "an NVLink bridge"
    else:
        nvlink, nv_name = REFERENCE_NVLINK_BYTES_PER_S, "NVLink (H100 SXM)"
    layers = layers_per_stage(shape.layers, pp)
    weights = weights_bytes(shape.params, d.model.weights.bits)
    read = decode_read_time(weights, spec.bandwidth_bytes_per_s, tp * pp)
    costs = [all_reduce_cost(t, shape.hidden, layers, tp) for t in (1, DECODE_BATCH,
                                                                    PREFILL_TOKENS)]
    busy = costs[1]
    pcie_busy = busy.time_on(pcie)
    heavy = all_reduce_exceeds(pcie_busy, read)
    link = _pcie_label(spec)
    stage = f"{layers} layers per stage" if pp > 1 else f"{shape.layers} layers"
    math = [
        (f"all-reduces per forward pass: 2 × {stage} = {all_reduces_per_forward(layers)}, each "
        f"tokens × {shape.hidden} × 2 bytes; a ring sends 2({tp}−1)/{tp} of each per GPU"),
    ]
    names = ("decode, batch 1", f"decode, batch {DECODE_BATCH}",
             f"prefill, {PREFILL_TOKENS} tokens")
    for name, c in zip(names, costs, strict=True):
        math.append(
            f"{name}: {fixed(c.size_bytes / 1e6, 3)} MB per all-reduce, {_mb(c.traffic_bytes)} "
            f"MB sent per GPU: {_ms(c.time_on(nvlink))} ms on {nv_name}, {_gbs(nvlink)} GB/s; "
            f"{_ms(c.time_on(pcie))} ms on {link}, {_gbs(pcie)} GB/s")
    per_gpu = weights / (tp * pp)
    math.append(
        f"weight read per GPU: {fixed(weights / 1e9, 1)} GB / (tp {tp} × pp {pp}) = "
        f"{fixed(per_gpu / 1e9, 2)} GB at {fixed(spec.bandwidth_tbs, 3)} TB/s = {_ms(read)} ms")
    math.append(
        f"decode step at batch {DECODE_BATCH}: {_ms(read)} + {_ms(pcie_busy)} = "
        f"{_ms(decode_step_time(read, pcie_busy))} ms over {link}, {_ms(read)} + "
        f"{_ms(busy.time_on(nvlink))} = {_ms(decode_step_time(read, busy.time_on(nvlink)))} "
        f"ms over {nv_name}")
    if spec.bf16_flops is not None:
        prefill = prefill_compute_time(shape.params, PREFILL_TOKENS, tp * pp, spec.bf16_flops)
        math.append(
            f"prefill arithmetic: 2 × {fixed(shape.params / 1e9, 1)}e9 × {PREFILL_TOKENS} FLOPs / "
            f"{tp * pp} GPUs at {fixed(spec.bf16_flops / 1e12, 0)} TFLOP/s = "
            f"{fixed(prefill * 1e3, 1)} ms")
    share = percent(pcie_busy / read, 0)
    severity = Severity.WARNING if heavy and not bridged else Severity.INFO
    message = (
        f"tensor parallel {tp} over {link} ({spec.name} has no NVLink"
        + (", unless the GPUs are bridged" if bridged else "")
        + f"): a decode step of {DECODE_BATCH} sequences sends {_mb(busy.traffic_bytes)} MB "
        f"per GPU in all-reduces, {_ms(pcie_busy)} ms at {_gbs(pcie)} GB/s — {share} of the "
        f"{_ms(read)} ms weight read")
    suggestion = f"-tp 1 -pp {tp * pp}"
    yield tensor_parallel_over_pcie.finding(message, d.source, lay.tp.span or d.program_span,
        hint=(f"over PCIe prefer pipeline parallelism ({suggestion}: one activation transfer "
              "per stage boundary), replicas when the model fits one GPU, or llama.cpp's "
              "default -sm layer" + ("; or bridge the GPU pairs with NVLink" if bridged else "")),
        math=tuple(math), related=_gpu_related(d),
        data={"tp": tp, "pp": pp, "link_bytes_per_s": pcie, "nvlink_bytes_per_s": nvlink,
              "weight_read_s": read,
              "all_reduce": [{"tokens": c.tokens, "size_bytes": c.size_bytes,
                              "traffic_bytes": c.traffic_bytes, "pcie_s": c.time_on(pcie),
                              "nvlink_s": c.time_on(nvlink)} for c in costs]}, severity=severity,
    )


@rule("MG202", "llama-split-over-pcie", Severity.WARNING,
      "llama.cpp row or tensor split on GPUs joined only by PCIe",
      needs={LLAMA_ARGS}, reads=("split_mode",), given=("split_mode",))
def llama_split_over_pcie(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds llama-server launches with `-sm row` or `-sm tensor` on a stated GPU
    type without NVLink, with more than one device.

    Why is this bad? `row` and `tensor` are tensor parallelism:
    every layer's matrices are split across the GPUs and the partial results are exchanged in
    every layer of every token. Over PCIe (31.5 GB/s per direction for 4.0, against 450 GB/s
    for H100 NVLink) that exchange costs more time than the arithmetic it splits. The default
    `-sm layer` is pipelined: only one hidden vector per token crosses each device boundary.
    `-sm tensor` is also marked EXPERIMENTAL in llama-server's help (llama.cpp #19378): load
    throws for architectures it does not implement, and `--fit` does not support it.

    Severity: a warning; an info for A100 PCIe, H100 PCIe and H100 NVL, which NVLink bridges
    can pair. Silent when the GPU type is not stated.

    Use instead: `-sm layer` (the default), with `-ts` to set the proportions.
    """
    mode = d.inv.split_mode
    if not mode.known or not mode.given or mode.value not in ("row", "tensor"):
        return
    spec = _pcie_only(d)
    if spec is None:
        return
    devices = llama_devices(d)
    if devices is not None and devices.rpc:
        return  # RPC devices: the link is the network (and row mode fails to load: MG507)
    if devices is not None and devices.certain and len(devices.names) < 2:
        return
    bridged = spec.nvlink_bridge
    link = _pcie_label(spec)
    pcie = spec.pcie_bytes_per_s
    rate = f" ({_gbs(pcie)} GB/s per direction against 450 GB/s for H100 NVLink)" \
        if pcie is not None else ""
    experimental = ("; -sm tensor is also EXPERIMENTAL (not every architecture loads, --fit "
                    "does not support it)") if mode.value == "tensor" else ""
    yield llama_split_over_pcie.finding(
        f"-sm {mode.value} splits every layer's matrices across GPUs joined by {link}{rate}"
        + (", unless the GPUs are bridged" if bridged else "")
        + f": partial results cross the link in every layer of every token{experimental}",
        d.source, mode.span or d.program_span,
        hint="use -sm layer (the default, pipelined: one hidden vector per token crosses each "
             "device boundary) and -ts for the proportions",
        math=(("tensor parallelism performs 2 all-reduces per layer and forward pass, each GPU "
              "sending 2(n−1)/n × tokens × hidden × 2 bytes (ring all-reduce); over PCIe they "
              "cost more than the computation they split"),),
        related=_gpu_related(d), severity=Severity.INFO if bridged else Severity.WARNING,
    )


@rule("MG203", "pipeline-bubble", Severity.INFO,
      "pipeline parallelism with fewer sequences in flight than stages",
      needs={VLLM_ARGS}, reads=("pipeline_parallel_size", "max_num_seqs"))
def pipeline_bubble(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds vLLM launches with `--pipeline-parallel-size` p > 1 where the sequences
    that can be in flight, min(users, `--max-num-seqs`), are fewer than p.

    Why is this bad? A pipeline of p stages is busy m / (m + p − 1) of
    the time for m micro-batches. In decoding a batch must leave the last stage before its next
    token, so only independent batches in flight fill the stages: vLLM keeps pp batches in
    flight (max_concurrent_batches, vllm/config/vllm.py), each needing at least one sequence.
    With fewer sequences than stages some GPUs always wait: with one sequence on 4 stages
    they are busy 25% of the time.

    Use instead: allow at least p sequences (`--max-num-seqs`), or use tensor parallelism
    inside an NVLink node, or fewer stages.
    """
    lay = d.layout
    if lay is None or not lay.known or lay.pp.value <= 1:
        return
    p = lay.pp.value
    users = d.settings.users
    seqs = d.inv.max_num_seqs
    if seqs.given and not seqs.known:
        return
    limit = seqs.value if seqs.given and isinstance(seqs.value, int) else None
    if limit is not None and limit < 1:
        return  # no sequence count at all: nothing to say about stages waiting for one
    m = min(users, limit) if limit is not None else users
    if m >= p:
        return
    if limit is not None and limit <= users:
        why = f"--max-num-seqs {limit}"
    else:
        stated = "users" in d.settings.stated
        why = f"{users} users" + ("" if stated else " (assuming the default concurrency)")
    related = []
    if limit is not None and seqs.span is not None:
        related.append(Related(d.source, seqs.span, f"--max-num-seqs {limit}"))
    yield pipeline_bubble.finding(
        f"pipeline of {p} stages with at most {m} sequence(s) in flight ({why}): the GPUs are "
        f"busy at most {percent(pipeline_busy_share(m, p))} of the time",
        d.source, lay.pp.span or d.program_span,
        hint=f"allow at least {p} sequences in flight (--max-num-seqs), or use fewer stages",
        math=((f"sequences in flight m = min(users {users}, --max-num-seqs {limit}) = {m}"
               if limit is not None else f"sequences in flight m = users = {m}"),
              (f"busy share m / (m + p − 1) = {m} / ({m} + {p} − 1) = "
              f"{percent(pipeline_busy_share(m, p))}"),
              (f"steady decoding with {m} batch(es) in flight on {p} stages: min(m, p) / p = "
              f"{percent(pipeline_decode_busy_share(m, p))} busy")),
        related=tuple(related),
        data={"stages": p, "in_flight": m, "busy_share": pipeline_busy_share(m, p)},
    )


@rule("MG204", "custom-all-reduce-disabled", Severity.INFO,
      "`--disable-custom-all-reduce` with tensor parallelism: slower decode all-reduces",
      needs={VLLM_ARGS}, given=("disable_custom_all_reduce",))
def custom_all_reduce_disabled(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds vLLM launches with `--disable-custom-all-reduce` where vLLM would
    otherwise use its custom all-reduce kernel: tp of 2, 4, 6, 8 or 16 on one node, over NVLink
    (or two GPUs over PCIe).

    Why is this bad? Decode all-reduces are small, so their cost is
    latency, not bandwidth: a NCCL ring takes 2(n−1) sequential steps per all-reduce, 2,240
    per forward pass for a 70B model at tp 8. At an assumed 1 µs per step that adds 2.24 ms
    to every decode step, 42% of the 5.27 ms weight read; at 5 µs, 11.2 ms. vLLM's custom
    kernel exists for exactly this case ("Disable the custom all-reduce kernel and fall back to
    NCCL", ParallelConfig).

    Not reported where vLLM 0.30.0 disables the kernel anyway (more than two PCIe-only GPUs,
    other group sizes, across nodes): there the flag only silences a warning.

    Use instead: drop the flag unless it works around a known driver or P2P problem.
    """
    lay = d.layout
    flag = d.inv.disable_custom_all_reduce
    if lay is None or not lay.known or not flag.given or not flag.known:
        return
    if flag.value is not True:
        return
    tp = lay.tp.value
    if tp not in CUSTOM_ALL_REDUCE_SIZES:
        return
    if d.gpu is not None and tp > node_gpus(lay, d.gpu, d.context).count:
        return
    if tp > 2 and _pcie_only(d) is not None:
        return
    spelling = flag.winner.spelling if flag.winner is not None else "--disable-custom-all-reduce"
    math: list[str] = []
    data: dict[str, float] = {"tp": tp}
    shape = d.model.shape if d.model is not None else None
    if d.model is not None and shape is not None:
        layers = layers_per_stage(shape.layers, lay.pp.value)
        steps = ring_steps_per_forward(layers, tp)
        math.append(f"ring steps one after another per pass: {all_reduces_per_forward(layers)} "
                    f"all-reduces × {ring_steps(tp)} steps = {steps}")
        spec = d.gpu.spec if d.gpu is not None else None
        read = None
        if spec is not None:
            weights = weights_bytes(shape.params, d.model.weights.bits)
            read = decode_read_time(weights, spec.bandwidth_bytes_per_s, tp * lay.pp.value)
        for step in RING_STEP_SECONDS:
            lat = ring_latency(steps, step)
            tail = f", against a {_ms(read)} ms weight read" if read else ""
            math.append(f"at an assumed {fixed(step * 1e6, 0)} µs per step: {_ms(lat)} ms per "
                        f"decode step{tail}")
        data["ring_steps"] = steps
    yield custom_all_reduce_disabled.finding(
        f"{spelling} with tp {tp}: every decode all-reduce falls back to NCCL's ring, whose "
        f"2({tp}−1) sequential steps add latency to each token",
        d.source, flag.flag_span or d.program_span,
        hint="remove the flag unless it works around a driver or P2P problem",
        math=tuple(math), data=data,
    )


RULES: list[Rule] = [tensor_parallel_over_pcie, llama_split_over_pcie, pipeline_bubble,
                     custom_all_reduce_disabled]
