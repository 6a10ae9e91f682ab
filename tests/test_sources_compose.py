"""Compose values and the words of their commands (linter/sources/compose.py, WordComposer of
linter/sources/commandline.py) against the code they replaced, kept here as the reference:
the same words, character maps (run for run), unresolved references with their spans,
launches and findings, on seeded random inputs."""

from __future__ import annotations

import json
import random
from bisect import bisect_left, bisect_right

import pytest
from mgpu_lint.cli import main
from mgpu_lint.records import fields, replace
from mgpu_lint.shell import split_commands
from mgpu_lint.source import CharMap, MapBuilder, SourceFile, Span, VarRef, Word
from mgpu_lint.sources import commandline, compose, dynamo, kserve
from mgpu_lint.sources import extract


class _OldWordComposer:
    """WordComposer before WordComposer.many (a records.replace per reference, bisection
    per word)."""

    __slots__ = ("outer", "_index")

    def __init__(self, outer: Word) -> None:
        self.outer = outer
        self._index = None

    def __call__(self, inner: Word) -> Word:
        outer = self.outer
        cmap = inner.cmap.compose(outer.cmap)
        if not inner.unresolved and not outer.unresolved:
            return Word(inner.text, cmap, inner.quoted or outer.quoted)
        span = cmap.to_span()
        unresolved = tuple(
            replace(v, span=outer.cmap.span(v.span.start, max(v.span.end, v.span.start)))
            for v in inner.unresolved
        ) + self._overlapping(span)
        return Word(inner.text, cmap, inner.quoted or outer.quoted, unresolved)

    def many(self, words):  # what the callers of many did before it
        return [self(w) for w in words]

    def _overlapping(self, span: Span) -> tuple[VarRef, ...]:
        refs = self.outer.unresolved
        if len(refs) >= 16 and self._index is None:
            starts = [v.span.start for v in refs]
            ends = [v.span.end for v in refs]
            ordered = all(a <= b for a, b in zip(starts, starts[1:])) and \
                all(a <= b for a, b in zip(ends, ends[1:]))
            self._index = (starts, ends) if ordered else False
        if isinstance(self._index, tuple):
            starts, ends = self._index
            return refs[bisect_right(ends, span.start):bisect_left(starts, span.end)]
        return tuple(v for v in refs if v.span.start < span.end and span.start < v.span.end)


def _old_interpolate(doc, node, variables: dict[str, str]) -> Word:
    """compose._interpolate before its verbatim fast path (two copies and two map lookups
    per reference)."""
    from mgpu_lint.cancel import step as cancel_step

    seg = doc.seg(node)
    text = seg.text
    if "$" not in text:
        return Word(text, seg.cmap, quoted=bool(node.style))
    cm = seg.cmap
    budget = doc.source.budget
    chars: list[str] = []
    places = MapBuilder()
    unresolved: list[VarRef] = []
    pos = 0

    def copy(i: int, j: int) -> None:
        chars.append(text[i:j])
        places.extend(cm, i, j)

    for start, end, name, op, default_ in compose._matches(text):
        cancel_step()
        budget.words -= 1
        if budget.words < 0:
            raise compose._OutOfWords(cm.start(start))
        copy(pos, start)
        s, e = cm.start(start), cm.end(end - 1)
        pos = end
        if name is None:  # $$
            chars.append("$")
            places.char(s, e)
            continue
        default = default_ or ""
        value = variables.get(name)
        if op in (":-", "-"):
            if value is None or (op == ":-" and value == ""):
                value = default
        elif op in (":+", "+"):
            value = default if value else ("" if value is not None else None)
        if value is None:
            copy(start, end)
            unresolved.append(VarRef(name, Span(s, e)))
            continue
        chars.append(value)
        places.const(s, e, len(value))
    copy(pos, len(text))
    return Word("".join(chars), places.build(cm.tail), bool(node.style), tuple(unresolved))


