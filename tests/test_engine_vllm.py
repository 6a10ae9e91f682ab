"""vLLM argument parsing: catalog coverage, argparse behaviours, findings and their positions."""

from __future__ import annotations

import difflib
import json
import random
from pathlib import Path
from typing import Any

import pytest
from mgpu_lint.engines import Invocation, parse_launch
from mgpu_lint.engines.catalog import OptionSpec, vllm_catalog
from mgpu_lint.findings import Finding, Severity
from mgpu_lint.launch import ENTRY_VLLM_API_SERVER

from tests.conftest import DATA

from .wordutil import codes, list_launch, make_launch, render

REFERENCE = DATA / "engines"

PARSE_ERRORS = {"MG004", "MG005", "MG006", "MG013", "MG014", "MG016"}


def parse(command: str, **kw: Any) -> tuple[Invocation, list[Finding]]:
    return parse_launch(make_launch(command, **kw))


def sample_value(spec: OptionSpec) -> str:
    if spec.key == "config":
        return "absent.yaml"
    if spec.choices:
        return str(spec.choices[0])
    return {
        "int": "2", "float": "0.5", "hrint": "32k", "hrint_auto": "auto", "json": "{}",
        "json_or_str": "x", "lora_modules": "a=b", "id_list": "0,1",
    }.get(spec.type, "x")


def command_for(spelling: str, spec: OptionSpec) -> str:
    if spec.key == "model":
        return f"vllm serve {spelling} org/model"
    if spec.takes_value and spec.nargs != "?":
        return f"vllm serve org/model {spelling} {sample_value(spec)}"
    return f"vllm serve org/model {spelling}"


def test_every_reference_spelling_is_accepted() -> None:
    catalog = vllm_catalog()
    ref = json.loads((REFERENCE / "vllm-serve.json").read_text("utf-8"))
    for r in ref:
        if r["positional"] or r["type"] == "help":
            continue
        spec = catalog.by_key[r["dest"]]
        for spelling in r["names"] + r["neg_names"]:
            inv, findings = parse(command_for(spelling, spec))
            bad = [f for f in findings if f.code in PARSE_ERRORS]
            assert not bad, (spelling, render(bad))
            assert [o.key for o in inv.occurrences] == [spec.key], spelling
            assert inv.model is not None and inv.model.value == "org/model"


def test_every_reference_choice_list_is_enforced() -> None:
    catalog = vllm_catalog()
    ref = json.loads((REFERENCE / "vllm-serve.json").read_text("utf-8"))
    for r in ref:
        if not r["choices"] or r["positional"]:
            continue
        spec = catalog.by_key[r["dest"]]
        flag = r["names"][0]
        for choice in r["choices"]:
            inv, findings = parse(f"vllm serve m {flag} {choice}")
            assert not findings, (flag, choice, render(findings))
        invalid = "24" if isinstance(r["choices"][0], int) else "zz_not_a_choice"
        inv, findings = parse(f"vllm serve m {flag} {invalid}")
        if spec.key == "max_lora_rank":  # MG307 reports it (DECISIONS: one cause, one finding)
            assert not findings
            continue
        assert codes(findings) == ["MG006"], flag
        assert "invalid choice" in findings[0].message
        assert not inv.setting(spec.key).known


def one_edit(spelling: str, rng: random.Random, kind: int) -> str:
    dashes = "--" if spelling.startswith("--") else "-"
    name = spelling[len(dashes):]
    i = rng.randrange(len(name))
    if kind == 0 and len(name) > 1:  # delete a character
        name = name[:i] + name[i + 1:]
    elif kind == 1:  # replace a character
        name = name[:i] + ("x" if name[i] != "x" else "q") + name[i + 1:]
    elif len(name) > 1:  # swap two neighbours
        i = min(i, len(name) - 2)
        name = name[:i] + name[i + 1] + name[i] + name[i + 2:]
    return dashes + name


