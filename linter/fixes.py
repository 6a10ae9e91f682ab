"""Fixes: text edits on exact file spans, attached to findings, applied bottom-up.

A ``Fix`` is one or more ``Edit`` (a span of the file text and its replacement), a title and a
safety mark, as ruff has them: a *safe* fix keeps the launch's meaning and only spells it the way
the engine intends (a glued argument split in two, an abbreviation written out); an *unsafe* fix
changes what runs (a did-you-mean flag, a GPU count) and is applied only on request.

Edits are built from the per-character maps (``CharMap``): a word's span in the file is exact even
inside a double-quoted YAML string or a block scalar.  A builder only edits text that stands in
the file verbatim (no escapes inside the replaced range) and only writes characters that need no
quoting in any of the file's styles, so a fix never has to re-escape a value; anything else gets
no fix (never a guessed edit).  The command line re-lints the fixed text and drops a fix that
would make the file unparsable.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from .source import SourceFile, Span, Word
from .records import dataclass

if TYPE_CHECKING:
    from .findings import Finding

# characters a replacement may hold: valid unquoted and inside any quotes (shell, YAML, JSON)
_SAFE_TEXT = re.compile(r"[A-Za-z0-9_./:,+=@%-]*\Z")
# plain YAML scalars that would not load as a string (YAML 1.1 and 1.2 core schema)
_NOT_A_STRING = re.compile(
    r"(?:[-+]?(?:\d[\d_]*)?(?:\.\d*)?(?:[eE][-+]?\d+)?|0x[0-9a-fA-F]+|0o[0-7]+|"
    r"true|false|True|False|TRUE|FALSE|yes|no|Yes|No|YES|NO|on|off|On|Off|ON|OFF|y|n|Y|N|"
    r"null|Null|NULL|~|\.inf|\.nan|[-+]?\.Inf|\.NaN)\Z")


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the file text of ``span`` with ``text`` (an empty span inserts)."""

    span: Span
    text: str


