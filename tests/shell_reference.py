"""The lexer of linter/shell.py before its fast paths (``split_commands`` / ``_commands`` as
they were at a245fae), kept as the reference that tests/test_shell_equivalence.py compares the
module's against: the general path of every token (a `$NAME` through ``_expand``, each command
ended by ``end_command``), the module's own helpers (_tokens, _expand, _WordBuilder …).
Not used by the linter."""

# ruff: noqa
from __future__ import annotations

from sys import intern
from typing import Iterator

from mgpu_lint.bounds import MAX_VALUE_CHARS, ReadBudget
from mgpu_lint.cancel import step as cancel_step
from mgpu_lint.shell import (_ARRAY_ASSIGN, _ASSIGN, _AFTER_PLACEHOLDER, _BEFORE_PLACEHOLDER,
                             _DECLARATIONS, _NAME_START, _PLACEHOLDER, ArrayResolver, Command,
                             Definer, Resolver, ShellProblem, _ansi_quoted, _double_quoted,
                             _Exhausted, _expand, _Expander, _tokens, _WordBuilder)
from mgpu_lint import shell as _shell
from mgpu_lint.source import CharMap, Span, VarRef, Word


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
        spend(1, word)
        if heredoc_next:
            pending_heredoc.append((word.text, heredoc_strip))
            pending_redirect = heredoc_next = False
            return
        if pending_redirect:
            pending_redirect = False
            return
        if not cmd.words and _ASSIGN.match(word.text) and not word.text.startswith("="):
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

    def end_command(next_start: int) -> Iterator[Command]:
        nonlocal cmd, last_cont
        if cmd.words or cmd.assignments or cmd.problems or cmd.arrays:
            yield cmd
        cmd = Command(line_start=next_start)
        last_cont = None

    heredoc_strip = False
    length = len(text)
    for ttype, value, start in _tokens(text, jump):
        end = start + len(value)
        if array is not None and ttype == "OP" and value == ")":
            end_word(start)
            cmd.arrays.append((array[0], array_words, array[1]))
            array, array_words = None, []
            continue
        if array is not None and ttype in ("NEWLINE", "COMMENT"):
            end_word(start)
            continue
        if ttype == "OP" and value == "(" and not cmd.words and not wb.fields and wb.chars:
            m = _ARRAY_ASSIGN.match("".join(wb.chars))
            if m:
                # bash array assignment: the words up to `)` are its elements
                wb = _WordBuilder()
                array, array_words = (m.group(1), bool(m.group(2))), []
                continue
        if ttype == "OP" and value == "<" and not pending_redirect and not heredoc_next:
            m = _PLACEHOLDER.match(text, start)
            if m is not None and (start == 0 or text[start - 1] in _BEFORE_PLACEHOLDER) and \
                    (m.end() == len(text) or text[m.end()] in _AFTER_PLACEHOLDER):
                # `<MASTER_NODE_IP>`, `http://<HOST>:8000`: a documentation placeholder, not
                # an input and an output redirection; read as a value nobody set, like $VAR
                wb.add(m.group(0), start)
                wb.unresolved.append(VarRef(m.group(1), Span(start, m.end())))
                jump[0] = m.end()
                continue
        if ttype == "PLAIN":
            if (end == length or text[end] in " \t\n") and wb.begin < 0 and not wb.chars \
                    and not wb.fields and array is None:
                # a whole word of literal text (most words: `vllm`, `--port`, `8000`): the
                # blank or newline after it ends it (end_word(end) next), so it is that Word,
                # without a builder
                one_word(Word(value, CharMap(start, len(value), tail=end)), end)
            else:
                wb.add(value, start)
        elif ttype == "DOLLAR" or ttype == "HASH":
            wb.add(value, start)
        elif ttype == "WS":  # the commonest token after PLAIN: tested second
            end_word(start)
        elif ttype == "SQ":
            wb.quoted = True
            wb.mark(start)
            if len(value) > 2:
                wb.add(value[1:-1], start + 1)
        elif ttype == "DQ":
            _double_quoted(value, start, ex, wb, split=splits())
        elif ttype == "ANSI":
            _ansi_quoted(value, start, wb)
        elif ttype == "PARAM":
            if value[1] in _NAME_START:
                # `$NAME` of a known value that splits into no fields: what _expand adds for it,
                # without parsing the reference again or asking whether it is split (a 4 MiB
                # word of 2 million `$x` took 10 s)
                known = ex.resolve(value[1:])
                if known and len(known) <= MAX_VALUE_CHARS and " " not in known \
                        and "\t" not in known and "\n" not in known \
                        and (budget is None or budget.expanded_chars >= len(known)):
                    if budget is not None:
                        budget.expanded_chars -= len(known)
                    if wb.begin < 0:
                        wb.begin = start
                    wb.chars.append(known)
                    wb.map.const(start, end, len(known))
                    continue
            _expand(value, start, end, ex, wb, split=splits())
        elif ttype in ("CMDSUB", "BACKTICK"):
            split = splits()
            wb.add(value, start)
            # unquoted, its output is split into fields like an unknown variable's value
            wb.unresolved.append(VarRef(value, Span(start, end), split=split))
        elif ttype == "ESC":
            wb.add_char(value[1], start, end)
        elif ttype == "CONT":
            last_cont = start
        elif ttype == "NEWLINE":
            end_word(start)
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
            yield from end_command(end)
            if jump[0] <= end:
                blank = _shell._BLANK_LINES.match(text, end)
                if blank is not None:
                    # lines after a command's end that hold nothing or a comment: each would
                    # only end an empty command again (10 million newlines took 22 s)
                    cmd.line_start = jump[0] = blank.end()
        elif ttype == "OP":
            end_word(start)
            if value[-1] in "<>-":
                pending_redirect = True
                if value.endswith(("<<", "<<-")) and not value.endswith("<<<"):
                    heredoc_next = True
                    heredoc_strip = value.endswith("-")
                continue
            cmd.background = value == "&"
            yield from end_command(end)
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
    yield from end_command(len(text))
