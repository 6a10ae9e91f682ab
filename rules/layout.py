"""Parallel layout vs the GPUs a launch gets (MG1xx).

vLLM 0.30.0's definitions (vllm-notes.md §4-§5): world size = pp × tp × pcp; GPUs one node uses
= dp_local × world size (split over the nodes one engine spans); attention heads must divide by
tp; KV heads are replicated when tp exceeds them.
"""

from __future__ import annotations

from typing import Iterator

from mgpu_lint.deployment import Deployment
from mgpu_lint.findings import Finding, Related, Severity
from mgpu_lint.launch import VLLM, Launch
from mgpu_lint.resolve import Layout
from mgpu_lint.source import Span

from .registry import Rule, rule


def _model_name(d: Deployment) -> str:
    """The model as the launch names it (the catalog shape may be a sibling checkpoint)."""
    return d.model.ref.rstrip("/").rsplit("/", 1)[-1] if d.model is not None else "the model"


def _where(d: Deployment, span: Span | None) -> str:
    if span is None:
        return ""
    return f" at line {d.source.line_col(span.start)[0]}"


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


def _group(d: Deployment) -> int | None:
    """Pods in a LeaderWorkerSet group (1 outside one)."""
    size = d.context.group_size
    if size is None:
        return 1
    return int(size.value) if size.value.isdigit() else None


def _usable_layout(d: Deployment) -> Layout | None:
    lay = d.layout
    if d.engine != VLLM or lay is None or not lay.known:
        return None
    return lay


def _needed(lay: Layout) -> tuple[int, str]:
    """GPUs this launch uses on its node, and how that number is made."""
    world = f"world size {lay.world_size} ({lay.describe_world()})"
    per_node = lay.gpus_per_node
    if lay.nnodes_within_dp > 1:
        world += f" over {lay.nnodes_within_dp} nodes"
    if lay.dp_local.value > 1:
        return per_node, f"{lay.dp_local.value} local engines (dp) × {world}"
    return per_node, world


def _size_to_change(d: Deployment, lay: Layout) -> tuple[Span, list[Related]]:
    """The parallel-size value set explicitly (tp first), else the program word."""
    sizes = [(n, s) for n, s in lay.explicit_sizes if s.span is not None]
    related = [Related(d.source, s.span, f"{n} {s.value}") for n, s in sizes]  # type: ignore
    if sizes:
        return sizes[0][1].span, related[1:]  # type: ignore[return-value]
    return d.program_span, related


@rule("MG101", "gpu-count-mismatch", Severity.ERROR,
      "the parallel layout needs more (or fewer) GPUs than the launch gets")
def gpu_count_mismatch(d: Deployment) -> Iterator[Finding]:
    """
    What it does: compares the GPUs a vLLM launch uses on its node — data-parallel engines on
    the node × world size (tensor × pipeline × context parallel), split over the nodes one
    engine spans — with the GPUs the container or process gets (`nvidia.com/gpu` limit,
    compose device count or ids, `docker run --gpus`, `CUDA_VISIBLE_DEVICES`, `--device-ids`).

    Why is this bad? With fewer GPUs vLLM refuses to start ("World size (8) is larger than the
    number of available GPUs (4) in this node"); with more, the extra GPUs sit idle and are
    paid for. Example (lesson, Example 13): `-tp 4 -pp 2` is a world size of 8; on one node it
    needs 8 GPUs.

    Use instead: make the request match — `nvidia.com/gpu: 8` for tp 4 × pp 2 — or change
    the parallel sizes. Launches whose GPUs come from a Ray cluster
    (`--distributed-executor-backend ray`, KubeRay pods) are not compared.
    """
    lay = _usable_layout(d)
    g = d.gpu
    if lay is None or g is None or g.count is None or g.request is None:
        return
    have = g.count
    device_ids = d.inv.device_ids
    origin = g.request.origin
    have_span = g.request.span
    group = _group(d)
    if group is None:
        return
    if group > 1 and not lay.nnodes.given:
        # a LeaderWorkerSet without --nnodes: one engine over the whole group through Ray
        need = lay.dp.value * lay.world_size
        have = group * g.count
        origin = f"LeaderWorkerSet size {group} × {g.count} ({g.request.origin})"
        yield from _compare(d, lay, need, f"{lay.dp.value} engines (dp) × world size "
                            f"{lay.world_size} ({lay.describe_world()})" if lay.dp.value > 1
                            else f"world size {lay.world_size} ({lay.describe_world()})",
                            have, origin, have_span, across_group=True)
        return
    if _ray_backed(d):
        return
    if device_ids.given and device_ids.known and isinstance(device_ids.value, list) \
            and device_ids.value:
        have = min(have, len(device_ids.value))
        origin = f"--device-ids within {origin}"
        have_span = device_ids.span or have_span
    need, how = _needed(lay)
    yield from _compare(d, lay, need, how, have, origin, have_span, across_group=False)


