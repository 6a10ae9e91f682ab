"""SGLang's router where it starts workers (`python -m sglang_router.launch_server`):
recognition in every input kind, its catalog, and its one parser of SGLang's and the router's
options (sglang_router/launch_server.py main(), sglang-router 0.3.2)."""

from __future__ import annotations

import importlib.util
import json
import sys
from types import ModuleType

import pytest
from mgpu_lint.engines import ENGINES, parse_launch
from mgpu_lint.engines.adapter import GPU_LAYOUT, HTTP_API, SGLANG_ARGS
from mgpu_lint.engines.catalog import SGLANG_VERSIONS, load_file, sglang_catalog
from mgpu_lint.engines.sglang_router import ROUTER_RELEASE, router_catalog
from mgpu_lint.runner import Options, lint
from mgpu_lint.source import SourceFile
from mgpu_lint.sources import extract

from tests.conftest import DATA, ROOT

from .wordutil import render

MODEL = "Qwen/Qwen3-8B"
DUMP = DATA / "engines" / "sglang-router-versions" / f"{ROUTER_RELEASE}.json"
CATALOG = ROOT / "linter" / "catalog" / "flags" / f"sglang-router-{ROUTER_RELEASE}.json"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sglang_router_catalog",
                                                  ROOT / "scripts/sglang_router_catalog.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("sglang_router_catalog", module)
    spec.loader.exec_module(module)
    return module


def launches(text: str, kind: str = "shell", path: str = "run.sh") -> list:
    return list(extract(SourceFile(path, text, kind=kind)).launches)


def one(text: str) -> tuple[object, list[str]]:
    (launch,) = launches(text)
    inv, findings = parse_launch(launch)
    return inv, render(findings)


# ------------------------------------------------------------------ the catalog
def test_catalog_is_built_from_the_dump() -> None:
    """linter/catalog/flags/sglang-router-0.3.2.json is what the script's build writes."""
    script = _script()
    assert script.built() == {CATALOG: CATALOG.read_text("utf-8")}


def test_dump_records_the_router_options_only() -> None:
    dump = json.loads(DUMP.read_text("utf-8"))
    names = {n for rec in dump["actions"] for n in rec["names"]}
    assert dump["release"] == ROUTER_RELEASE and len(dump["actions"]) == 97
    # every option is --router-… but --worker-urls (RouterArgs.add_cli_args adds it
    # unprefixed), and launch_server.main's own --router-dp-worker-base-port is there
    assert {n for n in names if not n.startswith("--router-")} == {"--worker-urls"}
    assert "--router-dp-worker-base-port" in names
    # exclude_host_port=True: the router's host and port are SGLang's --host/--port
    assert not {"--router-host", "--router-port", "--host", "--port"} & names
    # choices known only at run time (the Rust extension's tool-call parsers) stay open
    tool = next(r for r in dump["actions"] if r["names"] == ["--router-tool-call-parser"])
    assert tool["choices"] is None and "get_available_tool_call_parsers" in tool["choices_source"]


def test_catalog_validates_and_merges_with_every_release() -> None:
    from mgpu_lint.engines.catalog import validate_file

    data = json.loads(CATALOG.read_text("utf-8"))
    assert load_file(data) == validate_file(data)
    for release in SGLANG_VERSIONS:
        merged = router_catalog(release)  # no key or spelling given twice
        server = sglang_catalog(release)
        assert len(merged.options) == len(server.options) + 97
        assert merged.version == release


def test_engine_interface() -> None:
    """The workers' GPUs (MG101) and the API rules run on the router; SGLang's start-up checks
    do not (its workers run with dp 1 and a base GPU of the router's choosing)."""
    from mgpu_lint.rules import checks_for

    engine = ENGINES["sglang-router"]
    assert engine.has(HTTP_API, GPU_LAYOUT) and not engine.has(SGLANG_ARGS)
    assert engine.default_port == 30000
    codes = {r.code for r in checks_for(engine)}
    assert {"MG101", "MG102", "MG605", "MG702"} <= codes
    assert not {"MG820", "MG821", "MG822", "MG823"} & codes


# ------------------------------------------------------------------ recognition
@pytest.mark.parametrize("command", [
    f"python -m sglang_router.launch_server --model-path {MODEL} --dp-size 2",
    f"python3 -u -m sglang_router.launch_server --model-path {MODEL} --dp-size 2",
    # the console scripts and `python -m sglang_router` run cli.main: `server` is
    # launch_server.main with the rest (sglang_router/cli.py, 0.3.2)
    f"sglang-router server --model-path {MODEL} --dp-size 2",
    f"/usr/local/bin/smg server --model-path {MODEL} --dp-size 2",
    f"python3 -m sglang_router server --model-path {MODEL} --dp-size 2",
])
def test_recognised(command: str) -> None:
    inv, findings = one(command + "\n")
    assert findings == []
    assert inv.engine == "sglang-router" and inv.entry == "sglang_router.launch_server"
    assert inv.model is not None and inv.model.value == MODEL
    assert inv.data_parallel_size.value == 2


