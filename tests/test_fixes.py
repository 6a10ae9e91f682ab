"""Fixes: `--fix`, `--unsafe-fixes`, `--diff`, `--fix-only` on real files.

Every fixture in the repository is linted; each that has a safe fix is fixed in a temporary copy
and must come out with those findings gone, nothing changed outside the edited spans, its YAML
still loading, and a second `--fix` changing nothing.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
from mgpu_lint.cli import main
from mgpu_lint.fixes import Edit, Fix, fix_text, fixable
from mgpu_lint.runner import Options, lint
from mgpu_lint.source import Span
from ruamel.yaml import YAML

from tests.conftest import FIXTURES, ROOT

ALL_FIXTURES = sorted(str(p.relative_to(ROOT)) for p in FIXTURES.rglob("*")
                      if p.is_file() and not p.name.startswith("."))


def _relint(path: str):  # type: ignore[no-untyped-def]
    return lambda text: lint([], Options(), stdin_text=text, stdin_filename=path).findings


def _with_safe_fix() -> list[str]:
    with contextlib.chdir(ROOT):
        return _safe_fixed()


def _safe_fixed() -> list[str]:
    out = []
    for path in ALL_FIXTURES:
        if any(fixable(f, False) and f.source.path == path
               for f in lint([path], Options()).findings):
            out.append(path)
    return out


WITH_SAFE_FIX = _with_safe_fix()


def test_fixtures_with_safe_fixes_cover_every_safe_fix_kind() -> None:
    codes = {f.code for p in WITH_SAFE_FIX for f in lint([p], Options()).findings
             if fixable(f, False)}
    assert {"MG006", "MG008", "MG013", "MG014", "MG109"} <= codes
    kinds = {Path(p).suffix or Path(p).name for p in WITH_SAFE_FIX}
    assert {".yaml", ".sh", ".md", "Dockerfile"} <= kinds  # every file kind with comments


def _only_edits(before: str, after: str, edits: list[Edit]) -> bool:
    """``after`` is ``before`` with each edit's span replaced by its text and every character
    outside the spans unchanged, in order."""
    pa = pb = 0
    for e in sorted(edits, key=lambda e: (e.span.start, e.span.end)):
        keep = before[pb:e.span.start]
        if after[pa:pa + len(keep)] != keep:
            return False
        pa += len(keep)
        if after[pa:pa + len(e.text)] != e.text:
            return False
        pa += len(e.text)
        pb = e.span.end
    return after[pa:] == before[pb:]


@pytest.mark.parametrize("path", WITH_SAFE_FIX)
def test_fix_removes_findings_and_touches_only_the_edited_spans(path: str) -> None:
    findings = lint([path], Options()).findings
    text = Path(path).read_text("utf-8")
    result = fix_text(path, text, findings, _relint(path), unsafe=False)
    assert result.applied and result.after != text
    texts = [before for before, _ in result.passes] + [result.after]
    for k, (before, fixes) in enumerate(result.passes):
        edits = [e for f in fixes for e in f.edits]
        assert _only_edits(before, texts[k + 1], edits), path
        # an edit replaces text only where the file differs: nothing is rewritten in passing
        for e in edits:
            assert before[e.span.start:e.span.end] != e.text
    again = _relint(path)(result.after)
    fixed_kinds = {(f.code, f.fix.title) for f in findings if fixable(f, False)}
    assert not [f for f in again if fixable(f, False)], path
    # the findings fixed are gone (a finding of the same code elsewhere may stay)
    assert len([f for f in again if f.code in {c for c, _ in fixed_kinds}]) < \
        len([f for f in findings if f.code in {c for c, _ in fixed_kinds}])
    assert not [f for f in again if f.code in ("MG000", "MG002", "MG003")]
    if path.endswith((".yaml", ".yml", ".json")):
        list(YAML(typ="safe", pure=True).load_all(result.after))
    if path.endswith(".md"):  # each fenced YAML block still loads
        from mgpu_lint.sources.markdown import YAML_LANGS, _blocks, _lines

        blocks = [body for lang, body, _, _ in _blocks(*_lines(result.after))
                  if lang in YAML_LANGS]
        assert blocks, path
        for body in blocks:
            list(YAML(typ="safe", pure=True).load_all("\n".join(t for _, t in body)))


@pytest.mark.parametrize("path", WITH_SAFE_FIX)
def test_fix_through_the_cli_is_idempotent_and_keeps_the_mode(
        path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / Path(path).name
    shutil.copy(path, copy)
    os.chmod(copy, 0o640)
    before = copy.read_text("utf-8")
    assert main(["--diff", str(copy)]) == 1
    diff = capsys.readouterr().out
    assert diff.startswith(f"--- {copy}\n+++ {copy}\n")
    assert copy.read_text("utf-8") == before  # --diff writes nothing
    main(["--fix", "--exit-zero", str(copy)])
    capsys.readouterr()
    fixed = copy.read_text("utf-8")
    assert fixed != before
    assert stat.S_IMODE(os.stat(copy).st_mode) == 0o640
    # the diff is exactly what --fix wrote
    patched = "".join(difflib.restore(difflib.ndiff(before.splitlines(True),
                                                    fixed.splitlines(True)), 2))
    assert patched == fixed
    assert main(["--diff", str(copy)]) == 0
    assert capsys.readouterr().out == ""
    main(["--fix", "--exit-zero", str(copy)])
    assert copy.read_text("utf-8") == fixed
    assert not list(tmp_path.glob(".mgpu-lint-*"))  # no temporary file left behind


def test_without_fix_nothing_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "Dockerfile"
    shutil.copy(FIXTURES / "fixes" / "Dockerfile", copy)
    before = copy.read_bytes()
    mtime = os.stat(copy).st_mtime_ns
    for args in ([], ["--format", "json"], ["--format", "sarif"], ["--unsafe-fixes"]):
        main([*args, str(copy)])
    capsys.readouterr()
    assert copy.read_bytes() == before and os.stat(copy).st_mtime_ns == mtime


def test_fixed_findings_are_not_reported(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "Dockerfile"
    shutil.copy(FIXTURES / "fixes" / "Dockerfile", copy)
    assert main(["--no-color", str(copy)]) == 1
    out = capsys.readouterr().out
    assert "MG014" in out and "MG013" in out
    main(["--fix", "--no-color", str(copy)])
    captured = capsys.readouterr()
    assert "MG014" not in captured.out and "MG013" not in captured.out
    assert "fixed 2 findings in 1 file" in captured.err
    assert '"--max-model-len", "8192", "--enable-prefix-caching"' in copy.read_text()


def test_a_glued_abbreviation_is_split_and_spelled_out(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM's argparse takes `"--tensor-parallel 2"` as one positional word (a space in it
    stops the prefix match), so it is MG014; the fix writes the name the prefix means, as
    MG013's does.  (SGLang reports no abbreviation, so its split keeps the prefix: `--tp`.)"""
    script = tmp_path / "serve.sh"
    script.write_text('#!/bin/sh\nvllm serve Qwen/Qwen2.5-7B-Instruct "--tensor-parallel 2" '
                      '--port 8000\n')
    assert main(["--no-color", "--select", "MG014", str(script)]) == 1
    out = capsys.readouterr().out
    assert 'hint: unquote it: --tensor-parallel-size 2' in out
    main(["--fix", "--no-color", str(script)])
    capsys.readouterr()
    assert script.read_text().splitlines()[1] == \
        'vllm serve Qwen/Qwen2.5-7B-Instruct "--tensor-parallel-size" "2" --port 8000'


