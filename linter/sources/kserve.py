"""KServe ``LLMInferenceService`` (serving.kserve.io/v1alpha1, v1alpha2): the launch the
controller builds from the resource and its well-known ``LLMInferenceServiceConfig``.

What the controller does (kserve/kserve v0.20.0, tag commit 1fb78105; unchanged on master at
aaac4e29):

- ``pkg/controller/v1alpha2/llmisvc/config_merge.go`` ``combineBaseRefsConfig``: without
  ``spec.worker`` the workload is single-node and the preset ``kserve-config-llm-template`` is
  merged under the resource (``kserve-config-llm-decode-template`` and
  ``kserve-config-llm-prefill-template`` when ``spec.prefill`` is set); ``spec.baseRefs`` come
  after the presets and the resource itself last (``MergeSpecs``, a strategic merge: containers
  merge by name, a ``command`` the resource states replaces the preset's).
- Those presets (``config/llmisvcconfig/config-llm-template.yaml``,
  ``config-llm-decode-template.yaml``, ``config-llm-prefill-template.yaml``) run the container
  ``main`` as ``/bin/bash -c '… eval "exec vllm serve /mnt/models --served-model-name NAME …
  --port 8000 [--tensor-parallel-size {{ .Spec.Parallelism.Tensor }}] … ${VLLM_ADDITIONAL_ARGS}
  $@"' --``: the model is downloaded to /mnt/models from ``spec.model.uri`` by the storage
  initializer, ``spec.model.name`` defaults to ``metadata.name``
  (``pkg/apis/serving/v1alpha2/llm_inference_service_types.go`` ``LLMModelSpec``), the
  prefill preset reads ``spec.prefill.parallelism.tensor``.  ``eval`` parses
  ``VLLM_ADDITIONAL_ARGS`` and the container's ``args`` (``$@``) as shell again, so quotes in
  them group words.
- The presets mount an emptyDir (medium Memory) on /dev/shm and declare startup, readiness and
  liveness probes on /health.

The presets changed across releases: ``VLLM_ADDITIONAL_ARGS`` reaches the single-node command from
v0.18.0 (v0.16/v0.17 ran ``vllm serve /mnt/models`` with the container's ``args``), and
``parallelism.tensor`` becomes ``--tensor-parallel-size`` there from v0.20.0.  Nothing in the
resource names the KServe release (the v1alpha1 API is still served through conversion), so the
current presets are assumed, as the newest vLLM catalog is when nothing pins vLLM.

With ``spec.worker`` and data parallelism (``parallelism.data``/``dataLocal``) the preset is
``kserve-config-llm-worker-data-parallel`` (or its decode/prefill variant): the leader
(``template``) and each worker pod run ``vllm serve /mnt/models … [--enable-expert-parallel]
[--tensor-parallel-size T] --data-parallel-size {{ or Data 1 }} --data-parallel-size-local
{{ or DataLocal 1 }} --data-parallel-address … --data-parallel-start-rank …`` (the worker with
``--headless`` and no probes), then ``${VLLM_ADDITIONAL_ARGS} $@``.

The launch is read only where the preset is one of those: a resource whose main container
states its own ``command`` is an ordinary pod template (read by ``sources/kubernetes.py``); a
worker without data parallelism (KServe ships no pipeline-parallel preset) or a resource with
``baseRefs`` (a config that may replace the command) gives no launch, since its command is not
known here.  Settings the preset fills in by
itself (``--port``, access-log and shutdown flags, the KV-offloading connector) are not the
user's and are not part of the launch.
"""

from __future__ import annotations

import re
from typing import Any

from .. import images
from ..findings import Finding, Severity
from ..launch import ENTRY_VLLM_SERVE, VLLM, Context, EnvVar, Launch, Located
from ..shell import split_commands
from ..source import CharMap, Span, VarRef, Word
from .commandline import Found, compose_word
from .yamlnodes import Doc, get, get_str, is_map, is_scalar, is_seq, items, key_node
from ..records import replace

