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
worker without data parallelism (KServe ships no pipeline-parallel preset) gives no launch.  A
resource with ``baseRefs`` read alone gives none either (a config may replace the command);
when every config it names is linted in the same run, the launch is its spec merged over them
(``extract_llmisvc`` with ``configs``, joined by ``sources.join_kserve``; ``base_configs``
finds them as ``getConfig`` does), each word in the file that writes it; when a config (or
the service) states the `main` container's ``command``, that command runs instead of the
preset's, read with the merged env, args and GPUs.  Settings the preset fills in by
itself (``--port``, access-log and shutdown flags, the KV-offloading connector) are not the
user's and are not part of the launch.
"""

from __future__ import annotations

import copy
from bisect import bisect_left, bisect_right
import re
from typing import Any

from .. import images
from ..findings import Finding, Severity
from ..launch import ENTRY_VLLM_SERVE, VLLM, Context, EnvVar, Launch, Located
from ..shell import split_commands
from ..source import CharMap, SourceFile, Span, VarRef, Word, placed_word, unknown_words
from .commandline import Found, WordComposer
from .yamlnodes import Doc, get, get_str, is_map, is_scalar, is_seq, items, key_node, str_map
from ..records import dataclass, field, replace

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


@dataclass(slots=True)
class Layer:
    """One spec the controller merges: an ``LLMInferenceServiceConfig`` named by ``baseRefs``
    or the service itself, read through ``doc``; ``spans`` are the config's Go-template actions
    (``_template_refs``), in ``doc``'s file offsets."""

    doc: Doc
    spec: Any
    spans: list[tuple[int, int, str, str, str]] = field(default_factory=list)


def _last(layers: list[Layer], *path: str) -> tuple[Layer | None, Any]:
    """The node at ``path`` of the last layer that states it, as a strategic merge keeps it
    (a field the later spec states replaces the earlier one; maps merge key by key)."""
    for layer in reversed(layers):
        node = get(layer.spec, *path)
        if node is not None:
            return layer, node
    return None, None


def handled_containers(root: Any) -> set[int]:
    """The ``main`` containers whose launch this module builds (the generic pod reading skips
    them: their image's own entrypoint is not what runs)."""
    out: set[int] = set()
    spec = get(root, "spec")
    for wpath, pod_key, _, _ in _pods([Layer(None, spec)]):  # type: ignore[arg-type]
        c = _main_container(get(spec, *wpath, pod_key))
        if c is not None and get(c, "command") is None:
            out.add(id(c))
    return out


def _pods(resolved: list[Layer],
          joined: bool = False) -> list[tuple[tuple[str, ...], str, str | None, str]]:
    """(workload path, pod key, role, preset) of each pod the presets run vLLM in: ``single``
    (config-llm-template, -decode-template, -prefill-template) or, with ``worker`` and data
    parallelism, ``leader`` and ``worker`` (config-llm-worker-data-parallel and its decode/
    prefill variants; combineBaseRefsConfig picks them by IsDataParallel: parallelism.data or
    dataLocal > 0).  ``resolved`` is the service then its baseRefs' configs, the order
    combineBaseRefsConfig merges them in to pick the presets (``resolvedSpec``: a config's
    field over the service's).  A worker without data parallelism (pipeline parallel) has no
    well-known preset, and a service with baseRefs read without its configs (``joined``
    False) may take its command from a config not read here."""
    spec = resolved[0].spec
    if not is_map(spec) or (get(spec, "baseRefs") is not None and not joined):
        return []
    prefill = _last(resolved, "prefill")[1]
    if prefill is not None and not is_map(prefill):
        return []
    out: list[tuple[tuple[str, ...], str, str | None, str]] = []
    workloads: list[tuple[tuple[str, ...], str | None]] = [
        ((), "decode" if prefill is not None else None)]
    if prefill is not None:
        workloads.append((("prefill",), "prefill"))
    for wpath, role in workloads:
        if _last(resolved, *wpath, "worker")[1] is None:
            out.append((wpath, "template", role, "single"))
            continue
        if not any(_positive(_last(resolved, *wpath, "parallelism", k)[1])
                   for k in ("data", "dataLocal")):
            continue
        prefix = f"{role}-" if role else ""
        out.append((wpath, "template", prefix + "leader", "leader"))
        out.append((wpath, "worker", prefix + "worker", "worker"))
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
    compose_word = WordComposer(word)
    for cmd in split_commands(word.text, resolve, budget=doc.source.budget,
                              cmap=word.cmap):
        if cmd.problems:
            found.findings.extend(
                Finding("MG003", Severity.ERROR, p.message + " (the preset runs it with eval)",
                        doc.source, word.cmap.span(p.span.start, p.span.end), hint=p.hint)
                for p in cmd.problems)
            return None
        out.extend(_one_ref_per_place(compose_word(w)) for _, w in cmd.assignments)
        out.extend(_one_ref_per_place(compose_word(w)) for w in cmd.words)
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


def _value_word(text: str, node: Any, doc: Doc) -> Word:
    """A synthesised word whose every character points at ``node``."""
    return placed_word(text, doc.span(node))


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


