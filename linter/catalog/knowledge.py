"""What mgpu-lint knows about models, GPUs and number formats: one import for the rest of
the linter.  Each fact lives in one module beside this one: ``shapes.py`` (what an entry is),
``models.py`` (model names → shapes, config.json), ``gpus.py`` (GPU names, node labels),
``precision.py`` (bits per weight, KV bytes), ``data.py`` (reading the JSON files).  Users add or
override models and GPUs in the configuration file; those dictionaries arrive as the ``extra``
argument.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .data import CatalogError, _frozen
from .gpus import _gpu_index, gpu_names, names_gpu_type, resolve_gpu, resolve_node_label
from .models import (
    CONFIG_JSON_MAX_BYTES,
    _model_index,
    lora_modules,
    model_names,
    read_local_config,
    resolve_model,
)
from .precision import (
    Precision,
    dtype_bits,
    ggml_type_bytes,
    gguf_file_type_bits,
    gguf_file_types,
    kv_cache_bytes_per_value,
    llama_kv_bytes_per_value,
    quantization_bits,
    weight_precision,
)
from .shapes import (
    GpuMatch,
    GpuSpec,
    ModelMatch,
    ModelShape,
    RopeScaling,
    validate_gpu,
    validate_model,
)

__all__ = [
    "CONFIG_JSON_MAX_BYTES",
    "CatalogError",
    "GpuMatch",
    "GpuSpec",
    "ModelMatch",
    "ModelShape",
    "Precision",
    "RopeScaling",
    "dtype_bits",
    "ggml_type_bytes",
    "gguf_file_type_bits",
    "gguf_file_types",
    "gpu_names",
    "kv_cache_bytes_per_value",
    "llama_kv_bytes_per_value",
    "lora_modules",
    "model_names",
    "names_gpu_type",
    "quantization_bits",
    "read_local_config",
    "resolve_gpu",
    "resolve_model",
    "resolve_node_label",
    "validate_extra",
    "validate_gpu",
    "validate_model",
    "weight_precision",
]


def validate_extra(models: Mapping[str, Any] | None = None,
                   gpus: Mapping[str, Any] | None = None) -> None:
    """Raise CatalogError when a configured model or GPU entry does not validate."""
    _model_index(_frozen(models))
    _gpu_index(_frozen(gpus))