def _map_key(m: CharMap) -> tuple:
    return (m.length, m.tail, m.base, m.is_linear, m.runs, tuple(m.iter_runs()))


def _word_key(w: Word) -> tuple:
    return (w.text, w.quoted, w.unresolved, _map_key(w.cmap))


@pytest.fixture
def old_composer(monkeypatch):
    """Puts the old WordComposer and interpolation where every reader finds them."""
    def use() -> None:
        for module in (commandline, compose, kserve, dynamo):
            monkeypatch.setattr(module, "WordComposer", _OldWordComposer)
        monkeypatch.setattr(compose, "_interpolate", _old_interpolate)
    return use


def test_var_ref_fields_are_the_ones_the_composer_copies():
    # WordComposer.many builds a word's references with VarRef(name, span, split, option)
    assert [f.name for f in fields(VarRef)] == ["name", "span", "split", "option"]


def _random_map(rng: random.Random, length: int, parent: int) -> CharMap:
    """A map of ``length`` characters into a parent text of ``parent`` characters: linear,
    or runs of verbatim text, escapes and expansions."""
    if rng.random() < 0.4:
        base = rng.randint(0, max(0, parent - length))
        return CharMap.linear(base, length)
    b = MapBuilder()
    at = rng.randint(0, 5)
    while b.n < length:
        n = min(length - b.n, rng.randint(1, 6))
        kind = rng.random()
        if kind < 0.5:
            b.linear(at, n)
            at += n
        elif kind < 0.75:
            b.const(at, at + rng.randint(2, 5), n)
            at += rng.randint(2, 5)
        else:
            for _ in range(n):
                b.char(at, at + 2)
                at += 2
        at += rng.randint(0, 2)
    return b.build(at)


_SHELL_PIECES = ["vllm", "serve", "m", " ", " ", "${A}", "$A", "${B:-x}", "'", '"', "\\",
                 "--tp=2", "$(", ")", ";", "\n", "x=$A", "${@}", "$1", "a=(", "${a[@]}", "#",
                 "<<E\n", "E\n", "${A}${A}", "-c", "sh"]


def test_composed_words_are_those_the_old_composer_gave():
    """Outer words (linear or not, references in order, out of order, overlapping, more and
    fewer than 16) and the words lexed from them or made up (maps past the outer text, empty
    words, out of order): WordComposer.many and its call give the old composer's words."""
    rng = random.Random(20)
    for trial in range(3000):
        text = "".join(rng.choice(_SHELL_PIECES) for _ in range(rng.randint(0, 30)))
        length = len(text)
        cmap = _random_map(rng, length, length + 40)
        spans, at = [], 0
        for _ in range(rng.choice([0, 1, 3, 15, 16, 17, 40])):
            at += rng.randint(0, 3)
            spans.append((at, at + rng.randint(0, 5)))
            if rng.random() < 0.8:
                at = spans[-1][1]
        if trial % 4 == 0:
            rng.shuffle(spans)
        refs = tuple(VarRef(rng.choice("AB"), Span(a, b), rng.random() < 0.3,
                            rng.choice([None, "--port"])) for a, b in spans)
        outer = Word(text, cmap, rng.random() < 0.2, refs)
        inner: list[Word] = [w for cmd in split_commands(text) for w in (
            *cmd.words, *(value for _, value in cmd.assignments))]
        for _ in range(rng.randint(0, 8)):
            n = rng.randint(0, 6)
            own = tuple(VarRef("C", Span(a, a + rng.randint(-1, 4)), rng.random() < 0.5,
                               rng.choice([None, "--tp"]))
                        for a in (rng.randint(0, length + 3) for _ in range(rng.randint(0, 2))))
            word = Word("w" * n, _random_map(rng, n, length + 4), rng.random() < 0.3, own)
            inner.insert(rng.randint(0, len(inner)), word)
        if rng.random() < 0.3:
            rng.shuffle(inner)
        want = [_word_key(_OldWordComposer(outer)(w)) for w in inner]
        composer = commandline.WordComposer(outer)
        got: list[Word] = []
        i = 0
        while i < len(inner):  # in pieces, as a script's commands are, and one by one
            k = rng.randint(0, 4)
            got.extend(composer.many(inner[i:i + k]) if k else [composer(inner[i])])
            i += k or 1
        assert [_word_key(w) for w in got] == want, (text, spans)


