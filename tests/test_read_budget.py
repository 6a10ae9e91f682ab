"""What one file may cost (linter/bounds.py): shell words lexed, launches checked, findings of
one code listed per launch.  Past each, one finding says where reading stopped or how many
were summed up; nothing after the limit is guessed at."""

from __future__ import annotations

import json
import os

import pytest
from mgpu_lint import bounds, runner
from mgpu_lint.cli import main

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _findings(capsys: pytest.CaptureFixture[str], path) -> list[dict]:
    main(["--format", "json", "--exit-zero", str(path)])
    return json.loads(capsys.readouterr().out)["findings"]


def test_reading_stops_where_the_shell_words_run_out(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(bounds, "MAX_SHELL_WORDS", 40)
    script = tmp_path / "run.sh"
    # 1 + 3 words, then 34 of echo, then the launch that would be an MG102 (words 39 to 43)
    script.write_text(f"A=1\nvllm serve {MODEL}\necho " + "x " * 33 + "\n"
                      "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 3\n")
    found = _findings(capsys, script)
    assert [(f["code"], f["severity"], f["range"]["start"]) for f in found] == [
        ("MG001", "warning", {"line": 4, "column": 1})]
    assert "more than 40 words" in found[0]["message"]


def test_the_budget_is_the_files_across_its_texts(capsys, tmp_path, monkeypatch):
    """Each `sh -c` script of a manifest is a text of its own; together they spend one budget,
    and the place where it ran out is in the file."""
    monkeypatch.setattr(bounds, "MAX_SHELL_WORDS", 20)
    containers = "".join(f"""
    - name: c{i}
      image: vllm/vllm-openai:v0.30.0
      command: ["sh", "-c", "echo a b c; vllm serve {MODEL} --port 80{i}0"]""" for i in range(4))
    pod = tmp_path / "pod.yaml"
    pod.write_text(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:"
                   f"{containers}\n")
    found = _findings(capsys, pod)
    cut = [f for f in found if f["code"] == "MG001"]
    assert len(cut) == 1 and cut[0]["range"]["start"]["line"] == 14  # the third container's
    assert not [f for f in found if f["code"] == "MG017"]


_DOCKERFILE = ('FROM vllm/vllm-openai:v0.30.0\nCOPY ["a", "b"]\nENV A=1 B=2\n'
               'CMD ["meta-llama/Llama-3.1-70B-Instruct", "-tp", "3"]\n')


@pytest.mark.parametrize("limit, want", [
    (7, [("MG701", 1, 6), ("MG102", 4, 51)]),  # 2 + 2 + 3 words: all read
    (6, [("MG001", 4, 5)]),  # the CMD's last word is one too many: not its launch either
    (3, [("MG001", 3, 9)]),  # the ENV's second (B=2): nothing after it is read
])
def test_a_dockerfiles_exec_form_words_spend_the_files_budget(capsys, tmp_path, monkeypatch,
                                                              limit, want):
    """The elements of COPY and CMD arrays are words as ENV's are, counted in the order of the
    file; where they run out is where reading stops, and no launch is made of what is left."""
    monkeypatch.setattr(bounds, "MAX_SHELL_WORDS", limit)
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(_DOCKERFILE)
    found = _findings(capsys, dockerfile)
    assert [(f["code"], f["range"]["start"]["line"], f["range"]["start"]["column"])
            for f in found] == want


@pytest.mark.parametrize("limit, want", [
    (4, [("MG701", 1, 6), ("MG102", 6, 51)]),  # FROM, both lines of the RUN, CMD
    (3, [("MG001", 6, 1)]),  # the CMD is one line too many: no launch of what was read
    (2, [("MG001", 4, 1)]),  # the RUN's second line
])
def test_a_dockerfiles_lines_past_the_limit_are_not_read(capsys, tmp_path, monkeypatch, limit,
                                                         want):
    """Lines of instructions are counted (comment and blank lines between them are not); the
    instruction that crosses the limit is where reading stops, and its last stage is then not
    known: nothing of the file is checked."""
    monkeypatch.setattr(bounds, "MAX_DOCKERFILE_LINES", limit)
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text('FROM vllm/vllm-openai:v0.30.0\n# a comment\n\nRUN echo \\\n  a\n'
                          'CMD ["meta-llama/Llama-3.1-70B-Instruct", "-tp", "3"]\n')
    found = _findings(capsys, dockerfile)
    assert [(f["code"], f["range"]["start"]["line"], f["range"]["start"]["column"])
            for f in found] == want
    assert limit > 3 or "more than" in found[0]["message"]


def test_launches_past_the_limit_are_not_checked(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(bounds, "MAX_LAUNCHES", 3)
    script = tmp_path / "run.sh"
    script.write_text("".join(f"vllm serve {MODEL} --port 800{i}\n" for i in range(5))
                      + "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 3\n")
    found = _findings(capsys, script)
    assert [(f["code"], f["range"]["start"]["line"]) for f in found] == [("MG001", 4)]
    assert "more than 3 launches" in found[0]["message"]


def test_findings_of_one_code_past_the_limit_are_summed_up(capsys, tmp_path):
    n = bounds.MAX_FINDINGS_PER_CODE + 50
    script = tmp_path / "run.sh"
    script.write_text(f"vllm serve {MODEL} " + " ".join(f"w{i}" for i in range(n)) + "\n")
    found = [f for f in _findings(capsys, script) if f["code"] == "MG004"]
    listed, summary = found[:-1], found[-1]
    assert len(listed) == bounds.MAX_FINDINGS_PER_CODE
    assert all("unexpected argument" in f["message"] for f in listed)
    assert summary["message"].startswith("and 50 more MG004 findings of this launch")
    assert summary["severity"] == "error"
    col = len(f"vllm serve {MODEL} ") + sum(len(f"w{i} ") for i in range(100)) + 1
    assert summary["range"]["start"] == {"line": 1, "column": col}
    assert summary["related"][0]["message"] == "the last of them"


def test_findings_of_one_code_past_the_files_limit_are_summed_up(capsys, tmp_path):
    # 11 launches of 110 stray words: each lists 100 and sums up 10 (1,111 MG004 findings in
    # all); the file lists 1,000 of them, and the rest stand for 129 (9 + 10 of the tenth
    # launch, 100 + 10 of the eleventh)
    assert bounds.MAX_FINDINGS_PER_FILE_CODE == 1_000
    script = tmp_path / "run.sh"
    script.write_text("".join(
        f"vllm serve {MODEL} " + " ".join(f"w{i}" for i in range(110)) + "\n"
        for _ in range(11)))
    found = [f for f in _findings(capsys, script) if f["code"] == "MG004"]
    listed, summary = found[:-1], found[-1]
    assert len(listed) == 1_000
    assert summary["message"] == ("and 129 more MG004 findings in this file from here on, not "
                                  "listed one by one (the first 1,000 are)")
    assert summary["data"] == {"not_listed": 129}
    assert summary["severity"] == "error"
    # at the 92nd stray word of the tenth launch, the first left out; the last is the eleventh's
    # summary, at its 101st word
    col = len(f"vllm serve {MODEL} ") + sum(len(f"w{i} ") for i in range(91)) + 1
    assert summary["range"]["start"] == {"line": 10, "column": col}
    col = len(f"vllm serve {MODEL} ") + sum(len(f"w{i} ") for i in range(100)) + 1
    assert summary["related"] == [{"path": str(script), "message": "the last of them",
                                   "range": {"start": {"line": 11, "column": col},
                                             "end": {"line": 11, "column": col + 4}}}]
    # the launches' own summaries say how many they stand for
    assert [f["data"] for f in listed if f.get("data")] == [{"not_listed": 10}] * 9


def _where(found: list[dict]) -> list[tuple[str, int]]:
    """Code and line of the findings about reading (MG001, MG002) and of the one an unknown
    flag gets (MG004): what shows which parts of a file were read."""
    return [(f["code"], f["range"]["start"]["line"]) for f in found
            if f["code"] in ("MG001", "MG002", "MG004")]


def _pod(i: int, args: str = "") -> str:
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec:\n  containers:\n"
            f"  - name: c\n    image: vllm/vllm-openai:v0.30.0\n"
            f"    command: [vllm, serve, {MODEL}, --port, '80{i}0'{args}]\n"
            f"    resources: {{limits: {{nvidia.com/gpu: 1}}}}\n")


def test_yaml_documents_past_the_launch_limit_are_not_read(capsys, tmp_path, monkeypatch):
    """Documents are read as they are composed: past the limit the rest of the file is not
    even composed, so a syntax error there is not reported either."""
    monkeypatch.setattr(bounds, "MAX_LAUNCHES", 3)
    pods = tmp_path / "pods.yaml"
    pods.write_text("---\n".join(_pod(i) for i in range(5)) + "---\nkind: [\n")
    found = _findings(capsys, pods)
    assert _where(found) == [("MG001", 38)]  # the fourth pod's command
    assert "more than 3 launches" in [f for f in found if f["code"] == "MG001"][0]["message"]
    monkeypatch.setattr(bounds, "MAX_LAUNCHES", 10)
    assert [c for c, _ in _where(_findings(capsys, pods))] == ["MG002"]


def test_compose_services_and_markdown_blocks_past_the_launch_limit(capsys, tmp_path,
                                                                    monkeypatch):
    monkeypatch.setattr(bounds, "MAX_LAUNCHES", 2)
    compose = tmp_path / "compose.yaml"
    compose.write_text("services:\n" + "".join(
        f"  s{i}:\n    image: vllm/vllm-openai:v0.30.0\n    command: serve {MODEL} --port 80{i}0\n"
        for i in range(4)))
    found = _findings(capsys, compose)
    assert _where(found) == [("MG001", 9)]
    doc = tmp_path / "README.md"
    doc.write_text("".join(f"# {i}\n\n```bash\nvllm serve {MODEL} --port 80{i}0\n```\n\n"
                           for i in range(3)) + "```bash\nvllm serve m -tp 3\n```\n")
    found = _findings(capsys, doc)
    assert _where(found) == [("MG001", 16)]


def test_a_yaml_document_of_too_many_nodes_is_not_read(capsys, tmp_path):
    """The documents before it are read; it and the ones after are not (one MG001 where it
    begins), however they are written."""
    n = bounds.MAX_YAML_NODES
    big = tmp_path / "big.yaml"
    big.write_text(_pod(1, ", --tensr-parallel-size, '2'") + "---\n" + _pod(2, ", x" * n)
                   + "---\n" + _pod(3, ", --tensr-parallel-size, '2'"))
    found = _findings(capsys, big)
    assert _where(found) == [
        ("MG004", 8), ("MG001", 10)]
    assert [f for f in found if f["code"] == "MG001"][0]["message"].startswith("this YAML document has more than 250,000 nodes")
    # block style: one node a line
    block = tmp_path / "block.yaml"
    block.write_text("services:\n  s:\n    image: vllm/vllm-openai:v0.30.0\n    command:\n"
                     + "      - a\n" * n)
    assert _where(_findings(capsys, block)) == [
        ("MG001", 1)]
    # as many characters that are only a string: read
    one = tmp_path / "one.yaml"
    one.write_text(_pod(1, ", --tensr-parallel-size, '2'") + "    env: [{name: X, value: '"
                   + "a:b," * n + "'}]\n")
    assert [c for c, _ in _where(_findings(capsys, one))] == ["MG004"]


_NODE_EVENTS = ("ScalarEvent", "MappingStartEvent", "SequenceStartEvent")


def _events_per_document(text: str, names: tuple[str, ...] = _NODE_EVENTS) -> list[int]:
    """How many of the parser's events named ``names`` each document of ``text`` has ([] for
    a text the parser refuses)."""
    from ruamel.yaml.cyaml import CParser

    parser, counts = CParser(text), []
    try:
        while True:
            name = type(parser.get_event()).__name__
            if name == "DocumentStartEvent":
                counts.append(0)
            elif name in names:
                counts[-1] += 1
            elif name == "StreamEndEvent":
                return counts
    except Exception:  # noqa: BLE001 - the fixtures of invalid YAML
        return []
    finally:
        parser.dispose()


def test_a_files_yaml_past_its_nodes_is_not_read(capsys, tmp_path, monkeypatch):
    """The documents are read while the nodes composed in the file stay within
    MAX_FILE_YAML_NODES; the one that passes it and the rest are not (one MG001 where it
    begins).  Thirteen documents of 240,000 flow items each (9.4 MiB) took 32 s."""
    from mgpu_lint.yamlsrc import compose_documents, composed_nodes

    pods = [_pod(i, ", --tensr-parallel-size, '2'") for i in range(3)]
    sizes = [composed_nodes(next(compose_documents(p))) for p in pods]
    path = tmp_path / "pods.yaml"
    path.write_text("---\n".join(pods))
    lines = [1 + sum(p.count("\n") + 1 for p in pods[:i]) for i in range(3)]
    monkeypatch.setattr(bounds, "MAX_FILE_YAML_NODES", sizes[0] + sizes[1])
    assert _where(_findings(capsys, path)) == [
        ("MG004", lines[0] + 7), ("MG004", lines[1] + 7), ("MG001", lines[2])]
    monkeypatch.setattr(bounds, "MAX_FILE_YAML_NODES", sizes[0] + sizes[1] - 1)
    found = _findings(capsys, path)
    assert _where(found) == [("MG004", lines[0] + 7), ("MG001", lines[1])]
    assert found[-1]["message"] == (
        f"this file's YAML passes {sizes[0] + sizes[1] - 1:,} nodes in this document (no "
        "deployment's file comes close): it and the YAML after it are not read")
    monkeypatch.setattr(bounds, "MAX_FILE_YAML_NODES", sum(sizes))
    assert [c for c, _ in _where(_findings(capsys, path))] == ["MG004"] * 3


def test_a_markdown_files_yaml_blocks_share_its_nodes(capsys, tmp_path, monkeypatch):
    """Its YAML blocks spend one budget: the block that passes it gets the MG001 (even one
    naming no engine, whose syntax is not reported), the YAML blocks after it are not read
    and get none; its shell blocks are still read."""
    from mgpu_lint.yamlsrc import compose_documents, composed_nodes

    pod = _pod(1, ", --tensr-parallel-size, '2'")
    other = "items: [a, b, c]\n"
    n = composed_nodes(next(compose_documents(pod)))
    monkeypatch.setattr(bounds, "MAX_FILE_YAML_NODES", n + 3)
    doc = tmp_path / "README.md"
    doc.write_text(f"```yaml\n{pod}```\n\n```yaml\n{other}```\n\n```yaml\n{pod}```\n\n"
                   "```bash\nvllm serve m --tensr-parallel-size 2\n```\n")
    found = _findings(capsys, doc)
    # the first pod's command (in its block's line 9), the second block's first node, the
    # bash block's launch; not the third block's pod
    assert _where(found) == [("MG004", 9), ("MG001", 14), ("MG004", 30)]
    cut = [f for f in found if f["code"] == "MG001"][0]
    assert "it and the YAML after it are not read" in cut["message"]


@pytest.mark.filterwarnings("ignore::ruamel.yaml.error.ReusedAnchorWarning")
def test_the_nodes_counted_are_the_composers_nodes():
    """yamlsrc.composed_nodes is the parser's node and alias events of each document, on
    every YAML fixture (an alias counts once, what it names is not counted again)."""
    from pathlib import Path

    from mgpu_lint import yamlsrc

    root = Path(__file__).parent.parent / "fixtures"
    checked = 0
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(root.rglob("*.y*ml"))]
    texts += ["a: &x [1, {b: *x}]\nc: *x\nd: &y e\nf: *y\n", "- - - a\n", "{a, b, c}"]
    for text in texts:
        want = [n for n in _events_per_document(text, _NODE_EVENTS + ("AliasEvent",)) if n]
        if not want:
            continue  # a text libyaml refuses (or of no nodes)
        try:
            roots = list(yamlsrc.compose_documents(text))
        except yamlsrc.YamlError:  # too deep or too large to compose
            continue
        assert [yamlsrc.composed_nodes(r) for r in roots] == want, text[:200]
        checked += len(roots)
    assert checked > 200


