"""Bounded reading of side files: every file the linter opens besides the input itself.

A manifest names other files: a vLLM ``--config`` YAML, a model directory's ``config.json``, a
GGUF file, the compose ``.env``, a walked directory's ``.gitignore``.  Their content is as
hostile as the input's, so each is read here, once, with the same promises as the input:

- regular files only: a FIFO, device or socket is refused before it is opened (``os.stat``), and
  the file is opened with ``O_NONBLOCK`` and checked again (``fstat``) so a file swapped for a
  FIFO in between cannot block the run either;
- a size limit (the caller's), read with one bounded ``read``;
- YAML with the main reader's nesting guard (``yamlsrc.MAX_DEPTH``) and an alias budget (aliases
  are counted by the size they would expand to, never expanded to be counted);
- JSON with a nesting limit checked before ``json.loads`` (which recurses), so deep input is an
  error with an offset instead of a RecursionError.

Every failure is a ``SideFileError`` (message and character offset in the side file) that the
caller turns into a finding; no other exception leaves this module for any file content.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import re
import stat
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Iterator, TypeVar

if TYPE_CHECKING:
    from .bounds import ReadBudget
    from .findings import Finding, Severity
    from .source import Span

MAX_SIDE_BYTES = 4 * 1024 * 1024
MAX_JSON_DEPTH = 200  # far below the interpreter's recursion limit; real configs nest < 10
MAX_YAML_NODES = 100_000  # nodes a document may expand to, aliases counted at full size

T = TypeVar("T")


class SideFileError(Exception):
    """``places``: (offset, label) of the places in the side file the message names (a YAML
    error's "opened here" and "fails here"), for related locations."""

    def __init__(self, message: str, offset: int = 0,
                 places: tuple[tuple[int, str], ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.places = places


# ------------------------------------------------------------------------ read once per run

class _Run:
    """One run's parsed side files: key -> (value or SideFileError, cost), oldest first;
    ``shared``: the cache kept across runs that this run also reads and fills (SideCache)."""

    __slots__ = ("entries", "bytes", "shared")

    def __init__(self, shared: "SideCache | None" = None) -> None:
        self.entries: dict[tuple[Any, ...], tuple[Any, int]] = {}
        self.bytes = 0
        self.shared = shared


class SideCache(_Run):
    """Parsed side files kept from one lint to the next, for a long-lived process (the language
    server, linter/lsp.py): a 200 KB compose file whose services build a 1 MiB Dockerfile read
    and parsed it again at every edit (1.6 s an edit), a 16 MiB GGUF header beside launches
    0.9-1.0 s.  An entry is the same key as a run's (``memo``: the reading's kind and the
    file's device, inode, type, size, modification and change times, stat'ed again at each
    lint), so a file changed in any of them is read again.  Only a file whose times are more
    than RACY_NS before it was read is kept here: a file system's clock ticks coarsely (a few
    ms on Linux, 1-2 s on others), and a second write within the tick of the first, of the same
    size, leaves the times as they were; such a file is kept for its own run only and read again
    at the next one.  Bounded as a run's cache (bounds.SIDE_CACHE_ENTRIES, SIDE_CACHE_BYTES;
    the least recently used dropped first).  Used from several threads (the server lints on its
    worker and, for an opened document, on its event loop): every access holds ``lock``."""

    __slots__ = ("lock",)

    def __init__(self) -> None:
        import threading

        super().__init__()
        self.lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> tuple[Any, int] | None:
        with self.lock:
            hit = self.entries.pop(key, None)
            if hit is not None:
                self.entries[key] = hit  # now the most recently used
            return hit

    def put(self, key: tuple[Any, ...], entry: tuple[Any, int]) -> None:
        with self.lock:
            if key not in self.entries:
                _keep(self, key, entry)


# nanoseconds: a file changed within this time before it is read is not kept across runs
# (SideCache): coarser than any file system's timestamps (FAT's 2 s)
RACY_NS = 2_000_000_000


_RUN: ContextVar[_Run | None] = ContextVar("mgpu_lint_side_files", default=None)


@contextmanager
def side_files(keep: SideCache | None = None) -> Iterator[None]:
    """Side files read inside this block are parsed once per state (``memo``): a script of
    1,000 launches naming one --config or GGUF file read and parsed it 1,000 times.  The cache
    lives for the block only (one lint: runner.lint, read_files), so a run sees each file as it
    is then, whatever the file system's timestamps say; a block inside another shares the
    outer one's cache.  ``keep``: a cache kept across blocks (the language server's, SideCache)
    that the block also reads, and fills with the files it may keep.  A context variable, so
    the language server's worker thread has a cache of its own."""
    if _RUN.get() is not None:
        yield
        return
    token = _RUN.set(_Run(keep))
    try:
        yield
    finally:
        _RUN.reset(token)


# the side files a block read (``recorded``): (path, its state when read, None: no such file)
_READS: ContextVar[list[tuple[str, tuple[int, ...] | None]] | None] = ContextVar(
    "mgpu_lint_side_reads", default=None)


@contextmanager
def recorded() -> Iterator[list[tuple[str, tuple[int, ...] | None]]]:
    """The side files ``memo`` reads inside this block, each with its state then (``state``),
    for a cache of what the block made from them (the language server's files beside its
    document, linter/context.py: a compose file's reading depends on its .env and the
    Dockerfiles it builds)."""
    reads: list[tuple[str, tuple[int, ...] | None]] = []
    token = _READS.set(reads)
    try:
        yield reads
    finally:
        _READS.reset(token)


def state(path: str) -> tuple[int, ...] | None:
    """The file's identity and state (device, inode, type, size, modification and change
    times), None when it cannot be stat'ed: the key of what is kept of a file (``memo``)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled(st: tuple[int, ...], began: int) -> bool:
    """Whether a file of state ``st`` (``state``), read from ``began`` (time.time_ns) on, last
    changed more than RACY_NS before: what was read of it may be kept past this run."""
    return max(st[4], st[5]) < began - RACY_NS


class PartlyRead(SideFileError):
    """A side file whose reading stopped at one of the linter's bounds (linter/bounds.py):
    like the input's own, a warning."""


class SideBudgetSpent(SideFileError):
    """A side file not read because the file naming it has read its side-file bytes
    (bounds.SIDE_BYTES_PER_FILE); the MG001 is bounds.side_cut_findings', once a file."""


def memo(path: str, kind: tuple[Any, ...], load: Callable[[str], T],
         cost: Callable[[T], int] | None = None,
         spend: "tuple[ReadBudget, Span, str] | None" = None, limit: int = MAX_SIDE_BYTES
         ) -> T:
    """``load(path)``, or what it gave (or raised: a SideFileError) for the same ``kind`` of
    reading of the same file in the same state earlier in this run (``side_files``).

    ``kind`` holds everything besides the file that the result depends on (the reader, its
    limits, the name messages give the file).  The file is named by its identity and state from
    one ``os.stat`` (device, inode, type, size, modification and change times), taken before
    and again after ``load``: a file changed meanwhile is not kept.  Outside ``side_files``,
    or when the file cannot be stat'ed, nothing is kept.  Values are shared between callers:
    they must not be changed (callers only read them).  The cache holds at most
    bounds.SIDE_CACHE_ENTRIES results and bounds.SIDE_CACHE_BYTES bytes of the files they were
    read from (``cost`` of the value, else the file's size), dropping the oldest first.

    ``spend``: the budget of the file whose launch names this one, the place it is named and
    its name: a side file the budget has not counted yet costs it the same bytes (none when it
    is refused), or, when they would pass what is left, is not read (SideBudgetSpent, the
    place kept for the MG001).  ``limit``: the most bytes ``load`` reads."""
    from .bounds import SIDE_BYTES_PER_FILE

    run = _RUN.get()
    reads = _READS.get()
    before = state(path) if run is not None or reads is not None else None
    if reads is not None:
        reads.append((path, before))
    if run is None or before is None:
        return load(path)
    ident = (before[0], before[1])
    budget = spend[0] if spend is not None and ident not in spend[0].side_seen else None
    # a file that costs its size is refused before it would pass the budget (one over the
    # reader's ``limit`` is refused by the reader, for nothing), unless it is the first one
    # read (it is within its reader's limit); one that costs what is read of it (a GGUF
    # header) once the budget is spent
    need = 1 if cost is not None else before[3] if before[3] <= limit else 0
    if budget is not None and need > budget.side_bytes and (
            budget.side_bytes <= 0 or budget.side_bytes < SIDE_BYTES_PER_FILE):
        if budget.side_cut is None:
            at = spend[1]  # type: ignore[index]
            budget.side_cut = (at.start, at.end, spend[2])  # type: ignore[index]
        raise SideBudgetSpent("its launch's file names too many side-file bytes")
    key = (*kind, *before)
    hit = run.entries.get(key)
    shared = run.shared
    if hit is None and shared is not None:
        hit = shared.get(key)
        if hit is not None:
            _keep(run, key, hit)
    if hit is None:
        began = time.time_ns()
        try:
            value: Any = load(path)
        except SideFileError as exc:
            value = exc
        # a failure keeps only its message (a GGUF file of many GiB whose header is refused)
        size = 0 if isinstance(value, SideFileError) else \
            before[3] if cost is None else cost(value)
        hit = (value, size)
        if state(path) == before:
            _keep(run, key, hit)
            if shared is not None and settled(before, began):
                shared.put(key, hit)
    if budget is not None:
        budget.side_seen.add(ident)
        budget.side_bytes -= hit[1]
    value = hit[0]
    if isinstance(value, SideFileError):
        # a new exception each time: one raised again would gather every raise's traceback
        raise type(value)(value.message, value.offset, value.places)
    return value  # type: ignore[no-any-return]


def _keep(run: _Run, key: tuple[Any, ...], entry: tuple[Any, int]) -> None:
    from .bounds import SIDE_CACHE_BYTES, SIDE_CACHE_ENTRIES

    if entry[1] > SIDE_CACHE_BYTES:
        return
    entries = run.entries
    while entries and (len(entries) >= SIDE_CACHE_ENTRIES
                       or run.bytes + entry[1] > SIDE_CACHE_BYTES):
        oldest = next(iter(entries))
        run.bytes -= entries.pop(oldest)[1]
    entries[key] = entry
    run.bytes += entry[1]


class SideFileTooBig(SideFileError):
    """A side file over the reader's size limit: the linter's bound, not the engine's."""


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "a special file"


def is_regular_file(path: str) -> bool:
    """True for a regular file (after symlinks); never blocks, never raises."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def read_bytes(path: str, max_bytes: int = MAX_SIDE_BYTES) -> bytes:
    """The whole file, at most ``max_bytes``; SideFileError for anything but a regular file."""
    try:
        st = os.stat(path)
    except (OSError, ValueError) as exc:
        raise SideFileError(f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise SideFileError(f"{_kind(st.st_mode)}, not a regular file")
    if st.st_size > max_bytes:
        raise SideFileTooBig(f"{st.st_size:,} bytes, over the {max_bytes:,}-byte limit")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise SideFileError(f"cannot read: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SideFileError(f"{_kind(st.st_mode)}, not a regular file")
        chunks = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise SideFileError(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise SideFileTooBig(f"over the {max_bytes:,}-byte limit")
    return data


def decode_utf8(data: bytes) -> str:
    """UTF-8 text (a BOM dropped); SideFileError naming the first bad byte."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = len(data[:exc.start].decode("utf-8", "replace"))
        raise SideFileError(f"not valid UTF-8: byte 0x{data[exc.start]:02x} at byte offset "
                            f"{exc.start}", offset) from None


def read_text(path: str, max_bytes: int = MAX_SIDE_BYTES) -> str:
    data = read_bytes(path, max_bytes)
    if b"\0" in data[:8192]:
        raise SideFileError("binary file (contains NUL bytes)")
    return decode_utf8(data)


# ------------------------------------------------------------------------------------ JSON

_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')


def json_depth_exceeds(text: str, limit: int = MAX_JSON_DEPTH) -> int | None:
    """Offset where JSON nesting passes ``limit`` levels (brackets inside strings ignored)."""
    if text.count("[") + text.count("{") <= limit:
        return None
    depth = 0
    for m in _JSON_TOKEN.finditer(text):
        c = m.group()[0]
        if c in "[{":
            depth += 1
            if depth > limit:
                return m.start()
        elif c in "]}":
            depth -= 1
    return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads_json(text: str, max_depth: int = MAX_JSON_DEPTH, allow_nan: bool = True) -> Any:
    """``json.loads`` with a nesting limit; every failure is a SideFileError with an offset.

    Python's json module accepts NaN/Infinity (as transformers' config loading does);
    ``allow_nan=False`` refuses them."""
    deep = json_depth_exceeds(text, max_depth)
    if deep is not None:
        raise SideFileError(f"JSON nested deeper than {max_depth} levels", deep)
    try:
        if allow_nan:
            return json.loads(text)
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise SideFileError(f"not valid JSON: {exc.msg}", exc.pos) from None
    except (ValueError, RecursionError) as exc:  # int digits limit, a rejected constant
        raise SideFileError(f"not valid JSON: {str(exc).splitlines()[0]}") from None


# ------------------------------------------------------------------------------------ YAML

def _alias_budget(text: str, limit: int) -> None:
    """Refuse a document whose aliases would expand past ``limit`` nodes, or that refers to a
    node from inside itself (a self-referencing alias), from the parser's events alone; one of
    more than ``limit`` nodes without an alias is SideFileTooBig (the linter's bound)."""
    from ruamel.yaml.cyaml import CParser

    parser = CParser(text)
    sizes: dict[str, int] = {}
    open_anchors: list[tuple[str | None, int]] = []  # (anchor, node count at its start)
    count = 0
    aliased = False
    try:
        while True:
            event = parser.get_event()
            name = type(event).__name__
            if name == "StreamEndEvent":
                return
            if name == "AliasEvent":
                aliased = True
                anchor = event.anchor
                if any(a == anchor for a, _ in open_anchors):
                    raise SideFileError(f"alias *{anchor} refers to the node that contains it",
                                        event.start_mark.index)
                count += sizes.get(anchor, 1)
            elif name in ("ScalarEvent", "MappingStartEvent", "SequenceStartEvent"):
                count += 1
                if name == "ScalarEvent":
                    if event.anchor is not None:
                        sizes[event.anchor] = 1
                else:
                    open_anchors.append((event.anchor, count))
            elif name in ("MappingEndEvent", "SequenceEndEvent"):
                anchor, begin = open_anchors.pop()
                if anchor is not None:
                    sizes[anchor] = count - begin + 1
            if count > limit and not aliased:
                raise SideFileTooBig(f"more than {limit:,} values", event.start_mark.index)
            if count > limit:
                raise SideFileError(f"more than {limit:,} values once aliases are expanded "
                                    "(an alias bomb?)", event.start_mark.index)
    except SideFileError:
        raise
    except Exception:  # noqa: BLE001 - a syntax error: the loader reports it with its mark
        return
    finally:
        parser.dispose()


# PyYAML's implicit resolvers, copied as facts: yaml/resolver.py, the Resolver.add_implicit_resolver
# calls (PyYAML 6.0.4), the loader of vLLM's --config (yaml.safe_load in
# FlexibleArgumentParser.load_config_file, vllm/utils/argparse_utils.py 0.30.0).  YAML 1.1, but
# not ruamel's 1.1 table: no y/n booleans, a float needs a dot and a signed exponent (1e3 and
# 1.0e3 are strings, 1.0e+3 a float), 0o17 is a string, 010 octal, 1:30 sexagesimal.  Tried in
# this order among those of the value's first character; none matching: a string.
_PYYAML_IMPLICIT: tuple[tuple[str, str, Any], ...] = (  # tag, pattern, first characters
    ("bool", r"""^(?:yes|Yes|YES|no|No|NO
                    |true|True|TRUE|false|False|FALSE
                    |on|On|ON|off|Off|OFF)$""", "yYnNtTfFoO"),
    ("float", r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""", "-+0123456789."),
    ("int", r"""^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+
                    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$""", "-+0123456789"),
    ("merge", r"^(?:<<)$", "<"),
    ("null", r"""^(?: ~
                    |null|Null|NULL
                    | )$""", ("~", "n", "N", "")),
    ("timestamp", r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
                    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
                     (?:[Tt]|[ \t]+)[0-9][0-9]?
                     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
                     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""", "0123456789"),
    ("value", r"^(?:=)$", "="),
)
_pyyaml_table: dict[str, list[tuple[str, re.Pattern[str]]]] | None = None


def pyyaml_tag(value: str) -> str:
    """The tag PyYAML's ``Resolver.resolve`` gives a plain scalar: bool, float, int, merge,
    null, timestamp, value (``=``, which its safe loader then refuses) or str."""
    global _pyyaml_table
    if _pyyaml_table is None:
        table: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
        for tag, pattern, first in _PYYAML_IMPLICIT:
            for ch in first:
                table.setdefault(ch, []).append(
                    (tag, re.compile(pattern, re.X)))
        _pyyaml_table = table
    for tag, regexp in _pyyaml_table.get(value[:1], ()):
        if regexp.match(value):
            return tag
    return "str"


def pyyaml_scalar(tag: str, value: str) -> Any:
    """The value PyYAML's SafeConstructor makes of a plain scalar that resolved to ``tag``
    (bool, int, float, null): construct_yaml_bool/int/float/null, yaml/constructor.py (PyYAML
    6.0.4).  ValueError (KeyError, IndexError) where PyYAML's fails: ``0b_``, ``0x_`` have no
    digits; an explicit ``!!int ""`` or ``!!bool maybe``."""
    if tag == "null":
        return None
    if tag == "bool":
        return {"yes": True, "no": False, "true": True, "false": False, "on": True,
                "off": False}[value.lower()]
    sign = 1
    if tag == "int":
        value = value.replace("_", "")
        if value[0] == "-":
            sign = -1
        if value[0] in "+-":
            value = value[1:]
        if value == "0":
            return 0
        if value.startswith("0b"):
            return sign * int(value[2:], 2)
        if value.startswith("0x"):
            return sign * int(value[2:], 16)
        if value[0] == "0":
            return sign * int(value, 8)
        if ":" in value:
            total = 0
            for part in value.split(":"):
                total = total * 60 + int(part)
            return sign * total
        return sign * int(value)
    # float
    value = value.replace("_", "").lower()
    if value[0] == "-":
        sign = -1
    if value[0] in "+-":
        value = value[1:]
    if value == ".inf":
        return sign * math.inf
    if value == ".nan":
        return math.nan
    if ":" in value:
        digits = [float(part) for part in value.split(":")]
        digits.reverse()
        base, total = 1, 0.0
        for digit in digits:
            total += digit * base
            base *= 60
        return sign * total
    return sign * float(value)


def loads_yaml(text: str, max_nodes: int = MAX_YAML_NODES, name: str = "",
               duplicates: list[tuple[str, int, int]] | None = None,
               pyyaml: bool = False) -> Any:
    """The first YAML document as Python values (ruamel.yaml's safe constructor, YAML 1.2),
    after the main reader's nesting guard and an alias budget.  SideFileError on any failure,
    its message saying what is wrong where (``name:line:col``, ``line L:C`` without a name).

    ``pyyaml``: each plain scalar gets the value PyYAML's ``safe_load`` gives it (its YAML 1.1
    resolver and constructors, above), for a file PyYAML reads (vLLM's --config): a quoted
    scalar stays a string, a !!bool/!!int/!!float/!!null one is built by PyYAML's rules too.

    A key given twice in one mapping keeps its last value, as PyYAML's ``safe_load`` does
    (``BaseConstructor.construct_mapping`` assigns each pair in turn; ruamel refuses the
    second); ``duplicates`` (when given) receives (key, offset of its first and of its last
    occurrence)."""
    from ruamel.yaml import YAML

    from .yamlsrc import MAX_DEPTH, nesting_depth_exceeds, quiet_ruamel

    quiet_ruamel()

    deep = nesting_depth_exceeds(text)
    if deep is not None:
        raise SideFileError(f"nesting deeper than {MAX_DEPTH} levels at "
                            f"{where(text, deep, name)}", deep)
    # a node takes at least a character and its separator: a shorter text has fewer than
    # max_nodes of them, unless aliases repeat them
    if "*" in text or len(text) > max_nodes:
        try:
            _alias_budget(text, max_nodes)
        except SideFileError as exc:
            raise type(exc)(f"{exc.message} (at {where(text, exc.offset, name)})",
                            exc.offset) from None
    from ruamel.yaml.constructor import SafeConstructor

    class LastWins(SafeConstructor):  # type: ignore[misc]
        def check_mapping_key(self, node: Any, key_node: Any, mapping: Any, key: Any,
                              value: Any) -> bool:
            if key in mapping and duplicates is not None:
                first = next((k.start_mark.index for k, _ in node.value
                              if getattr(k, "value", None) == key_node.value),
                             key_node.start_mark.index)
                duplicates.append((str(key), first, key_node.start_mark.index))
            return True  # the caller assigns mapping[key] = value

    yaml = YAML(typ="safe", pure=False)
    yaml.Constructor = LastWins
    if pyyaml:
        yaml.Constructor, yaml.Resolver = _pyyaml_loader(LastWins)
    try:
        return yaml.load(text)
    except RecursionError:
        raise SideFileError(f"nesting deeper than {MAX_DEPTH} levels") from None
    except Exception as exc:  # ruamel's MarkedYAMLError, ConstructorError, the C reader's
        raise yaml_problem(exc, text, name) from None


def _pyyaml_loader(base: Any) -> tuple[Any, Any]:
    """A constructor (subclass of ``base``) and a resolver that read plain scalars as PyYAML
    does (``pyyaml_tag``, ``pyyaml_scalar``)."""
    from ruamel.yaml.constructor import ConstructorError
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.resolver import VersionedResolver
    from ruamel.yaml.tag import Tag

    class PyYAMLResolver(VersionedResolver):  # type: ignore[misc]
        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            if kind is ScalarNode and implicit[0]:
                # "value" keeps its tag: no safe constructor has one, both loaders refuse it
                return Tag(suffix="tag:yaml.org,2002:" + pyyaml_tag(value))
            return super().resolve(kind, value, implicit)

    class PyYAMLConstructor(base):  # type: ignore[misc, valid-type]
        def _pyyaml(self, node: Any) -> Any:
            # PyYAML constructs an explicitly tagged scalar (!!int "0x10") the same way
            raw = self.construct_scalar(node)
            tag = str(node.tag).rsplit(":", 1)[-1]
            try:
                return pyyaml_scalar(tag, raw)
            except (ValueError, KeyError, IndexError):
                raise ConstructorError(
                    None, None, f"`{raw}` is not {'an' if tag == 'int' else 'a'} {tag} to "
                    "vLLM's YAML loader (PyYAML), which fails on it", node.start_mark) from None

    for tag in ("bool", "int", "float", "null"):
        PyYAMLConstructor.add_constructor("tag:yaml.org,2002:" + tag, PyYAMLConstructor._pyyaml)
    return PyYAMLConstructor, PyYAMLResolver


def where(text: str, offset: int, name: str) -> str:
    """``name:line:col`` (1-based, in characters) of ``offset``; ``line L:C`` without a name."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"{name}:{line}:{col}" if name else f"line {line}:{col}"


_NAME_AT = re.compile(r"[&*!]([^\s,\[\]{}]*)")
_TOKEN_AT = re.compile(r"[^\s:,\[\]{}#]+|\S")


def yaml_problem(exc: Exception, text: str, name: str = "") -> SideFileError:
    """A YAML reader's error as a SideFileError whose message says what is wrong and where, in
    the words of the file (the anchor, the quote, the character), not the reader's (its
    "while scanning a quoted scalar ... found unexpected end of stream").  An error of a kind
    not listed here keeps the reader's problem text, with its place."""
    problem = str(getattr(exc, "problem", None) or str(exc).split("\n")[0])
    context = str(getattr(exc, "context", None) or "")
    pmark = getattr(exc, "problem_mark", None)
    cmark = getattr(exc, "context_mark", None)
    at = getattr(pmark, "index", None)
    if at is None:
        at = getattr(cmark, "index", 0) or 0
    start = getattr(cmark, "index", None)
    at, start = min(max(at, 0), len(text)), None if start is None else min(max(start, 0), len(text))
    here = where(text, at, name)
    opened = where(text, start, name) if start is not None else here
    char = text[at] if at < len(text) else ""
    first = text[start] if start is not None and start < len(text) else ""

    def named(offset: int) -> str:
        m = _NAME_AT.match(text, offset)
        return m.group(1) if m else ""

    def token(offset: int) -> str:
        m = _TOKEN_AT.match(text, offset)
        return m.group(0) if m else ""

    def err(message: str, *places: tuple[int | None, str]) -> SideFileError:
        kept = tuple((o, label) for o, label in places if o is not None)
        return SideFileError(message, at, kept or ((at, "the error"),))

    # Each case below is a message of ruamel.yaml's C reader (libyaml's) or its composer and
    # constructor, which PyYAML gives in the same words: vLLM reads --config with
    # yaml.safe_load (FlexibleArgumentParser.load_config_file, vllm/utils/argparse_utils.py
    # 0.30.0).  A repeated anchor: PyYAML's Composer.compose_node raises "found duplicate
    # anchor" (composer.py, PyYAML 6.0), where YAML 1.2 (ruamel's pure composer) only warns.
    if context.startswith("found duplicate anchor") and start is not None:
        anchor = named(start) or named(at)
        return err(f"anchor &{anchor} is defined twice, at {opened} and again at {here}: "
                   "vLLM's YAML loader (PyYAML) refuses an anchor defined again",
                   (start, f"&{anchor} first defined here"), (at, f"&{anchor} defined again"))
    if problem.startswith("found undefined alias"):
        return err(f"alias *{named(at)} at {here} refers to no anchor defined before it",
                   (at, "the alias"))
    if "quoted scalar" in context and first in "'\"" and first:
        if "end of stream" in problem:
            return err(f"the {first} opened at {opened} is never closed",
                       (start, f"{first} opened here"))
        if "document" in problem:
            return err(f"the {first} opened at {opened} is not closed before the document "
                       f"marker at {here}", (start, f"{first} opened here"))
        if "escape" in problem:
            bad = text[at + 1: at + 2] if char == "\\" else char
            return err(f"unknown escape \\{bad} at {here} in the double-quoted value opened at "
                       f"{opened} (write \\\\ for a backslash, or use single quotes)",
                       (at, "the escape"))
    if "cannot start any token" in problem:
        if char == "\t":
            line_start = text.rfind("\n", 0, at) + 1
            if not text[line_start:at].strip():
                return err(f"a tab at {here} indents its line: YAML indentation must be "
                           "spaces", (at, "the tab"))
            return err(f"a tab at {here} where YAML needs a space", (at, "the tab"))
        return err(f"`{char}` at {here} cannot begin a plain value: quote the value",
                   (at, f"`{char}`"))
    if problem.startswith("mapping values are not allowed"):
        before = text[text.rfind("\n", 0, at) + 1:at]
        if ": " in before or "\t" in before:
            return err(f"a second `:` at {here} on the line of a key: quote a value that "
                       "holds `: `", (at, "the `:`"))
        return err(f"a `:` at {here} falls inside a value (a line indented deeper than its key "
                   "continues the value above it): align the key with the others, or quote a "
                   "value that holds `: `", (at, "the `:`"))
    if problem.startswith("did not find expected key") and "block mapping" in context:
        if char == "-":
            return err(f"a list item at {here} inside the mapping that begins at {opened}: "
                       "put it under a key, indented", (start, "the mapping begins here"),
                       (at, "the list item"))
        return err(f"`{token(at)}` at {here} is not aligned with the keys of the mapping that "
                   f"begins at {opened}: check its indentation", (start, "the mapping begins here"),
                   (at, f"`{token(at)}`"))
    if "flow sequence" in context or "flow mapping" in context:
        close = "]" if "sequence" in context else "}"
        return err(f"the {first or ('[' if close == ']' else '{')} opened at {opened} is not "
                   f"closed: expected `,` or `{close}` at {here}", (start, "opened here"),
                   (at, f"`,` or `{close}` expected here"))
    if context.startswith("expected a single document"):
        return err(f"a second document begins at {here}: vLLM reads a file of one document",
                   (at, "the second document"))
    if "constructor for the tag" in problem and "2002:value" in problem:
        # the YAML 1.1 value key: a plain `=` resolves to tag:yaml.org,2002:value (resolver.py,
        # PyYAML 6.0.4 and ruamel.yaml), which no safe constructor builds
        return err(f"a bare `=` at {here} is YAML's value key, which vLLM's safe loader "
                   "refuses: quote it", (at, "the `=`"))
    if "constructor for the tag" in problem:
        return err(f"the tag !{named(at)} at {here} is not a standard YAML type: vLLM's safe "
                   "loader refuses it", (at, "the tag"))
    return err(f"{problem} at {here}" + (f" ({context} at {opened})"
                                         if context and start is not None else ""))


def unencodable(value: Any, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """Why ``value`` (from a YAML or JSON side file) is not plain JSON data, else None: a date,
    binary data, a non-string key, a non-finite float, a shared or self-referencing node, or
    nesting past ``max_depth``.  Iterative: visits each node once."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen: set[int] = set()
    while stack:
        v, depth = stack.pop()
        if depth > max_depth:
            return f"nested deeper than {max_depth} levels"
        if isinstance(v, (dict, list)):
            if id(v) in seen:
                return "a node reused through an alias inside a value"
            seen.add(id(v))
            if isinstance(v, dict):
                for k, item in v.items():
                    if not isinstance(k, str):
                        return f"a key that is not a string ({_type_name(k)})"
                    stack.append((item, depth + 1))
            else:
                stack.extend((item, depth + 1) for item in v)
        elif isinstance(v, float) and not math.isfinite(v):
            return f"a non-finite number ({v})"
        elif v is not None and not isinstance(v, (str, int, float, bool)):
            return f"a {_type_name(v)} value"
    return None


def _type_name(v: Any) -> str:
    if isinstance(v, datetime.datetime):
        return "timestamp"
    if isinstance(v, datetime.date):
        return "date"
    if isinstance(v, (bytes, bytearray)):
        return "binary (!!binary)"
    if isinstance(v, (set, frozenset)):
        return "set (!!set)"
    if isinstance(v, (list, tuple)):
        return "sequence"
    if isinstance(v, dict):
        return "mapping"
    return type(v).__name__


# -------------------------------------------------------------------------------- findings

def side_finding(path: str, err: SideFileError, what: str, code: str = "MG001",
                 severity: "Severity | None" = None, data: bytes | None = None) -> "Finding":
    """A finding on the side file itself at the error's offset (``what`` says which file it
    is to the launch, e.g. "the .env beside compose.yaml")."""
    from .findings import Finding, Severity
    from .source import SourceFile, Span

    text = data.decode("utf-8", "replace") if data is not None else ""
    offset = max(0, min(err.offset, len(text)))
    end = offset + 1 if offset < len(text) else offset
    return Finding(code, severity or Severity.ERROR, f"{what}: {err.message}",
                   SourceFile(path, text, "unknown"), Span(offset, end))


def open_regular(path: str) -> BinaryIO:
    """A regular file opened for binary reading without blocking (for readers that take a
    bounded header from a large file, e.g. GGUF); SideFileError for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError) as exc:
        raise SideFileError(f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        os.close(fd)
        raise SideFileError(f"cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise SideFileError(f"{_kind(mode)}, not a regular file")
    return os.fdopen(fd, "rb")
