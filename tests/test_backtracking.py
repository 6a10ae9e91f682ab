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


def test_markdown_fence_pattern_matches_what_the_greedy_one_did() -> None:
    from mgpu_lint.sources.markdown import _FENCE

    old = re.compile(r"^([ \t]*)(`{3,}|~{3,})[ \t]*([^`\s]*)[^`\n]*$")
    pieces = [*BLANKS, "`", "```", "~", "~~~", "sh", "{", "a b"]
    for text in _texts(pieces, 7):
        a, b = old.match(text), _FENCE.match(text)
        assert (a.groups() if a else None) == (b.groups() if b else None), repr(text)


TEMPLATE_PIECES = ["{", "}", "{{", "}}", "{%", "%}", "%", "-", "a", " ", "\n"]


def test_template_spans_are_where_the_lazy_pattern_found_them() -> None:
    from mgpu_lint.sources.yamlnodes import _templates

    old = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)
    for text in _texts(TEMPLATE_PIECES, 9, longest=20):
        assert list(_templates(text)) == [m.span() for m in old.finditer(text)], text


def test_go_actions_searched_up_to_the_last_close_are_the_same() -> None:
    from mgpu_lint.sources.commandline import _GO_TEMPLATE
    from mgpu_lint.sources.kserve import _ACTION

    rng = random.Random(13)
    for text in _texts(TEMPLATE_PIECES, 11, longest=20):
        start = rng.randrange(0, len(text) + 1)
        end = rng.randrange(start, len(text) + 1)
        cut = min(end, text.rfind("}}", start, end) + 2)
        assert [(m.span(), m.groups()) for m in _ACTION.finditer(text, start, end)] == \
            [(m.span(), m.groups()) for m in _ACTION.finditer(text, start, cut)], text
        assert bool(_GO_TEMPLATE.search(text)) == \
            bool(_GO_TEMPLATE.search(text, 0, text.rfind("}}") + 2)), text


def test_first_engine_mention_is_the_one_the_single_pattern_found() -> None:
    from mgpu_lint import prepass

    not_a_launch = re.compile(
        r"\b(?:pip3?|uv|conda|mamba|micromamba|pipx|poetry|apt(?:-get)?|brew)\b[^\n]*"
        r"\b(?:install|add)\b|\b(?:from\s+vllm\S*\s+import|import\s+vllm)\b")

    def old(text: str) -> tuple[int, int] | None:
        if prepass._ROUTER_ONLY.search(text):
            return None
        for m in prepass._ENGINE_MENTION.finditer(text):
            line_start = text.rfind("\n", 0, m.start()) + 1
            if text[line_start:m.start()].lstrip().startswith(("#", "//")):
                continue
            line_end = text.find("\n", m.end())
            if not_a_launch.search(text, line_start, len(text) if line_end < 0 else line_end):
                continue
            return m.start(), m.end()
        return None

    pieces = [" ", " ", "\n", "#", "/", "-", "x", "vllm", "sglang", "pip", "pip3", "uv", "apt",
              "apt-get", "-get", "install", "add", "from", "import", ".", "llama.cpp"]
    for text in _texts(pieces, 17, longest=14):
        assert prepass._first_mention(text) == old(text), repr(text)


def test_quoted_parameters_skipped_after_the_last_brace_never_matched() -> None:
    from mgpu_lint.shell import _PARAM_RE

    for raw in _texts(["$", "{", "}", "${", "a", "_", "1", "@", "-", ":", " "], 19, longest=20):
        n = len(raw)
        last_close = raw.rfind("}", 0, n)
        for i in range(n):
            if raw[i] == "$" and last_close < i + 2 and raw.startswith("${", i):
                assert _PARAM_RE.match(raw, i, n) is None, (raw, i)


def test_compose_interpolations_are_what_the_pattern_found() -> None:
    from mgpu_lint.sources.compose import _interpolations

    old = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])((?:[^{}]|\{[^}]*\})*))?\}"
                     r"|\$([A-Za-z_][A-Za-z0-9_]*)")
    pieces = ["$", "{", "}", "${", "a", "_", "1", ":", "-", "?", "+", " ", "\n", "$$", "${a",
              "${a:-", "{}"]
    for text in _texts(pieces, 23, count=40_000, longest=18):
        want = [(m.start(), m.end(), m.group(1) or m.group(4), m.group(2), m.group(3))
                for m in old.finditer(text)]
        assert list(_interpolations(text)) == want, text


def test_pip_pin_is_the_release_the_single_pattern_found() -> None:
    from mgpu_lint.versions import pip_pin_pattern

    pin = pip_pin_pattern("vllm")
    pieces = ["pip", "pip3", " ", " ", "\n", ";", "install", "uv", "python", "-m", "vllm", "==",
              "1", "[", "]", "'", "x", "&", "\t", "]==", "vllm["]
    for text in _texts(pieces, 29, count=40_000):
        a, b = pin.pattern.search(text), pin.search(text)
        assert (a and (a.group(1), a.span(1))) == (b and (b.group(1), b.span(1))), text


def test_config_table_header_is_what_the_lazy_pattern_found() -> None:
    from mgpu_lint.config import _table_header

    old = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+")
    for text in _texts([*BLANKS, "[", "]", "[[", "]]", "a", "tool", ".", '"'], 31):
        m = old.match(text)
        assert _table_header(text) == (m.group(1) if m else None), repr(text)
