"""Read a model's shape and exact weight size from a GGUF file's header.

Only the header is read (metadata key/values and tensor descriptions, bounded), never the
weights.  The format (GGUF v2/v3, little-endian) and the type sizes follow ggml: `gguf-py`
0.19.0 `gguf/constants.py` (`GGUFValueType`, `GGMLQuantizationType`, `GGML_QUANT_SIZES`,
`LlamaFileType`).  A tiny reader of our own instead of the `gguf` package: that package pulls in
numpy for what is a few dozen lines of struct unpacking, and the lint path must start fast.
"""

from __future__ import annotations

import struct
from typing import Any, BinaryIO
from ..records import dataclass

MAGIC = b"GGUF"
MAX_HEADER_BYTES = 64 * 1024 * 1024  # token lists of large vocabularies take a few MB
MAX_ITEMS = 1 << 22
MAX_NESTING = 8  # arrays of arrays; real files nest at most 2 (gguf-py never writes deeper)

# ggml type id -> (weights per block, bytes per block); QK_K = 256 (gguf-py 0.19.0 constants.py)
GGML_TYPES: dict[int, tuple[str, int, int]] = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 40),
    10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210), 15: ("Q8_K", 256, 292),
    16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74), 18: ("IQ3_XXS", 256, 98),
    19: ("IQ1_S", 256, 50), 20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82), 23: ("IQ4_XS", 256, 136), 24: ("I8", 1, 1), 25: ("I16", 1, 2),
    26: ("I32", 1, 4), 27: ("I64", 1, 8), 28: ("F64", 1, 8), 29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2), 34: ("TQ1_0", 256, 54), 35: ("TQ2_0", 256, 66), 39: ("MXFP4", 32, 17),
    40: ("NVFP4", 64, 36), 41: ("Q1_0", 128, 18),
}
# llama_ftype (general.file_type) -> the name llama.cpp prints (gguf-py LlamaFileType)
FILE_TYPES: dict[int, str] = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
    11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
    17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS",
    23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S",
    29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0",
    38: "MXFP4_MOE", 39: "NVFP4", 40: "Q1_0",
}
# GGUFValueType -> struct format of scalars
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
            10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


class GgufError(ValueError):
    pass


@dataclass(frozen=True)
class GgufHeader:
    metadata: dict[str, Any]
    tensors: int
    params: int  # elements of every tensor
    weight_bytes: int  # bytes of every tensor as stored
    header_bytes: int = 0  # bytes of the file read for it (what safeio.memo keeps it at)

    @property
    def architecture(self) -> str | None:
        arch = self.metadata.get("general.architecture")
        return arch if isinstance(arch, str) else None

    def arch_value(self, key: str) -> Any:
        return self.metadata.get(f"{self.architecture}.{key}")

    @property
    def file_type(self) -> str | None:
        ft = self.metadata.get("general.file_type")
        return FILE_TYPES.get(ft) if isinstance(ft, int) else None

    @property
    def bits_per_weight(self) -> float:
        return self.weight_bytes * 8 / self.params if self.params else 0.0


class _Reader:
    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        self.read_bytes = 0

    def take(self, n: int) -> bytes:
        self.read_bytes += n
        if n < 0 or self.read_bytes > MAX_HEADER_BYTES:
            raise GgufError("header larger than the limit")
        data = self.fh.read(n)
        if len(data) != n:
            raise GgufError("truncated header")
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        n = self.unpack("<Q")
        return self.take(n).decode("utf-8", "replace")

    def value(self, vtype: int, keep: bool, depth: int = 0) -> Any:
        if vtype in _SCALARS:
            return self.unpack(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            if depth >= MAX_NESTING:
                raise GgufError(f"arrays nested deeper than {MAX_NESTING} levels")
            item_type = self.unpack("<I")
            count = self.unpack("<Q")
            if count > MAX_ITEMS:
                raise GgufError("array too long")
            if item_type in _SCALARS and not keep:
                self.take(struct.calcsize(_SCALARS[item_type]) * count)
                return count
            if keep:
                return [self.value(item_type, keep, depth + 1) for _ in range(count)]
            # a vocabulary of 4 million tokens: read past, neither decoded nor listed (the list
            # took 300 MiB)
            if item_type == _STRING:
                for _ in range(count):
                    self.take(self.unpack("<Q"))
            else:
                for _ in range(count):
                    self.value(item_type, False, depth + 1)
            return count
        raise GgufError(f"unknown value type {vtype}")


def read_header(path: str, spend: Any = None) -> GgufHeader:
    """Metadata and tensor totals of a GGUF file; GgufError when it is not one or cannot be
    read (a FIFO or device is refused before any read: see safeio).  Read once per state of
    the file in a run (safeio.memo): every launch naming the model asks.  ``spend``: the
    budget to count it against (memo's)."""
    from .. import bounds, safeio

    try:
        return safeio.memo(path, ("gguf",), _header_or_side_error,
                           cost=lambda h: h.header_bytes // bounds.GGUF_BYTES_PER_SIDE_BYTE,
                           spend=spend)
    except safeio.SideFileError as err:
        raise GgufError(err.message) from None


def _header_or_side_error(path: str) -> GgufHeader:
    try:
        return _read_header(path)
    except GgufError as err:
        from ..safeio import SideFileError

        raise SideFileError(str(err)) from None


def _read_header(path: str) -> GgufHeader:
    from .. import safeio

    fh = safeio.open_regular(path)
    with fh:
        r = _Reader(fh)
        if r.take(4) != MAGIC:
            raise GgufError("not a GGUF file (bad magic)")
        version = r.unpack("<I")
        if version not in (2, 3):
            raise GgufError(f"GGUF version {version} is not supported")
        n_tensors = r.unpack("<Q")
        n_kv = r.unpack("<Q")
        if n_tensors > MAX_ITEMS or n_kv > MAX_ITEMS:
            raise GgufError("implausible header counts")
        meta: dict[str, Any] = {}
        for _ in range(n_kv):
            key = r.string()
            vtype = r.unpack("<I")
            # token lists are long and unneeded: arrays are kept only as their length
            meta[key] = r.value(vtype, keep=False)
        params = 0
        size = 0
        for _ in range(n_tensors):
            r.string()
            n_dims = r.unpack("<I")
            if n_dims > 8:
                raise GgufError("implausible tensor rank")
            elements = 1
            for _ in range(n_dims):
                elements *= r.unpack("<Q")
            ttype = r.unpack("<I")
            r.unpack("<Q")  # offset
            info = GGML_TYPES.get(ttype)
            if info is None:
                raise GgufError(f"unknown tensor type {ttype}")
            _, per_block, block_bytes = info
            params += elements
            size += elements // per_block * block_bytes
        return GgufHeader(meta, n_tensors, params, size, r.read_bytes)
