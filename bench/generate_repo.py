"""Generate a synthetic platform repository for the "repository" benchmark scenario.

A real platform repository (kserve, kubernetes-engine-samples) is mostly files that hold no launch:
CustomResourceDefinitions of 1-3 MB, Helm values, CI workflows, Services, HPAs, ConfigMaps,
Kustomize files and Markdown. About one file in seven launches an engine. This writes such a tree,
deterministically for a seed:

- ``launch_share`` of the files are the all-launch scenario's Deployments (bench/generate.py);
- one file in ``CRD_EVERY`` is a CustomResourceDefinition of 1-3 MB (an OpenAPI schema with long
  descriptions, some mentioning vLLM -- as kserve's LLMInferenceService CRD does);
- the rest rotate through Helm values, GitHub workflows, Services, HPAs, ConfigMaps,
  kustomization.yaml and Markdown pages without a launch.

    python bench/generate_repo.py [-n 1000] [--seed 0] [OUTDIR]   (default bench/out/repo)
"""

from __future__ import annotations

import argparse
import random
import shutil
from pathlib import Path

from generate import make_spec, render  # bench/ is the script's directory, first on sys.path

DEFAULT_OUT = Path(__file__).resolve().parent / "out" / "repo"
LAUNCH_SHARE = 0.15
CRD_EVERY = 50  # 20 CRDs in 1,000 files (kserve's config/crd holds about that many)

WORDS = ("the", "model", "server", "replica", "field", "value", "resource", "container", "port",
         "storage", "specifies", "optional", "default", "selector", "label", "annotation")


def _description(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def crd(rng: random.Random, index: int, target_bytes: int) -> str:
    """A CRD whose openAPIV3Schema grows until the file is about ``target_bytes`` long."""
    head = [
        "apiVersion: apiextensions.k8s.io/v1",
        "kind: CustomResourceDefinition",
        "metadata:",
        f"  name: things{index}.serving.example.io",
        "spec:",
        "  group: serving.example.io",
        "  names:",
        f"    kind: Thing{index}",
        f"    plural: things{index}",
        "  scope: Namespaced",
        "  versions:",
        "    - name: v1alpha1",
        "      served: true",
        "      storage: true",
        "      schema:",
        "        openAPIV3Schema:",
        "          type: object",
        "          properties:",
    ]
    body: list[str] = []
    size = sum(len(x) + 1 for x in head)
    field = 0
    while size < target_bytes:
        field += 1
        mention = " Flags such as VLLM_ADDITIONAL_ARGS are passed to vllm." if field % 97 == 0 else ""
        block = [
            f"            field{field}:",
            f"              description: {_description(rng, 30)}.{mention}",
            "              type: object",
            "              properties:",
            "                name:",
            f"                  description: {_description(rng, 12)}",
            "                  type: string",
            "                replicas:",
            "                  format: int32",
            "                  type: integer",
        ]
        body.extend(block)
        size += sum(len(x) + 1 for x in block)
    return "\n".join(head + body) + "\n"


def helm_values(i: int) -> str:
    return (f"# values for chart {i}\nreplicaCount: 2\nimage:\n  repository: example/api\n"
            f"  tag: \"1.{i % 9}.0\"\nservice:\n  type: ClusterIP\n  port: 80\n"
            "resources:\n  limits:\n    cpu: 500m\n    memory: 512Mi\ningress:\n  enabled: false\n"
            "nodeSelector: {}\ntolerations: []\naffinity: {}\n")


def workflow(i: int) -> str:
    return (f"name: ci-{i}\non:\n  push:\n    branches: [main]\n  pull_request:\n"
            "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - uses: actions/checkout@v4\n      - uses: actions/setup-python@v5\n"
            "        with:\n          python-version: '3.11'\n"
            "      - run: pip install -r requirements.txt\n      - run: pytest -q\n")


def service(i: int) -> str:
    return (f"apiVersion: v1\nkind: Service\nmetadata:\n  name: web-{i}\n  namespace: apps\n"
            f"spec:\n  selector:\n    app: web-{i}\n  ports:\n    - port: 80\n"
            "      targetPort: 8080\n  type: ClusterIP\n")


def hpa(i: int) -> str:
    return (f"apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n"
            f"  name: web-{i}\nspec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n"
            f"    kind: Deployment\n    name: web-{i}\n  minReplicas: 1\n  maxReplicas: 5\n"
            "  metrics:\n    - type: Resource\n      resource:\n        name: cpu\n"
            "        target: {type: Utilization, averageUtilization: 70}\n")


def configmap(i: int) -> str:
    return (f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings-{i}\ndata:\n"
            f"  LOG_LEVEL: info\n  FEATURE_{i}: \"true\"\n  app.properties: |\n"
            "    server.port=8080\n    cache.size=128\n")


def kustomization(i: int) -> str:
    return ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            f"namespace: team-{i % 7}\nresources:\n  - deployment.yaml\n  - service.yaml\n"
            "images:\n  - name: example/api\n    newTag: \"1.2.3\"\n")


def markdown(i: int) -> str:
    return (f"# Component {i}\n\nThis component serves the web front end.\n\n## Deploy\n\n"
            "```bash\nkubectl apply -k overlays/prod\n```\n\n## Configuration\n\n"
            "| key | meaning |\n|---|---|\n| LOG_LEVEL | verbosity |\n")


OTHERS = (
    ("values.yaml", helm_values), (".github-workflow.yml", workflow), ("service.yaml", service),
    ("hpa.yaml", hpa), ("configmap.yaml", configmap), ("kustomization.yaml", kustomization),
    ("README.md", markdown),
)


def generate_repo(count: int, out: Path, seed: int = 0) -> dict[str, int]:
    """Write the tree into ``out`` (emptied first); return how many files of each kind."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rng = random.Random(seed)
    counts = {"launch": 0, "crd": 0, "other": 0}
    launches = round(count * LAUNCH_SHARE)
    launch_at = set(rng.sample(range(count), launches))
    for i in range(count):
        d = out / f"component-{i // 10:03d}"
        d.mkdir(exist_ok=True)
        if i in launch_at:
            spec = make_spec(i, seed)
            (d / f"{spec.name}.yaml").write_text(render(spec), encoding="utf-8")
            counts["launch"] += 1
        elif i % CRD_EVERY == CRD_EVERY - 1:
            size = rng.randrange(1_000_000, 3_000_000)
            (d / f"crd-{i:05d}.yaml").write_text(crd(rng, i, size), encoding="utf-8")
            counts["crd"] += 1
        else:
            name, make = OTHERS[i % len(OTHERS)]
            (d / f"{i:05d}-{name}").write_text(make(i), encoding="utf-8")
            counts["other"] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", nargs="?", type=Path, default=DEFAULT_OUT)
    parser.add_argument("-n", "--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    counts = generate_repo(args.count, args.outdir, args.seed)
    print(f"wrote {sum(counts.values())} files to {args.outdir}: {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
