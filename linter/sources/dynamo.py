"""NVIDIA Dynamo ``DynamoGraphDeployment`` (nvidia.com/v1alpha1): each service whose main
container runs ``python3 -m dynamo.vllm …`` is a vLLM engine.

The resource (ai-dynamo/dynamo main at 015d780b, deploy/operator/api/v1alpha1/common.go and
dynamocomponentdeployment_types.go): ``spec.services`` maps a service name to a component
spec with ``componentType``, ``replicas``, ``resources.requests/limits`` (``ResourceItem``:
``gpu`` a count, ``gpuType`` the resource name, default ``nvidia.com/gpu``; "Total number of
GPUs is NumberOfNodes * GPU in case of multinode deployment"), ``envs``, ``multinode.nodeCount``,
``sharedMemory`` (``disabled``, ``size``) and ``extraPodSpec`` (a pod spec plus
``mainContainer``, a container whose ``command``/``args`` run the component).

What the operator adds (deploy/operator/internal/dynamo, same commit):

- ``component_worker.go`` ``GetBaseContainer``: worker containers get liveness, readiness and
  startup probes on the Dynamo system port; ``internal/consts/consts.go`` mounts a
  ``shared-memory`` emptyDir on /dev/shm (``DefaultSharedMemorySize`` 8Gi) unless
  ``sharedMemory.disabled``.
- ``backend_vllm.go`` ``UpdateContainer``: with ``multinode.nodeCount`` > 1 the leader runs the
  engine over all nodes (``ray start --head`` then the command with
  ``--distributed-executor-backend ray``, or ``mp`` with ``--nnodes``), the other pods join
  it and lose their probes; the engine's GPUs are nodeCount × ``gpu``.

What ``python3 -m dynamo.vllm`` accepts (components/src/dynamo/vllm/args.py ``parse_args`` at
000a36a7; components/backends/vllm/src/dynamo/vllm/args.py at 987bbcb5 and 00697417 for the
older layout): Dynamo's own options are parsed first (``parse_known_args``), everything else
goes to vLLM's ``FlexibleArgumentParser`` built by ``AsyncEngineArgs.add_cli_args`` — the
engine arguments, not the OpenAI server's.  Dynamo's options are taken out of the launch here
(``DYNAMO_FLAGS``: the union over the releases read); an option neither Dynamo's nor vLLM's may
be a Dynamo option of a release not read, so it is left out too and makes the settings the
launch does not state unknown, never an MG004.  The worker serves no HTTP API itself (the
Dynamo frontend does): it takes requests from the Dynamo runtime.

SGLang and TensorRT-LLM workers (``dynamo.sglang``, ``dynamo.trtllm``) and the frontend are
not vLLM: they give no launch.
"""

from __future__ import annotations

import posixpath
import re
from functools import lru_cache
from typing import Any

from ..engines.catalog import vllm_catalog, vllm_versions
from ..launch import (
    ENTRY_VLLM_API_SERVER,
    MULTI_NODE_LEADER,
    VLLM,
    Context,
    EnvVar,
    GpuRequest,
    Launch,
    Located,
)
from ..shell import split_commands
from ..source import CharMap, VarRef, Word
from .commandline import Found, compose_word, parse_size
from .yamlnodes import Doc, get, get_str, is_map, is_scalar, items, pairs

DYNAMO_API = "nvidia.com/"
DGD_KINDS = ("DynamoGraphDeployment",)
VLLM_MODULE = "dynamo.vllm"
_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)?)?$")
_SHELLS = ("sh", "bash", "dash", "zsh")

# Dynamo's own options of `python3 -m dynamo.vllm` -> values they take (0: a flag; 1: one
# value; "*": any number of words up to the next option).  Union of the releases read:
# components/src/dynamo/common/configuration/groups/runtime_args.py DynamoRuntimeArgGroup
# (007ec174), components/src/dynamo/vllm/backend_args.py DynamoVllmArgGroup (036f289b),
# components/backends/vllm/src/dynamo/vllm/args.py parse_args (987bbcb5, 00697417).
# add_negatable_bool_argument is argparse.BooleanOptionalAction (--x and --no-x;
# common/configuration/utils.py).  `--enforce-eager` is also vLLM's: left to vLLM (older
# releases pass it there).
_BOOL = ("--is-prefill-worker", "--is-decode-worker", "--use-vllm-tokenizer",
         "--route-to-encoder", "--multimodal-encode-worker", "--multimodal-worker",
         "--multimodal-decode-worker", "--enable-multimodal", "--frontend-decoding", "--omni",
         "--enable-layerwise-offload", "--vae-use-slicing", "--vae-use-tiling",
         "--enable-cache-dit-summary", "--enable-cpu-offload", "--fpm-trace",
         "--exclude-tools-when-tool-choice-none", "--multimodal-embedding-cache-publisher",
         "--tcp-tls-insecure", "--nats-tls-insecure", "--dyn-enable-structural-tag")