def _compare(d: Deployment, lay: Layout, need: int, how: str, have: int, origin: str,
             have_span: Span | None, across_group: bool) -> Iterator[Finding]:
    if need == have:
        return
    where = "the group" if across_group else "on this node"
    formula = (f"GPUs needed in the group = dp {lay.dp.value} × world size {lay.world_size} = "
               f"{need}" if across_group else
               f"GPUs needed per node = dp_local {lay.dp_local.value} × world size "
               f"{lay.world_size} / nodes per engine {lay.nnodes_within_dp} = {need}")
    gets = f"{have} GPU{'s' if have != 1 else ''} ({origin}{_where(d, have_span)})"
    if need > have:
        span, related = _size_to_change(d, lay)
        if have_span is not None:
            related.append(Related(d.source, have_span, f"{origin}: {have}"))
        yield Finding(
            "MG101", Severity.ERROR,
            f"{how} needs {need} GPUs {'in ' if across_group else ''}{where} but the launch gets {gets}: vLLM refuses "
            "to start (world size larger than the available GPUs)",
            d.source, span, math=(formula,),
            hint=f"request {need} GPUs, or lower the parallel sizes to fit {have}",
            related=tuple(related), data={"needed": need, "available": have},
        )
        return
    span = have_span if have_span is not None else d.program_span
    sizes = [Related(d.source, s.span, f"{n} {s.value}") for n, s in lay.explicit_sizes
             if s.span is not None]
    yield Finding(
        "MG101", Severity.WARNING,
        f"the launch gets {gets} but {how} uses {need}: {have - need} GPU"
        f"{'s' if have - need != 1 else ''} stay idle",
        d.source, span, math=(formula,),
        hint=f"request {need} GPUs, or raise the parallel sizes (more -tp, or -dp for replicas)",
        related=tuple(sizes), data={"needed": need, "available": have},
    )


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
    if shape.heads % tp:
        good = [t for t in (1, 2, 4, 8, 16) if shape.heads % t == 0 and (
            shape.is_mla or shape.kv_heads % t == 0 or t % shape.kv_heads == 0)]
        yield Finding(
            "MG102", Severity.ERROR,
            f"tp {tp} does not divide the {shape.heads} attention heads of {_model_name(d)}: vLLM "
            "refuses to start",
            d.source, span, math=(f"{shape.heads} heads / tp {tp} = {shape.heads / tp:g}",),
            hint=f"use -tp {' or '.join(map(str, good[-2:]))}" if good else None,
            related=related,
        )
        return
    kv = shape.kv_heads
    if not shape.is_mla and kv % tp and tp % kv:
        yield Finding(
            "MG102", Severity.ERROR,
            f"tp {tp} and the {kv} KV heads of {_model_name(d)} do not divide each other: the KV "
            "projection cannot be sharded and loading fails",
            d.source, span,
            math=(f"{kv} KV heads / tp {tp} = {kv / tp:g}; tp {tp} / {kv} KV heads = "
                  f"{tp / kv:g}",),
            hint="use a tp that divides the KV heads (or a multiple of them)",
            related=related,
        )


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
        f"tp {tp} is larger than the {shape.kv_heads} KV heads of {_model_name(d)}: each KV head is "
        f"stored on {copies} GPUs, so the KV cache per GPU does not shrink beyond tp "
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
    What it does: finds a tensor-parallel size larger than the GPUs of one node.

    Why is this bad? Tensor parallelism all-reduces activations twice per layer for every
    token (lesson, Example 4-5). Inside a node that rides NVLink (450 GB/s per direction on
    H100); across nodes it rides the network (25-50 GB/s even with InfiniBand), so every
    decode step waits on the slowest link.

    Use instead: tp = GPUs per node and pp = number of nodes (Example 14), e.g. `-tp 8 -pp 2`
    on two 8-GPU nodes.
    """
    lay = _usable_layout(d)
    g = d.gpu
    if lay is None or g is None:
        return
    per_node = g.per_node
    tp = lay.tp.value
    if tp <= per_node:
        return
    nodes = -(-tp * lay.pp.value // per_node)
    assumed = "" if g.per_node_stated else (
        f" (assuming {per_node} GPUs per node: set gpus-per-node in the configuration)")
    yield Finding(
        "MG105", Severity.WARNING,
        f"tp {tp} is larger than a node's {per_node} GPUs{assumed}: every all-reduce crosses "
        "the network between nodes",
        d.source, lay.tp.span or d.program_span,
        math=(f"{tp * lay.pp.value} GPUs / {per_node} per node = {nodes} nodes",),
        hint=f"use -tp {per_node} -pp {nodes} (tensor parallel inside nodes, pipeline across)",
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
    own (warning).

    Launches whose GPUs come from a Ray cluster (no `--nnodes`) are not checked.
    """
    lay = _usable_layout(d)
    if lay is None or not lay.nnodes.given or _ray_backed(d):
        return
    inv = d.inv
    nnodes = lay.nnodes.value
    nn_span = lay.nnodes.span or d.program_span
    total = lay.dp.value * lay.world_size
    if nnodes > 1 and total % nnodes:
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


