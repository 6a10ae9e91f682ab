"""YAML reading for the lint path: the C composer, guarded, and exact scalar positions.

``compose_documents`` turns a file's text into node trees with ruamel.yaml's C composer (libyaml,
~25x faster than the pure one).  The composer kills the process on very deep nesting, so the text
is scanned first and refused (MG002) beyond ``MAX_DEPTH`` levels.  Aliases are shared nodes, never
expanded: walkers visit each node a bounded number of times.

``scalar_segment`` maps each character of a scalar's value back to the file for every scalar style
(plain, single- and double-quoted, literal ``|`` and folded ``>``).  The map is rebuilt from the
source text by the YAML folding rules and verified against the parser's value; if the two ever
differ the whole scalar's span is used for every character (never a guessed offset).

libyaml rejects a ``:`` followed by a non-space inside a flow plain scalar (``[--endpoint,
http://127.0.0.1:50051]``: "found unexpected ':'"), which YAML 1.2 (ns-plain-char) allows and
Kubernetes' reader accepts.  When the C composer fails there, the rest of the text is read again
by libyaml with each such ``:`` in a stand-in character, put back in the values after
(``_read_refused_colons``), else by ruamel's pure composer, which follows YAML 1.2 here and is
about 10x slower; see ``_compose_all``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterator

from . import bounds
from .bounds import MAX_YAML_NODES, ReadBudget
from .cancel import DOCUMENT, step as cancel_step
from .source import CharMap, MapBuilder, Segment, Span
from .records import dataclass

MAX_DEPTH = 1000
# The pure composer recurses in Python (about two frames a level, and the caller's stack is
# already some frames deep): beyond this depth it stops with MaxDepthExceededError (MG002),
# never a RecursionError in the middle of a walk.
PURE_MAX_DEPTH = 200
# ... and it costs about 25 us and a few hundred bytes a node: past this many nodes of one text
# it stops (YamlTooLarge).  400,000 compose services written as flow mappings with an image
# `repo:tag` in them (libyaml refuses the `:`) took over 40 s and 735 MiB.
PURE_MAX_NODES = 100_000


class _PureTooLarge(Exception):
    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


class YamlError(Exception):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


class YamlTooLarge(YamlError):
    """A document of more nodes than are read (bounds.MAX_YAML_NODES), or the one in which a
    file's YAML passes bounds.MAX_FILE_YAML_NODES (``scope`` "file"): valid YAML, not read;
    ``offset`` is where the document begins."""

    def __init__(self, message: str, offset: int, scope: str = "document") -> None:
        super().__init__(message, offset)
        self.scope = scope


@dataclass(slots=True)
class _Loader:
    cls: Any
    c_composer: bool


_LOADER: _Loader | None = None


@lru_cache(maxsize=1)
def quiet_ruamel() -> None:
    """ruamel.yaml prints Python warnings on stderr for YAML that is valid: an anchor defined
    again (YAML 1.2 lets an alias refer to the most recent one), YAML 1.1 float spellings.
    What matters in them the linter reports as findings; a warning with a path into
    site-packages is noise in a CI log.  Once a process: each filterwarnings call resets every
    module's warning registry."""
    import warnings

    from ruamel.yaml.error import YAMLFutureWarning, YAMLWarning

    warnings.filterwarnings("ignore", category=YAMLWarning)
    warnings.filterwarnings("ignore", category=YAMLFutureWarning)


def _loader() -> _Loader:
    global _LOADER
    if _LOADER is None:
        quiet_ruamel()
        try:
            from ruamel.yaml.cyaml import CBaseLoader, CParser
            from ruamel.yaml.nodes import ScalarNode, SequenceNode

            class FastLoader(CBaseLoader):  # type: ignore[misc]
                """The C composer without the resolver's per-node Python work: every tag is
                the base default (str/seq/map), as BaseResolver would give with no implicit or
                path resolvers registered.  Only the C parser is set up: the constructor's
                and the resolver's state (CBaseLoader.__init__) is never read by a composer
                whose resolve answers from class constants, and no node is constructed."""

                def __init__(self, stream: Any) -> None:
                    CParser.__init__(self, stream)
                    self._parser = self._composer = self

                def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
                    if kind is ScalarNode:
                        return self.DEFAULT_SCALAR_TAG
                    if kind is SequenceNode:
                        return self.DEFAULT_SEQUENCE_TAG
                    return self.DEFAULT_MAPPING_TAG

                def descend_resolver(self, current_node: Any, current_index: Any) -> None:
                    return None

                def ascend_resolver(self) -> None:
                    return None

            _LOADER = _Loader(FastLoader, True)
        except ImportError:  # ruamel.yaml.clib missing: the pure composer is slower but exact
            _LOADER = _Loader(_pure_loader_class(), False)
    return _LOADER


