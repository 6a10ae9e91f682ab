"""Shell words and simple commands with exact positions (grammar: grammars/shell.lark).

``split_commands(text, resolve)`` lexes a shell text with the grammar's terminals and yields
the simple commands in order, each as argv ``Word`` objects whose character maps point into
``text``.
Variables are expanded through ``resolve(name) -> str | None`` at the moment each command is
assembled, so a caller that records assignments between commands sees them take effect in order,
as the shell does.  A variable that ``resolve`` does not know stays literal and is listed in the
word's ``unresolved``.
"""

from __future__ import annotations

import re
from array import array
from functools import lru_cache
from sys import intern
from typing import Callable, Iterator

from .bounds import MAX_VALUE_CHARS, ReadBudget
from .cancel import step as cancel_step
from .source import CharMap, MapBuilder, Span, VarRef, Word
from .records import dataclass, field

Resolver = Callable[[str], "str | None"]

_SEPARATORS = {"WS", "NEWLINE", "OP", "COMMENT"}


@dataclass(slots=True)
class ShellProblem:
    """A lexical problem (MG003): unbalanced quote, dangling or broken continuation."""

    message: str
    span: Span
    hint: str | None = None
    swallows: bool = False  # an unclosed quote: the rest of the text is inside it


@dataclass(slots=True)
class Command:
    """A simple command: leading ``NAME=value`` assignments, then argv words."""

    assignments: list[tuple[str, Word]] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    problems: list[ShellProblem] = field(default_factory=list)
    background: bool = False  # ended by `&`
    line_start: int = 0  # offset where the command starts in the lexed text
    heredocs: list[Span] = field(default_factory=list)  # bodies of `<<EOF` documents
    # `NAME=(w1 w2 …)` / `NAME+=(…)`: (name, element words, appended)
    arrays: list[tuple[str, list[Word], bool]] = field(default_factory=list)


@lru_cache(maxsize=1)
def _scanner() -> re.Pattern[str]:
    """One alternation of the grammar's terminals, in the order Lark's basic lexer tries them
    (priority, then longest possible match, then pattern length, then name; lark/lexer.py
    BasicLexer).  Scanning with it directly skips Lark's per-token line counting, the largest
    cost of lexing long `sh -c` scripts; the grammar stays the single definition (its terminals
    are generated into grammars/terminals.py by scripts/grammars.py, so Lark is not imported)."""
    from .grammars.terminals import SHELL

    return re.compile("|".join(f"(?P<{name}>{_possessive(name, regexp)})"
                               for name, regexp in SHELL))


# The outermost repetition of these terminals, up to their closing delimiter (the pattern's
# end); repeated possessively, the regex engine keeps no backtracking entry per repetition, which
# cost ~150 bytes per escape in a long quoted word.  For ANSI, BACKTICK and CMDSUB that changes
# no match: each alternative starts with its own character and matches one way, so giving one
# back never lets the closing delimiter match.  For DQ it can (an iteration `${…}` or `$(…)` that
# swallowed the quote that would close the word when that `$` is read as a lone `$`); when the
# possessive DQ fails where the text has `${` or `$(`, the grammar's own DQ decides (_tokens).
_OUTER_ENDS = {"DQ": ')*")', "ANSI": ")*')", "BACKTICK": ")*`)", "CMDSUB": ")*\\))"}


def _possessive(name: str, regexp: str) -> str:
    end = _OUTER_ENDS.get(name)
    if end is None or not regexp.endswith(end):
        return regexp
    return regexp[:-len(end)] + ")*+" + end[2:]


