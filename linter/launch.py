"""Launch records: what a source found running an engine, with every fact's position.

Sources (``mgpu_lint.sources``) build these; engines (``mgpu_lint.engines``) parse their ``args``;
``resolve`` combines them with the catalogs into a Deployment.
"""

from __future__ import annotations

import re
from typing import Mapping

from .bounds import MAX_GPUS, plausible_int
from .source import SourceFile, Span, Word
from .records import dataclass, field

# Engines
VLLM = "vllm"
LLAMA_SERVER = "llama-server"
RPC_SERVER = "rpc-server"
SGLANG = "sglang"
SGLANG_ROUTER = "sglang-router"  # the router starting its SGLang workers (engines/sglang_router.py)
# vLLM's demo server `python -m vllm.entrypoints.api_server`: the engine arguments, a few
# options of its own, /health and /generate only (engines/vllm_demo.py)
VLLM_DEMO = "vllm-demo"


# Context.role of an operator's multi-node leader whose engine spans a group of pods it
# assembles itself (Dynamo `multinode.nodeCount`: Ray or vLLM's mp executor over the pods)
MULTI_NODE_LEADER = "multi-node-leader"

# Entry points of an engine (how the command line starts)
ENTRY_VLLM_SERVE = "vllm serve"  # `vllm serve MODEL …`
ENTRY_VLLM_API_SERVER = "api_server"  # `python -m vllm.entrypoints.openai.api_server --model M …`
ENTRY_VLLM_DEMO = "vllm.entrypoints.api_server"  # `python -m vllm.entrypoints.api_server --model M`
ENTRY_LLAMA_SERVER = "llama-server"
ENTRY_RPC_SERVER = "rpc-server"
ENTRY_SGLANG_LAUNCH_SERVER = "sglang.launch_server"  # `python -m sglang.launch_server …`
ENTRY_SGLANG_SERVE = "sglang serve"  # `sglang serve --model-path M …` (console script from 0.5)
# `python -m sglang_router.launch_server --model-path M --dp-size N …` (and its console scripts)
ENTRY_SGLANG_ROUTER_SERVER = "sglang_router.launch_server"
ENTRY_DYNAMO_SGLANG = "dynamo.sglang"  # a Dynamo worker: `python3 -m dynamo.sglang --model-path M …`
# a Python interpreter as a command names it (`python`, `python3`, `python3.12`), its directory cut
PYTHON_PROGRAM = re.compile(r"^python(?:\d+(?:\.\d+)?)?$")


@dataclass(frozen=True, slots=True)
class Located:
    """A value stated somewhere in a file (``span`` None when it is a default)."""

    value: str
    span: Span | None = None
    source: SourceFile | None = None


@dataclass(frozen=True, slots=True)
class EnvVar:
    """An environment variable of the launch: ``value`` None when it comes from elsewhere
    (a secret, a configMap, the host) and is unknown to the linter."""

    name: str
    value: str | None
    span: Span | None = None  # the value's span (or the name's when the value is unknown)


@dataclass(frozen=True, slots=True)
class GpuRequest:
    """GPUs given to the launch's container/process.

    ``count`` None means "all"/unknown (rules comparing counts stay silent).  ``origin`` says in
    words where the number comes from (``nvidia.com/gpu limit``, ``compose device count``,
    ``CUDA_VISIBLE_DEVICES``) and ``span`` points at it.
    """

    count: int | None
    origin: str
    span: Span | None
    vendor: str = "nvidia"
    device_ids: tuple[str, ...] = ()

    @property
    def beyond_bounds(self) -> bool:
        """A count no deployment has (linter/bounds.py MAX_GPUS): taken as unknown, so nothing
        counts or loops over that many GPUs (an MG006 warning says so)."""
        return self.count is not None and not plausible_int(self.count, MAX_GPUS)


@dataclass(frozen=True, slots=True)
class Port:
    """A port exposed by the container/service.  ``host_ip`` '' means all interfaces."""

    container_port: int | None
    published: bool
    host_ip: str
    span: Span
    origin: str  # "compose ports", "hostPort", "docker -p" …
    # the container port is a variable nobody sets (`${P}:${P}` without a .env): it may be any
    # port, so it is never taken for the server's (a published port is not assumed to be it)
    unresolved: bool = False


