"""Operations: shared memory, probes, cold starts, autoscaling, warm-up (MG701-MG705)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from functools import lru_cache

from mgpu_lint.deployment import Deployment
from mgpu_lint.engines.adapter import GPU_LAYOUT, HTTP_API, LLAMA_ARGS, PARALLEL_LAYOUT
from mgpu_lint.findings import Finding, Related, Severity
from mgpu_lint.images import runs_as_root
from mgpu_lint.policy import SHM_MIN_BYTES
from mgpu_lint.sizing.display import fixed
from mgpu_lint.sizing.memory import weights_bytes
from mgpu_lint.sizing.operations import (
    HUB_DOWNLOAD_BYTES_PER_S,
    LOAD_SOURCES,
    START_SECONDS,
    WARMUP_SECONDS,
    example_cold_start,
    load_time,
)

from .registry import Rule, rule

# Metrics that measure whether a GPU is busy, not how much work waits.
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
      "an engine container without a readiness or startup probe",
      needs={HTTP_API})
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

    Not reported for headless vLLM workers (`--headless`, no API server), SGLang ranks other
    than node 0 (`--node-rank` 1 and up, or a LeaderWorkerSet worker: they start only a
    health-check stub), RPC servers, and Jobs/CronJobs (batch work, not traffic).
    """
    ctx = d.context
    if not ctx.pod or ctx.object_kind in BATCH_KINDS:
        return
    if d.inv.headless.value or not d.launch.serves_api or (
            d.adapter.no_api is not None and d.adapter.no_api(d)):
        return
    if "readinessProbe" in ctx.probes or "startupProbe" in ctx.probes:
        return
    name = ctx.container_name
    span = name.span if name is not None and name.span is not None else d.program_span
    label = f"container `{name.value}`" if name is not None else "the container"
    liveness = " (it has only a livenessProbe, which restarts but never gates traffic)" \
        if "livenessProbe" in ctx.probes else ""
    yield missing_readiness_probe.finding(
        f"{label} runs {d.adapter.display} without a readinessProbe or startupProbe"
        f"{liveness}: traffic arrives before the model has loaded",
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

    Why is this bad? GPU utilisation says only whether a kernel was
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
            yield hpa_on_gpu_utilization.finding(
                f"HorizontalPodAutoscaler `{hpa.name}` scales {d.adapter.display} on "
                f"`{metric.value}`, a GPU utilisation metric: it reads ~100% at any load that "
                "keeps the GPU busy, so it cannot tell a queue building up",
                hpa.source, metric.span,
                hint="scale on waiting requests (vllm:num_requests_waiting) instead",
                related=(Related(d.source, d.program_span, "the engine it scales"),),
            )




@rule("MG701", "missing-shm", Severity.WARNING,
      "a multi-GPU engine container without a large /dev/shm",
      needs={GPU_LAYOUT})
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
    SGLang's tensor-parallel ranks all-reduce through NCCL too (torch.distributed's nccl
    backend: ModelRunner.init_torch_distributed, sglang/srt/model_executor/model_runner.py,
    0.5.5), so the same holds for its containers.
    KubeRay pods are not reported: the operator mounts one.
    """
    ctx = d.context
    lay = d.layout
    if lay is None or not lay.known or lay.world_size <= 1:
        return
    if d.gpu is None:
        return  # not GPUs (TPU chips): no NCCL transport over /dev/shm to check
    if not ctx.in_container:
        return  # a process on the host, not in a container
    if ctx.ray_cluster:
        return
    if ctx.shm is not None and (ctx.shm_size_bytes is None or ctx.shm_size_bytes >= SHM_MIN_BYTES):
        return
    name = ctx.container_name
    span = name.span if name is not None and name.span is not None else d.program_span
    where = ("the default 64 MB /dev/shm" if ctx.shm is None else
             f"a /dev/shm below 1 GiB ({ctx.shm.value})")
    fix = ("mount an emptyDir with medium: Memory at /dev/shm" if ctx.pod else
           "add `ipc: host` or `shm_size: 16gb` to the service" if ctx.orchestrated else
           "run the container with --ipc=host or --shm-size 16g")
    related = tuple(Related(d.source, s.span, f"{n} {s.value}") for n, s in
                    lay.explicit_sizes if s.span is not None)
    users = "NCCL and vLLM's workers need" if d.adapter.has(PARALLEL_LAYOUT) else \
        f"NCCL between {d.adapter.display}'s ranks needs"
    yield missing_shm.finding(
        f"world size {lay.world_size} ({lay.describe_world()}) in a container with {where}: "
        f"{users} shared memory",
        d.source, span, hint=fix, related=related,
    )


# A Hugging Face repository id: `org/name` (vLLM treats a model that is not an existing path as
# one; llama-server downloads with -hf).
HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+(:[\w.-]+)?")
# Volumes that die with the pod: not a cache (DECISIONS "Thresholds": a cache is a PVC, hostPath
# or a path baked into the image, not an emptyDir).
EPHEMERAL_VOLUMES = frozenset({"emptyDir", "emptyDir:Memory", "configMap", "secret",
                               "downwardAPI", "projected", "ephemeral"})
OFFLINE_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
TRUE_VALUES = frozenset({"1", "true", "yes", "on"})
# Where the download lands: the first variable set wins (huggingface_hub for vLLM;
# common/hf-cache.cpp get_cache_directory for llama.cpp 3f545bec, which reads LLAMA_CACHE first).
# Each entry: variable, path below its value.
CACHE_ENV = (("HF_HUB_CACHE", ""), ("HUGGINGFACE_HUB_CACHE", ""), ("HF_HOME", "hub"),
             ("XDG_CACHE_HOME", "huggingface/hub"))
DEFAULT_HOME = "/root"  # the vLLM and llama.cpp server images run as root
DEFAULT_CACHE = "the default cache"


def _cache_dir(d: Deployment) -> tuple[str, str] | None:
    """Where the engine stores downloaded weights, and what sets it; None when a variable that
    decides it has a value the linter cannot see."""
    key = d.adapter.download_dir_key
    download = d.inv.setting(key) if key is not None else None
    if download is not None and download.given:
        if not download.known or not download.value:
            return None
        return str(download.value), d.inv.long_name(key)
    env = d.launch.env
    names = d.adapter.cache_env + CACHE_ENV
    for name, below in names:
        var = env.get(name)
        if var is None:
            continue
        if var.value is None:
            return None
        if var.value:
            return posixpath.join(var.value, below) if below else var.value, name
    home = env.get("HOME")
    if home is not None and home.value is None:
        return None
    image = d.context.image
    if (home is None or not home.value) and \
            not runs_as_root(image.value if image else None, d.launch.operator):
        return posixpath.join("~", ".cache/huggingface/hub"), DEFAULT_CACHE
    base = home.value if home is not None and home.value else DEFAULT_HOME
    return posixpath.join(base, ".cache/huggingface/hub"), DEFAULT_CACHE


def _covers(mount: str, path: str) -> bool:
    m, p = mount.rstrip("/") or "/", path.rstrip("/") or "/"
    return p == m or p.startswith(m.rstrip("/") + "/") or m.startswith(p + "/")


def _hub_source(d: Deployment) -> str | None:
    """"the Hugging Face Hub" / "a URL" when the launch downloads its model at start."""
    for key, where in d.adapter.hub_settings:
        if d.inv.setting(key).given:
            return where
    if not d.adapter.hub_model_ref or d.model is None:
        return None
    ref = d.model.ref
    if not HUB_ID.fullmatch(ref) or any(_covers(m, ref) for m in d.context.volumes
                                        if ref.startswith("/")):
        return None
    return "the Hugging Face Hub"


def _short(x: float) -> str:
    """A number with up to 3 decimals, trailing zeros dropped (0.125, 1, 70.6)."""
    return fixed(x, 3).rstrip("0").rstrip(".")


@lru_cache(maxsize=256, typed=True)
def _cold_start(params: float, bits: float) -> tuple[float, float, tuple[str, ...]]:
    """MG703's weight bytes, cold start from the Hub and math lines for a model of ``params``
    parameters at ``bits`` bits: they depend on those two values alone (the rates and times are
    constants), so every launch of one model shares them instead of formatting 18 numbers
    again.  Keyed on the values and their types (``typed``), as the finding's data keeps the
    product's type."""
    size = weights_bytes(params, bits)
    hub = example_cold_start(size, HUB_DOWNLOAD_BYTES_PER_S)
    math = [(f"weights: {_short(params / 1e9)}e9 parameters × "
            f"{fixed(bits, 1)} bits / 8 = {fixed(size / 1e9, 1)} GB")]
    for name, rate in (LOAD_SOURCES[0], LOAD_SOURCES[2]):
        load = load_time(size, rate)
        math.append(f"{name}: {fixed(size / 1e9, 1)} GB / {_short(rate / 1e9)} GB/s = "
                    f"{fixed(load, 1)} s load, {fixed(START_SECONDS, 0)} + {fixed(load, 1)} + "
                    f"{fixed(WARMUP_SECONDS, 0)} = {fixed(example_cold_start(size, rate), 1)} s "
                    "cold start")
    math.append(f"start {fixed(START_SECONDS, 0)} s and warm-up {fixed(WARMUP_SECONDS, 0)} s "
                "and the rates are assumed figures (linter/sizing/operations.py): measure your own")
    return size, hub, tuple(math)


