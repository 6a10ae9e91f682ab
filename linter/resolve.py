"""Facts several rules share, computed once per launch: the parallel layout, the GPUs.

Every fact keeps where it came from (a span, or a words-only origin such as "default") so a
finding can point at it and say whether it rests on a stated fact or an assumption.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .catalog import knowledge
from .engines import ENGINES
from .engines.adapter import LLAMA_ARGS, PARALLEL_LAYOUT, VLLM_ARGS
from .identity import ByIdentity
from .launch import MULTI_NODE_LEADER, Context, GpuRequest, Launch
from .source import Span
from .records import dataclass

if TYPE_CHECKING:
    from .catalog.knowledge import GpuSpec, ModelMatch, ModelShape, Precision
    from .config import Settings
    from .engines import Invocation, Setting


@dataclass(frozen=True, slots=True)
class Size:
    """One parallel size: its value, whether the launch states it, and where."""

    value: int
    given: bool
    span: Span | None


@dataclass(frozen=True, slots=True)
class Layout:
    """vLLM's parallel layout (vllm-notes.md §4, vLLM 0.30.0 vllm/config/parallel.py).

    world size = pp × tp × pcp (one engine); GPUs one node uses = dp_local × world size.
    ``known`` is False when a size is broken or unresolved (rules about the layout stay silent).
    """

    tp: Size
    pp: Size
    dp: Size
    dp_local: Size
    pcp: Size
    nnodes: Size
    known: bool

    @property
    def world_size(self) -> int:
        return self.tp.value * self.pp.value * self.pcp.value

    def describe_world(self) -> str:
        parts = [f"tp {self.tp.value}", f"pp {self.pp.value}"]
        if self.pcp.value > 1:
            parts.append(f"pcp {self.pcp.value}")
        return " × ".join(parts)

    @property
    def nnodes_within_dp(self) -> int:
        """Nodes one engine (world) spans: 1 on one node, else nnodes // (dp // dp_local)."""
        if self.nnodes.value <= 1:
            return 1
        engines_elsewhere = max(1, self.dp.value // max(1, self.dp_local.value))
        return max(1, self.nnodes.value // engines_elsewhere)

    @property
    def gpus_per_node(self) -> int:
        """GPUs this launch uses on its own node (vllm/v1/engine/utils.py device ranges)."""
        local_world = self.world_size // self.nnodes_within_dp
        return self.dp_local.value * local_world

    @property
    def explicit_sizes(self) -> list[tuple[str, Size]]:
        return [(name, s) for name, s in (("tp", self.tp), ("pp", self.pp), ("dp", self.dp),
                                         ("dp_local", self.dp_local), ("pcp", self.pcp))
                if s.given]

    def needed_text(self) -> str:
        """How the GPUs this launch uses on its node are made up."""
        world = f"world size {self.world_size} ({self.describe_world()})"
        if self.nnodes_within_dp > 1:
            world += f" over {self.nnodes_within_dp} nodes"
        if self.dp_local.value > 1:
            return f"{self.dp_local.value} local engines (dp) × {world}"
        return world

    def formula(self) -> str:
        return (f"GPUs needed per node = dp_local {self.dp_local.value} × world size "
                f"{self.world_size} / nodes per engine {self.nnodes_within_dp} = "
                f"{self.gpus_per_node}")

    def short_of(self, have: int) -> str:
        return ("vLLM refuses to start (world size larger than the available GPUs, "
                "vllm/config/parallel.py)")

    def sizes(self) -> dict[str, int]:
        return {"tp": self.tp.value, "pp": self.pp.value, "dp": self.dp.value,
                "dp_local": self.dp_local.value, "pcp": self.pcp.value}

    tp_flag = "-tp"

    def heads_refusal(self, heads: int, mla: bool) -> str | None:
        """What vLLM does when tp does not divide the attention heads (vllm/config/model.py
        ModelConfig.verify_with_parallel_config, 0.30.0)."""
        return (f"vLLM refuses to start (\"Total number of attention heads ({heads}) must be "
                f"divisible by tensor parallel size ({self.tp.value})\")")


def parallel_size(setting: Setting, default: int = 1, least: int = 1) -> tuple[Size, bool]:
    """One size setting as a Size, and whether it is usable (known, an int ≥ ``least``)."""
    value = setting.value
    ok = setting.known and (not setting.given or isinstance(value, int))
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        value = default
        ok = ok and not setting.given
    return Size(value, setting.given, setting.span), ok



def layout(inv: Invocation, launch: Launch) -> Layout | None:
    """The launch's layout: vLLM's, or the one an engine with its own GPU arithmetic gives
    (``Engine.layout``); None for engines without parallel sizes."""
    engine = ENGINES[inv.engine]
    if engine.layout is not None:
        return engine.layout(inv, launch)
    if not engine.has(PARALLEL_LAYOUT):
        return None
    tp, ok1 = parallel_size(inv.tensor_parallel_size)
    pp, ok2 = parallel_size(inv.pipeline_parallel_size)
    dp, ok3 = parallel_size(inv.data_parallel_size)
    pcp, ok4 = parallel_size(inv.prefill_context_parallel_size)
    nnodes, ok5 = parallel_size(inv.nnodes)
    local_setting = inv.data_parallel_size_local
    if local_setting.given:
        dp_local, ok6 = parallel_size(local_setting)
    elif inv.data_parallel_rank.given:
        # external load balancing: each process is one DP rank (vLLM requires
        # --data-parallel-size-local 1 with an external rank; vllm-notes.md §5)
        dp_local, ok6 = Size(1, False, None), True
    else:
        # single node: dp_local defaults to dp; across nodes vLLM infers it as
        # max((W / nnodes) // (pp × tp × pcp), 1) with W = dp × pp × tp × pcp
        # (vllm/engine/arg_utils.py create_engine_config, vLLM 0.30.0; vllm-notes.md §5)
        world = tp.value * pp.value * pcp.value
        derived = dp.value if nnodes.value <= 1 else max(
            (dp.value * world // nnodes.value) // world, 1)
        dp_local, ok6 = Size(derived, False, None), local_setting.known
    return Layout(tp, pp, dp, dp_local, pcp, nnodes, all((ok1, ok2, ok3, ok4, ok5, ok6)))


# ----------------------------------------------------------------------------- model


@dataclass(frozen=True)
class ModelFacts:
    """The served model: what the launch names, its shape when known, and its precision."""

    ref: str
    span: Span | None
    shape: ModelShape | None
    weights: Precision  # bits per stored weight and where that came from
    kv_bytes: float | None  # bytes per cached K/V value (None: unknown)
    origin: str  # "catalog", "config.json", "configuration"


def _beside(source_path: str, ref: str) -> str | None:
    """``ref`` as a path relative to the manifest's directory, when it is one.  Absolute paths
    are not read: results must not differ between laptops and CI (DECISIONS "The file set")."""
    if os.path.isabs(ref) or ref.startswith("<") or source_path.startswith("<"):
        return None
    return os.path.join(os.path.dirname(os.path.abspath(source_path)), ref)


def _local_dir(source_path: str, ref: str) -> str | None:
    """A model directory with a config.json, named relative to the manifest."""
    if not (ref.startswith(".") or "/" in ref):
        return None
    candidate = _beside(source_path, ref)
    if candidate is None or not os.path.isfile(os.path.join(candidate, "config.json")):
        return None
    return candidate


def _gguf_shape(path: str, spend: Any) -> tuple[ModelShape, Precision] | None:
    """Shape and exact bits per weight from a local GGUF file's header."""
    from .catalog import gguf_header, knowledge

    try:
        h = gguf_header.read_header(path, spend)
    except (OSError, gguf_header.GgufError):
        return None

    def num(key: str) -> int | None:
        v = h.arch_value(key)
        return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None

    layers, hidden, heads = num("block_count"), num("embedding_length"), \
        num("attention.head_count")
    if not (layers and hidden and heads and h.params):
        return None
    kv_heads = num("attention.head_count_kv") or heads
    label = h.file_type or "GGUF"
    try:
        shape = knowledge.validate_model(dict(
            id=str(h.metadata.get("general.name") or os.path.basename(path)),
            family=h.architecture or "custom", params=float(h.params), params_exact=h.params,
            layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads,
            head_dim=num("attention.key_length") or hidden // heads,
            max_positions=num("context_length"), dtype=f"gguf {label}",
            weight_bits=h.bits_per_weight, experts=num("expert_count") or 0,
            experts_per_token=num("expert_used_count") or 0,
            source=(f"GGUF header of {os.path.basename(path)}",)))
    except (ValueError, ArithmeticError):
        return None
    from . import bounds

    if bounds.shape_problem(shape) is not None:
        return None  # e.g. block_count 2^40: per-layer work would not end
    return shape, knowledge.Precision(h.bits_per_weight, f"{label} (GGUF header)",
                                      "GGUF header")


# the lower-cased names of a configuration's [models] table, once per table, not per launch
_configured_names = ByIdentity(lambda models: frozenset(k.lower() for k in models))


def model_facts(inv: Invocation, launch: Launch, settings: Settings,
                local_dirs: dict[tuple[str, str], str | None] | None = None) -> ModelFacts | None:
    """None when the launch names no usable model (unknown, unresolved, or no model at all).
    ``local_dirs`` keeps a run's answers of `_local_dir` (a stat per launch otherwise)."""
    model = inv.model
    if model is None or not model.known or not model.value:
        return None
    ref = str(model.value)
    shape = None
    hint = None
    origin = "catalog"
    if local_dirs is None:
        local = _local_dir(launch.source.path, ref)
    else:
        key = (launch.source.path, ref)
        local = local_dirs[key] if key in local_dirs else \
            local_dirs.setdefault(key, _local_dir(*key))
    # a model read from a file counts against the side-file bytes of the launch's file
    spend = (launch.source.budget, model.span or launch.program.span, f"the model {ref}")
    if local is not None:
        shape = knowledge.read_local_config(local, spend)
        origin = "config.json"
    elif ref.lower().endswith(".gguf"):
        path = _beside(launch.source.path, ref)
        from_header = _gguf_shape(path, spend) if path and os.path.isfile(path) else None
        if from_header is not None:
            shape, hint = from_header
            origin = "GGUF header"
    if shape is None:
        match = (knowledge.resolve_model(ref, settings.models) if settings.models
                 else _builtin_model(ref))
        if match is None:
            return ModelFacts(ref, model.span, None, knowledge.weight_precision(), None, "unknown")
        shape, hint = match.shape, match.precision
        origin = ("configuration" if settings.models
                  and match.matched in _configured_names(settings.models) else "catalog")
    engine = ENGINES[inv.engine]
    if engine.has(VLLM_ARGS):
        dtype = _str(inv.dtype)
        weights = knowledge.weight_precision(shape, dtype=dtype,
                                             quantization=_str(inv.quantization),
                                             hint=hint)
        kv = knowledge.kv_cache_bytes_per_value(_str(inv.kv_cache_dtype), dtype=dtype, shape=shape)
    else:
        weights = knowledge.weight_precision(shape, hint=hint)
        kv = knowledge.llama_kv_bytes_per_value(
            _str(inv.cache_type_k) or "f16", _str(inv.cache_type_v) or "f16") \
            if engine.has(LLAMA_ARGS) else None
    return ModelFacts(ref, model.span, shape, weights, kv, origin)


@lru_cache(maxsize=1024)
def _builtin_model(ref: str) -> ModelMatch | None:
    """Catalog look-ups repeat across files (the same model in many manifests)."""
    return knowledge.resolve_model(ref)


def _str(setting: Setting) -> str | None:
    return str(setting.value) if setting.known and setting.value is not None else None


# ----------------------------------------------------------------------------- GPUs


DEFAULT_GPU = {"nvidia": "h100-sxm", "amd": "mi300x"}


VISIBLE_DEVICE_VARS = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


@dataclass(frozen=True, slots=True)
class VisibleDevices:
    """A ``CUDA_VISIBLE_DEVICES`` (or HIP/ROCR) list set inside a container that has its own GPU
    request: it indexes the container's GPUs 0..n-1 (DECISIONS "Engine facts")."""

    name: str
    ids: tuple[str, ...]
    span: Span | None
    beyond: tuple[str, ...]  # indices at or past the container's GPU count

    @property
    def text(self) -> str:
        return ",".join(self.ids)


@dataclass(frozen=True)
class GpuFacts:
    """The GPU type a launch runs on, how many it gets, and how sure we are.

    ``assumed`` is True when no file or option states the type (the configured or built-in
    default): a verdict resting on it is at most a warning and says so.  ``count`` is what the
    process sees: the container's or process's request, narrowed by a visible-devices list set
    inside a container (``count_origin``/``count_span`` say where that number comes from).
    """

    spec: GpuSpec | None
    origin: str  # "node label nvidia.com/gpu.product", "--gpu", "configuration", "default"
    span: Span | None
    assumed: bool
    count: int | None  # GPUs the process sees (None: not stated, "all", or not usable)
    request: GpuRequest | None
    per_node: int  # GPUs per node (configuration, instance type, default 8)
    per_node_stated: bool
    count_origin: str = ""  # "nvidia.com/gpu limit", "CUDA_VISIBLE_DEVICES 0,1 of compose …"
    count_span: Span | None = None
    visible: VisibleDevices | None = None  # a list narrowing the container's GPUs
    per_node_span: Span | None = None  # where the file states the GPUs per node (instance type)
    per_node_origin: str = ""  # what states it: "node label …", "named in the text before the block"
    # a GPU-type label the file states whose value the catalog does not know (``gh300`` of
    # kubeai.org/resourceProfile): the type is assumed, but not because nothing states it
    unknown_label: str = ""

    @property
    def assumption(self) -> str:
        """Why the type is assumed: nothing states it, or what a file states is not catalogued."""
        if self.unknown_label:
            return f"{self.unknown_label} names no GPU type in the catalog"
        return "no file states the GPU type"

    def describe(self) -> str:
        name = self.spec.name if self.spec is not None else "unknown GPU"
        return f"{name} (assumed: {self.assumption})" if self.assumed else name


def _visible(launch: Launch, request: GpuRequest | None) -> VisibleDevices | None:
    """The visible-devices list of a launch whose container already has a GPU request (when
    the request itself came from that variable, there is nothing to narrow)."""
    if request is None or request.origin in VISIBLE_DEVICE_VARS:
        return None
    for name in VISIBLE_DEVICE_VARS:
        var = launch.env.get(name)
        if var is None or var.value is None:
            continue
        if var.value.strip() in ("", "all"):
            return None
        ids = tuple(x.strip() for x in var.value.split(",") if x.strip())
        limit = request.count
        beyond = tuple(x for x in ids if limit is not None and x.isdigit() and int(x) >= limit)
        return VisibleDevices(name, ids, var.span, beyond)
    return None


def _count(request: GpuRequest | None, visible: VisibleDevices | None
           ) -> tuple[int | None, str, Span | None]:
    """GPUs the process sees.  CUDA stops enumerating at the first index it cannot find, so a
    list that reaches past the container's GPUs leaves the count unknown (MG110 reports it)."""
    if request is None:
        return None, "", None
    if request.beyond_bounds:
        return None, "", None  # 10^8 GPUs in one container: per-GPU rules would not end
    if visible is None:
        return request.count, request.origin, request.span
    if visible.beyond:
        return None, "", None
    within = f"{visible.name}={visible.text} within {request.origin}"
    if request.count is None:
        # all GPUs of the host (compose devices without count, --gpus all): the list picks them
        return len(visible.ids), within, visible.span
    if all(x.isdigit() for x in visible.ids):
        return len(visible.ids), within, visible.span
    # UUIDs: they name GPUs of the host, which may or may not be the container's
    return None, "", None


def gpu_facts(launch: Launch, settings: Settings, cli_gpu: str | None,
              cli_per_node: int | None) -> GpuFacts | None:
    """The GPUs a launch gets and their type; None when it runs on accelerators that are not
    GPUs (TPUs), where every GPU rule stays silent."""
    ctx = launch.context
    if ctx.tpu is not None:
        return None  # TPU chips: no GPU type, count or node of GPUs (Context.tpu)
    extra = settings.gpus or None
    spec = None
    origin = "default"
    span = None
    assumed = True
    label_count: int | None = None
    unknown_label = ctx.unmapped_gpu
    for key, located in ctx.node_labels.items():
        match = knowledge.resolve_node_label(key, located.value, extra)
        if match is not None:
            spec, origin, span, assumed = match.gpu, f"node label {key}", located.span, False
            label_count = match.count
            break
        if not unknown_label and knowledge.names_gpu_type(key):
            unknown_label = f"node label {key}: `{located.value}`"
    stated = ctx.stated_gpu
    node_span, node_origin = span, origin
    if spec is None and stated is not None:
        # a GPU the text names for this launch (Markdown: "on 8×H200" before the block)
        spec = knowledge.resolve_gpu(stated.value, extra)
        if spec is not None:
            origin, span, assumed = "named in the text before the block", stated.span, False
            node_span, node_origin = span, origin
    if label_count is None and ctx.stated_gpu_count is not None:
        # the node's GPUs the text states, with or without their type ("on 8 GPUs")
        label_count = int(ctx.stated_gpu_count.value)
        node_span = ctx.stated_gpu_count.span
        node_origin = "stated in the text before the block"
    if spec is None and cli_gpu:
        spec, origin, assumed = knowledge.resolve_gpu(cli_gpu, extra), "--gpu", False
    if spec is None and settings.gpu:
        spec, origin, assumed = knowledge.resolve_gpu(settings.gpu, extra), "configuration", False
    if spec is None:
        vendor = ctx.gpus.vendor if ctx.gpus is not None else "nvidia"
        spec = knowledge.resolve_gpu(DEFAULT_GPU.get(vendor, "h100-sxm"))
        origin, assumed = "default", True
    if cli_per_node is not None:
        per_node, stated = cli_per_node, True
    elif label_count is not None:
        per_node, stated = label_count, True
    else:
        per_node, stated = settings.gpus_per_node, "gpus_per_node" in settings.stated
    request = ctx.gpus
    visible = _visible(launch, request)
    count, count_origin, count_span = _count(request, visible)
    per_node_span = node_span if cli_per_node is None and label_count is not None else None
    return GpuFacts(spec, origin, span, assumed, count, request, per_node, stated,
                    count_origin, count_span, visible, per_node_span,
                    node_origin if per_node_span is not None else "",
                    unknown_label if assumed else "")


@dataclass(frozen=True, slots=True)
class NodeGpus:
    """GPUs one tensor-parallel group can reach without leaving its node (or pod), and why."""

    count: int
    origin: str  # a noun phrase: "the 8 GPUs --nnodes 2 puts on each node", "a node's 8 GPUs"
    unit: str  # "node" or "pod"
    stated: bool  # False: the configured default of GPUs per node
    span: Span | None = None  # where the file states that count (an instance type, a heading)


def node_gpus(lay: Layout, gpu: GpuFacts, ctx: Context) -> NodeGpus:
    """Where a tensor-parallel group stops riding the node's links.

    With ``--nnodes`` (vLLM's own multi-node launch) an engine puts world size / nodes per
    engine GPUs on each node; in a multi-pod group (LeaderWorkerSet, KubeRay) each pod holds
    its container's GPUs (across pods NCCL uses the pod network); otherwise the GPUs per node
    of the configuration, the instance type, or the default 8.
    """
    if lay.nnodes.given and lay.nnodes.value > 1:
        local = lay.world_size // lay.nnodes_within_dp
        return NodeGpus(local, f"the {local} GPUs --nnodes {lay.nnodes.value} puts on each node",
                        "node", True)
    group = ctx.group_size
    multi_pod = ctx.ray_cluster or (group is not None and group.value.isdigit()
                                    and int(group.value) > 1)
    if multi_pod and gpu.count is not None and gpu.count > 0:
        what = ("pod of the multi-node group" if ctx.role == MULTI_NODE_LEADER else
                "Ray pod" if ctx.ray_cluster else "pod of the LeaderWorkerSet group")
        gpus = f"{gpu.count} GPU{'s' if gpu.count != 1 else ''}"
        return NodeGpus(gpu.count, f"the {gpus} each {what} gets ({gpu.count_origin})", "pod",
                        True)
    return NodeGpus(gpu.per_node, f"a node's {gpu.per_node} GPU{'s' if gpu.per_node != 1 else ''}",
                    "node", gpu.per_node_stated,
                    gpu.per_node_span)
