"""`python -m vllm.entrypoints.api_server`: vLLM's demo server, a variant of the vLLM adapter.

vllm/entrypoints/api_server.py (read in the 0.6.6.post1, 0.7.3, 0.8.5.post1, 0.9.2, 0.10.2 and
0.24.0 wheels) says of itself "used only for demonstrating usage of AsyncEngine and simple
performance benchmarks. It is not intended for production use".  Its ``__main__`` builds a
plain ``FlexibleArgumentParser()`` with nine options of its own (--host, --port, --ssl-keyfile,
--ssl-certfile, --ssl-ca-certs, --enable-ssl-refresh from the 0.8 line on, --ssl-cert-reqs,
--root-path, --log-level: ``linter/catalog/flags/demo-api-server-<release>.json``) and then
``AsyncEngineArgs.add_cli_args(parser)``: the engine arguments of the release, which are the
options of vLLM's catalogs not marked ``frontend`` (scripts/vllm_catalog.py marks what the
OpenAI server's front end registers).  So the words are read by vLLM's walker against that
catalog; what differs:

- no positional argument at all: a positional model is "unrecognized arguments" in every
  release (MG016, as for the OpenAI api_server module up to 0.9.2);
- a front-end option (`--api-key`, `--served-model-name` before it moved to the engine
  arguments, `--chat-template` …) is not accepted: MG004 says it belongs to `vllm serve`;
- FlexibleArgumentParser.parse_args still reads `--config FILE`, `-O3` and dotted keys before
  argparse (vllm/utils.py 0.6.6.post1 and 0.8.5.post1, vllm/utils/__init__.py 0.9.2 and 0.10.2,
  vllm/utils/argparse_utils.py 0.24.0), and argparse adds -h: those stay;
- the app has two routes, ``@app.get("/health")`` and ``@app.post("/generate")``, and no
  authentication: no --api-key, and ``VLLM_API_KEY`` is read only by the OpenAI server;
- the module is absent from the 0.25.0, 0.25.1, 0.26.0 and 0.33.0 wheels (removed after 0.24):
  a launch pinned there exits with "No module named vllm.entrypoints.api_server" (MG004, as
  a removed flag is); without a pin, its flags are checked against 0.24.0, the last release
  that has it, with a warning that a current vLLM has no such module.

Not modelled: from the 0.8 line ``--port`` is ``parser.check_port`` (1024-65535).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from ..findings import Finding, Severity
from ..launch import ENTRY_VLLM_DEMO, VLLM_DEMO, Launch
from ..records import replace
from ..source import Word
from . import vllm
from .adapter import Bind
from .catalog import (
    CatalogFile,
    FlagCatalog,
    VersionChoice,
    _read,
    choose_vllm_version,
    version_key,
    vllm_catalog,
    vllm_versions,
)
from .invocation import Builder, Invocation, ModelRef

# the last catalogued release whose wheel has vllm/entrypoints/api_server.py (0.24.0); the
# 0.25.0 wheel has none, nor 0.25.1, 0.26.0 or 0.33.0
LAST_RELEASE = "0.24.0"
FIRST_WITHOUT = "0.25.0"
# demo-api-server-<release>.json: the demo's own options of the releases up to <release>
OWN_RELEASES = ("0.7.3", "0.24.0")
# front-end keys the demo's parser has as well: argparse's -h/--help, and --config, which
# FlexibleArgumentParser.parse_args reads itself (_pull_args_from_config) in every release
KEPT = frozenset({"help", "config"})
NO_MODULE = f"No module named {ENTRY_VLLM_DEMO}"


def _own(release: str) -> CatalogFile:
    doc = _read(f"demo-api-server-{release}.json")
    return _own(doc.base).apply(doc) if doc.base is not None else doc


@cache
def demo_catalog(version: str = LAST_RELEASE) -> FlagCatalog:
    """The demo server's parser in vLLM ``version``: its own options and the release's engine
    arguments."""
    key = version_key(version)
    release = next((r for r in OWN_RELEASES if key <= version_key(r)), OWN_RELEASES[-1])
    own = _own(release).options
    engine = vllm_catalog(version)
    mine = {o.key for o in own} | {n for o in own for n in (*o.names, *o.neg)}
    options = tuple(o for o in engine.options
                    if (not o.frontend or o.key in KEPT) and o.key not in mine
                    and not any(n in mine for n in (*o.names, *o.neg))) + own
    return FlagCatalog(CatalogFile(engine=VLLM_DEMO, version=version,
                                   source=f"vllm {version}: vllm/entrypoints/api_server.py",
                                   options=options, retired=engine.retired))


def absent(requested: str | None) -> bool:
    """Whether the pinned release has no such module (``latest``: the newest has none)."""
    if requested == "latest":
        return True
    key = version_key(requested or "")
    return bool(key) and key[:2] >= version_key(FIRST_WITHOUT)[:2]


class _DemoWalker(vllm._Walker):
    module = ENTRY_VLLM_DEMO
    help_hint = f"run `python -m {ENTRY_VLLM_DEMO} --help` for the flag list"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.api_server = True  # the model comes from --model (EngineArgs)

    def entry_point(self) -> None:
        """MG004 (a warning) when nothing pins a release that has the module."""
        if not self.release_assumed or self.launch.operator is not None:
            return
        pin = self.launch.version_pin
        why = f"`{pin.value}` names no release" if pin is not None else \
            "nothing pins the release"
        self.b.report(
            "MG004", Severity.WARNING,
            f"python -m {ENTRY_VLLM_DEMO} (vLLM's demo server) was removed after vLLM "
            f"{LAST_RELEASE}: a current vLLM exits with \"{NO_MODULE}\"; {why}, so its "
            f"flags are checked against vLLM {LAST_RELEASE}",
            _module_span(self.launch),
            hint=f"pin vLLM {LAST_RELEASE} or earlier (image tag, pip pin, --target-version), "
                 "or run `vllm serve MODEL` (the OpenAI-compatible server)",
        )

    def _rejects_positional(self) -> bool:
        return True  # the demo's parser has no positional argument (every release)

    def _unknown_flag(self, i: int, spelling: str, written: str, flag_span: Any) -> int:
        word = self.words[i]
        serve = vllm_catalog(self.catalog.version).lookup(spelling)
        retired = self.catalog.retired_by_spelling.get(spelling)
        if retired is not None and _front_end(spelling, retired.last or retired.since):
            # another release's `vllm serve` front end has it, so it was never the demo's
            # option: not "removed" or "added later" here (the catalog learns it once)
            self.catalog.retired_by_spelling.pop(spelling)
        later = demo_catalog(LAST_RELEASE).lookup(spelling)
        if not word.unresolved and later is not None and \
                later.option.key not in self.catalog.by_key:
            # one of the demo's own options that this release's demo lacks (the 0.8 line
            # added --enable-ssl-refresh)
            self.b.report(
                "MG004", Severity.WARNING if self.substitute_for else Severity.ERROR,
                f"{written} is not an option of the demo server in vLLM {self.name}: it was "
                f"added later (vLLM {_first_with(later.option.key)} has it), so this one exits "
                "(unrecognized arguments)", flag_span,
                hint=f"drop {written}, or pin a later vLLM")
            return i + 1
        if word.unresolved or serve is None or not serve.option.frontend:
            return super()._unknown_flag(i, spelling, written, flag_span)
        key = serve.option.key == "api_key"
        self.b.report(
            "MG004", Severity.ERROR,
            f"{written} is an option of vLLM's OpenAI-compatible server (`vllm serve`), not of "
            f"python -m {ENTRY_VLLM_DEMO}: the demo server exits (unrecognized arguments)",
            flag_span,
            hint="the demo server has no API key: run `vllm serve MODEL --api-key …` for an "
                 "authenticated API" if key else
            f"drop {written}, or run `vllm serve MODEL` (the OpenAI-compatible server)",
        )
        return self._skip_values(i + 1) if serve.option.takes_value and "=" not in word.text \
            else i + 1


def _first_with(key: str) -> str:
    """The first catalogued release whose demo has its own option ``key``."""
    before = None
    for release in OWN_RELEASES:
        if any(o.key == key for o in _own(release).options):
            break
        before = release
    return next(v for v in vllm_versions()
                if before is None or version_key(v) > version_key(before))


def _front_end(spelling: str, release: str | None) -> bool:
    """Whether ``release``'s `vllm serve` registers ``spelling`` in its front end."""
    if release is None:
        return False
    match = vllm_catalog(release).lookup(spelling)
    return match is not None and match.option.frontend