@rule("MG107", "data-parallel-routing", Severity.INFO,
      "dense-model replicas behind a plain Service: a load- or prefix-aware router does better")
def data_parallel_routing(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds a dense model served by several replicas (Deployment `replicas` > 1,
    or `-dp` > 1 in one pod) behind a Kubernetes Service.

    Why is this bad? A Service spreads connections without looking at the work: (lesson,
    Example 9) with requests of uneven length a least-loaded policy cuts the mean and the
    worst latency against round-robin; (Example 16) prefix caching is local to one replica, so
    turn 2 of a conversation sent to another replica recomputes the whole prompt —
    a prefix-aware router keeps each session where its KV cache is.

    Use instead: a router that sees load and prefixes (vLLM's production-stack router, the
    Gateway API inference extension / llm-d, KServe's LLM router), with the Service behind it.
    """
    lay = _usable_layout(d)
    if lay is None or d.model is None or d.model.shape is None or d.model.shape.is_moe:
        return
    if not d.services:
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
    yield Finding(
        "MG107", Severity.INFO,
        f"{what} of {_model_name(d)} behind Service `{svc.name}`: it spreads requests without "
        "seeing load or cached prefixes",
        d.source, span,
        hint="route through a load- and prefix-aware router (production-stack router, "
             "Gateway API inference extension)",
        related=(Related(svc.source, svc.span, f"Service {svc.name}"),),
    )


@rule("MG109", "gpu-requests-without-limits", Severity.ERROR,
      "GPUs requested without a limit: Kubernetes rejects the pod")
def gpu_requests_without_limits(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `nvidia.com/gpu` (or `amd.com/gpu`) in a container's `requests`
    without the same amount in `limits`.

    Why is this bad? GPUs are extended resources, which cannot be overcommitted: Kubernetes
    requires them in `limits` (and `requests`, when given, must equal the limit). A pod with
    GPUs only in `requests` is rejected by the API server ("Limit must be set for non
    overcommitable resources"), so the engine never starts.

    Use instead: put the GPU count in `resources.limits` (requests may be omitted).
    """
    req = d.context.gpu_requests_only
    if d.context.kind != "k8s" or req is None or req.span is None:
        return
    yield Finding(
        "MG109", Severity.ERROR,
        f"{req.value} GPU(s) in resources.requests but none in resources.limits: Kubernetes "
        "rejects the pod (GPUs cannot be overcommitted, the limit is required)",
        d.source, req.span, hint="move the GPU count to resources.limits",
    )


def _physical_gpus(la: Launch) -> tuple[frozenset[str], Span | None] | None:
    """The host GPU ids a launch runs on, when the file states them (compose/docker device
    ids, CUDA_VISIBLE_DEVICES on the host or within all GPUs); None when the scheduler picks
    (Kubernetes) or the file does not say."""
    ctx = la.context
    if ctx.kind == "k8s":
        return None
    cvd = la.env.get("CUDA_VISIBLE_DEVICES")
    visible = [x.strip() for x in cvd.value.split(",") if x.strip()] \
        if cvd is not None and cvd.value is not None else None
    req = ctx.gpus
    if req is not None and req.device_ids:
        base = list(req.device_ids)
        if visible is None:
            return frozenset(base), req.span
        if not all(v.isdigit() and int(v) < len(base) for v in visible):
            return None
        return frozenset(base[int(v)] for v in visible), cvd.span if cvd else req.span
    if visible is not None and (req is None or req.count is None):
        return frozenset(visible), cvd.span if cvd else None
    return None


@rule("MG108", "gpu-shared-between-launches", Severity.ERROR,
      "two vLLM engines on the same GPU reserve more than all of its memory")
def gpu_shared_between_launches(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds vLLM launches of one script or compose file that are given the same
    GPU (the same compose `device_ids`, `CUDA_VISIBLE_DEVICES` ids on the host) and whose
    `--gpu-memory-utilization` values add up to more than 1.

    Why is this bad? Each vLLM engine reserves its fraction of the whole GPU's memory at
    start-up and checks that it is free. Two engines at 0.9 and 0.85 on one GPU ask for 175%
    of it: the second one to start fails its memory check. (Two engines at 0.45 each can share
    a GPU on purpose; that is not reported.)

    Use instead: give each engine its own GPU, or lower the utilisations so they sum to at
    most 1.
    """
    from mgpu_lint.engines import parse_launch

    if d.engine != VLLM:
        return
    mine = _physical_gpus(d.launch)
    util = d.inv.gpu_memory_utilization
    if mine is None or not util.known or not isinstance(util.value, (int, float)):
        return
    ids, span = mine
    for peer in d.peers:
        if peer.engine != VLLM or peer.program.span.start >= d.program_span.start:
            continue  # report once, on the later launch
        theirs = _physical_gpus(peer)
        if theirs is None or not ids & theirs[0]:
            continue
        peer_inv, _ = parse_launch(peer, d.inv.version)
        peer_util = peer_inv.gpu_memory_utilization
        if not peer_util.known or not isinstance(peer_util.value, (int, float)):
            continue
        total = util.value + peer_util.value
        if total <= 1:
            continue
        shared = ", ".join(sorted(ids & theirs[0]))
        related = [Related(peer.source, peer.program.span, "the other engine starts here")]
        if theirs[1] is not None:
            related.append(Related(peer.source, theirs[1], "its GPUs"))
        yield Finding(
            "MG108", Severity.ERROR,
            f"GPU {shared} is also given to the engine at line "
            f"{peer.source.line_col(peer.program.span.start)[0]}: together they reserve "
            f"{util.value:g} + {peer_util.value:g} = {total:g} of its memory, so the second "
            "to start fails vLLM's memory check",
            d.source, span if span is not None else d.program_span,
            math=(f"--gpu-memory-utilization {util.value:g} + {peer_util.value:g} = "
                  f"{total:g} > 1",),
            hint="give each engine its own GPU, or utilisations that sum to at most 1",
            related=tuple(related),
        )
        return


RULES: list[Rule] = [gpu_count_mismatch, heads_not_divisible, kv_heads_replicated,
                     pipeline_exceeds_layers, tensor_parallel_across_nodes,
                     multi_node_inconsistent, data_parallel_routing,
                     gpu_shared_between_launches, gpu_requests_without_limits]
