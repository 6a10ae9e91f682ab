"""GPU names and Kubernetes node labels → GPU specs (``gpus.json``, ``labels.json``) and
configured GPUs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache, lru_cache
from typing import Any

from .. import bounds
from .data import CatalogError, _catalog, _first_error, _frozen
from .shapes import GpuMatch, GpuSpec, _builtin_gpus, as_dict, validate_gpu

_GPU_PREFIXES = ("nvidia", "tesla", "geforce", "amd", "instinct")


def _gpu_raw_key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _gpu_key(name: str) -> str:
    key = _gpu_raw_key(name)
    stripped = True
    while stripped:
        stripped = False
        for p in _GPU_PREFIXES:
            if key.startswith(p) and len(key) > len(p):
                key, stripped = key[len(p):], True
    return key.removesuffix("shared") if key.endswith("shared") and len(key) > 6 else key


@cache
def _gpu_index(extra_json: str) -> dict[str, GpuSpec]:
    """Keys: exact label and accelerator values (punctuation removed) first, then names with
    vendor prefixes removed, so that ``nvidia-tesla-a100`` (A100 40GB) beats the alias ``A100``."""
    builtins = _builtin_gpus()
    by_id = {g.id: g for g in builtins}
    index: dict[str, GpuSpec] = {}
    for gpu in builtins:
        for n in (*gpu.node_labels, *gpu.gke_accelerators):
            index.setdefault(_gpu_raw_key(n), gpu)
    for accel, gid in _catalog().accelerators.items():
        index.setdefault(_gpu_raw_key(accel), by_id[gid])
    for gpu in builtins:
        for n in (gpu.id, gpu.name, *gpu.aliases, *gpu.node_labels):
            index.setdefault(_gpu_key(n), gpu)
    for name, fields in json.loads(extra_json).items():
        base = _lookup_gpu(index, name)
        data = {**(as_dict(base) if base else {"id": name}), **fields}
        if base and "pcie_gen" in fields and "pcie_gbs_per_direction" not in fields:
            data["pcie_gbs_per_direction"] = None
        try:
            gpu = validate_gpu(data)
        except ValueError as exc:  # pydantic's ValidationError
            raise CatalogError("gpus", name, _first_error(exc)) from None
        problem = bounds.gpu_problem(gpu)
        if problem is not None:  # an infinite memory_gb passes gt=0 and makes every budget NaN
            raise CatalogError("gpus", name, problem)
        for n in (name, gpu.id, gpu.name, *gpu.aliases):
            index[_gpu_raw_key(n)] = index[_gpu_key(n)] = gpu
    return index


def _lookup_gpu(index: dict[str, GpuSpec], name: str) -> GpuSpec | None:
    raw = _gpu_raw_key(name)
    return index.get(raw) or index.get(_gpu_key(name)) if raw else None


def resolve_gpu(name: str, extra: Mapping[str, Any] | None = None) -> GpuSpec | None:
    """The GPU ``name`` means: catalog id, marketing name, node-label value or cloud accelerator.

    Matching ignores case and punctuation (``H100 SXM``, ``h100-sxm``, ``NVIDIA-H100-80GB-HBM3``,
    ``nvidia-l4``). ``extra`` maps names to GPU fields from the configuration.
    """
    return _resolved_gpu(name, _frozen(extra) if extra else "{}")


@lru_cache(maxsize=1024)
def _resolved_gpu(name: str, extra_json: str) -> GpuSpec | None:
    # asked once per launch with the same few names (13 us each: the keys' regular expressions)
    return _lookup_gpu(_gpu_index(extra_json), name)


def gpu_names(extra: Mapping[str, Any] | None = None) -> list[str]:
    """Ids of every known GPU (built-in and configured)."""
    return sorted({g.id for g in _gpu_index(_frozen(extra)).values()})


def names_gpu_type(key: str) -> bool:
    """A node label whose value names a GPU type (a product or cloud accelerator label)."""
    cat = _catalog()
    return key in cat.label_keys["product"] or key in cat.label_keys["accelerator"]


def resolve_node_label(key: str, value: str,
                       extra: Mapping[str, Any] | None = None) -> GpuMatch | None:
    """The GPU (and per-node count, when known) a Kubernetes node label selects."""
    cat = _catalog()
    if key in cat.label_keys["instance_type"]:
        inst = cat.instance_types.get(value.strip().lower())
        if inst is None:
            return None
        gpu = resolve_gpu(inst.gpu, extra)
        return GpuMatch(gpu, inst.count, inst.source) if gpu else None
    if key in cat.label_keys["product"] or key in cat.label_keys["accelerator"]:
        gpu = resolve_gpu(value, extra)
        return GpuMatch(gpu, None, f"node label {key}") if gpu else None
    return None
