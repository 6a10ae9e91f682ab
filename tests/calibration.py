"""The calibration sweep as budget inputs: one function shared by the tests and the report."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from mgpu_lint.catalog import knowledge
from mgpu_lint.sizing import vllm_budget as vb

SWEEP = Path(__file__).parent / "data" / "calibration" / "vllm-0.19-h100-sweep.tsv"
GIB = 1 << 30


@dataclass(frozen=True)
class Row:
    case: str
    model: str
    version: str
    gpu_gib: float
    tp: int
    pp: int
    utilization: float
    dtype: str
    kv_dtype: str
    max_model_len: int
    weights_gib: float
    kv_gib: float
    kv_tokens: int
    blocks: int | None
    notes: str

    def logged(self, what: str) -> float | None:
        m = re.search(rf"{what} ([0-9.]+) GiB", self.notes)
        return float(m.group(1)) if m else None


def rows() -> list[Row]:
    with SWEEP.open(encoding="utf-8") as f:
        out = []
        for r in csv.DictReader(f, delimiter="\t"):
            out.append(Row(r["case"], r["model"], r["vllm_version"].split()[0],
                           float(r["gpu_mem_gib"]), int(r["tp"]), int(r["pp"]), float(r["gmu"]),
                           r["dtype/quant"], r["kv_dtype"], int(r["max_model_len"]),
                           float(r["logged_weights_gib"]), float(r["logged_kv_gib"]),
                           int(r["logged_kv_tokens"]),
                           int(r["logged_blocks"]) if r["logged_blocks"] else None, r["notes"]))
        return out


def inputs(row: Row) -> vb.Inputs | None:
    """The launch the row describes, resolved the way the linter resolves a launch (catalog
    model, name hint, --dtype / online --quantization); None when the model is not known."""
    match = knowledge.resolve_model(row.model)
    if match is None:
        return None
    shape = match.shape
    dtype, _, quant = (p.strip() for p in row.dtype.partition("/"))
    online = "fp8" if quant == "fp8" else None  # `--quantization fp8`; others are checkpoints
    prec = knowledge.weight_precision(shape, dtype=dtype, quantization=online,
                                      hint=match.precision)
    bits, method = vb.weight_format(prec.bits, prec.label, prec.origin, shape.quantization)
    kv = knowledge.kv_cache_bytes_per_value(row.kv_dtype, dtype=dtype, shape=shape)
    assert kv is not None
    return vb.Inputs(shape=shape, card_bytes=int(row.gpu_gib * GIB), utilization=row.utilization,
                     weight_bits=bits, quant_method=method, kv_bytes=kv,
                     max_model_len=row.max_model_len, tp=row.tp, pp=row.pp,
                     activation_bits=32.0 if dtype == "float32" else 16.0,
                     device_name="NVIDIA H100 80GB HBM3", release=row.version)


def ratio(row: Row) -> float | None:
    """Predicted / logged KV-cache tokens (None when the model is not in the catalog)."""
    x = inputs(row)
    if x is None:
        return None
    return vb.budget(x).kv_tokens / row.kv_tokens