def test_a_rayservice_serve_config_of_too_many_nodes_is_not_read(capsys, tmp_path):
    """serveConfigV2 is YAML inside a YAML string, composed on its own: a document of it with
    too many nodes gets the MG001 the file's own documents get, where it begins; the documents
    of the string before it are read."""
    def app(extra: str) -> str:
        return ("    applications:\n    - import_path: ray.serve.llm:build_openai_app\n"
                "      args:\n        llm_configs:\n"
                f"        - model_loading_config: {{model_id: {MODEL}}}\n"
                f"          engine_kwargs: {{tensr_parallel_size: 2}}\n{extra}")
    service = tmp_path / "rayservice.yaml"
    service.write_text(
        "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: llm}\nspec:\n"
        "  serveConfigV2: |\n" + app("") + "    ---\n"
        + app("          filler: [" + "a," * bounds.MAX_YAML_NODES + "]\n")
        + "  rayClusterConfig:\n    workerGroupSpecs:\n    - template:\n        spec:\n"
        "          containers:\n          - name: w\n            image: rayproject/ray:2.44.0\n"
        "            resources: {limits: {nvidia.com/gpu: 2}}\n")
    found = _findings(capsys, service)
    assert _where(found) == [("MG004", 11), ("MG001", 12)]  # at its `---`, as in a file
    cut = [f for f in found if f["code"] == "MG001"][0]
    assert cut["range"]["start"]["column"] == 5
    assert "rest of serveConfigV2" in cut["message"]