_VALUE = ("--endpoint", "--migration-limit", "--dynamo-port-min", "--dynamo-port-max",
          "--sleep-mode-level", "--mm-prompt-template", "--stage-configs-path",
          "--video-output-dir", "--default-video-fps", "--layerwise-num-gpu-layers",
          "--boundary-ratio", "--flow-shift", "--diffusion-cache-backend",
          "--diffusion-cache-config", "--ulysses-degree", "--ring-degree",
          "--cfg-parallel-size", "--model-express-url", "--namespace", "--kv-state-endpoint",
          "--discovery-backend", "--request-plane", "--response-plane", "--event-plane",
          "--dyn-tool-call-parser", "--dyn-reasoning-parser", "--dyn-default-thinking-mode",
          "--dyn-structural-tag-scope", "--dyn-structural-tag-schema",
          "--custom-jinja-template", "--endpoint-types", "--dump-config-to",
          "--multimodal-embedding-cache-capacity-gb", "--media-output-fs-url",
          "--media-output-http-url", "--health-check-payload", "--engine-request-limit",
          "--tcp-tls-cert-path", "--tcp-tls-key-path", "--tcp-tls-ca-cert-path",
          "--tcp-tls-server-name", "--tcp-tls-handshake-timeout", "--tcp-tls-client-cert-path",
          "--tcp-tls-client-key-path", "--tcp-tls-client-ca-cert-path",
          "--nats-tls-ca-cert-path", "--nats-tls-client-cert-path",
          "--nats-tls-client-key-path")
DYNAMO_FLAGS: dict[str, int | str] = {
    **{f: 0 for f in _BOOL},
    **{"--no-" + f[2:]: 0 for f in _BOOL},
    **{f: 1 for f in _VALUE},
    "--connector": "*", "--output-modalities": "*",
    "--dyn-structural-tag": "?",  # nargs="?", const "true"
}


def is_dgd(root: Any) -> bool:
    return (get_str(root, "kind") in DGD_KINDS
            and (get_str(root, "apiVersion") or "").startswith(DYNAMO_API))


@lru_cache(maxsize=1)
def _vllm_names() -> frozenset[str]:
    """Every option spelling of every catalogued vLLM release (long names with dashes)."""
    names: set[str] = set()
    for version in vllm_versions():
        for opt in vllm_catalog(version).options:
            names.update(n for n in opt.names)
    return frozenset(names)


def _is_vllm_flag(flag: str) -> bool:
    """A spelling vLLM's FlexibleArgumentParser may accept: a name, its underscore form, or
    an argparse prefix of one (vllm/utils FlexibleArgumentParser; allow_abbrev on)."""
    if flag.startswith("--"):
        flag = "--" + flag[2:].replace("_", "-")
    names = _vllm_names()
    return flag in names or (flag.startswith("--") and len(flag) > 3
                             and any(n.startswith(flag) for n in names))


def extract_dgd(doc: Doc, root: Any, base: Context, found: Found) -> None:
    spec = get(root, "spec")
    # v1alpha1: `services`, a map of name -> component with extraPodSpec.mainContainer
    for name, key_node, service in pairs(get(spec, "services")):
        if is_map(service):
            _service(doc, name, key_node, service, base, found)
    # v1beta1 (deploy/operator/api/v1beta1/dynamocomponentdeployment_types.go at 006b6e10):
    # `components`, a list with `name`, `type`, `replicas`, `multinode`, `sharedMemorySize`
    # and `podTemplate`, whose container `main` (MainContainerName) runs the component
    for component in items(get(spec, "components")):
        if is_map(component):
            _component(doc, component, base, found)


def _service(doc: Doc, name: str, key_node: Any, service: Any, base: Context,
             found: Found) -> None:
    main = get(service, "extraPodSpec", "mainContainer")
    if not is_map(main):
        return
    _workers(doc, Located(name, doc.span(key_node), doc.source), service, main,
             get(service, "extraPodSpec"), _container_env(doc, service, main),
             _gpus(doc, service), _shm(doc, service), base, found)


