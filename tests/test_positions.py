"""Every argv word maps back to the exact characters it came from, in every source style."""

from __future__ import annotations

import pytest
from mgpu_lint.runner import read_files
from mgpu_lint.source import CharMap, SourceFile, Span, Word
from mgpu_lint.sources import extract

from tests.conftest import fixture_files

ESCAPES = {"\\", "'", '"', "$", "{", "}", "("}


def _check_word(text: str, word: Word, operator: bool = False) -> None:
    """Each character of the word's value comes from the file text at its mapped range: the same
    character, an escape sequence, or a variable reference that expanded to it.  A flag an
    operator adds (KubeAI's `--model=` before the repo of spec.url, Ray Serve LLM's
    `--enable-chunked-prefill` for `enable_chunked_prefill: true`) maps to the field it comes
    from; its value's characters are checked like any other, unless the operator writes the
    value too (production-stack's `--distributed-executor-backend=ray` for `raySpec.enabled`)."""
    refs = [v.span for v in word.unresolved]
    if _from_a_build(text, word):
        return
    skip = 0
    if operator and word.text.startswith("--") and \
            not text[word.cmap.start(0):].startswith("--"):
        skip = word.text.index("=") + 1 if "=" in word.text else len(word.text)
        if skip < len(word.text) and word.cmap.start(skip) == word.cmap.start(0):
            skip = len(word.text)  # a value the operator writes itself (`=ray`), at the field
    for i, ch in enumerate(word.text):
        if i < skip:
            continue
        s, e = word.cmap.start(i), word.cmap.end(i)
        src = text[s:e]
        assert e > s, (word.text, i)
        if src == ch:
            continue
        assert src[0] in ESCAPES or ch in " \n" or any(r.start <= s < r.end for r in refs), (
            f"{word.text!r}[{i}]={ch!r} maps to {src!r}")


def _from_a_build(text: str, word: Word) -> bool:
    """A word of the Dockerfile a compose service is built from: all of it is shown at the
    service's `build:`, `context:` or `dockerfile:` value."""
    s, e = word.cmap.start(0), word.cmap.end(0)
    line = text[text.rfind("\n", 0, s) + 1:s]
    return all((word.cmap.start(i), word.cmap.end(i)) == (s, e) for i in range(len(word.text))) \
        and line.strip() in ("build:", "context:", "dockerfile:")


# an InferenceService alone has no command: its words are checked where they join the
# runtime's, with the whole directory read at once (a joined text, source.joined_source)
JOINS = "fixtures/kserve-joins"


@pytest.mark.parametrize("path", [p for p in fixture_files()
                                  if "/bad/" not in p and "/nolaunch/" not in p
                                  and not (p.startswith(JOINS) and "isvc" in p)] + [JOINS])
def test_every_word_maps_to_its_source(path: str) -> None:
    run = read_files([path])
    assert run.launches, f"no launch found in {path}"
    for la in run.launches:
        text = la.source.text
        for w in (la.program, *la.args):
            _check_word(text, w, la.operator is not None)


def _words(text: str, kind: str) -> list[Word]:
    result = extract(SourceFile("t", text, kind))
    assert len(result.launches) == 1, result
    return list(result.launches[0].args)


def _at(text: str, w: Word) -> str:
    return text[w.span.start:w.span.end]


@pytest.mark.parametrize("style,doc", [
    ("plain", "args: [Qwen/Qwen3-8B, --tensor-parallel-size, 4]"),
    ("flow-quoted", 'args: ["Qwen/Qwen3-8B", "--tensor-parallel-size", \'4\']'),
    ("block-seq", "args:\n  - Qwen/Qwen3-8B\n  - --tensor-parallel-size\n  - \"4\""),
])
def test_args_styles(style: str, doc: str) -> None:
    head = "kind: Pod\napiVersion: v1\nspec:\n  containers:\n  - image: vllm/vllm-openai:v0.30.0\n"
    body = "\n".join("    " + line for line in doc.split("\n"))
    text = head + body + "\n"
    words = _words(text, "yaml")
    assert [w.text for w in words] == ["Qwen/Qwen3-8B", "--tensor-parallel-size", "4"]
    assert _at(text, words[2]) == "4"
    assert text[words[2].span.start - 1] in "\"' "


