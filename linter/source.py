"""Source text, spans and the character maps that keep positions exact.

Every position in mgpu-lint is a pair of character offsets into one SourceFile's text (``Span``).
Lines and columns are computed only by reporters (``SourceFile.line_col``).

A value that went through unquoting (a YAML double-quoted scalar, a shell word with quotes and
escapes) no longer lines up with the file text.  ``CharMap`` records, for each character of such a
value, the file offsets it came from, so a sub-range of the value (the ``4`` in ``--tp=4``)
maps back to its exact place in the file.  Maps compose: a shell word inside a YAML block
scalar maps through the word's map into the scalar's value and through the scalar's map into
the file.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Iterable


@dataclass(frozen=True, slots=True)
class Span:
    """Half-open range of character offsets [start, end) in one SourceFile's text."""

    start: int
    end: int


class CharMap:
    """Maps indices of a derived string back to offsets in a parent text.

    ``start(i)`` is the parent offset where character i of the derived string begins, ``end(i)`` the
    parent offset just after the source of character i (an escape such as ``\\n`` covers two parent
    characters).  The common identity-like case (a contiguous slice of the parent) is stored as a
    base offset only.
    """

    __slots__ = ("base", "length", "starts", "ends", "tail")

    def __init__(
        self,
        base: int,
        length: int,
        starts: list[int] | None = None,
        ends: list[int] | None = None,
        tail: int | None = None,
    ) -> None:
        self.base = base
        self.length = length
        self.starts = starts
        self.ends = ends
        # parent offset of the position just after the derived string (for empty strings and
        # for end-of-value positions)
        self.tail = tail if tail is not None else (ends[-1] if ends else base + length)

    @classmethod
    def linear(cls, base: int, length: int) -> "CharMap":
        return cls(base, length)

    @classmethod
    def table(cls, starts: list[int], ends: list[int], tail: int) -> "CharMap":
        n = len(starts)
        if n:
            first = starts[0]
            if (starts[-1] == first + n - 1 and ends[-1] == first + n
                    and starts == list(range(first, first + n))
                    and ends == list(range(first + 1, first + n + 1))):
                return cls(first, n, tail=tail)
        return cls(starts[0] if starts else tail, n, starts, ends, tail)

    def start(self, i: int) -> int:
        if i >= self.length:
            return self.tail
        if self.starts is None:
            return self.base + i
        return self.starts[i]

    def end(self, i: int) -> int:
        """Parent offset just after character i."""
        if self.starts is None:
            return self.base + i + 1
        return self.ends[i]  # type: ignore[index]

    def span(self, i: int, j: int) -> Span:
        """Parent span of derived characters [i, j)."""
        if j <= i:
            p = self.start(i)
            return Span(p, p)
        return Span(self.start(i), self.end(j - 1))

    def compose(self, outer: "CharMap") -> "CharMap":
        """This map expressed in ``outer``'s parent (self's parent is outer's derived string)."""
        if self.starts is None and outer.starts is None:
            return CharMap(outer.base + self.base, self.length, tail=outer.start(self.tail))
        n = self.length
        if self.starts is None and self.base + n <= outer.length:
            # a contiguous slice of the outer string: slice its tables
            b = self.base
            return CharMap.table(outer.starts[b:b + n], outer.ends[b:b + n],  # type: ignore
                                 outer.start(self.tail))
        if outer.starts is None:
            ob = outer.base
            return CharMap.table([ob + x for x in self.starts],  # type: ignore[union-attr]
                                 [ob + x for x in self.ends], outer.start(self.tail))  # type: ignore
        starts = [outer.start(self.start(i)) for i in range(self.length)]
        ends = [outer.end(self.end(i) - 1) for i in range(self.length)]
        return CharMap.table(starts, ends, outer.start(self.tail))

    def to_span(self) -> Span:
        return self.span(0, self.length) if self.length else Span(self.tail, self.tail)


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of text with its map into the file: a YAML scalar's value, a Markdown block."""

    text: str
    cmap: CharMap

    def span(self, i: int = 0, j: int | None = None) -> Span:
        return self.cmap.span(i, len(self.text) if j is None else j)

    def sub(self, i: int, j: int) -> "Segment":
        if self.cmap.starts is None:
            return Segment(self.text[i:j], CharMap.linear(self.cmap.base + i, j - i))
        return Segment(
            self.text[i:j],
            CharMap.table(
                self.cmap.starts[i:j], self.cmap.ends[i:j],  # type: ignore[index]
                self.cmap.start(j),
            ),
        )


def literal_segment(text: str, start: int) -> Segment:
    """A slice of the file text taken verbatim from ``start``."""
    return Segment(text, CharMap.linear(start, len(text)))


@dataclass(frozen=True, slots=True)
class Word:
    """One argv word: its value after quote removal and expansion, and where it came from.

    ``cmap`` maps each character of ``text`` to the file.  ``unresolved`` names variables that
    could not be expanded (the word then holds their literal reference text).
    """

    text: str
    cmap: CharMap
    quoted: bool = False
    unresolved: tuple["VarRef", ...] = ()

    @property
    def span(self) -> Span:
        return self.cmap.to_span()

    @property
    def may_split(self) -> bool:
        """An unknown expansion in the word may give the program no word or several (an
        unquoted ``$ARGS`` whose value is unknown, ``${X:+…}``, ``"$@"``)."""
        return any(v.split for v in self.unresolved)

    def sub(self, i: int, j: int | None = None) -> Span:
        return self.cmap.span(i, len(self.text) if j is None else j)


@dataclass(frozen=True, slots=True)
class VarRef:
    """A variable reference that stayed unexpanded: ``$(VAR)``, ``$VAR``, ``${VAR:-x}``.

    ``split`` is True when the shell may turn it into no word or several (field splitting of an
    unquoted expansion, ``${X:+words}``, ``"$@"``): such a word is never a positional model and
    never one glued argument."""

    name: str
    span: Span
    split: bool = False


@dataclass(eq=False)
class SourceFile:
    """A file's decoded text.  ``path`` is as given on the command line (or ``<command>``)."""

    path: str
    text: str
    kind: str = "unknown"
    _line_starts: list[int] | None = field(default=None, repr=False)

    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            starts = [0]
            text = self.text
            find = text.find
            i = find("\n")
            while i != -1:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._line_starts = starts
        return self._line_starts

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column (in code points) of a character offset."""
        starts = self.line_starts()
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(starts, offset) - 1
        return line + 1, offset - starts[line] + 1

    def line_text(self, line: int) -> str:
        """Text of a 1-based line without its line break."""
        starts = self.line_starts()
        if line < 1 or line > len(starts):
            return ""
        begin = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        return self.text[begin:end].rstrip("\r")

    def lines(self) -> Iterable[str]:
        return self.text.split("\n")
