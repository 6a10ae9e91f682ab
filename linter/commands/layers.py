"""`mgpu-lint layers`: which layers llama.cpp puts on which device (sizing/llamacpp.py).

Devices are ordered as llama.cpp orders them: RPC servers first (``RPC0``, ``RPC1`` …), then the
local GPUs (``CUDA0`` …), unless ``-dev`` names them explicitly.
"""

from __future__ import annotations

import json
import re
from typing import Any

import typer

from ..bounds import MAX_LAYERS

# llama.cpp's CUDA backend stops at start-up with more GPUs than this
# (ggml/src/ggml-cuda/ggml-cuda.cu ggml_cuda_init: GGML_ASSERT(info.device_count <=
# GGML_CUDA_MAX_DEVICES), 16); the command also allocated and printed a line per GPU, so
# `--gpus 1000000000` ran out of memory
MAX_LOCAL_GPUS = 16


class LayersError(Exception):
    pass


def _numbers(text: str, what: str) -> list[float]:
    from ..engines.llamacpp import MAX_TENSOR_SPLIT  # (not at start-up: the engine's module)

    parts = re.split(r"[,/]+", text.strip())
    if what == "-ts" and len(parts) > MAX_TENSOR_SPLIT:
        # common/arg.cpp --tensor-split: at least llama_max_devices() (16) entries is an error
        raise LayersError(f"-ts has {len(parts):,} entries: llama.cpp accepts at most "
                          f"{MAX_TENSOR_SPLIT} (one per device)")
    try:
        return [float(p) for p in parts]
    except ValueError:
        raise LayersError(f"{what} must be numbers separated by , or /: {text!r}") from None


def _ngl(text: str) -> int | None:
    if text in ("auto", "all", "-1", "-2"):
        return None
    try:
        return int(text)
    except ValueError:
        raise LayersError(f"-ngl must be an integer, auto or all: {text!r}") from None


def compute_layers(n_layer: int, ngl: str = "all", tensor_split: str | None = None,
                   free: str | None = None, gpus: int | None = None,
                   devices: str | None = None, rpc: str | None = None,
                   split_mode: str = "layer", main_gpu: int = 0) -> dict[str, Any]:
    """The layer assignment as a JSON-ready dict."""
    from ..sizing.llamacpp import gpu_layer_range, layer_split, split_points

    notes: list[str] = []
    endpoints = [e for e in (rpc or "").split(",") if e]
    if devices:
        names = [d for d in devices.split(",") if d]
        if names == ["none"]:
            names = []
        endpoint_of: dict[str, str] = {}
    else:
        shares = _numbers(tensor_split, "-ts") if tensor_split else \
            _numbers(free, "--free") if free else []
        local = gpus if gpus is not None else max(len(shares) - len(endpoints), 1)
        if local > MAX_LOCAL_GPUS:
            raise LayersError(f"{local:,} local GPUs: llama.cpp's CUDA backend stops at "
                              f"start-up with more than {MAX_LOCAL_GPUS} (GGML_CUDA_MAX_DEVICES)")
        rpc_names = [f"RPC{i}" for i in range(len(endpoints))]
        names = rpc_names + [f"CUDA{i}" for i in range(local)]
        endpoint_of = dict(zip(rpc_names, endpoints, strict=True))
    if split_mode not in ("layer", "none"):
        raise LayersError("-sm must be layer or none (row and tensor split every layer's "
                          "matrices instead of assigning layers)")
    n = len(names)
    proportions: list[float] = []
    if split_mode == "none" and n:
        if not 0 <= main_gpu < n:
            raise LayersError(f"-mg {main_gpu} with -sm none: only {n} device(s), "
                              "llama.cpp fails to load (invalid value for main_gpu)")
        proportions = [1.0 if i == main_gpu else 0.0 for i in range(n)]
    elif n:
        given = _numbers(tensor_split, "-ts") if tensor_split else []
        given = (given + [0.0] * n)[:n]
        if any(given):
            proportions = given
        elif free:
            proportions = (_numbers(free, "--free") + [0.0] * n)[:n]
        else:
            proportions = [1.0] * n
            notes.append("no -ts or --free: assuming equal free memory (llama.cpp splits by "
                         "free memory at load time)")
        if not any(proportions):
            raise LayersError("the split proportions are all zero")
    n_gpu_layers = _ngl(ngl)
    split = layer_split(n_layer, n_gpu_layers, proportions, names)
    first, count = gpu_layer_range(n_layer, n_gpu_layers)
    if not n:
        count = 0
    return {
        "n_layer": n_layer,
        "gpu_units": count,
        "first_gpu_unit": first,
        "split_points": split_points(proportions) if proportions else [],
        "devices": [
            {"name": d.name, "endpoint": endpoint_of.get(d.name),
             "first": d.layers.first if d.layers else None,
             "last": d.layers.last if d.layers else None,
             "count": d.count, "output": d.output}
            for d in split.devices
        ],
        "cpu_layers": ({"first": split.cpu_layers.first, "last": split.cpu_layers.last,
                        "count": split.cpu_layers.count} if split.cpu_layers else None),
        "output_on": split.output_on,
        "notes": notes,
    }