def _module_span(launch: Launch) -> Any:
    word: Word = next((w for w in launch.prefix_args if w.text == ENTRY_VLLM_DEMO),
                      launch.program)
    return word.span


def parse_demo(launch: Launch, version: str | None,
               needed: Mapping[str, tuple[str, ...]]) -> tuple[Invocation, list[Finding]]:
    requested = version or (launch.version_pin.value if launch.version_pin else None)
    if absent(requested):
        return _absent(launch, requested or "latest", needed)
    names_release = _names_release(requested)
    return vllm.parse_with(launch, requested if names_release else None, choose(requested),
                           needed, VLLM_DEMO, demo_catalog, _DemoWalker)


def _names_release(requested: str | None) -> bool:
    return requested is not None and bool(version_key(requested))


def choose(requested: str | None) -> VersionChoice:
    """The release a demo launch is checked against: the pinned one as for vLLM, else the last
    release that has the module."""
    return choose_vllm_version(requested) if _names_release(requested) or absent(requested) \
        else VersionChoice(LAST_RELEASE)


def _absent(launch: Launch, requested: str,
            needed: Mapping[str, tuple[str, ...]]) -> tuple[Invocation, list[Finding]]:
    """A release without the module: python stops before any option is read, so no setting
    is known (the invocation is open) and only this is reported."""
    choice = choose(requested)
    b = Builder(launch, demo_catalog(choice.version), choice.version, dict(needed))
    span = _module_span(launch)
    newest = vllm_versions()[-1]
    checked = requested == "latest" or version_key(requested) <= version_key(newest)
    which = f"vLLM {newest} (`latest`)" if requested == "latest" else f"vLLM {requested}"
    b.report(
        "MG004", Severity.ERROR if checked else Severity.WARNING,
        f"{which} has no {ENTRY_VLLM_DEMO} module: python exits at once (\"{NO_MODULE}\"); "
        f"vLLM's demo server was removed after {LAST_RELEASE}",
        span, hint=f"run `vllm serve MODEL` (the OpenAI-compatible server), or pin vLLM "
                   f"{LAST_RELEASE} or earlier",
    )
    b.open_span = span
    return b.build(VLLM_DEMO, launch.entry,
                   ModelRef(value=None, span=None, origin="--model", known=False)), b.findings


