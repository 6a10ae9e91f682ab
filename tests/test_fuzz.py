"""Property-based fuzzing of the whole lint pipeline (SPEC §7 "Never crash").

Any bytes or text as a file of each kind, generated YAML documents and mutated command lines go
through the runner in-process; no exception may escape and no MG000 (internal error) may be
produced — an MG000 counts as a failure (DECISIONS "How we check that it is real").  One test
runs the CLI in a subprocess on hostile inputs, so a crash of the process itself (the C YAML
composer aborting) fails too.

The default example count is small for CI; a long campaign sets MGPU_FUZZ_EXAMPLES, e.g.

    MGPU_FUZZ_EXAMPLES=20000 .venv/bin/python -m pytest tests/test_fuzz.py
"""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mgpu_lint.findings import Finding
from mgpu_lint.runner import Options, RunResult, lint
from ruamel.yaml import YAML

from .conftest import ROOT
from .test_hostile import no_core_dump

EXAMPLES = int(os.environ.get("MGPU_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# one name per file kind the runner reads (the name decides the kind)
KIND_NAMES = ("deploy.yaml", "serve.sh", "Dockerfile", "README.md")

REAL_COMMANDS = (
    "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --max-model-len 8192",
    "vllm serve Qwen/Qwen3-8B --port=8000 -tp 2 --gpu-memory-utilization 0.9 --enable-lora",
    'python3 -m vllm.entrypoints.openai.api_server --model "$MODEL" -tp ${TP:-4}',
    ("ray start --head --port=6379 && vllm serve $(MODEL) --pipeline-parallel-size 2 "
    "--distributed-executor-backend ray"),
    "llama-server -m /models/q.gguf -ngl 99 -ts 3,1 --port 8080 -c 8192",
    "rpc-server -H 0.0.0.0 -p 50052",
    "docker run --gpus all --ipc=host vllm/vllm-openai:v0.10.0 --model m -tp 8",
    "exec vllm serve 'mistralai/Mistral-7B-v0.3' \\\n  --max-num-seqs 256 \\\n  --port 8000",
    ("CUDA_VISIBLE_DEVICES=0,1 vllm serve m --tensor-parallel-size=2 --hf-overrides "
    "'{\"rope_scaling\": {\"factor\": 4}}'"),
)
FLAGS = ("--tensor-parallel-size", "-tp", "--pipeline-parallel-size", "--max-model-len",
         "--gpu-memory-utilization", "--port", "--model", "-m", "-ngl", "--data-parallel-size",
         "--enable-expert-parallel", "--max-lora-rank", "--nnodes", "--headless", "--tp",
         "--tensor-paralel-size", "-", "--", "--=", "-x=")
VALUES = ("4", "0", "-1", "1e9", "0.95", "1.5", "nan", "", "auto", "$TP", "${TP:-2}", "$(TP)",
          "'4'", '"8"', "99999999999999999999999", "⁴", "٤", "4\u200b")
NASTY = ("\\", "\\\n", "$(", "${", "`", "'", '"', "\n", "\r\n", "\t", "#", ";", "&&", "|", ">",
         "<<EOF\n", "{{ .Values.x }}", "\u00a0", "\u2028", "é", "🚀", "\0", "\ufeff", "*", "&a",
         ": ", "- ", "[", "]", "{", "}")


def check(run: RunResult) -> None:
    internal = [f for f in run.findings if f.code == "MG000"]
    assert not internal, "\n".join(_describe(f) for f in internal)


def _describe(f: Finding) -> str:
    return f"{f.source.path}: {f.message}\n--- text ---\n{f.source.text[:2000]!r}"


def lint_text(text: str, filename: str) -> RunResult:
    return lint(["-"], Options(), stdin_text=text, stdin_filename=filename)


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="mgpu-fuzz-") as d:
        yield Path(d)


# --------------------------------------------------------------------------- raw bytes and text

@FUZZ
@given(data=st.binary(max_size=4000), name=st.sampled_from(KIND_NAMES))
def test_any_bytes_as_a_file(scratch: Path, data: bytes, name: str) -> None:
    path = scratch / name
    path.write_bytes(data)
    check(lint([str(path)], Options()))


@FUZZ
@given(text=st.text(max_size=2000), name=st.sampled_from(KIND_NAMES))
def test_any_text_as_a_file(text: str, name: str) -> None:
    check(lint_text(text, name))


@FUZZ
@given(pieces=st.lists(st.sampled_from(NASTY + FLAGS + VALUES + tuple("abc 019-=:/\n")),
                      max_size=60))
def test_nasty_pieces_as_a_command(pieces: list[str]) -> None:
    check(lint([], Options(), command="".join(pieces)))


# --------------------------------------------------------------------------- mutated commands

@st.composite
def mutated_command(draw: st.DrawFn) -> str:
    """A real command line with a few edits: dropped quotes, truncation, flags, nasty text."""
    text = draw(st.sampled_from(REAL_COMMANDS))
    for _ in range(draw(st.integers(1, 5))):
        op = draw(st.sampled_from(("drop-quote", "truncate", "flag", "nasty", "unicode")))
        pos = draw(st.integers(0, len(text)))
        if op == "drop-quote":
            quotes = [i for i, c in enumerate(text) if c in "'\""]
            if quotes:
                i = draw(st.sampled_from(quotes))
                text = text[:i] + text[i + 1:]
        elif op == "truncate":
            text = text[:pos]
        elif op == "flag":
            flag, value = draw(st.sampled_from(FLAGS)), draw(st.sampled_from(VALUES))
            sep = draw(st.sampled_from((" ", "=", " \\\n  ", "")))
            text = f"{text[:pos]} {flag}{sep}{value} {text[pos:]}"
        elif op == "nasty":
            text = text[:pos] + draw(st.sampled_from(NASTY)) + text[pos:]
        else:
            text = text[:pos] + draw(st.text(min_size=1, max_size=3)) + text[pos:]
    return text


def _yaml_double_quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def embeddings(command: str) -> list[tuple[str, str]]:
    """The command as each file kind writes it."""
    indented = "\n".join("    " + ln for ln in command.split("\n"))
    block = "\n".join("            " + ln for ln in command.split("\n"))
    return [
        ("serve.sh", f"#!/bin/sh\nset -e\n{command}\n"),
        ("Dockerfile", f"FROM vllm/vllm-openai:v0.10.0\nRUN pip install x\nCMD {command}\n"),
        ("Dockerfile", "FROM vllm/vllm-openai:latest\nENTRYPOINT "
                       + json.dumps(command.split(" ")) + "\n"),
        ("README.md", f"# Serving\n\n```bash\n{command}\n```\n\n```console\n$ {command}\n```\n"),
        ("k8s.yaml", ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                     "    - name: c\n      image: vllm/vllm-openai:v0.8.5\n"
                     '      command: ["sh", "-c"]\n      args:\n        - |\n'
                     f"{block}\n      resources: {{limits: {{nvidia.com/gpu: 2}}}}\n")),
        ("k8s-quoted.yaml", ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n"
                            "  template:\n    spec:\n      containers:\n        - name: c\n"
                            "          image: vllm/vllm-openai:v0.30.0\n"
                            f"          command: [bash, -c, {_yaml_double_quoted(command)}]\n")),
        ("k8s-list.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                          "    - name: c\n      image: vllm/vllm-openai:v0.30.0\n      args:\n"
                          + "".join(f"        - {_yaml_double_quoted(w)}\n"
                                    for w in command.split(" "))),
        ("compose.yaml", ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.0\n"
                         f"    command: >\n{indented}\n")),
    ]