def test_every_spelling_with_one_edit_is_caught() -> None:
    catalog = vllm_catalog()
    rng = random.Random(20260822)
    checked = 0
    for n, spelling in enumerate(sorted(catalog.by_spelling)):
        spec = catalog.by_spelling[spelling].option
        if spec.type == "help":
            continue
        edited = one_edit(spelling, rng, n % 3)
        normal = edited if not edited.startswith("--") else edited.replace("_", "-")
        if edited == spelling or catalog.lookup(normal) is not None:
            continue  # the edit made another valid spelling
        _, findings = parse(f"vllm serve m {edited}" + (" 2" if spec.takes_value else ""))
        flag = [f for f in findings if f.code in ("MG004", "MG013")]
        assert flag, (spelling, edited, render(findings))
        message = flag[0].message
        if flag[0].code == "MG013" or "ambiguous" in message:
            assert spelling in message or catalog.prefixed(normal), (edited, message)
        elif "did you mean" in message:
            suggested = message.rsplit("did you mean ", 1)[1].split("?")[0]
            ratio = difflib.SequenceMatcher(None, edited, suggested).ratio()
            assert suggested == spelling or ratio >= difflib.SequenceMatcher(
                None, edited, spelling).ratio(), (edited, suggested, spelling)
        else:
            assert len(spelling) <= 4 or catalog.retired_by_spelling.get(normal), (
                edited, message)
        checked += 1
    assert checked > 300


def test_spelling_forms() -> None:
    inv, findings = parse("vllm serve org/m --tensor_parallel_size=4 -pp=2 --no_enable_prefix_caching")
    assert not findings
    assert inv.tensor_parallel_size.value == 4
    assert inv.pipeline_parallel_size.value == 2
    assert inv.enable_prefix_caching.value is False
    assert inv.enable_prefix_caching.given
    assert inv.data_parallel_size.value == 1 and not inv.data_parallel_size.given
    text = "vllm serve org/m --tensor_parallel_size=4"
    span = inv.tensor_parallel_size.span
    assert span is not None and text[span.start:span.end] == "4"


def test_attached_short_value_is_rejected() -> None:
    _, findings = parse("vllm serve org/m -tp2")
    assert render(findings) == ["MG004 error [-tp2] unknown flag -tp2; did you mean -tp?"]


def test_abbreviations() -> None:
    inv, findings = parse("vllm serve org/m --gpu-memory 0.8 --max-num-seq 8")
    assert render(findings) == [
        ("MG013 warning [--gpu-memory] --gpu-memory is an abbreviation: vLLM resolves it to "
        "--gpu-memory-utilization"),
        ("MG013 warning [--max-num-seq] --max-num-seq is an abbreviation: vLLM resolves it to "
        "--max-num-seqs"),
    ]
    assert inv.gpu_memory_utilization.value == 0.8
    inv, findings = parse("vllm serve org/m --ep --device cuda -tp 2")
    assert codes(findings) == ["MG013", "MG013"]
    assert all(f.severity.value == "error" for f in findings)
    assert "--eplb-config" in findings[0].message and "-ep" in findings[0].message
    assert not inv.eplb_config.known and not inv.device_ids.known
    assert inv.tensor_parallel_size.value == 2  # `cuda` was skipped as --device's value
    _, findings = parse("vllm serve org/m --dp 2")
    assert codes(findings) == ["MG004"] and "ambiguous" in findings[0].message


def test_booleans_take_no_value() -> None:
    _, findings = parse("vllm serve org/m --enforce-eager=true --trust-remote-code true")
    assert render(findings) == [
        ("MG006 error [true] --enforce-eager takes no value: vLLM 0.30.0 fails with \"ignored "
        "explicit argument 'true'\""),
        ("MG006 error [true] --trust-remote-code takes no value: `true` reaches vLLM 0.30.0 as an "
        "extra argument (unrecognized arguments)"),
    ]


def _pod_on_images(tmp_path, capsys, command: str, images: tuple[str, ...], *opts: str
                   ) -> list[str]:
    """The text report of one Pod running ``command`` (a YAML flow list's items) on each image."""
    from mgpu_lint.cli import main

    outs = []
    for image in images:
        path = tmp_path / "p.yaml"
        path.write_text("kind: Pod\napiVersion: v1\nmetadata: {name: a}\nspec:\n  containers:\n"
                        f"  - name: a\n    image: {image}\n    command: [{command}]\n")
        main(["--no-color", "--exit-zero", *opts, str(path)])
        outs.append(capsys.readouterr().out)
    return outs


