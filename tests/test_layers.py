"""`mgpu-lint layers`: llama.cpp's layer assignment (Example 11) through the command."""

from __future__ import annotations

import json

import pytest
import typer
from mgpu_lint.commands import layers
from typer.testing import CliRunner

runner = CliRunner()


def _app() -> typer.Typer:
    app = typer.Typer()
    layers.register(app)

    @app.command("noop")
    def noop() -> None:
        """A second command keeps `layers` a sub-command, as in the real CLI."""

    return app


def invoke(*args: str):
    return runner.invoke(_app(), ["layers", *args])


EXAMPLE_11 = [
    (["-ngl", "99", "-ts", "1,1"],
     "CUDA0 layers 0-16 (17), CUDA1 layers 17-31 (15), output on CUDA1"),
    (["-ngl", "99", "-ts", "3,1"],
     "CUDA0 layers 0-24 (25), CUDA1 layers 25-31 (7), output on CUDA1"),
    (["-ngl", "99", "--free", "22,10"],
     "CUDA0 layers 0-22 (23), CUDA1 layers 23-31 (9), output on CUDA1"),
    (["-ngl", "20", "-ts", "1,1"],
     "CPU layers 0-12 (13), CUDA0 layers 13-22 (10), CUDA1 layers 23-31 (9), output on CUDA1"),
    (["-ngl", "99", "-ts", "1/1/1"], ("CUDA0 layers 0-10 (11), CUDA1 layers 11-21 (11), "
                                      "CUDA2 layers 22-31 (10), output on CUDA2")),
]


@pytest.mark.parametrize(("args", "line"), EXAMPLE_11)
def test_example_11_text(args: list[str], line: str) -> None:
    result = invoke("--layers", "32", *args)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1] == line


def test_json_shape() -> None:
    result = invoke("--model", "meta-llama/Llama-3.1-8B-Instruct", "-ngl", "20", "-ts", "1,1",
                    "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["n_layer"] == 32 and data["gpu_units"] == 20 and data["first_gpu_unit"] == 13
    assert data["cpu_layers"] == {"first": 0, "last": 12, "count": 13}
    assert data["devices"] == [
        {"name": "CUDA0", "endpoint": None, "first": 13, "last": 22, "count": 10, "output": False},
        {"name": "CUDA1", "endpoint": None, "first": 23, "last": 31, "count": 9, "output": True}]
    assert data["output_on"] == "CUDA1"


def test_rpc_devices_come_first() -> None:
    result = invoke("--layers", "32", "--rpc", "192.168.88.10:50052,192.168.88.11:50052",
                    "--gpus", "1", "-ts", "1,1,2", "--format", "json")
    data = json.loads(result.stdout)
    assert [(d["name"], d["endpoint"], d["count"]) for d in data["devices"]] == [
        ("RPC0", "192.168.88.10:50052", 9), ("RPC1", "192.168.88.11:50052", 8),
        ("CUDA0", None, 15)]
    assert data["cpu_layers"] is None and data["output_on"] == "CUDA0"


def test_devices_without_layers_are_listed() -> None:
    data = json.loads(invoke("--layers", "32", "--gpus", "3", "-ts", "1,1",
                             "--format", "json").stdout)
    assert data["devices"][2] == {"name": "CUDA2", "endpoint": None, "first": None, "last": None,
                                  "count": 0, "output": False}
    none_mode = json.loads(invoke("--layers", "32", "--gpus", "2", "-sm", "none", "-mg", "1",
                                  "--format", "json").stdout)
    assert [d["count"] for d in none_mode["devices"]] == [0, 32]
    cpu_only = json.loads(invoke("--layers", "32", "-ngl", "0", "--format", "json").stdout)
    assert cpu_only["cpu_layers"]["count"] == 32 and cpu_only["output_on"] == "CPU"


def test_explicit_device_order_and_default_split() -> None:
    result = invoke("--layers", "32", "-dev", "CUDA1,CUDA0")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[1].startswith("CUDA1 layers 0-16 (17), CUDA0")
    assert "assuming equal free memory" in result.stdout
    zeros = invoke("--layers", "32", "-ts", "0,0")  # llama.cpp: all-zero -ts means free memory
    assert zeros.exit_code == 0 and "assuming equal free memory" in zeros.stdout


@pytest.mark.parametrize(("args", "message"), [
    ([], "give --model NAME or --layers N"),
    (["--model", "gpt2"], "unknown model 'gpt2'; known models: "),
    (["--layers", "32", "-ngl", "x"], "-ngl must be"),
    (["--layers", "32", "-ts", "a,b"], "-ts must be numbers"),
    (["--layers", "32", "-sm", "row"], "-sm must be layer or none"),
    (["--layers", "32", "--gpus", "2", "-sm", "none", "-mg", "2"], "invalid value for main_gpu"),
    (["--layers", "32", "--free", "0,0"], "all zero"),
    # numbers that drove a loop or an allocation per layer or device (issue 20): `--layers
    # 10^12` ran for minutes, `--gpus 10^9` ran out of memory with a traceback
    (["--layers", "1000000000000", "--gpus", "2"], "'--layers'"),
    (["--layers", "80", "--gpus", "1000000000"], "'--gpus'"),
    (["--layers", "80", "--gpus", "17"], "'--gpus'"),
    (["--layers", "80", "-ts", ",".join(["1"] * 16)],
     "-ts has 16 entries: llama.cpp accepts at most 15"),
    (["--layers", "80", "--free", ",".join(["1"] * 200_000)],
     "200,000 local GPUs: llama.cpp's CUDA backend stops at start-up with more than 16"),
])
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_text_snapshot(snapshot) -> None:
    result = invoke("--layers", "32", "-ngl", "20", "-ts", "3,1", "--rpc", "10.0.0.2:50052")
    assert result.exit_code == 0
    assert result.stdout == snapshot