@lru_cache(maxsize=1)
def _dq_pieces() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The pieces of the grammar's DQ, ``"(?:RUN|\\.|PARAM|CMDSUB|\\$)*"``: the possessive DQ's
    body without its closing quote (how far it reads), its run of plain characters, and its
    `${…}` and `$(…)` items, each repeated possessively (_dq_end says why that is exact)."""
    from .grammars.terminals import SHELL

    dq = dict(SHELL)["DQ"]
    body = _possessive("DQ", dq)
    assert body.endswith('")')
    head, tail = r'(?s:"(?:[^"\\$]++|\\.|', r'|\$)*")'
    assert dq.startswith(head) and dq.endswith(tail), dq
    middle = dq[len(head):-len(tail)]
    cut = middle.index(r"|\$\(")
    param, cmdsub = middle[:cut], middle[cut + 1:]
    assert param.endswith(r")*\}") and cmdsub.endswith(r")*\)"), (param, cmdsub)
    return (re.compile(body[:-2] + ")"), re.compile(r'[^"\\$]+'),
            re.compile(param[:-3] + r"*+\}", re.S), re.compile(cmdsub[:-3] + r"*+\)", re.S))


def _dq_end(text: str, start: int, dead: bytearray) -> int | None:
    """Where the grammar's DQ matched at ``start`` ends, as Python's backtracking regex finds
    it, in time linear in the text (the regex itself took 1.4 s on an 11 KB text of `$(`
    and quotes, and grows exponentially).

    The regex is ``"`` ITEM* ``"`` with ITEM one of RUN (possessive), ``\\.``, PARAM, CMDSUB and a
    lone ``$``.  PARAM and CMDSUB each match at most one way: no item inside them starts with
    their closing `}`/`)`, and a lone `$` read instead of an inner `${` is followed by a `{`
    no item takes; so backtracking only chooses, at each `$` that opens a PARAM or CMDSUB,
    between that item and a lone `$`.  A depth-first search over positions, in the regex's
    order (one more item first, the item alternatives in order, then the closing quote),
    finds its first match; whether the rest matches from a position depends on the position
    alone, so ``dead`` (one byte per position of the text, shared by one text's calls) marks
    the positions from which it cannot.  The path is an array of ``2 * position + 1`` when
    that position's lone-`$` reading is still to try, else ``2 * position``."""
    _, run, param, cmdsub = _dq_pieces()
    n = len(text)
    path = array("q")
    p = start + 1
    while True:
        if not dead[p]:
            # one more item at p: its first reading (the lone `$` after PARAM/CMDSUB is kept)
            c = text[p] if p < n else ""
            lone = False
            if c == '"' or not c:
                e = -1
            elif c == "\\":
                e = p + 2 if p + 1 < n else -1
            elif c == "$":
                m = param.match(text, p) or cmdsub.match(text, p)
                e, lone = (m.end(), True) if m else (p + 1, False)
            else:
                e = run.match(text, p).end()  # type: ignore[union-attr]  # c starts a run
            path.append(2 * p + lone)
            if e >= 0 and not dead[e]:
                p = e
                continue
        while path:
            top = path[-1]
            q = top >> 1
            if top & 1:
                path[-1] = top - 1
                if not dead[q + 1]:
                    p = q + 1
                    break
                continue
            path.pop()
            if q < n and text[q] == '"':
                return q + 1  # no more items at q, and the closing quote is there
            dead[q] = 1
        else:
            return None


# First characters at which the scanner's first matching terminal is PLAIN, and those at which
# it is WS: none of the terminals tried before them (DQ, PARAM, CMDSUB, OP; for WS also ANSI,
# BACKTICK, SQ) starts with one (OP's `[0-9]*` redirections are why digits are not listed).
# There the lexer matches that one terminal, not the whole alternation (most tokens of a
# script); test_grammars checks the tokens are the scanner's.
_PLAIN_FIRST = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_./:=,@+%")
_WS_FIRST = frozenset(" \t")


@lru_cache(maxsize=1)
def _plain_ws() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The grammar's PLAIN and WS terminals, each on its own (_PLAIN_FIRST)."""
    from .grammars.terminals import SHELL

    terminals = dict(SHELL)
    return re.compile(terminals["PLAIN"]), re.compile(terminals["WS"])


def _tokens(text: str, jump: list[int] | None = None) -> Iterator[tuple[str, str, int]]:
    """(type, value, start) for each token; a `#` inside a word is lexed as a literal.  When
    the reader sets ``jump[0]`` past the next token's start, lexing resumes there: a
    here-document's body is not shell text (an apostrophe in it would open a quote that
    swallows the commands after it)."""
    match = _scanner().match
    plain, ws = (p.match for p in _plain_ws())
    plain_first, ws_first = _PLAIN_FIRST, _WS_FIRST
    dead: bytearray | None = None  # positions from which the grammar's DQ cannot end (_dq_end)
    pos = 0
    n = len(text)
    prev_type = "WS"
    if jump is None:
        jump = [0]
    while pos < n:
        if jump[0] > pos:
            pos = jump[0]
            if pos >= n:
                break
            prev_type = "WS" if text[pos - 1] in " \t\n" else "PLAIN"
        c = text[pos]
        if c in plain_first:
            value = plain(text, pos).group()  # type: ignore[union-attr]  # c starts one
            yield ("PLAIN", value, pos)
            prev_type = "PLAIN"
            pos += len(value)
            continue
        if c in ws_first:
            value = ws(text, pos).group()  # type: ignore[union-attr]  # c starts one
            yield ("WS", value, pos)
            prev_type = "WS"
            pos += len(value)
            continue
        m = match(text, pos)
        if m is None:  # cannot happen: BAD_QUOTE/BAD_ESC/DOLLAR/HASH cover every character
            raise ValueError(f"no shell token at offset {pos}")
        ttype = m.lastgroup or ""
        value = m.group()
        if ttype == "BAD_QUOTE" and value == '"':
            body = _dq_pieces()[0]
            read = body.match(text, pos)
            till = read.end() if read else pos
            if text.find("${", pos, till) >= 0 or text.find("$(", pos, till) >= 0:
                if dead is None:
                    dead = bytearray(n + 1)
                end = _dq_end(text, pos, dead)
                if end is not None:
                    ttype, value = "DQ", text[pos:end]
        if ttype == "COMMENT" and prev_type not in _SEPARATORS:
            # `#` inside a word is a literal character; the rest is lexed again
            ttype, value = "HASH", "#"
        yield (ttype, value, pos)
        prev_type = ttype
        pos += len(value)


_DQ_ESCAPABLE = '\\"$`'
_ANSI_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a",
                 "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "v": "\v", "?": "?"}
_PARAM_RE = re.compile(r"\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)|\$([0-9@*#?$!-])")
_PARAM_BODY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=+?])(.*))?$", re.S)
_ARRAY_BODY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\[([@*])\]$")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PLUS_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+=")
_NAME_CHARS = re.compile(r"[A-Za-z0-9_]*")
_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_IFS_CHAR = re.compile(r"[ \t\n]")
_DQ_PLAIN = re.compile(r"[^\\$]+")  # inside double quotes: neither an escape nor an expansion
# inside double quotes after the last `}`: characters and `$`s that expand nothing there (a `$`
# not followed by a name, a special parameter or `(`; `${` cannot close any more)
_DQ_TAIL = re.compile(r"(?:[^\\$]++|\$(?![A-Za-z0-9_@*#?$!(-]))++")
_ANSI_PLAIN = re.compile(r"[^\\]+")
_ARRAY_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\+?)=$")
_DECLARATIONS = {"export", "declare", "local", "readonly", "typeset"}
# A placeholder of documentation (`--dist-init-addr <MASTER_NODE_IP>`): `<` NAME `>` with
# nothing between, at a word's start or after `=`, `:`, `/`, `@`, and ending the word or
# followed by `:`/`/`; as shell it would read NAME and write the next word, which no launch means
_PLACEHOLDER = re.compile(r"<([A-Za-z][A-Za-z0-9_.-]*)>")
_BEFORE_PLACEHOLDER = frozenset(" \t\n=:/@")
_AFTER_PLACEHOLDER = frozenset(" \t\r\n\\:/")
# a default/alternative word the linter reads literally: no quotes, escapes or expansions
_LITERAL_WORDS = re.compile(r"^[^'\"\\$`]*$")