def test_double_quoted_escapes_and_tab() -> None:
    text = ('kind: Pod\napiVersion: v1\nspec:\n  containers:\n  - image: x\n'
            '    command: ["sh", "-c", "vllm serve \\"Qwen/Qwen3-8B\\" --port\\t8000"]\n')
    words = _words(text, "yaml")
    assert [w.text for w in words] == ["Qwen/Qwen3-8B", "--port", "8000"]
    assert _at(text, words[0]) == "Qwen/Qwen3-8B"
    assert _at(text, words[2]) == "8000"


def test_folded_block_across_lines() -> None:
    text = ("kind: Pod\napiVersion: v1\nspec:\n  containers:\n  - image: x\n"
            "    command:\n    - bash\n    - -c\n    - >\n      vllm serve m\n"
            "      --tensor-parallel-size\n      4\n")
    words = _words(text, "yaml")
    assert [w.text for w in words] == ["m", "--tensor-parallel-size", "4"]
    line, col = SourceFile("t", text).line_col(words[2].span.start)
    assert (line, col) == (12, 7)


def test_word_split_across_continuation_spans_both_lines() -> None:
    text = "vllm serve m --tensor-par\\\nallel-size 4\n"
    words = _words(text, "shell")
    assert words[1].text == "--tensor-parallel-size"
    assert words[1].span.start == text.index("--tensor")
    assert words[1].span.end == text.index(" 4")


def test_repeated_token_points_at_the_right_one() -> None:
    text = "CUDA_VISIBLE_DEVICES=4 vllm serve m --tensor-parallel-size 4 --port 4\n"
    words = _words(text, "shell")
    assert words[2].span.start == text.index("size 4") + 5
    assert words[4].span.start == len(text) - 2


def test_crlf_bom_and_yaml_alias(tmp_path) -> None:
    p = tmp_path / "d.yaml"
    p.write_bytes(
        b"\xef\xbb\xbfkind: Pod\r\napiVersion: v1\r\nspec:\r\n  containers:\r\n"
        b"  - image: vllm/vllm-openai:v0.30.0\r\n    args: [&m Qwen/Qwen3-8B, --served-model-name, *m]\r\n")
    run = read_files([str(p)])
    la = run.launches[0]
    text = la.source.text
    assert [w.text for w in la.args] == ["Qwen/Qwen3-8B", "--served-model-name", "Qwen/Qwen3-8B"]
    # the alias resolves to the anchored value, which is where the text is
    assert la.args[2].span == la.args[0].span
    assert text[la.args[0].span.start:la.args[0].span.end] == "Qwen/Qwen3-8B"
    assert la.source.line_col(la.args[1].span.start) == (6, 30)


def test_charmap_compose() -> None:
    outer = CharMap.table([10, 12, 13], [12, 13, 14], 14)
    inner = CharMap.linear(1, 2)
    composed = inner.compose(outer)
    assert composed.span(0, 2).start == 12 and composed.span(0, 2).end == 14


class _Reference:
    """Per-character lists: what a CharMap must answer, character by character."""

    def __init__(self, starts: list[int], ends: list[int], tail: int) -> None:
        self.starts, self.ends, self.tail = starts, ends, tail

    def start(self, i: int) -> int:
        return self.starts[i] if i < len(self.starts) else self.tail

    def compose(self, outer: "_Reference") -> "_Reference":
        return _Reference([outer.start(s) for s in self.starts],
                          [outer.ends[e - 1] for e in self.ends], outer.start(self.tail))