LLMISVC_API = "serving.kserve.io/"
LLMISVC_KINDS = ("LLMInferenceService",)
MAIN_CONTAINER = "main"  # the preset's container name (config-llm-template.yaml)
ADDITIONAL_ARGS = "VLLM_ADDITIONAL_ARGS"
PRESET_PROBES = ("startupProbe", "readinessProbe", "livenessProbe")
PRESET_SHM = Located("KServe preset: emptyDir medium: Memory on /dev/shm")


def is_llmisvc(root: Any) -> bool:
    return (get_str(root, "kind") in LLMISVC_KINDS
            and (get_str(root, "apiVersion") or "").startswith(LLMISVC_API))


def _main_container(pod: Any) -> Any:
    for c in items(get(pod, "containers")):
        if get_str(c, "name") == MAIN_CONTAINER:
            return c
    return None


def handled_containers(root: Any) -> set[int]:
    """The ``main`` containers whose launch this module builds (the generic pod reading skips
    them: their image's own entrypoint is not what runs)."""
    out: set[int] = set()
    for _, pod, _, _ in _pods(root):
        c = _main_container(pod)
        if c is not None and get(c, "command") is None:
            out.add(id(c))
    return out


def _pods(root: Any) -> list[tuple[Any, Any, str | None, str]]:
    """(workload, pod spec, role, preset) of each pod the presets run vLLM in: ``single``
    (config-llm-template, -decode-template, -prefill-template) or, with ``worker`` and data
    parallelism, ``leader`` and ``worker`` (config-llm-worker-data-parallel and its decode/
    prefill variants; combineBaseRefsConfig picks them by IsDataParallel: parallelism.data or
    dataLocal > 0).  A worker without data parallelism (pipeline parallel) has no well-known
    preset, and a resource with baseRefs may take its command from a config not read here."""
    spec = get(root, "spec")
    if not is_map(spec) or get(spec, "baseRefs") is not None:
        return []
    prefill = get(spec, "prefill")
    if prefill is not None and not is_map(prefill):
        return []
    out: list[tuple[Any, Any, str | None, str]] = []
    workloads = [(spec, "decode" if prefill is not None else None)]
    if prefill is not None:
        workloads.append((prefill, "prefill"))
    for workload, role in workloads:
        worker = get(workload, "worker")
        if worker is None:
            out.append((workload, get(workload, "template"), role, "single"))
            continue
        par = get(workload, "parallelism")
        if not any(_positive(get(par, k)) for k in ("data", "dataLocal")):
            continue
        prefix = f"{role}-" if role else ""
        out.append((workload, get(workload, "template"), prefix + "leader", "leader"))
        out.append((workload, worker, prefix + "worker", "worker"))
    return out


def _positive(node: Any) -> bool:
    return is_scalar(node) and node.value.strip().isdigit() and int(node.value) > 0


def _shell_words(word: Word, env: dict[str, EnvVar], doc: Doc,
                 found: Found) -> list[Word] | None:
    """``word`` as ``eval`` reads it: shell words, positions mapped through ``word``.  None
    when the quoting is broken (MG003 at the place): eval fails and vLLM never starts."""
    def resolve(name: str) -> str | None:
        var = env.get(name)
        return var.value if var is not None else None

    out: list[Word] = []
    for cmd in split_commands(word.text, resolve):
        if cmd.problems:
            found.findings.extend(
                Finding("MG003", Severity.ERROR, p.message + " (the preset runs it with eval)",
                        doc.source, word.cmap.span(p.span.start, p.span.end), hint=p.hint)
                for p in cmd.problems)
            return None
        out.extend(_one_ref_per_place(compose_word(w, word)) for _, w in cmd.assignments)
        out.extend(_one_ref_per_place(compose_word(w, word)) for w in cmd.words)
    return out


