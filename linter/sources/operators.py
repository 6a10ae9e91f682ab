"""Operator resources that start an engine without a pod template the user writes.

- KubeAI ``Model`` (kubeai.org/v1): the controller runs ``python3 -m
  vllm.entrypoints.openai.api_server --model=<hf repo> --served-model-name=<name> <spec.args>``
  with ``spec.env`` and an emptyDir (medium Memory) on /dev/shm (substratusai/kubeai
  internal/modelcontroller/engine_vllm.go vLLMPodForModel), plus ``--enable-lora`` when
  ``spec.adapters`` is set.  ``spec.resourceProfile``
  ``nvidia-gpu-h100:8`` names a profile of the KubeAI chart and a multiplier: the chart's GPU
  profiles request one GPU each (charts/kubeai/values.yaml resourceProfiles), so the pod gets
  8 GPUs of the profile's type.
- KubeRay ``RayJob``: ``spec.entrypoint`` is a shell command run on the cluster; the GPUs of
  the engine it starts are the GPU worker group's of ``spec.rayClusterSpec``.

Each synthesised argument maps to the place it comes from (the ``url``, ``metadata.name`` and
each ``spec.args`` item), so findings point where the user writes the value.
"""

from __future__ import annotations

import re
from typing import Any

from ..launch import (
    ENTRY_VLLM_API_SERVER,
    VLLM,
    Context,
    EnvVar,
    GpuRequest,
    Launch,
    Located,
)
from ..source import MapBuilder, VarRef, Word
from .commandline import Found, Scope, gpus_from_visible_devices, search_script
from .yamlnodes import Doc, get, get_str, is_scalar, is_seq, pairs
from ..records import replace

KUBEAI_API = "kubeai.org/"
# <vendor>-gpu-<type>:<count>; `cpu:N` is CPU cores, google-tpu-… a TPU slice (no GPU)
_PROFILE = re.compile(r"^(nvidia|amd)-gpu-([A-Za-z0-9.\-]+?)(?::(\d+))?$")


def is_operator_resource(root: Any) -> bool:
    kind = get_str(root, "kind")
    api = get_str(root, "apiVersion") or ""
    return (kind == "Model" and api.startswith(KUBEAI_API)) or (
        kind == "RayJob" and is_scalar(get(root, "spec", "entrypoint")))


def extract_operator(doc: Doc, root: Any, base: Context, found: Found) -> None:
    kind = get_str(root, "kind")
    if kind == "Model":
        _kubeai_model(doc, root, base, found)
    elif kind == "RayJob":
        from .kuberay import ray_workers

        node = get(root, "spec", "entrypoint")
        word = doc.word(node)
        # a process the Ray job runs on the cluster, not a container of its own: no probes,
        # ports or resources of its own.  The engine's GPUs are the Ray cluster's: with
        # spec.rayClusterSpec (a RayCluster spec, ray-project/kuberay v1.7.0-rc.0
        # ray-operator/apis/ray/v1/rayjob_types.go RayJobSpec.RayClusterSpec) the GPU worker
        # group's, as for a RayService; with a clusterSelector (an existing cluster) unknown
        worker, env = ray_workers(doc, get(root, "spec", "rayClusterSpec"))
        scope = Scope(doc.source, replace(
            base, kind="shell", gpus=worker.gpus, node_labels=worker.node_labels,
            image=worker.image, volumes=worker.volumes, ray_cluster=True), env=env)
        found.extend(search_script(word.text, word, scope))


def _synthetic(text: str, value: Word | None, at: Any, doc: Doc) -> Word:
    """``--flag=`` + value: the flag's characters map to ``at``'s node, the value's to its own
    characters."""
    head_span = doc.span(at)
    places = MapBuilder()
    places.const(head_span.start, head_span.end, len(text))
    unresolved: tuple[VarRef, ...] = ()
    full = text
    if value is not None:
        full += value.text
        places.extend(value.cmap)
        unresolved = value.unresolved
    return Word(full, places.build(head_span.end), False, unresolved)


def is_kubeai_models_values(root: Any) -> bool:
    """Values of the KubeAI ``models`` chart: a ``catalog`` of Model specs by name."""
    catalog = get(root, "catalog")
    return get(root, "kind") is None and any(
        get(entry, "url") is not None and get(entry, "engine") is not None
        for _, _, entry in pairs(catalog))


def extract_kubeai_models_values(doc: Doc, root: Any, found: Found) -> None:
    """Each enabled ``catalog`` entry is a Model named by its key whose spec is the entry's
    fields (kubeai-project/kubeai helm-chart-kubeai-0.22.1, charts/models/templates/
    models.yaml: ``{{- if or $model.enabled $.Values.all.enabled }}``, spec.url/engine/args/
    env/resourceProfile/cacheProfile copied from the entry).  An entry that only enables a
    default of the chart states no url here: its Model is not known."""
    every = get(root, "all", "enabled")
    all_on = is_scalar(every) and every.value.strip().lower() == "true"
    for name, key_node, entry in pairs(get(root, "catalog")):
        enabled = get(entry, "enabled")
        if not (all_on or (is_scalar(enabled) and enabled.value.strip().lower() == "true")):
            continue
        base = Context(kind="k8s", object_kind="Model", object_name=name,
                       object_span=doc.span(entry))
        _kubeai_spec(doc, entry, key_node, base, found)


def _kubeai_model(doc: Doc, root: Any, base: Context, found: Found) -> None:
    _kubeai_spec(doc, get(root, "spec"), get(root, "metadata", "name"), base, found)


