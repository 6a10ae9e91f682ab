"""NVIDIA Dynamo ``DynamoGraphDeployment`` (nvidia.com/v1alpha1): each service whose main
container runs ``python3 -m dynamo.vllm …`` is a vLLM engine, ``python3 -m dynamo.sglang …``
an SGLang engine.

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

What ``python3 -m dynamo.sglang`` accepts (components/src/dynamo/sglang/args.py ``parse_args``
at 010ba752; the older single-parser layout with ``DYNAMO_ARGS`` and ``--config-key``, read in
the same file's history): Dynamo's runtime and SGLang-wrapper options (``DynamoRuntimeArgGroup``,
``DynamoSGLangArgGroup`` in sglang/backend_args.py) are parsed first with ``parse_known_args``
— SGLang's options are only shown in that parser's help (appended to a group's
``_group_actions``), so they are not its options — then the router-advertisement flags
(``parse_worker_router_config``, imported by that args.py from
common/configuration/groups/router_args.py; ``--router-*`` options, not listed here: each is an
unknown-words marker), and the
rest goes to a parser built by SGLang's own ``ServerArgs.add_cli_args`` (``parse_args``: what
SGLang refuses, Dynamo refuses).  Dynamo's options are taken out (``DYNAMO_SGLANG_FLAGS``, the
union of the releases read); an option neither Dynamo's nor SGLang's is left out with an
unknown-words marker, as for vLLM.  ``--enable-multimodal`` is Dynamo's (it forwards it).

With ``multinode.nodeCount`` > 1 the operator appends ``--dist-init-addr <leader>:29500
--nnodes N --node-rank R`` to each pod's command (backend_sglang.go ``getMultinodeFlags`` at
015d780b; injectFlagsIntoContainerCommand appends them to an exec-form ``args``, and in a
``sh -c`` script inserts them at the end of the Python command, before any shell operator):
they come after the user's words and win (argparse keeps the last).  The launch read here is
the leader's (rank 0); the words the operator adds point at ``nodeCount``.  Every pod runs the
engine on its own ``gpu`` GPUs, so no Ray cluster is assumed.

Image and video diffusion workers (``--image-diffusion-worker``, ``--video-generation-worker``:
their engine arguments go to SGLang's diffusion ServerArgs, not the LLM server's),
TensorRT-LLM workers (``dynamo.trtllm``) and the frontend give no launch.
"""

from __future__ import annotations

import posixpath
from functools import lru_cache
from typing import Any

from ..engines.catalog import SGLANG_VERSIONS, sglang_catalog, vllm_catalog, vllm_versions
from ..launch import (
    ENTRY_DYNAMO_SGLANG,
    ENTRY_VLLM_API_SERVER,
    MULTI_NODE_LEADER,
    PYTHON_PROGRAM,
    SGLANG,
    VLLM,
    Context,
    EnvVar,
    GpuRequest,
    Launch,
    Located,
)
from ..shell import split_commands
from ..source import CharMap, VarRef, Word, unknown_words
from .commandline import Found, WordComposer, parse_size
from .yamlnodes import Doc, get, get_str, is_map, is_scalar, items, pairs

DYNAMO_API = "nvidia.com/"
DGD_KINDS = ("DynamoGraphDeployment",)
VLLM_MODULE = "dynamo.vllm"
SGLANG_MODULE = "dynamo.sglang"
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


# Dynamo's own options of `python3 -m dynamo.sglang` (same value convention).  Runtime
# options: common/configuration/groups/runtime_args.py DynamoRuntimeArgGroup (007ec174;
# --endpoint-types keeps its obsolete spelling --dyn-endpoint-types); SGLang-wrapper options:
# sglang/backend_args.py DynamoSGLangArgGroup (02ae17cc, and the later release with
# --enable-multimodal/--dedicated-mm-encoder/--enable-rl/--sglang-trace-level); the older
# sglang/args.py DYNAMO_ARGS (--migration-limit, --store-kv, --config-key, store_true flags).
_SGL_BOOL = ("--fpm-trace", "--exclude-tools-when-tool-choice-none",
             "--multimodal-embedding-cache-publisher", "--tcp-tls-insecure",
             "--nats-tls-insecure", "--dyn-enable-structural-tag",
             "--use-sglang-tokenizer", "--multimodal-processor", "--multimodal-encode-worker",
             "--multimodal-worker", "--embedding-worker", "--image-diffusion-worker",
             "--video-generation-worker", "--enable-multimodal", "--dedicated-mm-encoder",
             "--enable-rl", "--frontend-decoding")
