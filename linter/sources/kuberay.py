"""KubeRay ``RayService`` running Ray Serve LLM: each ``llm_configs`` entry of an application
built by ``ray.serve.llm:build_openai_app`` is a vLLM engine.

``spec.serveConfigV2`` is YAML inside a YAML string; it is composed again with a map from its
characters to the file, so every position is exact.  What Ray Serve LLM does with an entry
(ray-project/ray master, python/ray/llm/_internal/serve):

- ``core/ingress/builder.py`` ``build_openai_app`` / ``LLMServingArgs``: ``args.llm_configs`` is a
  list of LLMConfig mappings (or paths of YAML files, not read here);
- ``core/configs/llm_config.py`` ``LLMConfig`` / ``ModelLoadingConfig``: ``model_loading_config``
  (``model_id``, ``model_source``), ``engine_kwargs``, ``accelerator_type``,
  ``deployment_config.num_replicas``;
- ``engines/vllm/vllm_models.py`` ``VLLMEngineConfig.from_llm_config`` and
  ``get_initialization_kwargs``: every ``engine_kwargs`` key must be a field of vLLM's
  ``AsyncEngineArgs`` or ``FrontendArgs`` (else "Unknown engine argument"); the model is
  ``model_source`` (a string) or else ``model_id``; ``served_model_name`` is ``[model_id]``;
  ``model``/``served_model_name`` in engine_kwargs are rejected; the executor is always Ray
  (``distributed_executor_backend='ray'``); a placement group of tp × pp GPU bundles
  (``placement_bundles``) is taken from the Ray cluster's workers.

Each key ``name_x`` is vLLM's flag ``--name-x`` (vLLM builds its CLI from the same dataclass
fields).  A scalar value becomes ``--name-x=value`` with the value's own characters; ``true``
the bare flag; ``false`` and mappings/lists are values the launch states but the linter does not
spell as flags (marked unknown, never guessed).  What Ray Serve fills in by itself (the Ray
executor, ``enable_log_requests``) is not part of the launch.

The engine's GPUs are the Ray cluster's: the worker group with GPUs gives the GPUs per pod and
the node labels (GPU type); KubeRay injects readiness and liveness probes into the Ray pods
(ray-project/kuberay v1.7.0-rc.0, ray-operator/controllers/ray/common/pod.go
initLivenessAndReadinessProbe, on unless ENABLE_PROBES_INJECTION=false).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .. import images
from ..engines.catalog import vllm_catalog, vllm_versions
from ..findings import Finding, Severity
from ..launch import ENTRY_VLLM_API_SERVER, VLLM, Context, EnvVar, Launch, Located
from ..source import CharMap, VarRef, Word, placed_word, unknown_words
from ..yamlsrc import YamlError, YamlTooLarge, compose_documents
from .commandline import Found
from .yamlnodes import Doc, get, get_str, is_map, is_scalar, items, pairs, too_large_finding

SERVE_LLM_BUILDERS = ("ray.serve.llm:build_openai_app",)
RAY_IMAGES = ("rayproject/", "docker.io/rayproject/")
# engine_kwargs keys Ray Serve LLM rejects or sets itself (vllm_models.py
# get_initialization_kwargs): no flag of the user's
_NOT_FLAGS = {"model", "served_model_name"}


def is_rayservice(root: Any) -> bool:
    return get_str(root, "kind") == "RayService" and is_scalar(get(root, "spec",
                                                                   "serveConfigV2"))


def _flag_word(flag: str, key: Any, value: Word | None, doc: Doc) -> Word:
    """``flag`` mapped to the key's characters, then ``=`` + the value's own characters."""
    ks = doc.span(key)
    starts = [ks.start] * len(flag)
    ends = [ks.end] * len(flag)
    text = flag
    unresolved: tuple[VarRef, ...] = ()
    if value is not None:
        text += "=" + value.text
        starts.append(ks.end - 1 if ks.end > ks.start else ks.start)
        ends.append(ks.end)
        for k in range(len(value.text)):
            starts.append(value.cmap.start(k))
            ends.append(value.cmap.end(k))
        unresolved = value.unresolved
    return Word(text, CharMap.table(starts, ends, ends[-1] if ends else ks.end), False,
                unresolved)


def _unknown_value(node: Any, doc: Doc, name: str) -> Word:
    """A mapping or list value: its text as written, marked unknown (the linter does not read
    it as the engine's JSON)."""
    span = doc.span(node)
    text = doc.text[node.start_mark.index:node.end_mark.index].strip() or name
    return placed_word(text, span, False, (VarRef(name, span),))


def _marker(node: Any, doc: Doc, name: str, option: str | None = None) -> Word:
    """Words the engine gets that the linter does not spell out (none, one or several), all
    of them about ``option`` when it is given."""
    return unknown_words(doc.span(node), name, option)


@lru_cache(maxsize=1)
def _vllm_keys() -> dict[str, tuple[str, bool]]:
    """Each option key of every catalogued vLLM release: its long flag and whether it is a bare
    flag (no value), from the newest release that has it.  The keys are vLLM's argparse
    destinations, the EngineArgs/FrontendArgs field names Ray Serve LLM checks against."""
    keys: dict[str, tuple[str, bool]] = {}
    for version in vllm_versions():
        for opt in vllm_catalog(version).options:
            keys[opt.key] = (opt.display, opt.is_bool)
    return keys


@lru_cache(maxsize=1)
def _default_keys() -> frozenset[str]:
    """The option keys of the release assumed when nothing pins one."""
    return frozenset(opt.key for opt in vllm_catalog().options)


def _flag_of(key: str) -> str | None:
    entry = _vllm_keys().get(key)
    return entry[0] if entry is not None else None


def _is_flag(key: str) -> bool:
    entry = _vllm_keys().get(key)
    return entry is not None and entry[1]


def _is_bool(node: Any, value: str) -> bool | None:
    if node.tag.endswith(":bool") or (not node.style and value.lower() in ("true", "false")):
        return value.lower() == "true"
    return None


def _gpu_group(doc: Doc, cluster: Any) -> tuple[Any, Any] | None:
    """(pod spec, container) of the Ray cluster's GPU worker group (``cluster`` a RayCluster
    spec: RayService ``rayClusterConfig``, RayJob ``rayClusterSpec``, RayCluster ``spec``),
    when the groups with GPUs agree on the count per pod."""
    from .kubernetes import _gpus

    found: list[tuple[Any, Any, int | None]] = []
    for group in items(get(cluster, "workerGroupSpecs")):
        pod = get(group, "template", "spec")
        for c in items(get(pod, "containers")):
            gpus, _ = _gpus(doc, c)
            if gpus is not None:
                found.append((pod, c, gpus.count))
    if not found or len({n for _, _, n in found}) != 1:
        return None
    return found[0][0], found[0][1]


def ray_workers(doc: Doc, cluster: Any) -> tuple[Context, dict[str, EnvVar]]:
    """What an engine started on the Ray cluster gets from its GPU worker group: the GPUs per
    pod, node labels (GPU type), image, volumes and environment of the pods its Ray workers
    run in (an empty Context when no worker group has GPUs, or the groups disagree)."""
    from .kubernetes import _env, _gpus, _node_labels

    group = _gpu_group(doc, cluster)
    if group is None:
        return Context(kind="k8s"), {}
    pod, container = group
    image = get(container, "image")
    worker = Context(
        kind="k8s",
        container_name=(Located(get_str(container, "name") or "",
                                doc.span(get(container, "name")), doc.source)
                        if is_scalar(get(container, "name")) else None),
        image=(Located(image.value, doc.span(image), doc.source) if is_scalar(image)
               else None),
        gpus=_gpus(doc, container)[0],
        node_labels=_node_labels(doc, pod),
        volumes=_mounts(doc, pod, container),
    )
    env = _env(doc, container)
    if is_scalar(image) and image.value.startswith(RAY_IMAGES) and "HOME" not in env:
        # the Ray images run as user ray: ENV HOME=/home/ray (ray-project/ray
        # docker/base-deps/Dockerfile), so the Hugging Face cache is under /home/ray
        env["HOME"] = EnvVar("HOME", "/home/ray", None)
    return worker, env


def _mounts(doc: Doc, pod: Any, container: Any) -> dict[str, Located]:
    from .kubernetes import _volumes

    volumes = _volumes(doc, pod)
    mounts: dict[str, Located] = {}
    for mount in items(get(container, "volumeMounts")):
        path = get_str(mount, "mountPath")
        vol = volumes.get(get_str(mount, "name") or "")
        if path and vol is not None:
            mounts[path] = Located(vol[0], doc.span(get(mount, "mountPath")), doc.source)
    return mounts


def extract_rayservice(doc: Doc, root: Any, base: Context, found: Found) -> None:
    node = get(root, "spec", "serveConfigV2")
    seg = doc.seg(node)
    inner = Doc(doc.source, seg.text, seg.cmap)
    roots: list[Any] = []
    try:
        roots.extend(compose_documents(seg.text, doc.source.budget))
    except YamlTooLarge as exc:
        # the documents before it are read; it and the rest are not (MG001 where it begins)
        found.findings.append(too_large_finding(inner, exc, "the rest of serveConfigV2"))
    except YamlError:
        return  # Ray Serve rejects it; nothing the linter can read as a launch
    # the engine's workers run in the GPU worker group's pods: their GPUs, node labels,
    # image, environment and volumes are the engine's
    worker, env = ray_workers(doc, get(root, "spec", "rayClusterConfig"))
    for config_root in roots:
        for app in items(get(config_root, "applications")):
            if get_str(app, "import_path") not in SERVE_LLM_BUILDERS:
                continue  # the user's own application: what it runs is its code's
            for llm in items(get(app, "args", "llm_configs")):
                if is_map(llm):
                    _llm_config(inner, llm, base, worker, env, doc, found)


def _llm_config(inner: Doc, llm: Any, base: Context, worker: Context, env: dict[str, EnvVar],
                doc: Doc, found: Found) -> None:
    engine = get_str(llm, "llm_engine")
    if engine is not None and engine != "vLLM":
        return
    loading = get(llm, "model_loading_config")
    model_id = get(loading, "model_id")
    source = get(loading, "model_source")
    args: list[Word] = []
    model_node = source if source is not None else model_id
    if is_scalar(model_node):
        args.append(_flag_word_at_value("--model", model_node, inner))
    elif model_node is not None:
        # a cloud mirror (bucket_uri …): the weights' repo is not named here
        field = "model_source" if source is not None else "model_id"
        key = next((kn for k, kn, _ in pairs(loading) if k == field), None)
        if key is None:
            return
        args.append(_flag_word("--model", key, _unknown_value(model_node, inner, field),
                               inner))
    else:
        return  # model_id is required: Ray Serve rejects the config
    if is_scalar(model_id):
        args.append(_flag_word_at_value("--served-model-name", model_id, inner))
    for key, key_node, value in pairs(get(llm, "engine_kwargs")):
        if key in _NOT_FLAGS:
            continue
        flag = _flag_of(key)
        if flag is None:
            catalog = vllm_catalog()
            guess = catalog.suggest("--" + key.replace("_", "-"))
            found.findings.append(Finding(
                "MG004", Severity.ERROR,
                f"engine_kwargs key `{key}` is not a vLLM engine argument: Ray Serve LLM "
                f"refuses the config (\"Unknown engine argument: {key}\", "
                "ray/llm/_internal/serve/engines/vllm/vllm_models.py from_llm_config)",
                doc.source, inner.span(key_node),
                hint=(f"did you mean `{guess.lstrip('-').replace('-', '_')}`?" if guess
                      else "engine_kwargs takes vLLM's AsyncEngineArgs field names"),
            ))
            continue
        if key not in _default_keys():
            # a field of older releases only (`device`): a keyword argument is matched
            # exactly, never as an abbreviation of a longer flag the way the command line
            # would read `--device`; whether the image's vLLM still has it is not known here
            args.append(_marker(value, inner, f"engine_kwargs.{key}", key))
            continue
        if is_scalar(value):
            if value.tag.endswith(":null") or value.value in ("", "~", "null"):
                continue  # None: vLLM's default
            b = _is_bool(value, value.value)
            if b is True and _is_flag(key):
                args.append(_flag_word(flag, key_node, None, inner))
            elif b is not None or _is_flag(key):
                # `false`, a boolean for an option with a value, or a string for a bare flag
                # (Python truth decides): the engine gets it from Python, not as a
                # command-line word; which words it equals is not guessed
                args.append(_marker(value, inner, f"engine_kwargs.{key}", key))
            else:
                args.append(_flag_word(flag, key_node, inner.word(value), inner))
        else:
            args.append(_flag_word(flag, key_node,
                                   _unknown_value(value, inner, f"engine_kwargs.{key}"), inner))
    replicas = get(llm, "deployment_config", "num_replicas")
    image_loc = worker.image
    env = dict(env)
    for key, _, value in pairs(get(llm, "runtime_env", "env_vars")):
        # runtime_env env vars reach the engine's worker processes
        env[key] = EnvVar(key, value.value if is_scalar(value) else None,
                          inner.span(value))
    ctx = Context(
        kind="k8s",
        container_name=worker.container_name,
        object_kind=base.object_kind,
        object_name=base.object_name,
        object_span=base.object_span,
        namespace=base.namespace,
        annotations=base.annotations,
        role="ray-serve-llm",
        replicas=(Located(replicas.value, inner.span(replicas), doc.source)
                  if is_scalar(replicas) else None),
        image=image_loc,
        gpus=worker.gpus,
        node_labels=worker.node_labels,
        volumes=worker.volumes,
        shm=Located("KubeRay pod"),
        probes=("readinessProbe", "livenessProbe"),
        ray_cluster=True,
    )
    pin = None
    if image_loc is not None:
        entry = images.lookup(image_loc.value)
        if entry is not None and entry.engine == VLLM and entry.version is not None:
            pin = Located(entry.version, image_loc.span, doc.source)
    found.launches.append(Launch(
        source=doc.source,
        engine=VLLM,
        entry=ENTRY_VLLM_API_SERVER,
        program=_program(inner, llm),
        args=tuple(args),
        env=env,
        context=ctx,
        list_form=True,
        version_pin=pin,
        operator="Ray Serve LLM",
    ))


def _program(inner: Doc, llm: Any) -> Word:
    """The entry's first key (``model_loading_config``): where the engine is declared."""
    for _, key_node, _ in pairs(llm):
        return inner.word(key_node)
    return inner.word(llm)


def _flag_word_at_value(flag: str, node: Any, inner: Doc) -> Word:
    """``flag=`` mapped to the value's node, then the value's own characters (as KubeAI's)."""
    from .operators import _synthetic

    return _synthetic(flag + "=", inner.word(node), node, inner)


__all__ = ["extract_rayservice", "is_rayservice", "ray_workers"]

