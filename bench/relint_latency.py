"""Re-lint latency of a ~27 KB Kubernetes manifest, as the language server lints an edited
document (the same path as `mgpu-lint - --stdin-filename deploy.yaml`).

    .venv/bin/python bench/relint_latency.py        # prints size, median and p90 of 20 runs
    .venv/bin/python bench/relint_latency.py --kb 200 --all   # 200 KB documents of each shape

With ``--all``, each document shape of ``SHAPES`` (a manifest, many unknown flags, many findings
on one line, one long word, many launches in a script) is linted as an edited document and
turned into LSP diagnostics, as the server does before it publishes: the figure to hold is the
server's answer within 1 s of the last change (issue 20), i.e. the debounce (lsp.DEBOUNCE) plus
this.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DOC = """\
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-{i}
spec:
  replicas: 1
  template:
    metadata:
      labels: {{app: vllm-{i}}}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.30.0
          command: ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "2",
                    "--max-model-len", "8192", "--gpu-memory-utilization", "0.9"]
          ports:
            - containerPort: 8000
          resources:
            limits:
              nvidia.com/gpu: 2
---
apiVersion: v1
kind: Service
metadata:
  name: vllm-{i}
spec:
  selector: {{app: vllm-{i}}}
  ports:
    - port: 80
      targetPort: 8000
"""


def manifest(target: int = 27 * 1024) -> str:
    parts = []
    i = 0
    while sum(map(len, parts)) < target:
        parts.append(DOC.format(i=i))
        i += 1
    return "".join(parts)


def _fill(target: int, head: str, item, sep: str, tail: str = "\n") -> str:
    parts: list[str] = []
    size = len(head) + len(tail)
    i = 0
    while size < target:
        parts.append(item(i))
        size += len(parts[-1]) + len(sep)
        i += 1
    return head + sep.join(parts) + tail


SHAPES = {
    "manifest": ("deploy.yaml", lambda n: manifest(n)),
    "unknown-flags": ("run.sh", lambda n: _fill(
        n, "#!/bin/sh\nvllm serve meta-llama/Llama-3.1-8B-Instruct \\\n  ",
        lambda i: f"--unknown-option-{i:05d}-x", " \\\n  ")),
    "findings-one-line": ("run.sh", lambda n: _fill(
        n, "#!/bin/sh\nvllm serve meta-llama/Llama-3.1-8B-Instruct ", lambda i: f"--port {i}",
        " ")),
    "long-word": ("run.sh", lambda n: "#!/bin/sh\nvllm serve \"$x" + "a" * n + "\"\n"),
    "launches": ("run.sh", lambda n: _fill(
        n, "#!/bin/sh\n",
        lambda i: f"vllm serve meta-llama/Llama-3.1-8B-Instruct --port {8000 + i} -tp 1",
        "\n")),
}


def shapes(kb: int) -> None:
    from lsprotocol import types
    from mgpu_lint.lsp import diagnostics, lint_text

    lint_text("warm.yaml", manifest(1024))
    for name, (path, make) in SHAPES.items():
        text = make(kb * 1024)
        edited = text[:-1] + " \n"
        t0 = time.perf_counter()
        found = lint_text(path, edited)
        t1 = time.perf_counter()
        diagnostics("file:///" + path, edited, found, {}, types.PositionEncodingKind.Utf16)
        t2 = time.perf_counter()
        print(f"{name:18} {len(edited.encode()) / 1024:6.0f} KB {len(found):6} findings: "
              f"lint {t1 - t0:6.2f} s, diagnostics {t2 - t1:6.2f} s", flush=True)


def main() -> None:
    import argparse

    from mgpu_lint.lsp import lint_text

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", type=int, default=27)
    ap.add_argument("--all", action="store_true", help="every document shape, one run each")
    ns = ap.parse_args()
    if ns.all:
        shapes(ns.kb)
        return
    text = manifest(ns.kb * 1024)
    lint_text("deploy.yaml", text)  # imports and catalogs loaded once, as in a running server
    times = []
    for k in range(20):
        edited = text.replace("0.9", f"0.{9 - k % 3}", 1)  # an edit, as an editor sends
        t0 = time.perf_counter()
        lint_text("deploy.yaml", edited)
        times.append(time.perf_counter() - t0)
    times.sort()
    print(f"{len(text.encode())} bytes, {text.count('kind: Deployment')} Deployments: "
          f"median {statistics.median(times) * 1000:.0f} ms, "
          f"p90 {times[int(len(times) * 0.9) - 1] * 1000:.0f} ms over {len(times)} runs")


if __name__ == "__main__":
    main()
