"""Small helpers over composed YAML nodes (shared by the Kubernetes and compose sources).

A ``Doc`` carries the text the YAML was composed from and, when that text is itself a piece of a
file (a Markdown block), the map back to the file, so every Segment and Span is in file offsets.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from ..bounds import MAX_YAML_NODES
from ..source import CharMap, Segment, SourceFile, Span, VarRef, Word
from ..yamlsrc import YamlTooLarge, scalar_segment
from ..records import dataclass, replace

# nodes a walk of one document visits: a document without aliases has at most MAX_YAML_NODES
# (the composer reads no more), so only aliases and merge keys, which visit a node again for
# each reference, can pass it (a 10 KB object of a thousand aliases of a thousand-item list)
MAX_VISITS = MAX_YAML_NODES


@dataclass(slots=True)
class Doc:
    source: SourceFile
    text: str
    base: CharMap | None = None  # text offsets -> file offsets (None: text is the file)

    def seg(self, node: Any) -> Segment:
        seg = scalar_segment(self.text, node)
        if self.base is None:
            return seg
        return Segment(seg.text, seg.cmap.compose(self.base))

    def word(self, node: Any) -> Word:
        seg = self.seg(node)
        return Word(seg.text, seg.cmap, quoted=bool(getattr(node, "style", None)))

    def span(self, node: Any) -> Span:
        s, e = node.start_mark.index, node.end_mark.index
        if self.base is None:
            return Span(s, e)
        return self.base.span(s, e)

    def offset(self, index: int) -> int:
        return index if self.base is None else self.base.start(index)

    def region(self, i: int, j: int) -> "Doc":
        """Characters [i, j) of the text as a document of their own, at the same file
        positions (one YAML document of a large file composed alone)."""
        base = CharMap(i, j - i, tail=j) if self.base is None else self.base.slice(i, j)
        return Doc(self.source, self.text[i:j], base)


def too_large_finding(doc: Doc, error: YamlTooLarge, rest: str) -> Any:
    """The MG001 warning where ``doc``'s text has a document of more nodes than are composed
    (bounds.MAX_YAML_NODES; ``error.offset``, where it begins): it and ``rest`` (the rest of
    the file, of a string holding YAML) are not read; or the document in which the file's YAML
    passes bounds.MAX_FILE_YAML_NODES: it and the file's YAML after it are not read."""
    from ..findings import Finding, Severity

    offset = min(error.offset, len(doc.text))
    end = min(offset + 1, len(doc.text))
    span = Span(offset, end) if doc.base is None else doc.base.span(offset, end)
    return Finding(
        "MG001", Severity.WARNING,
        f"{error.message} (no deployment's {error.scope} comes close): it and "
        f"{'the YAML after it' if error.scope == 'file' else rest} are not read",
        doc.source, span, hint="lint the part of the file that launches the engine on its own")


def expanded_size(node: Any, sizes: dict[int, int], limit: int) -> int:
    """The nodes a walk of ``node`` visits (keys too), each alias counted at its full size
    again (``sizes`` keeps each node's, by id, for the next call), capped at ``limit`` + 1;
    a node inside itself (a recursive alias) counts as past the cap.  Iterative: a document
    nests up to yamlsrc.MAX_DEPTH levels."""
    over = limit + 1
    busy: set[int] = set()
    stack: list[Any] = [node]
    while stack:
        n = stack[-1]
        key = id(n)
        if key in sizes:
            stack.pop()
            continue
        if is_map(n):
            kids = [c for pair in n.value for c in pair]
        elif is_seq(n):
            kids = n.value
        else:
            sizes[key] = 1
            stack.pop()
            continue
        if key not in busy:
            busy.add(key)
            stack.extend(k for k in kids if id(k) not in sizes and id(k) not in busy)
            continue
        stack.pop()
        busy.discard(key)
        total = 1
        for k in kids:
            total += sizes.get(id(k), over)  # one still being sized holds this node
            if total > over:
                break
        sizes[key] = min(total, over)
    return sizes[id(node)]


def is_map(node: Any) -> bool:
    return node is not None and type(node).__name__ == "MappingNode"


def is_seq(node: Any) -> bool:
    return node is not None and type(node).__name__ == "SequenceNode"


def is_scalar(node: Any) -> bool:
    return node is not None and type(node).__name__ == "ScalarNode"


