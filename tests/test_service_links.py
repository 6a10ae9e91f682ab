"""Services linked to launches (deployment.LinkIndex): which Services select a pod, and the
ways in that the exposure rules (MG603, MG605, MG606) report for them, at most
bounds.MAX_FINDINGS_PER_CODE one by one for a launch, the rest summed up."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from mgpu_lint import deployment as dep_mod
from mgpu_lint.bounds import MAX_FINDINGS_PER_CODE
from mgpu_lint.cli import main
from mgpu_lint.deployment import LinkIndex, selects
from mgpu_lint.launch import Context, Located, ServiceInfo
from mgpu_lint.source import SourceFile, Span

from tests.hostile_cases import deployment


def _service(i: int, kind: str = "LoadBalancer", app: str = "vllm") -> str:
    return (f"apiVersion: v1\nkind: Service\nmetadata: {{name: s{i}}}\nspec:\n  type: {kind}\n"
            f"  selector: {{app: {app}}}\n  ports: [{{port: 80, targetPort: 8000}}]\n")


def _launch(i: int, *extra: str) -> str:
    return deployment(["meta-llama/Llama-3.1-8B-Instruct", "-tp", "4", *extra]).replace(
        "name: hostile", f"name: engine-{i}").replace(
        "  template:\n", "  template:\n    metadata: {labels: {app: vllm}}\n")


def _lint(tmp_path: Path, capsys: pytest.CaptureFixture[str], docs: list[str]) -> list[dict]:
    (tmp_path / "deploy.yaml").write_text("---\n".join(docs))
    main(["--exit-zero", "--output-format", "json", str(tmp_path / "deploy.yaml")])
    return json.loads(capsys.readouterr().out)["findings"]


def test_a_launch_behind_many_services_lists_the_first_and_sums_up_the_rest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    n = MAX_FINDINGS_PER_CODE + 5
    found = _lint(tmp_path, capsys, [_service(i) for i in range(n)] + [_launch(0)])
    mg605 = [f for f in found if f["code"] == "MG605"]
    assert len(mg605) == MAX_FINDINGS_PER_CODE + 1  # one for each Service before
    assert [f["message"].split("`")[1] for f in mg605[:MAX_FINDINGS_PER_CODE]] == \
        [f"s{i}" for i in range(MAX_FINDINGS_PER_CODE)]
    summary = mg605[-1]
    assert summary["message"].startswith(
        "and 5 more ways the vLLM API (port 8000) is reachable from outside from here on")
    assert "Service `s100` of type LoadBalancer exposes it; no --api-key is set" \
        in summary["message"]
    assert [r["message"] for r in summary["related"]] == [
        "the last of them: Service `s104` of type LoadBalancer exposes it",
        "the server starts here"]


def test_a_loopback_launch_behind_many_services_relates_the_first_ones(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    n = MAX_FINDINGS_PER_CODE + 5
    found = _lint(tmp_path, capsys, [_service(i, "ClusterIP") for i in range(n)]
                  + [_launch(0, "--host", "127.0.0.1")])
    (mg606,) = [f for f in found if f["code"] == "MG606"]
    related = [r["message"] for r in mg606["related"]]
    assert len(related) == MAX_FINDINGS_PER_CODE + 2  # one for each Service before
    assert related[MAX_FINDINGS_PER_CODE].startswith("and 5 more ways in from here on")
    assert related[-1] == "the last of them: Service `s104` (ClusterIP) forwards to the pod"


def test_launches_of_one_label_set_are_matched_with_the_services_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """40 Deployments behind the same 40 Services: the selectors and the Services' types were
    read once per launch and Service (1,600 times; 30,000 x 1,000 took minutes)."""
    calls = {"selects": 0, "internal": 0}
    real_selects, real_internal = dep_mod.selects, dep_mod._internal

    def counted_selects(*a):  # type: ignore[no-untyped-def]
        calls["selects"] += 1
        return real_selects(*a)

    def counted_internal(*a):  # type: ignore[no-untyped-def]
        calls["internal"] += 1
        return real_internal(*a)

    monkeypatch.setattr(dep_mod, "selects", counted_selects)
    monkeypatch.setattr(dep_mod, "_internal", counted_internal)
    found = _lint(tmp_path, capsys, [_service(i) for i in range(40)]
                  + [_launch(i) for i in range(40)])
    assert len([f for f in found if f["code"] == "MG605"]) == 40  # one per Service
    assert calls == {"selects": 40, "internal": 40}


def _reference(services: list[ServiceInfo], ns: str | None, labels: dict[str, str]
               ) -> list[ServiceInfo]:
    return [s for s in services if (s.namespace or None) == ns
            and selects(dict(s.selector), labels)]


def test_services_of_answers_as_the_scan_of_every_service() -> None:
    """Random Services and pods of a few namespaces and labels: the index (and the answer
    kept for a namespace and label set) gives the Services a scan of all of them finds, in
    their order (fails when the kept answer ignores the namespace or a label)."""
    rng = random.Random(20)
    src = SourceFile("x.yaml", "x", "yaml")
    keys, values, spaces = ["app", "tier", "role"], ["a", "b"], [None, "", "ns1", "ns2"]
    for _ in range(200):
        services = [ServiceInfo(
            src, f"s{i}", rng.choice(spaces), Located("ClusterIP", None),
            {k: rng.choice(values) for k in rng.sample(keys, rng.randint(0, 3))},
            (), {}, Span(0, 1)) for i in range(rng.randint(0, 12))]
        index = LinkIndex(services, [])
        for _ in range(30):
            ns = rng.choice(spaces)
            labels = {k: rng.choice(values) for k in rng.sample(keys, rng.randint(0, 3))}
            ctx = Context(kind="k8s", namespace=ns, pod_labels=labels)
            launch = _FakeLaunch(ctx)
            got = index.services_of(launch)  # type: ignore[arg-type]
            assert list(got) == _reference(services, ns or None, labels)


class _FakeLaunch:
    def __init__(self, context: Context) -> None:
        self.context = context