_SGL_VALUE = ("--namespace", "--endpoint", "--kv-state-endpoint", "--discovery-backend",
              "--request-plane", "--response-plane", "--event-plane", "--dyn-tool-call-parser",
              "--dyn-reasoning-parser", "--dyn-default-thinking-mode",
              "--dyn-structural-tag-scope", "--dyn-structural-tag-schema",
              "--custom-jinja-template", "--endpoint-types", "--dyn-endpoint-types",
              "--dump-config-to", "--multimodal-embedding-cache-capacity-gb",
              "--media-output-fs-url", "--media-output-http-url", "--health-check-payload",
              "--engine-request-limit", "--tcp-tls-cert-path", "--tcp-tls-key-path",
              "--tcp-tls-ca-cert-path", "--tcp-tls-server-name", "--tcp-tls-handshake-timeout",
              "--tcp-tls-client-cert-path", "--tcp-tls-client-key-path",
              "--tcp-tls-client-ca-cert-path", "--nats-tls-ca-cert-path",
              "--nats-tls-client-cert-path", "--nats-tls-client-key-path",
              "--migration-limit", "--store-kv", "--config-key", "--disagg-config",
              "--disagg-config-key", "--afd-attention-ratio", "--afd-ffn-endpoint",
              "--afd-microbatch-size", "--afd-sync-timeout-ms", "--embedding-transfer-mode",
              "--sglang-trace-level")
DYNAMO_SGLANG_FLAGS: dict[str, int | str] = {
    **{f: 0 for f in _SGL_BOOL},
    **{"--no-" + f[2:]: 0 for f in _SGL_BOOL},
    **{f: 1 for f in _SGL_VALUE},
    "--connector": "*", "--output-modalities": "*",
    "--dyn-structural-tag": "?",
}
# backend_sglang.go SglangPort: the leader's --dist-init-addr port
_SGLANG_DIST_PORT = "29500"


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


@lru_cache(maxsize=1)
def _sglang_names() -> frozenset[str]:
    """Every option spelling of every catalogued SGLang release."""
    names: set[str] = set()
    for version in SGLANG_VERSIONS:
        for opt in sglang_catalog(version).options:
            names.update(opt.names)
    return frozenset(names)


def _is_sglang_flag(flag: str) -> bool:
    """A spelling SGLang's argparse parser may accept: a name or a prefix of one (exact
    spellings, allow_abbrev on; engines/sglang.py)."""
    names = _sglang_names()
    return flag in names or (flag.startswith("--") and len(flag) > 3
                             and any(n.startswith(flag) for n in names))


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
    from .kubernetes import add_env_entries

    env: dict[str, EnvVar] = {}
    for holder, key in ((service, "envs"), (main, "env")):
        add_env_entries(doc, get(holder, key), env)
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
        compose_word = WordComposer(script)
        for cmd in split_commands(script.text, resolve, budget=doc.source.budget,
                                  cmap=script.cmap):
            if cmd.problems:
                return []  # the shell's syntax error is not this module's to report
            out.append([compose_word(w) for w in cmd.words])
        return out
    return [words]


def _dynamo_module(words: list[Word]) -> tuple[int, str] | None:
    """Index of the first engine argument and the module when ``words`` run ``python -m
    dynamo.vllm`` or ``python -m dynamo.sglang``."""
    i = 0
    while i < len(words) and words[i].text in ("exec", "nohup", "setsid"):
        i += 1
    if i >= len(words) or not PYTHON_PROGRAM.match(posixpath.basename(words[i].text)):
        return None
    i += 1
    while i < len(words):
        t = words[i].text
        if t == "-m":
            if i + 1 < len(words) and words[i + 1].text in (VLLM_MODULE, SGLANG_MODULE):
                return i + 2, words[i + 1].text
            return None
        if t in ("-m" + VLLM_MODULE, "-m" + SGLANG_MODULE):
            return i + 1, t[2:]
        if not t.startswith("-") or t.startswith("-m"):
            return None
        i += 1
    return None