def extract_llmisvc(doc: Doc, root: Any, base: Context, found: Found,
                    configs: list[Layer] | None = None) -> None:
    """The launches of the service ``root``; with ``configs`` (the configs its ``baseRefs``
    name, in order, each read through its own ``Doc``) those of its spec merged over them, as
    combineBaseRefsConfig merges them (config_merge.go, v0.20.0): the well-known preset first,
    then the baseRefs in order, then the service (``MergeSpecs``: a strategic merge patch on
    the spec, so the pod templates merge as corev1.PodSpec does -- containers by name, `env`
    by name, `resources` key by key, while `command` and `args` carry no patch strategy
    (k8s.io/api core/v1 types.go Container, v0.34.5) and the last spec that states them
    replaces them whole).  The preset is then executed as a Go template over the service
    itself (``ReplaceVariables`` receives the LLMInferenceService, not the merged spec): its
    `--tensor-parallel-size {{ .Spec.Parallelism.Tensor }}` and the data-parallel sizes are
    the service's own ``parallelism``, whatever a config states (only the served model name
    is the merged one: combineBaseRefsConfig copies resolvedSpec.Model.Name back)."""
    from .commandline import Scope, find_launches
    from .kubernetes import _env, _node_labels, expand_k8s, merged_gpus
    from .operators import _synthetic

    spec = get(root, "spec")
    svc = Layer(doc, spec)
    layers = [*(configs or []), svc]  # MergeSpecs order: configs, then the service
    resolved = [svc, *(configs or [])]  # resolvedSpec: the service, each config over it
    uri_layer, uri = _last(layers, "model", "uri")
    # the webhook defaults spec.model.name to metadata.name (SetDefaults), and a config's
    # name replaces it in resolvedSpec, which is what the template reads
    name_layer, name = _last(resolved, "model", "name")
    if not is_scalar(name):
        name_layer, name = svc, get(root, "metadata", "name")
    pods = _pods(resolved, joined=configs is not None)
    if configs is not None and any(
            not is_map(get(spec, *wpath)) or (
                preset != "single" and get(get(spec, *wpath), "parallelism") is None)
            for wpath, _, _, preset in pods):
        # a preset's template reads .Spec.Prefill… / .Spec.Parallelism.Expert of the service
        # without a nil guard: text/template fails on the nil pointer, ReplaceVariables
        # returns the error and no pod of the service runs
        return
    for wpath, pod_key, role, preset in pods:
        workload = get(spec, *wpath)
        clayers = [(la, c) for la in layers
                   if (c := _main_container(get(la.spec, *wpath, pod_key))) is not None]
        # a `command` replaces the preset's whole (no patch strategy): the last spec's
        command = next(((la, c) for la, c in reversed(clayers)
                        if get(c, "command") is not None), None)
        if command is not None and configs is None:
            continue  # the user's own command: read as a pod template
        env: dict[str, EnvVar] = {}
        for la, c in clayers:
            env.update(_env(la.doc, c))
        # `args` (the preset's `$@`) are the last spec's that states them, whole
        given = next(((la, c) for la, c in reversed(clayers) if get(c, "args") is not None),
                     None)
        argv: list[Word] = []
        if command is not None:
            for la, c, key in ((*command, "command"), *([(*given, "args")] if given else [])):
                node = get(c, key)
                argv.extend(expand_k8s(la.doc, n, env) for n in
                            (node.value if is_seq(node) else [node]) if is_scalar(n))
        args: list[Word] = []
        if is_scalar(uri):
            args.append(_model_word(uri_layer.doc, uri))
        else:
            # the CRD requires spec.model.uri; without it the model is unknown
            at = get(spec, "model") if get(spec, "model") is not None else get(root, "kind")
            args.append(Word("/mnt/models", _value_word("/mnt/models", at, doc).cmap, False,
                             (VarRef("spec.model.uri", doc.span(at)),)))
        # a flag the preset writes maps to the field its value comes from (`--flag=` + value)
        if is_scalar(name):
            ndoc = name_layer.doc
            args.append(_synthetic("--served-model-name=", ndoc.word(name), name, ndoc))
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
            wlayer = next(la for la in reversed(resolved)
                          if key_node(get(la.spec, *wpath), "worker") is not None)
            args.append(_synthetic("--headless", None,
                                   key_node(get(wlayer.spec, *wpath), "worker"), wlayer.doc))
        unknown_flags = False
        broken = False
        # the last spec naming VLLM_ADDITIONAL_ARGS gives its value (env merges by name); the
        # preset's command reads it (a command of the user's own reads it if it says so)
        extra = None if command is not None else next(
            ((la, item) for la, c in reversed(clayers)
             if (item := _env_item(c, ADDITIONAL_ARGS)) is not None), None)
        if extra is not None:
            la, item = extra
            node = get(item, "value")
            if is_scalar(node):
                # a value whose $(VAR) kubelet cannot expand keeps its known words
                split = _shell_words(expand_k8s(la.doc, node, env), env, la.doc, found)
                broken = split is None
                actions = TemplateActions(la.spans)
                args.extend(_template_refs(w, actions) for w in split or [])
            else:
                # from a secret or configMap: words the linter cannot see
                args.append(unknown_words(la.doc.span(get(item, "name")), ADDITIONAL_ARGS))
                unknown_flags = True
        if given is not None and command is None:
            la, c = given
            actions = TemplateActions(la.spans)
            for item in items(get(c, "args")):
                if is_scalar(item):
                    split = _shell_words(expand_k8s(la.doc, item, env), env, la.doc, found)
                    broken = broken or split is None
                    args.extend(_template_refs(w, actions) for w in split or [])
        if broken:
            continue
        gpus, requests_only = merged_gpus([(la.doc, c) for la, c in clayers])
        if unknown_flags and gpus is not None:
            # the flags that set the parallel sizes may be among the unknown words: the GPUs
            # are given, the count they need is not known
            gpus = replace(gpus, count=None)
        # the program: the service's own `main` when it writes one, else the config's
        own = [(la, c) for la, c in clayers if la is svc]
        clayer, container = (own or clayers or [(svc, None)])[-1]
        cdoc = clayer.doc
        name_node = get(container, "name")
        program_node, pdoc = (name_node, cdoc) if is_scalar(name_node) else \
            (get(root, "kind"), doc)
        if not is_scalar(program_node):
            continue
        ilayer, image = next(((la, get(c, "image")) for la, c in reversed(clayers)
                              if is_scalar(get(c, "image"))), (svc, None))
        rlayer, replicas = _last(layers, *wpath, "replicas")
        labels: dict[str, Located] = {}
        for la in layers:
            pod = get(la.spec, *wpath, pod_key)
            if is_map(pod):
                labels.update(_node_labels(la.doc, pod))
        ctx = Context(
            kind="k8s",
            container_name=(Located(name_node.value, cdoc.span(name_node), doc.source)
                            if is_scalar(name_node) else None),
            object_kind=base.object_kind,
            object_name=base.object_name,
            object_span=base.object_span,
            namespace=base.namespace,
            annotations=base.annotations,
            role=role,
            replicas=(Located(replicas.value, rlayer.doc.span(replicas), doc.source)
                      if is_scalar(replicas) else None),
            image=(Located(image.value, ilayer.doc.span(image), doc.source)
                   if is_scalar(image) else None),
            gpus=gpus,
            gpu_requests_only=requests_only,
            node_labels=labels,
            shm=PRESET_SHM,
            # the data-parallel preset's worker container declares no probes
            probes=() if preset == "worker" else PRESET_PROBES,
            # vLLM reads a local directory and downloads nothing itself: the storage
            # initializer fills /mnt/models before it starts (KServe's own caching, a
            # LocalModelCache or a pvc:// uri, is what avoids that download)
            volumes={"/": Located("KServe storage initializer", uri_layer.doc.span(uri)
                                  if is_scalar(uri) else None, doc.source)},
        )
        if command is not None:
            # the user's command with the merged env, args and GPUs, read as a pod's is; its
            # /mnt/models holds the repo of an hf:// uri (the storage initializer's download)
            if is_scalar(uri) and uri_layer.doc.word(uri).text.startswith("hf://"):
                argv = [_model_flag(w, uri_layer.doc, uri, argv[i - 1].text if i else None)
                        for i, w in enumerate(argv)]
            local = find_launches(argv, Scope(doc.source, ctx, env=env, list_form=True))
            actions = TemplateActions([h for la in layers for h in la.spans])
            found.launches.extend(replace(la, operator="KServe", args=tuple(
                _template_refs(w, actions) for w in la.args)) for la in local.launches)
            found.findings.extend(local.findings)
            continue
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
            program=pdoc.word(program_node),
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
    # up to the last `}}`: an action ends at the first `}}` after its `{{`, and a `{{` after the
    # last one has none (the regex read from each such `{{` to `end`, quadratic)
    for m in _ACTION.finditer(text, start, min(end, text.rfind("}}", start, end) + 2)):
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
                           hpas: list, ignores: list, obj: KObject | None = None) -> bool:
    """The config's containers read with its actions as unknowns; False when it holds no
    action (it is then an ordinary object); nothing for a template that does not parse.
    ``obj`` (the config as a service's baseRefs join it) gets the rendered reading, or is
    marked unusable when the controller could not execute the template."""
    from ..yamlsrc import YamlError, compose_documents
    from .kubernetes import extract_object

    text, regions = render_templates(doc.text, root.start_mark.index, root.end_mark.index)
    if regions is None:
        # text/template refuses it ("unexpected EOF"), so ReplaceVariables fails and the
        # controller runs nothing from this config: no launch to read (MG017 says so)
        if obj is not None:
            obj.usable = False
        return True
    if not regions:
        return False
    # the config's own document is composed again, not the whole text: an install manifest
    # of 3.5 MB holds eight configs (kserve install/v0.16.0/kserve.yaml: 60 s when each
    # rendering recomposed every document)
    start = root.start_mark.index
    lo = text.rfind("\n", 0, start) + 1
    whole = Doc(doc.source, text, doc.base)
    if text[lo:start].strip():
        # the root starts after other text on its line (`--- {…}`): compose the whole text
        inner, at, lo = whole, index, 0
    else:
        inner, at = whole.region(lo, root.end_mark.index), 0
    try:
        rendered = list(compose_documents(inner.text))
    except YamlError:
        rendered = []
    if at >= len(rendered) or rendered[at].start_mark.index + lo != start:
        if obj is not None:
            obj.usable = False  # its placeholders are not YAML: what it merges is not known
        return False
    local = Found()
    extract_object(inner, rendered[at], local, services, hpas, ignores)
    spans = [(doc.offset(lo), doc.offset(hi - 1) + 1, action, _placeholder(doc.text[lo:hi]),
              doc.text[lo:hi]) for lo, hi, action in regions if hi - lo >= 5]
    if obj is not None:
        obj.doc, obj.root, obj.spans = inner, rendered[at], spans
    actions = TemplateActions(spans)
    for la in local.launches:
        found.launches.append(replace(
            la, operator="KServe",
            args=tuple(_template_refs(w, actions) for w in la.args)))
    found.findings.extend(local.findings)
    return True