@lru_cache(maxsize=1)
def _pure_loader_class() -> Any:
    """One class for the run: built on first use (each fallback read used to define it anew)."""
    from ruamel.yaml.loader import BaseLoader

    class PureLoader(BaseLoader):  # type: ignore[misc]
        # ruamel.yaml 0.19's Composer.compose_node reads ``self.loader.max_depth``, which only
        # the YAML() front end sets: a bare BaseLoader raises AttributeError without it.
        max_depth = PURE_MAX_DEPTH
        nodes = 0

        def __init__(self, stream: Any) -> None:
            from ruamel.yaml.docinfo import DocInfo

            super().__init__(stream)
            # ... and its Scanner.scan_yaml_directive writes a `%YAML` directive's version
            # into ``self.loader.doc_infos[-1]``, a list only YAML() makes (main.py, load_all):
            # without it a text with the directive was "'PureLoader' object has no attribute
            # 'doc_infos'" (MG002).  One per reader: nothing reads it.
            self.doc_infos = [DocInfo()]

        def compose_node(self, parent: Any, index: Any) -> Any:
            self.nodes += 1
            cancel_step()
            if self.nodes > PURE_MAX_NODES:
                raise _PureTooLarge(self.parser.peek_event().start_mark.index)
            return super().compose_node(parent, index)

    return PureLoader


