"""Configuration files and suppression comments."""

from __future__ import annotations

from pathlib import Path

import pytest
from mgpu_lint.cli import main
from mgpu_lint.config import find_for_directory

BAD = "#!/bin/sh\nvllm serve 'unterminated --port 1\n"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    find_for_directory.cache_clear()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_closest_config_wins(tmp_path: Path, capsys) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.mgpu-lint]\nignore = ["MG003"]\n')
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "mgpu-lint.toml").write_text("select = ['MG003']\n")
    (tmp_path / "a.sh").write_text(BAD)
    (sub / "b.sh").write_text(BAD)
    code, out, _ = run(capsys, str(tmp_path))
    assert "a.sh" not in out
    assert "b.sh:2:12: MG003" in out
    assert code == 1


def test_per_file_ignores_and_fail_on(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".mgpu-lint.toml").write_text(
        '[per-file-ignores]\n"legacy/*" = ["MG003"]\n')
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "x.sh").write_text(BAD)
    code, out, _ = run(capsys, "legacy/x.sh")
    assert code == 0 and "MG003" not in out


@pytest.mark.parametrize("content,needle", [
    ("select = 'MG1'\n", "key `select`"),
    ("bogus = 1\n", "key `bogus`: unknown key"),
    ("gpus-per-node = 0\n", "key `gpus-per-node`"),
    ("select = ['XX1']\n", "unknown rule selector 'XX1'"),
    ("fail-on = 'sometimes'\n", "key `fail-on`"),
    ("[[\n", "not valid TOML"),
    # catalog entries validate with the other keys (MG000 while linting before), with the line of
    # the entry's table, also when no linted file names the model
    ("fail-on = 'error'\n[models.'x/y']\nparams = 1e9\n",
     ":2: model 'x/y' in the configuration: layers: Field required"),
    ("[models.\"meta-llama/Llama-3.1-8B-Instruct\"]\nheads = 0\n",
     ":1: model 'meta-llama/Llama-3.1-8B-Instruct' in the configuration: heads: Input should be "
     "greater than 0"),
    ("[models.\"meta-llama/Llama-3.1-8B-Instruct\"]\nlayers = 1_000_000_000_000\n",
     ":1: model 'meta-llama/Llama-3.1-8B-Instruct' in the configuration: layers 1000000000000 "
     "outside 1..65536"),
    ("[models]\n'meta-llama/Llama-3.1-8B-Instruct' = { params = inf }\n",
     ": model 'meta-llama/Llama-3.1-8B-Instruct' in the configuration: params inf outside"),
    ("[gpus.'NVIDIA H100 SXM5 80GB']\nmemory_gb = inf\n",
     ":1: GPU 'NVIDIA H100 SXM5 80GB' in the configuration: memory_gb inf outside 0..1e+06"),
    # tomllib recurses per nesting level: a traceback (RecursionError) before
    ("select = " + "[" * 5000 + "]" * 5000 + "\n",
     ": not valid TOML: arrays or inline tables nested too deeply to read"),
    # each entry is tried for every file or launch (40,000 globs: over 60 s for 2,000 files)
    ("[per-file-ignores]\n" + "".join(f"'d{i}/*' = ['MG0']\n" for i in range(1001)),
     ":1: key `per-file-ignores`: 1,001 entries, more than the 1,000 a configuration may hold"),
    ("extend-exclude = [" + ",".join(f"'d{i}'" for i in range(1001)) + "]\n",
     "key `extend-exclude`: 1,001 entries"),
    ("users = 10_000_000_000_000\n", ":1: key `users`: Input should be less than or equal to"),
    # read whole or not at all: a cut file gave 'Unterminated string (at end of document)'
    ("fail-on = 'error'\n" + "# x\n" * 300_000,
     ": cannot read configuration: 1,200,018 bytes, over the 1,048,576-byte limit"),
])
def test_invalid_config_exits_2(tmp_path: Path, capsys, content: str, needle: str) -> None:
    cfg = tmp_path / "mgpu-lint.toml"
    cfg.write_text(content)
    (tmp_path / "a.sh").write_text(BAD)
    code, _, err = run(capsys, "--config", str(cfg), str(tmp_path / "a.sh"))
    assert code == 2
    assert str(cfg) in err and needle in err


def test_suppression_on_the_line_before(tmp_path: Path, capsys) -> None:
    p = tmp_path / "a.sh"
    p.write_text("#!/bin/sh\n# mgpu-lint: disable=MG003\nvllm serve 'x\n")
    code, out, _ = run(capsys, str(p))
    assert code == 0 and "MG003" not in out and "MG012" not in out


