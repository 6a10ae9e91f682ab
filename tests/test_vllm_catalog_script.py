"""scripts/vllm_catalog.py: the committed vLLM catalogs are exactly what the dumps give."""

from __future__ import annotations

import importlib.util
import json
from types import ModuleType

import pytest

from tests.conftest import DATA, ROOT


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vllm_catalog", ROOT / "scripts/vllm_catalog.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


script = _script()


def test_committed_catalogs_are_generated_from_the_dumps() -> None:
    """Fails when a catalog was edited by hand or a dump changed without `build`."""
    assert script.main(["build", "--check"]) == 0


def test_every_generated_file_says_so() -> None:
    files = script.build(json.loads(script.CURATED.read_text("utf-8")))
    assert len(files) == len(list((DATA / "engines/vllm-versions").glob("*.json"))) + 1
    for name, text in files.items():
        assert json.loads(text)["generated"].endswith("do not edit"), name


def test_a_changed_dump_changes_the_catalog(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path) -> None:
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    for p in (DATA / "engines/vllm-versions").glob("*.json"):
        records = json.loads(p.read_text("utf-8"))
        if p.stem == "0.33.0":  # the newest release loses --port
            records = [r for r in records if r["dest"] != "port"]
        (dumps / p.name).write_text(json.dumps(records), "utf-8")
    monkeypatch.setattr(script, "DUMPS", dumps)
    files = script.build(json.loads(script.CURATED.read_text("utf-8")))
    assert json.loads(files["vllm-0.33.0.json"])["drop"][-1] == "port"
    history = json.loads(files["vllm-history.json"])
    assert {"name": "--port", "in": ["0.6.6.post1..0.32.0"]} in history["spellings"]


def test_conversion_of_one_action() -> None:
    record = {"names": ["--max-model-len"], "neg_names": [], "dest": "max_model_len",
              "positional": False, "is_bool": False, "takes_value": True, "nargs": None,
              "type": "int", "parser_type": "human_readable_int_or_auto", "nullable": False,
              "choices": None, "default": None, "action": "_StoreAction",
              "source": "vllm/engine/arg_utils.py (add_cli_args)"}
    assert script.option(record) == {"key": "max_model_len", "names": ["--max-model-len"],
                                     "type": "hrint_auto"}
    # an option of the OpenAI server's front end, which the demo api_server module lacks
    front = dict(record, names=["--port"], dest="port", parser_type="int", default=8000,
                 source="vllm/entrypoints/openai/cli_args.py (add_cli_args)")
    assert script.option(front) == {"key": "port", "names": ["--port"], "type": "int",
                                    "default": 8000, "frontend": True}
    flag = dict(record, names=["--enable-lora"], neg_names=["--no-enable-lora"],
                dest="enable_lora", is_bool=True, takes_value=False, nargs=0,
                parser_type="BooleanOptionalAction", action="BooleanOptionalAction", default=False)
    assert script.option(flag) == {"key": "enable_lora", "names": ["--enable-lora"],
                                   "neg": ["--no-enable-lora"], "type": "flag", "nargs": 0,
                                   "default": False}