def _one_ref_per_place(word: Word) -> Word:
    """A `$(VAR)` kubelet left as it is is also a command substitution to the shell: one
    unknown at one place, reported once."""
    seen: set[tuple[int, int]] = set()
    refs = []
    for ref in reversed(word.unresolved):  # kubelet's reference (the outer word's) first
        if (ref.span.start, ref.span.end) not in seen:
            seen.add((ref.span.start, ref.span.end))
            refs.append(ref)
    refs.reverse()
    return word if len(refs) == len(word.unresolved) else replace(word, unresolved=tuple(refs))


def _unknown(at: Word, name: str) -> Word:
    """A marker for words whose values are unknown (none, one or several)."""
    return Word(f"${name}", at.cmap if len(at.text) == len(name) + 1 else
                CharMap.table([at.span.start] * (len(name) + 1),
                              [at.span.end] * (len(name) + 1), at.span.end),
                False, (VarRef(name, at.span, split=True),))


def _value_word(text: str, node: Any, doc: Doc) -> Word:
    """A synthesised word whose every character points at ``node``."""
    span = doc.span(node)
    return Word(text, CharMap.table([span.start] * len(text), [span.end] * len(text), span.end))


def _model_word(doc: Doc, uri: Any) -> Word:
    w = doc.word(uri)
    if w.text.startswith("hf://"):
        # the storage initializer downloads the repo to /mnt/models: the weights and
        # config.json are that repo's
        k = len("hf://")
        cm = w.cmap
        return Word(w.text[k:], CharMap.table([cm.start(i) for i in range(k, len(w.text))],
                                              [cm.end(i) for i in range(k, len(w.text))],
                                              cm.tail))
    # s3://, gs://, pvc://, oci:// …: vLLM reads /mnt/models, whose model is not known here
    return Word(w.text, w.cmap, False, (VarRef("spec.model.uri", w.span),))


