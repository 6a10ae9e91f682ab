"""The grammars' generated terminals are current, and option words split as Lark parses them."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Lark, Token
from lark.exceptions import LarkError

from mgpu_lint.engines.invocation import NEGATIVE_NUMBER, OptionToken, classify

ROOT = Path(__file__).resolve().parents[1]


def test_generated_terminals_are_current() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "grammars.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


@lru_cache(maxsize=1)
def _lark() -> Lark:
    grammar = (ROOT / "grammars" / "options.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", lexer="contextual")


def lark_classify(text: str) -> OptionToken | str | None:
    """What the option grammar means, read by Lark itself (the reference)."""
    if not text.startswith("-"):
        return None
    try:
        tree = _lark().parse(text)
    except LarkError:
        return None
    if tree.data == "negnum":
        return NEGATIVE_NUMBER
    dashes = name = ""
    keys: list[str] = []
    flag_end = len(text)
    value_start: int | None = None
    for tok in tree.scan_values(lambda v: isinstance(v, Token)):
        if tok.type == "DASHES":
            dashes = str(tok)
        elif tok.type == "NAME":
            name, flag_end = str(tok), tok.end_pos or len(text)
        elif tok.type == "KEY":
            keys.append(str(tok))
            flag_end = tok.end_pos or len(text)
        elif tok.type == "APPEND":
            if keys:
                keys[-1] += "+"
            flag_end = tok.end_pos or len(text)
        elif tok.type == "VALUE":
            value_start = tok.start_pos
    if value_start is None and flag_end < len(text) and text[flag_end] == "=":
        value_start = flag_end + 1
    return OptionToken(dashes, name, tuple(keys), flag_end, value_start)


def _catalog_spellings() -> list[str]:
    out: list[str] = []
    for path in sorted((ROOT / "linter" / "catalog" / "flags").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for option in data.get("options", ()):
            out.extend(option.get("names", ()))
            out.extend(option.get("neg", ()))
    return sorted(set(out))


EDGE_CASES = [
    "-", "--", "---x", "-1", "-0.5", "-.5", "-5.", "-5\n", "-5x", "-1e3", "--x=", "--x==",
    "--x=a=b", "--x=\n", "--x.y", "--x.y.z+", "--x.y+=1", "--x+", "--x++", "--x.+", "--x..y",
    "--x. y", "--port 8000", "-tp=4", "-O3", "--compilation-config.mode", "-cc.sizes+",
    "--a.b=c.d+e", "--x=\t", "-\n", "--\u00e9t\u00e9", "--x\u00a0y", "--fim-qwen-1.5b-default",
]


def test_option_words_split_as_lark_parses_them() -> None:
    words = EDGE_CASES + _catalog_spellings()
    words += [f"{w}={v}" for w in _catalog_spellings() for v in ("1", "", "a.b+c")]
    words += [f"{w}.key+" for w in _catalog_spellings()[:200]]
    assert len(words) > 1000
    for word in words:
        assert classify(word) == lark_classify(word), word


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="-=.+ \t\n0123456789aZ_\u00e9\u00a0", max_size=12))
def test_generated_words_split_as_lark_parses_them(rest: str) -> None:
    for word in ("-" + rest, "--" + rest, rest):
        assert classify(word) == lark_classify(word), word


def test_double_quote_fallback_ends_where_the_grammar_regex_does() -> None:
    """shell._dq_end finds the end of the grammar's DQ (the backtracking regex, exponential on
    `"$(a) ${b} …$(`) in linear time: it must end where the regex does, on every text, with
    the dead positions shared between the calls of one text as the lexer shares them."""
    import random
    import re

    from mgpu_lint.grammars.terminals import SHELL
    from mgpu_lint.shell import _dq_end

    dq = re.compile(dict(SHELL)["DQ"])
    rng = random.Random(11)
    pieces = ['"', "$", "\\", "{", "}", "(", ")", "'", "a", " ", "\n", "${", "$(", "`"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 24)))
        dead = bytearray(len(text) + 1)
        for start in [i for i, c in enumerate(text) if c == '"']:
            m = dq.match(text, start)
            assert _dq_end(text, start, dead) == (m.end() if m else None), (text, start)


def test_shell_tokens_fast_paths_are_the_scanners(monkeypatch) -> None:
    """shell._tokens matches PLAIN or WS alone at the characters where the scanner's
    alternation could only give that terminal (_PLAIN_FIRST, _WS_FIRST): the same tokens as
    the whole alternation, on random texts of the characters the terminals treat apart."""
    import random

    from mgpu_lint import shell

    rng = random.Random(5)
    pieces = list("aZ-_./:=,@+%09 \t\n\r\f'\"`$\\;&|()<>#{}[]*!~\u00a0\u00e9") + [
        "2>", "<<", "${", "$(", "\\\n", "ab", "--port", "8000", "$'", "x=1"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, 30)))
             for _ in range(5_000)]
    fast = [list(shell._tokens(t)) for t in texts]
    monkeypatch.setattr(shell, "_PLAIN_FIRST", frozenset())
    monkeypatch.setattr(shell, "_WS_FIRST", frozenset())
    for text, tokens in zip(texts, fast):
        assert list(shell._tokens(text)) == tokens, text