ArrayResolver = Callable[[str], "list[Word] | None"]
# where a variable's value was assigned in the same text (its characters' map), if known
Definer = Callable[[str], "Word | None"]


class _WordBuilder:
    """Builds the word being lexed; unquoted expansions may end it and start new ones (field
    splitting), whose finished words wait in ``fields``.  The characters' places are kept as runs
    (``MapBuilder``), so a long word costs memory per change of mapping, not per character.
    Most words are one piece of literal text (`--port`, `8000`): until a second piece comes,
    ``_map`` is None and the piece's start is ``_one``, and the word's map is built directly."""

    __slots__ = ("chars", "_map", "_one", "quoted", "unresolved", "begin", "fields", "_head",
                 "_scanned")

    def __init__(self) -> None:
        self.chars: list[str] = []
        self._map: MapBuilder | None = None
        self._one = -1
        self.quoted = False
        self.unresolved: list[VarRef] = []
        self.begin = -1
        self.fields: list[Word] = []
        self._head: bool | None = None  # the word so far starts with NAME= / NAME+= (decided)
        self._scanned = 0  # pieces of ``chars`` looked at for ``_head``

    @property
    def map(self) -> MapBuilder:
        """The places of the characters so far (built on the word's second piece)."""
        m = self._map
        if m is None:
            m = self._map = MapBuilder()
            if self._one >= 0:
                m.linear(self._one, len(self.chars[0]))
        return m

    def add(self, text: str, start: int) -> None:
        """Literal text copied from the source starting at ``start``."""
        if self.begin < 0:
            self.begin = start
        if self._map is None and not self.chars:
            self._one = start
        else:
            self.map.linear(start, len(text))
        self.chars.append(text)

    def add_char(self, ch: str, start: int, end: int) -> None:
        if self.begin < 0:
            self.begin = start
        self.chars.append(ch)
        self.map.char(start, end)

    def add_expansion(self, value: str, start: int, end: int) -> None:
        """An expanded value: every character maps to the whole reference."""
        if self.begin < 0:
            self.begin = start
        self.chars.append(value)
        self.map.const(start, end, len(value))

    def add_value(self, value: str, start: int, end: int, literal_at: int | None,
                  defined: CharMap | None, split: bool) -> None:
        """An expansion's value.  ``literal_at`` is where ``value`` stands verbatim in the text
        (a `${X:-default}` default), ``defined`` maps its characters to the assignment that set
        it; otherwise each character maps to the whole reference.  With ``split`` (unquoted),
        it is split into fields at blanks (POSIX 2.6.5 with the default IFS)."""
        self.mark(start)
        pos = 0
        if split:
            for m in _IFS_CHAR.finditer(value):
                self._value_part(value, pos, m.start(), start, end, literal_at, defined)
                self.cut(start)
                pos = m.end()
        self._value_part(value, pos, len(value), start, end, literal_at, defined)
        if split and self.begin >= 0 and not self.chars and not self.quoted:
            self.begin = -1

    def _value_part(self, value: str, i: int, j: int, start: int, end: int,
                    literal_at: int | None, defined: CharMap | None) -> None:
        """Characters [i, j) of an expansion's value (no blank among them when split)."""
        if j <= i:
            return
        if self.begin < 0:
            self.begin = literal_at + i if literal_at is not None else (
                defined.start(i) if defined is not None else start)
        self.chars.append(value[i:j])
        if literal_at is not None:
            self.map.linear(literal_at + i, j - i)
        elif defined is not None:
            self.map.extend(defined, i, j)
        else:
            self.map.const(start, end, j - i)

    def cut(self, at: int) -> None:
        """End the current field (a blank inside an unquoted expansion)."""
        if self.chars or self.quoted:
            self.fields.append(self.build(at))
        self.chars = []
        self._map = None
        self._one = -1
        self.quoted = False
        self.unresolved = []
        self.begin = -1
        self._head, self._scanned = None, 0

    def head_is_assignment(self) -> bool:
        """Whether the word so far starts with ``NAME=`` or ``NAME+=``.  Decided once, at the
        first character that cannot continue a name, so a word of many pieces costs linear
        time."""
        if self._head is not None:
            return self._head
        chars = self.chars
        while self._scanned < len(chars):
            piece = chars[self._scanned]
            self._scanned += 1
            if _NAME_CHARS.match(piece).end() < len(piece):  # type: ignore[union-attr]
                head = "".join(chars[:self._scanned])
                self._head = bool(_ASSIGN.match(head) or _PLUS_ASSIGN.match(head))
                return self._head
        return False  # name characters only so far

    def mark(self, start: int) -> None:
        if self.begin < 0:
            self.begin = start

    @property
    def empty(self) -> bool:
        return self.begin < 0 and not self.fields

    def build(self, tail: int) -> Word:
        text = "".join(self.chars)
        if self._map is None:
            # one literal piece (or none): what MapBuilder.build gives for one verbatim run
            cmap = CharMap(self._one, len(text), tail=tail)
        else:
            cmap = self.map.build(tail)
        if not text:
            cmap = CharMap(self.begin, 0, tail=self.begin)
        return Word(text, cmap, self.quoted, tuple(self.unresolved))

    def take(self, tail: int) -> list[Word]:
        """The finished words: split fields, then the current word -- unless it is an unquoted
        expansion to nothing, which the shell removes (POSIX 2.6.9)."""
        out = self.fields
        if self.begin >= 0 and (self.chars or self.quoted):
            out = out + [self.build(tail)]
        return out


