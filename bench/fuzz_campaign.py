"""The long fuzz campaign (not CI): hostile numbers, crafted side files and mutated hostile cases,
linted in-process for a fixed time; every input that ends in MG000, an exception, more than 10 s
(SIGALRM) or a large RSS step is saved under bench/out/campaign/ for the regression corpus
(tests/data/regressions/).

    .venv/bin/python bench/fuzz_campaign.py --minutes 10 --seed 1

Generators (own, seeded): every number-taking vLLM and llama-server flag of the hostile set with a
hostile number; config.json fields with hostile numbers and types; GGUF header fields; compose
services built from random Dockerfiles; scripts and Markdown fences of random launch words, quotes
and continuations (some thousands of lines long); byte mutations (flip, insert, delete, duplicate
a span) of the files each tests/hostile_cases.py case writes, at a small scale.  One core; keep
runs to <= 15 minutes on the shared machine.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mgpu_lint.config import ConfigError  # noqa: E402
from mgpu_lint.runner import Options, lint  # noqa: E402
from tests.hostile_cases import (  # noqa: E402
    CASES,
    LLAMA_CFG,
    deployment,
    gguf_model,
    shell,
)

NUMBERS = ["0", "-1", "1", "2", "-0", "1e39", "1e26", "1e400", "-1e400", "nan", "inf", "-inf",
           "NaN", "Infinity", str(2**40), str(2**63), str(2**64 + 1), "9" * 300, "1000000000",
           "100000000", "0.5", "1e-320", "0x10", "1_000", "1k", "1K", "99999999999T", "", " ",
           "3.0", "1e308", "-2147483649", "4294967297"]
VLLM_FLAGS = ["-tp", "-pp", "-dp", "--data-parallel-size-local", "--nnodes", "--node-rank",
              "--max-model-len", "--max-num-seqs", "--max-num-batched-tokens",
              "--gpu-memory-utilization", "--block-size", "--swap-space", "--max-loras",
              "--max-lora-rank", "--decode-context-parallel-size", "--data-parallel-rank",
              "--prefill-context-parallel-size", "--kv-cache-memory-bytes", "--max-cpu-loras",
              "--num-gpu-blocks-override", "--cpu-offload-gb", "--num-speculative-tokens"]
LLAMA_FLAGS = ["-ngl", "-c", "-np", "-b", "-ub", "-ts", "-t", "--rpc", "-mg", "-fa", "-ctk",
               "--n-cpu-moe", "-sm"]
MODELS = ["meta-llama/Llama-3.1-8B-Instruct", "mistralai/Mixtral-8x7B-Instruct-v0.1",
          "deepseek-ai/DeepSeek-V3", "Qwen/Qwen3-32B", "./model"]
CFG_FIELDS = list(LLAMA_CFG) + ["num_local_experts", "num_experts_per_tok", "head_dim",
                                "sliding_window", "n_routed_experts", "kv_lora_rank",
                                "first_k_dense_replace", "interleave_moe_layer_step"]


class Timeout(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise Timeout()


def gen_vllm(rng: random.Random, d: Path) -> list[str]:
    args = [rng.choice(MODELS)]
    for _ in range(rng.randrange(1, 6)):
        args += [rng.choice(VLLM_FLAGS), rng.choice(NUMBERS)]
    if rng.random() < 0.3:
        args.append("--enable-expert-parallel")
    if "./model" in args:
        gen_config_json(rng, d)
    gpus = rng.choice(NUMBERS + ["4", "8"])
    (d / "deploy.yaml").write_text(deployment(args, gpus=gpus))
    return [str(d / "deploy.yaml")]


def gen_config_json(rng: random.Random, d: Path) -> None:
    cfg: dict[str, object] = dict(LLAMA_CFG)
    for _ in range(rng.randrange(1, 5)):
        cfg[rng.choice(CFG_FIELDS)] = rng.choice(
            [0, -1, 2**40, 10**30, 1.5, True, None, "32", [1], {"a": 1}, 1e300])
    text = json.dumps(cfg)
    if rng.random() < 0.3:
        text = text.replace(str(rng.choice([4096, 32, 8])), rng.choice(NUMBERS) or "0", 1)
    (d / "model").mkdir(exist_ok=True)
    (d / "model" / "config.json").write_text(text)


def gen_llama(rng: random.Random, d: Path) -> list[str]:
    parts = ["llama-server", "-m"]
    if rng.random() < 0.5:
        (d / "m.gguf").write_bytes(gguf_model(block_count=rng.choice([0, 1, 2**40, 2**63, 32]),
                                              heads=rng.choice([0, 1, 8, 2**31]),
                                              hidden=rng.choice([0, 64, 2**62])))
        parts.append("./m.gguf")
    else:
        parts.append("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf")
    for _ in range(rng.randrange(1, 6)):
        flag = rng.choice(LLAMA_FLAGS)
        value = (",".join(rng.choice(NUMBERS) or "1" for _ in range(rng.randrange(1, 5)))
                 if flag == "-ts" else rng.choice(NUMBERS))
        parts += [flag, value or "1"]
    (d / "run.sh").write_text(shell(" ".join(parts)))
    return [str(d / "run.sh")]


def gen_mutated_case(rng: random.Random, d: Path) -> list[str]:
    name = rng.choice(sorted(CASES))
    args = CASES[name](d, 0.005)
    files = [p for p in d.rglob("*") if p.is_file() and not p.is_symlink()]
    for p in rng.sample(files, k=min(len(files), rng.randrange(1, 3))):
        data = bytearray(p.read_bytes())
        for _ in range(rng.randrange(1, 8)):
            if not data:
                break
            i = rng.randrange(len(data))
            op = rng.randrange(4)
            if op == 0:
                data[i] = rng.randrange(256)
            elif op == 1:
                data[i:i] = rng.choice([b"&a ", b"*a", b"[", b"{", b"\\", b"$x", b"\n", b"-1",
                                        b"1e400", b"\x00", b"\xff", b"9" * 40, b"'", b'"'])
            elif op == 2:
                del data[i:i + rng.randrange(1, 16)]
            else:
                j = min(len(data), i + rng.randrange(1, 64))
                data[i:i] = data[i:j] * rng.randrange(1, 4)
        p.write_bytes(bytes(data))
    paths = [a for a in args if not a.startswith("-") and a != "text"]
    return [str(d / a) for a in paths]


BASES = ["vllm/vllm-openai:v0.10.2", "vllm/vllm-openai:latest", "vllm/vllm-openai:v9" + "9" * 30,
         "nvidia/cuda:12.4.1-runtime-ubuntu22.04", "base", "a", "b", "$IMG", "scratch",
         "ghcr.io/ggml-org/llama.cpp:server-cuda", "lmsysorg/sglang:latest", ""]
INSTRUCTIONS = ['ENTRYPOINT ["vllm", "serve"]', "ENTRYPOINT vllm serve", 'ENTRYPOINT ["bash"]',
                'CMD ["Qwen/Qwen2.5-7B-Instruct", "-tp", "{n}"]', "CMD --model m -tp {n}",
                "ENV VLLM_PORT={n}", "ENV CUDA_VISIBLE_DEVICES={n}", "ARG IMG={n}",
                "RUN pip install vllm=={n}", "RUN pip install 'vllm>={n}'", "ENTRYPOINT []",
                'CMD ["vllm", "serve", "m", "--max-model-len", "{n}"]', "CMD", "ENTRYPOINT",
                "ENTRYPOINT [\"vllm\", \"serve\", \"-tp\", \"{n}\"]", "ONBUILD CMD x"]


def gen_compose_build(rng: random.Random, d: Path) -> list[str]:
    """A compose service built from a Dockerfile of random stages (FROM chains, cycles, targets,
    ENTRYPOINT/CMD forms, ENV, pip pins with hostile numbers), optionally mutated."""
    names = ["base", "a", "b", "runtime", ""]
    lines = []
    for _ in range(rng.randrange(1, 6)):
        name = rng.choice(names)
        lines.append(f"FROM {rng.choice(BASES)}" + (f" AS {name}" if name else ""))
        for _ in range(rng.randrange(0, 4)):
            lines.append(rng.choice(INSTRUCTIONS).format(n=rng.choice(NUMBERS)))
    dockerfile = "\n".join(lines) + "\n"
    build: list[str] = []
    where = rng.randrange(4)
    if where == 0:
        (d / "Dockerfile").write_text(dockerfile)
        build = ["    build: ."]
    elif where == 1:
        (d / "ctx").mkdir()
        (d / "ctx" / "serve.Dockerfile").write_text(dockerfile)
        build = ["    build:", "      context: ctx", "      dockerfile: serve.Dockerfile"]
    elif where == 2:
        build = ["    build:", "      dockerfile_inline: |"]
        build += ["        " + line for line in lines]
    else:
        (d / "Dockerfile").write_text(dockerfile)
        build = ["    build:", f"      context: {rng.choice(['.', '..', '/', 'missing', '$X'])}"]
    if rng.random() < 0.5:
        build.append(f"      target: {rng.choice(names + ['nope'])}")
    command = rng.choice(["", "    command: --model m -tp 2",
                          f"    command: [m, -tp, \"{rng.choice(NUMBERS)}\"]",
                          "    command: vllm serve m", "    command: []"])
    gpus = rng.choice(["    gpus: all", f"    gpus: {rng.choice(NUMBERS) or 1}", ""])
    compose = "\n".join(["services:", "  llm:", *build, command, gpus]) + "\n"
    (d / "compose.yaml").write_text(compose)
    if rng.random() < 0.4:
        victim = rng.choice([p for p in d.rglob("*") if p.is_file()])
        data = bytearray(victim.read_bytes())
        for _ in range(rng.randrange(1, 6)):
            i = rng.randrange(len(data) or 1)
            data[i:i] = rng.choice([b"\\\n", b"[", b'"', b"&a ", b"*a", b"\x00", b"\t", b"$x"])
        victim.write_bytes(bytes(data))
    return [str(d / "compose.yaml")] + ([str(d / "Dockerfile")] if rng.random() < 0.3
                                         and (d / "Dockerfile").exists() else [])


PIECES = ["vllm serve meta-llama/Llama-3.1-8B-Instruct", "llama-server -m m.gguf", "-tp 2",
          "--port 8000", "\\", "\\ ", "'", '"', "`", "$(", ")", "${X:-", "}", "X=1", "export A=",
          "CUDA_VISIBLE_DEVICES=0,1", "sh -c '", "bash -c \"", "<<EOF", "EOF", "&&", "|", ";",
          "#", "it's", "kubectl logs pod", "python3 -m vllm.entrypoints.openai.api_server",
          "--model m", "[\"vllm\", \"serve\",", "]", "$x", "\t", "```", "```bash", "- ", "  "]


def gen_shell_text(rng: random.Random, d: Path) -> list[str]:
    """Scripts and Markdown fences of random lines built from launch words, quotes,
    continuations, here-documents and nested `sh -c`; now and then thousands of lines, so
    that work per line that grows with the text shows up as a timeout."""
    n = rng.choice([3, 10, 40, 200, 3000]) if rng.random() < 0.9 else 20000
    line = lambda: " ".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 7)))  # noqa: E731
    unit = [line() for _ in range(rng.randrange(1, 8))]
    lines = [rng.choice(unit) if rng.random() < 0.8 else line() for _ in range(n)]
    lines = [x if rng.random() < 0.9 else "" for x in lines]
    if rng.random() < 0.5:
        (d / "run.sh").write_text("#!/bin/sh\n" + "\n".join(lines) + "\n")
        return [str(d / "run.sh")]
    (d / "README.md").write_text("# vllm\n\n```bash\n" + "\n".join(lines) + "\n```\n")
    return [str(d / "README.md")]


GENERATORS = [gen_vllm, gen_llama, gen_mutated_case, gen_compose_build, gen_shell_text]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "campaign"))
    ns = ap.parse_args(argv)
    rng = random.Random(ns.seed)
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGALRM, _alarm)
    stop = time.monotonic() + ns.minutes * 60
    runs = failures = 0
    worst = 0.0
    per_gen = {g.__name__: 0 for g in GENERATORS}
    with tempfile.TemporaryDirectory(prefix="mgpu-campaign-") as tmp:
        while time.monotonic() < stop:
            d = Path(tmp) / f"r{runs}"
            d.mkdir()
            gen = rng.choice(GENERATORS)
            per_gen[gen.__name__] += 1
            problem = None
            try:
                paths = gen(rng, d)
                start = time.perf_counter()
                signal.alarm(10)
                try:
                    result = lint(paths, Options())
                finally:
                    signal.alarm(0)
                took = time.perf_counter() - start
                worst = max(worst, took)
                if any(f.code == "MG000" for f in result.findings):
                    problem = "MG000: " + next(f.message for f in result.findings
                                                if f.code == "MG000")
            except Timeout:
                problem = "over 10 s"
            except ConfigError:
                pass  # a configuration that does not validate: the CLI's usage error, exit 2
            except Exception:  # noqa: BLE001 - the campaign records every escape
                problem = traceback.format_exc(limit=3)
            runs += 1
            if problem is not None:
                failures += 1
                keep = out / f"{gen.__name__}-{runs}"
                shutil.copytree(d, keep, symlinks=True, ignore_dangling_symlinks=True,
                                ignore=lambda _d, names: [n for n in names if n == ".env"
                                                          and (Path(_d) / n).is_fifo()])
                (keep / "PROBLEM.txt").write_text(problem)
                print(f"[{runs}] {gen.__name__}: {problem.splitlines()[0]}", flush=True)
            shutil.rmtree(d, ignore_errors=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    summary = {"executions": runs, "failures": failures, "minutes": ns.minutes, "seed": ns.seed,
               "worst_lint_s": round(worst, 3), "peak_rss_mib": round(rss, 1),
               "by_generator": per_gen}
    print(json.dumps(summary, indent=2))
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
