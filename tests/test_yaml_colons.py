"""A `:` then a non-space in a flow collection (`{image: repo:tag}`, `[--url, http://h:1]`):
libyaml refuses it, YAML 1.2 and Kubernetes read it as part of the scalar.  The text is read by
libyaml with each such `:` in a stand-in character (yamlsrc._read_refused_colons), and the trees
are the ones ruamel's pure composer (which follows YAML 1.2 here) reads, with the same positions;
where that reading cannot be the text's, the pure composer reads it as before."""

from __future__ import annotations

import random

import pytest
from mgpu_lint import yamlsrc
from ruamel.yaml.nodes import MappingNode, ScalarNode


def _tree(node):
    """A node as plain data.  libyaml and the pure composer differ on every text in an implicit
    scalar's tag (libyaml's reader here resolves none) and in where an empty scalar is placed:
    those are left out, the rest (values, styles, explicit tags, positions) compared."""
    if isinstance(node, ScalarNode):
        implicit = not node.style and node.tag.rsplit(":", 1)[-1] in (
            "str", "int", "null", "bool", "float")
        where = None if implicit and node.value == "" else (node.start_mark.index,
                                                            node.end_mark.index)
        return ("S", node.value, node.style or None, None if implicit else node.tag, where)
    where = (node.start_mark.index, node.end_mark.index, node.flow_style, node.tag)
    if isinstance(node, MappingNode):
        return ("M", where, [(_tree(k), _tree(v)) for k, v in node.value])
    return ("Q", where, [_tree(v) for v in node.value])


def _read(text: str) -> list:
    out: list = []
    try:
        for root in yamlsrc.compose_documents(text):
            out.append(_tree(root))
    except yamlsrc.YamlError as exc:
        out.append(("error", type(exc).__name__, exc.message, exc.offset))
    return out


# Scalars as written in a flow collection: most with a `:` libyaml refuses, some with one it
# reads (`"q":1`), some that make the stand-ins unusable (an escape of one, a `#` before it).
_SCALARS = ["a", "b:c", "repo:tag", "http://h:1", "'q:r'", '"d:e"', "k::v", "a:", "é:ü",
            "u/v:w-x", "1", "-x:y", '"\\ue000"', "'a #'", "!!str s:t", "&an v:w", "*an", "don 't"]
_WEIGHTS = [6, 8, 8, 6, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1]


def _scalar(r: random.Random, anchored: list[bool]) -> str:
    s = r.choices(_SCALARS, _WEIGHTS)[0]
    if s.startswith("&"):
        if anchored[0]:
            return "a"
        anchored[0] = True
    if s == "*an" and not anchored[0]:
        return "b:c"
    return s


def _flow(r: random.Random, depth: int, anchored: list[bool]) -> str:
    if depth > 3 or r.random() < 0.35:
        return _scalar(r, anchored)
    sep = r.choice([", ", ",", " , ", ",\n      "])
    if r.random() < 0.5:
        return "[" + sep.join(_flow(r, depth + 1, anchored)
                              for _ in range(r.randint(0, 4))) + "]"
    pairs = []
    for _ in range(r.randint(0, 4)):
        key = _scalar(r, anchored)
        pairs.append(key if r.random() < 0.1 else
                     key + r.choice([": ", " : "] + [":"] * (key[0] in "'\"")) +
                     _flow(r, depth + 1, anchored))
    return "{" + sep.join(pairs) + "}"


def _document(r: random.Random) -> str:
    lines = []
    anchored = [False]
    for i in range(r.randint(1, 5)):
        key = r.choice(["image", "cmd", "k:x", "q-"]) + str(i)
        shape = r.random()
        if shape < 0.55:
            lines.append(f"{key}: {_flow(r, 0, anchored)}")
        elif shape < 0.65:
            lines.append(f"{key}: |\n  run --url http://h:1 [x:y] # c:d")
        elif shape < 0.75:
            lines.append(f"{key}: {_flow(r, 3, anchored)}  # see http://x:1")
        elif shape < 0.85:
            lines.append(f"{key}: \"a #\" # then {_flow(r, 1, anchored)}")
        else:
            lines.append(f"{key}:\n  - {_flow(r, 0, anchored)}\n  - repo:tag")
    return "\n".join(lines) + "\n"