class _Expander:
    """How references expand while one command is lexed."""

    __slots__ = ("resolve", "arrays", "defined", "budget")

    def __init__(self, resolve: Resolver, arrays: ArrayResolver, defined: Definer,
                 budget: ReadBudget | None = None) -> None:
        self.resolve = resolve
        self.arrays = arrays
        self.defined = defined
        self.budget = budget  # the file's: its expanded_chars bound what references give

    def value_map(self, name: str, value: str) -> CharMap | None:
        w = self.defined(name)
        return w.cmap if w is not None and w.text == value and len(w.text) == len(value) \
            else None


def _expand(body_text: str, start: int, end: int, ex: _Expander, wb: _WordBuilder,
            quoted: bool = False, split: bool = True) -> None:
    """Expand ``$NAME`` / ``${NAME}`` / ``${NAME:-default}`` … into the word being built
    (POSIX 2.6.2).  Unquoted (``quoted`` False) and outside an assignment (``split``), a known
    value is split into fields; an unknown one is marked as possibly several or no words."""
    m = _PARAM_RE.fullmatch(body_text)
    name: str | None = None
    value: str | None = None
    literal_at: int | None = None  # where a literal alternative/default stands in the text
    may_vanish = False  # an unknown value that may also be nothing at all
    if m and m.group(1) is not None:
        body = m.group(1)
        arr = _ARRAY_BODY.match(body)
        b = _PARAM_BODY.match(body)
        if arr:
            elements = ex.arrays(arr.group(1))
            if elements is not None and (split or quoted):
                # "${a[@]}": one word per element, each with its own characters
                wb.cut(start)
                wb.fields.extend(elements)
                return
            name, may_vanish = arr.group(1), True
        elif b:
            name = b.group(1)
            value = ex.resolve(name)
            op, default = b.group(2), b.group(3) or ""
            default_at = start + 2 + len(name) + len(op or "")
            literal = _LITERAL_WORDS.match(default) is not None
            if op in (":-", "-", ":=", "="):
                use_default = value is None or (op in (":-", ":=") and value == "")
                if use_default:
                    # an unknown variable takes its default -- unless the default is empty:
                    # then the script expects its caller to provide the value (unknown)
                    if value is None and default and literal:
                        value, literal_at = default, default_at
                    elif value is not None and literal:
                        value, literal_at = default, default_at
                    else:
                        value, may_vanish = None, not default
            elif op in (":+", "+"):
                if value is None:
                    value, may_vanish = None, True
                elif value or op == "+":
                    if literal:
                        value, literal_at = default, default_at
                    else:
                        value, may_vanish = None, True
                else:
                    value = ""
            elif op in (":?", "?"):
                pass  # the value, or the shell stops with the message
    elif m:
        name = m.group(2) or m.group(3)
        value = ex.resolve(name) if m.group(2) else None
        if m.group(3) in ("@", "*"):
            may_vanish = True
        elif m.group(3) is not None and m.group(3) in "0123456789":
            may_vanish = not quoted
    if value is not None and literal_at is None:
        if len(value) > MAX_VALUE_CHARS:
            value = None  # too long for any argument (bounds.MAX_VALUE_CHARS): unknown
        elif ex.budget is not None:
            ex.budget.expanded_chars -= len(value)
            if ex.budget.expanded_chars < 0:
                value = None  # past what the file's references may expand to: unknown
    # a value of several words (split unquoted) keeps the places where its words are
    # written; a one-word value maps to the reference
    defined = (ex.value_map(name, value) if name and value and literal_at is None and split
               and not quoted and _IFS_CHAR.search(value.strip()) else None)
    if value is None:
        # the same reference written many times (`$HOME` 800,000 times in one word) keeps one
        # string for its text and name, not one each
        body_text = intern(body_text)
        wb.add(body_text, start)
        splits = may_vanish or (not quoted and split and name is not None
                                and not body_text.startswith("${#")
                                and (m is None or m.group(3) not in ("$", "#", "?", "!", "-")))
        wb.unresolved.append(VarRef(intern(name) if name else body_text, Span(start, end),
                                    split=splits))
    else:
        wb.add_value(value, start, end, literal_at, defined, split and not quoted)