def _kubeai_spec(doc: Doc, spec: Any, name: Any, base: Context, found: Found) -> None:
    engine = get(spec, "engine")
    if not is_scalar(engine) or engine.value.lower() != "vllm":
        return  # OLlama, FasterWhisper, Infinity …: not an engine mgpu-lint reads
    url = get(spec, "url")
    if not is_scalar(url):
        return  # the CRD requires spec.url: the API server rejects the resource
    model: Word | None = None
    if is_scalar(url):
        w = doc.word(url)
        if w.text.startswith("hf://"):
            k = len("hf://")
            cm = w.cmap
            model = Word(w.text[k:], cm.slice(k, len(w.text), tail=cm.tail))
        else:
            # s3://, gs://, pvc:// …: vLLM gets a local path the controller chooses
            model = Word(w.text, w.cmap, False, (VarRef("spec.url", w.span),))
    args: list[Word] = []
    if model is not None:
        # `--model=` maps to the `url` key: a value the linter cannot know (s3://, pvc://) is
        # unresolved in the value's characters only, so the flag itself stays readable
        at = next((kn for k, kn, _ in pairs(spec) if k == "url"), url) \
            if model.unresolved else url
        args.append(_synthetic("--model=", model, at, doc))
    if is_scalar(name):
        args.append(_synthetic("--served-model-name=", doc.word(name), name, doc))
    cache = get(spec, "cacheProfile")
    if url.value.strip().startswith("s3://") and not (is_scalar(cache) and cache.value):
        # an s3:// url without a cache profile: vLLM streams the weights from the bucket,
        # `--load-format=runai_streamer` after --served-model-name (vLLMPodForModel:
        # useRunaiStreamer, kubeai helm-chart-kubeai-0.22.1 internal/modelcontroller/
        # engine_vllm.go; scheme per model_source.go parseModelURL)
        args.append(_synthetic("--load-format=runai_streamer", None, url, doc))
    env: dict[str, EnvVar] = {}
    for key, key_node, value in pairs(get(spec, "env")):
        env[key] = (EnvVar(key, value.value, doc.span(value)) if is_scalar(value)
                    else EnvVar(key, None, doc.span(key_node)))
    from .kubernetes import expand_k8s  # (kubernetes imports this module)

    for item in (get(spec, "args").value if is_seq(get(spec, "args")) else []):
        if is_scalar(item):
            args.append(expand_k8s(doc, item, env))
    adapters = next(((kn, v) for k, kn, v in pairs(spec) if k == "adapters"), None)
    if adapters is not None and is_seq(adapters[1]):
        # spec.adapters set: the controller appends `--enable-lora` after spec.args and sets
        # VLLM_ALLOW_RUNTIME_LORA_UPDATING=True before spec.env (which may override it), so
        # it can load the adapters at run time (kubeai-project/kubeai helm-chart-kubeai-0.22.1,
        # internal/modelcontroller/engine_vllm.go vLLMPodForModel: `if m.Spec.Adapters != nil`)
        args.append(_synthetic("--enable-lora", None, adapters[0], doc))
        if "VLLM_ALLOW_RUNTIME_LORA_UPDATING" not in env:
            env = {"VLLM_ALLOW_RUNTIME_LORA_UPDATING": EnvVar(
                "VLLM_ALLOW_RUNTIME_LORA_UPDATING", "True", doc.span(adapters[0])), **env}
    gpus: GpuRequest | None = None
    labels: dict[str, Located] = {}
    unmapped = ""
    profile = get(spec, "resourceProfile")
    if is_scalar(profile):
        m = _PROFILE.match(profile.value.strip())
        if m:
            vendor, gpu_type, count = m.group(1), m.group(2), m.group(3)
            gpus = GpuRequest(int(count) if count else 1, "KubeAI resourceProfile",
                              doc.span(profile), vendor)
            labels["kubeai.org/resourceProfile"] = Located(gpu_type, doc.span(profile),
                                                           doc.source)
        elif not profile.value.strip().startswith(("cpu", "google-tpu-")):
            # a profile of the user's own chart values (any name): its node selector, GPUs and
            # their type are not in this file
            unmapped = f"KubeAI resourceProfile `{profile.value.strip()}`"
    volumes: dict[str, Located] = {}
    if is_scalar(cache) and cache.value:
        # a cache profile: the controller loads the weights into a shared volume once
        # (internal/modelcontroller cache.go) and vLLM reads them from there
        volumes["/"] = Located("persistentVolumeClaim", doc.span(cache), doc.source)
    replicas = get(spec, "replicas")
    ctx = Context(
        kind="k8s",
        object_kind="Model",
        object_name=base.object_name,
        object_span=base.object_span,
        namespace=base.namespace,
        annotations=base.annotations,
        role="kubeai-model",
        replicas=(Located(replicas.value, doc.span(replicas), doc.source)
                  if is_scalar(replicas) else None),
        gpus=gpus or gpus_from_visible_devices(env),
        node_labels=labels,
        unmapped_gpu=unmapped,
        volumes=volumes,
        shm=Located("KubeAI pod: emptyDir medium: Memory on /dev/shm"),
        # the controller adds startup, readiness and liveness probes on /health
        probes=("startupProbe", "readinessProbe", "livenessProbe"),
    )
    found.launches.append(Launch(
        source=doc.source,
        engine=VLLM,
        entry=ENTRY_VLLM_API_SERVER,
        program=doc.word(engine),
        args=tuple(args),
        env=env,
        context=ctx,
        list_form=True,
        operator="KubeAI",
    ))


__all__ = ["extract_kubeai_models_values", "extract_operator", "is_kubeai_models_values",
           "is_operator_resource"]