@dataclass(frozen=True, slots=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    safe: bool = True

    @property
    def span(self) -> Span:
        return Span(min(e.span.start for e in self.edits), max(e.span.end for e in self.edits))


def apply(text: str, fixes: list[Fix]) -> tuple[str, list[Fix]]:
    """``text`` with every fix applied that overlaps no earlier one (in file order); the fixes
    applied.  Edits are applied from the end of the file backwards, so no offset moves."""
    if any(len(f.edits) > 1 and _self_overlapping(f) for f in fixes):
        return _apply_pairwise(text, fixes)
    chosen: list[Fix] = []
    seen: set[Fix] = set()
    # the spans taken so far, by start: a fix is checked against its neighbours only (each fix
    # against every earlier one, and a copy of the text per edit, took 8.5 s for 3,000 fixes)
    starts: list[int] = []
    taken: list[Span] = []
    for fix in sorted(fixes, key=lambda f: (f.span.start, f.span.end, f.title)):
        if any(_overlaps(e.span, t) for e in fix.edits for t in _near(e.span, starts, taken)):
            continue
        if fix in seen:
            continue
        chosen.append(fix)
        seen.add(fix)
        for e in fix.edits:
            k = bisect.bisect_right(starts, e.span.start)
            starts.insert(k, e.span.start)
            taken.insert(k, e.span)
    edits = sorted((e for f in chosen for e in f.edits), key=lambda e: (e.span.start, e.span.end))
    pieces: list[str] = []
    at = 0
    for e in edits:
        pieces += (text[at:e.span.start], e.text)
        at = e.span.end
    pieces.append(text[at:])
    return "".join(pieces), chosen


def _self_overlapping(fix: Fix) -> bool:
    spans = sorted((e.span for e in fix.edits), key=lambda s: (s.start, s.end))
    return any(_overlaps(a, b) for a, b in zip(spans, spans[1:]))


def _apply_pairwise(text: str, fixes: list[Fix]) -> tuple[str, list[Fix]]:
    """``apply`` for fixes one of which has edits that overlap one another (none that the rules
    make): every pair checked, edits applied from the end backwards."""
    chosen: list[Fix] = []
    taken: list[Span] = []
    for fix in sorted(fixes, key=lambda f: (f.span.start, f.span.end, f.title)):
        if any(_overlaps(e.span, t) for e in fix.edits for t in taken) or fix in chosen:
            continue
        chosen.append(fix)
        taken.extend(e.span for e in fix.edits)
    out = text
    for e in reversed(sorted((e for f in chosen for e in f.edits),
                             key=lambda e: (e.span.start, e.span.end))):
        out = out[:e.span.start] + e.text + out[e.span.end:]
    return out, chosen


def _near(span: Span, starts: list[int], taken: list[Span]) -> list[Span]:
    """The taken spans that may overlap ``span``: those starting up to its end, walking back
    from its start while they reach into it (taken spans do not overlap one another)."""
    hi = bisect.bisect_right(starts, span.end)
    lo = bisect.bisect_left(starts, span.start)
    while lo > 0 and (taken[lo - 1].end > span.start or taken[lo - 1].start == span.start):
        lo -= 1
    return taken[lo:hi]


def _overlaps(a: Span, b: Span) -> bool:
    if a.start == a.end or b.start == b.end:  # insertions conflict only strictly inside
        return a.start < b.end and b.start < a.end or a.start == b.start
    return a.start < b.end and b.start < a.end


# --------------------------------------------------------------------------- edit builders

def verbatim(source: SourceFile, word: Word, i: int, j: int) -> Span | None:
    """The file span of ``word.text[i:j]`` when the file holds exactly those characters there."""
    if not 0 <= i < j <= len(word.text):
        return None
    span = word.sub(i, j)
    if source.text[span.start:span.end] != word.text[i:j]:
        return None
    return span


def replace_part(source: SourceFile, word: Word, i: int, j: int, new: str, title: str,
                 safe: bool) -> Fix | None:
    """Replace characters [i, j) of ``word`` with ``new`` (plain characters only)."""
    span = verbatim(source, word, i, j)
    if span is None or not _SAFE_TEXT.match(new):
        return None
    return Fix(title, (Edit(span, new),), safe)


def replace_span(source: SourceFile, span: Span, old: str, new: str | None, title: str,
                 safe: bool) -> Fix | None:
    """Replace ``old``, which the file holds verbatim at ``span``, with ``new`` (plain
    characters only, so no quoting changes)."""
    if not new or source.text[span.start:span.end] != old or not _SAFE_TEXT.match(new):
        return None
    return Fix(title, (Edit(span, new),), safe)


def _quote_before(text: str, start: int) -> tuple[str, int]:
    """The quote that opens the scalar or shell word whose text begins at ``start``: its
    characters as the file writes them (``"``, ``'``, ``\\"`` inside an outer double-quoted
    string) and where it begins; ("", start) when unquoted."""
    if start > 0 and text[start - 1] in "\"'":
        if text[start - 1] == '"' and start > 1 and text[start - 2] == "\\":
            return '\\"', start - 2
        return text[start - 1], start - 1
    return "", start


def _separator(source: SourceFile, word: Word, list_form: bool, rest: str) -> tuple[str, str] | None:
    """Text that, written inside ``word``'s file text, ends the argument and starts a new one in
    the same style, and the text to append at the word's end (a closing quote for a new plain
    YAML item that must stay a string); None when the word's shape is not one rewritten here.

    List form (a YAML/JSON sequence item, a Dockerfile exec form): the end of one item and the
    start of the next (``"--tp", "4"`` in a flow sequence, a new ``- "4"`` line at the same
    indentation in a block sequence).  Shell form: the quoted word is closed and reopened around
    a space (``"--tp" "4"``), which the shell reads as two words.
    """
    text = source.text
    value = word.text
    if not value:
        return None
    first = word.sub(0, 1)
    last = word.sub(len(value) - 1, len(value))
    quote, qstart = _quote_before(text, first.start)
    if quote and text[last.end:last.end + len(quote)] != quote:
        return None
    if quote == "" and word.quoted:
        return None  # quoted in part only (`--tp" 4"`): not a shape rewritten here
    if not list_form:
        return (quote + " " + quote, "")
    if "\n" in text[first.start:last.end]:
        return None
    p = qstart - 1
    while p >= 0 and text[p] in " \t":
        p -= 1
    if p < 0:
        return None
    line_start = text.rfind("\n", 0, p + 1) + 1
    if text[p] == "-" and not text[line_start:p].strip():
        sep = "\n" + text[line_start:p] + "- "
    elif text[p] in "[,":
        sep = ", "
    elif text[p] == "\n":
        # a multi-line flow sequence: the item begins a line
        q = p
        while q >= 0 and text[q] in " \t\r\n":
            q -= 1
        if q < 0 or text[q] not in "[,":
            return None
        sep = ", "
    else:
        return None
    if quote:
        return (quote + sep + quote, "")
    if _NOT_A_STRING.match(rest) or rest[:1] in "\"'&*!|>%@`{[#" or ": " in rest or " #" in rest:
        if '"' in rest or "\\" in rest:
            return None
        # a plain `4` would load as a number, which a list of strings rejects
        return (sep + '"', '"')
    return (sep, "")


def split_glued(source: SourceFile, word: Word, head: str, list_form: bool,
                spelled: str | None = None) -> Fix | None:
    """MG014: ``--flag value`` in one argument becomes two arguments, in the file's style;
    ``spelled`` (the full name an abbreviated ``head`` resolves to) replaces ``head``."""
    value = word.text
    m = re.compile(r"[ \t]+").match(value, len(head))
    if m is None or m.end() >= len(value):
        return None
    rest = value[m.end():]
    gap = verbatim(source, word, len(head), m.end())
    if gap is None or (not list_form and not word.quoted):
        return None
    sep = _separator(source, word, list_form, rest)
    if sep is None:
        return None
    edits = [Edit(gap, sep[0])]
    if spelled is not None and spelled != head:
        flag = verbatim(source, word, 0, len(head))
        if flag is None or not _SAFE_TEXT.match(spelled):
            return None
        edits.insert(0, Edit(flag, spelled))
    if sep[1]:
        end = word.sub(len(value) - 1, len(value)).end
        edits.append(Edit(Span(end, end), sep[1]))
    return Fix(f"Split into two arguments: {spelled or head} {rest}", tuple(edits))


def replace_word(source: SourceFile, word: Word, new: list[str], list_form: bool, title: str,
                 safe: bool) -> Fix | None:
    """The whole argument ``word`` becomes the arguments ``new`` (plain characters only)."""
    span = verbatim(source, word, 0, len(word.text))
    if span is None or not new or not all(_SAFE_TEXT.match(w) and w for w in new):
        return None
    if len(new) == 1:
        return Fix(title, (Edit(span, new[0]),), safe)
    sep = _separator(source, word, list_form, new[-1])
    if sep is None or sep[1]:
        return None
    return Fix(title, (Edit(span, sep[0].join(new)),), safe)


def join_words(source: SourceFile, a: Word, b: Word, joiner: str, title: str) -> Fix | None:
    """Two consecutive arguments become one, ``a`` + joiner + ``b``: the text between them in
    the file (whitespace, or the end of one list item and the start of the next) becomes
    ``joiner``.  Only when both are written the same way (both plain, or both in the same
    quotes), so the joined word keeps one quoting."""
    text = source.text
    if not a.text or not b.text or not _SAFE_TEXT.match(joiner):
        return None
    a_end = a.sub(len(a.text) - 1, len(a.text)).end
    b_start = b.sub(0, 1).start
    between = text[a_end:b_start]
    if a_end >= b_start or any(ch.isalnum() for ch in between.replace("- ", "")):
        return None
    qa, _ = _quote_before(text, a.sub(0, 1).start)
    qb, _ = _quote_before(text, b_start)
    inner = between
    if qa:
        if not inner.startswith(qa):
            return None
        inner = inner[len(qa):]
    if qb:
        if not inner.endswith(qb):
            return None
        inner = inner[:len(inner) - len(qb)]
    if qa != qb or inner.strip(" \t\r\n,-\\") != "":
        return None
    return Fix(title, (Edit(Span(a_end, b_start), joiner),))


# a value that stays the same word in every style once it stands alone: no shell tilde or
# glob, no YAML indicator, not a YAML number or boolean
_PLAIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./:@+-]*\Z")


