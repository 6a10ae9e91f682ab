"""Where a launch's GPUs and replicas land: routing, GPUs shared between launches, GPU requests
and visible-device lists (MG107-MG110)."""

from __future__ import annotations

from collections.abc import Iterator

from mgpu_lint.deployment import Deployment
from mgpu_lint.engines.adapter import PARALLEL_LAYOUT, VLLM_ARGS
from mgpu_lint.facts.peers import physical_gpus
from mgpu_lint.facts.ray import ray_backed
from mgpu_lint.findings import Finding, Related, Severity
from mgpu_lint.fixes import mirror_gpu_request
from mgpu_lint.sizing.display import fixed
from mgpu_lint.sizing.parallel import UNEVEN_WORK, route_requests

from .layout import usable_layout
from .registry import Rule, rule
from .text import at_line, model_name, plural

# Pod labels by which a load- and prefix-aware router finds its backends: the Service beside
# them is for discovery, not for routing (AIBrix gateway `model.aibrix.ai/name`, llm-d
# `llm-d.ai/inferenceServing`).
ROUTER_LABELS = ("model.aibrix.ai/name", "llm-d.ai/inferenceServing")


@rule("MG107", "data-parallel-routing", Severity.INFO,
      "dense-model replicas behind a plain Service: a load- or prefix-aware router does better",
      needs={PARALLEL_LAYOUT}, reads=("data_parallel_size",))
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
    lay = usable_layout(d)
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
    rr = route_requests(UNEVEN_WORK, 3, 100, "round-robin")
    lo = route_requests(UNEVEN_WORK, 3, 100, "least-outstanding")
    yield data_parallel_routing.finding(
        f"{what} of {model_name(d)} behind Service `{svc.name}`: it spreads requests without "
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
      "two vLLM engines on the same GPU reserve more than all of its memory",
      needs={VLLM_ARGS}, reads=("gpu_memory_utilization",))
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
    mine = physical_gpus(d.launch)
    util = d.inv.gpu_memory_utilization
    if mine is None or not util.known or not isinstance(util.value, (int, float)):
        return
    ids, span = mine
    for gp in d.gpu_peers:  # earlier launches of the file on one of these GPUs (report once)
        peer = gp.launch
        if not gp.engine_has(VLLM_ARGS):
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
        yield gpu_shared_between_launches.finding(
            f"GPU{'s' if len(shared) > 1 else ''} {', '.join(shared)} also "
            f"{'go' if len(shared) > 1 else 'goes'} to the engine"
            f"{at_line(d, peer.program.span)}: together they reserve {util.value:g} + "
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
    if not d.context.pod or req is None or req.span is None:
        return
    yield gpu_requests_without_limits.finding(
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
    lay = usable_layout(d)
    need = lay.gpus_per_node if lay is not None and not ray_backed(d) else None
    fails = seen == 0 or (need is not None and seen < need)
    sees = "no GPU" if seen == 0 else f"only {plural(seen)} (index{'es' if seen > 1 else ''} " \
        f"{','.join(vis.ids[:seen])})"
    consequence = " and the engine fails at start-up" if seen == 0 else \
        f": {lay.needed_text()} needs {need}" if fails and lay is not None else \
        f": the later entries {','.join(vis.ids[seen:])} are ignored"
    yield visible_devices_out_of_range.finding(
        f"{vis.name}={vis.text} inside a container that gets {plural(have)} "
        f"({g.request.origin}{at_line(d, g.request.span)}), numbered 0-{have - 1} there: CUDA "
        f"sees {sees}{consequence}",
        d.source, vis.span or d.program_span,
        math=(f"indices {','.join(vis.beyond)} ≥ {have} GPUs in the container",),
        hint=f"remove {vis.name}, or index the container's GPUs from 0 "
             f"({','.join(str(i) for i in range(min(have, len(vis.ids))))})",
        related=(Related(d.source, g.request.span, f"{g.request.origin}: {have}"),)
        if g.request.span is not None else (),
        data={"visible": list(vis.ids), "container_gpus": have, "seen": seen},
        severity=Severity.ERROR if fails else Severity.WARNING,
    )


RULES: list[Rule] = [data_parallel_routing, gpu_shared_between_launches,
                     gpu_requests_without_limits, visible_devices_out_of_range]
