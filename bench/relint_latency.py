"""Re-lint latency of a ~27 KB Kubernetes manifest, as the language server lints an edited
document (the same path as `mgpu-lint - --stdin-filename deploy.yaml`).

    .venv/bin/python bench/relint_latency.py        # prints size, median and p90 of 20 runs
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


def main() -> None:
    from mgpu_lint.lsp import lint_text

    text = manifest()
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
