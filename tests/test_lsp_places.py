"""Where the language server puts "disable" comments (`lsp.CommentPlaces`, one reading of each
text for all of a lint's findings) against the answers the server gave before it, when it read
the text again for each finding (the reference below: a tokenisation of the shell text up to
the line, a composition of the YAML, a scan of the Markdown fences per finding)."""

from __future__ import annotations

import functools
import random
from types import SimpleNamespace

from mgpu_lint.lsp import CommentPlaces, _disable_edit
from mgpu_lint.source import SourceFile, Span

# -- the reference: the per-finding answers as lsp.py gave them before CommentPlaces --------


def _ref_disable_edit(f):  # type: ignore[no-untyped-def]
    src = f.source
    if src.path.endswith(".json") or not src.text:
        return None
    line, _ = src.line_col(f.span.start)
    if src.kind == "markdown":
        found = _ref_markdown_comment_line(src.text, f.span.start, line)
    else:
        found = _ref_comment_line(src.kind, src, f.span.start, line)
    if found is None:
        return None
    text = src.line_text(found)
    indent = text[:len(text) - len(text.lstrip())]
    start = src.line_starts()[found - 1]
    return Span(start, start), f"{indent}# mgpu-lint: disable={f.code}\n"


def _ref_comment_line(kind, src, offset, line):  # type: ignore[no-untyped-def]
    if kind == "yaml":
        anchor = _ref_yaml_anchor_line(src, offset, line)
        if anchor is False:
            return None
        line = anchor or line
    while line > 1 and src.line_text(line - 1).rstrip().endswith("\\"):
        line -= 1
    if kind == "shell" and not _ref_shell_line_free(src.text, src.line_starts()[line - 1]):
        return None
    return line


@functools.lru_cache(maxsize=4)
def _ref_lexed(text):  # type: ignore[no-untyped-def]
    """The tokens and here-document bodies the reference lexed per finding, kept for the
    test's time only (the scan below is the reference's)."""
    from mgpu_lint.shell import _tokens, split_commands

    return list(_tokens(text)), [body for cmd in split_commands(text) for body in cmd.heredocs]


def _ref_shell_line_free(text, at):  # type: ignore[no-untyped-def]
    tokens, bodies = _ref_lexed(text)
    for ttype, value, start in tokens:
        if start >= at:
            break
        if ttype == "BAD_QUOTE":
            return False
        if start + len(value) > at and "\n" in value and ttype in (
                "SQ", "DQ", "ANSI", "CMDSUB", "BACKTICK", "PARAM"):
            return False
    if "<<" in text:
        if any(body.start <= at <= body.end for body in bodies):
            return False
    return True


def _ref_markdown_comment_line(text, offset, line):  # type: ignore[no-untyped-def]
    from mgpu_lint.sources import markdown as md

    lines, offsets = md._lines(text)
    for lang, body, fence, close in md._blocks(lines, offsets):
        if not fence + 1 < line <= close:
            continue
        if lang in md.YAML_LANGS:
            kind = "yaml"
        elif (lang in md.SHELL_LANGS or not lang) and lang not in md._CONSOLE and \
                not any(md._PROMPT.match(b) for _, b in body):
            kind = "shell"
        else:
            return None
        begin = offsets[fence + 1] if fence + 1 < len(offsets) else len(text)
        end = offsets[close] if close < len(offsets) else len(text)
        block = SourceFile("<block>", text[begin:end], kind)
        found = _ref_comment_line(kind, block, offset - begin, line - fence - 1)
        return None if found is None else found + fence + 1
    return None


@functools.lru_cache(maxsize=4)
def _ref_roots(text):  # type: ignore[no-untyped-def]
    """The composition the reference made per finding, kept for the test's time only (the
    same nodes each time; the walk below is the reference's)."""
    from mgpu_lint.yamlsrc import YamlError, compose_documents

    try:
        return list(compose_documents(text))
    except (YamlError, RecursionError):
        return None


def _ref_yaml_anchor_line(src, offset, line):  # type: ignore[no-untyped-def]
    roots = _ref_roots(src.text)
    if roots is None:
        return False

    def inside(node):  # type: ignore[no-untyped-def]
        start = node.start_mark.index
        return start <= offset < max(node.end_mark.index, start + 1)

    for root in roots:
        if not inside(root):
            continue
        named = None
        node, steps = root, 0
        while node is not None and steps < 200:
            steps += 1
            if node.id == "scalar":
                if node.start_mark.line + 1 >= line:
                    return None
                return named if named is not None else False
            nxt = None
            if node.id == "mapping":
                for k, v in node.value:
                    if inside(k):
                        return None
                    if inside(v):
                        nxt = v
                        break
            else:
                for item in node.value:
                    if inside(item):
                        if item.id == "mapping":
                            for k, v in item.value:
                                if k.id == "scalar" and k.value == "name" and v.id == "scalar":
                                    named = k.start_mark.line + 1
                        nxt = item
                        break
            node = nxt
        return None
    return None


# -- random texts ------------------------------------------------------------------------

SHELL = ["vllm serve m -tp 2\n", "echo 'a\nb' x\n", 'sh -c "one\ntwo"\n', "x=$(\necho y)\n",
         "`a\nb`\n", "${A:-\nb}\n", "$'q\\n\nr'\n", "cat <<EOF\nbody 'x\nEOF\n",
         "cat <<-'E' >f\n\tb\n\tE\n", "a \\\n", "  b \\\n", "c\n", "# it's\n", "w #z\n",
         "echo 'open\n", '"\n', "\n", "  \n", "\r\n", "f() {\n", "}\n", "<<X\n", "X\n"]
