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
from array import array
from itertools import accumulate, repeat
from operator import add
from typing import Iterable, Iterator, MutableSequence, Sequence

from .bounds import ReadBudget
from .records import dataclass, field


@dataclass(frozen=True, slots=True)
class Span:
    """Half-open range of character offsets [start, end) in one SourceFile's text."""

    start: int
    end: int


_NO_RUNS: list[int] = []  # shared by linear maps, never written
_COMPACT_AT = 256  # runs kept in lists before a map moves them into arrays (MapBuilder._push)


class CharMap:
    """Maps indices of a derived string back to offsets in a parent text.

    ``start(i)`` is the parent offset where character i of the derived string begins, ``end(i)`` the
    parent offset just after the source of character i (an escape such as ``\\n`` covers two parent
    characters).

    The map is stored as runs, not per character: within a run of derived characters
    ``[d, d + n)`` both offsets are affine, ``start(d + k) = s + ss * k`` and
    ``end(d + k) = e + es * k``.  Text copied verbatim is one run (steps 1), an expanded
    variable whose characters all map to its reference is one run (steps 0), a string of escapes
    ``\\n\\n…`` one run (steps 2), so memory grows with the number of places where the mapping
    changes, not with the length of the text.  The common identity-like case (a contiguous slice
    of the parent) is stored as a base offset only.
    """

    __slots__ = ("base", "length", "tail", "_d", "_s", "_ss", "_e", "_es")

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
        # the runs (None for a linear map); see MapBuilder
        self._d: list[int] | None = None
        self._s = self._ss = self._e = self._es = _NO_RUNS
        if starts is not None and ends is not None:
            b = MapBuilder()
            for s, e in zip(starts, ends):
                b.add_run(s, 0, e, 0, 1)
            b._into(self)
        # parent offset of the position just after the derived string (for empty strings and
        # for end-of-value positions)
        if tail is not None:
            self.tail = tail
        elif ends:
            self.tail = ends[-1]
        else:
            self.tail = base + length

    @classmethod
    def linear(cls, base: int, length: int) -> "CharMap":
        return cls(base, length)

    @classmethod
    def table(cls, starts: list[int], ends: list[int], tail: int) -> "CharMap":
        """A map from per-character lists (small maps; large ones are built with MapBuilder)."""
        b = MapBuilder()
        for s, e in zip(starts, ends):
            b.add_run(s, 0, e, 0, 1)
        return b.build(tail)

    @property
    def is_linear(self) -> bool:
        """A contiguous slice of the parent (``start(i) = base + i``)."""
        return self._d is None

    @property
    def runs(self) -> int:
        """Number of stored runs (1 for a linear map): the map's size."""
        return 1 if self._d is None else len(self._d)

    def _run(self, i: int) -> int:
        d = self._d
        r = bisect.bisect_right(d, i) - 1  # type: ignore[arg-type]
        return 0 if r < 0 else r

    def start(self, i: int) -> int:
        if i >= self.length:
            return self.tail
        if self._d is None:
            return self.base + i
        r = self._run(i)
        return self._s[r] + self._ss[r] * (i - self._d[r])

    def end(self, i: int) -> int:
        """Parent offset just after character i."""
        if self._d is None or not self._d:
            return self.base + i + 1
        r = self._run(i)
        return self._e[r] + self._es[r] * (i - self._d[r])

    def span(self, i: int, j: int) -> Span:
        """Parent span of derived characters [i, j)."""
        if j <= i:
            p = self.start(i)
            return Span(p, p)
        return Span(self.start(i), self.end(j - 1))

    def iter_runs(self) -> Iterator[tuple[int, int, int, int, int, int]]:
        """(d, n, s, ss, e, es) for each run, in order."""
        if self._d is None:
            if self.length:
                yield 0, self.length, self.base, 1, self.base + 1, 1
            return
        d = self._d
        last = len(d) - 1
        for r in range(len(d)):
            n = (d[r + 1] if r < last else self.length) - d[r]
            yield d[r], n, self._s[r], self._ss[r], self._e[r], self._es[r]

    def slice(self, i: int, j: int, tail: int | None = None) -> "CharMap":
        """The map of derived characters [i, j) as a map of its own.  Its tail is ``tail``; by
        default ``start(j)``, and for a linear map the parent offset right after the slice."""
        i = max(0, i)
        j = min(max(j, i), self.length)
        if self._d is None:
            return CharMap(self.base + i, j - i, tail=self.base + j if tail is None else tail)
        d = self._d
        r = self._run(i)
        if i < j and (r + 1 == len(d) or d[r + 1] >= j):
            # inside one run (a word on one line of a block scalar): when that run is copied
            # verbatim, the linear map MapBuilder.build would give for it
            k = i - d[r]
            s, e = self._s[r] + self._ss[r] * k, self._e[r] + self._es[r] * k
            if e == s + 1 and (j - i == 1 or (self._ss[r] == 1 and self._es[r] == 1)):
                return CharMap(s, j - i, tail=self.start(j) if tail is None else tail)
        b = MapBuilder()
        b.extend(self, i, j)
        return b.build(self.start(j) if tail is None else tail)

    def _start_piece(self, x: int, step: int, count: int) -> tuple[int, int, int]:
        """For the progression ``x + step * k`` (k < count) of derived indices: ``start`` at x,
        its slope in x, and for how many k it stays affine (as ``compose`` sees a map: a linear
        map extends past its ends, another map gives ``tail`` from its length on)."""
        if self._d is None:
            return self.base + x, 1, count
        if x >= self.length:
            if step >= 0:
                return self.tail, 0, count
            return self.tail, 0, min(count, (x - self.length) // -step + 1)
        d = self._d
        r = self._run(x)
        lo = d[r] if r > 0 else None
        hi = d[r + 1] if r + 1 < len(d) else self.length
        return (self._s[r] + self._ss[r] * (x - d[r]), self._ss[r],
                _steps_within(x, step, count, lo, hi))

    def _end_piece(self, x: int, step: int, count: int) -> tuple[int, int, int]:
        if self._d is None or not self._d:
            return self.base + x + 1, 1, count
        d = self._d
        r = self._run(x)
        lo = d[r] if r > 0 else None
        hi = d[r + 1] if r + 1 < len(d) else None
        return (self._e[r] + self._es[r] * (x - d[r]), self._es[r],
                _steps_within(x, step, count, lo, hi))

    def compose(self, outer: "CharMap") -> "CharMap":
        """This map expressed in ``outer``'s parent (self's parent is outer's derived string)."""
        if self._d is None:
            if outer._d is None:
                return CharMap(outer.base + self.base, self.length, tail=outer.start(self.tail))
            if 0 <= self.base and self.base + self.length <= outer.length:
                # a verbatim slice of outer's string (a word of a `sh -c` block scalar): the
                # same runs the loop below would add, taken from outer's without per-run
                # piece arithmetic
                return outer.slice(self.base, self.base + self.length, outer.start(self.tail))
        b = MapBuilder()
        for _d, n, s, ss, e, es in self.iter_runs():
            k = 0
            while k < n:
                a = s + ss * k
                z = e - 1 + es * k
                va, sa, ka = outer._start_piece(a, ss, n - k)
                vz, sz, kz = outer._end_piece(z, es, n - k)
                m = max(1, min(ka, kz))
                b.add_run(va, sa * ss, vz + 0, sz * es, m)
                k += m
        return b.build(outer.start(self.tail))

    def bounds(self) -> tuple[int, int]:
        """``to_span()``'s start and end, without a Span."""
        if not self.length:
            return self.tail, self.tail
        if self._d is None:
            return self.base, self.base + self.length
        return self.start(0), self.end(self.length - 1)

    def to_span(self) -> Span:
        if not self.length:
            return Span(self.tail, self.tail)
        if self._d is None:
            return Span(self.base, self.base + self.length)  # span(0, length) of a linear map
        return self.span(0, self.length)


def _steps_within(x: int, step: int, count: int, lo: int | None, hi: int | None) -> int:
    """How many k in [0, count) keep ``x + step * k`` in [lo, hi) (None: unbounded)."""
    if step > 0 and hi is not None:
        return min(count, (hi - x + step - 1) // step)
    if step < 0 and lo is not None:
        return min(count, (x - lo) // -step + 1)
    return count


class MapBuilder:
    """Builds a CharMap run by run; consecutive characters that continue a run are merged.

    The run being extended lives in plain attributes and goes into the lists only when the next
    one starts, so merging a character (the common case) touches no list."""

    __slots__ = ("_d", "_s", "_ss", "_e", "_es", "n", "_cd", "_cs", "_css", "_ce", "_ces")

    def __init__(self) -> None:
        self._d: MutableSequence[int] = []
        self._s: MutableSequence[int] = []
        self._ss: MutableSequence[int] = []
        self._e: MutableSequence[int] = []
        self._es: MutableSequence[int] = []
        self.n = 0  # characters so far
        # the current run (``_cd`` -1: none yet)
        self._cd = -1
        self._cs = self._css = self._ce = self._ces = 0

    def add_run(self, s: int, ss: int, e: int, es: int, n: int) -> None:
        """n characters: character k starts at ``s + ss * k`` and ends at ``e + es * k``."""
        if n <= 0:
            return
        if self._cd >= 0:
            last_len = self.n - self._cd
            if last_len == 1:
                cs, ce = s - self._cs, e - self._ce
                if n == 1 or (ss == cs and es == ce):
                    self._css, self._ces = cs, ce
                    self.n += n
                    return
            elif (s == self._cs + self._css * last_len and e == self._ce + self._ces * last_len
                  and (n == 1 or (ss == self._css and es == self._ces))):
                self.n += n
                return
            self._push()
        self._cd, self._cs, self._ce = self.n, s, e
        if n > 1:
            self._css, self._ces = ss, es
        else:
            self._css = self._ces = 0
        self.n += n

    def _push(self) -> None:
        """The current run into the lists."""
        self._d.append(self._cd)
        self._s.append(self._cs)
        self._ss.append(self._css)
        self._e.append(self._ce)
        self._es.append(self._ces)
        if len(self._d) == _COMPACT_AT:
            # a map whose mapping changes every few characters (``m$x$x$x…``, escapes of
            # different kinds) has a run per change: past _COMPACT_AT runs they are kept as
            # machine integers (8 bytes each) instead of Python ints in lists (about 40), so a
            # 4 MiB word of expansions no longer takes over 300 MiB
            self._d, self._s, self._ss, self._e, self._es = (
                array("q", xs) for xs in (self._d, self._s, self._ss, self._e, self._es))

    def linear(self, start: int, n: int) -> None:
        """n characters copied verbatim from ``start``."""
        self.add_run(start, 1, start + 1, 1, n)

    def char(self, start: int, end: int) -> None:
        """One character that came from ``[start, end)`` (an escape covers two)."""
        self.add_run(start, 0, end, 0, 1)

    def const(self, start: int, end: int, n: int) -> None:
        """n characters that all came from ``[start, end)`` (an expanded reference)."""
        self.add_run(start, 0, end, 0, n)

    def extend(self, cmap: CharMap, i: int = 0, j: int | None = None) -> None:
        """Characters [i, j) of ``cmap``, with their places."""
        j = cmap.length if j is None else min(j, cmap.length)
        if j <= i:
            return
        if cmap._d is None:
            self.linear(cmap.base + i, j - i)
            return
        r = cmap._run(i)
        d = cmap._d
        while r < len(d) and d[r] < j:
            lo = max(d[r], i)
            hi = min(d[r + 1] if r + 1 < len(d) else cmap.length, j)
            k = lo - d[r]
            self.add_run(cmap._s[r] + cmap._ss[r] * k, cmap._ss[r],
                         cmap._e[r] + cmap._es[r] * k, cmap._es[r], hi - lo)
            r += 1

    def _into(self, m: CharMap) -> None:
        if self._cd >= 0:
            if not self._d and (self.n == 1 or (self._css == 1 and self._ces == 1)) \
                    and self._ce == self._cs + 1:
                # one run copied verbatim (most words): a linear map, no lists
                m.length, m._d, m.base = self.n, None, self._cs
                self._cd = -1
                return
            self._push()
            self._cd = -1
        m.length = self.n
        d = self._d
        if not d:
            m._d = None
            return
        if len(d) == 1 and (self.n == 1 or (self._ss[0] == 1 and self._es[0] == 1)) \
                and self._e[0] == self._s[0] + 1:
            m._d = None
            m.base = self._s[0]
            return
        m._d, m._s, m._ss, m._e, m._es = d, self._s, self._ss, self._e, self._es
        m.base = self._s[0]

    def build(self, tail: int) -> CharMap:
        if self._cd == 0 and not self._d and (self.n == 1 or (self._css == 1 and self._ces == 1)) \
                and self._ce == self._cs + 1:
            self._cd = -1
            return CharMap(self._cs, self.n, tail=tail)  # one verbatim run: the common word
        m = CharMap(tail, 0, tail=tail)
        self._into(m)
        return m


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of text with its map into the file: a YAML scalar's value, a Markdown block."""

    text: str
    cmap: CharMap

    def span(self, i: int = 0, j: int | None = None) -> Span:
        return self.cmap.span(i, len(self.text) if j is None else j)

    def sub(self, i: int, j: int) -> "Segment":
        return Segment(self.text[i:j], self.cmap.slice(i, j))


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

    @property
    def may_set_anything(self) -> bool:
        """An unknown expansion that may hold any option (``$ARGS``): the launch is open."""
        return any(v.split and v.option is None for v in self.unresolved)

    def sub(self, i: int, j: int | None = None) -> Span:
        return self.cmap.span(i, len(self.text) if j is None else j)


@dataclass(frozen=True, slots=True)
class VarRef:
    """A variable reference that stayed unexpanded: ``$(VAR)``, ``$VAR``, ``${VAR:-x}``.

    ``split`` is True when the shell may turn it into no word or several (field splitting of an
    unquoted expansion, ``${X:+words}``, ``"$@"``): such a word is never a positional model and
    never one glued argument.  ``option`` names the one option such words can only set (a
    reader that knows the key but not the words, e.g. a RayService ``engine_kwargs`` entry);
    None when they may set any."""

    name: str
    span: Span
    split: bool = False
    option: str | None = None


def placed_word(text: str, span: Span, quoted: bool = False,
                unresolved: tuple[VarRef, ...] = ()) -> Word:
    """A word written elsewhere (another file, an operator's default), every character of it
    shown at ``span``."""
    place = MapBuilder()
    place.const(span.start, span.end, len(text))
    return Word(text, place.build(span.end), quoted, unresolved)


def unknown_words(span: Span, name: str, option: str | None = None) -> Word:
    """``$name`` at ``span``: words the engine gets that the linter does not spell out (none,
    one or several), all of them about ``option`` when it is given."""
    return placed_word("$" + name, span, False, (VarRef(name, span, split=True, option=option),))


def line_starts(text: str, chunk: int = 1 << 20) -> array:
    """The offset where each line of ``text`` starts.  Per chunk of text, the lengths of its
    lines are summed by C iterators (split, map, accumulate): a loop of ``find`` per line took
    1.8 s for 10 million blank lines, this 0.96 s.  A line cut by the chunk's end goes on in
    the next chunk: only the starts after each newline are kept."""
    starts = array("q", [0])
    for base in range(0, len(text), chunk):
        lines = text[base:base + chunk].split("\n")
        sums = array("q", accumulate(map(add, map(len, lines), repeat(1)), initial=base))
        starts.extend(sums[1:len(lines)])
    return starts


@dataclass(eq=False)
class SourceFile:
    """A file's decoded text.  ``path`` is as given on the command line (or ``<command>``)."""

    path: str
    text: str
    kind: str = "unknown"
    _line_starts: Sequence[int] | None = field(default=None, repr=False)
    _last_line: int = field(default=0, repr=False)  # 0-based line of line_col's last answer
    # a text joined from several files (``joined_source``): (offset where the file's text
    # starts here, the file), in order; empty for a file's own text
    parts: tuple[tuple[int, "SourceFile"], ...] = field(default=(), repr=False)
    # the shell words its readers may still lex, and where they ran out (linter/bounds.py)
    budget: ReadBudget = field(default_factory=ReadBudget, repr=False)

    def place(self, span: Span) -> tuple["SourceFile", Span]:
        """The file ``span`` is in and its span there: the span itself for a file's own text;
        for a joined text the file whose part holds ``span.start`` (an end past that part is
        cut at the part's end)."""
        if not self.parts:
            return self, span
        i = bisect.bisect_right([start for start, _ in self.parts], span.start) - 1
        start, src = self.parts[max(i, 0)]
        s = max(span.start - start, 0)
        return src, Span(s, max(s, min(span.end - start, len(src.text))))

    def line_starts(self) -> Sequence[int]:
        """The offset where each line starts (machine integers: a file of 4 million blank lines
        took 160 MiB as a list of Python ints)."""
        if self._line_starts is None:
            self._line_starts = line_starts(self.text)
        return self._line_starts

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column (in code points) of a character offset."""
        starts = self.line_starts()
        offset = max(0, min(offset, len(self.text)))
        # reporters ask in file order, many times per line (16,000 findings on one line): the
        # line of the last answer first, then a binary search
        line = self._last_line
        if starts[line] <= offset and (line + 1 == len(starts) or offset < starts[line + 1]):
            return line + 1, offset - starts[line] + 1
        line = self._last_line = bisect.bisect_right(starts, offset) - 1
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


def joined_source(sources: Sequence[SourceFile]) -> SourceFile:
    """One text holding the texts of ``sources`` one after the other (a newline between), for a
    launch whose words come from several files (a KServe InferenceService run by a
    ServingRuntime in another file): every offset of a file's text is the same offset plus its
    part's start here, so its words keep their characters and maps, and ``place`` turns a span
    of the joined text back into the file's own.  It takes the first file's path and kind."""
    parts: list[tuple[int, SourceFile]] = []
    texts: list[str] = []
    at = 0
    for src in sources:
        parts.append((at, src))
        texts.append(src.text)
        at += len(src.text) + 1
    first = sources[0]
    return SourceFile(first.path, "\n".join(texts), first.kind, parts=tuple(parts))
