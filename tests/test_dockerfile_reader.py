"""The Dockerfile reader (linter/sources/dockerfile.py): its instructions and exec-form words,
each character mapped to its place, against the reading it replaced (kept here as the
reference), on random texts of continuations, comments, blank lines, `\\r`, escapes and the
escape directive."""

from __future__ import annotations

import random
import re

import pytest

from mgpu_lint.source import CharMap, MapBuilder, Word
from mgpu_lint.sources import dockerfile

_INSTR = re.compile(r"^\s*([A-Za-z]+)(\s+|$)")
_ESCAPE_DIRECTIVE = re.compile(r"^#\s*escape\s*=\s*([\\`])\s*$", re.I)


def _reference_instructions(text: str) -> list[tuple[str, str, CharMap]]:
    """The reader before the instructions were read one at a time (split into lines, every
    instruction's map built as it was read)."""
    escape = "\\"
    lines = text.split("\n")
    offsets = []
    pos = 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    for line in lines:
        if not line.startswith("#"):
            break
        m = _ESCAPE_DIRECTIVE.match(line.rstrip("\r"))
        if m:
            escape = m.group(1)
    result = []
    i = 0
    while i < len(lines):
        line = lines[i].rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            i += 1
            continue
        chars: list[str] = []
        places = MapBuilder()
        while True:
            body = lines[i].rstrip("\r")
            cont = body.rstrip(" \t").endswith(escape)
            if cont:
                body = body.rstrip(" \t")[:-1]
            chars.append(body)
            places.linear(offsets[i], len(body))
            i += 1
            if not cont:
                break
            while i < len(lines) and (lines[i].lstrip().startswith("#") or not lines[i].strip()):
                i += 1
            if i >= len(lines):
                break
            chars.append(" ")
            places.linear(offsets[i] - 1, 1)
        logical = "".join(chars)
        m = _INSTR.match(logical)
        if not m:
            continue
        arg_start = m.end()
        full = places.build(0)
        n = len(logical)
        tail = full.end(n - 1) if n else 0
        result.append((m.group(1).upper(), logical[arg_start:],
                       full.slice(arg_start, n, tail=tail)))
    return result


def _places(text: str, cmap: CharMap) -> list[tuple[int, int]]:
    return [(cmap.start(i), cmap.end(i)) for i in range(len(text))] + [(cmap.tail, -1)]


_PIECES = ["RUN", "run", "CMD", "ENTRYPOINT", "FROM", "a", "b c", " ", "\t", "\r", "\\", "`",
           "#", "# c", "\n", "\n", "\n", '"', "[", "]", ",", '\\"', "\\u0041", "\\n", "=",
           "\f", "\u00a0", "\u2028", "\\\n", " \\ \r\n", "  # c\n", "\n\t\n"]


def _random_dockerfile(rng: random.Random) -> str:
    head = rng.choice(["", "# escape=`\n", "#escape = \\\n", "# syntax=x\n# escape=`\r\n"])
    return head + "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 40)))


def test_instructions_are_the_reference_reading():
    rng = random.Random(20)
    for _ in range(4000):
        text = _random_dockerfile(rng)
        got = [(ins.name, ins.text, _places(ins.text, ins.cmap))
               for ins in dockerfile._instructions(text)]
        want = [(name, args, _places(args, cmap))
                for name, args, cmap in _reference_instructions(text)]
        assert got == want, repr(text)


def _reference_json_array(text: str, cmap: CharMap) -> list[tuple[str, list]] | None:
    """The exec-form words as they were read before plain elements were sliced: every element
    built character by character."""
    i, n = 0, len(text)
    esc = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}

    def skip() -> None:
        nonlocal i
        while i < n and text[i] in " \t\r\n":
            i += 1

    skip()
    if i >= n or text[i] != "[":
        return None
    i += 1
    words: list[Word] = []
    skip()
    if i < n and text[i] == "]":
        return []
    while True:
        skip()
        if i >= n or text[i] != '"':
            return None
        i += 1
        chars: list[str] = []
        places = MapBuilder()
        while i < n and text[i] != '"':
            if text[i] == "\\":
                if i + 1 >= n:
                    return None
                e = text[i + 1]
                if e in esc:
                    chars.append(esc[e])
                    places.char(cmap.start(i), cmap.end(i + 1))
                    i += 2
                    continue
                if e == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2:i + 6]):
                    chars.append(chr(int(text[i + 2:i + 6], 16)))
                    places.char(cmap.start(i), cmap.end(i + 5))
                    i += 6
                    continue
                return None
            j = re.compile(r'[^"\\]+').match(text, i).end()
            chars.append(text[i:j])
            places.extend(cmap, i, j)
            i = j
        if i >= n:
            return None
        tail = cmap.start(i)
        i += 1
        words.append(Word("".join(chars), places.build(tail) if chars
                          else CharMap(tail, 0, tail=tail), quoted=True))
        skip()
        if i < n and text[i] == ",":
            i += 1
            continue
        if i < n and text[i] == "]":
            i += 1
            skip()
            return [(w.text, _places(w.text, w.cmap)) for w in words] if i == n else None
        return None


_ARRAY_PIECES = ['"', '"', '"a"', '"b c"', ", ", ",", " ", "\n", "\\n", '\\"', "\\u00e9",
                 "\\x", "\\", "]", "["]