MODEL_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: a
spec:
  containers:
    - name: flow
      image: vllm/vllm-openai:v0.30.0
      command: ["vllm", "serve", "--model", "Qwen/Qwen2.5-7B-Instruct", "--port", "8000"]
    - name: block
      image: vllm/vllm-openai:v0.30.0
      command:
        - vllm
        - serve
      args:
        - --model
        - Qwen/Qwen2.5-7B-Instruct
        - --port
        - "8000"
    - name: entrypoint
      image: vllm/vllm-openai:v0.30.0
      args: ["--model=Qwen/Qwen2.5-7B-Instruct", "--port", "8000"]
    - name: split
      image: vllm/vllm-openai:v0.30.0
      command: ["vllm", "serve", "--model"]
      args: ["Qwen/Qwen2.5-7B-Instruct"]
    - name: numeric
      image: vllm/vllm-openai:v0.30.0
      args: [--model=8, "--port", "8000"]
    - name: comment
      image: vllm/vllm-openai:v0.30.0
      args:
        - --model  # the model
        - Qwen/Qwen2.5-7B-Instruct
"""


def test_vllm_model_flag_becomes_the_positional_model(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """MG008 `--model` (vLLM 0.30.0): where it is the first word after `serve`, dropping it
    gives the argv vLLM's parse_args builds itself; where the model would have to move, or
    the text between is not a plain separator, or the value alone would load as a number,
    nothing is fixed."""
    pod = tmp_path / "pod.yaml"
    pod.write_text(MODEL_POD)
    main(["--fix", "--select", "MG008", str(pod)])
    capsys.readouterr()
    containers = YAML(typ="safe", pure=True).load(pod.read_text())["spec"]["containers"]
    argv = {c["name"]: c.get("command", [])[2:] + c.get("args", []) for c in containers}
    assert argv["flow"] == argv["block"] == argv["entrypoint"] == [
        "Qwen/Qwen2.5-7B-Instruct", "--port", "8000"]
    assert argv["split"] == ["--model", "Qwen/Qwen2.5-7B-Instruct"]
    assert argv["numeric"] == ["--model=8", "--port", "8000"]
    assert argv["comment"] == ["--model", "Qwen/Qwen2.5-7B-Instruct"]
    assert "        - Qwen/Qwen2.5-7B-Instruct\n        - --port\n" in pod.read_text()


def _fixes(capsys: pytest.CaptureFixture[str], command: str, *extra: str) -> dict[str, Any]:
    """Each finding's fix (title and safety, or None) for one command line, by code and flag."""
    main(["--output-format", "json", "--command", command, *extra])
    out = {}
    for f in json.loads(capsys.readouterr().out)["findings"]:
        fix = f.get("fix")
        word = command[f["range"]["start"]["column"] - 1:f["range"]["end"]["column"] - 1]
        out[f"{f['code']} {word}"] = (fix["title"], fix["safe"]) if fix else None
    return out


