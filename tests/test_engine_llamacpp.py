"""llama-server argument parsing: catalog coverage, llama.cpp's parser rules, env variables."""

from __future__ import annotations

import difflib
import json
import random
from typing import Any

from mgpu_lint.engines import Invocation, parse_launch
from mgpu_lint.engines.catalog import OptionSpec, llama_catalog
from mgpu_lint.findings import Finding

from tests.conftest import DATA

from .test_engine_vllm import one_edit
from .wordutil import codes, list_launch, make_launch, render

REFERENCE = DATA / "engines"



def parse(command: str, **kw: Any) -> tuple[Invocation, list[Finding]]:
    return parse_launch(make_launch(command, **kw))


def sample_value(spec: OptionSpec) -> str:
    if spec.key in ("lora_scaled", "control_vector_scaled"):
        return "a.gguf:0.5"  # FNAME:SCALE (common/arg.cpp)
    if spec.choices:
        return str(spec.choices[0])
    if spec.key == "lora_scaled":
        return "a.gguf:0.5"  # FNAME:SCALE (common/arg.cpp)
    return {"int": "2", "float": "0.5", "ngl": "99", "float_list": "3,1", "uint_list": "1024",
            "hostport_list": "10.0.0.2:50052"}.get(spec.type, "x")


def test_every_reference_spelling_is_accepted() -> None:
    catalog = llama_catalog()
    for r in json.loads((REFERENCE / "llama-server.json").read_text("utf-8")):
        spec = catalog.lookup(r["names"][0]).option  # type: ignore[union-attr]
        values = " ".join([sample_value(spec)] * r["nargs"])
        base = "" if spec.key == "model" else " -m m.gguf"
        for spelling in r["names"] + r["neg_names"]:
            inv, findings = parse(f"llama-server{base} {spelling} {values}".rstrip())
            expected = ["MG004"] if r.get("removed") else (
                ["MG008"] if r.get("deprecated") else [])
            assert codes(findings) == expected, (spelling, render(findings))
            assert [o.key for o in inv.occurrences][-1] == spec.key


def test_every_reference_choice_list_is_enforced() -> None:
    for r in json.loads((REFERENCE / "llama-server.json").read_text("utf-8")):
        if not r["choices"]:
            continue
        flag = r["names"][0]
        for choice in r["choices"]:
            _, findings = parse(f"llama-server {flag} {choice}")
            assert not findings, (flag, choice)
        _inv, findings = parse(f"llama-server {flag} zz_not_a_choice")
        assert codes(findings) == ["MG006"], flag


def test_every_spelling_with_one_edit_is_caught() -> None:
    catalog = llama_catalog()
    rng = random.Random(3)
    checked = 0
    for n, spelling in enumerate(sorted(catalog.by_spelling)):
        spec = catalog.by_spelling[spelling].option
        edited = one_edit(spelling, rng, n % 3)
        looked_up = edited.replace("_", "-") if edited.startswith("--") else edited
        if catalog.lookup(looked_up) is not None or not edited.lstrip("-"):
            continue
        value = " 2" if spec.takes_value else ""
        _, findings = parse(f"llama-server {edited}{value}")
        assert codes(findings)[:1] == ["MG004"], (spelling, edited, render(findings))
        message = findings[0].message
        if "did you mean" in message:
            suggested = message.rsplit("did you mean ", 1)[1].rstrip("?")
            assert suggested == spelling or difflib.SequenceMatcher(
                None, edited, suggested).ratio() >= difflib.SequenceMatcher(
                None, edited, spelling).ratio(), (edited, suggested, spelling)
        else:
            assert len(spelling.lstrip("-")) <= 4 or edited.startswith("---"), (edited, message)
        checked += 1
    assert checked > 300


def test_multi_gpu_flags() -> None:
    command = ("llama-server -m model.gguf -ngl 99 -ts 3/1 -sm row -mg 1 -c 8192 -np 4 "
               "--rpc 10.0.0.2:50052,10.0.0.3:50052 -ctk q8_0 --n_gpu_layers 80")
    inv, findings = parse(command)
    assert codes(findings) == ["MG007"]
    assert inv.n_gpu_layers.value == 80
    assert inv.tensor_split.value == [3.0, 1.0]
    assert inv.split_mode.value == "row" and inv.main_gpu.value == 1
    assert inv.ctx_size.value == 8192 and inv.parallel.value == 4
    assert inv.rpc.value == [("10.0.0.2", 50052), ("10.0.0.3", 50052)]
    assert inv.cache_type_k.value == "q8_0" and inv.cache_type_v.value == "f16"
    assert inv.model is not None and inv.model.value == "model.gguf"
    span = inv.tensor_split.span
    assert span is not None and command[span.start:span.end] == "3/1"
    inv, _ = parse("llama-server -ngl auto")
    assert inv.n_gpu_layers.value == -1 and inv.model is None