def render_text(result: dict[str, Any]) -> str:
    from ..sizing.llamacpp import DeviceLayers, LayerRange, LayerSplit, describe_layer_split

    def rng(d: dict[str, Any] | None) -> LayerRange | None:
        return LayerRange(d["first"], d["last"]) if d and d["count"] else None

    split = LayerSplit(
        tuple(DeviceLayers(d["name"], rng(d), d["output"]) for d in result["devices"]),
        rng(result["cpu_layers"]), result["output_on"])
    points = ", ".join(f"{p:g}" for p in result["split_points"])
    lines = [f"{result['n_layer']} layers + output layer; {result['gpu_units']} unit(s) on "
             f"devices" + (f"; split points {points}" if points else ""),
             describe_layer_split(split)]
    for d in result["devices"]:
        where = f" ({d['endpoint']})" if d["endpoint"] else ""
        if d["count"]:
            lines.append(f"  {d['name']}{where}: layers {d['first']}-{d['last']} ({d['count']})"
                         + (" + output" if d["output"] else ""))
        else:
            lines.append(f"  {d['name']}{where}: no layers" + (" (output only)" if d["output"]
                                                                else ""))
    lines += [f"note: {n}" for n in result["notes"]]
    return "\n".join(lines) + "\n"


def register(app: typer.Typer) -> None:
    @app.command("layers")
    def layers_cmd(
        model: str | None = typer.Option(None, "--model", "-m", help="model (for its layers)"),
        # at most bounds.MAX_LAYERS (no model has close to it): the split is computed and
        # printed per layer, and `--layers 1000000000000` ran for minutes
        layers: int | None = typer.Option(None, "--layers", min=1, max=MAX_LAYERS,
                                             help="repeating layers (n_layer)"),
        ngl: str = typer.Option("all", "-ngl", "--n-gpu-layers", "--gpu-layers",
                                help="layers to offload: N, auto or all"),
        tensor_split: str | None = typer.Option(None, "-ts", "--tensor-split",
                                                   help="proportions, e.g. 3,1"),
        free: str | None = typer.Option(None, "--free",
                                           help="free memory per device (when no -ts)"),
        gpus: int | None = typer.Option(None, "--gpus", min=0, max=MAX_LOCAL_GPUS,
                                           help="local GPUs"),
        devices: str | None = typer.Option(None, "-dev", "--device",
                                              help="device names in order (CUDA0,CUDA1)"),
        rpc: str | None = typer.Option(None, "--rpc", help="RPC servers host:port,..."),
        split_mode: str = typer.Option("layer", "-sm", "--split-mode", help="layer or none"),
        main_gpu: int = typer.Option(0, "-mg", "--main-gpu", help="device for -sm none"),
        fmt: str = typer.Option("text", "--output-format", "--format", help="text or json"),
    ) -> None:
        """llama.cpp's layer assignment per device (as src/llama-model.cpp load_tensors does)."""
        if fmt not in ("text", "json"):
            typer.echo("mgpu-lint layers: error: Invalid value for '--output-format': "
                       f"{fmt!r} is not one of 'text', 'json'. (see `mgpu-lint layers --help`)",
                       err=True)
            raise typer.Exit(2)
        n_layer = layers
        if n_layer is None and model is not None:
            from ..catalog.knowledge import model_names, resolve_model

            match = resolve_model(model)
            if match is None:
                typer.echo(f"mgpu-lint layers: error: unknown model {model!r}; known models: "
                           f"{', '.join(model_names())}; or give --layers N", err=True)
                raise typer.Exit(2)
            n_layer = match.shape.layers
        if n_layer is None:
            typer.echo("mgpu-lint layers: error: give --model NAME or --layers N "
                       "(see `mgpu-lint layers --help`)", err=True)
            raise typer.Exit(2)
        try:
            result = compute_layers(n_layer, ngl, tensor_split, free, gpus, devices, rpc,
                                    split_mode, main_gpu)
        except LayersError as exc:
            typer.echo(f"mgpu-lint layers: error: {exc} (see `mgpu-lint layers --help`)", err=True)
            raise typer.Exit(2) from None
        if fmt == "json":
            typer.echo(json.dumps(result, indent=2))
        else:
            typer.echo(render_text(result), nl=False)