def test_exec_form_words_are_the_reference_reading():
    rng = random.Random(21)
    for _ in range(4000):
        body = "[" + "".join(rng.choice(_ARRAY_PIECES) for _ in range(rng.randint(0, 16)))
        if rng.random() < 0.5:
            body = '["a", "b' + rng.choice(["", "\\n"]) + '", "c"]'
        text = "CMD " + body.replace("\n", rng.choice([" \\\n", "\\\n# c\n", "\n"]))
        for ins in dockerfile._instructions(text):
            words = dockerfile._json_array(ins)
            got = None if words is None else [(w.text, _places(w.text, w.cmap)) for w in words]
            assert got == _reference_json_array(ins.text, ins.cmap), repr(text)


def test_a_stage_sees_what_the_stages_it_is_built_from_set(tmp_path, capsys):
    """ENV of a stage over the ENV of the stages it is built from, and a COPY of the first one
    still in the image the last one starts: the script it copied is followed."""
    import json

    from mgpu_lint.cli import main

    (tmp_path / "start.sh").write_text("vllm serve meta-llama/Llama-3.1-8B-Instruct\n")
    (tmp_path / "Dockerfile").write_text(
        "FROM vllm/vllm-openai:v0.30.0 AS base\nENV A=1 B=1\nCOPY start.sh /app/\n"
        "FROM base AS mid\nENV B=2 C=2\nFROM ubuntu AS other\nENV A=9\n"
        'FROM mid\nENV C=3\nENTRYPOINT ["/app/start.sh"]\n')
    assert main(["launches", "--format", "json", str(tmp_path / "Dockerfile")]) == 0
    (la,) = json.loads(capsys.readouterr().out)["launches"]
    assert la["path"].endswith("start.sh")
    assert {k: la["env"][k] for k in "ABC"} == {"A": "1", "B": "2", "C": "3"}


def test_a_path_in_the_image_is_the_normalised_join():
    """_in_image appends a path that stays under the working directory without normalising
    the directory again; every path is what posixpath gives."""
    import posixpath

    rng = random.Random(22)
    parts = ["a", "b", ".", "..", "", "/", "//"]
    for _ in range(5000):
        workdir = posixpath.normpath("/" + "/".join(rng.choice(parts) for _ in range(4)))
        if rng.random() < 0.1:
            workdir = "//" + workdir.lstrip("/")
        path = "/".join(rng.choice(parts) for _ in range(rng.randint(0, 5)))
        if not path:
            continue
        assert dockerfile._in_image(workdir, path) == posixpath.normpath(
            posixpath.join(workdir, path)), (workdir, path)


def test_past_the_longest_path_the_working_directory_is_not_known(tmp_path, capsys,
                                                                   monkeypatch):
    """A WORKDIR longer than a path can be (bounds.MAX_PATH_CHARS) is not known, nor where a
    relative COPY under it goes: the script the image starts is not followed (it might be
    another file), until an absolute WORKDIR is known again."""
    import json

    from mgpu_lint import bounds
    from mgpu_lint.cli import main

    monkeypatch.setattr(bounds, "MAX_PATH_CHARS", 16)
    (tmp_path / "start.sh").write_text("vllm serve meta-llama/Llama-3.1-8B-Instruct\n")
    dockerfile = tmp_path / "Dockerfile"

    def followed(workdirs: str) -> bool:
        dockerfile.write_text(f"FROM vllm/vllm-openai:v0.30.0\n{workdirs}COPY start.sh s.sh\n"
                              'ENTRYPOINT ["./s.sh"]\n')
        assert main(["launches", "--format", "json", str(dockerfile)]) == 0
        return any(la["path"].endswith("start.sh")
                   for la in json.loads(capsys.readouterr().out)["launches"])

    assert followed("WORKDIR /app\nWORKDIR abcd\n")  # /app/abcd/s.sh: 14 characters
    assert not followed("WORKDIR /app\nWORKDIR abcdefghijkl\n")  # /app/abcdefghijkl: 17
    assert followed("WORKDIR /app\nWORKDIR abcdefghijkl\nWORKDIR /app\n")


@pytest.mark.parametrize("env, where", [
    ("ENV CUDA_VISIBLE_DEVICES=0\n", {"line": 4, "column": 26}),
    ("ENV CUDA_VISIBLE_DEVICES 0\n", {"line": 4, "column": 26}),
    ("ENV A=1 \\\n    CUDA_VISIBLE_DEVICES=0\n", {"line": 5, "column": 26}),
])
def test_an_env_value_is_shown_where_it_is_written(tmp_path, capsys, env, where):
    """`ENV KEY=value` (lexed as shell words) was shown at its place in the instruction's text,
    counted from the start of the file: line 1."""
    import json

    from mgpu_lint.cli import main

    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM vllm/vllm-openai:v0.30.0\n# a\n# b\n" + env
                          + 'CMD ["meta-llama/Llama-3.1-8B-Instruct", "-tp", "2"]\n')
    main(["--format", "json", "--exit-zero", str(dockerfile)])
    (mg101,) = [f for f in json.loads(capsys.readouterr().out)["findings"]
                if f["code"] == "MG101"]
    assert "CUDA_VISIBLE_DEVICES at" in mg101["message"]
    assert mg101["related"][0]["range"]["start"] == where