def test_value_is_always_the_next_word() -> None:
    command = "llama-server -m m.gguf -fa -ngl 99"
    inv, findings = parse(command)
    [f] = findings
    assert f.code == "MG005" and command[f.span.start:f.span.end] == "-fa"
    assert "-ngl" in f.message and command[f.related[0].span.start:][:4] == "-ngl"
    assert not inv.flash_attn.known
    _, findings = parse("llama-server -m m.gguf -ngl")
    assert codes(findings) == ["MG005"]


def test_invalid_values() -> None:
    inv, findings = parse("llama-server -ctk Q8_0 -ts ,1 -c many --rpc host -sm rows")
    assert codes(findings) == ["MG006"] * 5
    assert "did you mean 'q8_0'" in findings[0].message
    assert not inv.tensor_split.known and not inv.rpc.known
    inv, findings = parse("llama-server --port 8080abc -ts " + ",".join(["1"] * 16))
    assert inv.port.value == 8080  # std::stoi ignores trailing garbage
    assert codes(findings) == ["MG006"] and "at most 15" in findings[0].message


def test_no_equals_form_and_positionals() -> None:
    inv, findings = parse("llama-server --port=8080 model.gguf --metrics true")
    assert [line.split("]")[0] for line in render(findings)] == [
        "MG004 error [--port=8080", "MG004 error [model.gguf", "MG006 error [true"]
    assert findings[1].hint == "give the model with -m FILE"
    assert inv.port.given and not inv.port.known


def test_repeats_and_accumulating_options() -> None:
    inv, findings = parse("llama-server --lora a.gguf --lora b.gguf,c.gguf --rpc h:1 --rpc h:2")
    assert codes(findings) == ["MG008", "MG008"]
    assert inv.lora.value == ["a.gguf", "b.gguf", "c.gguf"]
    assert inv.rpc.value == [("h", 1), ("h", 2)]
    _, findings = parse("llama-server -ngl 1 --n-gpu-layers 2")
    assert codes(findings) == ["MG007"]


def test_environment_variables() -> None:
    inv, findings = parse("llama-server -ngl 50", env={
        "LLAMA_ARG_N_GPU_LAYERS": "99", "LLAMA_ARG_TENSOR_SPLIT": "1,1",
        "LLAMA_ARG_NO_KV_OFFLOAD": "1", "LLAMA_ARG_MODEL": "/models/m.gguf",
        "LLAMA_API_KEY": "k1", "LLAMA_ARG_CTX_SIZE": None, "LLAMA_ARG_CONT_BATCHING": "maybe"})
    assert codes(findings) == ["MG006", "MG007", "MG009"]
    assert inv.n_gpu_layers.value == 50
    assert inv.tensor_split.value == [1.0, 1.0]
    assert inv.kv_offload.value is False
    assert inv.model is not None and inv.model.origin == "LLAMA_ARG_MODEL"
    assert inv.api_key.value == ["k1"]
    assert not inv.ctx_size.known


def test_glued_and_unresolved() -> None:
    launch = list_launch(["-m", "m.gguf", "-ngl 99"], engine="llama-server",
                         program="ghcr.io/ggml-org/llama.cpp:server-cuda")
    inv, findings = parse_launch(launch)
    assert codes(findings) == ["MG014"] and not inv.n_gpu_layers.known
    command = "llama-server -m $MODEL -ngl $(LAYERS) -c 4096"
    inv, findings = parse(command)
    assert [command[f.span.start:f.span.end] for f in findings] == ["$MODEL", "$(LAYERS)"]
    assert inv.model is not None and not inv.model.known


def test_report_snapshot(snapshot: Any) -> None:
    command = ("llama-server -m model.gguf --host 0.0.0.0 -fa -ngl 99 -ts 3,1,x --mlock "
               "--draft 4 -sm Row --lora a.gguf --lora b.gguf -p hello --n_gpu_layers 50")
    _, findings = parse(command)
    assert render(findings) == snapshot


def test_list_values_keep_each_items_position() -> None:
    """`--rpc a,b` / `-ts 3,1` / `-dev CUDA0,CUDA1`: every item keeps its own span."""
    from mgpu_lint.engines import parse_launch
    from tests.wordutil import make_launch

    command = "llama-server -m m.gguf --rpc 10.0.0.1:50052,8.8.8.8:50052 -ts 3/1 -dev CUDA0,CUDA1"
    inv, _ = parse_launch(make_launch(command))
    for key, texts in (("rpc", ["10.0.0.1:50052", "8.8.8.8:50052"]), ("tensor_split", ["3", "1"]),
                       ("device", ["CUDA0", "CUDA1"])):
        (occ,) = inv.stated(key)
        assert [t for t, _ in occ.items] == texts
        assert [command[s.start:s.end] for _, s in occ.items] == texts