def test_pod_templates_after_many_nodes_are_read(capsys, tmp_path):
    """A document without aliases is searched for pod templates to its end: one of 210,000
    nodes before its template (under bounds.MAX_YAML_NODES) had its launch left out, with no
    finding (the search stopped at 200,000 visits)."""
    pod = tmp_path / "deploy.yaml"
    pod.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  finalizers: ["
        + "a," * 210_000 + "a]\nspec:\n  template:\n    spec:\n      containers:\n"
        f"      - {{name: c, image: 'vllm/vllm-openai:v0.30.0', command: [vllm, serve, {MODEL}, "
        "--tensr-parallel-size, '2']}\n")
    assert _where(_findings(capsys, pod)) == [("MG004", 10)]


def _aliased(before: str, after: str) -> str:
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n" + before
            + "spec:\n  template:\n    spec:\n      containers:\n"
            f"      - {{name: c, image: 'vllm/vllm-openai:v0.30.0', command: [vllm, serve, {MODEL}, "
            "--tensr-parallel-size, '2']}\n" + after)


def test_aliases_before_a_pod_template_are_searched_once(capsys, tmp_path, monkeypatch):
    """A list aliased many times before the pod template is searched once: the search
    stopped at its visit bound before the template, and the launch was left out, with no
    finding."""
    from mgpu_lint.sources import kubernetes

    monkeypatch.setattr(kubernetes, "MAX_VISITS", 1_000)
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_aliased("x: &a [" + "a," * 100 + "a]\ny: [" + "*a," * 100 + "*a]\n", ""))
    assert _where(_findings(capsys, bomb)) == [("MG004", 10)]