def _component(doc: Doc, component: Any, base: Context, found: Found) -> None:
    from .kubernetes import _env
    from .kubernetes import _gpus as container_gpus

    pod = get(component, "podTemplate", "spec")
    main = next((c for c in items(get(pod, "containers")) if get_str(c, "name") == "main"),
                None)
    name_node = get(component, "name")
    if not is_map(main) or not is_scalar(name_node):
        return
    size = get(component, "sharedMemorySize")
    shm: tuple[Located | None, int | None]
    if is_scalar(size) and size.value.strip():
        size_bytes = parse_size(size.value.strip())
        shm = ((None, None) if size.value.strip() == "0" else
               (Located(f"Dynamo sharedMemorySize {size.value}", doc.span(size), doc.source),
                size_bytes))
    else:
        shm = _DEFAULT_SHM
    _workers(doc, Located(name_node.value, doc.span(name_node), doc.source), component, main,
             pod, _env(doc, main), container_gpus(doc, main)[0], shm, base, found)


def _container_env(doc: Doc, service: Any, main: Any) -> dict[str, EnvVar]:
    """The service's ``envs``, then the main container's own ``env`` (the operator merges
    both into the main container; a name the container states wins)."""
    env: dict[str, EnvVar] = {}
    for holder, key in ((service, "envs"), (main, "env")):
        for item in items(get(holder, key)):
            nm = get_str(item, "name")
            if not nm:
                continue
            value = get(item, "value")
            env[nm] = (EnvVar(nm, value.value, doc.span(value)) if is_scalar(value)
                       else EnvVar(nm, None, doc.span(get(item, "name"))))
    return env


def _argv(doc: Doc, main: Any, env: dict[str, EnvVar]) -> list[list[Word]]:
    """The command lines the main container runs: its exec-form ``command`` + ``args``, or the
    simple commands of a ``sh -c`` script."""
    from .kubernetes import _words

    words = _words(doc, get(main, "command"), env) + _words(doc, get(main, "args"), env)
    if len(words) >= 3 and posixpath.basename(words[0].text) in _SHELLS and \
            words[1].text.startswith("-") and "c" in words[1].text[1:]:
        script = words[2]

        def resolve(name: str) -> str | None:
            var = env.get(name)
            return var.value if var is not None else None

        out: list[list[Word]] = []
        for cmd in split_commands(script.text, resolve):
            if cmd.problems:
                return []  # the shell's syntax error is not this module's to report
            out.append([compose_word(w, script) for w in cmd.words])
        return out
    return [words]


def _dynamo_vllm(words: list[Word]) -> int | None:
    """Index of the first engine argument when ``words`` run ``python -m dynamo.vllm``."""
    i = 0
    while i < len(words) and words[i].text in ("exec", "nohup", "setsid"):
        i += 1
    if i >= len(words) or not _PYTHON.match(posixpath.basename(words[i].text)):
        return None
    i += 1
    while i < len(words):
        t = words[i].text
        if t == "-m":
            return i + 2 if i + 1 < len(words) and words[i + 1].text == VLLM_MODULE else None
        if t == "-m" + VLLM_MODULE:
            return i + 1
        if not t.startswith("-") or t.startswith("-m"):
            return None
        i += 1
    return None


def _engine_args(words: list[Word]) -> list[Word]:
    """vLLM's words of a ``dynamo.vllm`` command line: Dynamo's options taken out; an option
    neither Dynamo nor vLLM knows is left out with what follows it up to the next option, and
    a marker takes its place (the engine may get any setting from it)."""
    out: list[Word] = []
    i = 0
    n = len(words)
    while i < n:
        w = words[i]
        t = w.text
        if t == "--":
            out.extend(words[i:])
            break
        name = t.split("=", 1)[0] if t.startswith("--") else t
        nargs = DYNAMO_FLAGS.get(name) if t.startswith("--") else None
        if nargs is None and t.startswith("--") and not _is_vllm_flag(name):
            # an option of a Dynamo release not read, or a typo: what it takes is unknown
            out.append(_marker(w, name.lstrip("-")))
            nargs = "*"
        if nargs is None:
            out.append(w)
            i += 1
            continue
        i += 1
        if "=" in t or nargs == 0:
            continue
        if nargs in (1, "?"):
            if i < n and (nargs == 1 or not words[i].text.startswith("-")):
                i += 1
            continue
        while i < n and not words[i].text.startswith("-"):
            i += 1
    return out