def test_a_value_another_release_takes_is_a_warning_when_nothing_pins(tmp_path, capsys) -> None:
    # --enable-chunked-prefill was a StoreBoolean up to 0.7.3 (`=false` valid there), a bare
    # flag from 0.8.5 (vllm/engine/arg_utils.py EngineArgs.add_cli_args of each release)
    unpinned, pinned = _pod_on_images(
        tmp_path, capsys, "vllm, serve, org/m, --enable-chunked-prefill=false, "
        "--enforce-eager=true",
        ("registry.local/llm:1", "vllm/vllm-openai:v0.10.2"))
    assert ("MG006 [warning] --enable-chunked-prefill takes no value: vLLM 0.30.0 fails with "
            "\"ignored explicit argument 'false'\" (assuming vLLM 0.30.0, as nothing pins the "
            "release: vLLM 0.6.6.post1 to 0.7.3 take a value there)") in unpinned, unpinned
    # no release takes a value for --enforce-eager: an error either way
    assert "MG006 [error] --enforce-eager takes no value" in unpinned, unpinned
    assert "MG006 [error] --enable-chunked-prefill takes no value: vLLM 0.10.2 fails" in pinned


def test_last_repeat_wins() -> None:
    command = "vllm serve org/m --tensor-parallel-size 4 -tp 8"
    inv, findings = parse(command)
    assert inv.tensor_parallel_size.value == 8
    [f] = findings
    assert f.code == "MG007" and f.severity.value == "warning"
    assert command[f.span.start:f.span.end] == "4"
    assert "--tensor-parallel-size 4 (line 1) is overridden by -tp 8" in f.message
    assert command[f.related[0].span.start:f.related[0].span.end] == "8"


def test_missing_values() -> None:
    _, findings = parse("vllm serve org/m --max-model-len --tensor-parallel-size")
    assert codes(findings) == ["MG005", "MG005"]
    _inv, findings = parse("vllm serve org/m --served-model-name --port 1")
    assert codes(findings) == ["MG005"] and "at least one" in findings[0].message


def test_nargs_plus_swallows_the_model() -> None:
    inv, findings = parse("vllm serve --served-model-name api org/model")
    assert inv.served_model_name.value == ["api", "org/model"]
    assert codes(findings) == ["MG016"]
    # 0.30.0 refuses a first argument that is not the model when --served-model-name is given
    # (vllm/utils/argparse_utils.py FlexibleArgumentParser.parse_args, from 0.20.2)
    assert "`model` should be provided as the first positional argument" in findings[0].message
    assert "would also take `org/model`" in findings[0].message
    assert inv.model is not None and not inv.model.known
    # before that check, the greedy option takes the model and vLLM serves its default
    _inv, findings = parse_launch(make_launch("vllm serve --served-model-name api org/model"),
                                  "0.15.1")
    assert codes(findings) == ["MG016"]
    assert "takes every following word, including `org/model`" in findings[0].message


def test_values() -> None:
    inv, findings = parse("vllm serve org/m --max-model-len 32k --kv-cache-memory-bytes 2G "
                          "--max-num-batched-tokens 32K")
    assert not findings
    assert inv.max_model_len.value == 32000
    assert inv.kv_cache_memory_bytes.value == 2 * 2**30
    assert inv.max_num_batched_tokens.value == 32768
    inv, findings = parse("vllm serve org/m --max-model-len 1.5K --max-num-seqs many "
                          "--gpu-memory-utilization x")
    assert codes(findings) == ["MG006", "MG006", "MG006"]
    assert "Did you mean to use 1.5k" in findings[0].message
    assert not inv.max_model_len.known and not inv.max_num_seqs.known
    inv, _ = parse("vllm serve org/m --max-model-len auto")
    assert inv.max_model_len.value == -1