@dataclass(frozen=True, slots=True)
class HttpProbe:
    """A probe that sends GET to a path of the container (Kubernetes ``httpGet``)."""

    kind: str  # "readinessProbe", "startupProbe", "livenessProbe"
    path: str
    port: str | None  # as written: a number or a container port's name
    span: Span  # the path


# GKE's TPU node labels (cloud.google.com/gke-tpu-accelerator: tpu-v5-lite-podslice,
# cloud.google.com/gke-tpu-topology: 2x4) and the images vLLM publishes for TPUs
TPU_TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
TPU_LABEL_KEYS = ("cloud.google.com/gke-tpu-accelerator", TPU_TOPOLOGY_LABEL)
_TPU_IMAGE = re.compile(r"(?:^|/)vllm-tpu(?:[:@/]|$)|(?:^|[/-])tpu-inference(?:[:@/]|$)")


@dataclass(frozen=True, slots=True)
class Context:
    """Where the launch runs and what surrounds it (container, pod, compose service, script)."""

    kind: str  # "k8s", "compose", "shell", "dockerfile", "markdown", "command"
    container_name: Located | None = None
    object_kind: str | None = None  # Kubernetes kind (Deployment, LeaderWorkerSet …)
    object_name: str | None = None
    object_span: Span | None = None
    namespace: str | None = None
    pod_labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    role: str | None = None  # LeaderWorkerSet "leader"/"worker", KServe "predictor" …
    replicas: Located | None = None
    group_size: Located | None = None  # LeaderWorkerSet spec.leaderWorkerTemplate.size
    image: Located | None = None
    # the Dockerfile a compose `build:` makes the image from (its real path), when it was read
    built_from: str | None = None
    gpus: GpuRequest | None = None
    gpu_requests_only: Located | None = None  # nvidia.com/gpu in requests without limits
    node_labels: Mapping[str, Located] = field(default_factory=dict)
    shm: Located | None = None  # what provides a large /dev/shm ("emptyDir Memory", "ipc: host" …)
    shm_size_bytes: int | None = None
    probes: tuple[str, ...] = ()  # "readinessProbe", "startupProbe", "livenessProbe", "healthcheck"
    http_probes: tuple[HttpProbe, ...] = ()  # the probes among them that GET a path
    ports: tuple[Port, ...] = ()
    host_network: Located | None = None  # `hostNetwork: true`, compose `network_mode: host`
    volumes: Mapping[str, Located] = field(default_factory=dict)  # mount path -> volume kind
    ray_cluster: bool = False  # KubeRay pod: shm injected, GPUs belong to the Ray cluster
    # the machine a launch runs on, when one file describes several (each fenced block of a
    # Markdown file is its own host: alternatives are never two engines on the same GPUs)
    host: int | None = None
    # a GPU type the text names for this launch (Markdown: "on 8×H200" in the nearest heading
    # or the paragraph before the block) and the count it states, taken as the node's GPUs
    # (the count alone when the text names no type: "on 8 GPUs", "an 8-GPU node")
    stated_gpu: Located | None = None
    stated_gpu_count: Located | None = None
    # what a file states about the GPU type that names none the linter knows (a KubeAI
    # resourceProfile outside the chart's `<vendor>-gpu-<type>` names): the type is assumed,
    # and the assumption says why (GpuFacts.unknown_label)
    unmapped_gpu: str = ""
    # TPU chips given to the container (`google.com/tpu` limit or request)
    tpus: Located | None = None

    # What rules ask of the place a launch runs (never the input kind itself), so that a new
    # input kind decides these in its source module and no rule changes.
    @property
    def pod(self) -> bool:
        """A Kubernetes pod: probes, Services, HPAs, GPU limits and the scheduler apply."""
        return self.kind == "k8s"

    @property
    def orchestrated(self) -> bool:
        """A container that an orchestrator (Kubernetes, compose) describes and runs."""
        return self.kind in ("k8s", "compose")

    @property
    def in_container(self) -> bool:
        """A container of its own (an orchestrator's, or `docker run` / an image's entrypoint)."""
        return self.orchestrated or self.image is not None

    @property
    def tpu(self) -> Located | None:
        """What says the launch runs on TPUs, not GPUs: a `google.com/tpu` request, a GKE TPU
        node label, or a vLLM TPU image (`vllm/vllm-tpu`).  vLLM 0.30.0 hands the whole TPU
        platform to the tpu_inference package (vllm/platforms/tpu.py imports
        tpu_inference.platforms.TpuPlatform), so the CUDA budget, NCCL and PCIe facts the GPU
        rules use do not apply."""
        if self.tpus is not None:
            return self.tpus
        for key in TPU_LABEL_KEYS:
            if key in self.node_labels:
                return self.node_labels[key]
        if self.image is not None and _TPU_IMAGE.search(self.image.value):
            return self.image
        return None

    @property
    def tpu_slice_chips(self) -> int | None:
        """Chips in the TPU slice the pod joins, from `cloud.google.com/gke-tpu-topology`
        (`2x4` is 8 chips, `4x4x4` 64): the slice is one node for tensor parallelism."""
        topo = self.node_labels.get(TPU_TOPOLOGY_LABEL)
        if topo is None:
            return None
        dims = topo.value.strip().lower().split("x")
        if not dims or not all(d.isdigit() and 0 < int(d) <= 4096 for d in dims):
            return None
        chips = 1
        for d in dims:
            chips *= int(d)
        return chips

    @property
    def interactive(self) -> bool:
        """A command someone runs on a machine (a script, a command line, a README block)."""
        return self.kind in ("shell", "command", "markdown")


