"""llama.cpp's layer-to-device assignment (src/llama-model.cpp load_tensors), in float32 as
llama.cpp computes it.

llama_model_base::load_tensors builds normalised running sums of the split proportions, treats the
output layer as layer n_layer, puts only the last n_gpu_layers units on GPUs, and gives layer il to
the first device whose split point is greater than (il − first_gpu_layer) / gpu_layers.
"""

from __future__ import annotations

import bisect
import struct
from ..records import dataclass


def f32(x: float) -> float:
    """Round to the nearest float32, as C++ ``float`` arithmetic does after each operation."""
    return struct.unpack("f", struct.pack("f", x))[0]


def running_sums(proportions: list[float]) -> list[float]:
    """Running sums of the proportions in float32 (``-ts 3,1`` → 3, 4), before normalising."""
    total = f32(0.0)
    sums = []
    for p in proportions:
        total = f32(total + f32(p))
        sums.append(total)
    return sums


def split_points(proportions: list[float]) -> list[float]:
    """Normalised running sums of the proportions (``-ts 3,1`` → 0.75, 1.0), in float32."""
    sums = running_sums(proportions)
    if not sums or not 0 < sums[-1] < float("inf"):
        return []  # every share is zero in float32 (-ts 1e-320): no split to normalise
    return [f32(s / sums[-1]) for s in sums]


def gpu_layer_range(n_layer: int, n_gpu_layers: int | None) -> tuple[int, int]:
    """(first unit on a GPU, number of GPU units); the output layer is unit n_layer.

    ``n_gpu_layers`` None or negative (auto, all) offloads every unit.
    """
    ngl = n_layer + 1 if n_gpu_layers is None or n_gpu_layers < 0 else n_gpu_layers
    return max(n_layer + 1 - ngl, 0), min(ngl, n_layer + 1)


def assign_layers(n_layer: int, n_gpu_layers: int | None,
                  proportions: list[float]) -> list[int | None]:
    """Device index of every unit 0..n_layer (n_layer = output layer); None = CPU."""
    points = split_points(proportions) if proportions else []
    start, count = gpu_layer_range(n_layer, n_gpu_layers)
    where: list[int | None] = []
    for il in range(n_layer + 1):
        if not points or il < start or il - start >= count:
            where.append(None)
            continue
        x = f32(f32(float(il - start)) / f32(float(count)))
        where.append(bisect.bisect_right(points, x))
    return where


@dataclass(frozen=True)
class LayerRange:
    first: int
    last: int

    @property
    def count(self) -> int:
        return self.last - self.first + 1


@dataclass(frozen=True)
class DeviceLayers:
    name: str
    layers: LayerRange | None  # repeating layers on this device (None: no layer)
    output: bool  # the output layer sits here

    @property
    def count(self) -> int:
        return self.layers.count if self.layers else 0


@dataclass(frozen=True)
class LayerSplit:
    devices: tuple[DeviceLayers, ...]
    cpu_layers: LayerRange | None
    output_on: str  # device name, or "CPU"


def layer_split(n_layer: int, n_gpu_layers: int | None, proportions: list[float],
                device_names: list[str] | None = None) -> LayerSplit:
    """Per-device layer ranges for ``-ngl``/``-ts`` (devices in llama.cpp's order, RPC first).

    Each device gets one contiguous range (placement is monotonic); devices with no layer are
    listed with none.
    """
    names = device_names or [f"GPU{i}" for i in range(len(proportions))]
    where = assign_layers(n_layer, n_gpu_layers, proportions)
    ranges: dict[int | None, list[int]] = {}
    for il, dev in enumerate(where[:n_layer]):
        ranges.setdefault(dev, []).append(il)

    def span(dev: int | None) -> LayerRange | None:
        layers = ranges.get(dev)
        return LayerRange(layers[0], layers[-1]) if layers else None

    out = where[n_layer]
    devices = tuple(DeviceLayers(name, span(i), out == i) for i, name in enumerate(names))
    return LayerSplit(devices, span(None), "CPU" if out is None else names[out])


def describe_layer_split(split: LayerSplit) -> str:
    """Printed as ``GPU0 layers 0-16 (17), GPU1 layers 17-31 (15), output on GPU1``."""
    parts = []
    if split.cpu_layers:
        c = split.cpu_layers
        parts.append(f"CPU layers {c.first}-{c.last} ({c.count})")
    for d in split.devices:
        if d.layers:
            parts.append(f"{d.name} layers {d.layers.first}-{d.layers.last} ({d.count})")
    return ", ".join(parts) + f", output on {split.output_on}"


def effective_proportions(tensor_split: list[float], n_devices: int) -> list[float]:
    """The ``-ts`` values llama.cpp uses: the first n_devices entries, missing ones 0
    (src/llama-model.cpp load_tensors reads tensor_split[0..n_devices), llama.cpp 3f545bec)."""
    return (list(tensor_split) + [0.0] * n_devices)[:n_devices]


def device_names(rpc_devices: int, local_gpus: int, backend: str = "CUDA") -> list[str]:
    """llama.cpp's device order without ``-dev``: RPC devices first ("add RPC servers at the
    front of the list to minimize network transfers", src/llama.cpp), then the local GPUs."""
    return [f"RPC{i}" for i in range(rpc_devices)] + [f"{backend}{i}" for i in range(local_gpus)]