def extract_llmisvc(doc: Doc, root: Any, base: Context, found: Found) -> None:
    from .kubernetes import _env, _gpus, _node_labels, expand_k8s
    from .operators import _synthetic

    spec = get(root, "spec")
    uri = get(spec, "model", "uri")
    name = get(spec, "model", "name")
    if not is_scalar(name):
        name = get(root, "metadata", "name")
    for workload, pod, role, preset in _pods(root):
        container = _main_container(pod)
        if container is not None and get(container, "command") is not None:
            continue  # the user's own command: read as a pod template
        env = _env(doc, container) if container is not None else {}
        args: list[Word] = []
        if is_scalar(uri):
            args.append(_model_word(doc, uri))
        else:
            # the CRD requires spec.model.uri; without it the model is unknown
            at = get(spec, "model") if get(spec, "model") is not None else get(root, "kind")
            args.append(Word("/mnt/models", _value_word("/mnt/models", at, doc).cmap, False,
                             (VarRef("spec.model.uri", doc.span(at)),)))
        # a flag the preset writes maps to the field its value comes from (`--flag=` + value)
        if is_scalar(name):
            args.append(_synthetic("--served-model-name=", doc.word(name), name, doc))
        par = get(workload, "parallelism")
        if preset != "single" and get(par, "expert") is not None and \
                (get_str(par, "expert") or "").lower() == "true":
            args.append(_synthetic("--enable-expert-parallel", None, get(par, "expert"), doc))
        tp = get(par, "tensor")
        if is_scalar(tp):
            args.append(_synthetic("--tensor-parallel-size=", doc.word(tp), tp, doc))
        if preset != "single":
            # `--data-parallel-size {{ or .Spec.Parallelism.Data 1 }}` and the local size
            # likewise: stated values only (1 is vLLM's own default)
            for key, flag in (("data", "--data-parallel-size="),
                              ("dataLocal", "--data-parallel-size-local=")):
                node = get(par, key)
                if is_scalar(node):
                    args.append(_synthetic(flag, doc.word(node), node, doc))
        if preset == "worker":
            # the worker pods run engines without an API server (`--headless`)
            args.append(_synthetic("--headless", None, key_node(workload, "worker"), doc))
        extra = env.get(ADDITIONAL_ARGS)
        unknown_flags = False
        broken = False
        if extra is not None:
            node = _env_value_node(container, ADDITIONAL_ARGS)
            if is_scalar(node):
                # a value whose $(VAR) kubelet cannot expand keeps its known words
                split = _shell_words(expand_k8s(doc, node, env), env, doc, found)
                broken = split is None
                args.extend(split or [])
            else:
                # from a secret or configMap: words the linter cannot see
                name_node = _env_name_node(container, ADDITIONAL_ARGS)
                args.append(_unknown(doc.word(name_node), ADDITIONAL_ARGS))
                unknown_flags = True
        for item in items(get(container, "args")):
            if is_scalar(item):
                split = _shell_words(expand_k8s(doc, item, env), env, doc, found)
                broken = broken or split is None
                args.extend(split or [])
        if broken:
            continue
        gpus, requests_only = _gpus(doc, container) if container is not None else (None, None)
        if unknown_flags and gpus is not None:
            # the flags that set the parallel sizes may be among the unknown words: the GPUs
            # are given, the count they need is not known
            gpus = replace(gpus, count=None)
        name_node = get(container, "name")
        program_node = name_node if is_scalar(name_node) else get(root, "kind")
        if not is_scalar(program_node):
            continue
        image = get(container, "image")
        replicas = get(workload, "replicas")
        ctx = Context(
            kind="k8s",
            container_name=(Located(name_node.value, doc.span(name_node), doc.source)
                            if is_scalar(name_node) else None),
            object_kind=base.object_kind,
            object_name=base.object_name,
            object_span=base.object_span,
            namespace=base.namespace,
            annotations=base.annotations,
            role=role,
            replicas=(Located(replicas.value, doc.span(replicas), doc.source)
                      if is_scalar(replicas) else None),
            image=(Located(image.value, doc.span(image), doc.source)
                   if is_scalar(image) else None),
            gpus=gpus,
            gpu_requests_only=requests_only,
            node_labels=_node_labels(doc, pod) if is_map(pod) else {},
            shm=PRESET_SHM,
            # the data-parallel preset's worker container declares no probes
            probes=() if preset == "worker" else PRESET_PROBES,
            # vLLM reads a local directory and downloads nothing itself: the storage
            # initializer fills /mnt/models before it starts (KServe's own caching, a
            # LocalModelCache or a pvc:// uri, is what avoids that download)
            volumes={"/": Located("KServe storage initializer", doc.span(uri)
                                  if is_scalar(uri) else None, doc.source)},
        )
        pin = None
        if ctx.image is not None:
            # the preset's command runs in this image: its tag pins the vLLM release
            entry = images.lookup(ctx.image.value)
            if entry is not None and entry.version is not None:
                pin = Located(entry.version, ctx.image.span, doc.source)
        found.launches.append(Launch(
            source=doc.source,
            engine=VLLM,
            entry=ENTRY_VLLM_SERVE,
            version_pin=pin,
            # the preset's `vllm serve` runs in this container (its `name: main`)
            program=doc.word(program_node),
            args=tuple(args),
            env=env,
            context=ctx,
            operator="KServe",
        ))



def _env_item(container: Any, key: str) -> Any:
    found = None
    for item in items(get(container, "env")):
        if get_str(item, "name") == key:
            found = item
    return found


def _env_value_node(container: Any, key: str) -> Any:
    return get(_env_item(container, key), "value")


def _env_name_node(container: Any, key: str) -> Any:
    return get(_env_item(container, key), "name")