@pytest.mark.parametrize("release", ["0.11.2", "0.12.0"])
def test_vllm_cuda_graph_sizes_is_renamed_where_it_is_the_same_option(
        release: str, capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM 0.11.2/0.12.0 arg_utils.py: --cuda-graph-sizes is --cudagraph-capture-sizes under
    another name (same kwargs, same target field); given with the new spelling, or where an
    unknown `$ARGS` or an unread --config may give it, vLLM refuses the pair, so no fix."""
    pin = ("--target-version", f"vllm=={release}")
    safe = ("Write --cudagraph-capture-sizes", True)
    base = "vllm serve Qwen/Qwen3-8B "
    assert _fixes(capsys, base + "--cuda-graph-sizes 1 2 4", *pin) == {
        "MG008 --cuda-graph-sizes": safe}
    assert _fixes(capsys, base + "--cuda_graph_sizes=8", *pin)["MG008 --cuda_graph_sizes"] == \
        safe
    for other in ("--cuda-graph-sizes 8 --cudagraph-capture-sizes 16",
                  "--cudagraph-capture-sizes=16 --cuda-graph-sizes 8",
                  "--cuda-graph-sizes 8 $ARGS", "$ARGS --cuda-graph-sizes 8",
                  "--cuda-graph-sizes 8 --config ${CONFIG}"):
        found = _fixes(capsys, base + other, *pin)
        assert found.get("MG008 --cuda-graph-sizes", "missing") is None, (other, found)
    # an abbreviation is spelled out first (MG013); its MG008 waits for the next pass
    found = _fixes(capsys, base + "--cuda-graph-s 8", *pin)
    assert found == {"MG013 --cuda-graph-s": ("Write --cuda-graph-sizes", True),
                     "MG008 --cuda-graph-s": None}


def test_vllm_cuda_graph_sizes_elsewhere_gets_no_rename(capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    """0.10.2's --cuda-graph-sizes is a scheduler setting whose single value is a maximum (not
    deprecated, nothing to fix); from 0.13.0 it is rejected and not renamed for the user."""
    command = "vllm serve Qwen/Qwen3-8B --cuda-graph-sizes 512"
    assert _fixes(capsys, command, "--target-version", "vllm==0.10.2") == {}
    found = _fixes(capsys, command, "--target-version", "vllm==0.13.0")
    assert found == {"MG004 --cuda-graph-sizes": None}


def test_llama_flags_renamed_or_removed_without_a_same_meaning_fix(
        capsys: pytest.CaptureFixture[str]) -> None:
    """llama.cpp renamed --clear-idle (b8852, #21741) and later changed that setting (b9581,
    #24190): the new name is offered, unsafe.  The draft context size and
    --checkpoint-every-n-tokens went with no same-meaning successor: no fix, and no
    did-you-mean (it named --ctx-size and -lcd, which are other settings)."""
    found = _fixes(capsys, "llama-server -m /m/a.gguf --no-clear-idle --clear-idle -cd 4096 "
                           "--ctx-size-draft 4096 --checkpoint-every-n-tokens 512 --mlock")
    assert found == {
        "MG010 /m/a.gguf": None,
        "MG004 --no-clear-idle": ("Replace with --no-cache-idle-slots", False),
        "MG004 --clear-idle": ("Replace with --cache-idle-slots", False),
        "MG004 -cd": None, "MG004 --ctx-size-draft": None,
        "MG004 --checkpoint-every-n-tokens": None,
        "MG008 --mlock": ("Write --load-mode mlock", True)}


def test_fix_only_reports_nothing_and_exits_zero(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "llama.sh"
    shutil.copy(FIXTURES / "fixes" / "llama.sh", copy)
    assert main(["--fix-only", str(copy)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "--lora-scaled /models/adapter.gguf:0.5" in copy.read_text()


def test_unsafe_fixes_only_on_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "deploy.yaml"
    copy.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n"
        "    spec:\n      containers:\n        - name: vllm\n"
        "          image: vllm/vllm-openai:v0.30.0\n"
        '          args: ["Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "4",'
        ' "--max-num-seqz", "8"]\n'
        "          resources:\n            limits:\n              nvidia.com/gpu: 2\n"
        "            requests:\n              nvidia.com/gpu: 2\n")
    before = copy.read_text()
    assert main(["--diff", str(copy)]) == 0  # no safe fix
    capsys.readouterr()
    assert main(["--diff", "--unsafe-fixes", str(copy)]) == 1
    diff = capsys.readouterr().out
    assert '-          args: ["Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "4", ' \
           '"--max-num-seqz", "8"]' in diff
    assert '"--max-num-seqs", "8"]' in diff
    # the limit and the request that must equal it
    assert diff.count("-              nvidia.com/gpu: 2") == 2
    assert diff.count("+              nvidia.com/gpu: 4") == 2
    assert copy.read_text() == before


def test_a_fix_that_breaks_parsing_is_not_applied() -> None:
    path = "fixtures/fixes/Dockerfile"
    findings = lint([path], Options()).findings
    text = Path(path).read_text("utf-8")
    real = next(f for f in findings if f.code == "MG013")
    # an edit that leaves an unbalanced quote in the exec form (made by hand: no builder does it)
    broken = Fix("break", (Edit(Span(text.index('"serve"'), text.index('"serve"') + 1), ""),))
    from dataclasses import replace

    bad = replace(next(f for f in findings if f.code == "MG014"), fix=broken)
    result = fix_text(path, text, [bad, real], _relint(path), unsafe=False)
    assert result.applied and broken not in result.applied
    assert '"serve"' in result.after and "--enable-prefix-caching" in result.after


def test_styles_are_kept() -> None:
    path = "fixtures/fixes/k8s-styles.yaml"
    text = Path(path).read_text("utf-8")
    result = fix_text(path, text, lint([path], Options()).findings, _relint(path), unsafe=False)
    after = result.after
    # flow sequence: two items; block sequence: a new item line at the same indentation, a
    # plain number quoted so it stays a string; single quotes kept; escaped quotes stay escaped
    assert '"--tensor-parallel-size", "2"]' in after
    assert "            - --tensor-parallel-size\n            - \"2\"\n" in after
    assert "            - '--max-num-seqs'\n" in after
    assert '\\"--tensor-parallel-size\\" \\"2\\" --max-num-seqs \\"64\\"' in after
    # the folded block scalar keeps its indentation
    assert "\n              --max-model-len 8192\n" in after
    docs = list(YAML(typ="safe", pure=True).load_all(after))
    containers = docs[0]["spec"]["template"]["spec"]["containers"]
    assert containers[1]["command"][3:5] == ["--tensor-parallel-size", "2"]
    assert containers[3]["command"][2].startswith(
        'exec vllm serve Qwen/Qwen2.5-7B-Instruct "--tensor-parallel-size" "2" --max-num-seqs')
    # an abbreviation glued to its value: split, and the full name the prefix resolves to
    assert containers[4]["command"][3:] == ["--tensor-parallel-size", "2",
                                            "--max-model-len", "8192"]
    assert '            - "--tensor-parallel-size"\n            - "2"\n' in after


def test_json_fixes_applied_by_an_editor_match_fix(capsys: pytest.CaptureFixture[str]) -> None:
    """The editor contract: applying the JSON report's safe edits (1-based lines, code-point
    columns) gives the text of --fix's first pass."""
    import json

    path = "fixtures/fixes/k8s-styles.yaml"
    main(["--format", "json", path])
    doc = json.loads(capsys.readouterr().out)
    text = Path(path).read_text("utf-8")
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]

    def offset(pos: dict[str, int]) -> int:
        return starts[pos["line"] - 1] + pos["column"] - 1

    edits = sorted(((offset(e["range"]["start"]), offset(e["range"]["end"]), e["text"])
                    for f in doc["findings"] if f.get("fix", {}).get("safe")
                    for e in f["fix"]["edits"]), reverse=True)
    assert edits
    out = text
    for s, e, new in edits:
        out = out[:s] + new + out[e:]
    result = fix_text(path, text, lint([path], Options()).findings, _relint(path), unsafe=False)
    assert out == result.passes[1][0] if len(result.passes) > 1 else out == result.after


