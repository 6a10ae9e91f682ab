"""The logical place of a finding: the object it is in, named so that the name survives edits
elsewhere in the file (SARIF ``logicalLocations`` and the fingerprint's location).

- YAML: the Kubernetes object (``Deployment/ns/name``), then the path down to the innermost
  list item that has a ``name`` (the container: ``spec.template.spec.containers[vllm]``); a
  compose file's service (``services.vllm``); another document by its top-level keys.  A YAML
  document that does not compose is the file.
- Shell: the function the command is in (or the script's top level) and the command's program.
- Markdown: the heading above the fenced block and the block's number under it.
- Dockerfile: the build stage (``FROM … AS name``, else its image) and the instruction.

A name never holds a line number or the index of an object in its file: inserting an object
above, or re-indenting lines that are not the finding's, keeps it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any

from ..records import dataclass
from ..source import SourceFile


@dataclass(frozen=True, slots=True)
class Logical:
    name: str  # fullyQualifiedName
    kind: str  # SARIF logicalLocation kind


class Locator:
    """Logical locations in the files of one report (each file is read once)."""

    def __init__(self) -> None:
        self._files: dict[int, tuple[SourceFile, Any]] = {}

    def at(self, source: SourceFile, offset: int) -> Logical | None:
        """Where ``offset`` of ``source`` is, as a name; None for text with no structure to
        name (a ``--command``, a YAML document that does not compose)."""
        if not source.text:
            return None
        hit = self._files.get(id(source))
        if hit is None or hit[0] is not source:
            hit = (source, _index(source))
            self._files[id(source)] = hit
        index = hit[1]
        return index(offset) if index is not None else None


def _index(source: SourceFile) -> Any:
    kind = source.kind
    if kind == "yaml":
        return _yaml_index(source.text)
    if kind == "shell":
        return _shell_index(source)
    if kind == "markdown":
        return _markdown_index(source)
    if kind == "dockerfile":
        return _dockerfile_index(source)
    return None


# --------------------------------------------------------------------------- YAML

def _scalar(node: Any) -> str | None:
    return node.value if getattr(node, "id", None) == "scalar" else None


def _get(mapping: Any, key: str) -> Any:
    if getattr(mapping, "id", None) != "mapping":
        return None
    for k, v in mapping.value:
        if _scalar(k) == key:
            return v
    return None


def _identity(root: Any) -> tuple[str, bool] | None:
    """``Kind/namespace/name`` of a Kubernetes object, ``compose`` for a compose file (the
    second item says which), else None."""
    kind = _scalar(_get(root, "kind"))
    meta = _get(root, "metadata")
    name = _scalar(_get(meta, "name")) or _scalar(_get(meta, "generateName"))
    if kind and name:
        ns = _scalar(_get(meta, "namespace"))
        return ("/".join(p for p in (kind, ns, name) if p), False)
    if getattr(_get(root, "services"), "id", None) == "mapping":
        return ("compose", True)
    return None


def _bounds(node: Any) -> tuple[int, int]:
    """The offsets a node holds: [start, max(end, start + 1)) (an empty node its first)."""
    start = node.start_mark.index
    return start, max(node.end_mark.index, start + 1)


def _contains(node: Any, offset: int) -> bool:
    lo, hi = _bounds(node)
    return lo <= offset < hi


# Above this many entries a mapping or sequence is searched by bisection: reading every entry
# of a compose file's `services` for each finding was quadratic (2,000 services, 52 s of SARIF).
_INDEXED = 16
Index = tuple[list[int], list[int]]


def _disjoint(bounds: list[tuple[int, int]]) -> Index | None:
    """The starts and ends of ``bounds`` when each begins at or after the end of the one
    before (then at most one holds an offset, and the linear search's first hit is it); None
    otherwise (an alias's node lies elsewhere in the file: searched entry by entry)."""
    starts: list[int] = []
    ends: list[int] = []
    prev = -1
    for lo, hi in bounds:
        if lo < prev:
            return None
        starts.append(lo)
        ends.append(hi)
        prev = hi
    return starts, ends


def _candidates(index: Index | None, n: int, offset: int) -> range:
    """The entries that may hold ``offset``, in order: all of them without an index, else the
    one whose bounds hold it (or none)."""
    if index is None:
        return range(n)
    starts, ends = index
    i = bisect_right(starts, offset) - 1
    return range(i, i + 1) if i >= 0 and offset < ends[i] else range(0)


def _node_index(node: Any, indexes: dict[int, Any]) -> Index | None:
    key = id(node)
    if key not in indexes:
        if node.id == "mapping":
            bounds = []
            for k, v in node.value:
                (k0, k1), (v0, v1) = _bounds(k), _bounds(v)
                bounds.append((min(k0, v0), max(k1, v1)))
        else:
            bounds = [_bounds(item) for item in node.value]
        indexes[key] = (node, _disjoint(bounds))
    return indexes[key][1]


def _path(root: Any, offset: int, compose: bool, unnamed: bool = False,
          indexes: dict[int, Any] | None = None) -> str:
    """The keys from ``root`` down to the innermost named list item holding ``offset`` (for a
    compose file: down to the service; in a document that names no object, at least its first
    two keys).  ``indexes`` keeps the bisection index of each long mapping and sequence."""
    parts: list[str] = []
    kept = 0
    node = root
    seen = 0
    if indexes is None:
        indexes = {}
    while node is not None and seen < 200:  # aliases make a graph; bounded
        seen += 1
        nxt = None
        entries = node.value if node.id in ("mapping", "sequence") else ()
        index = _node_index(node, indexes) if len(entries) > _INDEXED else None
        if node.id == "mapping":
            for i in _candidates(index, len(entries), offset):
                k, v = entries[i]
                if _contains(k, offset) or _contains(v, offset):
                    key = _scalar(k)
                    parts.append(key if key is not None else "?")
                    nxt = v if _contains(v, offset) else None
                    break
            if compose and len(parts) == 2 and parts[0] == "services":
                return "services." + parts[1]
        elif node.id == "sequence":
            for i in _candidates(index, len(entries), offset):
                item = entries[i]
                if _contains(item, offset):
                    name = _scalar(_get(item, "name"))
                    parts.append(f"[{name}]" if name else f"[{i}]")
                    if name:
                        kept = len(parts)
                    nxt = item
                    break
        node = nxt
    if not kept and unnamed:
        kept = min(2, len(parts))  # Helm values and the like: `catalog.<model>`
    return "".join(p if p.startswith("[") or not i else "." + p
                   for i, p in enumerate(parts[:kept]))


def _yaml_index(text: str) -> Any:
    from ..yamlsrc import YamlError, compose_documents

    docs: list[tuple[int, int, Any, str, bool, bool]] = []
    try:
        for root in compose_documents(text):
            ident = _identity(root)
            if ident is None:
                keys = [_scalar(k) or "?" for k, _ in root.value] \
                    if root.id == "mapping" else [root.id]
                ident = ("{" + ",".join(keys[:4]) + "}", False)
            docs.append((root.start_mark.index, root.end_mark.index, root, *ident,
                         ident[0].startswith("{")))
    except YamlError:
        pass  # the documents before the error are named; the rest is the file
    except RecursionError:
        return None

    # a document holds the offsets from its start to its end, both included
    doc_index = _disjoint([(d[0], d[1] + 1) for d in docs]) if len(docs) > _INDEXED else None
    indexes: dict[int, Any] = {}

    def at(offset: int) -> Logical | None:
        for i in _candidates(doc_index, len(docs), offset):
            start, end, root, ident, compose, unnamed = docs[i]
            if start <= offset <= end:
                path = _path(root, offset, compose, unnamed, indexes)
                if compose:
                    return Logical(path or "compose", "resource")
                return Logical(f"{ident}/{path}" if path else ident, "resource")
        return None

    return at


# --------------------------------------------------------------------------- shell

# Each run of blanks and of name characters is matched possessively: what follows a run never
# starts with a character of it, or is another optional run of blanks, so giving characters back
# never makes a match (the same lines match with the same names); the greedy form tried every
# split of a run of blanks between its three \s*, cubic: 2,000 blanks after `function f` took 28 s.
_FUNCTION = re.compile(r"^\s*+(?:function\s++([A-Za-z_][\w.:-]*+)\s*+(?:\(\s*+\))?|"
                       r"([A-Za-z_][\w.:-]*+)\s*+\(\s*+\))\s*+\{?\s*+(?:#.*)?$")
_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _shell_index(source: SourceFile) -> Any:
    lines = source.text.split("\n")
    starts = source.line_starts()
    # the function each line is in: from `name() {` to the `}` at its indentation
    function: list[str | None] = [None] * len(lines)
    current: str | None = None
    indent = ""
    for i, line in enumerate(lines):
        m = _FUNCTION.match(line)
        if current is None and m:
            current = m.group(1) or m.group(2)
            indent = line[:len(line) - len(line.lstrip())]
            function[i] = current
            continue
        function[i] = current
        if current is not None and line.rstrip() == indent + "}":
            current = None

    def command_start(line: int) -> int:
        while line > 0 and lines[line - 1].rstrip("\r").endswith("\\"):
            line -= 1
        return line

    named: dict[int, Logical] = {}  # line -> its name, made once per line (16,000 findings
    # on one 200 KB line split it for each)

    def at(offset: int) -> Logical:
        line = bisect_right(starts, offset) - 1
        hit = named.get(line)
        if hit is not None:
            return hit
        first = command_start(line)
        words = [w for w in lines[first].split() if not _ASSIGN.match(w)]
        program = words[0] if words else ""
        scope = function[line]
        name = f"{scope}()" if scope else "(top level)"
        hit = named[line] = Logical(f"{name}/{program}" if program else name,
                                    "function" if scope else "module")
        return hit

    return at


# --------------------------------------------------------------------------- Markdown

# An ATX heading's marks; its text is what follows, the closing `#`s and the blanks around them
# removed (_heading_text).
_HEADING_MARKS = re.compile(r" {0,3}#{1,6}\s++")


def _heading_text(line: str) -> str | None:
    """Group 2 of ``^ {0,3}(#{1,6})\\s+(.*?)\\s*#*\\s*$`` matched on ``line`` (None: no match),
    in linear time: the lazy group ends where the longest tail of blanks, `#`s and blanks begins
    (that tail is what ``\\s*#*\\s*$`` matches, and any tail of it matches too), and ``.`` does not
    cross a newline.  The regex tried every split of a run of blanks between its \\s* at every
    position, cubic: 2,000 blanks inside a heading took 6 s.  ``str.rstrip()`` strips what
    ``\\s`` matches (both are ``str.isspace``)."""
    m = _HEADING_MARKS.match(line)
    if m is None:
        return None
    text = line[m.end():].rstrip().rstrip("#").rstrip()
    return None if "\n" in text else text


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _markdown_index(source: SourceFile) -> Any:
    starts = source.line_starts()
    where: list[str] = []  # per line: "heading/block N" or the heading alone
    heading = "(top)"
    block = 0
    fence: str | None = None
    for line in source.text.split("\n"):
        if fence is None:
            m = _FENCE.match(line)
            h = _heading_text(line)
            if m:
                fence = m.group(1)
                block += 1
                where.append(f"{heading}/block {block}")
                continue
            if h is not None:
                heading = h or "(empty heading)"
                block = 0
            where.append(heading)
        else:
            where.append(f"{heading}/block {block}")
            if line.strip().startswith(fence[0] * len(fence)) and \
                    not line.strip().strip(fence[0]):
                fence = None

    def at(offset: int) -> Logical:
        return Logical(where[min(bisect_right(starts, offset) - 1, len(where) - 1)], "element")

    return at


# --------------------------------------------------------------------------- Dockerfile

_FROM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", re.IGNORECASE)
_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)\b")


def _dockerfile_index(source: SourceFile) -> Any:
    lines = source.text.split("\n")
    starts = source.line_starts()
    stage: list[str] = []
    instruction: list[str] = []
    current, last = "(no stage)", ""
    continued = False
    for line in lines:
        m = _FROM.match(line)
        if m and not continued:
            current = m.group(2) or m.group(1)
        i = _INSTRUCTION.match(line)
        if i and not continued and not line.lstrip().startswith("#"):
            last = i.group(1).upper()
        stage.append(current)
        instruction.append(last)
        continued = line.rstrip("\r").endswith("\\")

    def at(offset: int) -> Logical:
        n = min(bisect_right(starts, offset) - 1, len(lines) - 1)
        return Logical(f"{stage[n]}/{instruction[n]}" if instruction[n] else stage[n],
                       "declaration")

    return at
