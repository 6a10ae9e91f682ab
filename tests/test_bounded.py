"""Bounded on every input (issue 20): each hostile case of tests/hostile_cases.py, at a small
scale, in its own process: no signal, no MG000, no traceback, within time and memory limits.

The full-size run with resource figures is bench/hostile.py; the long randomised campaign is
bench/fuzz_campaign.py.  The fixed regression corpus (tests/data/regressions/) is linted here too.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mgpu_lint import safeio

from .hostile_cases import CASES, gguf_model

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.hostile import broken, run_cli  # noqa: E402

SCALE = 0.02


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_case_is_bounded(tmp_path: Path, name: str) -> None:
    d = tmp_path / "case"
    d.mkdir()
    args = CASES[name](d, SCALE)
    result = run_cli(args, d, timeout=30)
    assert broken(result) == [], (name, result)


@pytest.mark.parametrize("name", ["long-word", "long-word-quoted-var", "long-yaml-scalar"])
def test_long_words_are_bounded_at_half_size(tmp_path: Path, name: str) -> None:
    """Words and scalars of 4.5 MiB: character maps are runs, not per-character tables (those
    took about 125 bytes per input byte, 1.1 GiB for a 9 MiB word)."""
    d = tmp_path / "case"
    d.mkdir()
    args = CASES[name](d, 0.5)
    result = run_cli(args, d, timeout=60)
    assert broken(result) == [], (name, result)


@pytest.mark.parametrize("name", ["long-ansi-escapes", "long-param-default",
                                  "long-folded-blank-lines"])
def test_long_escapes_and_blank_lines_are_bounded_at_full_size(tmp_path: Path, name: str) -> None:
    """4 MiB of escapes in $'…', of a ${x:-…} default, of empty lines in a folded scalar: the
    regex engine kept ~150 bytes per repetition (640-720 MiB), the block scalar ~300 bytes per
    line (1.2 GiB)."""
    d = tmp_path / "case"
    d.mkdir()
    args = CASES[name](d, 1.0)
    result = run_cli(args, d, timeout=60)
    assert broken(result) == [], (name, result)


@pytest.mark.parametrize("name", ["many-dockerfile-stages", "many-array-appends",
                                  "gguf-header-beside-many-launches",
                                  "config-yaml-beside-many-launches",
                                  "many-file-wide-suppressions",
                                  "long-exec-form-entrypoint", "long-exec-form-cmd",
                                  "many-dockerfile-instructions",
                                  "many-dockerfile-continuation-lines",
                                  "chained-dockerfile-stages", "many-relative-workdirs",
                                  "services-building-one-dockerfile",
                                  "services-selecting-many-launches",
                                  "llmisvcs-naming-many-configs",
                                  "llmisvc-config-of-many-template-args",
                                  "diff-of-fixes-on-every-line"])
def test_quadratic_shapes_are_bounded_at_full_size(tmp_path: Path, name: str) -> None:
    """9.5 MiB of `FROM image AS s` stages: each FROM scanned every stage before it for its
    alias (over 40 s; 1 MiB took 45 s); of `a+=(x)`: each append copied the array (over 40 s);
    a 3.2 MiB GGUF header or a 0.75 MiB --config beside 1,000 launches naming it: each launch
    read and parsed it again (over 120 s); of `disable-file` comments beside 1,000 findings:
    each marked every other one used (over 120 s); of an exec-form ENTRYPOINT or CMD of 1.9
    million elements, read and checked to the last (12-20 s, 530-1000 MiB); of 1.6 million
    `RUN a` (9 s, 700 MiB) or one RUN of 1.9 million continuation lines (7 s, 600 MiB); of
    stages each built from the one before: each copied the ENV it inherits (past 120 s and
    24 GiB); of `WORKDIR a`: each normalised the whole path again (over 120 s); of 1,000
    compose services building one 3.2 MB Dockerfile: each read and parsed it again (past
    120 s); of LoadBalancer Services, then Deployments they all select: each launch was matched
    with each Service and got a finding for each (1 MiB took 30 s and 2.2 GB); of
    LLMInferenceServices each naming 300 configs: each merged over all of them, its ref nodes
    kept (15 s, 790 MB); of an LLMInferenceServiceConfig's 30,000 args that are template
    actions: each word looked through every action (41 s); `--diff` of fixes on every line of a script: difflib's matcher read
    the rest of the file at once (over 60 s)."""
    d = tmp_path / "case"
    d.mkdir()
    args = CASES[name](d, 1.0)
    result = run_cli(args, d, timeout=30)
    assert broken(result) == [], (name, result)


def test_fifo_side_files_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(safeio.SideFileError, match="FIFO"):
        safeio.read_bytes(str(fifo))
    with pytest.raises(safeio.SideFileError, match="FIFO"):
        safeio.open_regular(str(fifo))
    assert not safeio.is_regular_file(str(fifo))


def test_size_limit_and_utf8(tmp_path: Path) -> None:
    p = tmp_path / "big"
    p.write_bytes(b"x" * 101)
    with pytest.raises(safeio.SideFileError, match="limit"):
        safeio.read_bytes(str(p), max_bytes=100)
    p.write_bytes(b"ok\n\xff")
    with pytest.raises(safeio.SideFileError, match="0xff") as err:
        safeio.read_text(str(p))
    assert err.value.offset == 3


def test_json_depth_limit_ignores_brackets_in_strings() -> None:
    assert safeio.loads_json('{"a": "' + "[" * 5000 + '"}') == {"a": "[" * 5000}
    with pytest.raises(safeio.SideFileError, match="deeper") as err:
        safeio.loads_json("[" * 300 + "]" * 300)
    assert err.value.offset == safeio.MAX_JSON_DEPTH
    assert safeio.loads_json("[" * 150 + "]" * 150) is not None
    with pytest.raises(safeio.SideFileError, match="not valid JSON"):
        safeio.loads_json('{"a": ')


def test_yaml_alias_bomb_and_self_reference_are_refused() -> None:
    from .hostile_cases import billion_laughs

    with pytest.raises(safeio.SideFileError, match="alias"):
        safeio.loads_yaml(billion_laughs())
    with pytest.raises(safeio.SideFileError, match="contains it"):
        safeio.loads_yaml("a: &x [1, *x]\n")
    # ordinary aliases are fine
    assert safeio.loads_yaml("a: &x [1, 2]\nb: *x\n") == {"a": [1, 2], "b": [1, 2]}


def test_unencodable_values_are_named() -> None:
    import datetime

    assert safeio.unencodable({"a": [1, "x", None, 2.5, True]}) is None
    assert "date" in safeio.unencodable({"a": datetime.date(2024, 1, 1)})
    assert "binary" in safeio.unencodable([b"x"])
    assert "key" in safeio.unencodable({1: "a"})
    shared: list = [1]
    assert "alias" in safeio.unencodable({"a": shared, "b": shared})
    assert "non-finite" in safeio.unencodable({"a": float("nan")})


def test_gguf_arrays_nested_deeply_are_refused(tmp_path: Path) -> None:
    from mgpu_lint.catalog.gguf_header import GgufError, read_header

    from .hostile_cases import gguf_nested_array

    p = tmp_path / "m.gguf"
    p.write_bytes(gguf_model(raw_meta=gguf_nested_array(50)))
    with pytest.raises(GgufError, match="nested"):
        read_header(str(p))
    p.write_bytes(gguf_model(raw_meta=gguf_nested_array(2)))
    assert read_header(str(p)).arch_value("block_count") == 4


def _codes(tmp_path: Path, name: str) -> list[tuple[str, str]]:
    import json

    d = tmp_path / "case"
    d.mkdir()
    args = CASES[name](d, SCALE)
    result = run_cli(args, d, timeout=30)
    assert broken(result) == []
    out = (d.parent / "case.out").read_text()
    return [(f["code"], f["message"]) for f in json.loads(out)["findings"]]


@pytest.mark.parametrize("name,needle", [
    ("tp-1e9", "beyond any deployment"),
    ("dp-1e8-ep", "beyond any deployment"),
    ("config-yaml-alias-bomb", "alias"),
    ("config-yaml-self-alias", "contains it"),
    ("config-yaml-json-cannot-encode", "timestamp value"),
    ("config-yaml-binary", "binary"),
    ("config-yaml-int-keys", "not a string"),
    ("config-yaml-deep-flow", "nesting deeper"),
    ("compilation-config-deep", "nested deeper"),
    ("ts-nan", "not a share"),
    ("ts-minus-one", "not a share"),
])
def test_out_of_range_is_a_value_finding(tmp_path: Path, name: str, needle: str) -> None:
    """The hostile value is reported as MG006 where it was written, and nothing else runs on
    it (no layout, memory or MoE finding on a billion GPUs)."""
    found = _codes(tmp_path, name)
    assert any(code == "MG006" and needle in msg for code, msg in found), found
    if not name.startswith(("config", "compilation")):  # those files also have a 4-GPU tp-1 layout
        assert not any(code.startswith(("MG1", "MG3", "MG4", "MG5")) for code, _ in found), found


def test_non_utf8_env_is_mg001_on_the_env(tmp_path: Path) -> None:
    found = _codes(tmp_path, "env-not-utf8")
    assert any(code == "MG001" and "0xff" in msg and ".env" in msg for code, msg in found)


@pytest.mark.parametrize("name", ["gpu-request-1e8", "llama-gpu-request-1e8"])
def test_implausible_gpu_request_is_a_value_finding(tmp_path: Path, name: str) -> None:
    """A GPU request no machine has is said where it is written (MG006), not only skipped."""
    found = _codes(tmp_path, name)
    assert ("MG006", "nvidia.com/gpu limit 100000000 is beyond any deployment (at most "
            "1,048,576 GPUs are checked): the GPU-count rules are skipped for this launch") in found


REGRESSIONS = Path(__file__).resolve().parent / "data" / "regressions"


@pytest.mark.parametrize("name", sorted(p.name for p in REGRESSIONS.iterdir() if p.is_dir()))
def test_regression_corpus(name: str) -> None:
    """Every input that ever failed (hostile cases at a small size, campaign finds), linted as a
    directory in-process: no MG000, no exception, each well within the time limit."""
    import time

    from mgpu_lint.runner import Options, lint

    start = time.perf_counter()
    result = lint([str(REGRESSIONS / name)], Options())
    assert not [f.message for f in result.findings if f.code == "MG000"]
    assert time.perf_counter() - start < 10


@pytest.mark.parametrize("command", [
    # the long campaign's last two causes (bench/fuzz_campaign.py, seed 2): an infinite or NaN
    # CPU offload made the vLLM budget convert infinity to an integer; shares that are all zero
    # in float32 divided the llama.cpp split points by zero
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --cpu-offload-gb inf",
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --cpu-offload-gb nan",
    # seed 3: a finite offload whose bytes overflow to infinity
    "vllm serve mistralai/Mixtral-8x7B-Instruct-v0.1 --cpu-offload-gb 1e308",
    # seed 4: a negative sequence count under pipeline parallelism (MG203's busy share)
    "vllm serve meta-llama/Llama-3.1-8B-Instruct -pp 2 --max-num-seqs -1",
    "llama-server -hf bartowski/Meta-Llama-3.1-8B-Instruct-GGUF -ngl 99 -ts 1e-320,1e-320 "
    "--fit off",
])
def test_campaign_crashes_are_findings_not_internal_errors(command: str, capsys) -> None:
    from mgpu_lint.cli import main

    main(["--exit-zero", "--output-format", "json", "--command", command])
    assert "MG000" not in capsys.readouterr().out
