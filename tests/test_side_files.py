"""Side files (linter/safeio.py): what a launch is told when one cannot be read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mgpu_lint.cli import main

IMAGE = "vllm/vllm-openai:v0.30.0"


def lint(capsys: pytest.CaptureFixture[str], *paths: Path) -> list[dict]:
    main(["--exit-zero", "--format", "json", *map(str, paths)])
    return json.loads(capsys.readouterr().out)["findings"]


def messages(findings: list[dict], code: str) -> list[str]:
    return [f["message"] for f in findings if f["code"] == code]


def test_an_unread_side_file_says_not_read_once(tmp_path: Path, capsys) -> None:
    """Each kind of side file: the caller says it is not read, the reason says what is wrong
    (the reason ended in "; not read" too: "--config c.yaml is not read: 3,450,047 bytes, over
    the 1,048,576-byte limit; not read")."""
    (tmp_path / "c.yaml").write_text("#" * 2_000_000)
    script = tmp_path / "run.sh"
    script.write_text("vllm serve m --config c.yaml\n")
    (tmp_path / "compose").mkdir()
    os.mkfifo(tmp_path / "compose" / ".env")
    os.mkfifo(tmp_path / "compose" / "Dockerfile")
    compose = tmp_path / "compose" / "compose.yaml"
    compose.write_text("services:\n  a:\n    build: .\n    command: [\"--model\", \"m\"]\n"
                       f"  b:\n    image: {IMAGE}\n    command: [\"m\"]\n")
    (tmp_path / "image").mkdir()
    (tmp_path / "image" / "serve.sh").write_bytes(b"vllm serve m \xff\n")
    dockerfile = tmp_path / "image" / "Dockerfile"
    dockerfile.write_text(f"FROM {IMAGE}\nCOPY serve.sh /serve.sh\nENTRYPOINT [\"/serve.sh\"]\n")
    findings = lint(capsys, script, compose, dockerfile)
    assert sorted(messages(findings, "MG001")) == [
        "--config c.yaml is not read: 2,000,000 bytes, over the 1,048,576-byte limit, so what "
        "it sets is unknown",
        "the .env beside compose.yaml is not read (its variables are not used): a FIFO, not a "
        "regular file",
        "the Dockerfile of compose.yaml's build is not read (what the image runs is not known): "
        "a FIFO, not a regular file",
        "the script /serve.sh that Dockerfile starts is not read: not valid UTF-8: byte 0xff at "
        "byte offset 13",
    ]


# ------------------------------------------------------------------------ read once per run

CONFIG = ("tensor-parallel-size: 2\nenforce-eager: false\nno-such-option: 3\n"
          "max-model-len: 8k\nmax-model-len: 16k\nserved-model-name: [a, b]\ndtype: nonsense\n")
CONFIG_JSON = json.dumps({"num_hidden_layers": 32, "hidden_size": 4096,
                          "num_attention_heads": 32, "num_key_value_heads": 8,
                          "intermediate_size": 14336, "vocab_size": 128256,
                          "model_type": "llama"})


def _many_launches(d: Path) -> list[Path]:
    """Three launches naming each kind of side file, and three services building one
    Dockerfile beside one .env."""
    from tests.hostile_cases import gguf_model

    (d / "c.yaml").write_text(CONFIG)
    (d / "big.yaml").write_text("#" * 2_000_000)
    (d / "m.gguf").write_bytes(gguf_model())
    (d / "model").mkdir()
    (d / "model" / "config.json").write_text(CONFIG_JSON)
    script = d / "run.sh"
    script.write_text(3 * ("vllm serve meta-llama/Llama-3.1-8B-Instruct --config c.yaml -tp 4\n"
                           "vllm serve ./model --config ./c.yaml\n"
                           "python -m vllm.entrypoints.api_server --model ./model --config c.yaml\n"
                           "vllm serve m --config big.yaml\n"
                           "llama-server -m ./m.gguf -ngl 99 -sm row\n"))
    (d / "Dockerfile").write_text(f"FROM {IMAGE}\nENV HF_HOME=/x\n")
    (d / ".env").write_text("PORT=80\n")
    compose = d / "compose.yaml"
    compose.write_text("services:\n" + "".join(
        f"  s{i}:\n    build: .\n"
        '    command: ["--model", "./model", "-tp", "3", "--port", "${PORT}"]\n'
        for i in range(3)))
    return [script, compose]


def _reads(monkeypatch: pytest.MonkeyPatch, root: Path) -> dict[str, int]:
    """Side files read from now on (their paths under ``root``), counted."""
    from mgpu_lint import safeio

    reads: dict[str, int] = {}

    def counted(real):
        def read(path: str, *args):
            name = os.path.relpath(path, root)
            reads[name] = reads.get(name, 0) + 1
            return real(path, *args)
        return read

    monkeypatch.setattr(safeio, "read_bytes", counted(safeio.read_bytes))
    monkeypatch.setattr(safeio, "open_regular", counted(safeio.open_regular))
    return reads


def test_each_side_file_is_read_once_and_findings_are_as_read_every_time(
        tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    """A script of 1,000 launches naming one 3.2 MiB GGUF file or one 0.75 MiB --config read
    and parsed it 1,000 times (over 120 s).  Read once a run, a failure (over the limit) as
    well; the findings are those of reading the file for every launch."""
    from mgpu_lint import safeio

    paths = _many_launches(tmp_path)
    reads = _reads(monkeypatch, tmp_path)
    once = lint(capsys, *paths)
    assert reads == {"c.yaml": 1, "big.yaml": 1, "m.gguf": 1, "model/config.json": 1,
                     "Dockerfile": 1, ".env": 1}
    codes = sorted({f["code"] for f in once})
    assert {"MG001", "MG004", "MG006", "MG007"} <= set(codes)
    monkeypatch.setattr(safeio, "memo", lambda path, kind, load, **_: load(path))
    reads.clear()
    every_time = lint(capsys, *paths)
    assert reads["c.yaml"] == 9 and reads["m.gguf"] == 3
    assert once == every_time


def _same_stat_edit(path: Path, text: str) -> None:
    """Rewrite ``path`` with ``text`` of the same length, its modification time put back (a
    coarse clock, or an editor that keeps it): only the change time tells."""
    st = path.stat()
    assert len(text.encode()) == st.st_size
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_side_file_edited_between_two_lints_of_one_process_is_read_again(
        tmp_path: Path) -> None:
    """The language server lints in one process: the second lint sees the edited --config,
    even one of the same size and modification time."""
    from mgpu_lint.options import Options
    from mgpu_lint.runner import lint as run

    config = tmp_path / "c.yaml"
    config.write_text("no-such-kez: 1\n")
    script = tmp_path / "run.sh"
    script.write_text("vllm serve m --config c.yaml\nvllm serve m --config c.yaml\n")

    def unknown() -> list[str]:
        return [f.message.split("`")[1] for f in run([str(script)], Options()).findings
                if f.code == "MG004"]

    assert unknown() == ["no-such-kez", "no-such-kez"]
    _same_stat_edit(config, "no-such-kex: 1\n")
    assert unknown() == ["no-such-kex", "no-such-kex"]


# ------------------------------------------------- kept across lints by the language server

def _server_cache(monkeypatch: pytest.MonkeyPatch, racy_ns: int = 0) -> None:
    """A new cache of the server's (lsp.SIDE_FILES); files written by the test are kept at
    once (safeio.RACY_NS: ``racy_ns``)."""
    from mgpu_lint import lsp, safeio

    monkeypatch.setattr(lsp, "SIDE_FILES", safeio.SideCache())
    monkeypatch.setattr(safeio, "RACY_NS", racy_ns)


def _seen(findings) -> list[tuple]:
    return [(f.source.path, f.span.start, f.span.end, f.code, f.severity, f.message, f.hint)
            for f in findings]


def test_the_language_server_reads_an_unchanged_side_file_once_across_lints(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each edit of a document re-read its side files (a 200 KB compose file building a 1 MiB
    Dockerfile: 1.6 s an edit, 0.3 s now).  The server keeps them while they are unchanged:
    the second lint of each document reads none of them again, and every lint's findings,
    the side-file budget's MG001 included, are those of the command line's reading."""
    from mgpu_lint import bounds
    from mgpu_lint.lsp import lint_text
    from mgpu_lint.options import Options
    from mgpu_lint.runner import lint as run

    _server_cache(monkeypatch)
    docs = _many_launches(tmp_path)
    (tmp_path / "budget").mkdir()
    for name in "ab":
        (tmp_path / "budget" / f"{name}.yaml").write_text(
            f"no-such-{name}: 1\n".ljust(59, "#") + "\n")
    budget = tmp_path / "budget" / "run.sh"
    budget.write_text("".join(f"vllm serve m --config {n}.yaml\n" for n in "aabab"))
    reads = _reads(monkeypatch, tmp_path)
    with monkeypatch.context() as m:
        for doc in (*docs, budget):
            if doc is budget:
                m.setattr(bounds, "SIDE_BYTES_PER_FILE", 100)
            text = doc.read_text() + "\n"  # the editor's text, not the file's
            first = _seen(lint_text(str(doc), text))
            before = dict(reads)
            again = _seen(lint_text(str(doc), text + " "))
            assert reads == before, doc.name  # nothing read again
            cli = _seen(f for f in run([], Options(), stdin_text=text, stdin_filename=str(doc))
                        .findings if f.code != "MG017")
            assert first == again == cli, doc.name
    first_codes = {row[3] for row in first}
    assert "MG001" in first_codes and "MG004" in first_codes


def test_the_language_server_reads_a_side_file_edited_between_lints(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept side file is read again when its state changes: an edit of the same size whose
    modification time is put back (only the change time tells), and one within the same
    second (the times' nanoseconds tell); a built Dockerfile's ENV as well."""
    from mgpu_lint.lsp import lint_text

    _server_cache(monkeypatch)
    config = tmp_path / "c.yaml"
    config.write_text("no-such-kez: 1\n")
    script = tmp_path / "run.sh"
    text = "vllm serve m --config c.yaml\n"

    def unknown() -> list[str]:
        return [f.message.split("`")[1] for f in lint_text(str(script), text)
                if f.code == "MG004"]

    assert unknown() == unknown() == ["no-such-kez"]
    _same_stat_edit(config, "no-such-kex: 1\n")
    assert unknown() == ["no-such-kex"]
    config.write_text("no-such-kea: 1\n")
    assert unknown() == ["no-such-kea"]
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(f"FROM {IMAGE}\nENTRYPOINT [\"vllm\", \"serve\", \"--no-such-kez\"]\n")
    compose = tmp_path / "compose.yaml"
    compose_text = "services:\n  s:\n    build: .\n    command: [\"m\"]\n"

    def built() -> list[str]:
        return [f.message.split()[-1] for f in lint_text(str(compose), compose_text)
                if f.code == "MG004"]

    assert built() == built() == ["--no-such-kez"]
    _same_stat_edit(dockerfile, dockerfile.read_text().replace("kez", "kex"))
    assert built() == ["--no-such-kex"]


def test_the_language_server_reads_again_a_side_file_written_just_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file system's clock ticks coarsely (a few ms here, 1-2 s on others): a file changed
    within safeio.RACY_NS before a lint may change again without a change of its state, so
    it is read again at the next lint; written long enough before, it is kept."""
    from mgpu_lint import safeio
    from mgpu_lint.lsp import lint_text

    _server_cache(monkeypatch, safeio.RACY_NS)
    config = tmp_path / "c.yaml"
    config.write_text("no-such-kez: 1\n")
    script = tmp_path / "run.sh"
    reads = _reads(monkeypatch, tmp_path)
    for _ in range(2):
        lint_text(str(script), "vllm serve m --config c.yaml\n")
    assert reads == {"c.yaml": 2}
    monkeypatch.setattr(safeio, "RACY_NS", 0)
    for _ in range(2):
        lint_text(str(script), "vllm serve m --config c.yaml\n")
    assert reads == {"c.yaml": 3}


def test_memo_keeps_a_value_per_state_and_within_its_bounds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mgpu_lint import bounds, safeio

    calls: list[str] = []

    def load(path: str) -> str:
        calls.append(path)
        return Path(path).read_text()

    paths = [tmp_path / f"f{i}" for i in range(3)]
    for p in paths:
        p.write_text("x" * 10)
    assert safeio.memo(str(paths[0]), ("k",), load) == "x" * 10  # outside a run: not kept
    assert safeio.memo(str(paths[0]), ("k",), load) == "x" * 10
    assert len(calls) == 2
    for bound, value, read in (("SIDE_CACHE_ENTRIES", 3, 3), ("SIDE_CACHE_ENTRIES", 2, 6),
                               ("SIDE_CACHE_BYTES", 25, 6)):
        with monkeypatch.context() as m, safeio.side_files():
            m.setattr(bounds, bound, value)
            calls.clear()
            for p in paths + paths:  # past the bound, the third evicts the first
                safeio.memo(str(p), ("k",), load)
            assert len(calls) == read, (bound, value)
    with safeio.side_files():
        calls.clear()
        for kind in ("k", "k", "other kind"):
            safeio.memo(str(paths[2]), (kind,), load)
        assert len(calls) == 2

        def editing(path: str) -> str:  # the file changes while it is read: not kept
            calls.append(path)
            Path(path).write_text("y" * 11)
            return "x" * 10
        calls.clear()
        assert safeio.memo(str(paths[1]), ("e",), editing) == "x" * 10
        assert safeio.memo(str(paths[1]), ("e",), load) == "y" * 11
        assert len(calls) == 2

        def failing(path: str) -> str:
            calls.append(path)
            raise safeio.SideFileError("broken", 3, ((3, "here"),))
        calls.clear()
        for _ in range(3):
            with pytest.raises(safeio.SideFileError) as err:
                safeio.memo(str(paths[2]), ("f",), failing)
            assert (err.value.message, err.value.offset, err.value.places) == \
                ("broken", 3, ((3, "here"),))
        assert len(calls) == 1


def test_a_gguf_vocabulary_is_read_past_not_kept(tmp_path: Path) -> None:
    """The reader keeps an array it does not need as its length: 4 million tokenizer strings
    (a 44 MiB header) were decoded into a list first (300 MiB, 4.1 s; now 35 MiB, 2.5 s)."""
    import tracemalloc

    from mgpu_lint.catalog.gguf_header import read_header
    from tests.hostile_cases import gguf_model, gguf_tokens

    path = tmp_path / "m.gguf"
    path.write_bytes(gguf_model(raw_meta=gguf_tokens(10)))
    read_header(str(path))  # the modules it imports, before counting
    path.write_bytes(gguf_model(raw_meta=gguf_tokens(200_000)))
    tracemalloc.start()
    try:
        header = read_header(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert header.metadata["tokenizer.ggml.tokens"] == 200_000
    assert header.architecture == "llama" and header.metadata["general.name"] == "hostile"
    assert peak < 1 << 20, peak  # the list of 200,000 strings took 13 MiB


def test_side_files_of_one_file_stop_at_its_budget(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """1,000 launches naming 1,000 different 0.9 MiB configs were 0.9 GB of YAML to read.  A
    file's launches read side files up to bounds.SIDE_BYTES_PER_FILE, each file counted once:
    one that would pass it is not read (MG001 once, at the first), and its launch's settings
    are unknown; a file counted before is still read."""
    from mgpu_lint import bounds, safeio
    from mgpu_lint.engines import parse_launch
    from mgpu_lint.options import Options
    from mgpu_lint.runner import lint as run, read_files

    monkeypatch.setattr(bounds, "SIDE_BYTES_PER_FILE", 100)
    for name in "ab":
        (tmp_path / f"{name}.yaml").write_text(f"no-such-{name}: 1\n".ljust(59, "#") + "\n")
    script = tmp_path / "run.sh"
    order = "aabab"
    script.write_text("".join(f"vllm serve m --config {n}.yaml\n" for n in order))
    with safeio.side_files():
        opened = [parse_launch(la)[0].open_span is not None
                  for la in read_files([str(script)]).launches]
    assert opened == [False, False, True, False, True]
    findings = run([str(script)], Options()).findings
    assert [(f.code, f.message.split("`")[1]) for f in findings if f.code == "MG004"] == \
        [("MG004", "no-such-a")] * 3
    (cut,) = [f for f in findings if f.code == "MG001"]
    line = cut.source.line_col(cut.span.start)[0]
    assert (line, cut.source.text[cut.span.start:cut.span.end]) == (3, "b.yaml")
    assert cut.message.startswith("--config b.yaml is not read: the side files this file's "
                                  "launches name would pass 100 bytes")


def test_a_config_over_the_size_limit_is_not_an_error_and_sets_nothing_known(
        tmp_path: Path, capsys) -> None:
    """vLLM reads a --config of any size (FlexibleArgumentParser.load_config_file,
    vllm/utils/argparse_utils.py 0.30.0): over the linter's 1 MiB it was MG006, an error, and
    the launch was checked with the defaults, tp 1 where the file says 8 (MG301: the 70B
    weights do not fit one GPU; MG101: 7 of 8 GPUs idle).  Now MG001, a warning, and the
    launch's settings unknown."""
    (tmp_path / "c.yaml").write_text("tensor-parallel-size: 8\n" + "#" * 1_100_000 + "\n")
    deploy = tmp_path / "deploy.yaml"
    deploy.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n"
        "    spec:\n      containers:\n        - name: vllm\n"
        f"          image: {IMAGE}\n"
        '          args: ["meta-llama/Llama-3.1-70B-Instruct", "--config", "c.yaml"]\n'
        "          resources: {limits: {nvidia.com/gpu: 8}}\n")
    findings = lint(capsys, deploy)
    assert not {"MG006", "MG101", "MG301"} & {f["code"] for f in findings}
    (cut,) = [f for f in findings if f["code"] == "MG001"]
    assert cut["severity"] == "warning" and cut["message"].startswith(
        "--config c.yaml is not read: 1,100,025 bytes, over the 1,048,576-byte limit")


def test_a_config_of_more_values_than_the_bound_is_not_read(tmp_path: Path, capsys) -> None:
    """A --config of 300,000 one-letter names took the loader 3.7 s (1,000 launches naming
    twelve such files: over 120 s before they were read once, 36 s once each): past
    bounds.MAX_CONFIG_VALUES values it is not read, MG001 at each launch naming it."""
    from mgpu_lint import bounds

    def config(values: int) -> str:  # the mapping, two keys, the list and its names
        return ("no-such-key: 1\nserved-model-name: ["
                + ", ".join(["a"] * (values - 5)) + "]\n")

    (tmp_path / "at.yaml").write_text(config(bounds.MAX_CONFIG_VALUES))
    (tmp_path / "past.yaml").write_text(config(bounds.MAX_CONFIG_VALUES + 1))
    script = tmp_path / "run.sh"
    script.write_text("vllm serve m --config at.yaml\nvllm serve m --config past.yaml\n"
                      "vllm serve m --config past.yaml\n")
    findings = lint(capsys, script)
    assert [(f["code"], f["range"]["start"]["line"]) for f in findings
            if f["code"] in ("MG001", "MG004")] == \
        [("MG004", 1), ("MG001", 2), ("MG001", 3)]
    assert messages(findings, "MG001")[0].startswith(
        f"--config past.yaml is not read: more than {bounds.MAX_CONFIG_VALUES:,} values (at "
        "past.yaml:2:")


def test_the_first_side_file_is_read_whatever_the_budget(
        tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    """The budget bounds many side files, not one: the first a file's launches read is read up
    to its reader's own limit (a 3.2 MB Dockerfile that 1,000 compose services build, or a
    2 MB config.json), the next one that would pass the budget is not."""
    from mgpu_lint import bounds

    monkeypatch.setattr(bounds, "SIDE_BYTES_PER_FILE", 100)
    for name in "ab":
        (tmp_path / f"{name}.yaml").write_text(f"no-such-{name}: 1\n".ljust(149, "#") + "\n")
    script = tmp_path / "run.sh"
    script.write_text("vllm serve m --config a.yaml\nvllm serve m --config b.yaml\n")
    findings = lint(capsys, script)
    assert [(f["code"], f["range"]["start"]["line"]) for f in findings
            if f["code"] in ("MG001", "MG004")] == [("MG004", 1), ("MG001", 2)]