def _double_quoted(raw: str, start: int, ex: _Expander, wb: _WordBuilder,
                   split: bool = True) -> None:
    wb.quoted = True
    wb.mark(start)
    inner = raw[1:-1] if len(raw) >= 2 and raw.endswith('"') else None
    if inner is not None:
        m = re.fullmatch(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[@\]\}|\$@", inner)
        if m and not wb.chars:
            # "${args[@]}" / "$@": each element is its own word
            elements = ex.arrays(m.group(1)) if m.group(1) else None
            if elements is not None:
                wb.quoted = False
                wb.begin = -1
                wb.fields.extend(elements)
                return
            wb.add(inner, start + 1)
            wb.unresolved.append(VarRef(m.group(1) or "@", Span(start + 1, start + len(raw) - 1),
                                        split=True))
            return
    i = 1
    n = len(raw) - 1  # without the closing quote
    # `${` after the last `}` expands nothing (_PARAM_RE's `\$\{([^}]*)\}` read to the end
    # from each one, quadratic)
    last_close = raw.rfind("}", 0, n)
    while i < n:
        ch = raw[i]
        if ch == "\\" and i + 1 < n + 1:
            nxt = raw[i + 1] if i + 1 < len(raw) else ""
            if nxt == "\n":
                i += 2
                continue
            if nxt == "\r" and raw[i + 2:i + 3] == "\n":
                i += 3
                continue
            if nxt and nxt in _DQ_ESCAPABLE and i + 1 < n:
                wb.add_char(nxt, start + i, start + i + 2)
                i += 2
                continue
            wb.add_char(ch, start + i, start + i + 1)
            i += 1
            continue
        if ch == "$":
            m = None if last_close < i + 2 and raw.startswith("${", i) else \
                _PARAM_RE.match(raw, i, n)
            if m:
                _expand(m.group(0), start + i, start + m.end(), ex, wb, quoted=True,
                        split=split)
                i = m.end()
                continue
            if raw.startswith("$(", i):
                depth, j = 0, i + 1
                while j < n:
                    if raw[j] == "(":
                        depth += 1
                    elif raw[j] == ")":
                        depth -= 1
                        if depth == 0:
                            break
                    j += 1
                j = min(j + 1, n)
                wb.add(raw[i:j], start + i)
                wb.unresolved.append(VarRef(raw[i:j], Span(start + i, start + j)))
                i = j
                continue
            if last_close < i + 2:
                # past the last `}`: this `$` and the text up to the next escape or expansion
                # as one piece (a `$` at a time, `"${${${…`: 4 MiB of them took 7 s)
                j = _DQ_TAIL.match(raw, i, n).end()  # type: ignore[union-attr]  # `$` starts one
                wb.add(raw[i:j], start + i)
                i = j
                continue
            wb.add_char(ch, start + i, start + i + 1)
            i += 1
            continue
        # a run of plain characters, copied as one piece
        j = _DQ_PLAIN.match(raw, i, n).end()  # type: ignore[union-attr]
        wb.add(raw[i:j], start + i)
        i = j


def _ansi_quoted(raw: str, start: int, wb: _WordBuilder) -> None:
    wb.quoted = True
    wb.mark(start)
    i, n = 2, len(raw) - 1
    while i < n:
        ch = raw[i]
        if ch == "\\" and i + 1 < n:
            nxt = raw[i + 1]
            if nxt in _ANSI_ESCAPES:
                wb.add_char(_ANSI_ESCAPES[nxt], start + i, start + i + 2)
                i += 2
                continue
            wb.add_char(ch, start + i, start + i + 1)
            i += 1
            continue
        j = _ANSI_PLAIN.match(raw, i, n).end()  # type: ignore[union-attr]
        wb.add(raw[i:j], start + i)
        i = j


