"""vLLM production-stack Helm values (``servingEngineSpec.modelSpec[]``): each entry is a vLLM
Deployment the chart renders.

The mapping follows the chart (vllm-project/production-stack vllm-stack-0.1.12,
helm/templates/deployment-vllm-multi.yaml and helm/templates/_helpers.tpl, helm/values.yaml):

- container ``vllm`` runs ``vllm serve <modelURL> --host 0.0.0.0 --port <containerPort>``, then
  ``--enable-lora`` (``enableLoRA``), ``--enable-auto-tool-choice`` (``enableTool``),
  ``--tool-call-parser`` (``toolCallParser``) and from ``vllmConfig``: ``enableChunkedPrefill``
  (``--enable-chunked-prefill`` / ``--no-enable-chunked-prefill`` when the key is present),
  ``enablePrefixCaching`` (``--enable-prefix-caching`` when true, else the chart writes
  ``--no-enable-prefix-caching`` itself), ``maxModelLen``, ``dtype``, ``tensorParallelSize``,
  ``maxNumSeqs``, ``gpuMemoryUtilization`` (spelt ``--gpu_memory_utilization``, which vLLM's
  FlexibleArgumentParser reads as ``--gpu-memory-utilization``), ``maxLoras``, ``runner``,
  ``convert``, each ``extraArgs`` item as one word, then ``--revision`` (``modelRevision``);
  ``pipelineParallelSize`` is not rendered here (only by the Ray template);
- ``requestGPU`` (> 0) is the ``requestGPUType`` (default nvidia.com/gpu) request and limit,
  unless ``resources`` replaces the whole block;
- ``HF_HOME`` is /data/shared-pvc-storage (``sharedPvcStorage.enabled``), /data (``pvcStorage``,
  a PVC or the emptyDir it names) or /tmp; ``vllmConfig.v0: 1`` sets ``VLLM_USE_V1=0``;
  ``hf_token`` and ``servingEngineSpec.vllmApiKey`` come from secrets; ``servingEngineSpec.env``
  and the entry's ``env`` follow;
- with ``vllmConfig.tensorParallelSize`` an emptyDir (medium Memory, ``shmSize`` or 20Gi) is
  mounted on /dev/shm; the startup, liveness and readiness probes of ``servingEngineSpec``
  default to /health (values.yaml) and are left out only when set to null.

Entries with ``raySpec.enabled`` are rendered by helm/templates/ray-cluster.yaml instead (same
chart release): a KubeRay ``RayCluster`` whose head container ``vllm-ray-head`` runs the
ConfigMap script ``vllm-entrypoint.sh`` — ``vllm serve <modelURL> --host 0.0.0.0 --port <port>
--distributed-executor-backend ray`` and the same optional words as above, except that
``enablePrefixCaching: false`` writes nothing, ``pipelineParallelSize`` is rendered
(``--pipeline-parallel-size``), ``runner``/``convert`` are not, and only the entry's ``env``
is added (not ``servingEngineSpec.env``); the head's resources come from ``raySpec.headNode`` (``resources``, else
its ``requestGPU``), the ``replicaCount`` worker pods' from the entry; HF_HOME is /data with
``pvcStorage``, else /tmp; with a ``vllmConfig``, ``VLLM_USE_V1`` is its ``v1`` key or "0";
probes: readiness (/health), liveness and startup (exec).  ``enabled: false`` entries are not
rendered at all.  Words the chart writes by itself
(``--host``, ``--port``, ``--no-enable-prefix-caching``, the LMCache connector) are not the
user's and are not part of the launch; other Helm values files stay MG011/unread.
"""

from __future__ import annotations

from typing import Any

from .. import images
from ..launch import ENTRY_VLLM_SERVE, VLLM, Context, EnvVar, GpuRequest, Launch, Located
from ..source import Word
from ..bounds import launches_full
from .commandline import Found, parse_size
from .yamlnodes import Doc, get, get_str, is_map, is_scalar, is_seq, items, key_node, pairs