def _random_table(rng, parent: int) -> _Reference:
    """Characters copied, escapes (two parent characters), expansions (many characters from one
    reference) and gaps, in random order, within ``parent`` characters."""
    starts: list[int] = []
    ends: list[int] = []
    p = 0
    while p < parent and len(starts) < 40:
        kind = rng.random()
        if kind < 0.4:
            starts.append(p)
            ends.append(p + 1)
            p += 1
        elif kind < 0.6 and p + 2 <= parent:
            starts.append(p)
            ends.append(p + 2)
            p += 2
        elif kind < 0.8 and p + 3 <= parent:
            for _ in range(rng.randint(1, 4)):
                starts.append(p)
                ends.append(p + 3)
            p += 3
        else:
            p += 1
    return _Reference(starts, ends, min(p, parent))


def _same(ref: _Reference, cmap: CharMap) -> None:
    n = len(ref.starts)
    assert cmap.length == n and cmap.tail == ref.tail
    assert [cmap.start(i) for i in range(n + 1)] == [ref.start(i) for i in range(n + 1)]
    assert [cmap.end(i) for i in range(n)] == ref.ends


def test_charmap_runs_answer_as_per_character_tables() -> None:
    """Maps are stored as runs; every start, end, slice and composition is the one the
    per-character table gives."""
    import random

    rng = random.Random(20)
    for _ in range(500):
        ref = _random_table(rng, rng.randint(0, 60))
        cmap = CharMap.table(ref.starts, ref.ends, ref.tail)
        _same(ref, cmap)
        n = len(ref.starts)
        i = rng.randint(0, n)
        j = rng.randint(i, n)
        _same(_Reference(ref.starts[i:j], ref.ends[i:j], ref.start(j)),
              cmap.slice(i, j, tail=ref.start(j)))
        if n:
            inner = _random_table(rng, n)
            composed = CharMap.table(inner.starts, inner.ends, inner.tail).compose(cmap)
            _same(inner.compose(ref), composed)


def test_charmap_compose_of_a_verbatim_slice() -> None:
    """A linear map composed with a map of runs (compose's slice path) answers as the
    per-character tables do, at every place of the slice and past its ends."""
    import random

    rng = random.Random(21)
    for _ in range(500):
        ref = _random_table(rng, rng.randint(0, 60))
        cmap = CharMap.table(ref.starts, ref.ends, ref.tail)
        n = len(ref.starts)
        i = rng.randint(0, n)
        j = rng.randint(i, n)
        tail = rng.randint(j, n)
        inner = _Reference(list(range(i, j)), list(range(i + 1, j + 1)), tail)
        _same(inner.compose(ref), CharMap(i, j - i, tail=tail).compose(cmap))


def test_long_words_keep_exact_positions_in_a_few_runs() -> None:
    """A 1 MiB shell word with an expansion and escapes inside double quotes, and the same value
    as a YAML double-quoted scalar: each character maps to its place, and the map's size is the
    number of places where the mapping changes, not the word's length."""
    n = 1 << 20
    text = f'X=yz\nvllm serve "a{"b" * n}$X\\"c{"d" * n}"\n'
    words = _words(text, "shell")
    w = words[0]
    assert w.text == "a" + "b" * n + "yz" + '"c' + "d" * n
    assert w.cmap.runs <= 6
    body = text.index('"a') + 1
    assert w.cmap.start(0) == body and w.cmap.start(n) == body + n
    ref = text.index("$X")
    assert w.sub(n + 1, n + 3) == Span(ref, ref + 2)  # the expansion: its reference
    assert w.sub(n + 3, n + 4) == Span(ref + 2, ref + 4)  # \" : the escape
    assert w.sub(len(w.text) - 1) == Span(len(text) - 3, len(text) - 2)

    doc = ('kind: Pod\napiVersion: v1\nspec:\n  containers:\n  - image: vllm/vllm-openai:v0.30.0\n'
           f'    args: ["m", "--served-model-name", "a{"b" * n}\\tc"]\n')
    y = _words(doc, "yaml")[2]
    assert y.text == "a" + "b" * n + "\tc" and y.cmap.runs <= 3
    esc = doc.index("\\t")
    assert y.sub(n + 1, n + 2) == Span(esc, esc + 2)
    assert doc[y.cmap.start(n)] == "b" and y.cmap.start(n + 2) == esc + 2