def _default_bind(d: object) -> Bind:
    # run_server passes host=args.host (default None) to serve_http, which gives it to
    # uvicorn.Config (vllm/entrypoints/api_server.py, vllm/entrypoints/launcher.py, 0.24.0);
    # uvicorn's Server.startup calls loop.create_server(host=config.host, …) (uvicorn/server.py,
    # 0.55.0), and asyncio binds every interface for host None
    return Bind("", "vLLM's default (no --host: every interface)")


ENGINE = replace(
    vllm.ENGINE, name=VLLM_DEMO, display="vLLM's demo server", label="vLLM demo server",
    parse=parse_demo, catalog=demo_catalog, choose_release=choose, default_bind=_default_bind,
    # no authentication of any kind (no --api-key, VLLM_API_KEY unread)
    api_key_env=(), api_key_flag=None,
    # GET routes: @app.get("/health") (/generate is @app.post) in vllm/entrypoints/api_server.py
    # (0.6.6.post1-0.24.0), and the ones `app = FastAPI()` adds with its defaults: openapi_url
    # "/openapi.json", docs_url "/docs", swagger_ui_oauth2_redirect_url "/docs/oauth2-redirect",
    # redoc_url "/redoc" (fastapi/applications.py FastAPI.__init__ and setup, 0.165.0)
    get_routes=("/health", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"),
)