def test_stdin_is_never_written(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """`--fix - --stdin-filename F` fixes text that is not F's: F is left alone."""
    import io

    target = tmp_path / "Dockerfile"
    shutil.copy(FIXTURES / "fixes" / "Dockerfile", target)
    before = target.read_bytes()
    text = before.decode()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    main(["--fix", "--exit-zero", "-", "--stdin-filename", str(target)])
    capsys.readouterr()
    assert target.read_bytes() == before


def test_apply_chooses_and_edits_as_the_pairwise_check_did() -> None:
    """fixes.apply checks a fix against its neighbours among the spans taken, and joins the
    text once; the same fixes as checking every pair and editing from the end backwards (the
    way it was, kept for a fix whose own edits overlap)."""
    import random

    from mgpu_lint.fixes import Edit, Fix, _apply_pairwise, apply
    from mgpu_lint.source import Span

    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice("ab\n") for _ in range(rng.randrange(1, 40)))
        fixes = []
        for k in range(rng.randrange(0, 8)):
            edits = []
            for _ in range(rng.choice((1, 1, 2))):
                s = rng.randrange(0, len(text) + 1)
                e = min(len(text), s + rng.choice((0, 1, 2, 5)))
                edits.append(Edit(Span(s, e), rng.choice(("", "X", "YZ"))))
            fixes.append(Fix(f"f{k % 3}", tuple(edits)))
        if fixes and rng.random() < 0.2:
            fixes.append(fixes[0])
        assert apply(text, fixes) == _apply_pairwise(text, fixes)