@FUZZ
@given(command=mutated_command())
def test_mutated_commands_everywhere(command: str) -> None:
    check(lint([], Options(), command=command))
    for name, text in embeddings(command):
        check(lint_text(text, name))


# --------------------------------------------------------------------------- generated YAML

KEYS = ("apiVersion", "kind", "metadata", "name", "spec", "template", "containers", "command",
        "args", "image", "env", "value", "resources", "limits", "requests", "nvidia.com/gpu",
        "services", "deploy", "volumes", "emptyDir", "medium", "replicas", "size", "labels",
        "leaderWorkerTemplate", "workerTemplate", "annotations", "mgpu-lint/ignore", "x")
SCALAR_VALUES = ("Deployment", "Pod", "LeaderWorkerSet", "apps/v1", "v1", "vllm/vllm-openai:v0.8.5",
                 "vllm/vllm-openai:latest", "Memory", "4", "0", "-1", "true", "null", "~", "")

command_like = st.one_of(mutated_command(), st.sampled_from(SCALAR_VALUES + FLAGS + VALUES),
                         st.text(max_size=30))
scalars = st.one_of(command_like, st.integers(-10, 10**12), st.booleans(), st.none(),
                    st.floats(allow_nan=True))
trees = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=8)), children,
                        max_size=6),
    ),
    max_leaves=40,
)