def _engine_args(words: list[Word], module: str = VLLM_MODULE) -> list[Word]:
    """The engine's words of a ``dynamo.vllm``/``dynamo.sglang`` command line: Dynamo's
    options taken out; an option neither Dynamo nor the engine knows is left out with what
    follows it up to the next option, and a marker takes its place (the engine may get any
    setting from it)."""
    sglang = module == SGLANG_MODULE
    flags = DYNAMO_SGLANG_FLAGS if sglang else DYNAMO_FLAGS
    known = _is_sglang_flag if sglang else _is_vllm_flag
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
        nargs = flags.get(name) if t.startswith("--") else None
        if sglang and name == "--load-format" and (
                t == "--load-format=gms" or
                (t == name and i + 1 < n and words[i + 1].text == "gms")):
            # args.py parse_args adds "gms" to SGLang's --load-format choices; main.py then
            # loads the weights through Dynamo's GPU Memory Service loader
            i += 1 if "=" in t else 2
            continue
        if sglang and name == "--disagg-config":
            # args.py parse_args: the file's section becomes SGLang's `--config <tmp>`, whose
            # settings SGLang merges under the command line's (ConfigArgumentMerger)
            out.append(_marker(w, "disagg-config"))
        if nargs is None and t.startswith("--") and sglang and name not in _sglang_names() \
                and len(name) > 3 and any(f.startswith(name) for f in flags):
            # Dynamo's parser (allow_abbrev, its own options only) takes a prefix of one of
            # its options; which one, in a release not read, is not known
            out.append(_marker(w, name.lstrip("-")))
            nargs = "*"
        elif nargs is None and t.startswith("--") and not known(name):
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
    return unknown_words(at.span, name)


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
        hit = _dynamo_module(words)
        if hit is None:
            continue
        start, module = hit
        if module == SGLANG_MODULE and _diffusion_worker(words[start:]):
            continue
        args = _engine_args(words[start:], module)
        if module == SGLANG_MODULE:
            args += _sglang_multinode(doc, holder)
        found.launches.append(_launch(doc, name, holder, main, pod, base, env, gpus, shm,
                                      words[start - 1], tuple(args), module))


# args.py parse_args: an image or video diffusion worker's engine arguments are parsed by SGLang's
# diffusion ServerArgs (diffusion_args.py parse_diffusion_args), another parser than the LLM
# server's that the catalogs hold: such a worker gives no launch
_DIFFUSION_FLAGS = ("--image-diffusion-worker", "--video-generation-worker")


def _diffusion_worker(words: list[Word]) -> bool:
    on = False
    for w in words:
        if w.text in _DIFFUSION_FLAGS:
            on = True
        elif w.text in ("--no-" + f[2:] for f in _DIFFUSION_FLAGS):
            on = False  # add_negatable_bool_argument: the last one wins
    return on


def _sglang_multinode(doc: Doc, holder: Any) -> list[Word]:
    """The words the operator adds to the leader's SGLang command with ``nodeCount`` > 1
    (backend_sglang.go getMultinodeFlags): ``--dist-init-addr <leader>:29500 --nnodes N``; the
    leader's host name is the deployer's (Grove or LWS), unknown here.  Its ``--node-rank 0``
    is SGLang's default (ServerArgs.node_rank = 0), so it is left out: a word "0" placed at
    ``nodeCount`` would not be the text there."""
    nodes = get(holder, "multinode", "nodeCount")
    if not (is_scalar(nodes) and nodes.value.strip().isdigit() and int(nodes.value) > 1):
        return []
    span = doc.span(nodes)
    addr = _marker_at(span, "dynamo_leader_hostname", ":" + _SGLANG_DIST_PORT)
    return [_word_at(span, "--dist-init-addr"), addr, _word_at(span, "--nnodes"),
            _word_at(span, nodes.value.strip())]


def _word_at(span: Any, text: str) -> Word:
    """A word the operator adds to the command, shown at the field that makes it add it."""
    return Word(text, CharMap.table([span.start] * len(text), [span.end] * len(text), span.end),
                False, ())


def _marker_at(span: Any, name: str, tail: str) -> Word:
    text = "$" + name + tail
    return Word(text, CharMap.table([span.start] * len(text), [span.end] * len(text), span.end),
                False, (VarRef(name, span, split=False),))


def _launch(doc: Doc, name: Located, holder: Any, main: Any, pod: Any, base: Context,
            env: dict[str, EnvVar], gpus: GpuRequest | None,
            shm: tuple[Located | None, int | None], program: Word,
            args: tuple[Word, ...], module: str = VLLM_MODULE) -> Launch:
    from .kubernetes import _node_labels

    replicas = get(holder, "replicas")
    nodes = get(holder, "multinode", "nodeCount")
    multinode = is_scalar(nodes) and nodes.value.strip().isdigit() and int(nodes.value) > 1
    sglang = module == SGLANG_MODULE
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
        # SGLang: each pod runs the engine with its --node-rank on its own GPUs
        ray_cluster=multinode and not sglang,
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
        engine=SGLANG if sglang else VLLM,
        entry=ENTRY_DYNAMO_SGLANG if sglang else ENTRY_VLLM_API_SERVER,
        program=program,
        args=args,
        env=env,
        context=ctx,
        list_form=True,
        operator="Dynamo",
        serves_api=False,
    )


__all__ = ["DYNAMO_FLAGS", "DYNAMO_SGLANG_FLAGS", "extract_dgd", "is_dgd"]
