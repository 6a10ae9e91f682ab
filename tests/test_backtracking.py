"""Regular expressions rewritten to stay linear (issue 20): each matches what the old pattern
matched, checked against the old pattern on seeded random texts built from the characters the
pattern cares about.  The hostile cases (tests/hostile_cases.py) time them on long inputs."""

from __future__ import annotations

import random
import re

BLANKS = [" ", "\t", "\r", "\n", "\x0b", "\x1c", "\u3000"]


def _texts(pieces: list[str], seed: int, count: int = 20_000, longest: int = 16) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, longest)))
            for _ in range(count)]


def test_shell_function_pattern_matches_what_the_greedy_one_did() -> None:
    from mgpu_lint.report.logical import _FUNCTION

    old = re.compile(r"^\s*(?:function\s+([A-Za-z_][\w.:-]*)\s*(?:\(\s*\))?|"
                     r"([A-Za-z_][\w.:-]*)\s*\(\s*\))\s*\{?\s*(?:#.*)?$")
    pieces = [*BLANKS, "function", "f", "_", "1", ".", ":", "-", "(", ")", "{", "}", "#", "x"]
    for text in _texts(pieces, 3):
        a, b = old.match(text), _FUNCTION.match(text)
        assert (a is None) == (b is None), text
        if a and b:
            assert a.groups() == b.groups(), text


def test_markdown_heading_text_is_what_the_lazy_pattern_found() -> None:
    from mgpu_lint.report.logical import _heading_text

    old = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
    pieces = [*BLANKS, "#", "##", "a", "b c", "é"]
    for text in _texts(pieces, 5):
        m = old.match(text)
        assert _heading_text(text) == (m.group(2) if m else None), repr(text)