@dataclass(frozen=True, slots=True)
class Launch:
    """One engine start found in a file.

    ``program`` is the word that names the engine (``vllm``, ``/app/llama-server``; the image word
    when the image's entrypoint supplies the program).  ``args`` are the engine's own arguments
    (after ``serve`` for ``vllm serve``).  ``list_form`` is True when each word was its own
    exec-form list item (Kubernetes ``args:``, compose list, Dockerfile JSON form), where a flag
    and its value glued into one item reach the engine as one word.
    """

    source: SourceFile
    engine: str
    entry: str
    program: Word
    args: tuple[Word, ...]
    env: Mapping[str, EnvVar]
    context: Context
    list_form: bool = False
    version_pin: Located | None = None  # "0.8.5" from an image tag / pip pin / target-version
    image_entrypoint: bool = False  # the program came from the image's entrypoint
    prefix_args: tuple[Word, ...] = ()  # words between program and args (`serve`, `-m module`)
    # False when the image's entrypoint for this release is not known (vLLM images 0.10-0.18):
    # the args are read as `vllm serve` would read them, and rules that depend on the entry
    # point (a positional model, MG016) stay silent
    entry_known: bool = True
    # the operator that builds this command line (KubeAI …): its fixed parts (the entry point)
    # are not the user's to change, so findings about them are not reported
    operator: str | None = None
    # False when the engine serves no HTTP API of its own: a Dynamo worker (`python3 -m
    # dynamo.vllm`) takes requests from the Dynamo runtime, the frontend serves the API
    serves_api: bool = True
    # the image whose name made the engine inferred (no table names the image, and its
    # arguments parse cleanly as that engine's): MG018 says so, pointing at the image
    inferred_from: Located | None = None


@dataclass(frozen=True, slots=True)
class ServiceInfo:
    """A Kubernetes Service, linked to workloads by namespace and selector."""

    source: SourceFile
    name: str
    namespace: str | None
    type: Located  # ClusterIP when not stated (span None)
    selector: Mapping[str, str]
    ports: tuple[tuple[int | None, str | None], ...]  # (port, targetPort)
    annotations: Mapping[str, str]
    span: Span


@dataclass(frozen=True, slots=True)
class HpaInfo:
    """A HorizontalPodAutoscaler: its target and the metric names it scales on."""

    source: SourceFile
    name: str
    namespace: str | None
    target_kind: str | None
    target_name: str | None
    metrics: tuple[Located, ...]
    span: Span