def drop_flag(source: SourceFile, flag: Word, value: Word, title: str) -> Fix | None:
    """``flag value`` (two consecutive arguments) becomes ``value``: the flag and the text
    between the two (whitespace, a continuation, the end of one list item and the start of the
    next) are deleted, the value stays as written.  Only when both are written the same way and
    nothing but separators lies between them."""
    text = source.text
    if not flag.text or not value.text:
        return None
    span = verbatim(source, flag, 0, len(flag.text))
    if span is None:
        return None
    b_start = value.sub(0, 1).start
    qa, a_start = _quote_before(text, span.start)
    qb, b_outer = _quote_before(text, b_start)
    between = text[span.end:b_outer]
    if qa:
        if not between.startswith(qa):
            return None
        between = between[len(qa):]
    if qa != qb or span.end >= b_start or between.replace("\\\n", " ").strip(" \t\r\n,-") or \
            ("-" in between and not re.fullmatch(r"\s*\n[ \t]*- ", between)):
        return None
    return Fix(title, (Edit(Span(a_start, b_outer), ""),))


def drop_flag_prefix(source: SourceFile, word: Word, prefix: str, list_form: bool,
                     title: str) -> Fix | None:
    """``--flag=value`` becomes ``value``, for a value that reads the same alone in any style
    (``_PLAIN_WORD``; in a YAML list, not a number or boolean)."""
    rest = word.text[len(prefix):]
    if not word.text.startswith(prefix) or not _PLAIN_WORD.match(rest) or \
            (list_form and _NOT_A_STRING.match(rest)):
        return None
    return replace_part(source, word, 0, len(prefix), "", title, True) if \
        verbatim(source, word, 0, len(prefix)) is not None else None


