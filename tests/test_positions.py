"""Every argv word maps back to the exact characters it came from, in every source style."""

from __future__ import annotations

import pytest
from mgpu_lint.runner import read_files
from mgpu_lint.source import CharMap, SourceFile, Word
from mgpu_lint.sources import extract

from tests.conftest import fixture_files

ESCAPES = {"\\", "'", '"', "$", "{", "}", "("}


def _check_word(text: str, word: Word, operator: bool = False) -> None:
    """Each character of the word's value comes from the file text at its mapped range: the same
    character, an escape sequence, or a variable reference that expanded to it.  A flag an
    operator adds (KubeAI's `--model=` before the repo of spec.url) maps to the field it comes
    from; its value's characters are checked like any other."""
    refs = [v.span for v in word.unresolved]
    skip = 0
    if operator and word.text.startswith("--") and "=" in word.text and \
            not text[word.cmap.start(0):].startswith("--"):
        skip = word.text.index("=") + 1
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


@pytest.mark.parametrize("path", [p for p in fixture_files() if "/bad/" not in p])
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
