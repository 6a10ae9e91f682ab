"""Kubernetes objects: engine containers of any pod template, plus Services and HPAs.

Any object with a pod template (``containers:``) is searched, whatever its kind: Pod, Deployment,
StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, LeaderWorkerSet (leader and worker templates),
KServe ServingRuntime / InferenceService, KubeRay clusters …  Kubernetes expands only ``$(VAR)``
in ``command``/``args``, from the container's ``env``; ``${VAR}`` stays literal unless a shell
runs the string.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from ..launch import (
    Context,
    EnvVar,
    GpuRequest,
    HpaInfo,
    HttpProbe,
    Located,
    Port,
    ServiceInfo,
)
from ..bounds import launches_full
from ..findings import Finding, Severity
from ..source import MapBuilder, Span, VarRef, Word
from .commandline import Found, Scope, find_launches, launch_from_image, parse_size
from .kserve import LLMISVC_CONFIG_KINDS, LLMISVC_KINDS, MAIN_CONTAINER, PRESET_PROBES, PRESET_SHM
from .yamlnodes import (
    MAX_VISITS,
    Doc,
    Keys,
    expanded_size,
    get,
    get_str,
    is_map,
    is_scalar,
    is_seq,
    items,
    pairs,
    str_map,
    with_template_refs,
)
from ..records import replace

GPU_RESOURCES = {"nvidia.com/gpu": "nvidia", "amd.com/gpu": "amd"}
TPU_RESOURCE = "google.com/tpu"
GPU_LABEL_KEYS = (
    "nvidia.com/gpu.product",
    "cloud.google.com/gke-accelerator",
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/instance-type",
    "karpenter.k8s.aws/instance-gpu-name",
    "nvidia.com/gpu.count",
    "cloud.google.com/gke-accelerator-count",
)
IGNORE_ANNOTATION = "mgpu-lint/ignore"
RAY_KINDS = {"RayCluster", "RayService", "RayJob"}
_K8S_VAR = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.\-]*)\)")


def is_kubernetes(root: Any) -> bool:
    return is_map(root) and get_str(root, "kind") is not None and (
        get(root, "apiVersion") is not None or get(root, "spec") is not None
        or get(root, "items") is not None)


def extract_object(doc: Doc, root: Any, found: Found, services: list, hpas: list,
                   ignores: list, walk: "_Walk | None" = None) -> None:
    """One object (recursing into `kind: List`, whose items share one search for pod
    templates: ``walk``).  ``ignores`` collects (span, codes) of objects and pod templates
    annotated `mgpu-lint/ignore`."""
    top = Keys(root)
    kind = top.get_str("kind") or ""
    if walk is None:
        walk = _Walk()
    if kind.endswith("List") and is_seq(top.get("items")):
        for item in items(top.get("items")):
            if launches_full(len(found.launches)):
                break  # as the file's documents (sources.extract_yaml)
            extract_object(doc, item, found, services, hpas, ignores, walk)
        return
    meta = top.get("metadata")
    meta_keys = Keys(meta)
    name = meta_keys.get_str("name") or ""
    namespace = meta_keys.get_str("namespace")
    if kind == "Service":
        services.append(_service(doc, root, name, namespace))
        return
    if kind == "HorizontalPodAutoscaler":
        hpas.append(_hpa(doc, root, name, namespace))
        return
    annotations = str_map(meta_keys.get("annotations"))
    if IGNORE_ANNOTATION in annotations:
        ignores.append((doc.span(root), annotations[IGNORE_ANNOTATION]))
    spec = Keys(top.get("spec"))
    replicas_node = spec.get("replicas")
    replicas = (Located(replicas_node.value, doc.span(replicas_node), doc.source)
                if is_scalar(replicas_node) else None)
    size_node = spec.get("leaderWorkerTemplate", "size")
    size = (Located(size_node.value, doc.span(size_node), doc.source)
            if is_scalar(size_node) else None)
    base = Context(
        kind="k8s",
        object_kind=kind,
        object_name=name,
        object_span=doc.span(root),
        namespace=namespace,
        annotations=annotations,
        replicas=replicas,
        group_size=size,
        ray_cluster=kind in RAY_KINDS,
    )
    from .operators import extract_operator, is_operator_resource

    if is_operator_resource(root):
        # KubeAI Model, RayJob entrypoint: the operator builds the command (sources/operators.py)
        extract_operator(doc, root, base, found)
    from .kserve import extract_llmisvc, handled_containers, is_llmisvc
    from .kuberay import extract_rayservice, is_rayservice

    from .dynamo import extract_dgd, is_dgd

    if is_dgd(root):
        # Dynamo services running `python3 -m dynamo.vllm` (sources/dynamo.py)
        extract_dgd(doc, root, base, found)
    if is_rayservice(root):
        # Ray Serve LLM applications in spec.serveConfigV2 (sources/kuberay.py)
        extract_rayservice(doc, root, base, found)
    skip: set[int] = set()
    if is_llmisvc(root):
        # KServe LLMInferenceService: the preset's command runs in `main` (sources/kserve.py)
        extract_llmisvc(doc, root, base, found)
        skip = handled_containers(root)
    pod_specs = _pod_specs(root, walk)
    if walk.cut is not None and not walk.reported:
        walk.reported = True
        # only aliases (or merge keys) repeat nodes past the bound: the walk stops there
        found.findings.append(Finding(
            "MG001", Severity.WARNING,
            f"reading stops here: this object's aliases repeat its nodes past {MAX_VISITS:,} "
            "(no deployment's object comes close), so its pod templates from here on are not "
            "read", doc.source, doc.span(walk.cut),
            hint="write the repeated parts out, or lint the object that launches the engine "
                 "on its own"))
    read: set[tuple[int, int, str | None]] = set()
    for pod_spec, template_meta, role in pod_specs:
        if launches_full(len(found.launches)):
            break  # past the launches checked (MG001 at the first left out, runner.extract_file)
        once = (id(pod_spec), id(template_meta), role)
        if once in read:
            # the same template of this object again, through an alias: the launches of the
            # same nodes in the same context, at the same places, are the ones read already
            # (a 14 KB object listing a 200-container template 124 times: 1.5 s)
            continue
        read.add(once)
        template_annotations = str_map(get(template_meta, "annotations"))
        if IGNORE_ANNOTATION in template_annotations:
            ignores.append((doc.span(pod_spec), template_annotations[IGNORE_ANNOTATION]))
        ctx = replace(
            base,
            role=role,
            # KubeRay-style groups (RayCluster, RayService, aibrix RayClusterFleet …): the
            # operator injects /dev/shm and the GPUs belong to the Ray cluster
            ray_cluster=base.ray_cluster or role in ("ray-head", "ray-worker"),
            pod_labels=str_map(get(template_meta, "labels")) or str_map(meta_keys.get("labels")),
            annotations={**annotations, **template_annotations},
        )
        workers = None
        if role == "ray-head":
            # an engine the head starts runs its Ray workers on the cluster's GPU worker
            # group: when the head itself states no GPUs, those are "the GPUs of each Ray pod"
            from .kuberay import ray_workers

            workers = ray_workers(doc, _ray_cluster_spec(root, pod_spec))[0]
        _extract_pod(doc, pod_spec, ctx, found, skip, workers)


def _ray_cluster_spec(root: Any, head_pod: Any) -> Any:
    """The RayCluster spec whose headGroupSpec holds ``head_pod``: RayCluster ``spec``,
    RayService ``spec.rayClusterConfig``, RayJob ``spec.rayClusterSpec``, AIBrix
    RayClusterFleet ``spec.template.spec``."""
    for path in (("spec",), ("spec", "rayClusterConfig"), ("spec", "rayClusterSpec"),
                 ("spec", "template", "spec")):
        cluster = get(root, *path)
        if get(cluster, "headGroupSpec", "template", "spec") is head_pod:
            return cluster
    return None


class _Walk:
    """The state of one object's search for pod templates: nodes visited (scalars too), the
    first node left out past MAX_VISITS, how many times the depth bound cut the walk, and the
    collections already searched to their end without a pod template in them (a node the
    document's aliases or merge keys reach again is not searched again)."""

    __slots__ = ("visits", "cut", "cuts", "searched", "sizes", "reported")

    def __init__(self) -> None:
        self.visits = 0
        self.cut: Any = None
        self.cuts = 0
        self.searched: set[int] = set()
        self.sizes: dict[int, int] = {}  # each pod template's nodes (yamlnodes.expanded_size)
        self.reported = False


def _pod_specs(node: Any, walk: _Walk) -> list[tuple[Any, Any, str | None]]:
    """(pod spec, template metadata, role) for every pod template inside an object.

    Every node up to the depth and visit bounds counts as visited, scalars too, but only
    mappings and sequences are walked into; a mapping's keys are indexed once (given to the
    child by the parent that already indexed it to read its ``spec``).  Without the memo of
    searched nodes, a 10 KB object of a thousand aliases of a thousand-item list passed the
    visit bound before its pod template, which was left out."""
    out: list[tuple[Any, Any, str | None]] = []
    _walk_pod_specs(node, None, None, walk, 0, None, out)
    return out


def _walk_pod_specs(node: Any, meta: Any, role: str | None, walk: _Walk, depth: int,
                    keys: Keys | None, out: list) -> None:
    if depth > 24:
        walk.cuts += 1
        return
    if id(node) in walk.searched:
        return  # searched before (an alias): nothing in it, whatever the role or metadata
    if walk.cut is not None:
        return  # past the bound: nothing after the first node left out is walked
    if walk.visits > MAX_VISITS:
        walk.cut = node  # the first node not walked: where reading stopped
        return
    walk.visits += 1
    before, cuts = len(out), walk.cuts
    if is_map(node):
        if keys is None:
            keys = Keys(node)
        if is_seq(keys.get("containers")):
            # its nodes count as visited (reading it visits them), itself once: an alias of
            # a pod template of 200 containers, listed 20,000 times in 72 KB, ran past 100 s
            size = expanded_size(node, walk.sizes, MAX_VISITS) - 1
            if walk.visits + size > MAX_VISITS:
                walk.cut = node
                return
            walk.visits += size
            out.append((node, meta, role))
            return
        for key, _, value in pairs(node):
            sub_role = role
            if key in ("leaderTemplate", "workerTemplate"):
                sub_role = "leader" if key == "leaderTemplate" else "worker"
            elif key == "headGroupSpec":
                sub_role = "ray-head"
            elif key == "workerGroupSpecs":
                sub_role = "ray-worker"
            elif key in ("predictor", "transformer", "explainer"):
                sub_role = key
            if is_map(value):
                if id(value) in walk.searched:
                    continue
                sub = Keys(value)
                sub_meta = sub.get("metadata") if is_map(sub.get("spec")) else meta
                _walk_pod_specs(value, sub_meta, sub_role, walk, depth + 1, sub, out)
            elif is_seq(value):
                _walk_pod_specs(value, meta, sub_role, walk, depth + 1, None, out)
            elif depth + 1 <= 24 and walk.visits <= MAX_VISITS:
                walk.visits += 1  # a scalar: visited, nothing inside
    elif is_seq(node):
        for item in node.value:
            if is_map(item) or is_seq(item):
                _walk_pod_specs(item, meta, role, walk, depth + 1, None, out)
            elif depth + 1 <= 24 and walk.visits <= MAX_VISITS:
                walk.visits += 1
    if len(out) == before and walk.cuts == cuts and walk.cut is None:
        walk.searched.add(id(node))


def _node_labels(doc: Doc, pod: Any) -> dict[str, Located]:
    labels: dict[str, Located] = {}
    for key, _, value in pairs(get(pod, "nodeSelector")):
        if is_scalar(value):
            labels[key] = Located(value.value, doc.span(value), doc.source)
    terms = get(pod, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                "nodeSelectorTerms")
    pref = get(pod, "affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution")
    exprs: list[Any] = []
    for term in items(terms):
        exprs.extend(items(get(term, "matchExpressions")))
    for p in items(pref):
        exprs.extend(items(get(p, "preference", "matchExpressions")))
    for expr in exprs:
        key = get_str(expr, "key")
        values = items(get(expr, "values"))
        if key and get_str(expr, "operator") == "In" and values and is_scalar(values[0]) \
                and key not in labels:
            labels[key] = Located(values[0].value, doc.span(values[0]), doc.source)
    return labels


def _volumes(doc: Doc, pod: Any) -> dict[str, tuple[str, Any]]:
    vols: dict[str, tuple[str, Any]] = {}
    for v in items(get(pod, "volumes")):
        name = get_str(v, "name")
        if not name:
            continue
        kind = "other"
        for key, _, value in pairs(v):
            if key == "name":
                continue
            kind = key
            if key == "emptyDir" and get_str(value, "medium") == "Memory":
                kind = "emptyDir:Memory"
            vols[name] = (kind, v)
    return vols


def _extract_pod(doc: Doc, pod: Any, ctx: Context, found: Found,
                 skip: set[int] | frozenset[int] = frozenset(),
                 workers: Context | None = None) -> None:
    labels = _node_labels(doc, pod)
    if workers is not None and not labels:
        labels = dict(workers.node_labels)
    volumes = _volumes(doc, pod)
    hn = get(pod, "hostNetwork")
    host_network = (Located("hostNetwork: true", doc.span(hn), doc.source)
                    if is_scalar(hn) and hn.value == "true" else None)
    containers = items(get(pod, "containers")) + items(get(pod, "initContainers"))
    for container in containers:
        if not is_map(container) or id(container) in skip:
            continue
        _extract_container(doc, container, replace(ctx, node_labels=labels,
                                                   host_network=host_network), volumes, found,
                           workers)


def _env(doc: Doc, container: Any, injected: tuple[EnvVar, ...] = ()) -> dict[str, EnvVar]:
    """The container's variables; ``injected`` come first (a controller adds them unless the
    container defines them itself) so later entries can refer to them."""
    env: dict[str, EnvVar] = {v.name: v for v in injected}
    add_env_entries(doc, get(container, "env"), env)
    return env


def add_env_entries(doc: Doc, entries: Any, env: dict[str, EnvVar]) -> None:
    """A Kubernetes ``env`` list into ``env``, later entries winning: a literal ``value`` with
    its ``$(VAR)`` references to earlier entries expanded as the kubelet does; ``valueFrom``
    (a secret, a configMap, a field) an unknown value at the entry's name."""
    for item in items(entries):
        name = get_str(item, "name")
        if not name:
            continue
        value = get(item, "value")
        if is_scalar(value):
            word = expand_k8s(doc, value, env)
            env[name] = EnvVar(name, None if word.unresolved else word.text, word.span)
        else:
            env[name] = EnvVar(name, None, doc.span(get(item, "name")))


def _lws_env(ctx: Context) -> tuple[EnvVar, ...]:
    """What the LeaderWorkerSet webhook puts first in every container's env: LWS_GROUP_SIZE =
    the group size (sigs.k8s.io/lws pkg/utils/pod/pod_utils.go AddLWSVariables, from the size
    annotation, which is spec.leaderWorkerTemplate.size; a variable the container defines
    itself wins: addEnvVarsIfNotExists).  LWS_LEADER_ADDRESS and LWS_WORKER_INDEX differ per
    group and pod: they stay unknown."""
    size = ctx.group_size
    if size is None or not isinstance(size.value, str) or not size.value.isdigit():
        return ()
    return (EnvVar("LWS_GROUP_SIZE", size.value, size.span),)


def expand_k8s(doc: Doc, node: Any, env: dict[str, EnvVar]) -> Word:
    """A command/args item with Kubernetes ``$(VAR)`` references expanded from ``env``."""
    return with_template_refs(_expand_k8s(doc, node, env))


def _expand_k8s(doc: Doc, node: Any, env: dict[str, EnvVar]) -> Word:
    seg = doc.seg(node)
    text = seg.text
    if "$" not in text:
        return Word(text, seg.cmap, quoted=bool(node.style))
    chars: list[str] = []
    places = MapBuilder()
    unresolved = []
    pos = 0
    cm = seg.cmap
    for m in _K8S_VAR.finditer(text):
        chars.append(text[pos:m.start()])
        places.extend(cm, pos, m.start())
        s, e = cm.start(m.start()), cm.end(m.end() - 1)
        if m.group(0) == "$$":
            chars.append("$")
            places.char(s, e)
        else:
            var = env.get(m.group(1))
            if var is not None and var.value is not None:
                chars.append(var.value)
                places.const(s, e, len(var.value))
            else:
                # kubelet leaves a reference it cannot expand as it is; envFrom, a secret or a
                # configMap may define it, so its value stays unknown (never guessed)
                chars.append(text[m.start():m.end()])
                places.extend(cm, m.start(), m.end())
                unresolved.append(VarRef(m.group(1), Span(s, e)))
        pos = m.end()
    chars.append(text[pos:])
    places.extend(cm, pos, len(text))
    return Word("".join(chars), places.build(cm.tail), bool(node.style), tuple(unresolved))


def _gpus(doc: Doc, container: Any) -> tuple[GpuRequest | None, Located | None]:
    return merged_gpus(((doc, container),))


def merged_gpus(layers: Sequence[tuple[Doc, Any]]
                ) -> tuple[GpuRequest | None, Located | None]:
    """The GPU limit of a container, else its GPU request only (a finding of its own): of the
    container the ``layers`` merge into, in order, later over earlier.  Operators merge a
    container with a strategic merge patch, under which `resources.limits` and `requests` are
    maps merged key by key: each GPU resource is the last layer's that states it (KServe
    pkg/utils/container_merge.go MergeContainerWithPatch, v0.20.0)."""
    for res, vendor in GPU_RESOURCES.items():
        for doc, container in reversed(layers):
            node = get(container, "resources", "limits", res)
            if is_scalar(node):
                value = node.value.strip()
                count = int(value) if value.isdigit() else None
                return GpuRequest(count, f"{res} limit", doc.span(node), vendor), None
    for res in GPU_RESOURCES:
        for doc, container in reversed(layers):
            node = get(container, "resources", "requests", res)
            if is_scalar(node):
                return None, Located(node.value, doc.span(node), doc.source)
    return None, None


def _tpus(doc: Doc, container: Any) -> Located | None:
    """The container's `google.com/tpu` limit (else request): its chips are not GPUs."""
    for where in ("limits", "requests"):
        node = get(container, "resources", where, TPU_RESOURCE)
        if is_scalar(node):
            return Located(f"{TPU_RESOURCE} {where[:-1]} {node.value}", doc.span(node), doc.source)
    return None


def _extract_container(doc: Doc, container: Any, ctx: Context,
                       volumes: dict[str, tuple[str, Any]], found: Found,
                       workers: Context | None = None) -> None:
    c = Keys(container)
    image_node = c.get("image")
    command = c.get("command")
    args = c.get("args")
    if image_node is None and command is None and args is None:
        return
    env = _env(doc, container, _lws_env(ctx))
    name_node = c.get("name")
    gpus, requests_only = _gpus(doc, container)
    if gpus is None and requests_only is None and workers is not None:
        # a KubeRay head without GPUs of its own: its GPU worker group's, per pod
        gpus = (replace(workers.gpus, origin=f"Ray worker group's {workers.gpus.origin}")
                if workers.gpus is not None else None)
    shm: Located | None = None
    shm_bytes: int | None = None
    mounts: dict[str, Located] = {}
    for mount in items(c.get("volumeMounts")):
        path = get_str(mount, "mountPath")
        vol = volumes.get(get_str(mount, "name") or "")
        if not path or vol is None:
            continue
        kind, vol_node = vol
        mounts[path] = Located(kind, doc.span(get(mount, "mountPath")), doc.source)
        if path.rstrip("/") == "/dev/shm" and kind == "emptyDir:Memory":
            limit = get_str(vol_node, "emptyDir", "sizeLimit")
            shm_bytes = parse_size(limit) if limit else None
            shm = Located("emptyDir medium: Memory" + (f" (sizeLimit {limit})" if limit else ""),
                          doc.span(get(mount, "mountPath")), doc.source)
    ports: list[Port] = []
    for p in items(c.get("ports")):
        cport = get_str(p, "containerPort")
        hport = get(p, "hostPort")
        cport_int = int(cport) if cport and cport.isdigit() else None
        if is_scalar(hport):
            ports.append(Port(cport_int, True, get_str(p, "hostIP") or "", doc.span(hport),
                              "hostPort"))
        elif cport_int is not None:
            ports.append(Port(cport_int, False, "", doc.span(get(p, "containerPort")),
                              "containerPort"))
    probes = tuple(k for k in ("readinessProbe", "startupProbe", "livenessProbe")
                   if c.get(k) is not None)
    http_probes = tuple(
        HttpProbe(k, node.value, c.get_str(k, "httpGet", "port"), doc.span(node))
        for k in probes for node in (c.get(k, "httpGet", "path"),)
        if is_scalar(node) and isinstance(node.value, str))
    image = (Located(image_node.value, doc.span(image_node), doc.source)
             if is_scalar(image_node) else None)
    if ctx.object_kind in (*LLMISVC_KINDS, *LLMISVC_CONFIG_KINDS) and is_scalar(name_node) and \
            name_node.value == MAIN_CONTAINER:
        # a KServe preset merged under this container (sources/kserve.py) declares the probes
        # and mounts an emptyDir (medium Memory) on /dev/shm
        probes = PRESET_PROBES
        shm = shm or PRESET_SHM
    ctx = replace(
        ctx,
        container_name=(Located(name_node.value, doc.span(name_node), doc.source)
                        if is_scalar(name_node) else None),
        image=image,
        gpus=gpus,
        gpu_requests_only=requests_only,
        tpus=_tpus(doc, container),
        shm=shm if shm is not None or not ctx.ray_cluster else Located("KubeRay pod"),
        shm_size_bytes=shm_bytes,
        probes=probes,
        http_probes=http_probes,
        ports=tuple(ports),
        volumes=mounts,
    )
    scope = Scope(doc.source, ctx, env=env, list_form=True)
    cmd_words = _words(doc, command, env)
    arg_words = _words(doc, args, env)
    if command is not None:
        found.extend(find_launches(cmd_words + arg_words, scope))
    elif image is not None and is_scalar(image_node):
        found.extend(launch_from_image(image, doc.word(image_node), arg_words, scope))


def _words(doc: Doc, node: Any, env: dict[str, EnvVar]) -> list[Word]:
    if is_seq(node):
        return [expand_k8s(doc, n, env) for n in node.value if is_scalar(n)]
    if is_scalar(node):
        return [expand_k8s(doc, node, env)]
    return []


def _service(doc: Doc, root: Any, name: str, namespace: str | None) -> ServiceInfo:
    spec = get(root, "spec")
    type_node = get(spec, "type")
    stype = (Located(type_node.value, doc.span(type_node), doc.source) if is_scalar(type_node)
             else Located("ClusterIP"))
    ports = []
    for p in items(get(spec, "ports")):
        port = get_str(p, "port")
        target = get_str(p, "targetPort")
        ports.append((int(port) if port and port.isdigit() else None, target))
    return ServiceInfo(doc.source, name, namespace, stype, str_map(get(spec, "selector")),
                       tuple(ports), str_map(get(root, "metadata", "annotations")), doc.span(root))


def _hpa(doc: Doc, root: Any, name: str, namespace: str | None) -> HpaInfo:
    spec = get(root, "spec")
    metrics: list[Located] = []
    for m in items(get(spec, "metrics")):
        for _, _, body in pairs(m):
            for path in (("metric", "name"), ("metricName",), ("name",)):
                n = get(body, *path)
                if is_scalar(n):
                    metrics.append(Located(n.value, doc.span(n), doc.source))
                    break
    return HpaInfo(doc.source, name, namespace, get_str(spec, "scaleTargetRef", "kind"),
                   get_str(spec, "scaleTargetRef", "name"), tuple(metrics), doc.span(root))