def _text(r: random.Random) -> str:
    head = r.choice(["", "---\n", "%YAML 1.2\n---\n", "# a comment: http://x:1\n"])
    return head + "---\n".join(_document(r) for _ in range(r.randint(1, 3)))


def test_refused_colons_read_by_libyaml_as_the_pure_composer_reads_them(monkeypatch) -> None:
    """On generated texts: where the pure composer reads a text, the new reading is the same
    tree; where it cannot (an alias `*an:` it reads as a name with the `:`, which libyaml and
    go-yaml end at the `:`), the new reading is libyaml's, as for any other file.  A text whose
    stand-ins cannot be used (a `:` after `#` on its line, an escape `"\\ue000"`) is read by the
    pure composer exactly as before."""
    real = yamlsrc._read_refused_colons
    used = []

    def spied(*args):
        got = real(*args)
        used.append(got is not None)
        return got

    r = random.Random(20261207)
    fast = refused = 0
    for _ in range(1500):
        text = _text(r)
        used.clear()
        monkeypatch.setattr(yamlsrc, "_read_refused_colons", spied)
        new = _read(text)
        monkeypatch.setattr(yamlsrc, "_read_refused_colons", lambda *a: None)
        old = _read(text)
        refused += bool(used)
        fast += any(used)
        if old and old[-1][0] == "error" and any(used):
            continue
        assert new == old, text
    # the generated texts exercise both ways (else this test could not fail)
    assert fast > 250 and refused - fast > 500, (refused, fast)


def test_what_holds_no_refused_colon_is_passed_over() -> None:
    """A quoted scalar and a comment are passed over whole: a `:` in them is not replaced
    (libyaml reads it), and a `#` in a quoted scalar is no comment."""
    real = yamlsrc._read_refused_colons
    text = "a: ['x #', b:c, \"d:e\"] # see f:g\n"
    roots, big = real(text, 0, 0)
    assert big is None and [n.value for n in roots[0].value[0][1].value] == ["x #", "b:c", "d:e"]
    assert _read(text) == [("M", (0, 33, False, "tag:yaml.org,2002:map"), [
        (("S", "a", None, None, (0, 1)),
         ("Q", (3, 22, True, "tag:yaml.org,2002:seq"), [
             ("S", "x #", "'", "tag:yaml.org,2002:str", (4, 9)),
             ("S", "b:c", None, None, (11, 14)),
             ("S", "d:e", '"', "tag:yaml.org,2002:str", (16, 21))]))])]


def test_a_stand_in_that_cannot_be_the_texts_is_not_used() -> None:
    real = yamlsrc._read_refused_colons
    # an apostrophe after a blank inside a plain scalar is taken for a quote (to the next
    # one): the `:` after it is left alone, and libyaml refuses it again; then every `:` is
    # replaced, and the reading is right ...
    text = "a: [don 't, b:c, isn 't]\n"
    roots, big = real(text, 0, 0)
    assert [n.value for n in roots[0].value[0][1].value] == ["don 't", "b:c", "isn 't"]
    # ... and so it is with a comment after it (its `:` left alone), and with a quoted ` #`
    # before as well (taken for a comment: the comment's `:` is replaced too, a stand-in
    # outside every scalar but after a comment's `#`)
    for text in ("a: [don 't, b:c, isn 't]  # see http://x:1\n",
                 "a: ['a #', don 't, b:c, isn 't]  # see http://x:1\n"):
        roots, big = real(text, 0, 0)
        assert [n.value for n in roots[0].value[0][1].value][-3:] == ["don 't", "b:c", "isn 't"]
    # a tag is passed over (a stand-in would break it: `!t:x` is one tag) ...
    text = "a: [!t:x b, c:d]\n"
    roots, big = real(text, 0, 0)
    assert [(n.value, n.tag) for n in roots[0].value[0][1].value] == [
        ("b", "!t:x"), ("c:d", "tag:yaml.org,2002:str")]
    # ... unless the guess of one is wrong as well (`!u:v` in a plain scalar): every guess
    # fails, and the pure composer reads the text
    text = "a: [!t:x b, c:d, hi !u:v]\n"
    assert real(text, 0, 0) is None
    assert [v[1:4] for v in _read(text)[0][2][0][1][2]] == [
        ("b", None, "!t:x"), ("c:d", None, None), ("hi !u:v", None, None)]
    # an escape makes a stand-in that no `:` was: not turned into one
    text = 'a: [b:c, "\\ue000"]\n'
    assert real(text, 0, 0) is None
    assert [w[1] for w in _read(text)[0][2][0][1][2]] == ["b:c", "\ue000"]
    # a stand-in the text holds is not used: the next one is
    text = "a: [b:c, \ue000]\n"
    roots, big = real(text, 0, 0)
    assert big is None and [n.value for n in roots[0].value[0][1].value] == ["b:c", "\ue000"]


