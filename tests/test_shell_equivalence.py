"""linter/shell.py's split_commands against its general path (tests/shell_reference.py, the
lexer before its fast paths) on generated shell texts: the same commands (words, their texts,
character maps, quoting and unresolved references; assignments, arrays, here-documents,
problems, where each command starts), the same budget left (words, expanded characters) and
the same place where it ran out, with the same variables known as the commands go (an
assignment alone sets its variable for the commands after it, as search_script does)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from mgpu_lint import shell
from mgpu_lint.bounds import MAX_VALUE_CHARS, ReadBudget
from mgpu_lint.source import Word

from . import shell_reference

# the pieces a text is made of: every kind of token, references known, unknown, empty, of
# several fields, too long, braced and not, in every place a word can be
PIECES = [
    "vllm", " serve", " m", " --port 8000", " ", "  ", "\t", "\n", "\r\n", "\n\n", " \\\n",
    " \\ \n", "\\", "a", "b=c", "=x", "x=", "x=ab", "y=c d", "e=", "long=$long", "$x", "${x}",
    "$y", "${y}", "$e", "${e}", "$u", "${u}", "$long", "${long}", "$too", "${too}", "$x$x",
    "a$x", "$x.b", "${x}b", "${x:-d}", "${u:-d}", "${u:+w}", "${#x}", "${x", "$", "$1", "$@",
    "$$", "$?", "$_x1", "${_}", '"$x"', '"${u}"', '"$y z"', "'q'", "''", "$'a\\n'", "\\ ",
    "\\$x", ";", " ; ", "&", " && ", "|", "(", ")", "<", ">", "2>", " >/dev/null", "<<EOF\n",
    "EOF\n", "<<-E\n", "\tE\n", " <HOST>", " http://<H>:8000", " # c", "#", "w#z", "a=( p",
    " q", ")", "a+=(", "export", " export x=$y", "declare y=$x", "$(cmd)", "`b`", '"$@"',
    '"${arr[@]}"', "${arr[@]}", " x=$y", "'", '"', "`", "\r", " \\\n\n",
    # lines of literal words, and what makes a line not one
    "a\n", "a\n", "vllm serve m --port 8000\n", "8000\n", "2\n", " x\n", "\tx\ty\n", "é\n",
    "{ }\n", "w#z\n", "x=1\n", "x=1 y\n", "a \n", "a\xa0b\n", "\x85\n", "\x0b", "2>", ">\n",
    "<<EOF\nEOF\n", "a #c\n",
]
VALUES = {"x": "ab", "y": "c d", "e": "", "long": "l" * MAX_VALUE_CHARS,
          "too": "t" * (MAX_VALUE_CHARS + 1)}


def _map(cmap) -> tuple:
    return (cmap.base, cmap.length, cmap.tail, None if cmap._d is None else list(cmap._d),
            list(cmap._s), list(cmap._ss), list(cmap._e), list(cmap._es))


def _word(w: Word) -> tuple:
    return (w.text, _map(w.cmap), w.quoted, w.unresolved)


def _run(split, text: str, words: int, expanded: int) -> tuple:
    """What ``split`` (one module's split_commands) gives for ``text``, the variables of
    VALUES known and each assignment alone setting its own; then the budget left."""
    env: dict[str, str | None] = dict(VALUES)
    defined: dict[str, Word] = {}
    arrays = {"arr": [Word("p", shell.CharMap(0, 1)), Word("q r", shell.CharMap(1, 3))]}
    budget = ReadBudget()
    budget.words, budget.expanded_chars = words, expanded
    out = []
    for cmd in split(text, env.get, arrays.get, defined.get, budget):
        out.append((cmd.line_start, cmd.background, [(n, _word(w)) for n, w in cmd.assignments],
                    [_word(w) for w in cmd.words], cmd.problems, cmd.heredocs,
                    [(n, [_word(w) for w in ws], a) for n, ws, a in cmd.arrays]))
        if not cmd.words:
            for name, w in cmd.assignments:
                env[name] = None if w.unresolved else w.text
                defined[name] = w
    return out, budget.words, budget.expanded_chars, budget.cut


def _same(text: str, words: int = 1 << 20, expanded: int = 1 << 24) -> None:
    new = _run(shell.split_commands, text, words, expanded)
    old = _run(shell_reference.split_commands, text, words, expanded)
    assert new == old, (text, words, expanded)


def test_generated_texts_lex_as_the_general_path_does():
    rng = random.Random(20)
    for _ in range(4000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 30)))
        # budgets that run out inside the text (words; characters references expand to, at
        # and around the long value's length) and ones that do not
        words = rng.choice([1 << 20, rng.randint(0, 12)])
        expanded = rng.choice([1 << 24, rng.randint(0, 6), MAX_VALUE_CHARS,
                               MAX_VALUE_CHARS + rng.randint(-3, 3), 2 * MAX_VALUE_CHARS + 1])
        _same(text, words, expanded)


def test_the_bench_shapes_lex_as_the_general_path_does():
    """bench/relint_latency.py's one-word commands and words of a long value, smaller."""
    _same("vllm serve meta-llama/Llama-3.1-8B-Instruct\n" + "a\n" * 3000)
    text = "x=ab\n" + "x=$x$x\n" * 16 + "vllm serve m" + " $x" * 3000 + "\n"
    _same(text, expanded=20 * (1 << 17) + 5)
    _same(text.replace("$x", "${x}"), expanded=20 * (1 << 17) + 5)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=25), st.integers(0, 15),
       st.integers(-1, 2 * MAX_VALUE_CHARS + 2))
def test_any_text_of_the_pieces_lexes_as_the_general_path_does(pieces, words, expanded):
    _same("".join(pieces), words if words < 15 else 1 << 20, expanded)