def test_json_and_dotted_keys() -> None:
    command = 'vllm serve org/m --compilation-config {"level":3}'
    _, findings = parse(command)
    assert codes(findings) == ["MG006"]
    assert "no field `level`" in findings[0].message
    inv, findings = parse("vllm serve org/m --compilation-config.mode 3 "
                          "-cc.cudagraph_capture_sizes+ 1,2 --speculative-config {bad}")
    assert codes(findings) == ["MG006"]
    assert inv.setting("compilation_config").value == {
        "mode": 3, "cudagraph_capture_sizes": [1, 2]}
    inv, findings = parse('vllm serve org/m -cc {"mode":3} -cc.cudagraph_capture_sizes+ 1,2')
    assert codes(findings) == ["MG007"] and "no deep merge" in findings[0].message
    assert inv.setting("compilation_config").value == {"cudagraph_capture_sizes": [1, 2]}
    _, findings = parse("vllm serve org/m --compilation-config.levl 3")
    assert codes(findings) == ["MG006"] and "did you mean `level`" not in findings[0].message


def test_optimization_level() -> None:
    for form in ("-O3", "-O 3", "-O=3", "--optimization-level 3"):
        inv, findings = parse(f"vllm serve org/m {form}")
        assert not findings, form
        assert inv.setting("optimization_level").value == "3"
    _, findings = parse("vllm serve org/m -O5")
    assert codes(findings) == ["MG006"]


def test_model_entry_points() -> None:
    inv, findings = parse("vllm serve --model org/m")
    assert codes(findings) == ["MG008"]
    assert inv.model is not None and inv.model.value == "org/m" and inv.model.origin == "--model"
    inv, findings = parse("python3 -m vllm.entrypoints.openai.api_server --model org/m",
                          entry=ENTRY_VLLM_API_SERVER, engine="vllm", skip=3)
    assert codes(findings) == ["MG008"] and "deprecated from vLLM 0.29.0" in findings[0].message
    assert inv.model is not None and inv.model.value == "org/m"
    _, findings = parse("python3 -m vllm.entrypoints.openai.api_server org/m -tp 2",
                        entry=ENTRY_VLLM_API_SERVER, engine="vllm", skip=3)
    assert codes(findings) == ["MG008", "MG016"]
    assert "ignores it" in next(f for f in findings if f.code == "MG016").message
    _, findings = parse("python3 -m vllm.entrypoints.openai.api_server org/m",
                        entry=ENTRY_VLLM_API_SERVER, engine="vllm", skip=3, version_pin="0.9.2")
    assert "rejects it" in next(f for f in findings if f.code == "MG016").message
    _, findings = parse("vllm serve -tp 2")
    assert codes(findings) == ["MG016"] and "Qwen/Qwen3-0.6B" in findings[0].message
    _, findings = parse("vllm serve org/m other")
    assert codes(findings) == ["MG004"] and "unexpected argument" in findings[0].message


def test_serve_repeated_after_image_entrypoint() -> None:
    launch = list_launch(["serve", "org/m", "--tensor-parallel-size", "2"])
    inv, findings = parse_launch(launch)
    # one error for the one cause: the model after it is not "unexpected" on its own
    assert [line.split("]")[0] for line in render(findings)] == ["MG016 error [serve"]
    assert inv.tensor_parallel_size.value == 2


