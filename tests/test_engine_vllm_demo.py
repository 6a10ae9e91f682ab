"""vLLM's demo server (`python -m vllm.entrypoints.api_server`, engines/vllm_demo.py): its
parser is the release's engine arguments plus its own options, read in the wheels'
vllm/entrypoints/api_server.py (0.6.6.post1, 0.7.3, 0.8.5.post1, 0.9.2, 0.10.2, 0.24.0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mgpu_lint.engines import ENGINES, parse_launch
from mgpu_lint.engines.catalog import load_file, validate_file, vllm_catalog, vllm_versions
from mgpu_lint.engines.vllm_demo import LAST_RELEASE, absent, demo_catalog
from mgpu_lint.launch import ENTRY_VLLM_DEMO, VLLM_DEMO
from mgpu_lint.runner import read_files

from tests.conftest import DATA

from .wordutil import codes, make_launch

FLAGS = Path(__file__).resolve().parents[1] / "linter" / "catalog" / "flags"
OWN = {"host", "port", "ssl_keyfile", "ssl_certfile", "ssl_ca_certs", "enable_ssl_refresh",
       "ssl_cert_reqs", "root_path", "log_level"}
WITH_MODULE = [v for v in vllm_versions() if not absent(v)]


def test_own_option_files_validate() -> None:
    for path in sorted(FLAGS.glob("demo-api-server-*.json")):
        data = json.loads(path.read_text("utf-8"))
        assert load_file(data) == validate_file(data), path.name


@pytest.mark.parametrize("version", WITH_MODULE)
def test_catalog_is_engine_arguments_and_own_options(version: str) -> None:
    demo = demo_catalog(version)
    dump = json.loads((DATA / "engines/vllm-versions" / f"{version}.json").read_text("utf-8"))
    engine_args = {r["dest"] for r in dump if not r["positional"]
                   and r["source"].startswith("vllm/engine/arg_utils.py ")}
    own = OWN - ({"enable_ssl_refresh"} if version in ("0.6.6.post1", "0.7.3") else set())
    assert set(demo.by_key) == engine_args | own | {"help", "config"}
    serve = vllm_catalog(version)
    assert serve.by_key["api_key"].frontend
    assert "api_key" not in demo.by_key


def test_module_releases() -> None:
    assert WITH_MODULE[-1] == LAST_RELEASE == "0.24.0"
    assert absent("0.25.0") and absent("0.25.1") and absent("0.33.0") and absent("latest")
    assert not absent("0.24.0") and not absent(None) and not absent("nightly")


def _parse(command: str, version: str | None) -> list[str]:
    launch = make_launch(command, engine=VLLM_DEMO, entry=ENTRY_VLLM_DEMO, skip=3,
                         version_pin=version)
    return codes(parse_launch(launch)[1])


def test_parse() -> None:
    base = "python3 -m vllm.entrypoints.api_server --model m --port 8001"
    assert _parse(base + " --log-level info -tp 2", "0.10.2") == []
    assert _parse(base + " --api-key k", "0.10.2") == ["MG004"]
    assert _parse(base + " --uvicorn-log-level info", "0.24.0") == ["MG004"]
    assert _parse(base + " --enable-ssl-refresh", "0.7.3") == ["MG004"]
    assert _parse(base + " --enable-ssl-refresh", "0.8.5") == []
    assert _parse(base + " --no-such-flag --api-key k", "0.30.0") == ["MG004"]  # no module


def test_recognised_where_scripts_start_it(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(
        "exec python -m vllm.entrypoints.api_server --model m\n"
        "bash -c 'python3 -m vllm.entrypoints.api_server --model m'\n", "utf-8")
    (tmp_path / "Dockerfile").write_text(
        "FROM vllm/vllm-openai:v0.8.5\n"
        'ENTRYPOINT ["python3", "-m", "vllm.entrypoints.api_server", "--model", "m"]\n', "utf-8")
    run = read_files([str(tmp_path / "run.sh"), str(tmp_path / "Dockerfile")])
    assert [(la.engine, la.entry) for la in run.launches] == [(VLLM_DEMO, ENTRY_VLLM_DEMO)] * 3
    assert run.launches[-1].version_pin.value == "0.8.5"  # the image's release
    assert ENGINES[VLLM_DEMO].api_key_flag is None and ENGINES["vllm"].api_key_flag
