"""Flag catalogs: every option an engine accepts, as data (``mgpu_lint/catalog/flags/*.json``).

One JSON file per engine (llama-server, rpc-server) and per vLLM and SGLang release
(``vllm-<version>.json``, ``sglang-<version>.json``, each complete).
A release file either lists every option, or names a ``base`` release and only the differences
(``drop``: option keys the base has and this release lacks; ``options``: options added or changed,
matched by ``key``, each given whole; ``retired`` replaces the base's list when given).  vLLM
0.30.0 (the default release) is complete; every other release is its neighbour's differences
(0.29.0 from 0.30.0, 0.28.0 from 0.29.0 …, 0.31.0 from 0.30.0 …), so loading one release reads
the chain between it and 0.30.0.  Files are read lazily, once per process, into plain frozen
dataclasses without validation (pydantic's import and schema building cost more than a one-file
lint); ``validate_file`` checks a document against the same classes with pydantic, and the tests
run it over every file and require the same result as the run-time loader.

``vllm-history.json`` lists, for every spelling that some catalogued vLLM releases accept and
others do not, the releases that accept it (``"0.6.6.post1..0.17.1"`` ranges) and an optional
hint; it yields each release's ``retired`` list (removed flags and flags added later), which
make MG004 messages name the release.

Option fields (compact: absent means null/false/empty):
``key`` stable identifier (vLLM: the argparse ``dest``); ``names`` spellings that set the option;
``neg`` spellings that set a boolean to false; ``nargs`` 0 (flag), 1 (default), 2, ``"?"``,
``"+"`` or ``"*"`` (argparse: zero or more words; SGLang); ``type`` how the value is converted
(see ``ValueType``); ``choices`` enforced values;
``nullable`` (vLLM: ``None`` is accepted); ``default``; ``sep`` list separator (``[,/]`` is a regex
class); ``env``/``env_neg`` environment names (llama.cpp); ``repeatable`` every occurrence is
kept (accumulates) instead of the last one winning; ``repeat: append`` the same for argparse
``append``; ``deprecated``/``removed`` a message; ``fields`` top-level keys of a JSON config
object; ``path`` the value names a file; ``const`` the value of a bare ``nargs='?'`` flag;
``frontend`` (vLLM) registered by the OpenAI server's front end, not by
``AsyncEngineArgs.add_cli_args`` (the demo server ``vllm.entrypoints.api_server`` lacks it).

``retired`` lists spellings the engine does not accept (removed, or only in other releases) with
what to use instead; they make MG004 messages helpful.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter
from functools import cache, lru_cache
from typing import Any, Literal, NamedTuple

from ..catalog.data import read_text
from ..versions import version_key
from ..records import dataclass, replace

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
    "bool",  # vLLM StoreBoolean (up to 0.7): a bare flag is true, else the word true/false
]

DEFAULT_VLLM_VERSION = "0.30.0"


@dataclass(frozen=True, slots=True, kw_only=True)
class OptionSpec:
    __pydantic_config__ = {"extra": "forbid"}  # for validate_file only

    key: str
    names: tuple[str, ...]
    neg: tuple[str, ...] = ()
    nargs: int | Literal["?", "+", "*"] = 1
    type: ValueType = "str"
    # a "json" value the release validates as a config class: only a JSON object is accepted
    json_object: bool = False
    choices: tuple[str | int | None, ...] | None = None
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
    # vLLM: registered by the OpenAI server's front end (vllm serve's make_arg_parser and
    # sub-command), not by AsyncEngineArgs.add_cli_args: the demo api_server lacks it
    frontend: bool = False

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


@dataclass(frozen=True, slots=True, kw_only=True)
class RetiredFlag:
    __pydantic_config__ = {"extra": "forbid"}  # for validate_file only

    names: tuple[str, ...]
    last: str | None = None  # last release that accepted it
    since: str | None = None  # first (later) release that accepts it
    hint: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogFile:
    """The JSON document of one catalog file (full, or differences from ``base``)."""
    __pydantic_config__ = {"extra": "forbid"}  # for validate_file only


    generated: str | None = None  # who wrote the file (scripts/vllm_catalog.py for vLLM)
    engine: str
    version: str
    source: str
    base: str | None = None
    drop: tuple[str, ...] = ()
    options: tuple[OptionSpec, ...] = ()
    retired: tuple[RetiredFlag, ...] | None = None

    def apply(self, diff: CatalogFile) -> CatalogFile:
        """The document of a release described as differences (``diff``) from this one."""
        changed = {o.key: o for o in diff.options}
        dropped = set(diff.drop)
        options = [changed.pop(o.key, o) for o in self.options if o.key not in dropped]
        options.extend(changed.values())
        return CatalogFile(
            engine=self.engine, version=diff.version, source=diff.source, base=None, drop=(),
            options=tuple(options),
            retired=diff.retired if diff.retired is not None else self.retired,
        )


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
        # the Setting of each option a launch does not state (engines/invocation.py): one
        # immutable object per release, shared by every launch
        self.default_settings: dict[str, Any] = {}
        self._suggestions: dict[str, str | None] = {}
        self._lengths = [len(n) for n in self._sorted]
        self._longest = max(self._lengths, default=0)
        self._index: tuple[dict[tuple[str, int], list[int]], dict[str, int]] | None = None
        self._sums: tuple[dict[str, list[int]], dict[str, int]] | None = None
        self._top_bits = 0
        self._needs: dict[tuple[int, float], int] = {}

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
            self._suggestions[spelling] = self._closest(spelling)
        return self._suggestions[spelling]

    def _closest(self, spelling: str, cutoff: float = 0.75) -> str | None:
        """``difflib.get_close_matches(spelling, names, n=1, cutoff=cutoff)``, same answer, a
        fraction of the work: difflib's own upper bounds (length, then shared characters as a
        multiset) are computed for all names at once from an index of character counts, and
        only the few names that pass them are compared in full.  An unknown flag costs ~0.2 ms
        instead of ~4 ms, and a huge word is refused by its length alone."""
        names = self._sorted
        la = len(spelling)
        if not names or (la > self._longest
                          and 2.0 * self._longest / (la + self._longest) < cutoff):
            return None  # no name is long enough for difflib's length bound (real_quick_ratio)
        bounds = []
        lengths = self._lengths
        for i, m in self._shared_passing(spelling, cutoff):
            length = la + lengths[i]
            bound = 2.0 * (m if m < la else la) / length  # m <= min(la, lb) already
            if bound >= cutoff:  # difflib's quick_ratio (and so real_quick_ratio) bound
                bounds.append((bound, i))
        bounds.sort(reverse=True)
        best: tuple[float, str] | None = None
        from difflib import SequenceMatcher  # only for an unknown flag

        matcher = SequenceMatcher()
        matcher.set_seq2(spelling)
        for bound, i in bounds:
            if best is not None and bound < best[0]:
                break  # no later name can score higher (their upper bounds are lower)
            x = names[i]
            matcher.set_seq1(x)
            score = matcher.ratio()
            if score >= cutoff and (best is None or (score, x) > best):
                best = (score, x)
        return best[1] if best else None

    def _shared_passing(self, spelling: str, cutoff: float) -> list[tuple[int, int]]:
        """(i, m) for every name i whose multiset intersection m with ``spelling`` may pass
        difflib's quick_ratio bound (2m / (len(spelling) + len(name)) >= cutoff); a superset
        of those that pass, never missing one.

        The counts for all names come from one sum of big integers, one byte per name: for each
        character of the spelling, the integer whose byte i is how many of it name i shares
        with the spelling (``min(count in spelling, count in name)``; precomputed per character
        and count).  Spellings longer than 128 are counted name by name.  Adding, per name, 128 minus the least m its length needs sets the byte's top
        bit for the names that may pass (no carry: m <= 128 and the addend <= 127).  An unknown
        flag costs a few big-integer additions instead of one counter update per name sharing
        each of its characters."""
        la = len(spelling)
        names = self._sorted
        if not names:
            return []
        if la > 128:
            index, most = self._char_index()
            shared: Counter[int] = Counter()
            for ch, n in Counter(spelling).items():
                for k in range(1, min(n, most.get(ch, 0)) + 1):
                    shared.update(index[(ch, k)])
            return list(shared.items())
        per_char, most = self._char_sums()
        total = 0
        for ch, n in Counter(spelling).items():
            k = min(n, most.get(ch, 0))
            if k:
                total += per_char[ch][k]
        if not total:
            return []
        lengths = self._lengths
        need = self._needs.get((la, cutoff))
        if need is None:
            # the least m with 2m / (la + lb) >= cutoff, as difflib computes it; at least 1
            offsets = bytearray(len(names))
            for i, lb in enumerate(lengths):
                m = 1
                while m <= min(la, lb) and 2.0 * m / (la + lb) < cutoff:
                    m += 1
                offsets[i] = 128 - min(m, 128)
            if len(self._needs) > 512:
                self._needs.clear()
            need = self._needs[(la, cutoff)] = int.from_bytes(offsets, "little")
        flagged = ((total + need) & self._top_bits).to_bytes(len(names) + 1, "little")
        counts = total.to_bytes(len(names) + 1, "little")
        out = []
        i = flagged.find(128)
        while i != -1:
            out.append((i, counts[i]))
            i = flagged.find(128, i + 1)
        return out

    def _char_sums(self) -> tuple[dict[str, list[int]], dict[str, int]]:
        """character -> [0, s1, s2, …] where byte i of s_k is min(k, count of the character in
        name i); and the most of each character any name has."""
        if self._sums is None:
            n = len(self._sorted)
            counts: dict[str, bytearray] = {}  # character -> byte i: its count in name i
            for i, name in enumerate(self._sorted):
                for ch, c in Counter(name).items():
                    row_of = counts.get(ch)
                    if row_of is None:
                        row_of = counts[ch] = bytearray(n)
                    row_of[i] = c
            most = {ch: max(c) for ch, c in counts.items()}
            # each s_k is the counts capped at k (bytes.translate), read as one integer: one
            # C call per character and k, where an index of names per (character, k) and a
            # big integer added per name took ~5 ms per catalog on its first unknown flag
            sums = {ch: [0, *(int.from_bytes(c.translate(_capped(k)), "little")
                              for k in range(1, most[ch] + 1))]
                    for ch, c in counts.items()}
            self._sums = (sums, most)
            self._top_bits = int.from_bytes(bytes([128]) * len(self._sorted), "little")
        return self._sums

    def _char_index(self) -> tuple[dict[tuple[str, int], list[int]], dict[str, int]]:
        """(character, k) -> indices of names with at least k of that character, and the most
        of each character any name has."""
        if self._index is None:
            index: dict[tuple[str, int], list[int]] = {}
            most: dict[str, int] = {}
            for i, name in enumerate(self._sorted):
                for ch, n in Counter(name).items():
                    most[ch] = max(most.get(ch, 0), n)
                    for k in range(1, n + 1):
                        index.setdefault((ch, k), []).append(i)
            self._index = (index, most)
        return self._index


@cache
def _capped(k: int) -> bytes:
    """A ``bytes.translate`` table: each byte value capped at ``k``."""
    return bytes(min(x, k) for x in range(256))


# Fields that the JSON gives as lists and the classes hold as tuples (everything else is taken
# as the JSON gives it, exactly as pydantic's validation leaves it; see validate_file).
_OPTION_TUPLES = ("names", "neg", "choices", "fields")


def _option(data: dict[str, Any]) -> OptionSpec:
    for name in _OPTION_TUPLES:
        v = data.get(name)
        if v is not None:
            data[name] = tuple(v)
    return OptionSpec(**data)


def _retired(data: dict[str, Any]) -> RetiredFlag:
    data["names"] = tuple(data["names"])
    return RetiredFlag(**data)


def load_file(data: dict[str, Any]) -> CatalogFile:
    """A catalog document from its JSON, without validation (the shipped files are checked by
    the tests with ``validate_file``)."""
    data = dict(data)
    data["drop"] = tuple(data.get("drop", ()))
    data["options"] = tuple(_option(dict(o)) for o in data.get("options", ()))
    if data.get("retired") is not None:
        data["retired"] = tuple(_retired(dict(r)) for r in data["retired"])
    return CatalogFile(**data)


def validate_file(data: Any) -> CatalogFile:
    """A catalog document validated by pydantic against the dataclasses above: unknown fields,
    wrong types and bad literals are refused (raises pydantic's ValidationError)."""
    from pydantic import TypeAdapter

    return TypeAdapter(CatalogFile).validate_python(data)


def _read(name: str) -> CatalogFile:
    return load_file(json.loads(read_text("flags", name)))


class VersionChoice(NamedTuple):
    """The catalogued release a launch is checked against, and why when it is not the pinned one."""

    version: str
    note: str | None = None  # None: the pinned release itself (or no pin at all)


@cache
def _vllm_history() -> dict[str, Any]:
    return json.loads(read_text("flags", "vllm-history.json"))


@cache
def vllm_versions() -> tuple[str, ...]:
    """Catalogued vLLM releases, oldest first."""
    return tuple(_vllm_history()["releases"])


_POST = re.compile(r"\.?post\d+$")


@lru_cache(maxsize=256)  # a pure function of the string: once per release a run names
def choose_vllm_version(requested: str | None) -> VersionChoice:
    """The catalogued release to check a launch pinned at ``requested`` against.

    No pin: the default (0.30.0).  ``latest``: the newest catalogued release.  A release that
    differs from a catalogued one only by a ``.postN`` suffix is the same release (0.8.5 and
    0.8.5.post1 have the same option code: vllm/engine/arg_utils.py, vllm/entrypoints/openai/
    cli_args.py and vllm/utils.py are identical in the two wheels).  Another patch release of a
    catalogued minor line uses that line's release with a note, because options do change
    inside a line (0.10.0 and 0.10.2 differ by 37 spellings); outside the catalogued lines the
    nearest release; a tag that names no release (``nightly``, a digest) the default.
    """
    versions = vllm_versions()
    if requested is None:
        return VersionChoice(DEFAULT_VLLM_VERSION)
    if requested == "latest":
        return VersionChoice(versions[-1])
    want = version_key(requested)
    if not want:
        return VersionChoice(
            DEFAULT_VLLM_VERSION,
            f"`{requested}` names no vLLM release: flags are checked against vLLM "
            f"{DEFAULT_VLLM_VERSION}, the default release")
    same = [v for v in versions if _POST.sub("", v) == _POST.sub("", requested)]
    if same:
        return VersionChoice(same[0])
    keys = {v: version_key(v) for v in versions}
    line = [v for v in versions if keys[v][:2] == want[:2]]
    if line:
        later = [v for v in line if keys[v] >= want]
        chosen = later[0] if later else line[-1]
        why = f"the catalogued release of the {want[0]}.{want[1]} line"
    else:
        below = [v for v in versions if keys[v] < want]
        chosen = below[-1] if below else versions[0]
        why = "the nearest catalogued release"
    return VersionChoice(
        chosen,
        f"vLLM {requested} has no flag catalog: flags are checked against vLLM {chosen}, {why}")


@cache  # each release's document once a run: the releases a run checks share their bases
def _vllm_doc(version: str) -> CatalogFile:
    doc = _read(f"vllm-{version}.json")
    if doc.base is None:
        return doc
    return _vllm_doc(doc.base).apply(doc)


@cache
def _vllm_raw(version: str) -> dict[str, Any]:
    return json.loads(read_text("flags", f"vllm-{version}.json"))


@cache
def vllm_value_releases(key: str) -> tuple[str, ...]:
    """Catalogued vLLM releases in which option ``key`` takes a value (a StoreBoolean
    ``--enable-chunked-prefill=false`` up to 0.7.3), oldest first: what ``--flag=value`` of an
    unpinned launch may mean in another release.  Read from the catalog files as they are (each
    release's own entry, else its base's unless it drops the key), without building catalogs."""
    out = []
    for version in vllm_versions():
        release = version
        while True:
            data = _vllm_raw(release)
            entry = next((o for o in data.get("options", ()) if o["key"] == key), None)
            if entry is not None or key in data.get("drop", ()) or data.get("base") is None:
                break
            release = data["base"]
        if entry is not None and entry.get("nargs", 1) != 0:
            out.append(version)
    return tuple(out)


_Span = tuple[tuple[int, ...], tuple[int, ...], str, str]  # keys of first/last, their names


@cache
def _spelling_history() -> tuple[tuple[str, tuple[_Span, ...], str | None], ...]:
    out = []
    for entry in _vllm_history()["spellings"]:
        spans = []
        for span in entry["in"]:
            first, _, last = span.partition("..")
            last = last or first
            spans.append((version_key(first), version_key(last), first, last))
        out.append((entry["name"], tuple(spans), entry.get("hint")))
    return tuple(out)


def vllm_retired(version: str) -> tuple[RetiredFlag, ...]:
    """Spellings other catalogued releases accept and ``version`` does not: the last release
    before it that accepted each, and the first one after it."""
    want = version_key(version)
    out: list[RetiredFlag] = []
    for name, spans, hint in _spelling_history():
        if any(lo <= want <= hi for lo, hi, _, _ in spans):
            continue
        last = next((b for _, hi, _, b in reversed(spans) if hi < want), None)
        since = next((a for lo, _, a, _ in spans if lo > want), None)
        out.append(RetiredFlag(names=(name,), last=last, since=since, hint=hint))
    return tuple(out)


@cache
def vllm_catalog(version: str = DEFAULT_VLLM_VERSION) -> FlagCatalog:
    """The catalog of one catalogued vLLM release (see ``choose_vllm_version``)."""
    doc = _vllm_doc(version)
    return FlagCatalog(replace(doc, retired=vllm_retired(version)))


# SGLang releases with a catalog (``sglang-<release>.json``, generated by
# scripts/sglang_catalog.py), oldest first; the last is checked when nothing pins the release.
SGLANG_VERSIONS = ("0.4.10.post2", "0.5.5", "0.5.23")


@cache
def sglang_catalog(version: str = SGLANG_VERSIONS[-1]) -> FlagCatalog:
    """The catalog of one catalogued SGLang release (another release: the newest)."""
    if version not in SGLANG_VERSIONS:
        version = SGLANG_VERSIONS[-1]
    return FlagCatalog(_read(f"sglang-{version}.json"))


@cache
def llama_catalog() -> FlagCatalog:
    return FlagCatalog(_read("llama-server.json"))


@cache
def rpc_catalog() -> FlagCatalog:
    return FlagCatalog(_read("rpc-server.json"))