class TemplateActions:
    """A config's Go-template actions (file start, end, action, placeholder, original text)
    indexed by place: the ones a word's span meets are found by bisection, in their order in
    the list.  Each word scanned every action of its config: a config of 30,000 args that
    are each an action (1 MB) took 41 s."""

    __slots__ = ("spans", "order", "starts", "ends")

    def __init__(self, spans: list[tuple[int, int, str, str, str]]) -> None:
        self.spans = spans
        self.order = sorted(range(len(spans)), key=lambda i: (spans[i][0], spans[i][1]))
        self.starts = [spans[i][0] for i in self.order]
        ends = [spans[i][1] for i in self.order]
        # the actions of one text do not overlap, nor do those of different files (the
        # joined text's parts): by start, their ends are in order too.  Otherwise none is
        # found by bisection (every one is looked at)
        self.ends = ends if all(a <= b for a, b in zip(ends, ends[1:])) else None

    def meeting(self, start: int, end: int) -> list[tuple[int, int, str, str, str]]:
        """The actions with ``lo < end and start < hi``."""
        if self.ends is None:
            return [h for h in self.spans if h[0] < end and start < h[1]]
        i = bisect_right(self.ends, start)
        j = bisect_left(self.starts, end)
        return [self.spans[k] for k in sorted(self.order[i:j])] if i < j else []