# --------------------------------------------------------------------------- LLMInferenceServiceConfig
#
# A config (the presets of config/llmisvcconfig/ or the user's own, named by baseRefs) is a
# workload template: the controller executes it as a Go text/template over the JSON-serialised
# object before merging it (pkg/controller/v1alpha2/llmisvc/config_merge.go ReplaceVariables:
# json.Marshal, then template.New("config"), at aaac4e29 / v0.20.0).  Read on its own, each
# action stands for a value of the LLMInferenceService that uses it: the file is read with every
# action (and every `{{ if }} … {{ end }}` block, whose condition is not known) replaced by a
# same-length placeholder the shell sees as an unknown expansion, so every other character keeps
# its place.  Because the template runs over JSON, `{{-` / `-}}` trim only the spaces and tabs
# beside the action: a newline is the two characters `\n` there, never trimmed.  (The spaces
# that open a line are left in place: in the file they are the YAML's indentation.)

LLMISVC_CONFIG_KINDS = ("LLMInferenceServiceConfig",)
_ACTION = re.compile(r"\{\{(-?)(.*?)(-?)\}\}", re.S)
_BLOCK_OPEN = re.compile(r"^\s*(?:if|range|with|define|block)\b")
_BLOCK_END = re.compile(r"^\s*end\s*$")
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_]")


def is_llmisvc_config(root: Any) -> bool:
    return (get_str(root, "kind") in LLMISVC_CONFIG_KINDS
            and (get_str(root, "apiVersion") or "").startswith(LLMISVC_API))


def _placeholder(text: str) -> str:
    """``${NAME}`` exactly ``len(text)`` characters long (``text`` at least 5)."""
    name = ("T" + _NAME_CHARS.sub("_", text))[: len(text) - 3].ljust(len(text) - 3, "_")
    return "${" + name + "}"


def render_templates(text: str, start: int,
                     end: int) -> tuple[str, list[tuple[int, int, str]] | None]:
    """``text`` with each top-level action of ``text[start:end]`` replaced by a placeholder of
    the same length, and the (start, end, action text) of each replaced region (None when a
    block is never closed)."""
    regions: list[tuple[int, int, str]] = []
    depth = 0
    open_at = 0
    for m in _ACTION.finditer(text, start, end):
        body = m.group(2)
        lo = m.start()
        if m.group(1):  # `{{-`: the spaces and tabs before it go
            while lo > start and text[lo - 1] in " \t":
                lo -= 1
            if lo == start or text[lo - 1] == "\n":
                # the line's indentation, which is the YAML's (a block scalar's) rather than
                # the string's: kept, so the YAML stays as it is (after a newline of the
                # string the spaces part no words)
                lo = m.start()
        hi = m.end()
        if m.group(3):  # `-}}`: the spaces and tabs after it go
            while hi < end and text[hi] in " \t":
                hi += 1
        if _BLOCK_OPEN.match(body):
            if depth == 0:
                open_at = lo
            depth += 1
            continue
        if depth:
            if _BLOCK_END.match(body):
                depth -= 1
                if depth == 0:
                    regions.append((open_at, hi, text[open_at:hi].strip()))
            continue
        regions.append((lo, hi, m.group(0)))
    if depth:
        return text, None  # an unclosed block: the controller fails to parse the template
    if not regions:
        return text, []
    out: list[str] = []
    pos = 0
    for lo, hi, _ in regions:
        out.append(text[pos:lo])
        out.append(_placeholder(text[lo:hi]) if hi - lo >= 5 else text[lo:hi])
        pos = hi
    out.append(text[pos:])
    return "".join(out), regions


def extract_llmisvc_config(doc: Doc, root: Any, index: int, found: Found, services: list,
                           hpas: list, ignores: list) -> bool:
    """The config's containers read with its actions as unknowns; False when it holds no
    action (it is then an ordinary object); nothing for a template that does not parse."""
    from ..yamlsrc import YamlError, compose_documents
    from .kubernetes import extract_object

    text, regions = render_templates(doc.text, root.start_mark.index, root.end_mark.index)
    if regions is None:
        # text/template refuses it ("unexpected EOF"), so ReplaceVariables fails and the
        # controller runs nothing from this config: no launch to read (MG017 says so)
        return True
    if not regions:
        return False
    try:
        rendered = list(compose_documents(text))
    except YamlError:
        return False
    if index >= len(rendered) or rendered[index].start_mark.index != root.start_mark.index:
        return False
    inner = Doc(doc.source, text, doc.base)
    local = Found()
    extract_object(inner, rendered[index], local, services, hpas, ignores)
    spans = [(doc.offset(lo), doc.offset(hi - 1) + 1, action, _placeholder(doc.text[lo:hi]),
              doc.text[lo:hi]) for lo, hi, action in regions if hi - lo >= 5]
    for la in local.launches:
        found.launches.append(replace(
            la, operator="KServe",
            args=tuple(_template_refs(w, spans) for w in la.args)))
    found.findings.extend(local.findings)
    return True