# whole lines of blanks or a comment, each ended by a newline
_BLANK_LINES = re.compile(r"(?:[ \t\r]*+(?:#[^\n]*+)?+\n)++")
_BLANK_FIRST = frozenset(" \t\r#\n")  # what such a line can start with
# A line of words the lexer reads as PLAIN tokens between blanks (WS) and a NEWLINE: each word
# is PLAIN's characters (no digit-led word is followed by `<`/`>`, so none is an OP), none starts
# with `#` (a COMMENT after a blank), nothing but spaces and tabs between them
_PLAIN_LINE = re.compile(
    r"[ \t]*+[^\s'\"\\$`;&|()<>#][^\s'\"\\$`;&|()<>]*+"
    r"(?:[ \t]++[^\s'\"\\$`;&|()<>#][^\s'\"\\$`;&|()<>]*+)*+\n")
_LINE_WORD = re.compile(r"[^ \t]+")  # the words of such a line (its newline excluded)
# a parameter that is only a name, braced (`${NAME}`; `$NAME` is a PARAM token starting with a
# name character)
_BRACED_NAME = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _holds(cmd: Command) -> bool:
    """Whether a command that ends is yielded: it holds words, assignments, problems or an
    array (an empty line or a lone `;` ends nothing)."""
    return bool(cmd.words or cmd.assignments or cmd.problems or cmd.arrays)


class _Exhausted(Exception):
    """The file's budget of shell words ran out (ReadBudget)."""


def split_commands(text: str, resolve: Resolver | None = None,
                   arrays: ArrayResolver | None = None,
                   defined: Definer | None = None, budget: ReadBudget | None = None,
                   cmap: CharMap | None = None) -> Iterator[Command]:
    """Yield the simple commands of ``text`` in order (see module docstring).  ``arrays``
    gives the elements of a bash array assigned earlier (``"${args[@]}"``), ``defined`` the
    value word of an assignment earlier in ``text`` (so expanded characters keep the place
    where they are written).

    Each word lexed counts against ``budget`` (the file's, linter/bounds.py): when it runs
    out, lexing stops before the command it is in, whose place in the file (through ``cmap``,
    the map of ``text`` to it, when given) becomes ``budget.cut``; a text lexed after that
    yields nothing."""
    if budget is not None and budget.words < 0:
        return  # ran out in an earlier text, which says where (with none left, this text's
        # first word runs it out here)
    try:
        yield from _commands(text, resolve, arrays, defined, budget)
    except _Exhausted as stop:
        # the command being lexed is not yielded: its words are not all known
        if budget is not None and budget.cut is None:
            at = stop.args[0]
            budget.cut = cmap.span(at, at).start if cmap is not None else at