YAML = ["a: 1\n", "- name: c\n", "  image: x\n", "  args: [p, q]\n", "  command: >-\n",
        "    exec vllm serve m\n", "    --tp 2\n", "  s: |\n", "    one\n", "    two\n",
        "---\n", "k: &A {x: 1}\n", "m: *A\n", "<<: *A\n", "- - name: d\n", "    - q\n",
        "key: 'multi\n", "  line'\n", "p: \"x\n", "  y\"\n", "# c\n", "\n", "[1,\n", " 2]\n",
        "? long\n", ": v\n", "-\n", "  - name: e\n", "    v: >\n", "      f\n"]
PROSE = ["# Title\n", "text\n", "\n", "```\n", "```yaml\n", "```bash\n", "```console\n",
         "```python\n", "~~~sh\n", "~~~\n", "$ vllm serve m\n", "  ```yaml\n", "  ```\n"]


def _texts(rng: random.Random, pieces: list[str], count: int, most: int) -> list[str]:
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(1, most)))
            for _ in range(count)]


def _yaml(rng: random.Random, anchors: list[str], indent: str = "", depth: int = 0) -> str:
    """A YAML mapping that composes: named list items (nested), block scalars of several
    lines, multi-line quoted and flow values, anchors and aliases (to ``anchors``, the ones
    defined before in the document)."""
    out = []
    for i in range(rng.randint(1, 4)):
        key = rng.choice(("name", "args", "command", "spec", "x%d" % i))
        pick = rng.randrange(8 if depth < 3 else 5)
        if pick == 0:
            out.append(f"{indent}{key}: v{i}\n")
        elif pick == 1:
            out.append(f"{indent}{key}: {rng.choice('|>')}{rng.choice(('', '-'))}\n" +
                       "".join(f"{indent}  line {j} --tp 2\n" for j in range(rng.randint(1, 4))))
        elif pick == 2:
            out.append(f"{indent}{key}: 'one\n{indent}  two'\n")
        elif pick == 3:
            out.append(f"{indent}{key}: [p,\n{indent}  q, 'r\n{indent}  s']\n")
        elif pick == 4 and (rng.random() < 0.5 or not anchors):
            anchors.append(f"a{len(anchors)}")
            out.append(f"{indent}{key}: &{anchors[-1]} plain\n{indent}  folded on\n")
        elif pick == 4:
            out.append(f"{indent}{key}: *{rng.choice(anchors)}\n")
        elif pick == 5:
            out.append(f"{indent}{key}:\n" + _yaml(rng, anchors, indent + "  ", depth + 1))
        else:
            out.append(f"{indent}{key}:\n")
            for _ in range(rng.randint(1, 3)):
                item = _yaml(rng, anchors, indent + "  ", depth + 1)
                out.append(f"{indent}- " + item[len(indent) + 2:])
    return "".join(out)


def _markdown(rng: random.Random) -> str:
    out = []
    for _ in range(rng.randint(1, 8)):
        out.append(rng.choice(PROSE))
        if rng.random() < 0.5:
            out.append("".join(rng.choice(rng.choice((SHELL, YAML)))
                               for _ in range(rng.randint(0, 6))))
    return "".join(out)


def _offsets(rng: random.Random, text: str) -> list[int]:
    """Every line start and end, and random offsets."""
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    ends = [i for i, c in enumerate(text) if c == "\n"]
    return sorted({*starts, *ends, *(rng.randrange(len(text) + 1) for _ in range(20))})


def _same_answers(path: str, kind: str, texts: list[str], rng: random.Random) -> int:
    asked = 0
    for text in texts:
        src = SourceFile(path, text, kind)
        places = CommentPlaces()  # one for all of the text's findings, as a lint's
        for at in _offsets(rng, text):
            f = SimpleNamespace(source=src, span=Span(at, at), code="MG013")
            assert _disable_edit(f, places) == _ref_disable_edit(f), (text, at)  # type: ignore
            asked += 1
    return asked


def test_shell_comment_places_are_todays_answers() -> None:
    """Random scripts of multi-line quoted strings, `$(…)`, backquotes, `${…}`, here-documents
    (quoted, `<<-`, unterminated), continuations, unbalanced quotes and comments: every line's
    answer is the one of a tokenisation up to that line."""
    rng = random.Random(20)
    assert _same_answers("run.sh", "shell", _texts(rng, SHELL, 400, 14), rng) > 4000


def test_yaml_comment_places_are_todays_answers() -> None:
    """Random YAML of block scalars, multi-line quoted and flow values, named list items
    (nested), anchors, aliases and merge keys (an alias's node is its anchor's, out of the
    text's order), several documents and texts that do not compose."""
    rng = random.Random(21)
    texts = ["---\n".join(_yaml(rng, []) for _ in range(rng.randint(1, 3))) for _ in range(150)]
    assert _same_answers("k.yaml", "yaml", texts + _texts(rng, YAML, 150, 16), rng) > 4000


def test_markdown_and_dockerfile_comment_places_are_todays_answers() -> None:
    """Markdown of fenced YAML, shell, console and other blocks (unclosed, indented) between
    prose; a Dockerfile's continued lines."""
    rng = random.Random(22)
    assert _same_answers("README.md", "markdown", [_markdown(rng) for _ in range(300)],
                         rng) > 3000
    docker = ["RUN a \\\n", "  b \\\n", "CMD [\"x\"]\n", "\n", "# c \\\n"]
    assert _same_answers("Dockerfile", "dockerfile", _texts(rng, docker, 200, 12), rng) > 1000
    assert _same_answers("c.json", "yaml", ["{\"a\": 1}\n"], rng) > 0
