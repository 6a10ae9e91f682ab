"""One interface per engine: what the rest of the linter may ask of an engine.

An ``Engine`` holds the engine's flag catalog (per release), its argument walker, and the facts
rules print or branch on — how it names itself, its default port and bind address, how it takes
an API key, where it caches downloads — plus the *capabilities* it has.  Rules declare the
capabilities they need (``@rule(..., needs={VLLM_ARGS})``) and never test an engine by name; the
runner runs a rule only on launches whose engine has every capability it needs.

Adding an engine means a flag catalog, a module with its walker and its ``ENGINE``, and an entry
in ``ENGINES`` (``engines/__init__.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING
from ..records import dataclass, fields

if TYPE_CHECKING:
    from ..deployment import Deployment
    from ..findings import Finding
    from ..launch import Launch
    from .catalog import FlagCatalog, VersionChoice
    from .invocation import Invocation

    Parse = Callable[[Launch, "str | None", Mapping[str, tuple[str, ...]]],
                     tuple[Invocation, list[Finding]]]

# ---------------------------------------------------------------------------- capabilities
# An OpenAI-compatible HTTP API on ``--host``/``--port`` (health endpoint, API key).
HTTP_API = "http-api"
# A raw tensor backend for other processes (no authentication): llama.cpp's RPC server.
RPC_WORKER = "rpc-worker"
# Tensor/pipeline/data/context-parallel sizes as vLLM defines them: ``Deployment.layout``.
PARALLEL_LAYOUT = "parallel-layout"
# vLLM's engine arguments and start-up checks: its memory budget, LoRA, expert parallelism,
# scheduler limits, the flags each release accepts (vllm/engine/arg_utils.py EngineArgs).
VLLM_ARGS = "vllm-args"
# llama.cpp's common arguments: layer offload (-ngl), -ts/-sm split, --fit, -c/-np, RPC
# devices (common/arg.cpp).
LLAMA_ARGS = "llama-args"

# The engine states which GPUs of its node it uses (``Deployment.layout``: vLLM's Layout, or
# the one ``Engine.layout`` builds), so the GPU count can be checked against them (MG101).
GPU_LAYOUT = "gpu-layout"

# SGLang's server arguments and start-up checks (sglang/srt/server_args.py ServerArgs).
SGLANG_ARGS = "sglang-args"

CAPABILITIES = frozenset({HTTP_API, RPC_WORKER, GPU_LAYOUT, PARALLEL_LAYOUT, VLLM_ARGS,
                          LLAMA_ARGS, SGLANG_ARGS})


@dataclass(frozen=True)
class Bind:
    """The address a server binds when the launch states none, and why."""

    host: str  # "" is every interface (vLLM passes (host or "", port) to the server)
    why: str


@dataclass(frozen=True)
class Engine:
    name: str  # Launch.engine
    display: str  # how messages name it: "vLLM", "llama-server", "the llama.cpp RPC server"
    label: str  # the short form in exposure messages: "vLLM", "llama-server", "the RPC server"
    capabilities: frozenset[str]
    parse: "Parse"
    catalog: Callable[[str], "FlagCatalog"]  # the flag catalog of a release
    default_port: int
    host_flag: str  # the spelling of the bind-address flag in hints ("--host", "-H")
    # the bind address without a host flag; None when it cannot be known (a custom image)
    default_bind: Callable[["Deployment"], Bind | None]
    api_key_env: tuple[str, ...] = ()  # environment variables that set the API key
    api_key_settings: tuple[str, ...] = ()  # settings that set it besides `api_key`
    # the flag that sets an API key, for hints; None: the server has no authentication at all
    api_key_flag: str | None = "--api-key"
    # the paths the server answers to GET, where they are few and fixed (vLLM's demo server);
    # None: not listed, and no probe's path is judged
    get_routes: tuple[str, ...] | None = None
    # engine-specific download-cache variables, before the Hugging Face ones: (name, subdir)
    cache_env: tuple[tuple[str, str], ...] = ()
    download_dir_key: str | None = None  # the setting that names the download directory
    # settings that download the model at start, and from where ("the Hugging Face Hub" …)
    hub_settings: tuple[tuple[str, str], ...] = ()
    hub_model_ref: bool = False  # a model reference of the form org/name is downloaded
    other_hub_env: tuple[str, ...] = ()  # variables that switch to another model hub
    # whether a launch starts no API server (a worker rank of a multi-node engine): rules
    # about the API's readiness do not apply; None: every launch serves the API
    no_api: Callable[["Deployment"], bool] | None = None
    # an engine with GPU arithmetic of its own (not vLLM's PARALLEL_LAYOUT): the layout object
    # ``Deployment.layout`` holds for it: ``needed_text()``, ``formula()``, ``short_of(have)``,
    # ``sizes()`` as resolve.Layout has them, plus ``gpus_used`` (the distinct GPUs, fewer than
    # ``gpus_per_node`` when it starts past GPU 0); the GPU_LAYOUT rules (MG101) compare it
    # with the launch's GPUs
    layout: Callable[["Invocation", "Launch"], object] | None = None
    # the catalogued release the launch itself names (an image tag), for engines whose
    # checks differ per release and that vLLM's version_pin does not cover; None: unknown
    release_pin: Callable[["Launch"], str | None] | None = None
    # engines whose release comes from `engines.release_for` (version_pin, --target-version,
    # the configuration): the catalogued release a requested one is checked against
    choose_release: Callable[[str | None], "VersionChoice"] | None = None

    def has(self, *capabilities: str) -> bool:
        return self.capabilities.issuperset(capabilities)

    def __hash__(self) -> int:
        """The hash of the fields, as a frozen record has it, computed once: an engine keys the
        per-launch look-ups of ``rules.checks_for``, ``settings_read`` and ``checks_stating``
        (24 fields hashed several times per launch)."""
        found = self.__dict__.get("_hash")
        if found is None:
            found = self.__dict__["_hash"] = hash(tuple(getattr(self, f.name)
                                                        for f in fields(self)))
        return found  # type: ignore[no-any-return]