def _yaml_error(exc: Exception) -> YamlError:
    """ruamel's MarkedYAMLError and the C reader's errors as a YamlError at the problem's offset."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    offset = getattr(mark, "index", 0) if mark is not None else 0
    problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
    context = getattr(exc, "context", None)
    msg = f"{problem} ({context})" if context else str(problem)
    return YamlError(msg, offset)


def _compose(cls: Any, text: str, skip: int = 0) -> Iterator[Any]:
    """Root nodes of the documents of ``text`` after the first ``skip`` ones, read by ``cls``
    (each a step of reading, linter/cancel.py)."""
    loader = cls(text)
    try:
        while loader.check_node():
            cancel_step(DOCUMENT)
            node = loader.get_node()
            if node is None:
                continue
            if skip:
                skip -= 1
                continue
            yield node
    finally:
        dispose = getattr(loader, "dispose", None)
        if dispose is not None:
            dispose()
        if loader.__dict__.get("_parser") is loader:
            # FastLoader refers to itself (a cycle): left to the collector, every Markdown
            # block's loader stayed alive long after its block (150,000 blocks, 900 MiB)
            loader._parser = loader._composer = None


_DEEP_LEAD = re.compile(r"^[ \t?:\-]{%d}" % (MAX_DEPTH + 1), re.M)
# A line `---` (then a blank or the end) at column 0 always ends what came before it.  In the
# libyaml that ruamel.yaml.clib 0.2.15 builds (its scanner.c): yaml_parser_fetch_next_token reads
# it as a document-start token at any flow level (column 0 is checked before the flow
# indicators), and yaml_parser_fetch_document_indicator unrolls every block indentation; a block
# scalar's indentation is at least 1 (yaml_parser_scan_block_scalar_breaks), a plain scalar stops
# there (yaml_parser_scan_plain_scalar) and a quoted one fails ("found unexpected document
# indicator").  So no collection is open across it.  (Splitting at fewer places than libyaml
# breaks lines, e.g. not after a lone CR or at NEL, only makes a stretch longer: still a bound.)
def _stretches(text: str) -> Iterator[tuple[int, int]]:
    """[start, end) of each stretch of ``text`` between document-start lines (each holds whole
    documents): a line `---` then a blank or the end.  (str.find, not a regex with `^` in
    MULTILINE mode, which is tried at every character: 0.2 s a pass over 9.5 MiB.)"""
    at = 0
    n = len(text)
    found = 0 if text.startswith("---") else text.find("\n---")
    while found != -1:
        line = found if found == 0 and text.startswith("---") else found + 1
        after = line + 3
        if after >= n or text[after] in " \t\r\n":
            if line > at:
                yield at, line
            at = line
        found = text.find("\n---", line + 1)
    yield at, n


def _brackets(text: str, i: int, j: int) -> int:
    return text.count("[", i, j) + text.count("{", i, j)


def _brackets_within(text: str, limit: int) -> bool:
    """True when every stretch of ``text`` between document-start lines holds at most
    ``limit`` flow brackets (then no flow collection nests deeper than ``limit``)."""
    if _brackets(text, 0, len(text)) <= limit:
        return True
    # a stretch no longer than the limit cannot hold more brackets
    return all(j - i <= limit or _brackets(text, i, j) <= limit for i, j in _stretches(text))


def _node_bound(text: str, i: int, j: int) -> int:
    """At least the number of nodes the documents of text[i:j] compose to.  Every node but a
    document's root is brought in by an indicator: a block entry `- `, a `:` (a key and its
    value), an explicit key `? `, a flow collection's `[`/`{` or `,` (an entry, perhaps a key
    and its empty value); a root comes with `---`, `...` or the start.  Each is counted
    wherever it appears (in a string too), so the figure only ever overshoots."""
    c = text.count
    entries = (c(":", i, j) + c(",", i, j) + c("[", i, j) + c("{", i, j) + c("- ", i, j)
               + c("-\n", i, j) + c("-\t", i, j) + c("-\r", i, j) + c("? ", i, j)
               + c("?\n", i, j))
    return 2 * entries + c("---", i, j) + c("...", i, j) + 1


@dataclass(slots=True)
class Oversized:
    start: int  # where the stretch of documents holding it begins
    document: int  # where the document begins (its first token)


def oversized_document(text: str, limit: int | None = None) -> Oversized | None:
    """The first document of ``text`` that composes to more than ``limit`` nodes, else None.

    The bound above first, for the whole text and then per stretch of documents; only a
    stretch over it has its parser events counted, and the count stops one node past the
    limit.  A stretch the parser refuses read on its own counts as not oversized (the
    composer reports a real syntax error; this guard is one of time and memory, not of
    safety like the nesting one).
    """
    if limit is None:
        limit = MAX_YAML_NODES  # (read here: a test may set it lower)
    if _node_bound(text, 0, len(text)) <= limit or not _loader().c_composer:
        return None  # (without libyaml the pure composer reads on: slower, not guarded)
    from ruamel.yaml.cyaml import CParser

    for i, j in _stretches(text):
        # each indicator counted takes a character of its own: the bound of a stretch of n
        # characters is below 3n + 1, so a short stretch needs no counting
        if 3 * (j - i) + 1 <= limit or _node_bound(text, i, j) <= limit:
            continue
        parser = CParser(text[i:j])
        nodes = document = 0
        try:
            while True:
                event = parser.get_event()
                name = type(event).__name__
                if name in ("ScalarEvent", "MappingStartEvent", "SequenceStartEvent"):
                    nodes += 1
                    if nodes > limit:
                        return Oversized(i, i + document)
                elif name == "DocumentStartEvent":
                    nodes, document = 0, event.start_mark.index
                elif name == "StreamEndEvent":
                    break
        except Exception:  # noqa: BLE001 - see the docstring
            pass
        finally:
            parser.dispose()
    return None


def nesting_depth_exceeds(text: str, limit: int = MAX_DEPTH) -> int | None:
    """Offset where nesting passes ``limit`` levels, else None.

    A cheap upper bound first: nesting can only pass the limit with more than ``limit`` flow
    brackets in one document's text, or a line led by more than ``limit`` indentation/`-`/`?`/`:`
    characters.  Only then are the parser's events counted (libyaml's parser keeps explicit
    stacks and cannot crash; only its composer recurses).  A file of many small documents
    (a rendered chart) has many brackets in all but few in each: counting per document kept
    a 9.5 MiB file of 20,000 documents from a second of event scanning.
    """
    if _brackets_within(text, limit) and _DEEP_LEAD.search(text) is None:
        return None
    loader = _loader()
    if not loader.c_composer:
        return None  # the pure composer raises RecursionError, which is caught as MG002
    from ruamel.yaml.cyaml import CParser

    parser = CParser(text)
    depth = 0
    try:
        while True:
            event = parser.get_event()
            name = type(event).__name__
            if name in ("MappingStartEvent", "SequenceStartEvent"):
                depth += 1
                if depth > limit:
                    return event.start_mark.index
            elif name in ("MappingEndEvent", "SequenceEndEvent"):
                depth -= 1
            elif name == "StreamEndEvent":
                return None
    except Exception:  # noqa: BLE001 - a syntax error: the composer reports it as MG002
        return None
    finally:
        parser.dispose()


def compose_documents(text: str, budget: ReadBudget | None = None) -> Iterator[Any]:
    """Yield the root node of each document; raise YamlError with the offset of a syntax error,
    YamlTooLarge after the documents before one of more than MAX_YAML_NODES nodes, or before
    the one in which the nodes composed pass what ``budget`` (the file's, shared by each text
    of the file read as new YAML) has left of MAX_FILE_YAML_NODES; without a budget, this text
    has its own.  Once a file's budget has run out (and was reported), no document is yielded."""
    if budget is None:
        budget = ReadBudget()
    elif budget.yaml_nodes < 0:
        return
    deep = nesting_depth_exceeds(text)
    if deep is not None:
        raise YamlError(f"nesting deeper than {MAX_DEPTH} levels; not parsed", deep)
    big = oversized_document(text)
    # (before a document too large, a prefix: the same offsets)
    for root in _compose_all(text if big is None else text[:big.start]):
        budget.yaml_nodes -= composed_nodes(root)
        if budget.yaml_nodes < 0:
            # composed (at most MAX_YAML_NODES nodes spent for nothing), not read
            raise YamlTooLarge(f"this file's YAML passes {bounds.MAX_FILE_YAML_NODES:,} nodes "
                               "in this document", root.start_mark.index, "file")
        yield root
    if big is not None:
        raise _too_large(big)


