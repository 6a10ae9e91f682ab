"""Generate N synthetic Kubernetes Deployments running `vllm serve` for the benchmark.

Each file is ~60 lines: one Deployment with a Service-style label block, a GPU node selector, one
vLLM container with ~10 flags and the usual volumes.  The command is written in one of three
styles (DESIGN "How we check that it is real"):

- ``list``:  exec-form ``args:`` list, one word per item (``- --port`` / ``- "8000"``);
- ``equals``: exec-form list of ``--flag=value`` items;
- ``shell``: ``command: ["/bin/sh", "-c"]`` with a ``|`` block scalar and backslash continuations.

Images pin four vLLM releases (v0.8.5, v0.10.0, v0.30.0, latest).  Every file carries at least one
problem a linter should find: a tensor-parallel size that does not match ``nvidia.com/gpu``, a
typo'd flag, a GPU memory utilisation outside (0, 1], GPUs in ``requests`` only, or a flag given
twice.  Output is deterministic for a given seed.

    python bench/generate.py [-n 1000] [--seed 0] [OUTDIR]      (OUTDIR defaults to bench/out/k8s)
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parent / "out" / "k8s"
TAGS = ("v0.8.5", "v0.10.0", "v0.30.0", "latest")
STYLES = ("list", "equals", "shell")
PROBLEMS = ("gpu-mismatch", "typo", "gmu-range", "requests-only", "duplicate")
MODELS = (
    ("meta-llama/Llama-3.1-8B-Instruct", 1),
    ("meta-llama/Llama-3.1-70B-Instruct", 4),
    ("Qwen/Qwen2.5-32B-Instruct", 2),
    ("Qwen/Qwen2.5-72B-Instruct", 4),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", 2),
    ("meta-llama/Llama-3.3-70B-Instruct", 8),
)
GPUS = ("NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L40S", "NVIDIA-H200")
TYPOS = {
    "--max-model-len": "--max-modle-len",
    "--gpu-memory-utilization": "--gpu-memory-utilisation",
    "--max-num-seqs": "--max-num-seq",
    "--served-model-name": "--served-model",
    "--enable-prefix-caching": "--enable-prefix-cache",
}


@dataclass(frozen=True, slots=True)
class Spec:
    """What one generated file states, and the problems planted in it."""

    name: str
    tag: str
    style: str
    model: str
    tp: int
    gpus: int
    flags: tuple[tuple[str, str | None], ...]  # (flag, value or None for a switch)
    problems: tuple[str, ...]
    gpu_product: str
    requests_only: bool


def make_spec(index: int, seed: int) -> Spec:
    rng = random.Random(seed * 1_000_003 + index)
    model, tp = MODELS[rng.randrange(len(MODELS))]
    problems = {PROBLEMS[index % len(PROBLEMS)]}
    if rng.random() < 0.3:
        problems.add(rng.choice(PROBLEMS))
    gpus = tp
    if "gpu-mismatch" in problems:
        gpus = rng.choice([g for g in (1, 2, 4, 8) if g != tp])
    gmu = "1.5" if "gmu-range" in problems else rng.choice(("0.85", "0.9", "0.92"))
    flags: list[tuple[str, str | None]] = [
        ("--tensor-parallel-size", str(tp)),
        ("--max-model-len", rng.choice(("4096", "8192", "16384", "32768"))),
        ("--gpu-memory-utilization", gmu),
        ("--port", "8000"),
        ("--dtype", rng.choice(("auto", "bfloat16", "float16"))),
        ("--max-num-seqs", str(rng.choice((64, 128, 256)))),
        ("--served-model-name", model.rsplit("/", 1)[1].lower()),
        ("--enable-prefix-caching", None),
        ("--download-dir", "/models"),
        ("--swap-space", str(rng.choice((4, 8, 16)))),
    ]
    if rng.random() < 0.4:
        flags.append(("--kv-cache-dtype", "fp8"))
    if "typo" in problems:
        pos = rng.choice([i for i, (f, _) in enumerate(flags) if f in TYPOS])
        flag, value = flags[pos]
        flags[pos] = (TYPOS[flag], value)
    if "duplicate" in problems:
        flags.append(("--port", "8080"))
    return Spec(
        name=f"vllm-{index:05d}",
        tag=TAGS[index % len(TAGS)],
        style=STYLES[(index // len(TAGS)) % len(STYLES)],
        model=model,
        tp=tp,
        gpus=gpus,
        flags=tuple(flags),
        problems=tuple(sorted(problems)),
        gpu_product=rng.choice(GPUS),
        requests_only="requests-only" in problems,
    )


def _quote(value: str) -> str:
    """Numbers are quoted in exec-form lists (Kubernetes wants strings); the rest stays plain."""
    return f'"{value}"' if value.replace(".", "", 1).isdigit() else value


def _command(spec: Spec) -> list[str]:
    pad = " " * 10
    if spec.style == "shell":
        lines = [f'{pad}command: ["/bin/sh", "-c"]', f"{pad}args:", f"{pad}  - |",
                 f"{pad}    set -e", f"{pad}    echo starting {spec.name}",
                 f"{pad}    exec vllm serve {spec.model} \\"]
        for i, (flag, value) in enumerate(spec.flags):
            end = "" if i == len(spec.flags) - 1 else " \\"
            word = flag if value is None else f"{flag} {value}"
            lines.append(f"{pad}      {word}{end}")
        return lines
    lines = [f"{pad}args:", f"{pad}  - {spec.model}"]
    for flag, value in spec.flags:
        if value is None:
            lines.append(f"{pad}  - {flag}")
        elif spec.style == "equals":
            lines.append(f"{pad}  - {flag}={value}")
        else:
            lines.append(f"{pad}  - {flag}")
            lines.append(f"{pad}  - {_quote(value)}")
    return lines


def render(spec: Spec) -> str:
    gpu_block = "requests" if spec.requests_only else "limits"
    lines = [
        f"# Generated by bench/generate.py; planted problems: {', '.join(spec.problems)}",
        "apiVersion: apps/v1",
        "kind: Deployment",
        "metadata:",
        f"  name: {spec.name}",
        "  namespace: inference",
        "  labels:",
        f"    app: {spec.name}",
        "    team: llm-serving",
        "spec:",
        "  replicas: 1",
        "  selector:",
        "    matchLabels:",
        f"      app: {spec.name}",
        "  template:",
        "    metadata:",
        "      labels:",
        f"        app: {spec.name}",
        "    spec:",
        "      nodeSelector:",
        f"        nvidia.com/gpu.product: {spec.gpu_product}",
        "      containers:",
        "        - name: vllm",
        f"          image: vllm/vllm-openai:{spec.tag}",
        *_command(spec),
        "          env:",
        "            - name: HF_TOKEN",
        "              valueFrom:",
        "                secretKeyRef: {name: hf-token, key: token}",
        "          ports:",
        "            - containerPort: 8000",
        "          resources:",
        f"            {gpu_block}:",
        f'              nvidia.com/gpu: "{spec.gpus}"',
        '              memory: "64Gi"',
        "          readinessProbe:",
        "            httpGet: {path: /health, port: 8000}",
        "            periodSeconds: 10",
        "          volumeMounts:",
        "            - name: shm",
        "              mountPath: /dev/shm",
        "            - name: models",
        "              mountPath: /models",
        "      volumes:",
        "        - name: shm",
        "          emptyDir: {medium: Memory, sizeLimit: 16Gi}",
        "        - name: models",
        "          persistentVolumeClaim: {claimName: models}",
    ]
    return "\n".join(lines) + "\n"


def generate(count: int, out: Path, seed: int = 0) -> list[Path]:
    """Write ``count`` files into ``out``; earlier generated files there are removed first."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("vllm-*.yaml"):
        old.unlink()
    paths = []
    for i in range(count):
        spec = make_spec(i, seed)
        path = out / f"{spec.name}.yaml"
        path.write_text(render(spec), encoding="utf-8")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", nargs="?", type=Path, default=DEFAULT_OUT)
    parser.add_argument("-n", "--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    paths = generate(args.count, args.outdir, args.seed)
    print(f"wrote {len(paths)} files to {args.outdir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