def test_disable_file_and_unused(tmp_path: Path, capsys) -> None:
    p = tmp_path / "a.sh"
    p.write_text("#!/bin/sh\n# mgpu-lint: disable-file=MG003\n\n\nvllm serve 'x\n")
    code, out, _ = run(capsys, str(p))
    assert code == 0 and "MG003" not in out
    p.write_text("#!/bin/sh\n# mgpu-lint: disable=MG002\nvllm serve m\n")
    code, out, _ = run(capsys, str(p))
    assert "a.sh:2:1: MG012 [info] suppression of MG002 suppressed nothing" in out
    assert code == 0


def test_k8s_annotation(tmp_path: Path, capsys) -> None:
    p = tmp_path / "pod.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
        "    mgpu-lint/ignore: MG003\nspec:\n  containers:\n  - name: c\n    image: x\n"
        "    command: [sh, -c, \"vllm serve 'x\"]\n")
    code, out, _ = run(capsys, str(p))
    assert "MG003" not in out, out


def test_stale_suppressions_past_the_limit_are_summed_up(tmp_path: Path, capsys) -> None:
    p = tmp_path / "a.sh"
    p.write_text("# mgpu-lint: disable=MG002\n" * 105 + "vllm serve m\n")
    code, out, _ = run(capsys, str(p))
    lines = [x for x in out.splitlines() if "MG012" in x]
    assert len(lines) == 101 and lines[99].startswith(f"{p}:100:1: MG012")
    assert f"{p}:101:1: MG012 [info] and 5 more suppressions that suppressed nothing in " \
           "this file from here on, not listed one by one (the first 100 are)" in out
    assert code == 0


def test_suppressions_match_the_search_of_every_directive() -> None:
    """suppress.apply finds a finding's directives through an index by (line, code); the
    reference is the search of every directive, kept here.  Random files of directives
    (own-line, end-of-line, file-wide, prefixes, repeated codes) and findings with anchors."""
    import random

    from mgpu_lint import suppress
    from mgpu_lint.findings import Finding, Severity
    from mgpu_lint.source import SourceFile, Span

    def reference(findings, source, anchors, annotations):
        dirs = suppress.directives(source)
        kept = []
        for f in findings:
            line, _ = source.line_col(f.span.start)
            lines = {line, *anchors.get(id(f), ())}
            hit = any(f.code.startswith(c) for c in annotations.get(id(f), ()))
            for d in dirs:
                if any(f.code.startswith(c) for c in d.codes) and (
                        d.file_wide or lines.intersection(d.lines)):
                    d.used = (d.used or set()) | {c for c in d.codes if f.code.startswith(c)}
                    hit = True
            if not hit:
                kept.append(f)
        return kept, dirs

    rng = random.Random(11)
    codes = ["MG1", "MG10", "MG101", "MG102", "MG2", "MG201", "MG3"]
    for _ in range(300):
        lines = []
        for _ in range(rng.randint(1, 12)):
            pick = ", ".join(rng.choice(codes) for _ in range(rng.randint(1, 3)))
            lines.append(rng.choice([
                f"# mgpu-lint: disable={pick}", f"vllm serve m  # mgpu-lint: disable={pick}",
                f"# mgpu-lint: disable-file={pick}", "vllm serve m", "echo"]))
        text = "\n".join(lines) + "\n"
        source = SourceFile("a.sh", text, "shell")
        starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"][:-1]
        findings = [Finding(rng.choice(codes + ["MG1019", "MG301"]), Severity.ERROR, "m",
                            source, Span(s, s + 1))
                    for s in rng.choices(starts, k=rng.randint(0, 8))]
        anchors = {id(f): (rng.randint(1, len(lines)),) for f in findings if rng.random() < 0.4}
        annotations = {id(f): ("MG2",) for f in findings if rng.random() < 0.1}
        got, got_dirs = suppress.apply(findings, source, anchors, annotations)
        want, want_dirs = reference(findings, source, anchors, annotations)
        assert got == want, text
        assert [d.used or set() for d in got_dirs] == [d.used or set() for d in want_dirs], text