def test_an_aliased_pod_template_counts_its_nodes_each_time(capsys, tmp_path, monkeypatch):
    """A pod template listed again and again through an alias counts its nodes each time it
    is found: past the bound, reading stops there (MG001).  A template of 200 containers
    listed 20,000 times (72 KB) ran past 100 s."""
    from mgpu_lint.sources import kubernetes

    monkeypatch.setattr(kubernetes, "MAX_VISITS", 1_000)
    containers = ", ".join(f"{{name: c{i}, image: busybox, command: [sh, -c, 'echo {i}']}}"
                           for i in range(10))
    many = tmp_path / "many.yaml"
    many.write_text(_aliased("", f"x: &p {{template: {{spec: {{containers: [{containers}]}}}}}}\n"
                             "groups: [" + "*p, " * 500 + "*p]\n"))
    found = _findings(capsys, many)
    assert _where(found) == [("MG004", 8), ("MG001", 9)]
    cut = [f for f in found if f["code"] == "MG001"][0]
    assert cut["range"]["start"]["column"] == 25  # the template's pod spec
    assert "aliases repeat its nodes past 1,000" in cut["message"]


def test_an_aliased_pod_template_is_read_once_per_object():
    """The same template found again in one object (an alias) is the same nodes in the same
    context: its launches are read once, not once per listing (a 14 KB object listing a
    template of 200 containers 124 times spent 1.5 s reading 24,800 containers).  The same
    template in another object (two items of a List) is that object's own launch."""
    from mgpu_lint.source import SourceFile
    from mgpu_lint.sources import extract

    text = _aliased("", "x: &p {spec: {containers: [{name: c1, image: 'vllm/vllm-openai:v0.30.0',"
                    f" command: [vllm, serve, {MODEL}]}}]}}}}\ngroups: [*p, *p, *p]\n")
    launches = extract(SourceFile("d.yaml", text, "yaml")).launches
    assert [la.context.object_name for la in launches] == ["d", "d"]
    assert launches[0].program.span != launches[1].program.span
    item = ("{{kind: Deployment, apiVersion: apps/v1, metadata: {{name: {n}}}, spec: {{template: "
            "{t}}}}}")
    template = ("{spec: {containers: [{name: c, image: 'vllm/vllm-openai:v0.30.0', "
                f"command: [vllm, serve, {MODEL}]}}]}}}}")
    listed = ("apiVersion: v1\nkind: List\nitems:\n- " + item.format(n="a", t="&t " + template)
              + "\n- " + item.format(n="b", t="*t") + "\n")
    launches = extract(SourceFile("l.yaml", listed, "yaml")).launches
    assert [la.context.object_name for la in launches] == ["a", "b"]


