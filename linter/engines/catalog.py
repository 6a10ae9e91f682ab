"""Flag catalogs: every option an engine accepts, as data (``mgpu_lint/catalog/flags/*.json``).

One JSON file per engine (llama-server, rpc-server) and per vLLM release (``vllm-<version>.json``).
A release file either lists every option, or names a ``base`` release and only the differences
(``drop``: option keys the base has and this release lacks; ``options``: options added or changed,
matched by ``key``; ``retired`` replaces the base's list when given).  Files are read lazily, once
per process, and validated by pydantic.

Option fields (compact: absent means null/false/empty):
``key`` stable identifier (vLLM: the argparse ``dest``); ``names`` spellings that set the option;
``neg`` spellings that set a boolean to false; ``nargs`` 0 (flag), 1 (default), 2, ``"?"`` or
``"+"``; ``type`` how the value is converted (see ``ValueType``); ``choices`` enforced values;
``nullable`` (vLLM: ``None`` is accepted); ``default``; ``sep`` list separator (``[,/]`` is a regex
class); ``env``/``env_neg`` environment names (llama.cpp); ``repeatable`` every occurrence is
kept (accumulates) instead of the last one winning; ``repeat: append`` the same for argparse
``append``; ``deprecated``/``removed`` a message; ``fields`` top-level keys of a JSON config
object; ``path`` the value names a file; ``const`` the value of a bare ``nargs='?'`` flag.

``retired`` lists spellings the engine does not accept (removed, or only in other releases) with
what to use instead; they make MG004 messages helpful.
"""

from __future__ import annotations

import bisect
import difflib
import json
import re
from functools import cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

ValueType = Literal[
    "flag",  # no value (a boolean set by its spelling)
    "help",  # prints help and exits
    "int",
    "float",
    "str",
    "json",  # a JSON value (vLLM json.loads / config dataclass)
    "json_or_str",  # JSON object when it looks like {...}, else a plain string
    "hrint",  # vLLM human-readable int: 32k = 32000, 32K = 32768
    "hrint_auto",  # hrint, or -1 / auto
    "lora_modules",  # vLLM --lora-modules items: name=path or a JSON object
    "id_list",  # vLLM --device-ids: comma list of ints or UUIDs
    "ngl",  # llama.cpp -ngl: int, auto (-1) or all (-2)
    "float_list",  # llama.cpp -ts
    "uint_list",  # llama.cpp -fitt
    "hostport_list",  # llama.cpp --rpc
]

DEFAULT_VLLM_VERSION = "0.30.0"


class OptionSpec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    names: tuple[str, ...]
    neg: tuple[str, ...] = ()
    nargs: int | Literal["?", "+"] = 1
    type: ValueType = "str"
    choices: tuple[str | int, ...] | None = None
    nullable: bool = False
    default: Any = None
    sep: str | None = None
    env: str | None = None
    env_neg: str | None = None
    repeatable: bool = False
    repeat: Literal["append"] | None = None
    deprecated: str | None = None
    removed: str | None = None
    fields: tuple[str, ...] | None = None
    path: bool = False
    const: Any = None

    @property
    def takes_value(self) -> bool:
        return self.nargs != 0

    @property
    def accumulates(self) -> bool:
        """Every occurrence is kept (no "last one wins")."""
        return self.repeatable or self.repeat == "append"

    @property
    def display(self) -> str:
        """The spelling used in messages: the first long one."""
        return next((n for n in self.names if n.startswith("--")), self.names[0])

    @property
    def is_bool(self) -> bool:
        return self.type == "flag"