def test_only_the_documents_after_those_read_are_read_again() -> None:
    text = "a: http://x:1  # b:c\n---\nb: {image: repo:tag}\n---\nc: [d:e]\n"
    docs = list(yamlsrc.compose_documents(text))
    assert [d.value[0][1].value if d.value[0][1].tag.endswith("str") else
            [n.value for n in d.value[0][1].value] for d in docs[:1]] == ["http://x:1"]
    assert docs[1].value[0][1].value[0][1].value == "repo:tag"
    assert [n.value for n in docs[2].value[0][1].value] == ["d:e"]


def test_a_yaml_directive_is_read_by_the_pure_composer() -> None:
    """ruamel's scanner writes a `%YAML` directive's version where only its YAML() front end
    makes room for it: the pure composer's reading failed with an AttributeError message."""
    text = "%YAML 1.2\n---\na: [!t:x b, c:d, hi !u:v]\n"
    assert [v[1] for v in _read(text)[0][2][0][1][2]] == ["b", "c:d", "hi !u:v"]


@pytest.mark.parametrize("levels", [50, yamlsrc.PURE_MAX_DEPTH + 5])
def test_deep_flow_colons_keep_the_depth_guard(levels: int) -> None:
    """libyaml reads the stand-ins' text with the nesting guard of any text (MAX_DEPTH), the
    pure composer with its own (PURE_MAX_DEPTH)."""
    fast = "a: " + "[" * levels + "x:y" + "]" * levels + "\n"
    assert len(list(yamlsrc.compose_documents(fast))) == 1
    slow = "a: " + "[" * levels + "!t:x b, x:y, hi !u:v" + "]" * levels + "\n"
    if levels > yamlsrc.PURE_MAX_DEPTH:
        with pytest.raises(yamlsrc.YamlError, match="nesting deeper"):
            list(yamlsrc.compose_documents(slow))
    else:
        assert len(list(yamlsrc.compose_documents(slow))) == 1
    too_deep = "a: " + "[" * (yamlsrc.MAX_DEPTH + 5) + "x:y" + "]" * (yamlsrc.MAX_DEPTH + 5)
    with pytest.raises(yamlsrc.YamlError, match="nesting deeper"):
        list(yamlsrc.compose_documents(too_deep + "\n"))


def test_a_document_of_too_many_nodes_is_not_read(monkeypatch) -> None:
    """The size guard of any text: the documents before it are read, the large one is an
    error at its start."""
    monkeypatch.setattr(yamlsrc, "MAX_YAML_NODES", 50)
    big = "services:\n" + "".join(f"  s{i}: {{image: repo:tag, command: [serve, m]}}\n"
                                  for i in range(20))
    text = "a: [b:c]\n---\n" + big
    with pytest.raises(yamlsrc.YamlTooLarge) as raised:
        roots = []
        for root in yamlsrc.compose_documents(text):
            roots.append(root)
    assert len(roots) == 1 and raised.value.offset == text.index("---")  # its start