def test_annotation_codes_match_the_search_of_every_object() -> None:
    """suppress.annotation_codes sweeps findings and objects in order; the reference looks
    through every object's span for each finding.  Random trees of nested or separate objects
    (as YAML nodes are), findings anywhere."""
    import random

    from mgpu_lint import suppress
    from mgpu_lint.findings import Finding, Severity
    from mgpu_lint.source import SourceFile, Span

    source = SourceFile("x.yaml", "x" * 400, "k8s")
    rng = random.Random(5)

    def tree(lo: int, hi: int, depth: int) -> list[Span]:
        out, at = [], lo
        while at < hi - 2 and rng.random() < 0.7:
            a = rng.randint(at, hi - 2)
            b = rng.randint(a + 1, min(hi, a + 60))
            out.append(Span(a, b))
            if depth < 3:
                out.extend(tree(a, b, depth + 1))
            at = b
        return out

    for _ in range(300):
        spans = tree(0, 400, 0)
        ignores = [(s, rng.choice(["MG102", "MG3, MG101", "MG7"])) for s in spans]
        rng.shuffle(ignores)
        findings = [Finding("MG102", Severity.ERROR, "m", source, Span(a, a + 1))
                    for a in (rng.randint(0, 399) for _ in range(rng.randint(0, 20)))]
        want = {}
        for f in findings:
            codes = tuple(c for span, listed in ignores if span.start <= f.span.start < span.end
                          for c in suppress.parse_codes(listed))
            if codes:
                want[id(f)] = codes
        assert suppress.annotation_codes(findings, ignores) == want


def test_a_fifo_named_as_the_configuration_is_refused(tmp_path: Path) -> None:
    """Opening a FIFO for reading blocks until a writer comes: the run hung forever."""
    import os
    fifo = tmp_path / "c.toml"
    os.mkfifo(fifo)
    (tmp_path / "a.sh").write_text(BAD)
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-m", "mgpu_lint.cli", "--config", str(fifo),
                           str(tmp_path / "a.sh")], capture_output=True, text=True, timeout=30,
                          check=False)
    assert proc.returncode == 2
    assert f"{fifo}: cannot read configuration: a FIFO, not a regular file" in proc.stderr


def test_a_configurations_tables_are_prepared_once_per_run(tmp_path: Path, capsys,
                                                           monkeypatch) -> None:
    """[models], [images] and [per-file-ignores] are turned into what lookups use once, not for
    every file or launch: with 1,000 entries that was 1.6, 7 and 5 ms each time."""
    from mgpu_lint import config, images
    from mgpu_lint.catalog import data

    calls = {"models": 0, "images": 0, "ignores": 0}
    for memo, key in ((data._canonical_of, "models"), (images._custom_table_of, "images"),
                      (config._per_file_ignores_of, "ignores")):
        def counted(obj, derive=memo._derive, key=key):
            calls[key] += 1
            return derive(obj)
        monkeypatch.setattr(memo, "_derive", counted)
    (tmp_path / "mgpu-lint.toml").write_text(
        "[models.'o/m']\nparams = 1e9\nlayers = 2\nhidden = 64\nheads = 2\nkv_heads = 2\n"
        "head_dim = 32\n[images]\n'reg/vllm-*' = 'vllm serve'\n"
        "[per-file-ignores]\n'legacy/*' = ['MG0']\n")
    for i in range(5):
        (tmp_path / f"r{i}.sh").write_text("vllm serve o/m -tp 2\nvllm serve o/m -tp 4\n")
    code, out, _ = run(capsys, "--format", "json", str(tmp_path))
    assert '"launches":10' in out
    assert calls == {"models": 1, "images": 1, "ignores": 1}


def test_each_configuration_is_read_once_per_run(tmp_path: Path, capsys, monkeypatch) -> None:
    """With more directories than the cache held (512), each configuration was read and
    validated once per pass over the files, three times a run."""
    from mgpu_lint import config

    loads: list[str] = []
    real = config.load_file
    monkeypatch.setattr(config, "load_file", lambda path: loads.append(path) or real(path))
    for i in range(600):
        d = tmp_path / f"d{i}"
        d.mkdir()
        (d / "mgpu-lint.toml").write_text("users = 8\n")
        (d / "r.sh").write_text("vllm serve m\n")
    code, out, _ = run(capsys, "--format", "json", str(tmp_path))
    assert '"files":600' in out
    assert len(loads) == len(set(loads)) == 600


def test_many_directives_share_their_codes():
    """Directives of one list of codes share its parsed tuple, and a (line, code) of one
    directive is that directive in the index, not a list of it: 370,000 stale `disable=MG102`
    lines (9.5 MiB) peaked at 266 MiB.  Each took about 570 bytes while applied, now about
    390; all are still reported."""
    import tracemalloc

    from mgpu_lint import suppress
    from mgpu_lint.source import SourceFile

    text = "vllm serve m\n" + "# mgpu-lint: disable=MG102\n" * 50_000
    source = SourceFile("run.sh", text, "shell")
    source.line_starts()
    tracemalloc.start()
    kept, dirs = suppress.apply([], source, {}, {})
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 480 * 50_000, peak / 50_000
    assert len(dirs) == 50_000 and dirs[0].codes is dirs[-1].codes == ("MG102",)
    assert len(suppress.unused(source, dirs, lambda code: True)) == 101
