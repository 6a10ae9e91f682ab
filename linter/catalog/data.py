"""How the catalog data files beside this package are read (``gpus.json``,
``gguf_types.json``, ``labels.json``): parsed once and cached; the small records they hold.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from ..identity import ByIdentity
from ..records import dataclass

if TYPE_CHECKING:
    from pydantic import ValidationError


@dataclass(frozen=True)
class _GgufFileType:
    bpw: float
    base_type: str
    base_bpw: float
    alias_of: str | None = None


@dataclass(frozen=True)
class _GgufTensorType:
    block_bytes: int
    block_weights: int
    kv_cache: bool


@dataclass(frozen=True)
class _InstanceType:
    gpu: str
    count: int | None
    source: str


@dataclass(frozen=True)
class _Catalog:
    pcie: dict[str, float]
    file_types: dict[str, _GgufFileType]
    tensor_types: dict[str, _GgufTensorType]
    label_keys: dict[str, tuple[str, ...]]
    accelerators: dict[str, str]
    instance_types: dict[str, _InstanceType]


# The package's data files are read beside its modules (pip installs wheels unpacked):
# importlib.resources would import tempfile, zipfile, shutil and random first, ~5 ms of a
# one-file lint's start-up (issue 19); os.path, not pathlib, which imports urllib.parse,
# ipaddress and fnmatch (~8 ms) when nothing else on that path does.
CATALOG_DIR = os.path.dirname(os.path.realpath(__file__))


def read_text(*parts: str) -> str:
    """A data file of the catalog package (``flags/vllm-0.30.0.json``), as text."""
    with open(os.path.join(CATALOG_DIR, *parts), encoding="utf-8") as fh:
        return fh.read()


def _read(name: str) -> Any:
    return json.loads(read_text(name))


@cache
def _catalog() -> _Catalog:
    gpus, gguf, labels = _read("gpus.json"), _read("gguf_types.json"), _read("labels.json")
    return _Catalog(
        pcie={k: float(v) for k, v in gpus["pcie_gbs_per_direction"].items()},
        file_types={k: _GgufFileType(**v) for k, v in gguf["file_types"].items()},
        tensor_types={k: _GgufTensorType(**v) for k, v in gguf["tensor_types"].items()},
        label_keys={k: tuple(v) for k, v in labels["label_keys"].items()},
        accelerators=dict(labels["accelerators"]),
        instance_types={k: _InstanceType(**v) for k, v in labels["instance_types"].items()},
    )


def _canonical(extra: Mapping[str, Any]) -> str:
    return json.dumps(extra, sort_keys=True, default=str)


# a configuration's [models] table is one object for the whole run: encoding it for every launch
# cost 1.6 ms a launch with 1,000 entries (2,000 launches: 3.2 s)
_canonical_of = ByIdentity(_canonical)


def _frozen(extra: Mapping[str, Any] | None) -> str:
    """``extra`` as canonical JSON: the key of the caches built from a configured table (the
    tables are not changed once the configuration is read)."""
    return _canonical_of(extra) if extra else "{}"


def _first_error(exc: ValidationError | ValueError) -> str:
    if not hasattr(exc, "errors"):
        return str(exc)
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"{where}: {err['msg']}" if where else err["msg"]


class CatalogError(ValueError):
    """A user-supplied model or GPU entry that does not validate: ``section`` is "models" or
    "gpus", ``name`` the entry's name as configured."""

    def __init__(self, section: str, name: str, problem: str) -> None:
        what = "model" if section == "models" else "GPU"
        super().__init__(f"{what} {name!r} in the configuration: {problem}")
        self.section, self.name = section, name