def _template_refs(word: Word, actions: TemplateActions) -> Word:
    """Each placeholder in ``word`` an unknown named by its action (also where the shell kept
    it literal, inside single quotes), and written as the action again (the same length, so
    the word's map is unchanged)."""
    ws = word.span
    hits = actions.meeting(ws.start, ws.end)
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
# An InferenceService's predictor (`spec.predictor.model`) runs a ServingRuntime's or
# ClusterServingRuntime's container `kserve-container` merged with the predictor's own fields.
# What the controller does (kserve/kserve v0.20.0):
#
# - Which runtime (pkg/controller/v1beta1/inferenceservice/components/predictor.go
#   ``reconcileModel``): `model.runtime` names it, and ``utils.GetServingRuntime`` looks for a
#   ServingRuntime of that name in the InferenceService's namespace first, then a
#   ClusterServingRuntime; the named runtime must not be `disabled`, must list the model's
#   format (``RuntimeSupportsModel``: with an explicit name every `supportedModelFormats` entry
#   counts, `mt:NAME` and `mt:NAME:VERSION`) and its protocol (``IsProtocolVersionSupported``:
#   `protocolVersions` unset, or holding the model's, `v1` by default), else the controller
#   refuses it and nothing runs.  Without a name (pkg/apis/serving/v1beta1/predictor_model.go
#   ``GetSupportingRuntimes``) the candidates are the runtimes that are not disabled, not
#   multi-model, multi-node exactly when the predictor is (`workerSpec`), list the format with
#   `autoSelect: true` and support the protocol; the namespace's ServingRuntimes come before
#   every ClusterServingRuntime, each list ordered by `priority` for the format
#   (``sortSupportedRuntimeByPriority``: a stated priority first, higher first), ties by protocol,
#   creation time and name (``sortServingRuntimeList``), and the first is used.
# - The container (pkg/controller/v1beta1/inferenceservice/utils/utils.go
#   ``MergeServingRuntimeAndInferenceServiceSpecs`` → ``MergeRuntimeContainers``): a strategic
#   merge of the predictor's container fields over the runtime's (command, image, env by name,
#   resources by key, volumeMounts by path), except the args, which are the runtime's followed by
#   the predictor's ("isvc extends runtime flags"); the pod (``MergePodSpec``): the runtime's
#   nodeSelector, affinity, tolerations and volumes with the predictor's over them.  The
#   storage initializer downloads `storageUri` to /mnt/models (the runtime's
#   `--model=/mnt/models`).
#
# Here the candidates are the runtimes of the files linted together (the files are taken as what
# is deployed).  Creation times are not in a file: when two candidates are left in the first
# list with no priority to part them, which one runs is not known and nothing is joined.  A
# multi-node predictor (`workerSpec`) is not joined (its GPUs are spread over the worker pods).
# A runtime that runs for several InferenceServices gives one launch per InferenceService, each
# with that InferenceService's GPUs, model and args; read alone, a runtime is the launch of its
# own container, as any pod template.

RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")
ISVC_KIND = "InferenceService"
RUNTIME_CONTAINER = "kserve-container"  # pkg/constants InferenceServiceContainerName
MODEL_DIR = "/mnt/models"  # pkg/constants DefaultModelLocalMountPath
_YAML_TRUE = ("true", "True", "TRUE")  # a JSON bool as kubectl's YAML reader writes it


@dataclass(slots=True)
class KObject:
    """A KServe object that joins an object of another document or file (a runtime and the
    InferenceService it runs): where it was read, and the launches its own reading gave."""

    doc: Doc
    root: Any
    launches: list[Launch] = field(default_factory=list)
    # an LLMInferenceServiceConfig read with its Go-template actions as placeholders: their
    # places (``_template_refs``); ``usable`` False when the controller cannot execute it
    spans: list[tuple[int, int, str, str, str]] = field(default_factory=list)
    usable: bool = True
    # an LLMInferenceService's baseRefs names, kept instead of their nodes (``keep_ref_names``)
    ref_names: tuple[str | None, ...] | None = None

    @property
    def kind(self) -> str | None:
        return get_str(self.root, "kind")

    @property
    def name(self) -> str | None:
        return get_str(self.root, "metadata", "name")

    @property
    def namespace(self) -> str | None:
        return get_str(self.root, "metadata", "namespace")


def keep_ref_names(obj: KObject) -> None:
    """An LLMInferenceService kept for the join holds its baseRefs as names, and its root a
    copy whose baseRefs list is empty: 2,000 services naming 300 configs each kept 2 million
    nodes alive (780 MB, and the garbage collector walked them all again and again).  Only a
    baseRefs written in the spec itself, as the spec of the root is (not through a merge key),
    is taken out; any other is left as it is."""
    root = obj.root
    spec = get(root, "spec")
    refs = get(spec, "baseRefs")
    at_spec = [i for i, (k, v) in enumerate(root.value) if v is spec]
    at_refs = [i for i, (k, v) in enumerate(spec.value) if v is refs]
    if len(at_spec) != 1 or len(at_refs) != 1:
        return
    obj.ref_names = tuple(get_str(r, "name") for r in items(refs))
    empty = copy.copy(refs)
    empty.value = []
    new_spec = copy.copy(spec)
    new_spec.value = list(spec.value)
    new_spec.value[at_refs[0]] = (spec.value[at_refs[0]][0], empty)
    new_root = copy.copy(root)
    new_root.value = list(root.value)
    new_root.value[at_spec[0]] = (root.value[at_spec[0]][0], new_spec)
    obj.root = new_root


def is_joinable(root: Any) -> bool:
    """A ServingRuntime, ClusterServingRuntime or InferenceService of KServe, or an
    LLMInferenceService whose spec names baseRefs (its configs are kept by their own reader,
    ``extract_llmisvc_config``)."""
    kind = get_str(root, "kind")
    if not (get_str(root, "apiVersion") or "").startswith(LLMISVC_API):
        return False
    if kind in LLMISVC_KINDS:
        return is_seq(get(root, "spec", "baseRefs"))
    return kind in (*RUNTIME_KINDS, ISVC_KIND)


def _same_namespace(isvc: KObject, runtime: KObject) -> bool:
    """A ClusterServingRuntime serves every namespace.  A namespaced object without
    `metadata.namespace` goes wherever it is applied (`kubectl apply -n`, a kustomization's
    namespace), so only two different stated namespaces are known to be apart."""
    if runtime.kind == "ClusterServingRuntime":
        return True
    a, b = isvc.namespace, runtime.namespace
    return a is None or b is None or a == b


def _supports(spec: Any, model: Any, explicit: bool) -> bool:
    """``RuntimeSupportsModel`` (predictor_model.go): the model's `mt:NAME[:VERSION]` label is
    among the runtime's (only `autoSelect: true` formats when no runtime is named)."""
    name = get_str(model, "modelFormat", "name") or ""
    version = get_str(model, "modelFormat", "version")
    want = f"mt:{name}" + (f":{version}" if version is not None else "")
    labels: set[str] = set()
    for fmt in items(get(spec, "supportedModelFormats")):
        if explicit or get_str(fmt, "autoSelect") in _YAML_TRUE:
            n = get_str(fmt, "name") or ""
            labels.add(f"mt:{n}")
            v = get_str(fmt, "version")
            if v is not None:
                labels.add(f"mt:{n}:{v}")
    return want in labels


def _protocol_ok(spec: Any, model: Any) -> bool:
    """``IsProtocolVersionSupported`` with ``GetProtocol``'s default `v1`."""
    want = get_str(model, "protocolVersion") or "v1"
    listed = [n.value for n in items(get(spec, "protocolVersions")) if is_scalar(n)]
    return not listed or want in listed


def runtimes_by_name(runtimes: list[KObject]) -> dict[tuple[str | None, str | None],
                                                      list[KObject]]:
    """``runtimes`` by (kind, name), each list in the order of ``runtimes``: ``select_runtime``
    looks a named runtime up there instead of reading every runtime for every
    InferenceService (quadratic: 550 of each in a 2 MiB file spent 4 s)."""
    out: dict[tuple[str | None, str | None], list[KObject]] = {}
    for r in runtimes:
        out.setdefault((r.kind, r.name), []).append(r)
    return out


