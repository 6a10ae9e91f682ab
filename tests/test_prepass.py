"""The pre-pass never drops a file that holds a launch, a linked object or a directive.

For every fixture (and every corpus file when ../shared is beside the repository) the file is read
and extracted as if the pre-pass did not exist; whenever extraction finds anything a rule or a
cross-file link could use, the pre-pass must have said the file may matter.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mgpu_lint.discover import kind_by_name, kind_by_content, read_source
from mgpu_lint.prepass import may_matter
from mgpu_lint.runner import extract_file
from mgpu_lint.suppress import directives

from tests.conftest import FIXTURES, SHARED


def _files() -> list[Path]:
    files = [p for p in FIXTURES.rglob("*") if p.is_file()]
    corpus = SHARED / "corpus" / "files"
    if corpus.is_dir():
        files += [p for p in corpus.rglob("*") if p.is_file()]
    return sorted(files)


def _yields_something(path: Path) -> tuple[bool, str]:
    kind = kind_by_name(str(path))
    src, err = read_source(str(path), kind)
    if src is None or src.kind == "unknown":
        return False, ""
    result = extract_file(src)
    found = bool(result.launches or result.findings or result.services or result.hpas
                 or result.ignores or directives(src))
    return found, src.text


def test_fixture_set_is_not_empty() -> None:
    assert len(_files()) > 100


def test_no_file_that_yields_anything_is_skipped() -> None:
    missed = []
    for path in _files():
        found, text = _yields_something(path)
        kind = kind_by_name(str(path)) or kind_by_content(text) or "unknown"
        if found and not may_matter(text, kind):
            missed.append(str(path))
    assert missed == []


@pytest.mark.parametrize("text", [
    "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n",
    "name: ci\non: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n",
    "replicaCount: 2\nimage:\n  repository: example/api\n",
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: x\n"
    "spec:\n  description: passes VLLM_ADDITIONAL_ARGS to vllm\n---\n# two CRDs\n"
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: y\n",
])
def test_files_without_launches_are_skipped(text: str) -> None:
    assert not may_matter(text, "yaml")


@pytest.mark.parametrize("text", [
    "apiVersion: v1\nkind: Service\nmetadata:\n  name: api\n",
    "kind: HorizontalPodAutoscaler\n",
    "containers:\n  - image: vllm/vllm-openai:v0.30.0\n",
    "command: [llama-server, -m, /m.gguf]\n",
    "# mgpu-lint: disable-file=MG701\nkind: ConfigMap\n",
    # a CRD beside a workload is not "only CRDs"
    "kind: CustomResourceDefinition\n---\nkind: Deployment\nspec:\n  image: vllm/vllm-openai\n",
    "{\"kind\": \"Service\", \"apiVersion\": \"v1\"}\n",
])
def test_files_that_may_matter_are_kept(text: str) -> None:
    assert may_matter(text, "yaml")


# Operator resources whose operator starts the engine: the text need not name it, and the
# launch is found (extract_file), so the pre-pass must keep the file.
_OPERATOR_TEXTS = [
    "apiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceService\nmetadata: {name: x}\n"
    "spec:\n  model: {uri: 'hf://Qwen/Qwen3-8B'}\n  template:\n    containers:\n"
    "      - name: main\n        resources: {limits: {nvidia.com/gpu: '1'}}\n",
]


@pytest.mark.parametrize("text", _OPERATOR_TEXTS)
def test_operator_kinds_that_start_an_engine_are_kept(text: str, tmp_path: Path) -> None:
    path = tmp_path / "op.yaml"
    path.write_text(text)
    src, _ = read_source(str(path), "yaml")
    assert src is not None and extract_file(src).launches  # it does hold a launch
    assert may_matter(text, "yaml")


@pytest.mark.parametrize("kind", ["RayClusterFleet", "StormService", "LLMInferenceService",
                                  "LLMInferenceServiceConfig", "DynamoGraphDeployment",
                                  "DynamoComponentDeployment", "RayCluster", "RayJob"])
def test_kinds_that_can_hold_a_launch_are_kept(kind: str) -> None:
    assert may_matter(f"apiVersion: example/v1\nkind: {kind}\nspec: {{}}\n", "yaml")


def test_crd_documents_are_blanked_for_composition_only() -> None:
    from mgpu_lint.prepass import without_crds

    crd = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
           "metadata: {name: x.example.com}\nspec:\n  names: {kind: X}\n")
    deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\n"
    text = f"{crd}---\n{deploy}---\n{crd}"
    out = without_crds(text)
    assert len(out) == len(text) and out.count("\n") == text.count("\n")
    assert "CustomResourceDefinition" not in out and deploy in out
    assert out.index(deploy) == text.index(deploy)  # offsets unchanged
    # a chunk that may hold a second document or a directive stays as written
    assert without_crds(f"{crd}kind: Deployment\n---\n{deploy}") == f"{crd}kind: Deployment\n---\n{deploy}"
    kept = f"{crd}# mgpu-lint: disable=MG002\n---\n{deploy}"
    assert without_crds(kept) == kept
    assert without_crds(crd) == crd  # one document: the pre-pass decides for the whole file


# MG017 ("names an engine where a launch would be written"): the words of a command that only
# prints, searches, fetches or logs them are no attempt at a launch
@pytest.mark.parametrize("line", [
    'echo "start it with: vllm serve org/m"', "printf '%s\\n' 'vllm serve org/m' >&2",
    "grep -c vllm /var/log/boot.log", "pgrep -f 'vllm serve' >/dev/null", "pkill -f vllm",
    'logger -t health "vllm is down"', "ps aux | grep vllm | wc -l", "tail -f /var/log/vllm.log",
    "curl -sf http://vllm:8000/health", "if ! pgrep -f vllm; then echo down; fi",
    "cd /opt/vllm", "/bin/echo vllm", "X=1 echo vllm", "RUN echo vllm", '- echo "vllm ready"',
    '["echo", "vllm ready"]', "cat <<'EOF'\nUsage: vllm serve MODEL\nEOF",
    "cat <<-EOF 2>/dev/null\n\tvllm serve m\n\tEOF",
])
def test_printed_or_searched_engine_words_are_no_mention(line: str) -> None:
    from mgpu_lint.prepass import engine_mention

    assert engine_mention(f"#!/bin/sh\n{line}\n", "shell") is None


@pytest.mark.parametrize(("line", "word"), [
    ('echo "vllm serve org/m" | sh', "vllm"),            # printed into a shell
    ('echo "vllm serve org/m" | tee start.sh', "vllm"),  # written to a script
    ('echo "vllm serve org/m" > start.sh', "vllm"),
    ("cat <<EOF > start.sh\nvllm serve org/m\nEOF", "vllm"),
    ("cat <<EOF | bash\nvllm serve org/m\nEOF", "vllm"),
    ("bash <<EOF\nvllm serve org/m\nEOF", "vllm"),
    ("echo waiting for vllm; vllm $(cat args)", "vllm $("),  # the second one is a launch
    ("echo a || vllm", "vllm"),
    ("cat <<EOF\nhi\nEOF\nvllm $ARGS", "vllm $"),
    ("docker logs vllm", "vllm"),  # not plainly data: the container may be started elsewhere
])
def test_engine_words_that_may_be_a_launch_stay_a_mention(line: str, word: str) -> None:
    from mgpu_lint.prepass import engine_mention

    text = f"#!/bin/sh\n{line}\n"
    hit = engine_mention(text, "shell")
    assert hit is not None and text[hit[0]:].startswith(word), (line, hit)