def test_flow_plain_scalar_with_colon_is_read_with_exact_positions() -> None:
    """libyaml refuses `http://h:1` in a flow sequence; YAML 1.2 and Kubernetes accept it: the
    launch is read (by the pure composer) and every word keeps its exact place."""
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ü}\n---\n"
            "kind: Pod\napiVersion: v1\nspec:\n  containers:\n  - image: vllm/vllm-openai:v0.30.0\n"
            "    args: [Qwen/Qwen3-8B, --otlp-traces-endpoint, http://127.0.0.1:4317, "
            "--served-model-name, 'a:b']\n")
    words = _words(text, "yaml")
    assert [w.text for w in words] == ["Qwen/Qwen3-8B", "--otlp-traces-endpoint",
                                       "http://127.0.0.1:4317", "--served-model-name", "a:b"]
    assert _at(text, words[2]) == "http://127.0.0.1:4317"
    assert _at(text, words[4]) == "a:b"
    assert SourceFile("t", text).line_col(words[2].span.start) == (10, 51)


def test_nesting_guard_counts_brackets_per_document(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rendered chart has more brackets than the depth limit in all but few in each document:
    the cheap bound holds per document (no event scan); a deep document after many shallow ones
    is still refused, at its own place; a `---` inside a quoted scalar splits nothing that
    libyaml would read on (it fails there)."""
    from mgpu_lint import yamlsrc

    scans: list[int] = []
    real = yamlsrc._loader

    def counting() -> object:
        scans.append(1)
        return real()

    monkeypatch.setattr(yamlsrc, "_loader", counting)
    many = "---\n".join(f"a{i}: {{b: [1, {{c: [2]}}]}}\n" for i in range(600))  # 2,400 brackets
    assert yamlsrc.nesting_depth_exceeds(many) is None
    assert scans == []
    depth = yamlsrc.MAX_DEPTH + 5
    deep = many + "---\nz: " + "[" * depth + "]" * depth + "\n"
    at = yamlsrc.nesting_depth_exceeds(deep)
    assert at is not None and at > len(many)
    assert deep[at] == "["
    # 600 documents' brackets and then one document of more than the limit, all in one stretch
    # because `---` is indented (no document start): refused by the event scan, not skipped
    one = "x: |\n" + "".join(f"  a{i}: {{b: [1, {{c: [2]}}]}}\n ---\n" for i in range(600))
    scans.clear()
    assert yamlsrc.nesting_depth_exceeds(one) is None and scans == [1]


def test_document_stretches_split_at_column_zero_document_starts() -> None:
    """yamlsrc._stretches (str.find) splits where `^---` then a blank or the end does."""
    import random
    import re

    from mgpu_lint import yamlsrc

    start = re.compile(r"^---(?=[ \t\r\n]|\Z)", re.M)

    def expected(text: str) -> list[tuple[int, int]]:
        out, at = [], 0
        for m in start.finditer(text):
            if m.start() > at:
                out.append((at, m.start()))
            at = m.start()
        return [*out, (at, len(text))]

    bits = ["---", "\n", "-", " ", "a", "\t", "\r", "----", "--- x", "\n---\n"]
    rng = random.Random(2)
    for _ in range(30_000):
        text = "".join(rng.choice(bits) for _ in range(rng.randint(0, 12)))
        assert list(yamlsrc._stretches(text)) == expected(text), repr(text)


def test_line_starts_are_the_offsets_after_each_newline():
    """source.line_starts sums line lengths chunk by chunk; the reference is a search for each
    newline.  Random texts of newlines, CRs and letters, with chunks smaller than a line."""
    import random

    from mgpu_lint.source import line_starts

    rng = random.Random(3)
    for _ in range(400):
        text = "".join(rng.choice("\n\n\ra b") for _ in range(rng.randint(0, 60)))
        want = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        for chunk in (1, 2, 3, 7, 1 << 20):
            assert list(line_starts(text, chunk)) == want, (text, chunk)