@dataclass(slots=True)
class _Candidate:
    """A runtime as the search without a runtime name reads it (each fact read once)."""
    runtime: KObject
    kind: str | None
    namespace: str | None
    labels: frozenset[str]  # the `mt:` labels of its autoSelect formats (_supports)
    protocols: tuple[str, ...]  # its protocolVersions (_protocol_ok)
    priority: dict[str | None, int | None]  # _priority by format name


class Autoselect:
    """``select_runtime``'s search when no runtime is named, over ``runtimes`` read once.

    The answer depends on the InferenceService only through its model's format label, format
    name and protocol and its namespace, and the namespace only through which runtimes it sees:
    a namespace with no ServingRuntime of its own carrying the label sees what every such
    namespace sees.  So answers are kept per (label, name, protocol, namespace or "elsewhere"):
    15,000 InferenceServices and 1,000 runtimes read every runtime per service (over 120 s)."""

    _ELSEWHERE = object()

    def __init__(self, runtimes: list[KObject]) -> None:
        self.by_label: dict[str, list[_Candidate]] = {}
        self.own: dict[str, set[str]] = {}  # label -> namespaces stated by its ServingRuntimes
        self.memo: dict[tuple[Any, ...], KObject | None] = {}
        for r in runtimes:
            spec = get(r.root, "spec")
            kind = r.kind
            if kind not in RUNTIME_KINDS or get_str(spec, "disabled") in _YAML_TRUE \
                    or get_str(spec, "multiModel") in _YAML_TRUE \
                    or get(spec, "workerSpec") is not None:
                continue
            labels: set[str] = set()
            priority: dict[str | None, int | None] = {}
            for fmt in items(get(spec, "supportedModelFormats")):
                n = get_str(fmt, "name")
                if n not in priority:  # the first entry of the name (GetPriority)
                    p = (get_str(fmt, "priority") or "").strip()
                    priority[n] = int(p) if p.lstrip("-").isdigit() else None
                if get_str(fmt, "autoSelect") in _YAML_TRUE:
                    labels.add(f"mt:{n or ''}")
                    v = get_str(fmt, "version")
                    if v is not None:
                        labels.add(f"mt:{n or ''}:{v}")
            protocols = tuple(n.value for n in items(get(spec, "protocolVersions"))
                              if is_scalar(n))
            c = _Candidate(r, kind, r.namespace, frozenset(labels), protocols, priority)
            for label in labels:
                self.by_label.setdefault(label, []).append(c)
                if kind == "ServingRuntime" and c.namespace is not None:
                    self.own.setdefault(label, set()).add(c.namespace)

    def select(self, isvc: KObject, model: Any) -> KObject | None:
        name = get_str(model, "modelFormat", "name") or ""
        version = get_str(model, "modelFormat", "version")
        want = f"mt:{name}" + (f":{version}" if version is not None else "")
        protocol = get_str(model, "protocolVersion") or "v1"
        fmt = get_str(model, "modelFormat", "name")
        ns = isvc.namespace
        seen = ns if ns is None or ns in self.own.get(want, ()) else self._ELSEWHERE
        key = (want, fmt, protocol, seen)
        if key not in self.memo:
            self.memo[key] = self._search(want, fmt, protocol, ns)
        return self.memo[key]

    def _search(self, want: str, fmt: str | None, protocol: str, ns: str | None
                ) -> KObject | None:
        found = self.by_label.get(want, ())
        for kind in RUNTIME_KINDS:  # the namespace's ServingRuntimes before any cluster one
            tier = [c for c in found if c.kind == kind
                    and (kind == "ClusterServingRuntime" or ns is None or c.namespace is None
                         or c.namespace == ns)  # _same_namespace
                    and (not c.protocols or protocol in c.protocols)]
            if len(tier) == 1:
                return tier[0].runtime
            if tier:
                ranked = [(p, c) for c in tier if (p := c.priority.get(fmt)) is not None]
                if not ranked:
                    return None  # creation time and name decide: not known from the files
                best = max(p for p, _ in ranked)
                winners = [c for p, c in ranked if p == best]
                return winners[0].runtime if len(winners) == 1 else None
        return None


def select_runtime(isvc: KObject, runtimes: list[KObject],
                   named: dict[tuple[str | None, str | None], list[KObject]] | None = None,
                   auto: Autoselect | None = None) -> KObject | None:
    """The runtime among ``runtimes`` that KServe runs ``isvc``'s predictor with; None when
    none, when the controller would refuse it, or when which one is not known.  ``named`` is
    ``runtimes_by_name(runtimes)`` and ``auto`` ``Autoselect(runtimes)`` when the caller keeps
    them for many InferenceServices."""
    predictor = get(isvc.root, "spec", "predictor")
    model = get(predictor, "model")
    if not is_map(model) or get(predictor, "workerSpec") is not None:
        return None
    name = get_str(model, "runtime")
    if name:
        if named is None:
            named = runtimes_by_name(runtimes)
        for kind in RUNTIME_KINDS:  # GetServingRuntime: the namespace's first
            hit = next((r for r in named.get((kind, name), ()) if _same_namespace(isvc, r)),
                       None)
            if hit is not None:
                spec = get(hit.root, "spec")
                if get_str(spec, "disabled") in _YAML_TRUE or not _supports(spec, model, True) \
                        or not _protocol_ok(spec, model):
                    return None  # the controller refuses the runtime: nothing runs
                return hit
        return None
    return (auto or Autoselect(runtimes)).select(isvc, model)