def composed_nodes(root: Any) -> int:
    """The nodes the composer made for ``root``'s document, as it makes them: each key, value
    and item once per place it is written (an alias is one; what it names is not counted
    again).  Iterative: a document nests up to MAX_DEPTH levels."""
    from ruamel.yaml.nodes import CollectionNode, MappingNode

    count = 1
    seen = {id(root)}
    stack = [root] if isinstance(root, CollectionNode) else []
    while stack:
        node = stack.pop()
        if type(node) is MappingNode:
            kids = [c for pair in node.value for c in pair]
        else:
            kids = node.value
        count += len(kids)
        for kid in kids:
            if isinstance(kid, CollectionNode) and id(kid) not in seen:
                seen.add(id(kid))
                stack.append(kid)
    return count


def _compose_all(text: str) -> Iterator[Any]:
    loader = _loader()
    done = after = 0
    try:
        for node in _compose(loader.cls, text):
            done += 1
            after = node.end_mark.index
            yield node
        return
    except Exception as exc:  # noqa: BLE001 - ruamel's MarkedYAMLError and the C reader's errors
        first = _yaml_error(exc)
        if not loader.c_composer:
            raise first from None
    # libyaml's scanner (scanner.c, yaml_parser_scan_plain_scalar) refuses ':' followed by a
    # non-space in a flow context ("found unexpected ':'"); YAML 1.2 (ns-plain-safe(c) in
    # ns-plain-char) allows it, and so does the go-yaml scanner Kubernetes reads manifests with
    # (sigs.k8s.io/yaml -> go-yaml; scannerc.go, yaml_parser_scan_plain_scalar, v2.4.0 and
    # v3.0.1: a plain scalar ends at ':' only when a blank follows, and in flow context at
    # ',?[]{}').  So the rest of the text is read again: by libyaml with each such ':' in a
    # stand-in character (_read_refused_colons), else by the pure composer, which follows
    # YAML 1.2 here, from the document that failed.  Positions are the same character
    # offsets; aliases are still shared nodes.  If the pure composer fails too, its error is
    # the finding when libyaml's was that ':' (not an error in YAML 1.2), else libyaml's (the
    # messages users know).
    if first.message.startswith("found unexpected ':'"):
        read = _read_refused_colons(text, done, after)
        if read is not None:
            roots, big = read
            yield from roots
            if big is not None:
                raise _too_large(big)
            return
    try:
        yield from _compose(_pure_loader_class(), text, skip=done)
    except Exception as exc:  # noqa: BLE001 - as above, and MaxDepthExceededError
        if isinstance(exc, _PureTooLarge):
            raise YamlTooLarge(f"this YAML text has more than {PURE_MAX_NODES:,} nodes where "
                               "libyaml cannot read it (a `:` then a non-space in a flow "
                               "collection), too many for the slower reader", exc.offset) \
                from None
        if type(exc).__name__ == "MaxDepthExceededError":
            raise YamlError(f"nesting deeper than {PURE_MAX_DEPTH} levels in a file libyaml "
                            "cannot read; not parsed", _yaml_error(exc).offset) from None
        if first.message.startswith("found unexpected ':'"):
            raise _yaml_error(exc) from None
        raise first from None