class _Lines:
    """``source.text.split("\n")`` read one line at a time from the source's line starts: a
    fix is made once per finding, and splitting the whole text for each was quadratic (a
    1 MiB script of 1,700 MG101 findings spent 1.3 s splitting it)."""

    __slots__ = ("_text", "_starts")

    def __init__(self, source: SourceFile) -> None:
        self._text = source.text
        self._starts = source.line_starts()

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, i: int) -> str:
        starts = self._starts
        n = len(starts)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self._text[starts[i]:starts[i + 1] - 1 if i + 1 < n else len(self._text)]


_GPU_KEY_LINE = re.compile(r"^(?P<indent>[ \t]*)(?P<key>(?:nvidia|amd)\.com/gpu)[ \t]*:")
_BLOCK_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][\w.-]*)[ \t]*:[ \t]*(?:#.*)?$")


def mirror_gpu_request(source: SourceFile, value_span: Span) -> Fix | None:
    """MG109: the GPU line under ``resources.requests`` copied under ``resources.limits``.

    Block style only: the key line is copied verbatim (same spelling, value, quoting) into an
    existing ``limits:`` block of the same ``resources``, or a new ``limits:`` block is written
    after ``requests``'s block at its indentation.
    """
    text = source.text
    lines = _Lines(source)
    line_no, _ = source.line_col(value_span.start)
    idx = line_no - 1
    key_line = lines[idx].rstrip("\r")
    m = _GPU_KEY_LINE.match(key_line)
    if m is None or text.rfind("\n", 0, value_span.end) + 1 != source.line_starts()[idx]:
        return None
    key_indent = len(m.group("indent"))

    def indent_of(line: str) -> int:
        return len(line) - len(line.lstrip(" "))

    def is_blank(line: str) -> bool:
        return not line.strip() or line.lstrip().startswith("#")

    # the parent mapping key (`requests:`) and ITS parent (`resources:`)
    r = idx - 1
    while r >= 0 and (is_blank(lines[r]) or indent_of(lines[r]) >= key_indent):
        r -= 1
    if r < 0:
        return None
    parent = _BLOCK_KEY.match(lines[r].rstrip("\r"))
    if parent is None or parent.group("key") != "requests":
        return None
    req_indent = len(parent.group("indent"))
    # the end of the requests block
    end = idx + 1
    while end < len(lines) and (is_blank(lines[end]) or indent_of(lines[end]) > req_indent):
        if is_blank(lines[end]) and not lines[end].strip():
            break
        end += 1
    # a sibling `limits:` block in the same resources mapping
    first = r
    while first > 0 and (is_blank(lines[first - 1]) or indent_of(lines[first - 1]) >= req_indent):
        first -= 1
    last = end
    while last < len(lines) and (is_blank(lines[last]) or indent_of(lines[last]) >= req_indent):
        if not lines[last].strip():
            break
        last += 1
    nl = "\r\n" if lines[idx].endswith("\r") else "\n"
    starts = source.line_starts()
    for k in range(first, last):
        sib = _BLOCK_KEY.match(lines[k].rstrip("\r"))
        if sib is not None and len(sib.group("indent")) == req_indent and \
                sib.group("key") == "limits":
            # insert the key line as the first entry of limits, at limits' entry indentation
            j = k + 1
            while j < len(lines) and is_blank(lines[j]) and lines[j].strip():
                j += 1
            if j >= len(lines) or indent_of(lines[j]) <= req_indent:
                return None  # `limits:` with no block entries (null or flow on the next line)
            entry = " " * indent_of(lines[j]) + key_line.lstrip(" ")
            at = starts[j] if j < len(starts) else len(text)
            return Fix("Add the GPU count to resources.limits", (Edit(Span(at, at),
                                                                      entry + nl),))
        if sib is None and len(lines[k]) - len(lines[k].lstrip(" ")) == req_indent and \
                lines[k].lstrip().startswith("limits"):
            return None  # `limits: {...}` in flow style: not rewritten
    block = " " * req_indent + "limits:" + nl + key_line + nl
    if end < len(starts):
        at = starts[end]
        return Fix("Add the GPU count to resources.limits", (Edit(Span(at, at), block),))
    # the requests block ends the file
    at = len(text)
    prefix = "" if text.endswith("\n") else nl
    return Fix("Add the GPU count to resources.limits", (Edit(Span(at, at), prefix + block),))


def set_gpu_count(source: SourceFile, span: Span, old: int, new: int) -> Fix | None:
    """MG101: the GPU count written at ``span`` (digits, perhaps quoted) becomes ``new``; a
    Kubernetes limit's matching ``requests`` line in the same ``resources`` is changed with it
    (a GPU request must equal its limit)."""
    text = source.text
    written = text[span.start:span.end]
    inner = written.strip("\"'")
    if inner != str(old):
        return None
    lead = written.index(inner)
    edits = [Edit(Span(span.start + lead, span.start + lead + len(inner)), str(new))]
    lines = _Lines(source)
    idx = source.line_col(span.start)[0] - 1
    m = _GPU_KEY_LINE.match(lines[idx])
    if m is not None:
        key_indent = len(m.group("indent"))
        r = idx - 1
        while r >= 0 and (not lines[r].strip() or
                          len(lines[r]) - len(lines[r].lstrip(" ")) >= key_indent):
            r -= 1
        parent = _BLOCK_KEY.match(lines[r].rstrip("\r")) if r >= 0 else None
        if parent is not None and parent.group("key") == "limits":
            ind = len(parent.group("indent"))
            lo = r
            while lo > 0 and lines[lo - 1].strip() and \
                    len(lines[lo - 1]) - len(lines[lo - 1].lstrip(" ")) >= ind:
                lo -= 1
            hi = r + 1
            while hi < len(lines) and lines[hi].strip() and \
                    len(lines[hi]) - len(lines[hi].lstrip(" ")) >= ind:
                hi += 1
            starts = source.line_starts()
            in_requests = False
            for k in range(lo, hi):
                line = lines[k].rstrip("\r")
                k_ind = len(line) - len(line.lstrip(" "))
                key = _BLOCK_KEY.match(line)
                if k_ind == ind:
                    in_requests = key is not None and key.group("key") == "requests"
                    continue
                g = _GPU_KEY_LINE.match(line)
                if in_requests and g is not None and g.group("key") == m.group("key"):
                    v = re.match(r"[ \t]*:[ \t]*([\"']?)(\d+)\1[ \t]*(?:#.*)?$", line[g.end() - 1:])
                    if v is None or v.group(2) != str(old):
                        return None  # a request that differs already: not guessed at
                    at = starts[k] + g.end() - 1 + v.start(2)
                    edits.append(Edit(Span(at, at + len(v.group(2))), str(new)))
    return Fix(f"Set the GPU count to {new}", tuple(edits), safe=False)


# --------------------------------------------------------------------------- fixing files

# findings that mean the text no longer parses as its kind: a fix that causes one is dropped
PARSE_ERRORS = frozenset({"MG000", "MG001", "MG002", "MG003"})
MAX_PASSES = 10  # ruff's limit too: a fix that keeps producing fixes stops here


@dataclass(slots=True)
class FileFix:
    """One file's text before and after fixing, and the fixes applied."""

    path: str
    before: str
    after: str
    applied: list[Fix]
    # each pass: the text it started from and the fixes applied to that text
    passes: list[tuple[str, list[Fix]]]


def fixable(f: Finding, unsafe: bool) -> bool:
    return f.fix is not None and (f.fix.safe or unsafe)


def fix_text(path: str, text: str, findings: list[Finding], relint: Callable[[str], list[Finding]],
             unsafe: bool) -> FileFix:
    """Apply the fixes of ``findings`` to ``text``, re-lint, repeat until nothing is fixable.

    ``relint(text)`` lints the text as the file ``path``; ``findings`` are all of the file's
    (the parse errors it already has are the baseline).  A pass whose result has a parse error
    the text did not have is undone and its fixes are tried in halves (``_parsable``), keeping
    each group that leaves the file parsable."""
    applied: list[Fix] = []
    passes: list[tuple[str, list[Fix]]] = []
    current = text
    parse_before = _parse_errors(findings)
    seen: set[str] = {text}
    for _ in range(MAX_PASSES):
        fixes = [f.fix for f in findings if fixable(f, unsafe) and f.source.path == path]
        if not fixes:
            break
        candidate, chosen = apply(current, fixes)  # type: ignore[arg-type]
        if candidate in seen:
            break
        new_findings = relint(candidate)
        if _parse_errors(new_findings) > parse_before:
            kept, last = _parsable(current, chosen, relint, parse_before)
            if last is None:
                break
            chosen = kept
            candidate, new_findings = last
        passes.append((current, chosen))
        current, findings = candidate, new_findings
        seen.add(current)
        applied.extend(chosen)
    return FileFix(path, text, current, applied, passes)


# Re-lints one pass may spend finding which of its fixes break parsing.  Fixes were tried one at a
# time, a re-lint each: 957 fixes of a 3 MiB file, 40 minutes.  In halves, b fixes that break
# it among n cost about 2·b·log2(n) re-lints; past the budget the groups not yet tried are left
# unapplied (their findings stay reported).
MAX_RELINTS = 64


def _parsable(base: str, chosen: list[Fix], relint: Callable[[str], list[Finding]],
              parse_before: int) -> tuple[list[Fix], tuple[str, list[Finding]] | None]:
    """The fixes of ``chosen`` kept, and the text and findings with them applied to ``base``
    (None when none is kept): ``chosen`` as a whole breaks parsing, so each half is tried with
    the fixes kept so far (all on ``base``, whose offsets they were built for), a group that
    breaks it is split again, a single fix that breaks it is dropped."""
    kept: list[Fix] = []
    last: tuple[str, list[Finding]] | None = None
    budget = MAX_RELINTS
    groups = [chosen[len(chosen) // 2:], chosen[:len(chosen) // 2]] if len(chosen) > 1 else []
    while groups and budget > 0:  # a stack: the earlier half on top, so tried first
        group = groups.pop()
        if not group:
            continue
        budget -= 1
        text, _ = apply(base, [*kept, *group])
        found = relint(text)
        if _parse_errors(found) <= parse_before:
            kept.extend(group)
            last = (text, found)
        elif len(group) > 1:
            groups += [group[len(group) // 2:], group[:len(group) // 2]]
    return kept, last


def _parse_errors(findings: list[Finding]) -> int:
    return sum(1 for f in findings if f.code in PARSE_ERRORS)


def unified_diff(ff: FileFix) -> str:
    """`--diff`: difflib's unified diff (three lines of context), its matcher run only on the
    blocks the fixes changed.  On the whole file it is quadratic in repeated lines: a 2 MiB
    manifest of similar Deployments took 31 s."""
    a = ff.before.splitlines(keepends=True)
    b = ff.after.splitlines(keepends=True)
    out = []
    started = False
    for group in _Opcodes(line_opcodes(a, b)).get_grouped_opcodes(3):
        if not started:
            started = True
            out += [f"--- {ff.path}\n", f"+++ {ff.path}\n"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_hunk_range(first[1], last[2])} +{_hunk_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in a[i1:i2]]
                continue
            if tag in ("replace", "delete"):
                out += ["-" + line for line in a[i1:i2]]
            if tag in ("replace", "insert"):
                out += ["+" + line for line in b[j1:j2]]
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in out)


def _hunk_range(start: int, stop: int) -> str:
    """difflib's ``_format_range_unified``: `start,length` (1-based; `start` alone for one line;
    the line before for none)."""
    length = stop - start
    beginning = start + 1 if length else start
    return f"{beginning}" if length == 1 else f"{beginning},{length}"


def line_opcodes(a: list[str], b: list[str], window: int = 64) -> list[tuple[str, int, int, int, int]]:
    """difflib opcodes from ``a`` to ``b`` (lists of lines) found block by block: runs of equal
    lines are walked in step; at a difference, the nearest place within ``window`` lines of
    both where three lines (or the ends) agree again closes the block, and difflib's matcher
    reads only that block.  For fixes, which change a line or a few here and there, this is
    the diff difflib gives, in linear time.  Where nothing agrees within ``window`` (fixes on
    every line of a long stretch), the matcher reads ``window`` lines of both and the walk goes
    on after them: still a diff from ``a`` to ``b``, not always difflib's, but linear (the
    matcher on the whole rest is quadratic in repeated lines: 4 MiB of three fixed lines
    repeated took 17 s, 6.4 MiB over 60 s)."""
    from difflib import SequenceMatcher

    ops: list[tuple[str, int, int, int, int]] = []

    def add(tag: str, i1: int, i2: int, j1: int, j2: int) -> None:
        if ops and tag == "equal" and ops[-1][0] == "equal":
            _, pi1, _, pj1, _ = ops.pop()
            i1, j1 = pi1, pj1
        ops.append((tag, i1, i2, j1, j2))

    def agree(i: int, j: int) -> bool:
        for k in range(3):
            if i + k == n and j + k == m:
                return True
            if i + k >= n or j + k >= m or a[i + k] != b[j + k]:
                return False
        return True

    def block(i1: int, i2: int, j1: int, j2: int) -> None:
        for tag, x1, x2, y1, y2 in SequenceMatcher(None, a[i1:i2], b[j1:j2], False).get_opcodes():
            add(tag, i1 + x1, i1 + x2, j1 + y1, j1 + y2)

    n, m = len(a), len(b)
    i = j = 0
    while i < n or j < m:
        i0, j0 = i, j
        while i < n and j < m and a[i] == b[j]:
            i += 1
            j += 1
        if i > i0:
            add("equal", i0, i, j0, j)
        if i >= n and j >= m:
            break
        again = next(((i + da, j + total - da) for total in range(1, 2 * window + 1)
                      for da in range(max(0, total - window), min(total, window) + 1)
                      if i + da <= n and j + total - da <= m and agree(i + da, j + total - da)),
                     None)
        if again is None:
            again = (min(n, i + window), min(m, j + window))
        block(i, again[0], j, again[1])
        i, j = again
    return ops


class _Opcodes:
    """What difflib's grouping reads from a matcher: the opcodes, found by ``line_opcodes``."""

    def __init__(self, ops: list[tuple[str, int, int, int, int]]) -> None:
        self._ops = ops

    def get_opcodes(self) -> list[tuple[str, int, int, int, int]]:
        return self._ops

    def get_grouped_opcodes(self, n: int):  # type: ignore[no-untyped-def]
        from difflib import SequenceMatcher

        return SequenceMatcher.get_grouped_opcodes(self, n)  # type: ignore[arg-type]


def write_atomically(path: str, text: str) -> None:
    """Replace the file's contents: a temporary file beside it, its mode copied, then
    os.replace (a reader never sees half a file).  A byte-order mark the file had is kept."""
    import os
    import stat
    import tempfile

    with open(path, "rb") as fh:
        bom = fh.read(3) == b"\xef\xbb\xbf"
    mode = stat.S_IMODE(os.stat(path).st_mode)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".mgpu-lint-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogateescape"))
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