# An LLMInferenceService's baseRefs (config_merge.go ``getConfig``, v0.20.0): each name is
# looked up in the service's namespace, then in the system namespace (constants.KServeNamespace:
# the controller's POD_NAMESPACE, `kserve` by default); one not found in either stops the merge
# (configNotFoundError: the service is marked ConfigNotFound and nothing is reconciled).  As for
# runtimes, an object without `metadata.namespace` is taken to be applied where the service is.

SYSTEM_NAMESPACE = "kserve"


def configs_by_name(configs: list[KObject]) -> dict[str, list[KObject]]:
    """The configs of each name, in their order: read once for every service and baseRef
    (each ref scanned every config, 300 refs x 300 configs per service)."""
    out: dict[str, list[KObject]] = {}
    for c in configs:
        name = c.name
        if name:
            out.setdefault(name, []).append(c)
    return out


def _find_config(ns: str | None, named: list[KObject]) -> KObject | None:
    """The config a service of namespace ``ns`` finds among ``named``, the configs of one
    name."""
    if ns is not None:
        here = [c for c in named if c.namespace in (ns, None)]
        if not here:
            here = [c for c in named if c.namespace == SYSTEM_NAMESPACE]
    else:
        here = [c for c in named if c.namespace is None] or named
    # two objects of one name where one lookup finds either: which one is deployed is not known
    return here[0] if len(here) == 1 else None


def base_configs(svc: KObject, by_name: dict[str, list[KObject]]) -> list[KObject] | None:
    """The configs ``svc``'s baseRefs name, in order, when every one is among the configs
    (``configs_by_name``) and the controller can execute it; None otherwise (the merge is not
    known: no launch)."""
    out: list[KObject] = []
    ns = svc.namespace
    names = svc.ref_names if svc.ref_names is not None else \
        [get_str(ref, "name") for ref in items(get(svc.root, "spec", "baseRefs"))]
    for name in names:
        hit = _find_config(ns, by_name.get(name, [])) if name else None
        if hit is None or not hit.usable:
            return None
        out.append(hit)
    return out or None


def extract_llmisvc_joined(sdoc: Doc, root: Any, configs: list[tuple[Doc, KObject]],
                           found: Found) -> None:
    """The service ``root`` (read through ``sdoc``) merged over ``configs`` (each config with
    the ``Doc`` to read it through, its template places moved there)."""
    meta = get(root, "metadata")
    base = Context(kind="k8s", object_kind=get_str(root, "kind"),
                   object_name=get_str(meta, "name") or "", object_span=sdoc.span(root),
                   namespace=get_str(meta, "namespace"),
                   annotations=str_map(get(meta, "annotations")))
    layers = []
    for cdoc, obj in configs:
        shift = cdoc.offset(0) - obj.doc.offset(0)
        spans = [(lo + shift, hi + shift, *rest) for lo, hi, *rest in obj.spans]
        layers.append(Layer(cdoc, get(obj.root, "spec"), spans))  # type: ignore[arg-type]
    extract_llmisvc(sdoc, root, base, found, layers)


def _runtime_container(runtime: Any) -> Any:
    for c in items(get(runtime, "spec", "containers")):
        if get_str(c, "name") == RUNTIME_CONTAINER:
            return c
    return None