def _too_large(big: Oversized) -> YamlTooLarge:
    return YamlTooLarge(f"this YAML document has more than {MAX_YAML_NODES:,} nodes",
                        big.document)


# A `:` libyaml may refuse: after a character that can be in a plain scalar before it (not a
# blank, a flow indicator or a quote, after which a `:` is a value indicator: `{"a":1}`) and
# before a non-blank (libyaml's IS_BLANKZ: space, tab, the line breaks, NUL).
_COLON = r"(?<=[^ \t\r\n\x85\u2028\u2029,\[\]{}\"'])(:)(?=[^ \t\r\n\x85\u2028\u2029\x00])"
# What holds no such `:`, passed over whole: a quoted scalar (a quote where a scalar can begin:
# at a line's start or after a blank, `[`, `{` or `,`; to its closing quote, escapes and line
# breaks included; a quote with no closing one scans to the end once, then none of its kind is
# left), a tag (a `!` where a node can begin, to the next blank: libyaml's tag characters
# include `:` and the flow indicators, scanner.c yaml_parser_scan_tag_uri; a stand-in there
# breaks the tag) and what may be a comment (a `#` at a line's start or after a blank, to the
# line's end).
_QUOTED = r"""(?:^|(?<=[ \t\[{,]))(?:"(?:[^"\\]|\\[\s\S])*+"|'(?:[^']|'')*+')"""
_TAG = r"(?:^|(?<=[ \t\[{,]))![^ \t\r\n\x85\u2028\u2029]*+"
_COMMENT = r"(?:^|(?<=[ \t]))#[^\r\n]*+"
# The guesses, tried in turn (_read_refused_colons), each alternative at each place in order.
# A guess can be wrong: an apostrophe after a blank inside a plain scalar taken for a quote
# (`[don 't, b:c, isn 't]`: the `:` between left alone, and libyaml refuses it again), a quoted
# ` #` taken for a comment (`['a #', b:c]`), a `!` inside a plain scalar taken for a tag, or
# a tag's `:` replaced.  The reading of a wrong guess fails or is refused by _put_back, and
# costs one reading by libyaml, less than a tenth of one by the pure composer, which reads the
# text when every guess is wrong.
# (Each alternative's first character is one of `"'!#:`: the lookahead before them lets the
# scan pass every other character at once, 3x faster on a 9.5 MiB text than trying each.)
_GUESSES = tuple(re.compile("(?=[\"'!#:])(?:" + "|".join((*skipped, _COLON)) + ")", re.M)
                 for skipped in ((_QUOTED, _TAG, _COMMENT), (_COMMENT,), (_TAG,), ()))
# Stand-ins for such a `:`: a private-use character the text does not hold.  libyaml reads it
# as any printable non-blank character (reader.c, yaml_parser_update_buffer: #xE000-#xFFFD are
# printable; scanner.c: it is no indicator), so a plain scalar goes on through it as YAML 1.2
# goes on through the `:`.
_STAND_INS = tuple(map(chr, range(0xE000, 0xE100)))