class RetiredFlag(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    names: tuple[str, ...]
    last: str | None = None  # last release that accepted it
    since: str | None = None  # first (later) release that accepts it
    hint: str | None = None


class CatalogFile(BaseModel):
    """The JSON document of one catalog file (full, or differences from ``base``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    engine: str
    version: str
    source: str
    base: str | None = None
    drop: tuple[str, ...] = ()
    options: tuple[OptionSpec, ...] = ()
    retired: tuple[RetiredFlag, ...] | None = None


class Match:
    """How a spelling resolved: the option, and whether it is a negative (``--no-x``) form."""

    __slots__ = ("negative", "option", "spelling")

    def __init__(self, option: OptionSpec, negative: bool, spelling: str) -> None:
        self.option = option
        self.negative = negative
        self.spelling = spelling  # the catalog spelling matched


class FlagCatalog:
    """A validated catalog with its lookup tables."""

    def __init__(self, doc: CatalogFile) -> None:
        self.engine = doc.engine
        self.version = doc.version
        self.options: tuple[OptionSpec, ...] = doc.options
        self.retired: tuple[RetiredFlag, ...] = doc.retired or ()
        self.by_key: dict[str, OptionSpec] = {}
        self.by_spelling: dict[str, Match] = {}
        self.by_env: dict[str, Match] = {}
        for opt in self.options:
            if opt.key in self.by_key:
                raise ValueError(f"{doc.version}: duplicate option key {opt.key}")
            self.by_key[opt.key] = opt
            for names, negative in ((opt.names, False), (opt.neg, True)):
                for name in names:
                    if name in self.by_spelling:
                        raise ValueError(f"{doc.version}: spelling {name} given twice")
                    self.by_spelling[name] = Match(opt, negative, name)
            if opt.env:
                self.by_env[opt.env] = Match(opt, False, opt.env)
            if opt.env_neg:
                self.by_env[opt.env_neg] = Match(opt, True, opt.env_neg)
        self.retired_by_spelling: dict[str, RetiredFlag] = {
            n: r for r in self.retired for n in r.names
        }
        self._sorted = sorted(self.by_spelling)
        self._suggestions: dict[str, str | None] = {}

    def lookup(self, spelling: str) -> Match | None:
        return self.by_spelling.get(spelling)

    def prefixed(self, prefix: str) -> list[Match]:
        """Every spelling that starts with ``prefix`` (argparse abbreviation candidates)."""
        names = self._sorted
        i = bisect.bisect_left(names, prefix)
        out: list[Match] = []
        while i < len(names) and names[i].startswith(prefix):
            out.append(self.by_spelling[names[i]])
            i += 1
        return out

    def suggest(self, spelling: str) -> str | None:
        """The closest known spelling ("did you mean"), if any is close enough."""
        if spelling not in self._suggestions:
            if len(self._suggestions) > 4096:
                self._suggestions.clear()
            close = difflib.get_close_matches(spelling, self._sorted, n=1, cutoff=0.75)
            self._suggestions[spelling] = close[0] if close else None
        return self._suggestions[spelling]

    def derive(self, diff: CatalogFile) -> FlagCatalog:
        """The catalog of a release described as differences from this one."""
        changed = {o.key: o for o in diff.options}
        dropped = set(diff.drop)
        options = [changed.pop(o.key, o) for o in self.options if o.key not in dropped]
        options.extend(changed.values())
        return FlagCatalog(CatalogFile(
            engine=self.engine, version=diff.version, source=diff.source,
            options=tuple(options),
            retired=diff.retired if diff.retired is not None else self.retired,
        ))


def _read(name: str) -> CatalogFile:
    text = resources.files("mgpu_lint.catalog").joinpath("flags", name).read_text("utf-8")
    return CatalogFile.model_validate(json.loads(text))


@cache
def vllm_versions() -> tuple[str, ...]:
    """Catalogued vLLM releases, oldest first."""
    folder = resources.files("mgpu_lint.catalog").joinpath("flags")
    found = [
        p.name[len("vllm-"):-len(".json")]
        for p in folder.iterdir()
        if p.name.startswith("vllm-") and p.name.endswith(".json")
    ]
    return tuple(sorted(found, key=version_key))


def version_key(version: str) -> tuple[int, ...]:
    """Numeric sort key of a release string (``0.8.5.post1`` → (0, 8, 5, 1))."""
    return tuple(int(x) for x in re.findall(r"\d+", version)[:4])


def nearest_vllm_version(version: str) -> str:
    """The catalogued release closest to ``version`` (the same one when catalogued)."""
    versions = vllm_versions()
    if version in versions:
        return version
    want = version_key(version)
    if not want:
        return DEFAULT_VLLM_VERSION

    def distance(v: str) -> tuple[int, ...]:
        have = version_key(v)
        return tuple(abs(a - b) for a, b in zip(have + (0,) * 4, want + (0,) * 4))

    return min(versions, key=distance)


@cache
def vllm_catalog(version: str = DEFAULT_VLLM_VERSION) -> FlagCatalog:
    """The catalog of one catalogued vLLM release (see ``nearest_vllm_version``)."""
    doc = _read(f"vllm-{version}.json")
    if doc.base is None:
        return FlagCatalog(doc)
    return vllm_catalog(doc.base).derive(doc)


@cache
def llama_catalog() -> FlagCatalog:
    return FlagCatalog(_read("llama-server.json"))


@cache
def rpc_catalog() -> FlagCatalog:
    return FlagCatalog(_read("rpc-server.json"))