# compose files: commands with references set, unset and defaulted in a .env beside them
_COMMAND_PIECES = ["vllm", "serve", "m", " ", " ", " ", "${A}", "${A}", "$A", "${A:-x}",
                   "${A-y}", "${B}", "${B:-8000}", "${C:+--tp 2}", "${D:?unset}", "${E:-}",
                   "$$", "$$A", "$${A}", "'", '"', "--port", "=", "--tp", "2", "x", "${A}${B}",
                   "$", "{", "}", "${F:-{a}}", "\\", "-c", ";", "&&", "echo", "$(date)",
                   "--max-model-len", "${LEN:-8192}", "${1}"]
_VALUES = ["1", "", "8000", "a b", "--tp 2", "$A", "'q'", '"', "${B}", "x{y}"]


def _compose_text(rng: random.Random) -> str:
    def command() -> str:
        head = rng.choice(["vllm serve m ", "vllm serve ", "--model m ", "",
                           "python3 -m sglang.launch_server --model-path m "])
        return head + "".join(rng.choice(_COMMAND_PIECES) for _ in range(rng.randint(1, 28)))

    def scalar(value: str, indent: str) -> str:
        style = rng.random()
        if style < 0.35:
            return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace(
                "\n", "\\n") + '"'
        if style < 0.6:
            return "'" + value.replace("'", "''").replace("\n", " ") + "'"
        if style < 0.8:
            lines = value.split(" ")
            return rng.choice(["|-", ">-", "|", ">"]) + "".join(
                f"\n{indent}  {line}" for line in lines)
        return value.replace("\n", " ").replace("#", "").replace(": ", "") or "x"

    services = []
    for i in range(rng.randint(1, 3)):
        keys = [f"  s{i}:"]
        form = rng.random()
        if rng.random() < 0.7:
            keys.append("    image: " + rng.choice(["vllm/vllm-openai:v0.30.0", "${IMAGE}",
                                                    "lmsysorg/sglang:v0.5.5", "busybox"]))
        if form < 0.15:
            keys.append('    entrypoint: ["sh", "-c"]')
        elif form < 0.25:
            keys.append("    entrypoint: " + scalar(command(), "    "))
        if form < 0.7:
            keys.append("    command: " + scalar(command(), "    "))
        else:
            keys.append("    command:")
            keys.extend("      - " + scalar(command(), "      ")
                        for _ in range(rng.randint(1, 6)))
        if rng.random() < 0.4:
            keys.append("    environment:")
            keys.append("      X: " + scalar(command(), "      "))
        if rng.random() < 0.3:
            keys.append("    ports: [" + scalar("${P:-8000}:8000", "") + "]")
        services.append("\n".join(keys))
    return "services:\n" + "\n".join(services) + "\n"


def _dotenv(rng: random.Random) -> str:
    names = ["A", "B", "C", "D", "E", "F", "P", "LEN", "IMAGE"]
    return "".join(f"{name}={rng.choice(_VALUES)}\n" for name in names if rng.random() < 0.5)


def _extracted(path: str) -> list:
    text = open(path, encoding="utf-8").read()
    result = extract(SourceFile(path, text, "yaml"))
    launches = [
        (la.engine, la.entry, la.list_form, _word_key(la.program),
         [_word_key(w) for w in la.prefix_args], [_word_key(w) for w in la.args],
         sorted((k, v.value, v.span) for k, v in la.env.items()), la.context.ports)
        for la in result.launches]
    found = [(f.code, f.message, f.span, f.hint) for f in result.findings]
    return [launches, found]