def _marker(at: Word, name: str) -> Word:
    """Words the engine may get that the linter does not know (none, one or several)."""
    text = "$" + name
    span = at.span
    return Word(text, CharMap.table([span.start] * len(text), [span.end] * len(text), span.end),
                False, (VarRef(name, span, split=True),))


def _gpus(doc: Doc, service: Any) -> GpuRequest | None:
    for section in ("limits", "requests"):
        item = get(service, "resources", section)
        node = get(item, "gpu")
        if not is_scalar(node):
            continue
        gpu_type = get_str(item, "gpuType") or "nvidia.com/gpu"
        if gpu_type not in ("nvidia.com/gpu", "amd.com/gpu"):
            return None  # another device plugin's resource: not a GPU the catalogs know
        value = node.value.strip()
        return GpuRequest(int(value) if value.isdigit() else None,
                          f"Dynamo resources.{section}.gpu", doc.span(node),
                          "amd" if gpu_type == "amd.com/gpu" else "nvidia")
    return None


# internal/consts/consts.go DefaultSharedMemorySize: the operator mounts an emptyDir on /dev/shm
_DEFAULT_SHM = (Located("Dynamo operator: shared-memory emptyDir on /dev/shm (8Gi)"), 8 << 30)


def _shm(doc: Doc, service: Any) -> tuple[Located | None, int | None]:
    shared = get(service, "sharedMemory")
    disabled = get(shared, "disabled")
    if is_scalar(disabled) and disabled.value.strip().lower() == "true":
        return None, None
    size = get(shared, "size")
    if is_scalar(size) and size.value.strip():
        return (Located(f"Dynamo sharedMemory (size {size.value})", doc.span(size), doc.source),
                parse_size(size.value))
    return _DEFAULT_SHM


def _workers(doc: Doc, name: Located, holder: Any, main: Any, pod: Any,
             env: dict[str, EnvVar], gpus: GpuRequest | None,
             shm: tuple[Located | None, int | None], base: Context, found: Found) -> None:
    for words in _argv(doc, main, env):
        start = _dynamo_vllm(words)
        if start is None:
            continue
        found.launches.append(_launch(doc, name, holder, main, pod, base, env, gpus, shm,
                                      words[start - 1], tuple(_engine_args(words[start:]))))


def _launch(doc: Doc, name: Located, holder: Any, main: Any, pod: Any, base: Context,
            env: dict[str, EnvVar], gpus: GpuRequest | None,
            shm: tuple[Located | None, int | None], program: Word,
            args: tuple[Word, ...]) -> Launch:
    from .kubernetes import _node_labels

    replicas = get(holder, "replicas")
    nodes = get(holder, "multinode", "nodeCount")
    multinode = is_scalar(nodes) and nodes.value.strip().isdigit() and int(nodes.value) > 1
    image = get(main, "image")
    ctx = Context(
        kind="k8s",
        container_name=name,
        object_kind=base.object_kind,
        object_name=base.object_name,
        object_span=base.object_span,
        namespace=base.namespace,
        annotations=base.annotations,
        role=MULTI_NODE_LEADER if multinode else "dynamo-worker",
        # with nodeCount > 1 the leader's engine spans nodeCount pods (Ray, or mp with
        # --nnodes, backend_vllm.go updateVLLMMultinodeArgs): the GPUs are the group's and
        # each pod holds the service's `gpu`
        ray_cluster=multinode,
        replicas=(Located(replicas.value, doc.span(replicas), doc.source)
                  if is_scalar(replicas) else None),
        image=(Located(image.value, doc.span(image), doc.source) if is_scalar(image) else None),
        gpus=gpus,
        node_labels=_node_labels(doc, pod),
        shm=shm[0],
        shm_size_bytes=shm[1],
        # component_worker.go GetBaseContainer (the leader keeps them)
        probes=("livenessProbe", "readinessProbe", "startupProbe"),
    )
    return Launch(
        source=doc.source,
        engine=VLLM,
        entry=ENTRY_VLLM_API_SERVER,
        program=program,
        args=args,
        env=env,
        context=ctx,
        list_form=True,
        operator="Dynamo",
        serves_api=False,
    )


__all__ = ["DYNAMO_FLAGS", "extract_dgd", "is_dgd"]
