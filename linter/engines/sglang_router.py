"""`python -m sglang_router.launch_server`: SGLang's router starting its own SGLang workers.

``main()`` of sglang_router/launch_server.py (sglang-router 0.2.2 and 0.3.2) builds one plain
``argparse.ArgumentParser`` holding the installed SGLang's options (``ServerArgs.add_cli_args``)
and the router's (``RouterArgs.add_cli_args(parser, use_router_prefix=True,
exclude_host_port=True)``: every router option spelled ``--router-…`` except
``--worker-urls``, plus ``--router-dp-worker-base-port``), so the words are read by SGLang's
walker (engines/sglang.py) against SGLang's catalog of the release with the router options
added (linter/catalog/flags/sglang-router-<release>.json, scripts/sglang_router_catalog.py).

What the router does with them (launch_server.py, 0.3.2):

- ``ServerArgs.from_cli_args`` takes the server part; ``launch_server_process`` starts
  ``server_args.dp_size`` SGLang servers, each a deep copy with ``port`` set to a free port from
  ``--router-dp-worker-base-port`` (31000), ``base_gpu_id = dp_id × tp_size`` and
  ``dp_size = 1``, then the router itself;
- ``RouterArgs.from_cli_args(args, use_router_prefix=True)`` takes ``router_<field>`` and,
  where no such option exists, the server option of the same name: the router listens on
  SGLang's ``--host`` (default 127.0.0.1) and ``--port`` (30000), the workers on ``--host`` too.
  ``--router-api-key`` is "the api key used for the authorization with the worker" (no key
  clients must send); the workers' key is SGLang's ``--api-key``.

The release is the SGLang image's (an ``lmsysorg/sglang:vX.Y.Z`` tag, as for SGLang's own
entry points); the router's options are those of sglang-router 0.3.2, whose release no image
tag names: a ``--router-…`` word it does not know is never an error.

`python -m sglang_router.launch_router` (and the console scripts' ``launch``) starts only the
router, in front of workers started elsewhere: no engine launch (sources/commandline.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from ..findings import Finding, Severity
from ..launch import SGLANG_ROUTER, Launch
from ..records import replace
from . import sglang as sg
from .adapter import GPU_LAYOUT, HTTP_API, Bind, Engine
from .catalog import SGLANG_VERSIONS, FlagCatalog, _read
from .invocation import Builder, Invocation

ROUTER_RELEASE = "0.3.2"  # the sglang-router release whose options are catalogued
ROUTER_PREFIX = "--router-"


@cache
def router_catalog(version: str = SGLANG_VERSIONS[-1]) -> FlagCatalog:
    """SGLang ``version``'s options and the router's, as launch_server.main's one parser."""
    if version not in SGLANG_VERSIONS:
        version = SGLANG_VERSIONS[-1]
    server = _read(f"sglang-{version}.json")
    router = _read(f"sglang-router-{ROUTER_RELEASE}.json")
    return FlagCatalog(replace(server, options=server.options + router.options))


class _RouterWalker(sg._Walker):
    """SGLang's walker over the router's parser: the same argparse, more options."""

    def __init__(self, launch: Launch, b: Builder, catalog: FlagCatalog, pinned: bool) -> None:
        super().__init__(launch, b, catalog, pinned)
        self.others = [router_catalog(v) for v in SGLANG_VERSIONS if v != catalog.version]

    def _unknown_flag(self, i: int) -> int:
        word = self.words[i]
        written = word.text.partition("=")[0]
        if word.unresolved or not written.startswith(ROUTER_PREFIX):
            return super()._unknown_flag(i)
        # the router's options change between sglang-router releases and nothing in the launch
        # says which one runs: a warning when the word is close to a known one, else
        # information
        suggestion = _router_suggestion(self.catalog, written)
        self.b.report(
            "MG004", Severity.WARNING if suggestion else Severity.INFO,
            f"unknown router flag {written}: sglang-router {ROUTER_RELEASE} exits "
            "(unrecognized arguments)" + (f"; did you mean {suggestion}?" if suggestion else
                                          "; another sglang-router release may accept it"),
            word.sub(0, len(written)))
        return self._skip_values(i + 1) if "=" not in word.text else i + 1


    def _set(self, spec: Any, written: str, flag_span: Any, items: list) -> None:
        if spec.choices is not None and (written.startswith(ROUTER_PREFIX) or
                                         spec.key == "worker_urls"):
            # a router option's choices are sglang-router 0.3.2's, whatever the image pins:
            # a value outside them is a warning
            for w, start in items:
                text = w.text[start:]
                if self.b.unresolved_in(w, w.sub(start)):
                    break
                _, error, choice = sg._convert(spec, text)
                if error is not None and choice:
                    self.b.report(
                        "MG006", Severity.WARNING,
                        f"invalid value for {written}: {error}; sglang-router "
                        f"{ROUTER_RELEASE} exits (argparse; nothing in the launch names the "
                        "router's release, and another may differ)", w.sub(start))
                    self._stated(spec, written, flag_span, known=False)
                    return
        super()._set(spec, written, flag_span, items)