def test_fixes_that_break_parsing_are_found_in_halves() -> None:
    """Among 64 fixes of one pass, the one whose edit breaks parsing is found by trying halves
    (a few re-lints, not 64) and the other 63 are applied."""
    from mgpu_lint.findings import Finding, Severity
    from mgpu_lint.source import SourceFile

    text = "".join(f"w{i:02d} " for i in range(64))
    source = SourceFile("t.sh", text)

    def finding(i: int, new: str) -> Finding:
        at = text.index(f"w{i:02d}")
        return Finding("MG004", Severity.ERROR, "x", source, Span(at, at + 1),
                       fix=Fix(f"fix {i}", (Edit(Span(at, at + 1), new),), safe=True))

    findings = [finding(i, '"' if i == 37 else "W") for i in range(64)]
    relints: list[str] = []

    def relint(t: str) -> list[Finding]:
        relints.append(t)
        return [Finding("MG003", Severity.ERROR, "quote", source, Span(0, 1))] if '"' in t else []

    result = fix_text("t.sh", text, findings, relint, unsafe=False)
    assert result.after == text.replace("w", "W").replace("W37", "w37")
    assert len(result.applied) == 63
    assert len(relints) <= 16  # the whole pass, then halves down to the one fix: 2 per level


def test_a_file_with_a_parse_error_of_its_own_is_fixed_in_one_pass(tmp_path, monkeypatch,
                                                                    capsys) -> None:
    """The baseline is every finding of the file: an MG003 the file already has is no sign that
    a pass's fixes broke it.  Counting only the fixable findings, every pass looked broken, was
    retried one fix at a time (a re-lint each) and no fix was kept: --fix did nothing."""
    from mgpu_lint import runner

    script = tmp_path / "run.sh"
    script.write_text("".join(f"vllm serve meta-llama/Llama-3.1-8B-Instruct --port 80{i}0 "
                              "--tensr-parallel-size 1\n" for i in range(6))
                      + "vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8090 \\ \n"
                      "  --max-model-len 4096\n")  # MG003: the backslash escapes a space
    calls: list[int] = []
    real = runner.lint

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "lint", counting)
    assert main(["--diff", "--unsafe-fixes", str(script)]) == 1
    out = capsys.readouterr()
    assert out.out.count("+vllm serve") == 6 and "--tensor-parallel-size 1" in out.out
    assert len(calls) <= 3  # the lint, the pass, the check that nothing is left