def _template_refs(word: Word, spans: list[tuple[int, int, str, str, str]]) -> Word:
    """Each placeholder in ``word`` an unknown named by its action (also where the shell kept
    it literal, inside single quotes), and written as the action again (the same length, so
    the word's map is unchanged)."""
    ws = word.span
    hits = [h for h in spans if h[0] < ws.end and ws.start < h[1]]
    if not hits:
        return word
    refs = list(word.unresolved)
    text = word.text
    for lo, hi, action, placeholder, original in hits:
        named = False
        for i, ref in enumerate(refs):
            if ref.span.start < hi and lo < ref.span.end:
                refs[i] = replace(ref, name=action)
                named = True
        if not named:
            refs.append(VarRef(action, Span(lo, hi)))
        text = text.replace(placeholder, original)
    return replace(word, text=text, unresolved=tuple(refs))

# --------------------------------------------------------------------------- InferenceService
#
# An InferenceService whose predictor names a ServingRuntime / ClusterServingRuntime
# (`predictor.model.runtime`) runs the runtime's container `kserve-container` merged with the
# predictor's model container (kserve/kserve v0.20.0,
# pkg/controller/v1beta1/inferenceservice/utils/utils.go MergeRuntimeContainers): fields the
# isvc states win (strategic merge: command, image, env by name, resources by key), and the
# args are the runtime's followed by the isvc's ("isvc extends runtime flags").  The storage
# initializer downloads `storageUri` to /mnt/models (the runtime's `--model=/mnt/models`).

RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")
RUNTIME_CONTAINER = "kserve-container"  # pkg/constants InferenceServiceContainerName


def runtimes_in(roots: list[Any]) -> dict[str, Any]:
    """ServingRuntime/ClusterServingRuntime objects of one file, by name."""
    out: dict[str, Any] = {}
    for root in roots:
        if get_str(root, "kind") in RUNTIME_KINDS and \
                (get_str(root, "apiVersion") or "").startswith(LLMISVC_API):
            name = get_str(root, "metadata", "name")
            if name:
                out[name] = root
    return out


def joined_runtime(root: Any, runtimes: dict[str, Any]) -> Any:
    """The runtime an InferenceService's predictor names, when this file holds it."""
    if get_str(root, "kind") != "InferenceService":
        return None
    name = get_str(root, "spec", "predictor", "model", "runtime")
    return runtimes.get(name) if name else None


def _runtime_container(runtime: Any) -> Any:
    for c in items(get(runtime, "spec", "containers")):
        if get_str(c, "name") == RUNTIME_CONTAINER:
            return c
    return None