def _read_refused_colons(text: str, done: int, after: int) -> tuple[list[Any], Oversized | None] \
        | None:
    """The root nodes of the documents of ``text`` after its first ``done`` (which end at
    ``after``), read by libyaml with each `:` it may refuse after ``after`` in a stand-in (as
    the first of _GUESSES whose reading is the text's finds them), and what is too large among
    them; None when no reading is the text's.

    It is the text's when every stand-in put in is in the value of a scalar whose span holds as
    many (not in a comment, tag, anchor or directive: replacing a `:` there may change what is
    read; not in an escape: `"\\ue000"`), and no plain scalar begins with one (a `:` that
    begins a plain scalar is an indicator in libyaml); then each is a `:` again.  A character
    in a scalar is only its content, so the tree, its positions and its other values are
    those of the text.  (A `:` that is no more than content and left alone is read as before;
    if it is one libyaml refuses, the reading fails, and so does this.)  The nesting and size
    guards are those of the text itself, on the text read."""
    stand_in = next((ch for ch in _STAND_INS if ch not in text), None)
    if stand_in is None:
        return None
    for colons in _GUESSES:
        read = text[:after] + colons.sub(
            lambda m: stand_in if m.group(1) else m.group(0), text[after:])
        got = _read_with_stand_ins(read, done, after, stand_in)
        if got is not None:
            return got
    return None


def _read_with_stand_ins(read: str, done: int, after: int, stand_in: str) \
        -> tuple[list[Any], Oversized | None] | None:
    if nesting_depth_exceeds(read) is not None:
        return None  # (the pure composer reads a text this deep up to its own limit)
    big = oversized_document(read)
    if big is not None:
        if big.start < after:
            return None
        read = read[:big.start]
    try:
        roots = list(_compose(_loader().cls, read, skip=done))
    except Exception:  # noqa: BLE001 - a syntax error: the pure composer's reading decides
        return None
    return (roots, big) if _put_back(roots, read, stand_in, after) else None


def _put_back(roots: list[Any], read: str, stand_in: str, after: int) -> bool:
    """Turn each stand-in in a scalar's value of ``roots`` back into `:`; whether every
    stand-in of ``read`` after ``after`` is one of those, or in a comment.

    False when a scalar's value and its span in ``read`` hold different numbers of them, a
    plain scalar begins with one, or one is outside every scalar but not after a comment's `#`
    on its line.  Such a `#` is one outside every scalar's span, at the line's start or after a
    blank: there YAML starts a comment (`#` after a blank ends a plain scalar, and a quoted or
    block scalar's span holds its own), and libyaml passes over what follows to the line's end
    (scanner.c, yaml_parser_scan_to_next_token), so a stand-in there changed nothing read."""
    from bisect import bisect_right

    from ruamel.yaml.nodes import MappingNode, ScalarNode

    count = 0
    spans: list[tuple[int, int]] = []
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is ScalarNode:
            spans.append((node.start_mark.index, node.end_mark.index))
            value = node.value
            if stand_in in value:
                n = value.count(stand_in)
                if n != read.count(stand_in, node.start_mark.index, node.end_mark.index) or \
                        (not node.style and value[0] == stand_in):
                    return False
                count += n
                node.value = value.replace(stand_in, ":")
        elif type(node) is MappingNode:
            stack.extend(c for pair in node.value for c in pair)
        else:
            stack.extend(node.value)
    if count == read.count(stand_in, after):
        return True
    spans.sort()
    starts = [a for a, _ in spans]

    def in_scalar(at: int) -> bool:
        i = bisect_right(starts, at) - 1
        return i >= 0 and at < spans[i][1]

    at = read.find(stand_in, after)
    while at != -1:
        if not in_scalar(at):
            line = max(read.rfind(br, 0, at) for br in "\n\r\x85\u2028\u2029") + 1
            hashes = (h for h in range(line, at) if read[h] == "#" and
                      (h == line or read[h - 1] in " \t") and not in_scalar(h))
            if next(hashes, None) is None:
                return False
        at = read.find(stand_in, at + 1)
    return True


# --------------------------------------------------------------------------- scalar positions

def scalar_segment(text: str, node: Any) -> Segment:
    """The scalar's value with a map from each character to its place in ``text``."""
    value: str = node.value
    start: int = node.start_mark.index
    end: int = node.end_mark.index
    style = node.style or ""
    while start < end and text[start] in "&!":
        # node properties (an anchor `&a`, a tag `!x`) precede the scalar itself
        m = _PROPERTY.match(text, start)
        start = m.end() if m else end
    if style == "" and text[start:end] == value:
        return Segment(value, CharMap.linear(start, len(value)))
    if style in ("'", '"') and end - start == len(value) + 2 and text[start + 1:end - 1] == value:
        # a one-line quoted scalar without escapes: its text between the quotes
        return Segment(value, CharMap.linear(start + 1, len(value)))
    try:
        if style in ("", "'", '"'):
            built = _flow_scalar(text, start, end, style)
        elif style in ("|", ">"):
            built = (_block_scalar(text, start, end, style)
                     if text.count("\n", start, end) <= MAX_BLOCK_LINES else None)
        else:
            built = None
    except (IndexError, ValueError):
        built = None
    if built is not None:
        chars, places = built
        if "".join(chars) == value:
            return Segment(value, places.build(end))
    # Unverified: every character gets the whole scalar's span (never a guessed offset).
    places = MapBuilder()
    places.const(start, end, len(value))
    return Segment(value, places.build(end))