@rule("MG703", "cold-start-download", Severity.INFO,
      "the model is downloaded at every start: no cache volume")
def cold_start_download(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds Kubernetes containers whose engine pulls its model from a hub at start
    (a Hugging Face repository id for vLLM; `-hf`, `-dr` or `-mu` for llama-server) while no
    persistent volume (PVC, hostPath, NFS …) holds the download cache (`--download-dir`,
    `HF_HUB_CACHE`, `HF_HOME`, `LLAMA_CACHE`, else ~/.cache/huggingface/hub). An emptyDir is
    not a cache: it dies with the pod. The engine images mgpu-lint knows run as root; for any
    other image the home directory is not known, so any persistent volume may be the cache.

    Why is this bad? Every new pod — each scale-out, reschedule and
    rolling update — downloads the weights again before it can serve. Cold start is start-up
    plus load plus warm-up: with an assumed 20 s start and 40 s warm-up, a 70.6 GB model takes
    564.8 s to download at 1 Gb/s (624.8 s in all) against 23.5 s from a local NVMe drive. While
    a replica starts, requests pile up: (arrival − served) × cold start, 1,800 requests for a
    600 s cold start and 3 extra requests per second.

    Use instead: mount a PersistentVolumeClaim (or a hostPath on nodes that keep the weights)
    at the cache directory, or bake the weights into the image or a volume and serve a path.
    """
    if not d.context.pod:
        return
    if d.model is None or d.model.shape is None:
        return
    source = _hub_source(d)
    if source is None:
        return
    env = d.launch.env
    if any(env[n].value is None or env[n].value.lower() in TRUE_VALUES
           for n in OFFLINE_ENV if n in env):
        return  # offline mode: the weights must already be in the image or a volume
    if any(name in env for name in d.adapter.other_hub_env):
        return
    cache = _cache_dir(d)
    if cache is None:
        return
    path, origin = cache
    if path.startswith("~"):
        # the image's home is not known: any persistent volume may hold its cache
        if any(kind.value not in EPHEMERAL_VOLUMES for kind in d.context.volumes.values()):
            return
    ephemeral: str | None = None
    for mount, kind in d.context.volumes.items():
        if _covers(mount, path):
            if kind.value not in EPHEMERAL_VOLUMES:
                return
            ephemeral = f"the {kind.value} volume at {mount}"
    params, bits = d.model.shape.params, d.model.weights.bits
    try:
        size, hub, math = _cold_start(params, bits)
    except TypeError:  # a value that cannot be hashed (none today): computed each time
        size, hub, math = _cold_start.__wrapped__(params, bits)
    where = f"{ephemeral} dies with the pod" if ephemeral else \
        f"no persistent volume holds its cache {path}" + (
            f", set by {origin}" if origin != DEFAULT_CACHE else "")
    related = tuple(Related(d.source, kind.span, f"{kind.value} volume")
                    for mount, kind in d.context.volumes.items()
                    if _covers(mount, path) and kind.span is not None)
    yield cold_start_download.finding(
        f"`{d.model.ref}` is downloaded from {source} at every pod start ({where}): about "
        f"{fixed(hub, 0)} s of cold start for {fixed(size / 1e9, 1)} GB at 1 Gb/s",
        d.source, d.model.span or d.program_span,
        hint=f"mount a PersistentVolumeClaim at {path}, or serve the weights from a path baked "
             "into the image or a volume",
        math=math, related=related,
        data={"bytes": size, "cold_start_s": hub, "cache_dir": path},
    )


@rule("MG705", "warmup-disabled", Severity.INFO,
      "`--no-warmup`: the first requests pay the warm-up",
      needs={LLAMA_ARGS}, given=("warmup",))
def warmup_disabled(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds llama-server launches with `--no-warmup`.

    Why is this bad? llama-server warms up "with an empty run" before it
    reports ready (tools/server README: `--warmup, --no-warmup`, default enabled): weights are
    paged in and kernels and buffers are set up. Without it the server answers /health sooner,
    and the first real requests — possibly sent by a readiness-gated load balancer — pay that
    cost instead.

    vLLM has no such flag: it always profiles memory and captures CUDA graphs at start
    (`--enforce-eager` skips the graphs, which makes every step slower, not the first one).

    Use instead: keep the warm-up (drop `--no-warmup`) for serving; use it only in tests.
    """
    warmup = d.inv.warmup
    if not warmup.given or not warmup.known or warmup.value is not False:
        return
    spelling = warmup.winner.spelling if warmup.winner is not None else "--no-warmup"
    yield warmup_disabled.finding(
        f"{spelling}: llama-server skips its warm-up run, so the first requests pay it "
        "(weights paged in, buffers and kernels set up) after the server already reports ready",
        d.source, warmup.flag_span or d.program_span,
        hint="remove --no-warmup for serving deployments",
    )

@rule("MG706", "probe-path-not-served", Severity.ERROR,
      "an HTTP probe on a path the engine does not answer: the probe always fails",
      # port and root_path are read without `reads`, as MG605/MG606 read the port: an
      # unresolved --port would otherwise name MG706 in MG009 for every HTTP engine
      needs={HTTP_API})
def probe_path_not_served(d: Deployment) -> Iterator[Finding]:
    """
    What it does: compares the path of a Kubernetes `httpGet` probe on the engine's port with
    the paths the server answers to GET, for servers whose routes are few and fixed: vLLM's
    demo server (`python -m vllm.entrypoints.api_server`) has `GET /health` (and FastAPI's
    `/docs`, `/redoc`, `/openapi.json`); `/generate` takes POST only, and there is no
    `/v1/models`, `/metrics` or `/ping`.

    Why is this bad? The kubelet counts a probe as passed only for a status from 200 to 399;
    the server answers 404 (405 for `/generate`), so the probe fails every time: a readiness
    probe keeps the pod out of its Service forever, a liveness or startup probe restarts the
    container in a loop. The paths come from vllm/entrypoints/api_server.py
    (`@app.get("/health")`, `@app.post("/generate")`, 0.6.6.post1 to 0.24.0).

    Use instead: probe `/health`.
    """
    routes = d.adapter.get_routes
    if routes is None or not d.launch.serves_api or not d.context.http_probes:
        return
    root = d.inv.setting("root_path")
    port = d.inv.port
    if root.given or not root.known or not port.known:
        return  # a root path changes which paths match; an unknown port may be the probe's
    number = port.value if isinstance(port.value, int) else d.adapter.default_port
    outcome = {"readinessProbe": "the pod never becomes ready and gets no traffic",
               "startupProbe": "the container is restarted before it ever starts",
               "livenessProbe": "the container is restarted over and over"}
    for probe in d.context.http_probes:
        if probe.port is None or not probe.port.isdigit() or int(probe.port) != number:
            continue  # another port, or a named port: not judged
        path = probe.path.split("?", 1)[0]
        # Starlette's router (redirect_slashes=True, FastAPI's default) redirects a path that
        # no route matches to the same path with its trailing slashes stripped or one added
        # when a route matches that (starlette/routing.py Router.app, 0.47.2); the kubelet
        # follows the redirect to the served path
        toggled = path.rstrip("/") if path.endswith("/") else path + "/"
        if path in routes or toggled in routes:
            continue
        yield probe_path_not_served.finding(
            f"{probe.kind} sends GET {path}, which {d.adapter.display} does not serve (it "
            f"answers GET on {', '.join(routes)}): the probe fails every time, so "
            f"{outcome.get(probe.kind, 'the probe never passes')}",
            d.source, probe.span, hint=f"probe {routes[0]}",
            related=(Related(d.source, d.program_span, "the server starts here"),),
        )


RULES: list[Rule] = [missing_shm, missing_readiness_probe, cold_start_download,
                     hpa_on_gpu_utilization, warmup_disabled, probe_path_not_served]