def extract_isvc(doc: Doc, root: Any, runtime: Any, found: Found) -> bool:
    """The launch of an InferenceService joined to ``runtime``; False when the runtime has no
    container KServe merges (the runtime is then read on its own)."""
    from .commandline import Scope, find_launches
    from .kubernetes import _env, _gpus, _node_labels, _volumes, expand_k8s

    rc = _runtime_container(runtime)
    model = get(root, "spec", "predictor", "model")
    if rc is None or not is_map(model):
        return False
    env = _env(doc, rc)
    env.update(_env(doc, model))
    command = get(model, "command") if get(model, "command") is not None else get(rc, "command")
    uri = get(model, "storageUri")
    if uri is None:
        uri = get(root, "spec", "predictor", "model", "storageUri")

    def words(node: Any) -> list[Word]:
        if is_seq(node):
            return [expand_k8s(doc, n, env) for n in node.value if is_scalar(n)]
        if is_scalar(node):
            return [expand_k8s(doc, node, env)]
        return []

    args = words(get(rc, "args")) + words(get(model, "args"))
    if is_scalar(uri) and doc.word(uri).text.startswith("hf://"):
        # the runtime's --model=/mnt/models holds the repo the storage initializer downloaded
        args = [_model_flag(w, doc, uri) for w in args]
    gpus, requests_only = _gpus(doc, model)
    if gpus is None and requests_only is None:
        gpus, requests_only = _gpus(doc, rc)
    image = get(model, "image") if is_scalar(get(model, "image")) else get(rc, "image")
    volumes = _volumes(doc, get(runtime, "spec"))
    shm = None
    mounts: dict[str, Located] = {}
    for mount in items(get(rc, "volumeMounts")) + items(get(model, "volumeMounts")):
        path = get_str(mount, "mountPath")
        vol = volumes.get(get_str(mount, "name") or "")
        if path and vol is not None:
            mounts[path] = Located(vol[0], doc.span(get(mount, "mountPath")), doc.source)
            if path.rstrip("/") == "/dev/shm" and vol[0] == "emptyDir:Memory":
                shm = Located("emptyDir medium: Memory (the ServingRuntime's)",
                              doc.span(get(mount, "mountPath")), doc.source)
    if is_scalar(uri):
        # vLLM reads /mnt/models: the storage initializer, not vLLM, downloads the weights
        mounts["/"] = Located("KServe storage initializer", doc.span(uri), doc.source)
    probes = tuple(k for k in ("readinessProbe", "startupProbe", "livenessProbe")
                   if get(model, k) is not None or get(rc, k) is not None)
    name_node = get(rc, "name")
    meta = get(root, "metadata")
    replicas = get(root, "spec", "predictor", "minReplicas")
    ctx = Context(
        kind="k8s",
        container_name=Located(name_node.value, doc.span(name_node), doc.source),
        object_kind="InferenceService",
        object_name=get_str(meta, "name"),
        object_span=doc.span(root),
        namespace=get_str(meta, "namespace"),
        role="predictor",
        replicas=(Located(replicas.value, doc.span(replicas), doc.source)
                  if is_scalar(replicas) else None),
        image=(Located(image.value, doc.span(image), doc.source) if is_scalar(image)
               else None),
        gpus=gpus,
        gpu_requests_only=requests_only,
        node_labels=_node_labels(doc, get(root, "spec", "predictor")),
        shm=shm,
        probes=probes,
        volumes=mounts,
    )
    scope = Scope(doc.source, ctx, env=env, list_form=True)
    if command is not None:
        # the command is the runtime's (or the isvc's) as the user wrote it: not the operator's
        found.extend(find_launches(words(command) + args, scope))
    return True


def _model_flag(word: Word, doc: Doc, uri: Any) -> Word:
    """The runtime's ``--model=/mnt/models`` with the repo of the ``hf://`` uri as its value:
    the flag's characters stay the runtime's, the value's are the uri's."""
    head = "--model="
    if word.text != head + "/mnt/models":
        return word
    repo = _model_word(doc, uri)
    cm = word.cmap
    starts = [cm.start(i) for i in range(len(head))] + [repo.cmap.start(i)
                                                          for i in range(len(repo.text))]
    ends = [cm.end(i) for i in range(len(head))] + [repo.cmap.end(i)
                                                    for i in range(len(repo.text))]
    return Word(head + repo.text, CharMap.table(starts, ends, ends[-1]), word.quoted,
                repo.unresolved)


__all__ = ["extract_isvc", "extract_llmisvc", "extract_llmisvc_config", "handled_containers",
           "is_llmisvc", "is_llmisvc_config", "joined_runtime", "render_templates", "runtimes_in"]