def _router_suggestion(catalog: FlagCatalog, written: str) -> str | None:
    """The closest router option, compared without the `--router-` every one shares (else
    `--router-brand-new` is "close" to `--router-backend`)."""
    import difflib

    tails = {n[len(ROUTER_PREFIX):]: n for n in catalog.by_spelling if n.startswith(ROUTER_PREFIX)}
    close = difflib.get_close_matches(written[len(ROUTER_PREFIX):], tails, n=1, cutoff=0.75)
    return tails[close[0]] if close else None


def parse_router(launch: Launch, version: str | None,
                 needed: Mapping[str, tuple[str, ...]]) -> tuple[Invocation, list[Finding]]:
    """``version`` (vLLM's target-version) is a vLLM fact: not used."""
    return sg.parse_with(launch, needed, SGLANG_ROUTER, router_catalog, _RouterWalker)


def _layout(inv: Invocation, launch: Launch) -> object:
    """The workers' GPUs: dp servers of tp × pp, server r from GPU r × tp (its base_gpu_id,
    whatever --base-gpu-id says) with dp 1 each (launch_server_process, 0.3.2), each placing
    its schedulers as SGLang does (facts/sglang_layout.py).  Known only where that is the
    SGLang layout of dp replicas with a base of 0: one node, pp 1, GPU step 1 (with pp > 1 or
    a larger step server r + 1 starts inside server r's GPUs), no dp attention."""
    from ..facts.sglang_layout import SGLangLayout
    from ..resolve import Size, parallel_size

    tp, ok1 = parallel_size(inv.tensor_parallel_size)
    pp, ok2 = parallel_size(inv.pipeline_parallel_size)
    dp, ok3 = parallel_size(inv.data_parallel_size)
    nnodes, ok4 = parallel_size(inv.nnodes)
    step, ok5 = parallel_size(inv.setting("gpu_id_step"))
    attention = inv.setting("enable_dp_attention")
    ok = all((ok1, ok2, ok3, ok4, ok5)) and attention.known and not attention.value and \
        pp.value == 1 and step.value == 1 and nnodes.value == 1
    return SGLangLayout(tp, pp, dp, nnodes, Size(0, False, None), step, False, ok)


def _default_bind(d: Any) -> Bind:
    # RouterArgs.from_cli_args falls back to the server's `host` (no --router-host:
    # exclude_host_port=True); ServerArgs.host = "127.0.0.1" (server_args.py, 0.5.5)
    return Bind("127.0.0.1", "SGLang's default, which the router takes")


ENGINE = Engine(
    name=SGLANG_ROUTER, display="the SGLang router", label="SGLang router",
    # SGLANG_ARGS (SGLang's start-up checks) is not claimed: the workers run with dp_size 1
    # and a base GPU of the router's choosing, so checks of dp against tp or nodes read
    # differently; GPU_LAYOUT is the workers' placement above
    capabilities=frozenset({GPU_LAYOUT, HTTP_API}),
    parse=parse_router, catalog=router_catalog,
    default_port=30000,  # the router's port is ServerArgs.port (from_cli_args, 0.3.2)
    host_flag="--host", default_bind=_default_bind,
    # --api-key is the workers' key, and the router passes the client's request on to them.
    # --router-api-key is not a key clients must send: it is "the api key used for the
    # authorization with the worker" (sglang_router/router.py Router, 0.3.2; the Rust core
    # warns "Adding worker without API key while router has API key configured"), so it does
    # not silence the API-key rule. --router-control-plane-api-keys and --router-jwt-* build
    # the router's own authentication (router.py build_control_plane_auth_config; JWT only
    # with both issuer and audience), whose reach over the inference routes was not read:
    # either keeps the rule silent
    api_key_settings=("router_control_plane_api_keys", "router_jwt_issuer"),
    hub_model_ref=True, layout=_layout, release_pin=sg.pinned_release,
)