@st.composite
def kubernetes_like(draw: st.DrawFn) -> dict[str, Any]:
    """A workload whose container fields hold generated values."""
    container: dict[str, Any] = {"name": draw(command_like), "image": draw(command_like)}
    for key in ("command", "args", "env", "resources", "ports", "volumeMounts"):
        if draw(st.booleans()):
            container[key] = draw(st.one_of(st.lists(command_like, max_size=6), trees))
    pod = {"containers": [container, *draw(st.lists(trees, max_size=2))]}
    if draw(st.booleans()):
        pod["volumes"] = draw(trees)
    kind = draw(st.sampled_from(("Deployment", "Pod", "StatefulSet", "LeaderWorkerSet", "Job",
                                 "Service", "HorizontalPodAutoscaler")))
    spec: dict[str, Any] = pod if kind == "Pod" else {"template": {"spec": pod}}
    if kind == "LeaderWorkerSet":
        spec = {"leaderWorkerTemplate": {"size": draw(scalars), "leaderTemplate": {"spec": pod},
                                         "workerTemplate": {"spec": pod}}}
    return {"apiVersion": draw(st.sampled_from(("apps/v1", "v1", "leaderworkerset.x-k8s.io/v1"))),
            "kind": kind, "metadata": draw(trees), "spec": spec}


def dump(documents: list[Any], flow: bool | None) -> str:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = flow
    yaml.allow_unicode = True
    out = io.StringIO()
    yaml.dump_all(documents, out)
    return out.getvalue()


@FUZZ
@given(docs=st.lists(st.one_of(trees, kubernetes_like()), min_size=1, max_size=3),
       flow=st.sampled_from((False, True, None)),
       name=st.sampled_from(("deploy.yaml", "compose.yaml", "x.json")))
def test_generated_yaml_documents(docs: list[Any], flow: bool | None, name: str) -> None:
    check(lint_text(dump(docs, flow), name))


@FUZZ
@given(doc=kubernetes_like(), cut=st.integers(0, 10**6), insert=st.sampled_from(NASTY))
def test_damaged_yaml_documents(doc: dict[str, Any], cut: int, insert: str) -> None:
    """Valid YAML with one edit (truncation or an inserted nasty token) at a random place."""
    text = dump([doc], False)
    pos = cut % (len(text) + 1)
    check(lint_text(text[:pos], "deploy.yaml"))
    check(lint_text(text[:pos] + insert + text[pos:], "deploy.yaml"))


# --------------------------------------------------------------------------- the process itself

DEEP = 30_000


def hostile_inputs(seed: int = 0) -> dict[str, bytes]:
    """Inputs that could kill the process rather than raise: deep nesting in every form the
    composer recurses on, and seeded random bytes and command mutations of each kind."""
    rng = random.Random(seed)
    files = {
        "deep-flow.yaml": b"[" * DEEP + b"]" * DEEP,
        "deep-block-seq.yaml": b"- " * DEEP + b"x\n",
        "deep-explicit-keys.yaml": b"? " * DEEP + b"x\n",
        "deep-after-quote.yaml": b"a: [x ', " + b"[" * DEEP + b"]" * DEEP + b"]\n",
        "deep-in-sh-c.sh": b"cat <<EOF | kubectl apply -f -\n" + b"[" * DEEP + b"\nEOF\n",
    }
    for name in KIND_NAMES:
        files[f"random-{name}"] = rng.randbytes(3000).replace(b"\0", b"")
    lines = []
    for command in REAL_COMMANDS:
        cut = rng.randrange(len(command))
        lines.append(command[:cut] + rng.choice(NASTY) + command[cut:])
    files["mutated.sh"] = "\n".join(lines).encode()
    return files


def _cli(path: Path) -> str | None:
    """None when the CLI handled ``path`` (a file or a directory), else what went wrong."""
    proc = subprocess.run([sys.executable, "-m", "mgpu_lint.cli", "--format", "json", str(path)],
                          check=False, capture_output=True, cwd=ROOT, timeout=60,
                          preexec_fn=no_core_dump)
    if proc.returncode not in (0, 1):
        return f"exit {proc.returncode} (negative: killed by signal) {proc.stderr.decode()[-300:]}"
    codes = [f["code"] for f in json.loads(proc.stdout)["findings"]]
    return "MG000" if "MG000" in codes else None


def test_cli_process_survives_hostile_inputs(tmp_path: Path) -> None:
    for name, data in hostile_inputs().items():
        (tmp_path / name).write_bytes(data)
    if _cli(tmp_path) is None:  # one process for all; one per file only to name the culprits
        return
    failures = {p.name: _cli(p) for p in sorted(tmp_path.iterdir())}
    assert not any(failures.values()), "\n".join(
        f"{name}: {what}" for name, what in failures.items() if what)