def extract_isvc(rdoc: Doc, runtime: Any, idoc: Doc, root: Any, found: Found) -> bool:
    """The launch of the InferenceService ``root`` (read through ``idoc``) run by ``runtime``
    (through ``rdoc``: the same text, or both parts of one joined text); False when the runtime
    has no container KServe merges (the runtime is then read on its own)."""
    from .commandline import Scope, find_launches
    from .kubernetes import _env, _node_labels, _volumes, expand_k8s, merged_gpus

    rc = _runtime_container(runtime)
    predictor = get(root, "spec", "predictor")
    model = get(predictor, "model")
    if rc is None or not is_map(model):
        return False
    env = _env(rdoc, rc)
    env.update(_env(idoc, model))
    command, cdoc = (get(model, "command"), idoc) if get(model, "command") is not None \
        else (get(rc, "command"), rdoc)
    uri = get(model, "storageUri")

    def words(doc: Doc, node: Any) -> list[Word]:
        if is_seq(node):
            return [expand_k8s(doc, n, env) for n in node.value if is_scalar(n)]
        if is_scalar(node):
            return [expand_k8s(doc, node, env)]
        return []

    argv = (words(cdoc, command) if command is not None else []) + \
        words(rdoc, get(rc, "args")) + words(idoc, get(model, "args"))
    if is_scalar(uri) and idoc.word(uri).text.startswith("hf://"):
        # the runtime's /mnt/models (`--model=/mnt/models`, `vllm serve /mnt/models`) holds
        # the repo the storage initializer downloaded
        argv = [_model_flag(w, idoc, uri, argv[i - 1].text if i else None)
                for i, w in enumerate(argv)]
    # the predictor's container is merged over the runtime's (MergeRuntimeContainers)
    gpus, requests_only = merged_gpus(((rdoc, rc), (idoc, model)))
    image, image_doc = (get(model, "image"), idoc) if is_scalar(get(model, "image")) \
        else (get(rc, "image"), rdoc)
    volumes = {name: (kind, rdoc) for name, (kind, _) in
               _volumes(rdoc, get(runtime, "spec")).items()}
    volumes.update({name: (kind, idoc) for name, (kind, _) in
                    _volumes(idoc, predictor).items()})
    shm = None
    mounts: dict[str, Located] = {}
    for mdoc, mount in ([(rdoc, m) for m in items(get(rc, "volumeMounts"))]
                        + [(idoc, m) for m in items(get(model, "volumeMounts"))]):
        path = get_str(mount, "mountPath")
        vol = volumes.get(get_str(mount, "name") or "")
        if path and vol is not None:
            at = mdoc.span(get(mount, "mountPath"))
            mounts[path] = Located(vol[0], at, mdoc.source)
            if path.rstrip("/") == "/dev/shm" and vol[0] == "emptyDir:Memory":
                owner = "ServingRuntime's" if mdoc is rdoc else "InferenceService's"
                shm = Located(f"emptyDir medium: Memory (the {owner})", at, mdoc.source)
    if is_scalar(uri):
        # vLLM reads /mnt/models: the storage initializer, not vLLM, downloads the weights
        mounts["/"] = Located("KServe storage initializer", idoc.span(uri), idoc.source)
    probes = tuple(k for k in ("readinessProbe", "startupProbe", "livenessProbe")
                   if get(model, k) is not None or get(rc, k) is not None)
    name_node = get(rc, "name")
    meta = get(root, "metadata")
    replicas = get(predictor, "minReplicas")
    ctx = Context(
        kind="k8s",
        container_name=Located(name_node.value, rdoc.span(name_node), rdoc.source),
        object_kind=ISVC_KIND,
        object_name=get_str(meta, "name"),
        object_span=idoc.span(root),
        namespace=get_str(meta, "namespace"),
        role="predictor",
        replicas=(Located(replicas.value, idoc.span(replicas), idoc.source)
                  if is_scalar(replicas) else None),
        image=(Located(image.value, image_doc.span(image), image_doc.source)
               if is_scalar(image) else None),
        gpus=gpus,
        gpu_requests_only=requests_only,
        node_labels={**_node_labels(rdoc, get(runtime, "spec")),
                     **_node_labels(idoc, predictor)},
        shm=shm,
        probes=probes,
        volumes=mounts,
    )
    scope = Scope(rdoc.source, ctx, env=env, list_form=True)
    if command is not None:
        # the command is the runtime's (or the isvc's) as the user wrote it: not the operator's
        found.extend(find_launches(argv, scope))
    return True


def rebased(doc: Doc, joined: SourceFile, start: int) -> Doc:
    """``doc`` read as the part of ``joined`` (``source.joined_source``) that starts at
    ``start``: the same text, its offsets moved into the joined text."""
    shift = CharMap.linear(start, len(doc.source.text))
    if doc.base is None:
        base = CharMap.linear(start, len(doc.text)) if start else None
    else:
        base = doc.base.compose(shift) if start else doc.base
    return Doc(joined, doc.text, base)


def _model_flag(word: Word, doc: Doc, uri: Any, previous: str | None = None) -> Word:
    """The runtime's ``--model=/mnt/models`` with the repo of the ``hf://`` uri as its value:
    the flag's characters stay the runtime's, the value's are the uri's.  A ``/mnt/models``
    word after ``serve`` or ``--model`` is the uri's repo.  Any other word is returned as it
    is, without reading the uri (one launch's dozen words each mapped its characters again)."""
    if word.text == MODEL_DIR and previous in ("serve", "--model"):
        repo = _model_word(doc, uri)
        return Word(repo.text, repo.cmap, word.quoted, repo.unresolved)
    head = "--model="
    if word.text != head + MODEL_DIR:
        return word
    repo = _model_word(doc, uri)
    cm = word.cmap
    starts = [cm.start(i) for i in range(len(head))] + [repo.cmap.start(i)
                                                          for i in range(len(repo.text))]
    ends = [cm.end(i) for i in range(len(head))] + [repo.cmap.end(i)
                                                    for i in range(len(repo.text))]
    return Word(head + repo.text, CharMap.table(starts, ends, ends[-1]), word.quoted,
                repo.unresolved)


__all__ = ["Autoselect", "KObject", "base_configs", "configs_by_name", "extract_isvc",
           "keep_ref_names",
           "extract_llmisvc", "extract_llmisvc_config", "extract_llmisvc_joined",
           "handled_containers", "is_joinable", "is_llmisvc", "is_llmisvc_config", "rebased",
           "render_templates", "runtimes_by_name", "select_runtime"]
