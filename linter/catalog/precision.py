"""Number formats: the bits per weight of a dtype, a quantization method or a GGUF file
type, and the bytes per KV-cache value (``gguf_types.json`` and the tables below).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .data import _catalog
from ..records import dataclass

if TYPE_CHECKING:
    from .shapes import ModelShape


@dataclass(frozen=True)
class Precision:
    """Bits per stored weight and where that number came from."""

    bits: float
    label: str
    # "--quantization", "--dtype", "model name", "GGUF type", "checkpoint", "--bits", "default"
    origin: str


_DTYPE_BITS = {"float32": 32.0, "float": 32.0, "fp32": 32.0, "f32": 32.0,
               "bfloat16": 16.0, "bf16": 16.0, "float16": 16.0, "half": 16.0, "fp16": 16.0,
               "f16": 16.0, "fp8": 8.0, "float8": 8.0, "mxfp4": 4.25}


# vLLM --quantization methods and the bits per weight they store (nominal for integer formats).
_QUANT_BITS = {"fp8": 8.0, "fbgemm_fp8": 8.0, "fp8_per_tensor": 8.0, "fp8_per_block": 8.0,
               "fp8_per_channel": 8.0, "deepseek_v4_fp8": 8.0, "modelopt": 8.0, "mxfp8": 8.0,
               "modelopt_mxfp8": 8.0, "experts_int8": 8.0, "int8_per_channel_weight_only": 8.0,
               "awq": 4.0, "auto_awq": 4.0, "awq_marlin": 4.0, "gptq": 4.0, "auto_gptq": 4.0,
               "gptq_marlin": 4.0, "moe_wna16": 4.0, "bitsandbytes": 4.0,
               "mxfp4": 4.25, "gpt_oss_mxfp4": 4.25, "modelopt_fp4": 4.5, "nvfp4_per_token": 4.5}


# vLLM --kv-cache-dtype values and bytes per cached value ("auto" follows the model dtype).
_KV_BYTES = {"bfloat16": 2.0, "float16": 2.0, "fp8": 1.0, "fp8_e4m3": 1.0, "fp8_e5m2": 1.0,
             "fp8_inc": 1.0, "fp8_ds_mla": 1.0, "fp8_per_token_head": 1.0,
             "int8_per_token_head": 1.0, "int4_per_token_head": 0.5, "nvfp4": 0.5625,
             "nvfp4_4over6": 0.5625, "nvfp4_ds_mla": 0.5625, "turboquant_3bit_nc": 0.375,
             "turboquant_4bit_nc": 0.5, "turboquant_k3v4_nc": 0.4375, "turboquant_k8v4": 0.75}


def dtype_bits(dtype: str) -> float | None:
    """Bits per value of a dtype name (``bfloat16``, ``half``, ``float32`` …); None for auto."""
    return _DTYPE_BITS.get(dtype.strip().lower().removeprefix("torch."))


def quantization_bits(method: str) -> float | None:
    """Bits per weight that a vLLM ``--quantization`` method stores (None when it varies)."""
    return _QUANT_BITS.get(method.strip().lower())


def gguf_file_type_bits(file_type: str) -> float | None:
    """Whole-file average bits per weight of a GGUF file type (``Q4_K_M`` → 4.8944)."""
    ft = _catalog().file_types.get(file_type.strip().upper())
    return ft.bpw if ft else None


def gguf_file_types() -> list[str]:
    return sorted(_catalog().file_types)


def ggml_type_bytes(tensor_type: str) -> float | None:
    """Bytes per value of a ggml tensor type (``q8_0`` → 34/32); case-sensitive as llama.cpp."""
    tt = _catalog().tensor_types.get(tensor_type)
    return tt.block_bytes / tt.block_weights if tt else None


def weight_precision(shape: ModelShape | None = None, *, dtype: str | None = None,
                     quantization: str | None = None, hint: Precision | None = None,
                     bits: float | None = None) -> Precision:
    """Bits per stored weight for a launch.

    Order: an explicit ``bits``; ``--quantization`` (with the name's bit width when it states
    one); a GGUF type or name hint; the checkpoint's own quantization; ``--dtype``; the
    checkpoint dtype; 16.
    """
    if bits is not None:
        return Precision(float(bits), f"{bits:g}-bit", "--bits")
    if quantization and quantization.lower() not in ("none", "auto"):
        q = quantization_bits(quantization)
        if hint is not None and hint.origin == "model name" and q is not None and q < 16:
            return Precision(hint.bits, f"{quantization} ({hint.label})", "--quantization")
        if q is not None:
            return Precision(q, quantization, "--quantization")
    if hint is not None:
        return hint
    if shape is not None and shape.quantization:
        return Precision(shape.weight_bits, shape.dtype, "checkpoint")
    if dtype and dtype.lower() != "auto":
        d = dtype_bits(dtype)
        if d is not None:
            return Precision(d, dtype, "--dtype")
    if shape is not None:
        return Precision(shape.weight_bits, shape.dtype, "checkpoint")
    return Precision(16.0, "bfloat16", "default")


def kv_cache_bytes_per_value(kv_cache_dtype: str | None = None, *, dtype: str | None = None,
                             shape: ModelShape | None = None) -> float | None:
    """Bytes per cached K or V value under vLLM's ``--kv-cache-dtype`` (None when unknown).

    ``auto`` follows the activation dtype: ``--dtype`` when given, else 4 bytes for float32
    checkpoints and 2 otherwise (quantized checkpoints compute in 16 bits).
    """
    kind = (kv_cache_dtype or "auto").strip().lower()
    if kind != "auto":
        return _KV_BYTES.get(kind)
    d = dtype_bits(dtype) if dtype and dtype.lower() != "auto" else None
    if d is None and shape is not None and shape.quantization is None:
        d = dtype_bits(shape.dtype)
    return 4.0 if d == 32.0 else 2.0


def llama_kv_bytes_per_value(cache_type_k: str = "f16", cache_type_v: str = "f16") -> float | None:
    """Mean bytes per cached value for llama.cpp ``-ctk``/``-ctv`` (None for a type the cache
    does not accept)."""
    sizes = []
    for name in (cache_type_k, cache_type_v):
        tt = _catalog().tensor_types.get(name)
        if tt is None or not tt.kv_cache:
            return None
        sizes.append(tt.block_bytes / tt.block_weights)
    return (sizes[0] + sizes[1]) / 2