# vllmConfig keys the chart renders as `--flag value` (deployment-vllm-multi.yaml)
_VALUED = (
    ("maxModelLen", "--max-model-len"),
    ("dtype", "--dtype"),
    ("tensorParallelSize", "--tensor-parallel-size"),
    ("maxNumSeqs", "--max-num-seqs"),
    ("gpuMemoryUtilization", "--gpu-memory-utilization"),
    ("maxLoras", "--max-loras"),
    ("runner", "--runner"),
    ("convert", "--convert"),
)
# ray-cluster.yaml's vllm-entrypoint.sh: the same keys without runner/convert, plus pp
_VALUED_RAY = tuple(kv for kv in _VALUED if kv[0] not in ("runner", "convert")) + (
    ("pipelineParallelSize", "--pipeline-parallel-size"),)
_PROBES = ("startupProbe", "livenessProbe", "readinessProbe")


def is_stack_values(root: Any) -> bool:
    return is_map(root) and get(root, "kind") is None and \
        is_seq(get(root, "servingEngineSpec", "modelSpec"))


def _truthy(node: Any) -> bool:
    """Go template truth of a scalar: false, 0, "" and null are false."""
    if not is_scalar(node):
        return node is not None and bool(getattr(node, "value", None))
    v = node.value.strip().lower()
    if node.style:  # a quoted string: true unless empty
        return node.value != ""
    return v not in ("", "false", "0", "null", "~", "no", "off")


def _flag(flag: str, key: Any, value: Any, doc: Doc) -> Word:
    from .operators import _synthetic

    if value is None:
        return _synthetic(flag, None, key, doc)
    return _synthetic(flag + "=", doc.word(value), key, doc)


def extract_stack_values(doc: Doc, root: Any, found: Found) -> None:
    engine = get(root, "servingEngineSpec")
    if is_scalar(get(engine, "enableEngine")) and not _truthy(get(engine, "enableEngine")):
        return
    shared = _truthy(get(root, "sharedPvcStorage", "enabled"))
    shared_env = len(items(get(engine, "env")))
    budget = doc.source.budget
    for spec in items(get(engine, "modelSpec")):
        if launches_full(len(found.launches)):
            break  # runner.extract_file says where reading stopped
        if not is_map(spec):
            continue
        enabled = get(spec, "enabled")
        if is_scalar(enabled) and enabled.value.strip().lower() == "false":
            continue  # `ne $modelSpec.enabled false`
        # `and (hasKey $modelSpec "raySpec") $modelSpec.raySpec.enabled` (ray-cluster.yaml)
        ray = is_map(get(spec, "raySpec")) and _truthy(get(spec, "raySpec", "enabled"))
        # servingEngineSpec.env is read again for each entry (its `$(VAR)`s see the entry's own
        # variables), so its entries are spent from the file's words each time: 2,000 of them
        # beside 1,400 entries (0.35 MB) took 20 s and 590 MiB
        budget.words -= len(items(get(spec, "env"))) + (0 if ray else shared_env)
        if budget.words < 0:
            if budget.cut is None:
                budget.cut, budget.what = doc.span(spec).start, "words and env entries"
            break
        _entry(doc, engine, spec, shared, found, ray)


