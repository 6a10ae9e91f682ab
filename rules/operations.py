"""Operations: shared memory, probes, cold starts, autoscaling, warm-up (MG701-MG705)."""

from __future__ import annotations

from typing import Iterator

from mgpu_lint.deployment import Deployment
from mgpu_lint.findings import Finding, Related, Severity
from mgpu_lint.launch import RPC_SERVER

from .registry import Rule, rule

# Metrics that measure whether a GPU is busy, not how much work waits (lesson Example 18).
GPU_UTILIZATION_METRICS = {
    "dcgm_fi_dev_gpu_util",
    "dcgm_fi_prof_gr_engine_active",
    "dcgm_fi_prof_sm_active",
    "nvidia_gpu_duty_cycle",
    "nvidia_gpu_utilization",
    "gpu_utilization",
    "gpu_util",
    "container_accelerator_duty_cycle",
    "kubernetes.io|container|accelerator|duty_cycle",
    "kubernetes.io/container/accelerator/duty_cycle",
    "amd_gpu_use_percent",
    "amd_gpu_gfx_activity",
}
BATCH_KINDS = {"Job", "CronJob"}


@rule("MG702", "missing-readiness-probe", Severity.WARNING,
      "an engine container without a readiness or startup probe")
def missing_readiness_probe(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds Kubernetes containers that run an inference server (vLLM,
    llama-server) with neither a `readinessProbe` nor a `startupProbe`.

    Why is this bad? Loading weights takes from seconds to many minutes (a 140 GB model read
    at 2 GB/s is over a minute before CUDA graphs are captured). Without a readiness probe the
    Service sends requests to the pod as soon as the container starts, and they fail until the
    engine listens; rolling updates take the old pods down before the new ones can serve.

    Use instead: probe the engine's health endpoint (`/health` for both vLLM and llama-server),
    with a `startupProbe` generous enough for the model load:

        readinessProbe:
          httpGet: {path: /health, port: 8000}
        startupProbe:
          httpGet: {path: /health, port: 8000}
          failureThreshold: 120
          periodSeconds: 10

    Not reported for headless vLLM workers (`--headless`, no API server), RPC servers, and
    Jobs/CronJobs (batch work, not traffic).
    """
    ctx = d.context
    if ctx.kind != "k8s" or d.engine == RPC_SERVER or ctx.object_kind in BATCH_KINDS:
        return
    if d.inv.headless.value:
        return
    if "readinessProbe" in ctx.probes or "startupProbe" in ctx.probes:
        return
    name = ctx.container_name
    span = name.span if name is not None and name.span is not None else d.program_span
    label = f"container `{name.value}`" if name is not None else "the container"
    liveness = " (it has only a livenessProbe, which restarts but never gates traffic)" \
        if "livenessProbe" in ctx.probes else ""
    yield Finding(
        "MG702", Severity.WARNING,
        f"{label} runs {d.engine} without a readinessProbe or startupProbe{liveness}: traffic "
        "arrives before the model has loaded",
        d.source, span,
        hint="add readinessProbe and startupProbe on the engine's /health endpoint",
        related=(Related(d.source, d.program_span, "the engine starts here"),),
    )


@rule("MG704", "hpa-on-gpu-utilization", Severity.WARNING,
      "autoscaling on GPU utilisation: prefer the number of waiting requests")
def hpa_on_gpu_utilization(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds HorizontalPodAutoscalers that scale an inference server on a GPU
    utilisation metric (DCGM_FI_DEV_GPU_UTIL, nvidia_gpu_duty_cycle, the GKE accelerator duty
    cycle …).

    Why is this bad? (lesson, Example 18) GPU utilisation says only whether a kernel was
    running in the sampling window. A decode-bound engine shows ~100% with one request or with
    two hundred: the metric saturates long before users notice queueing, and it stays high
    while the queue drains, so the autoscaler neither scales out in time nor scales in.

    Use instead: scale on the engine's queue — `vllm:num_requests_waiting` for vLLM, or the
    requests-deferred / processing-slots metrics of llama-server — through a custom or external
    metric adapter.
    """
    for hpa in d.hpas:
        for metric in hpa.metrics:
            if metric.value.lower() not in GPU_UTILIZATION_METRICS or metric.span is None:
                continue
            yield Finding(
                "MG704", Severity.WARNING,
                f"HorizontalPodAutoscaler `{hpa.name}` scales {d.engine} on `{metric.value}`, a "
                "GPU utilisation metric: it reads ~100% at any load that keeps the GPU busy, so "
                "it cannot tell a queue building up",
                hpa.source, metric.span,
                hint="scale on waiting requests (vllm:num_requests_waiting) instead",
                related=(Related(d.source, d.program_span, "the engine it scales"),),
            )




SHM_MIN_BYTES = 1 << 30  # DECISIONS: "large" means at least 1 GiB (or no size limit)


@rule("MG701", "missing-shm", Severity.WARNING,
      "a multi-GPU vLLM container without a large /dev/shm")
def missing_shm(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds vLLM launches whose world size (tp × pp) exceeds 1 inside a container
    that keeps the default /dev/shm (64 MB in Docker and Kubernetes).

    Why is this bad? vLLM's workers on one node talk through shared memory: NCCL's
    intra-node transport and vLLM's own message queue between the scheduler and its workers
    use /dev/shm. With 64 MB, NCCL fails at start-up ("unhandled system error", "Error while
    creating shared memory segment") or falls back to slower paths.

    Use instead: Kubernetes — mount a memory-backed emptyDir at /dev/shm:

        volumes:
          - name: shm
            emptyDir: {medium: Memory, sizeLimit: 16Gi}

    compose — `ipc: host` or `shm_size: 16gb`; docker run — `--ipc=host` or `--shm-size 16g`.
    KubeRay pods are not reported: the operator mounts one.
    """
    ctx = d.context
    lay = d.layout
    if lay is None or not lay.known or lay.world_size <= 1:
        return
    if ctx.kind not in ("k8s", "compose") and ctx.image is None:
        return  # a process on the host, not in a container
    if ctx.ray_cluster:
        return
    if ctx.shm is not None and (ctx.shm_size_bytes is None or ctx.shm_size_bytes >= SHM_MIN_BYTES):
        return
    name = ctx.container_name
    span = name.span if name is not None and name.span is not None else d.program_span
    where = ("the default 64 MB /dev/shm" if ctx.shm is None else
             f"a /dev/shm below 1 GiB ({ctx.shm.value})")
    fix = {"k8s": "mount an emptyDir with medium: Memory at /dev/shm",
           "compose": "add `ipc: host` or `shm_size: 16gb` to the service"}.get(
        ctx.kind, "run the container with --ipc=host or --shm-size 16g")
    related = tuple(Related(d.source, s.span, f"{n} {s.value}") for n, s in
                    lay.explicit_sizes if s.span is not None)
    yield Finding(
        "MG701", Severity.WARNING,
        f"world size {lay.world_size} ({lay.describe_world()}) in a container with {where}: "
        "NCCL and vLLM's workers need shared memory",
        d.source, span, hint=fix, related=related,
    )


RULES: list[Rule] = [missing_shm, missing_readiness_probe, hpa_on_gpu_utilization]