@pytest.mark.parametrize("command", [
    "python -m sglang_router.launch_router --worker-urls http://a:30000 http://b:30000",
    "smg launch --worker-urls http://a:30000",
    "sglang-router launch --worker-urls http://a:30000",
    "python3 -m sglang_router launch --worker-urls http://a:30000",
    "sglang-router --version",
])
def test_router_alone_is_no_launch(command: str) -> None:
    """The router in front of workers started elsewhere starts no engine: no launch, and no
    MG017 ("named but not understood") either."""
    assert launches(command + "\n") == []
    out = lint([], Options(), command=command).findings
    assert out == []


KINDS = [
    ("shell", "run.sh",
     "exec python3 -m sglang_router.launch_server --model-path {m} --tp 2 --dp 4\n"),
    ("yaml", "deploy.yaml",
     "apiVersion: v1\nkind: Pod\nmetadata: {{name: r}}\nspec:\n  containers:\n"
     "    - name: r\n      image: lmsysorg/sglang:v0.5.5\n"
     "      command: [python3, -m, sglang_router.launch_server]\n"
     "      args: [--model-path, {m}, --tp, '2', --dp, '4']\n"),
    ("yaml", "compose.yaml",
     "services:\n  r:\n    image: lmsysorg/sglang:v0.5.5\n"
     "    command: python3 -m sglang_router.launch_server --model-path {m} --tp 2 --dp 4\n"),
    ("dockerfile", "Dockerfile",
     "FROM lmsysorg/sglang:v0.5.5\n"
     'CMD ["python3", "-m", "sglang_router.launch_server", "--model-path", "{m}", '
     '"--tp", "2", "--dp", "4"]\n'),
    ("markdown", "README.md",
     "Two workers behind the router:\n\n```bash\n"
     "python -m sglang_router.launch_server --model-path {m} --tp 2 --dp 4\n```\n"),
]


@pytest.mark.parametrize(("kind", "path", "text"), KINDS, ids=[p for _, p, _ in KINDS])
def test_every_input_kind(kind: str, path: str, text: str) -> None:
    (launch,) = launches(text.format(m=MODEL), kind, path)
    inv, findings = parse_launch(launch)
    assert findings == []
    assert (inv.engine, inv.tensor_parallel_size.value, inv.data_parallel_size.value) == \
        ("sglang-router", 2, 4)


# ------------------------------------------------------------------ the one parser
def test_router_options_are_known() -> None:
    inv, findings = one(
        f"python -m sglang_router.launch_server --model-path {MODEL} --dp-size 2 "
        "--router-policy cache_aware --router-dp-worker-base-port 32000 "
        "--worker-urls http://x:1 http://y:2 --router-prefill http://p:1 8998 "
        "--router-prefill http://q:1 --router-api-key k --router-log-level info\n")
    assert findings == []
    assert inv.setting("router_dp_worker_base_port").value == 32000
    assert inv.setting("worker_urls").value == ["http://x:1", "http://y:2"]


def test_server_options_read_as_sglang_reads_them() -> None:
    """The server part is SGLang's argparse: `_` is not `-`, a store_true takes no value."""
    _, findings = one(f"python -m sglang_router.launch_server --model-path {MODEL} "
                      "--tp_size 2 --enable-dp-attention=1\n")
    assert findings == [
        "MG004 error [--tp_size] unknown flag --tp_size: SGLang's argparse does not read `_` as `-`, so "
        "it exits (unrecognized arguments); did you mean --tp-size?",
        "MG006 error [1] --enable-dp-attention takes no value: SGLang fails with \"argument "
        "--enable-dp-attention: ignored explicit argument '1'\"",
    ]
    _, findings = one("python -m sglang_router.launch_server --dp-size 2\n")
    assert findings[0].startswith("MG016 error [python] no model: SGLang requires --model-path")


def test_router_flags_never_an_error() -> None:
    """The router's options change between sglang-router releases, and no image tag names the
    router release: a `--router-…` word it lacks is a warning next to a known one (a typo),
    else information; a choice it lacks is a warning even when the image pins SGLang."""
    _, findings = one("docker run --gpus all lmsysorg/sglang:v0.5.5 python3 -m "
                      f"sglang_router.launch_server --model-path {MODEL} --router-polcy x "
                      "--router-brand-new 3 --router-policy fastest\n")
    assert findings == [
        "MG004 warning [--router-polcy] unknown router flag --router-polcy: sglang-router 0.3.2 exits "
        "(unrecognized arguments); did you mean --router-policy?",
        "MG004 info [--router-brand-new] unknown router flag --router-brand-new: sglang-router 0.3.2 exits "
        "(unrecognized arguments); another sglang-router release may accept it",
        "MG006 warning [fastest] invalid value for --router-policy: invalid choice: 'fastest' (choose "
        "from 'random', 'round_robin', 'cache_aware', 'power_of_two', 'manual'); sglang-router "
        "0.3.2 exits (argparse; nothing in the launch names the router's release, and another "
        "may differ)",
    ]