def _entry(doc: Doc, engine: Any, spec: Any, shared: bool, found: Found, ray: bool) -> None:
    url = get(spec, "modelURL")
    if not is_scalar(url):
        return  # the template renders `"<nil>"`/fails: no model to read
    args: list[Word] = [doc.word(url)]
    if ray:
        # the script's `"--distributed-executor-backend" "ray"`, shown at `raySpec.enabled`
        args.append(_flag("--distributed-executor-backend=ray",
                          key_node(get(spec, "raySpec"), "enabled"), None, doc))
    for key, flag in (("enableLoRA", "--enable-lora"), ("enableTool", "--enable-auto-tool-choice")):
        node = get(spec, key)
        if _truthy(node):
            args.append(_flag(flag, key_node(spec, key), None, doc))
    parser = get(spec, "toolCallParser")
    if is_scalar(parser) and _truthy(parser):
        args.append(_flag("--tool-call-parser", key_node(spec, "toolCallParser"), parser, doc))
    config = get(spec, "vllmConfig")
    env: dict[str, EnvVar] = {}
    if is_map(config):
        chunked = get(config, "enableChunkedPrefill")
        if chunked is not None:
            args.append(_flag("--enable-chunked-prefill" if _truthy(chunked)
                              else "--no-enable-chunked-prefill",
                              key_node(config, "enableChunkedPrefill"), None, doc))
        caching = get(config, "enablePrefixCaching")
        if ray and _truthy(caching):
            # ray-cluster.yaml: `if .enablePrefixCaching` → the flag, else nothing
            args.append(_flag("--enable-prefix-caching",
                              key_node(config, "enablePrefixCaching"), None, doc))
        elif not ray and caching is not None:
            # stated: true → the flag; false → the chart's --no-enable-prefix-caching
            args.append(_flag("--enable-prefix-caching" if _truthy(caching)
                              else "--no-enable-prefix-caching",
                              key_node(config, "enablePrefixCaching"), None, doc))
        for key, flag in (_VALUED_RAY if ray else _VALUED):
            node = get(config, key)
            if is_scalar(node):
                args.append(_flag(flag, key_node(config, key), node, doc))
        for item in items(get(config, "extraArgs")):
            if is_scalar(item):
                args.append(doc.word(item))
        v0, v1 = get(config, "v0"), get(config, "v1")
        if ray:
            # ray-cluster.yaml: `with $modelSpec.vllmConfig` → VLLM_USE_V1 = v1 | quote, else "0"
            env["VLLM_USE_V1"] = (EnvVar("VLLM_USE_V1", v1.value, doc.span(v1))
                                  if is_scalar(v1) else
                                  EnvVar("VLLM_USE_V1", "0", doc.span(key_node(spec,
                                                                              "vllmConfig"))))
        elif is_scalar(v0) and v0.value.strip() == "1":
            env["VLLM_USE_V1"] = EnvVar("VLLM_USE_V1", "0", doc.span(v0))
    revision = get(spec, "modelRevision")
    if is_scalar(revision) and _truthy(revision):
        args.append(_flag("--revision", key_node(spec, "modelRevision"), revision, doc))

    volumes: dict[str, Located] = {}
    pvc = get(spec, "pvcStorage")
    home = "/tmp"
    if pvc is not None:
        home = "/data"
        kind = "persistentVolumeClaim" if is_scalar(pvc) else (
            "emptyDir" if get(pvc, "emptyDir") is not None else "other")
        volumes["/data"] = Located(kind, doc.span(key_node(spec, "pvcStorage")), doc.source)
    if shared and not ray:  # the Ray template mounts no shared storage
        home = "/data/shared-pvc-storage"
        volumes[home] = Located("persistentVolumeClaim")
    env["HF_HOME"] = EnvVar("HF_HOME", home, None)
    if get(spec, "hf_token") is not None:
        env["HF_TOKEN"] = EnvVar("HF_TOKEN", None, doc.span(key_node(spec, "hf_token")))
    if _truthy(get(engine, "vllmApiKey")) or is_map(get(engine, "vllmApiKey")):
        env["VLLM_API_KEY"] = EnvVar("VLLM_API_KEY", None,
                                     doc.span(key_node(engine, "vllmApiKey")))
    from .kubernetes import add_env_entries

    for source in ((get(spec, "env"),) if ray else (get(engine, "env"), get(spec, "env"))):
        add_env_entries(doc, source, env)
    shm = None
    shm_bytes = None
    # each mount's volume is the first extraVolumes entry of its name (a mount and a volume
    # without a name match too, as the lookup by name did): indexed once, not searched for each
    # mount (10,000 mounts and volumes of one entry took 85 s)
    by_name: dict[str | None, Any] = {}
    for v in items(get(spec, "extraVolumes")):
        by_name.setdefault(get_str(v, "name"), v)
    for mount in items(get(spec, "extraVolumeMounts")):
        path = get_str(mount, "mountPath")
        if path:
            vol = by_name.get(get_str(mount, "name"))
            kind = next((k for k, _, _ in pairs(vol) if k != "name"), "other")
            volumes[path] = Located(kind, doc.span(get(mount, "mountPath")), doc.source)
            if path.rstrip("/") == "/dev/shm" and get_str(vol, "emptyDir", "medium") == "Memory":
                limit = get_str(vol, "emptyDir", "sizeLimit")
                shm = Located("emptyDir medium: Memory" + (f" (sizeLimit {limit})" if limit
                                                          else ""),
                              doc.span(get(mount, "mountPath")), doc.source)
                shm_bytes = parse_size(limit) if limit else None
    if is_map(config) and get(config, "tensorParallelSize") is not None:
        size = get_str(spec, "shmSize") or "20Gi"
        shm = Located(f"emptyDir medium: Memory (sizeLimit {size}, production-stack chart)",
                      doc.span(get(spec, "shmSize") or key_node(config, "tensorParallelSize")),
                      doc.source)
        shm_bytes = parse_size(size)

    if ray:
        # the head's fixed probes: readiness httpGet /health, liveness and startup exec
        probes: tuple[str, ...] = _PROBES
    else:
        probes = tuple(p for p in _PROBES
                       if not (key_node(engine, p) is not None and not is_map(get(engine, p))))
    image = None
    repo, tag = get(spec, "repository"), get(spec, "tag")
    if is_scalar(repo) and is_scalar(tag):
        image = Located(f"{repo.value}:{tag.value}", doc.span(tag), doc.source)
    replicas = get(spec, "replicaCount")
    name = get(spec, "name")
    gpus = _gpus(doc, spec)
    if ray:
        # one engine over the RayCluster: `replicaCount` is its worker pods, not engines; the
        # head runs vLLM on its own GPUs (raySpec.headNode) or, without any, the workers'
        replicas = None
        head = _gpus(doc, get(spec, "raySpec", "headNode"))
        gpus = head if head is not None else gpus
        if shm is None:
            shm = Located("KubeRay pod")
    ctx = Context(
        kind="k8s",
        container_name=Located("vllm-ray-head" if ray else "vllm"),
        object_kind="RayCluster" if ray else "Deployment",
        object_name=name.value if is_scalar(name) else None,
        object_span=doc.span(spec),
        role="production-stack",
        replicas=(Located(replicas.value, doc.span(replicas), doc.source)
                  if is_scalar(replicas) else None),
        image=image,
        gpus=gpus,
        ray_cluster=ray,
        node_labels=_labels(doc, spec),
        shm=shm,
        shm_size_bytes=shm_bytes,
        probes=probes,
        volumes=volumes,
    )
    pin = None
    if image is not None:
        entry = images.lookup(image.value)
        if entry is not None and entry.engine == VLLM and entry.version is not None:
            pin = Located(entry.version, image.span, doc.source)
    program = name if is_scalar(name) else url
    found.launches.append(Launch(
        source=doc.source,
        engine=VLLM,
        entry=ENTRY_VLLM_SERVE,
        # the entry's `name` (the chart's Deployment and container `vllm` come from it)
        program=doc.word(program),
        args=tuple(args),
        env=env,
        context=ctx,
        list_form=True,
        version_pin=pin,
        operator="production-stack",
    ))