@pytest.mark.parametrize("args, restated", [
    (["vllm", "serve", "org/m"], "vllm serve"),
    (["/usr/local/bin/vllm", "serve", "org/m"], "/usr/local/bin/vllm serve"),
    (["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "org/m"],
     "python3 -m vllm.entrypoints.openai.api_server"),
    (["python3.12", "-m", "vllm.entrypoints.cli.main", "serve", "org/m"],
     "python3.12 -m vllm.entrypoints.cli.main serve"),
])
def test_program_repeated_after_image_entrypoint(args: list[str], restated: str) -> None:
    _, findings = parse_launch(list_launch([*args, "--tensor-parallel-size", "2"]))
    (f,) = [f for f in findings if f.code == "MG016"]
    assert f.severity is Severity.ERROR and f.message.startswith(f"`{restated}` repeats")
    assert "MG004" not in codes(findings)


def test_program_not_repeated_when_the_image_runs_no_engine() -> None:
    """`vllm` as the model of `vllm serve` alone is not a repeated program."""
    _, findings = parse_launch(list_launch(["vllm", "--tensor-parallel-size", "2"]))
    assert not any(f.message.endswith("(unrecognized arguments)") and "repeats" in f.message
                   for f in findings)


def test_glued_list_item() -> None:
    launch = list_launch(["org/m", "--port 8000", "--tensor-parallel-size 4"])
    inv, findings = parse_launch(launch)
    assert [line.split("]")[0] for line in render(findings)] == [
        "MG014 error [--port 8000", "MG014 error [--tensor-parallel-size 4"]
    assert inv.tensor_parallel_size.given and not inv.tensor_parallel_size.known


def test_unresolved_variables() -> None:
    command = "vllm serve $MODEL --tensor-parallel-size $(TP) --port $PORT"
    inv, findings = parse(command)
    findings.sort(key=lambda f: f.sort_key())
    assert [(f.code, command[f.span.start:f.span.end]) for f in findings] == [
        ("MG009", "$MODEL"), ("MG009", "$(TP)")]
    assert "MG101" in findings[1].message
    assert inv.model is not None and not inv.model.known
    assert not inv.tensor_parallel_size.known and not inv.port.known


def test_version_not_catalogued() -> None:
    _, findings = parse("vllm serve org/m --swap-space 4", version_pin="0.8.5")
    assert not findings  # 0.8.5 is catalogued as 0.8.5.post1 (same option code)
    _, findings = parse("vllm serve org/m --num-scheduler-steps 8", version_pin="0.10.1")
    assert codes(findings) == ["MG004", "MG015"]  # last catalogued in 0.10.0, gone in 0.10.2
    unknown = next(f for f in findings if f.code == "MG004")
    assert unknown.severity.value == "warning" and "0.10.1 may accept it" in unknown.message
    note = next(f for f in findings if f.code == "MG015")
    assert "the catalogued release of the 0.10 line" in note.message
    # unpinned: a flag another release accepts is a warning that names the assumption
    _, findings = parse("vllm serve org/m --swap-space 4")
    assert codes(findings) == ["MG004"] and findings[0].severity.value == "warning"
    assert "assuming vLLM 0.30.0" in findings[0].message
    assert "--kv-offloading-size" in (findings[0].hint or "")
    # pinned to a release without it: an error
    _, findings = parse("vllm serve org/m --swap-space 4", version_pin="0.30.0")
    assert codes(findings) == ["MG004"] and findings[0].severity.value == "error"
    # a flag no release ever had stays an error
    _, findings = parse("vllm serve org/m --swap-spaces 4")
    assert codes(findings) == ["MG004"] and findings[0].severity.value == "error"


def test_config_file(tmp_path: Path) -> None:
    (tmp_path / "cfg.yaml").write_text(
        "model: org/from-config\ntensor_parallel_size: 2\nenable-prefix-caching: false\n"
        "max_model_len: 16k\nbogus: 1\n")
    source = str(tmp_path / "serve.sh")
    inv, findings = parse("vllm serve --config cfg.yaml -tp 4", path=source)
    assert codes(findings) == ["MG004", "MG006", "MG007"]
    assert inv.model is not None and inv.model.value == "org/from-config"
    assert inv.tensor_parallel_size.value == 4
    assert inv.max_model_len.value == 16000
    assert not inv.enable_prefix_caching.given
    _, findings = parse("vllm serve org/m --config=cfg.yaml", path=source)
    assert codes(findings) == ["MG006"] and findings[0].severity.value == "warning"
    _, findings = parse("vllm serve org/m --config cfg.json", path=source)
    assert codes(findings) == ["MG006"]


# vLLM reads --config with PyYAML's yaml.safe_load (FlexibleArgumentParser.load_config_file,
# vllm/utils/argparse_utils.py 0.30.0); each refusal is said in the file's words, with places
CONFIG_ERRORS = [
    # PyYAML's Composer.compose_node: "found duplicate anchor %r; first occurrence"
    ("a: &x 1\nb: &x 2\n", "anchor &x is defined twice, at cfg.yaml:1:4 and again at "
     "cfg.yaml:2:4", [(3, "&x first defined here"), (11, "&x defined again")]),
    ('model: "org/m\nmax_model_len: 2\n', 'the " opened at cfg.yaml:1:8 is never closed',
     [(7, '" opened here')]),
    ("model: 'org/m\n", "the ' opened at cfg.yaml:1:8 is never closed", [(7, "' opened here")]),
    ("speculative_config:\n\tmodel: x\n", "a tab at cfg.yaml:2:1 indents its line: YAML "
     "indentation must be spaces", [(20, "the tab")]),
    ("max_model_len: 8192\n  max_num_seqs: 64\n", "a `:` at cfg.yaml:2:15 falls inside a value",
     [(34, "the `:`")]),
    ("model: org/m: x\n", "a second `:` at cfg.yaml:1:13 on the line of a key", [(12, "the `:`")]),
    ("a:\n  b: 1\n c: 2\n", "`c` at cfg.yaml:3:2 is not aligned with the keys of the mapping "
     "that begins at cfg.yaml:1:1", [(0, "the mapping begins here"), (11, "`c`")]),
    ("a: 1\n- b\n", "a list item at cfg.yaml:2:1 inside the mapping that begins at cfg.yaml:1:1",
     [(0, "the mapping begins here"), (5, "the list item")]),
    ("a: [1, 2\nb: 3\n", "the [ opened at cfg.yaml:1:4 is not closed: expected `,` or `]` at "
     "cfg.yaml:2:2", [(3, "opened here"), (10, "`,` or `]` expected here")]),
    ("port: *p\n", "alias *p at cfg.yaml:1:7 refers to no anchor defined before it",
     [(6, "the alias")]),
    ("a: @x\n", "`@` at cfg.yaml:1:4 cannot begin a plain value", [(3, "`@`")]),
    ('a: "\\q"\n', "unknown escape \\q at cfg.yaml:1:5", [(4, "the escape")]),
    ("a: 1\n---\nb: 2\n", "a second document begins at cfg.yaml:2:1", [(5, "the second document")]),
    ("a: !foo 1\n", "the tag !foo at cfg.yaml:1:4 is not a standard YAML type", [(3, "the tag")]),
]


@pytest.mark.parametrize(("text", "message", "places"), CONFIG_ERRORS)
def test_config_yaml_errors_say_what_and_where(tmp_path: Path, text: str, message: str,
                                               places: list[tuple[int, str]]) -> None:
    (tmp_path / "cfg.yaml").write_text(text)
    _, findings = parse("vllm serve org/m --config cfg.yaml", path=str(tmp_path / "serve.sh"))
    (f,) = findings
    assert f.code == "MG006" and f.message.startswith(f"--config cfg.yaml is not read: {message}")
    for word in ("scanning", "scalar", "token", "stream", "occurrence", "constructing"):
        assert word not in f.message
    assert [(r.span.start, r.message) for r in f.related] == places
    assert all(r.source.path == str(tmp_path / "cfg.yaml") for r in f.related)


def test_config_key_twice_keeps_the_last(tmp_path: Path) -> None:
    # PyYAML's BaseConstructor.construct_mapping assigns each pair in turn (no duplicate check)
    (tmp_path / "cfg.yaml").write_text("max_model_len: 8k\nspeculative_config:\n  x: 1\n"
                                       "max_model_len: 16k\n")
    inv, findings = parse("vllm serve org/m --config cfg.yaml", path=str(tmp_path / "serve.sh"))
    assert codes(findings) == ["MG007"] and findings[0].severity.value == "warning"
    assert ("`max_model_len` is given twice in one mapping of cfg.yaml, at cfg.yaml:1:1 and "
            "cfg.yaml:4:1") in findings[0].message
    assert [(r.span.start, r.message) for r in findings[0].related] == [
        (0, "dropped"), (45, "this value wins")]
    assert inv.max_model_len.value == 16000


def test_report_snapshot(snapshot: Any) -> None:
    command = ("vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-paralel-size 4 -tp 8 "
               "--gpu-memory 0.95 --kv-cache-dtype FP8 --max-model-len 128k --enable-lora true "
               "--max-lora-rank 24 --ep 2 --swap-space 16")
    _, findings = parse(command)
    assert render(findings) == snapshot


def test_unknown_flag_value_is_not_the_model_when_model_flag_gives_it() -> None:
    """`vllm serve --model m/x --swap-space 0` (0.30.0): parse_args moves m/x to the front and
    argparse exits on `--swap-space 0`; `0` is never "the positional model"."""
    _, findings = parse("vllm serve --model m/x --swap-space 0")
    assert "MG016" not in codes(findings) and "MG004" in codes(findings)


def test_vllm_omni_image_takes_its_own_options(tmp_path, capsys) -> None:
    # vllm-project/vllm-omni be81443c: the image's `vllm` is vllm_omni.entrypoints.cli.main,
    # which adds --omni, --stage-configs-path, … to vLLM's serve parser when argv has --omni
    omni, plain = _pod_on_images(
        tmp_path, capsys, "vllm, serve, Qwen/Qwen2.5-Omni-7B, --omni, --stage-configs-path, "
        "/c/s.yaml, --init-timeout=600, --no-such-flag",
        ("vllm/vllm-omni:v0.20.0", "vllm/vllm-openai:v0.30.0"), "--select", "MG004")
    found = [ln for ln in omni.splitlines() if ": MG" in ln]
    # vLLM's and vLLM-Omni's parsers both lack --no-such-flag; nothing else is reported
    assert len(found) == 1 and "unknown flag --no-such-flag" in found[0], omni
    # vLLM's own image (0.30.0) has no vLLM-Omni: `vllm` exits at --omni (maybe_run_omni,
    # vllm/entrypoints/cli/main.py), one finding for it and none for the options it brings
    found = [ln for ln in plain.splitlines() if ": MG" in ln]
    assert len(found) == 2 and "MG004 [error] --omni hands this launch to vLLM-Omni, which the " \
        "vllm/vllm-openai:v0.30.0 image does not have" in found[0], plain
    assert "--no-such-flag" in found[1]


@pytest.mark.parametrize(("script", "expected"), [
    # no image: vLLM 0.30.0's `vllm` runs vLLM-Omni where it is installed, which nothing says
    ("vllm serve Qwen/Qwen2.5-Omni-7B --omni --stage-configs-path s.yaml",
     ["warning: --omni hands this launch to vLLM-Omni (vLLM 0.30.0's `vllm` command does, "
      "before reading any option): it runs only where the vllm-omni package is installed"]),
    # the script installs it
    ("pip install vllm==0.30.0 vllm-omni\nvllm serve Qwen/Qwen2.5-Omni-7B --omni "
     "--stage-configs-path s.yaml", []),
    # 0.29.0's `vllm` has no hand-off: argparse rejects --omni; no did-you-mean
    ("pip install vllm==0.29.0\nvllm serve Qwen/Qwen2.5-Omni-7B --omni",
     ["error: --omni is not a vLLM option but vLLM-Omni's (the vllm-omni package); vLLM "
      "0.29.0's `vllm` command rejects it (unrecognized arguments)"]),
    # the api_server module never hands off: its parser rejects --omni
    ("python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-Omni-7B --omni",
     ["error: --omni is not a vLLM option but vLLM-Omni's (the vllm-omni package); `python -m "
      "vllm.entrypoints.openai.api_server` rejects it"]),
])
def test_omni_without_the_omni_image(tmp_path, capsys, script: str, expected: list[str]) -> None:
    from mgpu_lint.cli import main

    path = tmp_path / "serve.sh"
    path.write_text(f"#!/bin/sh\n{script}\n")
    main(["--format", "json", "--exit-zero", "--select", "MG004", str(path)])
    found = json.loads(capsys.readouterr().out)["findings"]
    got = [f"{f['severity']}: {f['message']}" for f in found]
    assert len(got) == len(expected) and all(g.startswith(e) for g, e in zip(got, expected)), got
    assert all("did you mean" not in g for g in got)