def _commands(text: str, resolve: Resolver | None, arrays: ArrayResolver | None,
              defined: Definer | None, budget: ReadBudget | None) -> Iterator[Command]:
    """split_commands' lexer; _Exhausted (where the command it stops in begins) when
    ``budget`` runs out."""
    ex = _Expander(resolve or (lambda _name: None), arrays or (lambda _name: None),
                   defined or (lambda _name: None), budget)
    cmd = Command()
    wb = _WordBuilder()
    array: tuple[str, bool] | None = None  # inside `NAME=( … )`
    array_words: list[Word] = []
    last_cont: int | None = None  # offset of the last continuation on this logical line
    pending_redirect = False
    pending_heredoc: list[tuple[str, bool]] = []  # (delimiter, strip tabs) awaiting their body
    heredoc_next = False  # the next word is a here-document delimiter
    jump = [-1]  # where lexing resumes: after here-document bodies, which are not commands

    def splits() -> bool:
        """Whether an unquoted expansion here is field-split: not in an assignment's value
        (`X=$Y`, `export X=$Y`), where POSIX does no splitting."""
        if not wb.chars or wb.fields:
            return True
        if not wb.head_is_assignment():
            return True
        return bool(cmd.words) and cmd.words[0].text not in _DECLARATIONS

    def spend(n: int, at: "int | Word") -> None:
        """Count ``n`` words lexed at ``at`` (an offset, or the word whose start it is: a
        word's span is worked out only when the budget runs out, not for every word)
        against the budget (and as steps of reading, linter/cancel.py)."""
        cancel_step(n)
        if budget is not None:
            budget.words -= n
            if budget.words < 0:
                if cmd.words:
                    at = cmd.words[0]
                raise _Exhausted(at if isinstance(at, int) else at.span.start)

    def end_word(tail: int) -> None:
        nonlocal wb
        chars = wb.chars
        if wb._map is None and len(chars) == 1 and chars[0] and not wb.fields \
                and array is None:
            # one piece of literal text (most words): the Word take() would give, directly
            word = Word(chars[0], CharMap(wb._one, len(chars[0]), tail=tail), wb.quoted,
                        tuple(wb.unresolved))
            wb = _WordBuilder()
            one_word(word, tail)
            return
        if wb.begin < 0 and not wb.fields:  # empty
            return
        words = wb.take(tail)
        wb = _WordBuilder()
        if array is not None:
            spend(len(words), words[0] if words else tail)
            array_words.extend(words)
            return
        for word in words:
            one_word(word, tail)

    def one_word(word: Word, tail: int) -> None:
        nonlocal pending_redirect, heredoc_next
        cancel_step(1)  # spend(1, word), inline: one call per word
        if budget is not None:
            budget.words -= 1
            if budget.words < 0:
                raise _Exhausted((cmd.words[0] if cmd.words else word).span.start)
        if heredoc_next:
            pending_heredoc.append((word.text, heredoc_strip))
            pending_redirect = heredoc_next = False
            return
        if pending_redirect:
            pending_redirect = False
            return
        if not cmd.words and "=" in word.text and _ASSIGN.match(word.text) \
                and not word.text.startswith("="):
            eq = word.text.index("=")
            value = Word(
                word.text[eq + 1:],
                word.cmap.slice(eq + 1, len(word.text),
                                tail=None if word.cmap.is_linear else tail),
                word.quoted,
                word.unresolved,
            )
            cmd.assignments.append((word.text[:eq], value))
        else:
            cmd.words.append(word)

    heredoc_strip = False
    length = len(text)
    # Token types by frequency (PLAIN, WS, NEWLINE first); the checks that only concern one type
    # (an array's `)`, a bash array's `(`, a `<placeholder>`) are made in its branch.
    for ttype, value, start in _tokens(text, jump):
        end = start + len(value)
        if ttype == "PLAIN":
            if (end == length or text[end] in " \t\n") and wb.begin < 0 and not wb.chars \
                    and not wb.fields and array is None:
                # a whole word of literal text (most words: `vllm`, `--port`, `8000`): the
                # blank or newline after it ends it (end_word(end) next), so it is that Word,
                # without a builder
                one_word(Word(value, CharMap(start, len(value), tail=end)), end)
            else:
                wb.add(value, start)
        elif ttype == "WS":
            end_word(start)
        elif ttype == "NEWLINE":
            if wb.begin >= 0 or wb.chars or wb.fields:  # else end_word has nothing to end
                end_word(start)
            if array is not None:
                continue
            heredoc_next = False
            if pending_heredoc:
                # the bodies follow this line, each up to its delimiter line
                pos = end
                for delimiter, strip in pending_heredoc:
                    body_start = pos
                    while pos < len(text):
                        nl = text.find("\n", pos)
                        line_end = len(text) if nl == -1 else nl
                        line = text[pos:line_end].rstrip("\r")
                        if (line.lstrip("\t") if strip else line) == delimiter:
                            cmd.heredocs.append(Span(body_start, pos))
                            pos = line_end + 1
                            break
                        pos = line_end + 1
                    else:
                        cmd.heredocs.append(Span(body_start, len(text)))
                jump[0] = pos
                pending_heredoc = []
            # both problems below need a blank before the newline or a continuation on the line
            if last_cont is not None or (start and text[start - 1] in " \t\r"):
                # `\ ` + trailing spaces + newline: the backslash escaped a space, not the newline
                line_begin = text.rfind("\n", 0, start) + 1
                line = text[line_begin:start].rstrip("\r")
                stripped = line.rstrip(" \t")
                if stripped.endswith("\\") and stripped != line and (cmd.words or cmd.assignments):
                    bs = line_begin + len(stripped) - 1
                    cmd.problems.append(ShellProblem(
                        "backslash followed by whitespace is not a line continuation: the command "
                        "ends on this line and the next line runs as a separate command",
                        Span(bs, line_begin + len(line)),
                        "delete the whitespace after the backslash",
                    ))
                if last_cont is not None and not line.strip() and (cmd.words or cmd.assignments):
                    cmd.problems.append(ShellProblem(
                        "line continuation followed by an empty line: the command ends here and "
                        "the lines after it run as a separate command",
                        Span(last_cont, last_cont + 1),
                        "remove the empty line or the trailing backslash",
                    ))
            # the command ends
            if _holds(cmd):
                yield cmd
            cmd = Command(line_start=end)
            last_cont = None
            if jump[0] > end:
                continue  # after here-document bodies
            at = end
            while True:
                if at < length and text[at] in _BLANK_FIRST:
                    blank = _BLANK_LINES.match(text, at)
                    if blank is not None:
                        # lines after a command's end that hold nothing or a comment: each
                        # would only end an empty command again (10 million newlines took 22 s)
                        cmd.line_start = jump[0] = at = blank.end()
                line = _PLAIN_LINE.match(text, at)
                if line is None:
                    break
                # a line of literal words (`a`, `vllm serve m --port 8000`): its tokens are PLAIN
                # and blanks, then the newline; each word as the PLAIN branch takes it, then the
                # command ends as at a NEWLINE with no continuation or blank before it (100,000
                # one-word lines took 0.4 s a token at a time)
                nl = line.end() - 1
                for w in _LINE_WORD.finditer(text, at, nl):
                    ws, we = w.span()
                    one_word(Word(w.group(), CharMap(ws, we - ws, tail=we)), we)
                if _holds(cmd):
                    yield cmd
                cmd = Command(line_start=nl + 1)
                jump[0] = at = nl + 1
        elif ttype == "PARAM":
            simple = value[1:] if value[1] in _NAME_START else None
            if simple is None and value[1] == "{":
                m = _BRACED_NAME.fullmatch(value)
                if m is not None:
                    simple = m.group(1)
            if simple is None:
                _expand(value, start, end, ex, wb, split=splits())
                continue
            # `$NAME` / `${NAME}`: what _expand does for it, without parsing the reference
            # again (a 4 MiB word of 2 million `$x` took 10 s; 66,000 words `$x` past the
            # file's expanded characters, 0.4 s); tests/shell_reference.py holds the general path
            known = ex.resolve(simple)
            size = -1 if known is None else len(known)
            if size > MAX_VALUE_CHARS:
                size = -1  # too long for any argument (bounds.MAX_VALUE_CHARS): unknown
            elif size >= 0 and budget is not None and budget.expanded_chars < size:
                budget.expanded_chars -= size  # spent, as _expand does: past the bound, unknown
                size = -1
            if size < 0:
                ref = VarRef(intern(simple), Span(start, end), split=splits())
                body = intern(value)
                if (end == length or text[end] in " \t\n") and wb.begin < 0 and not wb.chars \
                        and not wb.fields and array is None:
                    # the whole word (as a PLAIN one above)
                    one_word(Word(body, CharMap(start, len(body), tail=end), False, (ref,)), end)
                else:
                    wb.add(body, start)
                    wb.unresolved.append(ref)
                continue
            if size and " " not in known and "\t" not in known and "\n" not in known:
                # a known value that splits into no fields: every character maps to the reference
                if budget is not None:
                    budget.expanded_chars -= size
                if wb.begin < 0:
                    wb.begin = start
                wb.chars.append(known)  # type: ignore[arg-type]  # size > 0: a string
                wb.map.const(start, end, size)
                continue
            _expand(value, start, end, ex, wb, split=splits())  # empty, or split into fields
        elif ttype == "OP":
            if array is not None and value == ")":
                end_word(start)
                cmd.arrays.append((array[0], array_words, array[1]))
                array, array_words = None, []
                continue
            if value == "(" and not cmd.words and not wb.fields and wb.chars:
                m = _ARRAY_ASSIGN.match("".join(wb.chars))
                if m:
                    # bash array assignment: the words up to `)` are its elements
                    wb = _WordBuilder()
                    array, array_words = (m.group(1), bool(m.group(2))), []
                    continue
            if value == "<" and not pending_redirect and not heredoc_next:
                m = _PLACEHOLDER.match(text, start)
                if m is not None and (start == 0 or text[start - 1] in _BEFORE_PLACEHOLDER) and \
                        (m.end() == len(text) or text[m.end()] in _AFTER_PLACEHOLDER):
                    # `<MASTER_NODE_IP>`, `http://<HOST>:8000`: a documentation placeholder, not
                    # an input and an output redirection; read as a value nobody set, like $VAR
                    wb.add(m.group(0), start)
                    wb.unresolved.append(VarRef(m.group(1), Span(start, m.end())))
                    jump[0] = m.end()
                    continue
            end_word(start)
            if value[-1] in "<>-":
                pending_redirect = True
                if value.endswith(("<<", "<<-")) and not value.endswith("<<<"):
                    heredoc_next = True
                    heredoc_strip = value.endswith("-")
                continue
            cmd.background = value == "&"
            # the command ends
            if _holds(cmd):
                yield cmd
            cmd = Command(line_start=end)
            last_cont = None
        elif ttype == "DOLLAR" or ttype == "HASH":
            wb.add(value, start)
        elif ttype == "SQ":
            wb.quoted = True
            wb.mark(start)
            if len(value) > 2:
                wb.add(value[1:-1], start + 1)
        elif ttype == "DQ":
            _double_quoted(value, start, ex, wb, split=splits())
        elif ttype == "ANSI":
            _ansi_quoted(value, start, wb)
        elif ttype in ("CMDSUB", "BACKTICK"):
            split = splits()
            wb.add(value, start)
            # unquoted, its output is split into fields like an unknown variable's value
            wb.unresolved.append(VarRef(value, Span(start, end), split=split))
        elif ttype == "ESC":
            wb.add_char(value[1], start, end)
        elif ttype == "CONT":
            last_cont = start
        elif ttype == "COMMENT":
            end_word(start)
        elif ttype == "BAD_QUOTE":
            end_word(start)
            quote = {"'": "single", '"': "double", "`": "back"}[value]
            cmd.problems.append(ShellProblem(
                f"unbalanced {quote} quote: no closing {value} before the end of the text",
                Span(start, end),
                f"close the quote or escape it as \\{value}",
                swallows=True,
            ))
            wb.add(value, start)
        elif ttype == "BAD_ESC":
            end_word(start)
            if cmd.words or cmd.assignments:
                cmd.problems.append(ShellProblem(
                    "dangling line continuation: a backslash ends the text, so the command "
                    "continues into nothing",
                    Span(start, end),
                    "remove the trailing backslash",
                ))
    end_word(len(text))
    if last_cont is not None and text[last_cont:].strip() in ("\\", "") and cmd.words:
        cmd.problems.append(ShellProblem(
            "dangling line continuation: the last line ends with a backslash",
            Span(last_cont, last_cont + 1),
            "remove the trailing backslash",
        ))
    if _holds(cmd):
        yield cmd