def _gpus(doc: Doc, spec: Any) -> GpuRequest | None:
    resources = get(spec, "resources")
    if is_map(resources):
        # `resources` replaces the chart's block: read it as a container's
        from .kubernetes import GPU_RESOURCES

        for res, vendor in GPU_RESOURCES.items():
            node = get(resources, "limits", res)
            if is_scalar(node):
                value = node.value.strip()
                return GpuRequest(int(value) if value.isdigit() else None, f"{res} limit",
                                  doc.span(node), vendor)
        return None
    node = get(spec, "requestGPU")
    if not is_scalar(node):
        return None
    value = node.value.strip()
    if not value.isdigit() or int(value) == 0:
        return None
    gtype = get_str(spec, "requestGPUType") or "nvidia.com/gpu"
    vendor = "amd" if gtype.startswith("amd.com/") else "nvidia"
    if gtype not in ("nvidia.com/gpu", "amd.com/gpu"):
        return None  # a slice or MIG resource: not whole GPUs
    return GpuRequest(int(value), "requestGPU", doc.span(node), vendor)


def _labels(doc: Doc, spec: Any) -> dict[str, Located]:
    labels: dict[str, Located] = {}
    for term in items(get(spec, "nodeSelectorTerms")):
        for expr in items(get(term, "matchExpressions")):
            key = get_str(expr, "key")
            values = items(get(expr, "values"))
            if key and get_str(expr, "operator") == "In" and values and is_scalar(values[0]):
                labels.setdefault(key, Located(values[0].value, doc.span(values[0]),
                                               doc.source))
    return labels


__all__ = ["extract_stack_values", "is_stack_values"]
