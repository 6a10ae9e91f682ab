"""Parallel layout vs the GPUs a launch gets (MG1xx).

vLLM 0.30.0's definitions (vllm-notes.md §4-§5): world size = pp × tp × pcp; GPUs one node uses
= dp_local × world size (split over the nodes one engine spans); attention heads must divide by
tp; KV heads are replicated when tp exceeds them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mgpu_lint.deployment import Deployment
from mgpu_lint.engines.adapter import GPU_LAYOUT, PARALLEL_LAYOUT
from mgpu_lint.facts.peers import physical_gpus
from mgpu_lint.facts.ray import RAY_PG_WAIT_S, local_ray, ray_backed
from mgpu_lint.findings import Finding, Related, Severity
from mgpu_lint.launch import TPU_LABEL_KEYS, TPU_TOPOLOGY_LABEL
from mgpu_lint.fixes import Fix, set_gpu_count
from mgpu_lint.resolve import Layout, node_gpus
from mgpu_lint.source import Span

from .registry import Rule, rule
from .text import at_line, model_name, plural, receiver


def _group(d: Deployment) -> int | None:
    """Pods in a LeaderWorkerSet group (1 outside one; None when the size is unresolved)."""
    size = d.context.group_size
    if size is None:
        return 1
    return int(size.value) if size.value.isdigit() else None


def usable_layout(d: Deployment) -> Layout | None:
    lay = d.layout
    if lay is None or not lay.known:
        return None
    return lay


def _nnodes_broken(lay: Layout) -> bool:
    """--nnodes does not divide dp × world size: vLLM refuses to start (MG106 says so), and
    the GPUs per node are undefined."""
    return lay.nnodes.value > 1 and (lay.dp.value * lay.world_size) % lay.nnodes.value != 0


def _size_to_change(d: Deployment, lay: Layout) -> tuple[Span, list[Related]]:
    """The parallel-size value set explicitly (tp first), else the program word."""
    sizes = [(n, s.value, s.span) for n, s in lay.explicit_sizes if s.span is not None]
    related = [Related(d.source, span, f"{n} {v}") for n, v, span in sizes]
    if sizes:
        return sizes[0][2], related[1:]
    return d.program_span, related


@rule("MG101", "gpu-count-mismatch", Severity.ERROR,
      "the parallel layout needs more (or fewer) GPUs than the launch gets",
      needs={GPU_LAYOUT},
      reads=("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
          "data_parallel_size_local", "prefill_context_parallel_size", "nnodes", "device_ids",
          "enable_dp_attention", "base_gpu_id", "gpu_id_step"))
def gpu_count_mismatch(d: Deployment) -> Iterator[Finding]:
    """
    What it does: compares the GPUs a vLLM launch uses on its node — data-parallel engines on
    the node × world size (tensor × pipeline × context parallel), split over the nodes one
    engine spans — with the GPUs the container or process gets (`nvidia.com/gpu` limit,
    compose device count or ids, `docker run --gpus`, `CUDA_VISIBLE_DEVICES`, `--device-ids`;
    a LeaderWorkerSet running one engine over its group through Ray gets size × the pod's
    GPUs).

    Why is this bad? With fewer GPUs vLLM refuses to start ("World size (8) is larger than the
    number of available GPUs (4) in this node", vllm/config/parallel.py, vLLM 0.30.0); with
    more, the extra GPUs sit idle and are paid for. For example `-tp 4 -pp 2`
    is a world size of 8; on one node it needs 8 GPUs, and `-tp 2 -dp 4` is 4 engines of 2.

    With data parallelism the world-size check passes when one engine fits; local DP rank r
    then takes devices [r × world, (r+1) × world) and the first rank past the visible GPUs
    fails (vllm/v1/engine/utils.py get_physical_gpu_ids_for_local_dp_rank) — tp 4 × dp 2 on 4
    GPUs fails there. With `--distributed-executor-backend ray` and no Ray cluster (no KubeRay
    object, `ray start` or RAY_ADDRESS), `ray.init()` starts a local Ray on the pod's GPUs and
    vLLM waits 1,800 s for a placement group before failing (vllm/v1/executor/ray_utils.py
    initialize_ray_cluster, _wait_until_pg_ready).

    SGLang places its schedulers itself: GPU base_gpu_id + (pp rank × tp per node) + tp rank
    × gpu_id_step, with tp and pp split over `--nnodes` (sglang/srt/entrypoints/engine.py
    _launch_subprocesses), and `--dp` copies side by side unless `--enable-dp-attention` puts
    them inside tp; a scheduler whose GPU index is past the visible GPUs fails in
    `set_device`. Where data-parallel copies go differs between SGLang releases, so `--dp` is
    checked only when the image pins 0.4.10.post2 or 0.5.5.

    Use instead: make the request match — `nvidia.com/gpu: 8` for tp 4 × pp 2 — or change
    the parallel sizes. Launches whose GPUs come from a Ray cluster (KubeRay pods, `ray
    start`, RAY_ADDRESS) are not compared, nor counts nobody states (`count: all`, compose
    devices without a count, `--gpus all`).
    """
    lay = usable_layout(d)
    g = d.gpu
    if lay is None or g is None or g.count is None or g.count_span is None:
        return
    if not d.adapter.has(PARALLEL_LAYOUT):
        # an engine with its own GPU placement (SGLang): the GPUs the node shows against the
        # highest index a scheduler sets, and the distinct ones it uses
        # GPUs a host lists (CUDA_VISIBLE_DEVICES, device ids) may be split between launches
        # with --base-gpu-id: only a container's own count makes unused GPUs idle
        exclusive = physical_gpus(d.launch) is None
        yield from _compare(d, lay, lay.gpus_per_node, lay.needed_text(), g.count, receiver(d),
                            g.count_origin + at_line(d, g.count_span), g.count_span,
                            "on this node", [], lay.formula(),
                            used=lay.gpus_used if exclusive else 0,
                            raise_hint="more --tp-size, or --dp-size for replicas")
        return
    group = _group(d)
    if group is None or _nnodes_broken(lay):
        return
    ray = ray_backed(d)
    if group > 1 and not lay.nnodes.given and ray and not d.context.ray_cluster:
        # a LeaderWorkerSet without --nnodes: one engine over the whole group through Ray
        size = d.context.group_size
        have = group * g.count
        need = lay.dp.value * lay.world_size
        how = (f"{lay.dp.value} engines (dp) × " if lay.dp.value > 1 else "") + \
            f"world size {lay.world_size} ({lay.describe_world()})"
        extra = [Related(d.source, size.span, f"LeaderWorkerSet size: {group}")] \
            if size is not None and size.span is not None else []
        yield from _compare(
            d, lay, need, how, have, "the LeaderWorkerSet group",
            f"size {group} × {plural(g.count)} per pod, {g.count_origin}{at_line(d, g.count_span)}",
            g.count_span, "in the group", extra,
            f"GPUs needed in the group = dp {lay.dp.value} × world size {lay.world_size} = "
            f"{need}; the group has {group} pods × {g.count} = {have}")
        return
    on_local_ray = group == 1 and local_ray(d)
    if ray and not on_local_ray:
        return
    have, origin, have_span = g.count, g.count_origin, g.count_span
    device_ids = d.inv.device_ids
    listed = device_ids.given and device_ids.known and isinstance(device_ids.value, list) \
        and device_ids.value and device_ids.span is not None
    if listed:
        have = min(have, len(device_ids.value))
    need = lay.gpus_per_node
    if need == have:
        return  # the node shows the GPUs the layout uses (_compare reports nothing)
    if listed:
        spelling = device_ids.winner.spelling if device_ids.winner else "--device-ids"
        origin = f"{spelling} {','.join(map(str, device_ids.value))} of {plural(g.count)} " \
                 f"({origin}{at_line(d, have_span)})"
        have_span = device_ids.span
    else:
        origin += at_line(d, have_span)
    why = None
    if on_local_ray and lay.world_size <= have < need:
        return  # how Ray places several DP engines on too few GPUs is not checked here
    if on_local_ray:
        # ray_utils.py: a placement group of world-size GPU bundles, then _wait_until_pg_ready
        # polls for PG_WAIT_TIMEOUT seconds and raises "Cannot provide a placement group
        # requiring N GPUs … within 1800 seconds"
        why = (f"with the Ray executor and no Ray cluster, vLLM starts a local Ray on these "
               f"GPUs, waits {RAY_PG_WAIT_S:,} s for a placement group of {lay.world_size} GPUs "
               "and then fails (\"Cannot provide a placement group requiring "
               f"{lay.world_size} GPUs … within {RAY_PG_WAIT_S} seconds\", "
               "vllm/v1/executor/ray_utils.py)")
    elif lay.dp_local.value > 1 and lay.world_size <= have < need:
        # the world-size check passes (it compares one engine's world size); local DP rank r
        # takes devices [r × world, (r+1) × world) (vllm/v1/engine/utils.py
        # get_physical_gpu_ids_for_local_dp_rank, 0.25.1-0.33.0)
        rank = have // lay.world_size
        why = (f"each engine's world size fits, but data-parallel rank {rank} is given devices "
               f"[{rank * lay.world_size}, {(rank + 1) * lay.world_size}) of only {have} "
               "visible, so its start-up fails (vllm/v1/engine/utils.py "
               "get_physical_gpu_ids_for_local_dp_rank)")
    yield from _compare(d, lay, need, lay.needed_text(), have, receiver(d), origin, have_span,
                        "on this node", [], lay.formula(), why)


def _compare(d: Deployment, lay: Layout, need: int, how: str, have: int, receiver: str,
             origin: str, have_span: Span, where: str, extra: list[Related], formula: str,
             why: str | None = None, used: int | None = None,
             raise_hint: str = "more -tp, or -dp for replicas") -> Iterator[Finding]:
    """``need``: the GPUs the node must show; ``used``: the distinct GPUs the launch takes (the
    same unless the engine starts past GPU 0 or skips indices, or the GPUs may be another
    launch's too: then only a shortfall counts)."""
    used = need if used is None else used
    if need == have and used == have:
        return
    gets = f"{receiver} gets {plural(have)} ({origin})"
    data = {"needed": need, "available": have, **lay.sizes()}
    gpus_there = Related(d.source, have_span, f"{plural(have)} given here")
    if need > have:
        span, related = _size_to_change(d, lay)
        yield gpu_count_mismatch.finding(
            f"{how} needs {plural(need)} {where} but {gets}: " + (why or lay.short_of(have)),
            d.source, span, math=(formula,),
            hint=f"give it {plural(need)}, or lower the parallel sizes to fit {have}",
            related=(*related, gpus_there, *extra), data=data,
            fix=_count_fix(d, have_span, have, need, extra),
        )
        return
    sizes = [Related(d.source, s.span, f"{n} {s.value}") for n, s in lay.explicit_sizes
             if s.span is not None]
    if used < need:
        # the engine starts past GPU 0 or skips indices on purpose (another process may hold
        # the GPUs below): only a shortfall is certain
        return
    idle = have - used
    yield gpu_count_mismatch.finding(
        f"{gets} but {how} uses {used}: {plural(idle)} stay{'s' if idle == 1 else ''} idle",
        d.source, have_span, math=(formula,),
        hint=f"request {plural(need)}, or raise the parallel sizes ({raise_hint})",
        related=(*sizes, *extra), data=data, fix=_count_fix(d, have_span, have, need, extra),
        severity=Severity.WARNING,
    )


def _count_fix(d: Deployment, span: Span, have: int, need: int,
               extra: list[Related]) -> Fix | None:
    """The unsafe fix: the stated GPU count becomes the count the layout uses (not for a
    LeaderWorkerSet group, whose count is per pod, nor a count narrowed by a device list)."""
    if extra or d.gpu is None or d.gpu.count != have or span != d.gpu.count_span:
        return None
    return set_gpu_count(d.source, span, have, need)


@rule("MG102", "heads-not-divisible", Severity.ERROR,
      "attention or KV heads do not divide by the tensor-parallel size",
      needs={GPU_LAYOUT}, reads=("model", "tensor_parallel_size", "enable_dp_attention"))
def heads_not_divisible(d: Deployment) -> Iterator[Finding]:
    """
    What it does: checks the model's attention heads and KV heads against `-tp`.

    Why is this bad? Tensor parallelism gives each GPU whole attention heads. vLLM refuses to
    start when the attention heads do not divide by tp ("Total number of attention heads (40)
    must be divisible by tensor parallel size (3)", vllm/config/model.py). KV heads must either
    divide by tp or divide tp (then they are replicated); otherwise the weights cannot be
    sharded and loading fails — phi-4 has 10 KV heads, so tp 4 crashes at load.

    SGLang's attention layers assert the same (`assert self.total_num_heads % tp_size == 0`,
    and the KV heads divide tp or tp divides them: sglang/srt/models/llama.py, qwen2.py,
    qwen3.py LlamaAttention/Qwen2Attention/Qwen3Attention, 0.5.5 and 0.5.23), so the model fails
    to load; with `--enable-dp-attention` (attention tp = tp / dp) and for MLA models its
    layers differ and nothing is checked.

    Use instead: a tp that divides both, e.g. 2 or 8 for 32 heads and 8 KV heads; add
    pipeline parallelism for more GPUs.
    """
    lay = usable_layout(d)
    if lay is None or d.model is None or d.model.shape is None or lay.tp.value <= 1:
        return
    shape = d.model.shape
    refusal = lay.heads_refusal(shape.heads, shape.is_mla)
    if refusal is None:
        return
    tp = lay.tp.value
    span = lay.tp.span or d.program_span
    related = (Related(d.source, d.model.span, f"{model_name(d)}: {shape.heads} attention heads, "
                       f"{shape.kv_heads} KV heads"),) if d.model.span is not None else ()
    hint = _tp_hint(shape.heads, shape.kv_heads, shape.is_mla, tp, lay.tp_flag)
    if shape.heads % tp:
        yield heads_not_divisible.finding(
            f"tp {tp} does not divide the {shape.heads} attention heads of {model_name(d)}: "
            + refusal,
            d.source, span, math=(f"{shape.heads} heads / tp {tp} = {shape.heads / tp:g}",),
            hint=hint, related=related, data={"heads": shape.heads, "kv_heads": shape.kv_heads,
                                              "tp": tp},
        )
        return
    kv = shape.kv_heads
    if not shape.is_mla and kv % tp and tp % kv:
        yield heads_not_divisible.finding(
            f"tp {tp} and the {kv} KV heads of {model_name(d)} do not divide each other: the KV "
            "projection cannot be sharded and loading fails",
            d.source, span,
            math=((f"{kv} KV heads / tp {tp} = {kv / tp:g}; tp {tp} / {kv} KV heads = "
                  f"{tp / kv:g}"),),
            hint=hint, related=related,
            data={"heads": shape.heads, "kv_heads": kv, "tp": tp},
        )


def _tp_hint(heads: int, kv_heads: int, mla: bool, tp: int, flag: str = "-tp") -> str | None:
    """The nearest tensor-parallel sizes below and above ``tp`` that vLLM can shard: they divide
    the attention heads, and divide or are a multiple of the KV heads."""
    good = [t for t in range(1, 2 * max(tp, heads) + 1) if heads % t == 0 and (
        mla or kv_heads % t == 0 or t % kv_heads == 0)]
    below = [t for t in good if t < tp]
    above = [t for t in good if t > tp]
    picks = ([str(below[-1])] if below else []) + ([str(above[0])] if above else [])
    pp = "--pp-size" if flag.startswith("--") else "-pp"
    return f"use {flag} {' or '.join(picks)} (with {pp} for more GPUs)" if picks else None


@rule("MG103", "kv-heads-replicated", Severity.INFO,
      "tp exceeds the KV heads: KV heads are replicated",
      needs={PARALLEL_LAYOUT}, reads=("tensor_parallel_size",))
def kv_heads_replicated(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds a tensor-parallel size larger than the model's KV heads.

    Why is this bad? Each GPU needs at least one KV head, so vLLM replicates them
    (`get_num_kv_heads`: max(1, kv_heads // tp)): the KV cache per token per GPU stops
    shrinking, and part of every GPU's memory holds copies. Llama 3.1 70B has 8 KV heads; at
    tp 16 each head is stored twice.

    Use instead: tp up to the KV-head count, pipeline parallelism beyond it.
    """
    lay = usable_layout(d)
    if lay is None or d.model is None or d.model.shape is None or d.gpu is None:
        return  # no GPUs (TPU chips): how that platform's runner shards KV heads is not read
    shape = d.model.shape
    tp = lay.tp.value
    if shape.is_mla or tp <= shape.kv_heads or tp % shape.kv_heads:
        return
    copies = tp // shape.kv_heads
    yield kv_heads_replicated.finding(
        f"tp {tp} is larger than the {shape.kv_heads} KV heads of {model_name(d)}: each KV "
        f"head is stored on {copies} GPUs, so the KV cache per GPU does not shrink beyond tp "
        f"{shape.kv_heads}",
        d.source, lay.tp.span or d.program_span,
        math=(f"KV heads per GPU = max(1, {shape.kv_heads} // {tp}) = 1",),
        hint=f"keep tp at {shape.kv_heads} and add pipeline stages (-pp) for more GPUs",
    )


@rule("MG104", "pipeline-exceeds-layers", Severity.WARNING,
      "more pipeline stages than the model has layers",
      needs={PARALLEL_LAYOUT}, reads=("pipeline_parallel_size",))
def pipeline_exceeds_layers(d: Deployment) -> Iterator[Finding]:
    """
    What it does: compares `-pp` with the model's layer count.

    Why is this bad? vLLM splits layers_count // pp layers per stage and has no start-up
    check (vllm/distributed/utils.py get_pp_indices): with more stages than layers some
    stages get no layer at all, and their GPUs only pass activations along.

    Use instead: pp well below the layer count (stages of at least a few layers).
    """
    lay = usable_layout(d)
    if lay is None or d.model is None or d.model.shape is None:
        return
    layers = d.model.shape.layers
    pp = lay.pp.value
    if pp <= layers:
        return
    yield pipeline_exceeds_layers.finding(
        f"pp {pp} is more than the {layers} layers of {model_name(d)}: {pp - layers} "
        "stage(s) get no layer",
        d.source, lay.pp.span or d.program_span,
        math=(f"{layers} layers // pp {pp} = {layers // pp} per stage",),
        hint=f"use at most -pp {layers}",
    )


@rule("MG105", "tensor-parallel-across-nodes", Severity.WARNING,
      "tp larger than one node's GPUs: every all-reduce crosses the network",
      needs={PARALLEL_LAYOUT}, reads=("tensor_parallel_size", "nnodes"))
def tensor_parallel_across_nodes(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds a tensor-parallel size larger than the GPUs one node (or pod) holds:
    what `--nnodes` puts on each node, the container's GPUs in a multi-pod group
    (LeaderWorkerSet, KubeRay), else the GPUs per node of the configuration or instance type
    (default 8).

    Why is this bad? Tensor parallelism all-reduces activations twice per layer for every
    token (each GPU sends 2(n−1)/n of tokens × hidden × 2 bytes per all-reduce). Inside a
    node that rides NVLink (450 GB/s per direction on H100); across nodes or pods it rides the
    network (25-50 GB/s even with InfiniBand), so
    every decode step waits on the slowest link.

    Use instead: tp = GPUs per node and pp = number of nodes, e.g. `-tp 8 -pp 2`
    on two 8-GPU nodes.

    On TPUs the slice is the node: chips of one slice talk over its inter-chip interconnect,
    slices only over the data-center network; tp larger than the chips of the slice
    (`cloud.google.com/gke-tpu-topology`, v4 and later, one device per chip) is reported, and a
    TPU launch is never compared with GPUs per node.
    """
    lay = usable_layout(d)
    g = d.gpu
    if lay is None:
        return
    if g is None:
        yield from _tp_across_slices(d, lay)
        return
    if _nnodes_broken(lay):
        return  # MG106: --nnodes does not divide the world size
    node = node_gpus(lay, g, d.context)
    tp = lay.tp.value
    if tp <= node.count:
        return
    world = lay.world_size
    nodes = -(-world // node.count)
    pp_hint = world // node.count if world % node.count == 0 else None
    assumed = "" if node.stated else \
        f" (assuming {node.count} GPUs per node: set gpus-per-node in the configuration)"
    yield tensor_parallel_across_nodes.finding(
        f"tp {tp} is larger than {node.origin}{assumed}: every all-reduce crosses the network "
        f"between {node.unit}s",
        d.source, lay.tp.span or d.program_span,
        math=((f"{lay.describe_world()} = {world} GPUs / {node.count} per {node.unit} = {nodes} "
              f"{node.unit}s"),),
        hint=f"use -tp {node.count} -pp {pp_hint} (tensor parallel inside a {node.unit}, "
             "pipeline across)" if pp_hint else f"keep tp at most {node.count}",
        related=(Related(d.source, node.span, f"{node.count} GPU{'s' if node.count != 1 else ''} "
                         f"per node ({g.per_node_origin or g.origin})"),)
        if node.span is not None else (),
        data={"tp": tp, "node_gpus": node.count, node.unit + "s": nodes},
    )


# GKE TPU generations whose slices count one JAX device per chip (megacore on v4/v5p; one
# TensorCore per chip on v5e/v6e), so the topology's chip count is the devices tp can use
_ONE_DEVICE_PER_CHIP = re.compile(r"^tpu-?(?:v4|v5|v6|7)", re.I)


def _tp_across_slices(d: Deployment, lay: Layout) -> Iterator[Finding]:
    ctx = d.context
    chips = ctx.tpu_slice_chips
    accel = ctx.node_labels.get(TPU_LABEL_KEYS[0])
    if chips is None or accel is None or not _ONE_DEVICE_PER_CHIP.match(accel.value.strip()):
        return
    tp = lay.tp.value
    if tp <= chips:
        return
    topo = ctx.node_labels[TPU_TOPOLOGY_LABEL]
    related = (Related(d.source, topo.span, f"{TPU_TOPOLOGY_LABEL} {topo.value}"),) \
        if topo.span is not None else ()
    yield tensor_parallel_across_nodes.finding(
        f"tp {tp} is larger than the {chips} chips of the TPU slice ({accel.value}, topology "
        f"{topo.value}): every all-reduce leaves the slice's inter-chip interconnect for the "
        "data-center network",
        d.source, lay.tp.span or d.program_span,
        math=(f"topology {topo.value} = {chips} chips per slice < tp {tp}",),
        hint=f"keep tp at most {chips}, or choose a larger slice topology",
        related=related, data={"tp": tp, "slice_chips": chips},
    )


@rule("MG106", "multi-node-inconsistent", Severity.ERROR,
      "multi-node flags that do not fit together",
      needs={PARALLEL_LAYOUT}, reads=("nnodes", "node_rank"), given=("nnodes",))
def multi_node_inconsistent(d: Deployment) -> Iterator[Finding]:
    """
    What it does: checks vLLM's multi-node launch flags (`--nnodes`, `--node-rank`,
    `--master-addr`, `--headless`) against each other and against a LeaderWorkerSet's `size`.

    Why is this bad? vLLM refuses to start when `--nnodes` does not divide the total world
    size (dp × pp × tp × pcp) or the node rank is out of range (vllm/engine/arg_utils.py); a
    LeaderWorkerSet whose `size` differs from `--nnodes` starts pods that never join (or waits
    for nodes that never come); a secondary node without `--master-addr` looks for the master
    on 127.0.0.1 and hangs. A secondary node without `--headless` starts an API server of its
    own (warning). Launches whose GPUs come from a Ray cluster (no `--nnodes`) are not checked.

    Use instead: `--nnodes` dividing dp × pp × tp × pcp, `--node-rank` from 0 to nnodes − 1,
    `--master-addr` on every secondary node together with `--headless`, and a LeaderWorkerSet
    `size` equal to `--nnodes`.
    """
    lay = usable_layout(d)
    if lay is None or not lay.nnodes.given or ray_backed(d):
        return
    inv = d.inv
    nnodes = lay.nnodes.value
    nn_span = lay.nnodes.span or d.program_span
    total = lay.dp.value * lay.world_size
    if _nnodes_broken(lay):
        yield multi_node_inconsistent.finding(
            f"--nnodes {nnodes} does not divide the total world size {total} (dp "
            f"{lay.dp.value} × {lay.describe_world()}): vLLM refuses to start",
            d.source, nn_span, math=(f"{total} / {nnodes} = {total / nnodes:g}",),
        )
    size = d.context.group_size
    if size is not None and size.value.isdigit() and int(size.value) != nnodes:
        yield multi_node_inconsistent.finding(
            f"--nnodes {nnodes} but the LeaderWorkerSet group has {size.value} pods",
            d.source, nn_span,
            related=(Related(d.source, size.span, f"size: {size.value}"),)
            if size.span is not None else (),
            hint="make spec.leaderWorkerTemplate.size equal --nnodes",
        )
    rank = inv.node_rank
    if rank.given and rank.known and isinstance(rank.value, int) and not 0 <= rank.value < nnodes:
        yield multi_node_inconsistent.finding(
            f"--node-rank {rank.value} is outside 0..{nnodes - 1} for --nnodes {nnodes}: vLLM "
            "refuses to start",
            d.source, rank.span or d.program_span,
        )
        return
    secondary = rank.given and rank.known and isinstance(rank.value, int) and rank.value > 0
    if nnodes > 1 and secondary and not inv.master_addr.given and inv.master_addr.known:
        yield multi_node_inconsistent.finding(
            f"node rank {rank.value} of {nnodes} without --master-addr: it looks for the "
            "master on 127.0.0.1 (the default) and never joins",
            d.source, rank.span or d.program_span,
            hint="add --master-addr with the rank-0 node's address",
        )
    if nnodes > 1 and secondary and not inv.headless.value and inv.headless.known:
        yield multi_node_inconsistent.finding(
            f"node rank {rank.value} without --headless starts an API server of its own",
            d.source, rank.span or d.program_span,
            hint="add --headless on every node but rank 0", severity=Severity.WARNING,
        )


RULES: list[Rule] = [gpu_count_mismatch, heads_not_divisible, kv_heads_replicated,
                     pipeline_exceeds_layers, tensor_parallel_across_nodes,
                     multi_node_inconsistent]