def test_the_node_bound_is_never_below_the_nodes_composed():
    """yamlsrc._node_bound overshoots, never undershoots, on every YAML fixture and on
    stretches cut from them."""
    from pathlib import Path

    from mgpu_lint import yamlsrc

    nodes = _events_per_document

    root = Path(__file__).parent.parent / "fixtures"
    checked = 0
    for path in sorted(root.rglob("*.y*ml")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for i, j in yamlsrc._stretches(text):
            for count in nodes(text[i:j]):
                assert count <= yamlsrc._node_bound(text, i, j), path
                checked += 1
    assert checked > 200
    tricky = ["a", "[]", "{}", "[a, b: c, {d}]", "? a\n: b\n", "- - - a\n", "a: &x [1]\nb: *x\n",
              "--- a\n... \n--- b\n", "{a, b, c}", "k: |\n  x\n  y\n", "- {a: [b, {c: d}]}\n"]
    for text in tricky:
        assert sum(nodes(text)) <= yamlsrc._node_bound(text, 0, len(text)), text


def test_the_template_line_search_is_the_patterns_search():
    """sources._bare_template tries the Helm-template pattern only on lines holding `{{`:
    the same first match as the pattern's own search, on random template-like texts."""
    import random

    from mgpu_lint.sources import _BARE_TEMPLATE, _bare_template

    bits = ["{{", "}}", "{{ .Values }}", "- ", "  ", "key: ", "#", "'", '"', "\n", "-", "x",
            "{{- include", ": ", "\t", "a:b: ", "{{\n.x", "{{ if"]
    rng = random.Random(1)
    matched = 0
    for _ in range(20_000):
        text = "".join(rng.choice(bits) for _ in range(rng.randint(0, 14)))
        want, got = _BARE_TEMPLATE.search(text), _bare_template(text)
        assert (want and (want.start(), want.group(0))) == (got and (got.start(), got.group(0)))
        matched += want is not None
    assert matched > 1_000


def test_markdown_blocks_past_the_limit_are_not_read(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(bounds, "MAX_MARKDOWN_BLOCKS", 3)
    doc = tmp_path / "README.md"
    doc.write_text("".join("```yaml\nimage: vllm/vllm-openai:v0.30.0\n```\n\n" for _ in range(3))
                   + "```bash\nvllm serve meta-llama/Llama-3.1-70B-Instruct -tp 3\n```\n")
    found = _findings(capsys, doc)
    assert _where(found) == [("MG001", 13)]  # the fourth block's fence
    assert "more than 3 code blocks" in found[0]["message"]
    monkeypatch.setattr(bounds, "MAX_MARKDOWN_BLOCKS", 4)
    assert "MG102" in [f["code"] for f in _findings(capsys, doc)]


def test_a_composed_text_leaves_no_loader_behind():
    """The C loader refers to itself; left to the cyclic collector, each Markdown block's
    loader outlived its block (150,000 blocks, 900 MiB)."""
    import gc

    from mgpu_lint import yamlsrc

    def loaders() -> int:
        return sum(1 for o in gc.get_objects() if type(o).__name__ == "FastLoader")

    gc.collect()
    gc.disable()
    try:
        before = loaders()
        for i in range(50):
            assert len(list(yamlsrc.compose_documents(f"a: {i}\n---\nb: [1]\n"))) == 2
        assert loaders() == before
    finally:
        gc.enable()


def test_the_slower_yaml_reader_stops_at_its_node_limit(capsys, tmp_path, monkeypatch):
    """A flow collection with `repo:tag` in it, a tag with a `:` (a stand-in there breaks the
    tag) and a `!` in a plain scalar (taken for a tag: its `:` left alone;
    yamlsrc._read_refused_colons) is read by ruamel's pure composer
    (libyaml refuses the `:`), about 25 us a node: past yamlsrc.PURE_MAX_NODES it stops with
    MG001."""
    from mgpu_lint import yamlsrc

    monkeypatch.setattr(yamlsrc, "PURE_MAX_NODES", 60)
    compose = tmp_path / "compose.yaml"
    service = ("  s{i}: {{labels: !t:x [hi !u:v], image: vllm/vllm-openai:v0.30.0, "
               "command: [serve, {m}, --tensr-parallel-size, '1']}}\n")
    compose.write_text("services:\n" + "".join(service.format(i=i, m=MODEL) for i in range(3)))
    assert [c for c, _ in _where(_findings(capsys, compose))] == ["MG004"] * 3
    compose.write_text("services:\n" + "".join(service.format(i=i, m=MODEL) for i in range(12)))
    found = _findings(capsys, compose)
    assert [c for c, _ in _where(found)] == ["MG001"]
    assert "where libyaml cannot read it" in found[0]["message"]


def test_compose_references_spend_the_files_words(capsys, tmp_path, monkeypatch):
    """Each `${…}` of a compose value counts as a word of the file's budget, so the references
    of one long command stop where the budget runs out, before that service is read."""
    monkeypatch.setattr(bounds, "MAX_SHELL_WORDS", 40)
    compose = tmp_path / "compose.yaml"
    line_b = "    command: vllm serve " + MODEL + " --served-model-name" + " ${A}" * 50
    compose.write_text(
        "services:\n"
        "  a:\n    image: vllm/vllm-openai:v0.30.0\n"
        f"    command: {MODEL} --port ${{P:-8000}}\n"  # 1 reference, then 3 words: 36 left
        "  b:\n    image: vllm/vllm-openai:v0.30.0\n" + line_b + "\n"
        "  c:\n    image: vllm/vllm-openai:v0.30.0\n"
        "    command: meta-llama/Llama-3.1-70B-Instruct -tp 3\n")
    found = _findings(capsys, compose)
    at = line_b.index("${A}") + 36 * len(" ${A}") + 1  # the 37th reference of b
    assert [(f["code"], f["range"]["start"]) for f in found] == [
        ("MG001", {"line": 7, "column": at})]
    assert "more than 40 words and ${…} references" in found[0]["message"]


def test_a_compose_command_cut_by_the_budget_is_not_read_without_its_words(
        capsys, tmp_path, monkeypatch):
    """Reading the service with the words it has would make it the image's default command:
    a false "no model given" (MG016)."""
    monkeypatch.setattr(bounds, "MAX_SHELL_WORDS", 40)
    compose = tmp_path / "compose.yaml"
    compose.write_text("services:\n  b:\n    image: vllm/vllm-openai:v0.30.0\n"
                       f"    command: {MODEL} --served-model-name" + " a" * 50 + "\n")
    found = _findings(capsys, compose)
    assert [(f["code"], f["range"]["start"]) for f in found] == [
        ("MG001", {"line": 4, "column": 14})]


def test_a_text_after_the_budget_is_spent_exactly_says_where_reading_stops(
        capsys, tmp_path, monkeypatch):
    """A text lexed when no word is left (the ones before spent exactly the budget) stops at
    its first command with MG001, as one that runs it out midway does."""
    monkeypatch.setattr(bounds, "MAX_SHELL_WORDS", 40)
    readme = tmp_path / "README.md"
    readme.write_text("```bash\necho " + "x " * 39 + "\n```\n\n```bash\n"
                      "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 3\n```\n")
    found = _findings(capsys, readme)
    assert [(f["code"], f["range"]["start"]) for f in found] == [
        ("MG001", {"line": 6, "column": 1})]


def test_variable_values_past_the_files_budget_are_unknown(capsys, tmp_path, monkeypatch):
    """Each value a script sets is kept for the launches after it; past
    bounds.MAX_ENV_CHARS of them in a file, a value set is unknown where it is expanded (the
    launch is read as with any variable the linter cannot know)."""
    monkeypatch.setattr(bounds, "MAX_ENV_CHARS", 40)
    model = "meta-llama/Llama-3.1-70B-Instruct"  # 33 characters
    script = tmp_path / "run.sh"
    script.write_text(f"M={model}\nvllm serve $M -tp 3\nN={model}\nvllm serve $N -tp 3\n")
    found = _findings(capsys, script)
    assert [(f["code"], f["range"]["start"]["line"]) for f in found] == [("MG102", 2)]
    monkeypatch.setattr(bounds, "MAX_ENV_CHARS", 66)  # both kept: both launches checked
    found = _findings(capsys, script)
    assert [(f["code"], f["range"]["start"]["line"]) for f in found] == [
        ("MG102", 2), ("MG102", 4)]


def test_references_past_the_files_expansion_budget_are_unknown(capsys, tmp_path, monkeypatch):
    """What a file's references expand to is bounded (bounds.MAX_EXPANDED_CHARS): past it a
    reference is unknown where it is written, as a variable the linter cannot know."""
    monkeypatch.setattr(bounds, "MAX_EXPANDED_CHARS", 40)
    script = tmp_path / "run.sh"
    script.write_text("M=meta-llama/Llama-3.1-70B-Instruct\n"  # 33 characters
                      "vllm serve $M -tp 3\nvllm serve $M -tp 3\n")
    found = _findings(capsys, script)
    assert [(f["code"], f["range"]["start"]["line"]) for f in found] == [("MG102", 2)]
    monkeypatch.setattr(bounds, "MAX_EXPANDED_CHARS", 66)
    found = _findings(capsys, script)
    assert [(f["code"], f["range"]["start"]["line"]) for f in found] == [
        ("MG102", 2), ("MG102", 3)]


def test_a_small_file_is_read_without_a_buffer_of_the_size_limit(tmp_path):
    """Reading allocates what the file holds, not the 10 MiB limit: 200,000 small files are read
    25 µs each otherwise."""
    import tracemalloc

    from mgpu_lint.discover import read_source
    small = tmp_path / "run.sh"
    small.write_text("vllm serve m\n")
    tracemalloc.start()
    try:
        src, err = read_source(str(small), "shell")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert err is None and src.text == "vllm serve m\n"
    assert peak < 1 << 20


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux's /proc")
def test_a_file_whose_size_is_not_known_ahead_is_read_whole():
    """/proc files (and pipes) say size 0; what they hold is read all the same, up to the limit."""
    from mgpu_lint.discover import read_source
    src, err = read_source("/proc/self/status", "shell", max_bytes=100_000)
    assert err is None and "Name:" in src.text and len(src.text) > 100