def _patched(before: str, diff: str) -> str:
    """``before`` with a unified diff applied (hunks in order, context checked)."""
    import re

    lines = before.splitlines(keepends=True)
    out: list[str] = []
    at = 0
    body = diff.splitlines(keepends=True)[2:]
    k = 0
    while k < len(body):
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", body[k])
        assert m, body[k]
        start, length = int(m.group(1)), int(m.group(2) or 1)
        first = start - 1 if length else start
        out += lines[at:first]
        at = first
        k += 1
        while k < len(body) and not body[k].startswith("@@"):
            line = body[k]
            k += 1
            if line.startswith("\\"):
                out[-1] = out[-1].rstrip("\n") if out and line.startswith("\\ No") else out[-1]
                continue
            text = line[1:]
            if line[0] in " -":
                assert lines[at].rstrip("\n") == text.rstrip("\n")
                at += 1
            if line[0] in " +":
                out.append(text)
    return "".join(out + lines[at:])


def test_the_diff_is_difflibs_for_scattered_fixes_and_a_diff_for_any():
    """fixes.unified_diff reads difflib's matcher block by block.  Lines of a file changed here
    and there (as fixes change them) give exactly difflib.unified_diff; any change, also of
    every line of a long repeated stretch, gives a diff that turns the old text into the new."""
    import random

    from mgpu_lint import fixes

    rng = random.Random(13)
    vocab = ["a\n", "b\n", "c\n", "vllm serve m -tp 3\n", "x\n", "\n"]
    for trial in range(400):
        scattered = trial % 2 == 0
        # scattered fixes on lines of a real file (mostly distinct): difflib's diff exactly;
        # any fixes on repeated lines: a diff (difflib may align repeated lines otherwise)
        before = [f"line {rng.randrange(10**6)}\n" if scattered and rng.random() < 0.9
                  else rng.choice(vocab) for _ in range(rng.randint(0, 200))]
        after = list(before)
        for _ in range(rng.randint(1, 6) if scattered else rng.randint(1, 300)):
            if not after:
                break
            at = rng.randrange(len(after))
            op = rng.random()
            if op < 0.6 or not scattered and op < 0.9:
                after[at] = rng.choice(vocab).replace("\n", "!\n")
            elif op < 0.8:
                del after[at]
            else:
                after.insert(at, "new\n")
        a, b = "".join(before), "".join(after)
        got = fixes.unified_diff(fixes.FileFix("f", a, b, [], []))
        assert _patched(a, got) == b
        if scattered and len(before) > 10:
            want = "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True),
                                                "f", "f"))
            assert got == want