def _compose_files(tmp_path, count: int, seed: int):
    rng = random.Random(seed)
    for i in range(count):
        folder = tmp_path / f"c{i}"
        folder.mkdir()
        if rng.random() < 0.7:
            (folder / ".env").write_text(_dotenv(rng))
        path = folder / "compose.yaml"
        path.write_text(_compose_text(rng))
        yield str(path)


def test_compose_launches_are_those_of_the_old_code(tmp_path, old_composer):
    """Generated compose files with a .env (references set, unset, empty and defaulted,
    `$$`, quotes, exec and shell forms, `sh -c`, YAML's quoting and block styles): the same
    launches, words with their maps and references, and reading findings."""
    paths = list(_compose_files(tmp_path, 1500, 21))
    new = [_extracted(p) for p in paths]
    assert sum(bool(n[0]) for n in new) > 500  # most of them launch an engine
    old_composer()
    for path, got in zip(paths, new):
        assert got == _extracted(path), open(path).read()


def test_compose_findings_are_those_of_the_old_code(tmp_path, capsys, old_composer):
    """The findings of the whole lint (JSON) of generated compose files, as the old code
    gave them."""
    paths = list(_compose_files(tmp_path, 200, 22))
    main(["--format", "json", "--exit-zero", *paths])
    new = capsys.readouterr().out
    assert len(json.loads(new)["findings"]) > 100
    old_composer()
    main(["--format", "json", "--exit-zero", *paths])
    assert new == capsys.readouterr().out


_VALUE_PIECES = ["${A}", "${A}", "$A", "${A:-x}", "${A-}", "${B:-}", "${B+y}", "${C:+1}",
                 "${D:?e}", "${E}", "$$", "$$A", "$", "{", "}", "${F:-{a}}", " ", " ", "x",
                 "xy", "=", "'", '"', "\\", "${N", "$1", "${A}${B}", "${A}x", "a$B"]


def _values(rng: random.Random):
    """A value of pieces, written as YAML in a plain, quoted or block scalar."""
    value = "".join(rng.choice(_VALUE_PIECES) for _ in range(rng.randint(1, 24)))
    style = rng.random()
    if style < 0.3:
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if style < 0.5:
        return "'" + value.replace("'", "''") + "'"
    if style < 0.6:
        return "|-\n  " + value.replace(" ", "\n  ")
    if style < 0.7:
        return ">\n  " + value.replace(" ", "\n  ")
    plain = value.replace("#", "").replace(": ", "").replace("'", "").replace('"', "")
    return "x" + plain.strip()


def test_interpolated_values_are_those_of_the_old_code():
    """Values of references set (to one character, several, nothing), unset, defaulted,
    `$$`, in every YAML style (a slice of the file or not), and budgets that run out inside
    them: the same word, map run for run, unresolved references, words left and the place
    where they ran out."""
    from mgpu_lint.sources.yamlnodes import Doc
    from mgpu_lint.yamlsrc import compose_documents

    rng = random.Random(23)
    checked = linear = 0
    for _ in range(400):
        text = "".join(f"- {_values(rng)}\n" for _ in range(10))
        variables = {name: rng.choice(["1", "", "ab", "a b", "$", "--tp 2"])
                     for name in "ABCDEF" if rng.random() < 0.5}
        (root,) = compose_documents(text)
        for node in root.value:
            words = rng.choice([10 ** 6, rng.randint(0, 12)])
            got = []
            for interpolate in (compose._interpolate, _old_interpolate):
                doc = Doc(SourceFile("c.yaml", text, "yaml"), text)
                doc.source.budget.words = words
                try:
                    w = interpolate(doc, node, variables)
                    got.append((_word_key(w), doc.source.budget.words))
                except compose._OutOfWords as stop:
                    got.append(("out", stop.args, doc.source.budget.words))
            assert got[0] == got[1], (text[node.start_mark.index:node.end_mark.index],
                                      variables)
            checked += 1
            linear += doc.seg(node).cmap.is_linear
    assert checked == 4000 and linear > 1000