# A block scalar of more lines than this keeps the whole scalar as every character's place
# (still never a wrong offset): mapping it line by line costs ~300 bytes and ~6 us per line, and
# 4 million empty lines in a folded scalar took 10 s and 1.2 GiB.  Real block scalars (scripts
# in `args: - |`) have a few hundred lines.
MAX_BLOCK_LINES = 100_000

_PROPERTY = re.compile(r"[&!][^\s]*[ \t]*(?:\r?\n[ \t]*)?")
_SIMPLE_ESC = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v",
               "f": "\f", "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
               "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029"}
_HEX_LEN = {"x": 2, "u": 4, "U": 8}


def _flow_scalar(text: str, start: int, end: int, style: str) -> tuple[list[str], MapBuilder] | None:
    """Plain and quoted scalars: line folding, '' and backslash escapes."""
    chars: list[str] = []
    places = MapBuilder()
    if style:
        i, stop = start + 1, end - 1
    else:
        i, stop = start, end
    plain = _PLAIN_RUN[style]
    ws_from = -1  # spaces/tabs from here to ``i`` are not yet known to be kept

    def flush_ws(upto: int) -> None:
        nonlocal ws_from
        if ws_from >= 0:
            chars.append(text[ws_from:upto])
            places.linear(ws_from, upto - ws_from)
        ws_from = -1

    while i < stop:
        ch = text[i]
        if ch in " \t":
            if ws_from < 0:
                ws_from = i
            i += 1
            continue
        if ch in "\r\n":
            # fold: drop trailing whitespace, count empty lines, skip leading indentation
            ws_from = -1
            brk = i
            i = _skip_break(text, i)
            empties: list[int] = []
            while True:
                j = i
                while j < stop and text[j] in " \t":
                    j += 1
                if j < stop and text[j] in "\r\n":
                    empties.append(j)
                    i = _skip_break(text, j)
                    continue
                i = j
                break
            if empties:
                for e in empties:
                    chars.append("\n")
                    places.char(e, _skip_break(text, e))
            else:
                chars.append(" ")
                places.char(brk, i)
            continue
        flush_ws(i)
        if style == "'" and ch == "'" and text[i + 1:i + 2] == "'":
            chars.append("'")
            places.char(i, i + 2)
            i += 2
            continue
        if style == '"' and ch == "\\":
            nxt = text[i + 1]
            if nxt in "\r\n":
                # escaped line break: joined without a space, next line's indentation dropped
                i = _skip_break(text, i + 1)
                while i < stop and text[i] in " \t":
                    i += 1
                continue
            if nxt in _SIMPLE_ESC:
                chars.append(_SIMPLE_ESC[nxt])
                places.char(i, i + 2)
                i += 2
                continue
            if nxt in _HEX_LEN:
                n = _HEX_LEN[nxt]
                chars.append(chr(int(text[i + 2:i + 2 + n], 16)))
                places.char(i, i + 2 + n)
                i += 2 + n
                continue
            return None
        # characters with no special meaning here, copied as one piece
        j = plain.match(text, i, stop).end()  # type: ignore[union-attr]
        if j == i:
            j = i + 1  # a quote of the other style, or a lone quote character
        chars.append(text[i:j])
        places.linear(i, j - i)
        i = j
    if style:
        flush_ws(i)
    return chars, places


# runs of characters a flow scalar copies verbatim, by style
_PLAIN_RUN = {"": re.compile(r"[^ \t\r\n]+"), "'": re.compile(r"[^ \t\r\n']+"),
              '"': re.compile(r'[^ \t\r\n\\]+')}


def _skip_break(text: str, i: int) -> int:
    if text.startswith("\r\n", i):
        return i + 2
    return i + 1