def pairs(node: Any, _depth: int = 0) -> Iterator[tuple[str, Any, Any]]:
    """(key text, key node, value node) of a mapping node; non-scalar keys skipped.

    YAML merge keys (`<<: *defaults`, common in compose files) contribute the merged mapping's
    pairs first, so the node's own keys override them (the last pair of a key wins in `get`).
    """
    if not is_map(node) or _depth > 32:
        return
    for k, v in node.value:
        if is_scalar(k) and k.value == "<<" and k.tag in ("tag:yaml.org,2002:merge",
                                                          "tag:yaml.org,2002:str"):
            for merged in (v.value if is_seq(v) else [v]):
                yield from pairs(merged, _depth + 1)
    for k, v in node.value:
        if is_scalar(k) and k.value != "<<":
            yield k.value, k, v


def key_node(mapping: Any, key: str) -> Any:
    """The key node of ``key`` in a mapping (where a finding about the key points); None when
    absent."""
    for k, kn, _ in pairs(mapping):
        if k == key:
            return kn
    return None


def get(node: Any, *path: str) -> Any:
    for key in path:
        if not is_map(node):
            return None
        found = None
        merged = False
        for k, v in node.value:
            kv = k.value
            if kv == key:
                found = v
            elif kv == "<<":
                merged = True
        if found is None and merged:
            for k, _, v in pairs(node):
                if k == key:
                    found = v
        node = found
    return node


class Keys:
    """A mapping node's keys indexed once, for a caller that looks up many of them (a
    container's dozen fields): ``keys.get(k)`` is ``get(node, k)`` without a scan of the pairs
    per key.  A non-mapping indexes as empty.  With a merge key, the merged mappings' pairs are
    indexed too, once, at the first key the node's own pairs do not hold (a compose service's
    `<<: [*gpu, *common]` was walked again for each of its dozen absent keys)."""

    __slots__ = ("node", "index", "merged")

    def __init__(self, node: Any) -> None:
        self.node = node
        # last pair of a key wins, as in `get`; a collection key equals no string key
        self.index: dict[str, Any] = (
            {k.value: v for k, v in node.value if type(k).__name__ == "ScalarNode"}
            if is_map(node) else {})
        self.merged: dict[str, Any] | None = None

    def get(self, key: str, *path: str) -> Any:
        found = self.index.get(key)
        if found is None and "<<" in self.index:
            # a merge key: the last of the pairs `get` reads (merged mappings' first, then the
            # node's own) that has the key
            if self.merged is None:
                self.merged = {k: v for k, _, v in pairs(self.node)}
            found = self.merged.get(key)
        return get(found, *path) if path else found

    def get_str(self, key: str, *path: str) -> str | None:
        n = self.get(key, *path)
        return n.value if is_scalar(n) else None


def get_str(node: Any, *path: str) -> str | None:
    n = get(node, *path)
    return n.value if is_scalar(n) else None


def items(node: Any) -> list[Any]:
    return list(node.value) if is_seq(node) else []


def str_map(node: Any) -> dict[str, str]:
    return {k: v.value for k, _, v in pairs(node) if is_scalar(v)}


def _templates(text: str) -> Iterator[tuple[int, int]]:
    """Where ``re.finditer(r"\\{\\{.*?\\}\\}|\\{%.*?%\\}", text, re.S)`` matches, in linear
    time: an opening ``{{`` / ``{%`` matches up to the first closing ``}}`` / ``%}`` after it, and
    has none when it starts after the last one.  The regex read from every such opening to the
    end of the text (``{{`` x 8,000: 1 s)."""
    last = {"{": text.rfind("}}"), "%": text.rfind("%}")}
    pos = 0
    while True:
        i = text.find("{", pos)
        if i < 0 or i + 1 >= len(text):
            return
        kind = text[i + 1]
        if kind in last and last[kind] >= i + 2:
            end = text.find("}}" if kind == "{" else "%}", i + 2) + 2
            yield i, end
            pos = end
        else:
            pos = i + 1


def with_template_refs(word: Word) -> Word:
    """A word holding `{{ … }}` (a Helm/Go/Jinja template left in a string) has no value the
    linter can know: each template is listed as unresolved, like a variable."""
    text = word.text
    # a template opens with `{{` or `{%` (_templates finds nothing without one): a compose
    # word's own `${VAR}` left unresolved holds a `{`, not a template
    if "{" not in text or ("{{" not in text and "{%" not in text):
        return word
    refs = tuple(VarRef(word.text[start:end], word.sub(start, end))
                 for start, end in _templates(word.text))
    if not refs:
        return word
    return replace(word, unresolved=word.unresolved + refs)
