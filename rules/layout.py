"""Parallel layout vs the GPUs a launch gets (MG1xx).

vLLM 0.30.0's definitions (vllm-notes.md §4-§5): world size = pp × tp × pcp; GPUs one node uses
= dp_local × world size (split over the nodes one engine spans); attention heads must divide by
tp; KV heads are replicated when tp exceeds them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from mgpu_lint.deployment import Deployment
from mgpu_lint.facts.peers import physical_gpus
from mgpu_lint.findings import Finding, Related, Severity
from mgpu_lint.fixes import Fix, mirror_gpu_request, set_gpu_count
from mgpu_lint.launch import VLLM
from mgpu_lint.resolve import Layout, node_gpus
from mgpu_lint.sizing.display import fixed
from mgpu_lint.sizing.parallel import EXAMPLE_9_WORK, route_requests
from mgpu_lint.source import Span

from .registry import Rule, rule


def _model_name(d: Deployment) -> str:
    """The model as the launch names it (the catalog shape may be a sibling checkpoint)."""
    return d.model.ref.rstrip("/").rsplit("/", 1)[-1] if d.model is not None else "the model"


def _at(d: Deployment, span: Span | None) -> str:
    """` at deploy.yaml:31` (the file's name and the line), or nothing without a place."""
    if span is None:
        return ""
    return f" at {os.path.basename(d.source.path)}:{d.source.line_col(span.start)[0]}"


def _plural(n: int, word: str = "GPU") -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _receiver(d: Deployment) -> str:
    """Who gets the GPUs: a container (Kubernetes, compose, docker run) or a command."""
    ctx = d.context
    return "the container" if ctx.kind in ("k8s", "compose") or ctx.image is not None \
        else "the command"


def _ray_backed(d: Deployment) -> bool:
    """GPUs come from a Ray cluster, not from the container that runs the command: the Ray
    executor is chosen, the pod belongs to a KubeRay group, or the pod itself starts Ray
    (`ray start`, vLLM's multi-node-serving.sh) before serving."""
    backend = d.inv.distributed_executor_backend
    if d.context.ray_cluster or (backend.known and backend.value == "ray") or (
            d.inv.data_parallel_backend.known and d.inv.data_parallel_backend.value == "ray"):
        return True
    span = d.context.object_span
    text = d.source.text[span.start:span.end] if span is not None else d.source.text
    return "ray start" in text or "multi-node-serving.sh" in text


def _local_ray(d: Deployment) -> bool:
    """The Ray executor with no Ray cluster around it (no KubeRay object, no `ray start` or
    multi-node-serving.sh, no RAY_ADDRESS): ``ray.init(address=None)`` starts a local Ray on
    this pod's or machine's GPUs (vllm/v1/executor/ray_utils.py initialize_ray_cluster, vLLM
    0.30.0), so the pod's GPUs are all there is (DECISIONS "Ray")."""
    backend = d.inv.distributed_executor_backend
    dpb = d.inv.data_parallel_backend
    chosen = (backend.known and backend.value == "ray") or (dpb.known and dpb.value == "ray")
    if not chosen or d.context.ray_cluster or "RAY_ADDRESS" in d.launch.env:
        return False
    span = d.context.object_span
    text = d.source.text[span.start:span.end] if span is not None else d.source.text
    return "ray start" not in text and "multi-node-serving.sh" not in text \
        and "RAY_ADDRESS" not in text


# vllm/v1/executor/ray_utils.py PG_WAIT_TIMEOUT (1800 in every sampled release, 0.10.2-0.33.0)
RAY_PG_WAIT_S = 1800


def _group(d: Deployment) -> int | None:
    """Pods in a LeaderWorkerSet group (1 outside one; None when the size is unresolved)."""
    size = d.context.group_size
    if size is None:
        return 1
    return int(size.value) if size.value.isdigit() else None


def _usable_layout(d: Deployment) -> Layout | None:
    lay = d.layout
    if d.engine != VLLM or lay is None or not lay.known:
        return None
    return lay


def _needed(lay: Layout) -> str:
    """How the GPUs this launch uses on its node are made up."""
    world = f"world size {lay.world_size} ({lay.describe_world()})"
    if lay.nnodes_within_dp > 1:
        world += f" over {lay.nnodes_within_dp} nodes"
    if lay.dp_local.value > 1:
        return f"{lay.dp_local.value} local engines (dp) × {world}"
    return world


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
      "the parallel layout needs more (or fewer) GPUs than the launch gets")
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

    Use instead: make the request match — `nvidia.com/gpu: 8` for tp 4 × pp 2 — or change
    the parallel sizes. Launches whose GPUs come from a Ray cluster (KubeRay pods, `ray
    start`, RAY_ADDRESS) are not compared, nor counts nobody states (`count: all`, compose
    devices without a count, `--gpus all`).
    """
    lay = _usable_layout(d)
    g = d.gpu
    if lay is None or g is None or g.count is None or g.count_span is None:
        return
    group = _group(d)
    if group is None or _nnodes_broken(lay):
        return
    ray = _ray_backed(d)
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
            f"size {group} × {_plural(g.count)} per pod, {g.count_origin}{_at(d, g.count_span)}",
            g.count_span, "in the group", extra,
            f"GPUs needed in the group = dp {lay.dp.value} × world size {lay.world_size} = "
            f"{need}; the group has {group} pods × {g.count} = {have}")
        return
    local_ray = group == 1 and _local_ray(d)
    if ray and not local_ray:
        return
    have, origin, have_span = g.count, g.count_origin, g.count_span
    device_ids = d.inv.device_ids
    if device_ids.given and device_ids.known and isinstance(device_ids.value, list) \
            and device_ids.value and device_ids.span is not None:
        have = min(have, len(device_ids.value))
        spelling = device_ids.winner.spelling if device_ids.winner else "--device-ids"
        origin = f"{spelling} {','.join(map(str, device_ids.value))} of {_plural(g.count)} " \
                 f"({origin}{_at(d, have_span)})"
        have_span = device_ids.span
    else:
        origin += _at(d, have_span)
    need = lay.gpus_per_node
    why = None
    if local_ray and lay.world_size <= have < need:
        return  # how Ray places several DP engines on too few GPUs is not checked here
    if local_ray:
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
    yield from _compare(d, lay, need, _needed(lay), have, _receiver(d), origin, have_span,
                        "on this node", [],
                        f"GPUs needed per node = dp_local {lay.dp_local.value} × world size "
                        f"{lay.world_size} / nodes per engine {lay.nnodes_within_dp} = {need}",
                        why)


def _compare(d: Deployment, lay: Layout, need: int, how: str, have: int, receiver: str,
             origin: str, have_span: Span, where: str, extra: list[Related], formula: str,
             why: str | None = None) -> Iterator[Finding]:
    if need == have:
        return
    gets = f"{receiver} gets {_plural(have)} ({origin})"
    data = {"needed": need, "available": have, "tp": lay.tp.value, "pp": lay.pp.value,
            "dp": lay.dp.value, "dp_local": lay.dp_local.value, "pcp": lay.pcp.value}
    gpus_there = Related(d.source, have_span, f"{_plural(have)} given here")
    if need > have:
        span, related = _size_to_change(d, lay)
        yield Finding(
            "MG101", Severity.ERROR,
            f"{how} needs {_plural(need)} {where} but {gets}: " + (why or (
                "vLLM refuses to start (world size larger than the available GPUs, "
                "vllm/config/parallel.py)")),
            d.source, span, math=(formula,),
            hint=f"give it {_plural(need)}, or lower the parallel sizes to fit {have}",
            related=(*related, gpus_there, *extra), data=data,
            fix=_count_fix(d, have_span, have, need, extra),
        )
        return
    sizes = [Related(d.source, s.span, f"{n} {s.value}") for n, s in lay.explicit_sizes
             if s.span is not None]
    idle = have - need
    yield Finding(
        "MG101", Severity.WARNING,
        f"{gets} but {how} uses {need}: {_plural(idle)} stay{'s' if idle == 1 else ''} idle",
        d.source, have_span, math=(formula,),
        hint=f"request {_plural(need)}, or raise the parallel sizes (more -tp, or -dp for "
             "replicas)",
        related=(*sizes, *extra), data=data, fix=_count_fix(d, have_span, have, need, extra),
    )


def _count_fix(d: Deployment, span: Span, have: int, need: int,
               extra: list[Related]) -> Fix | None:
    """The unsafe fix: the stated GPU count becomes the count the layout uses (not for a
    LeaderWorkerSet group, whose count is per pod, nor a count narrowed by a device list)."""
    if extra or d.gpu is None or d.gpu.count != have or span != d.gpu.count_span:
        return None
    return set_gpu_count(d.source, span, have, need)


@rule("MG102", "heads-not-divisible", Severity.ERROR,
      "attention or KV heads do not divide by the tensor-parallel size")
def heads_not_divisible(d: Deployment) -> Iterator[Finding]:
    """
    What it does: checks the model's attention heads and KV heads against `-tp`.

    Why is this bad? Tensor parallelism gives each GPU whole attention heads. vLLM refuses to
    start when the attention heads do not divide by tp ("Total number of attention heads (40)
    must be divisible by tensor parallel size (3)", vllm/config/model.py). KV heads must either
    divide by tp or divide tp (then they are replicated); otherwise the weights cannot be
    sharded and loading fails — phi-4 has 10 KV heads, so tp 4 crashes at load.

    Use instead: a tp that divides both, e.g. 2 or 8 for 32 heads and 8 KV heads; add
    pipeline parallelism for more GPUs.
    """
    lay = _usable_layout(d)
    if lay is None or d.model is None or d.model.shape is None or lay.tp.value <= 1:
        return
    shape = d.model.shape
    tp = lay.tp.value
    span = lay.tp.span or d.program_span
    related = (Related(d.source, d.model.span, f"{_model_name(d)}: {shape.heads} attention heads, "
                       f"{shape.kv_heads} KV heads"),) if d.model.span is not None else ()
    hint = _tp_hint(shape.heads, shape.kv_heads, shape.is_mla, tp)
    if shape.heads % tp:
        yield Finding(
            "MG102", Severity.ERROR,
            f"tp {tp} does not divide the {shape.heads} attention heads of {_model_name(d)}: vLLM "
            f"refuses to start (\"Total number of attention heads ({shape.heads}) must be "
            f"divisible by tensor parallel size ({tp})\")",
            d.source, span, math=(f"{shape.heads} heads / tp {tp} = {shape.heads / tp:g}",),
            hint=hint, related=related, data={"heads": shape.heads, "kv_heads": shape.kv_heads,
                                              "tp": tp},
        )
        return
    kv = shape.kv_heads
    if not shape.is_mla and kv % tp and tp % kv:
        yield Finding(
            "MG102", Severity.ERROR,
            f"tp {tp} and the {kv} KV heads of {_model_name(d)} do not divide each other: the KV "
            "projection cannot be sharded and loading fails",
            d.source, span,
            math=((f"{kv} KV heads / tp {tp} = {kv / tp:g}; tp {tp} / {kv} KV heads = "
                  f"{tp / kv:g}"),),
            hint=hint, related=related,
            data={"heads": shape.heads, "kv_heads": kv, "tp": tp},
        )


def _tp_hint(heads: int, kv_heads: int, mla: bool, tp: int) -> str | None:
    """The nearest tensor-parallel sizes below and above ``tp`` that vLLM can shard: they divide
    the attention heads, and divide or are a multiple of the KV heads."""
    good = [t for t in range(1, 2 * max(tp, heads) + 1) if heads % t == 0 and (
        mla or kv_heads % t == 0 or t % kv_heads == 0)]
    below = [t for t in good if t < tp]
    above = [t for t in good if t > tp]
    picks = ([str(below[-1])] if below else []) + ([str(above[0])] if above else [])
    return f"use -tp {' or '.join(picks)} (with -pp for more GPUs)" if picks else None


@rule("MG103", "kv-heads-replicated", Severity.INFO,
      "tp exceeds the KV heads: KV heads are replicated")
def kv_heads_replicated(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds a tensor-parallel size larger than the model's KV heads.

    Why is this bad? Each GPU needs at least one KV head, so vLLM replicates them
    (`get_num_kv_heads`: max(1, kv_heads // tp)): the KV cache per token per GPU stops
    shrinking, and part of every GPU's memory holds copies. Llama 3.1 70B has 8 KV heads; at
    tp 16 each head is stored twice.

    Use instead: tp up to the KV-head count, pipeline parallelism beyond it.
    """
    lay = _usable_layout(d)
    if lay is None or d.model is None or d.model.shape is None:
        return
    shape = d.model.shape
    tp = lay.tp.value
    if shape.is_mla or tp <= shape.kv_heads or tp % shape.kv_heads:
        return
    copies = tp // shape.kv_heads
    yield Finding(
        "MG103", Severity.INFO,
        f"tp {tp} is larger than the {shape.kv_heads} KV heads of {_model_name(d)}: each KV "
        f"head is stored on {copies} GPUs, so the KV cache per GPU does not shrink beyond tp "
        f"{shape.kv_heads}",
        d.source, lay.tp.span or d.program_span,
        math=(f"KV heads per GPU = max(1, {shape.kv_heads} // {tp}) = 1",),
        hint=f"keep tp at {shape.kv_heads} and add pipeline stages (-pp) for more GPUs",
    )


@rule("MG104", "pipeline-exceeds-layers", Severity.WARNING,
      "more pipeline stages than the model has layers")
def pipeline_exceeds_layers(d: Deployment) -> Iterator[Finding]:
    """
    What it does: compares `-pp` with the model's layer count.

    Why is this bad? vLLM splits layers_count // pp layers per stage and has no start-up
    check (vllm/distributed/utils.py get_pp_indices): with more stages than layers some
    stages get no layer at all, and their GPUs only pass activations along.

    Use instead: pp well below the layer count (stages of at least a few layers).
    """
    lay = _usable_layout(d)
    if lay is None or d.model is None or d.model.shape is None:
        return
    layers = d.model.shape.layers
    pp = lay.pp.value
    if pp <= layers:
        return
    yield Finding(
        "MG104", Severity.WARNING,
        f"pp {pp} is more than the {layers} layers of {_model_name(d)}: {pp - layers} "
        "stage(s) get no layer",
        d.source, lay.pp.span or d.program_span,
        math=(f"{layers} layers // pp {pp} = {layers // pp} per stage",),
        hint=f"use at most -pp {layers}",
    )


@rule("MG105", "tensor-parallel-across-nodes", Severity.WARNING,
      "tp larger than one node's GPUs: every all-reduce crosses the network")
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
    """
    lay = _usable_layout(d)
    g = d.gpu
    if lay is None or g is None:
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
    yield Finding(
        "MG105", Severity.WARNING,
        f"tp {tp} is larger than {node.origin}{assumed}: every all-reduce crosses the network "
        f"between {node.unit}s",
        d.source, lay.tp.span or d.program_span,
        math=((f"{lay.describe_world()} = {world} GPUs / {node.count} per {node.unit} = {nodes} "
              f"{node.unit}s"),),
        hint=f"use -tp {node.count} -pp {pp_hint} (tensor parallel inside a {node.unit}, "
             "pipeline across)" if pp_hint else f"keep tp at most {node.count}",
        data={"tp": tp, "node_gpus": node.count, node.unit + "s": nodes},
    )


@rule("MG106", "multi-node-inconsistent", Severity.ERROR,
      "multi-node flags that do not fit together")
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
    lay = _usable_layout(d)
    if lay is None or not lay.nnodes.given or _ray_backed(d):
        return
    inv = d.inv
    nnodes = lay.nnodes.value
    nn_span = lay.nnodes.span or d.program_span
    total = lay.dp.value * lay.world_size
    if _nnodes_broken(lay):
        yield Finding(
            "MG106", Severity.ERROR,
            f"--nnodes {nnodes} does not divide the total world size {total} (dp "
            f"{lay.dp.value} × {lay.describe_world()}): vLLM refuses to start",
            d.source, nn_span, math=(f"{total} / {nnodes} = {total / nnodes:g}",),
        )
    size = d.context.group_size
    if size is not None and size.value.isdigit() and int(size.value) != nnodes:
        yield Finding(
            "MG106", Severity.ERROR,
            f"--nnodes {nnodes} but the LeaderWorkerSet group has {size.value} pods",
            d.source, nn_span,
            related=(Related(d.source, size.span, f"size: {size.value}"),)
            if size.span is not None else (),
            hint="make spec.leaderWorkerTemplate.size equal --nnodes",
        )
    rank = inv.node_rank
    if rank.given and rank.known and isinstance(rank.value, int) and not 0 <= rank.value < nnodes:
        yield Finding(
            "MG106", Severity.ERROR,
            f"--node-rank {rank.value} is outside 0..{nnodes - 1} for --nnodes {nnodes}: vLLM "
            "refuses to start",
            d.source, rank.span or d.program_span,
        )
        return
    secondary = rank.given and rank.known and isinstance(rank.value, int) and rank.value > 0
    if nnodes > 1 and secondary and not inv.master_addr.given and inv.master_addr.known:
        yield Finding(
            "MG106", Severity.ERROR,
            f"node rank {rank.value} of {nnodes} without --master-addr: it looks for the "
            "master on 127.0.0.1 (the default) and never joins",
            d.source, rank.span or d.program_span,
            hint="add --master-addr with the rank-0 node's address",
        )
    if nnodes > 1 and secondary and not inv.headless.value and inv.headless.known:
        yield Finding(
            "MG106", Severity.WARNING,
            f"node rank {rank.value} without --headless starts an API server of its own",
            d.source, rank.span or d.program_span,
            hint="add --headless on every node but rank 0",
        )


# Pod labels by which a load- and prefix-aware router finds its backends: the Service beside
# them is for discovery, not for routing (AIBrix gateway `model.aibrix.ai/name`, llm-d
# `llm-d.ai/inferenceServing`).
ROUTER_LABELS = ("model.aibrix.ai/name", "llm-d.ai/inferenceServing")


@rule("MG107", "data-parallel-routing", Severity.INFO,
      "dense-model replicas behind a plain Service: a load- or prefix-aware router does better")
def data_parallel_routing(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds a dense model served by several replicas (Deployment `replicas` > 1,
    or `-dp` > 1 in one pod) behind a Kubernetes Service, with no router's labels on the pods.

    Why is this bad? A Service spreads connections without looking at the work. In a
    simulation (linter/sizing/parallel.py) 12 requests of uneven length on 3 replicas take
    601.3 time units on average
    (worst 2,450) with round-robin and 415.0 (worst 950) when each goes to the replica with
    the fewest unfinished requests. And prefix caching is local to one replica, so turn
    2 of a conversation sent to another replica recomputes the whole prompt. (vLLM's own `-dp`
    front end balances by load, but a Service in front of several pods does not.)

    Use instead: a router that sees load and prefixes (vLLM's production-stack router, the
    Gateway API inference extension / llm-d, AIBrix, KServe's LLM router), with the Service
    behind it.
    """
    lay = _usable_layout(d)
    if lay is None or d.model is None or d.model.shape is None or d.model.shape.is_moe:
        return
    if not d.services or any(k in d.context.pod_labels for k in ROUTER_LABELS):
        return
    replicas = d.context.replicas
    n_replicas = int(replicas.value) if replicas is not None and replicas.value.isdigit() else 1
    if n_replicas <= 1 and lay.dp.value <= 1:
        return
    if n_replicas > 1 and replicas is not None and replicas.span is not None:
        span, what = replicas.span, f"{n_replicas} replicas"
    else:
        span, what = lay.dp.span or d.program_span, f"dp {lay.dp.value}"
    svc = d.services[0]
    rr = route_requests(EXAMPLE_9_WORK, 3, 100, "round-robin")
    lo = route_requests(EXAMPLE_9_WORK, 3, 100, "least-outstanding")
    yield Finding(
        "MG107", Severity.INFO,
        f"{what} of {_model_name(d)} behind Service `{svc.name}`: it spreads requests without "
        "seeing load or cached prefixes",
        d.source, span,
        math=((f"simulated, 12 uneven requests on 3 replicas: round-robin mean latency "
              f"{fixed(rr.mean_latency, 1)}, max {rr.max_latency}; least outstanding requests "
              f"mean {fixed(lo.mean_latency, 1)}, max {lo.max_latency}"),),
        hint="route through a load- and prefix-aware router (production-stack router, "
             "Gateway API inference extension)",
        related=(Related(svc.source, svc.span, f"Service {svc.name}"),),
    )


@rule("MG108", "gpu-shared-between-launches", Severity.ERROR,
      "two vLLM engines on the same GPU reserve more than all of its memory")
def gpu_shared_between_launches(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds vLLM launches of one script or compose file that are given the same
    GPU (the same compose `device_ids` or `docker run --gpus device=`, the same
    `CUDA_VISIBLE_DEVICES` ids on the host) and whose `--gpu-memory-utilization` values add
    up to more than 1.

    Why is this bad? Each vLLM engine reserves its fraction of the whole GPU's memory at
    start-up and checks that it is free ("Free memory on device … is less than desired GPU
    memory utilization", vllm/v1/worker/utils.py, vLLM 0.30.0). Two engines at 0.9 and 0.85 on
    one GPU ask for 175% of it: the second one to start fails. (Two engines at 0.45 each can
    share a GPU on purpose; that is not reported.)

    Use instead: give each engine its own GPU, or lower the utilisations so they sum to at
    most 1.
    """
    if d.engine != VLLM:
        return
    mine = physical_gpus(d.launch)
    util = d.inv.gpu_memory_utilization
    if mine is None or not util.known or not isinstance(util.value, (int, float)):
        return
    ids, span = mine
    for gp in d.gpu_peers:  # earlier launches of the file on one of these GPUs (report once)
        peer = gp.launch
        if peer.engine != VLLM:
            continue
        theirs = (gp.ids, gp.span)
        peer_util = gp.inv.gpu_memory_utilization
        if not peer_util.known or not isinstance(peer_util.value, (int, float)):
            continue
        total = util.value + peer_util.value
        if total <= 1:
            continue
        shared = sorted(ids & theirs[0])
        related = [Related(peer.source, peer.program.span, "the other engine starts here")]
        if theirs[1] is not None and theirs[1] != span:
            related.append(Related(peer.source, theirs[1], "its GPUs"))
        for setting, who in ((util, "this engine"), (peer_util, "the other engine")):
            if setting.span is not None:
                related.append(Related(d.source if who == "this engine" else peer.source,
                                       setting.span, f"{who}: {setting.value:g}"))
        yield Finding(
            "MG108", Severity.ERROR,
            f"GPU{'s' if len(shared) > 1 else ''} {', '.join(shared)} also "
            f"{'go' if len(shared) > 1 else 'goes'} to the engine"
            f"{_at(d, peer.program.span)}: together they reserve {util.value:g} + "
            f"{peer_util.value:g} = {total:g} of its memory, so the second to start fails "
            "vLLM's free-memory check",
            d.source, span if span is not None else d.program_span,
            math=((f"--gpu-memory-utilization {util.value:g} + {peer_util.value:g} = "
                  f"{total:g} > 1"),),
            hint="give each engine its own GPU, or utilisations that sum to at most 1",
            related=tuple(related), data={"gpus": shared, "utilization": [util.value,
                                                                          peer_util.value]},
        )
        return


@rule("MG109", "gpu-requests-without-limits", Severity.ERROR,
      "GPUs requested without a limit: Kubernetes rejects the pod")
def gpu_requests_without_limits(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `nvidia.com/gpu` (or `amd.com/gpu`) under a container's
    `resources.requests` with no matching entry under `resources.limits`.

    Why is this bad? GPUs are extended resources, which Kubernetes cannot overcommit: they
    must be set in `limits` (a request, if given, must equal the limit). A request alone fails
    the API server's validation ("Limit must be set for non overcommitable resources"), so
    the Deployment's pods are never created.

    Use instead: put the count under `limits` (the request defaults to the limit).
    """
    req = d.context.gpu_requests_only
    if d.context.kind != "k8s" or req is None or req.span is None:
        return
    yield Finding(
        "MG109", Severity.ERROR,
        f"{req.value} GPU{'' if req.value.strip() == '1' else 's'} in resources.requests "
        "without a limit: GPUs are extended resources and must be set in limits, so the API "
        "server rejects the pod",
        req.source or d.source, req.span,
        hint="move the GPU count to resources.limits (the request defaults to the limit)",
        fix=mirror_gpu_request(req.source or d.source, req.span),
    )


@rule("MG110", "visible-devices-out-of-range", Severity.ERROR,
      "CUDA_VISIBLE_DEVICES inside a container names GPUs the container does not have")
def visible_devices_out_of_range(d: Deployment) -> Iterator[Finding]:
    """
    What it does: checks a `CUDA_VISIBLE_DEVICES` (or `HIP_VISIBLE_DEVICES`) list set inside a
    container that has its own GPU request (`nvidia.com/gpu` limit, compose devices,
    `docker run --gpus N`) against the container's GPU count.

    Why is this bad? Inside a container the GPUs are numbered 0..n-1, whatever their numbers
    on the host. CUDA enumerates the listed indices up to the first one that does not exist
    and hides the rest: `4,5,6,7` in a container with `nvidia.com/gpu: 4` leaves CUDA with no
    GPU at all (the engine fails at start-up), `0,1,5` leaves only two.

    Use instead: drop the variable (the container already sees only its own GPUs), or index
    the container's GPUs from 0.
    """
    g = d.gpu
    vis = g.visible if g is not None else None
    if g is None or vis is None or not vis.beyond or g.request is None \
            or g.request.count is None:
        return
    have = g.request.count
    seen = 0
    for x in vis.ids:
        if not x.isdigit() or int(x) >= have:
            break
        seen += 1
    lay = _usable_layout(d)
    need = lay.gpus_per_node if lay is not None and not _ray_backed(d) else None
    fails = seen == 0 or (need is not None and seen < need)
    sees = "no GPU" if seen == 0 else f"only {_plural(seen)} (index{'es' if seen > 1 else ''} " \
        f"{','.join(vis.ids[:seen])})"
    consequence = " and the engine fails at start-up" if seen == 0 else \
        f": {_needed(lay)} needs {need}" if fails and lay is not None else \
        f": the later entries {','.join(vis.ids[seen:])} are ignored"
    yield Finding(
        "MG110", Severity.ERROR if fails else Severity.WARNING,
        f"{vis.name}={vis.text} inside a container that gets {_plural(have)} "
        f"({g.request.origin}{_at(d, g.request.span)}), numbered 0-{have - 1} there: CUDA "
        f"sees {sees}{consequence}",
        d.source, vis.span or d.program_span,
        math=(f"indices {','.join(vis.beyond)} ≥ {have} GPUs in the container",),
        hint=f"remove {vis.name}, or index the container's GPUs from 0 "
             f"({','.join(str(i) for i in range(min(have, len(vis.ids))))})",
        related=(Related(d.source, g.request.span, f"{g.request.origin}: {have}"),)
        if g.request.span is not None else (),
        data={"visible": list(vis.ids), "container_gpus": have, "seen": seen},
    )


RULES: list[Rule] = [gpu_count_mismatch, heads_not_divisible, kv_heads_replicated,
                     pipeline_exceeds_layers, tensor_parallel_across_nodes,
                     multi_node_inconsistent, data_parallel_routing,
                     gpu_shared_between_launches, gpu_requests_without_limits,
                     visible_devices_out_of_range]