_HEADER = re.compile(r"[|>]([1-9+-]{0,2})[ \t]*(?:#[^\n]*)?\r?\n")


def _block_scalar(text: str, start: int, end: int, style: str) -> tuple[list[str], MapBuilder] | None:
    header = _HEADER.match(text, start)
    if header is None:
        return None
    indicators = header.group(1)
    chomp = "+" if "+" in indicators else "-" if "-" in indicators else ""
    explicit = next((int(c) for c in indicators if c.isdigit()), None)
    pos = header.end()
    # physical lines of the block: (content start, content end, break end)
    lines: list[tuple[int, int, int]] = []
    while pos < end:
        nl = text.find("\n", pos, end)
        if nl == -1:
            lines.append((pos, end, end))
            break
        content_end = nl - 1 if nl > pos and text[nl - 1] == "\r" else nl
        lines.append((pos, content_end, nl + 1))
        pos = nl + 1
    if explicit is not None:
        # indentation = parent indentation + indicator; the parent's is the header line's
        line_begin = text.rfind("\n", 0, start) + 1
        parent = len(text[line_begin:start]) - len(text[line_begin:start].lstrip(" "))
        indent = parent + explicit if text[line_begin:start].strip()[:1] != "-" else explicit
    else:
        indent = 0
        for s, e, _ in lines:
            stripped = text[s:e].lstrip(" ")
            if stripped:
                indent = e - s - len(stripped)
                break
    chars: list[str] = []
    places = MapBuilder()
    body: list[tuple[int, int, int, bool]] = []  # (start, end, break end, is_empty)
    for s, e, b in lines:
        if e - s <= indent and not text[s:e].strip(" "):
            body.append((min(s + indent, e), e, b, True))
        else:
            body.append((s + indent, e, b, False))
    # trailing empty lines belong to chomping
    last = len(body)
    while last > 0 and body[last - 1][3]:
        last -= 1
    content, trailing = body[:last], body[last:]
    # for each line: the last non-empty line before it and the first non-empty line from it
    # (-1 / None when there is none), so that runs of empty lines cost linear time
    prev_full: list[int] = []
    k = -1
    for idx, c in enumerate(content):
        prev_full.append(k)
        if not c[3]:
            k = idx
    next_full: list[int | None] = [None] * len(content)
    nxt_idx: int | None = None
    for idx in range(len(content) - 1, -1, -1):
        if not content[idx][3]:
            nxt_idx = idx
        next_full[idx] = nxt_idx
    prev_more = False
    for idx, (s, e, b, empty) in enumerate(content):
        line = text[s:e]
        more = bool(line) and line[0] in " \t"
        if idx > 0:
            ps, pe, pb, pempty = content[idx - 1]
            if style == ">" and not empty and not more and not prev_more:
                # find how many empty lines precede this one
                k = prev_full[idx]
                if k == idx - 1:
                    chars.append(" ")
                    places.char(pe, pb)
                else:
                    # the break of the non-empty line k is dropped; each empty line is a \n
                    pass
            elif style == ">" and empty:
                k = prev_full[idx]
                j = next_full[idx]
                nxt = content[j] if j is not None else None
                nxt_more = nxt is not None and text[nxt[0]:nxt[1]][:1] in (" ", "\t")
                kline_more = k >= 0 and text[content[k][0]:content[k][1]][:1] in (" ", "\t")
                if k == idx - 1 and (nxt_more or kline_more):
                    chars.append("\n")
                    places.char(pe, pb)
                chars.append("\n")
                places.char(s if s < e else pb, b)
                prev_more = prev_more if empty else more
                continue
            else:
                if not (style == ">" and empty):
                    chars.append("\n")
                    places.char(pe, pb)
        if not empty:
            chars.append(text[s:e])
            places.linear(s, max(0, e - s))
            prev_more = more
        elif style == "|":
            pass
    if content and chomp != "-":
        s, e, b, _ = content[-1]
        if b > e:
            chars.append("\n")
            places.char(e, b)
        if chomp == "+":
            for s2, e2, b2, _ in trailing:
                if b2 > e2 or s2 < e2:
                    chars.append("\n")
                    places.char(e2, b2)
    return chars, places


def node_span(node: Any) -> Span:
    return Span(node.start_mark.index, node.end_mark.index)
