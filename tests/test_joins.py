"""Objects of two files joined into one launch: a KServe InferenceService and the
ServingRuntime / ClusterServingRuntime it runs (sources/kserve.py ``select_runtime``,
sources ``join_kserve``), each finding placed in the file that holds its span."""

from __future__ import annotations

import json

import pytest
from mgpu_lint.cli import main

from tests.conftest import ROOT

DIR = "fixtures/kserve-joins"
PAIRS = {
    "explicit": ("explicit-runtime.yaml", "explicit-isvc.yaml"),
    "autoselect": ("autoselect-runtimes.yaml", "autoselect-isvc.yaml"),
    "cluster": ("cluster-runtime.yaml", "cluster-isvcs.yaml"),
    "namespace-mismatch": ("ns-runtime.yaml", "ns-isvc.yaml"),
}


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    main(["--no-color", *args])
    return capsys.readouterr().out


def _paths(name: str) -> list[str]:
    return [f"{DIR}/{f}" for f in PAIRS[name]]


def _launches(capsys: pytest.CaptureFixture[str], *paths: str) -> list[dict]:
    main(["launches", "--format", "json", *paths])
    return json.loads(capsys.readouterr().out)["launches"]


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_pair_report(name: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    runtime, isvc = _paths(name)
    out = _run(capsys, runtime, isvc)
    assert "MG000" not in out
    assert out == snapshot
    # the order of the files on the command line changes nothing
    assert _run(capsys, isvc, runtime) == out


def test_explicit_runtime_gets_the_isvc_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    runtime, isvc = _paths("explicit")
    (la,) = _launches(capsys, runtime, isvc)
    assert la["path"] == runtime and la["at"] == "14:18"  # the runtime's command
    assert la["context"]["object"] == "InferenceService/chat-8b"
    # the GPUs and the model are the InferenceService's, written with its file
    assert la["gpus"]["count"] == 2 and la["gpus"]["at"] == f"{isvc}:18:34"
    words = [(w["word"], w["at"]) for w in la["argv"]]
    assert words[1] == ("--model=meta-llama/Llama-3.1-8B-Instruct", "17:11")
    assert words[2] == ("--tensor-parallel-size=4", "18:11")
    assert words[3] == ("--max-model-len=8192", f"{isvc}:13:15")
    assert la["env"]["VLLM_LOGGING_LEVEL"] == "INFO"
    out = _run(capsys, runtime, isvc)
    # tp 4 (the runtime's flag, in its file) on the 2 GPUs of the InferenceService (its file)
    assert f"{runtime}:18:34: MG101 [error]" in out, out
    assert f"--> {isvc}:18:34: 2 GPUs given here" in out, out
    assert "gets 2 GPUs (nvidia.com/gpu limit at explicit-isvc.yaml:18)" in out, out


def test_one_side_alone_is_read_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    runtime, isvc = _paths("explicit")
    # the runtime alone: its own container, GPUs not stated, so nothing about GPUs
    (la,) = _launches(capsys, runtime)
    assert la["gpus"] is None and la["context"]["object"] == "ServingRuntime/vllm-tp4"
    out = _run(capsys, runtime)
    assert "MG101" not in out and "InferenceService" not in out, out
    # the InferenceService alone: no command to read
    assert _launches(capsys, isvc) == []
    assert "MG017" in _run(capsys, isvc)


def test_autoselect_takes_the_highest_priority(capsys: pytest.CaptureFixture[str]) -> None:
    runtime, isvc = _paths("autoselect")
    launches = _launches(capsys, runtime, isvc)
    objects = sorted(la["context"]["object"] for la in launches)
    # vllm-new (priority 2) runs qwen-7b; vllm-old and the disabled one stay read alone
    assert objects == ["InferenceService/qwen-7b", "ServingRuntime/vllm-disabled",
                       "ServingRuntime/vllm-old"]
    (joined,) = [la for la in launches if la["context"]["object"].startswith("Inference")]
    assert joined["at"] == "36:18" and joined["context"]["image"] == "vllm/vllm-openai:v0.10.2"
    # `vllm serve /mnt/models` reads the repo the storage initializer put there
    assert joined["argv"][0] == {"word": "Qwen/Qwen2.5-7B-Instruct", "at": f"{isvc}:11:24"}
    assert joined["deployment"]["layout"]["tp"] == 2
    out = _run(capsys, runtime, isvc)
    assert "MG101" not in out, out  # tp 2 on 2 GPUs


def test_autoselect_without_a_priority_to_choose_joins_nothing(
        tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / DIR / "autoselect-runtimes.yaml").read_text()
    (tmp_path / "runtimes.yaml").write_text(text.replace("priority: 2", "priority: 1"))
    (tmp_path / "isvc.yaml").write_text((ROOT / DIR / "autoselect-isvc.yaml").read_text())
    launches = _launches(capsys, str(tmp_path / "runtimes.yaml"), str(tmp_path / "isvc.yaml"))
    # two candidates of priority 1: creation time decides, which no file holds
    assert all(la["context"]["object"].startswith("ServingRuntime/") for la in launches)


def test_cluster_runtime_gives_one_launch_per_isvc(capsys: pytest.CaptureFixture[str]) -> None:
    runtime, isvcs = _paths("cluster")
    launches = _launches(capsys, runtime, isvcs)
    assert [(la["path"], la["context"]["object"], la["gpus"]["count"]) for la in launches] == [
        (runtime, "InferenceService/big-70b", 4), (runtime, "InferenceService/small-8b", 1)]
    out = _run(capsys, runtime, isvcs)
    assert f"{isvcs}:14:38: MG101 [error]" in out, out  # big-70b's own tp 8 on 4 GPUs
    assert out.count("MG101") == 1, out  # small-8b fits


def test_namespace_mismatch_joins_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    runtime, isvc = _paths("namespace-mismatch")
    (la,) = _launches(capsys, runtime, isvc)
    assert la["context"]["object"] == "ServingRuntime/vllm-local" and la["gpus"] is None
    out = _run(capsys, runtime, isvc)
    assert "MG101" not in out, out  # the isvc's tp 8 on 1 GPU never runs this runtime


def test_explicit_runtime_that_refuses_the_format_joins_nothing(
        tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    runtime, isvc = _paths("explicit")
    (tmp_path / "isvc.yaml").write_text(
        (ROOT / isvc).read_text().replace("{name: vLLM}", "{name: sklearn}"))
    (la,) = _launches(capsys, runtime, str(tmp_path / "isvc.yaml"))
    # RuntimeSupportsModel fails: the controller runs nothing for this InferenceService
    assert la["context"]["object"] == "ServingRuntime/vllm-tp4"


def test_reports_carry_each_file(capsys: pytest.CaptureFixture[str]) -> None:
    runtime, isvc = _paths("explicit")
    main(["--format", "json", runtime, isvc])
    (f,) = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["code"] == "MG101"]
    assert f["path"] == runtime and f["range"]["start"] == {"line": 18, "column": 34}
    assert {"path": isvc, "message": "2 GPUs given here"}.items() <= {
        **f["related"][0], "range": None}.items()
    assert f["related"][0]["range"]["start"] == {"line": 18, "column": 34}
    main(["--format", "sarif", runtime, isvc])
    (res,) = [r for r in json.loads(capsys.readouterr().out)["runs"][0]["results"]
              if r["ruleId"] == "MG101"]
    where = res["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"].endswith("explicit-runtime.yaml")
    (rel,) = res["relatedLocations"]
    assert rel["physicalLocation"]["artifactLocation"]["uri"].endswith("explicit-isvc.yaml")
    assert rel["physicalLocation"]["region"]["startLine"] == 18
    main(["--format", "github", runtime, isvc])
    lines = [x for x in capsys.readouterr().out.splitlines() if "MG101" in x]
    assert len(lines) == 1 and "explicit-runtime.yaml" in lines[0] and "line=18" in lines[0]


def test_fixes_edit_the_file_each_word_is_in(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    runtime, isvc = _paths("explicit")
    rt = tmp_path / "runtime.yaml"
    sv = tmp_path / "isvc.yaml"
    rt.write_text((ROOT / runtime).read_text().replace("- --port=8080", "- --port 8080"))
    sv.write_text((ROOT / isvc).read_text().replace('"--max-model-len=8192"',
                                                    '"--max-model-len 8192"'))
    out = _run(capsys, str(rt), str(sv))
    assert f"{rt}:16:11: MG014" in out and f"{sv}:13:15: MG014" in out, out
    main(["--fix", str(rt), str(sv)])
    capsys.readouterr()
    assert '- --port\n        - "8080"' in rt.read_text()
    assert 'args: ["--max-model-len", "8192"]' in sv.read_text()
    # what the fixes did not touch is as it was
    assert rt.read_text().replace('- --port\n        - "8080"', "- --port=8080") == \
        (ROOT / runtime).read_text()


def test_suppression_in_the_isvc_file(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    runtime, isvc = _paths("explicit")
    sv = tmp_path / "isvc.yaml"
    sv.write_text((ROOT / isvc).read_text().replace(
        'args: ["--max-model-len=8192"]',
        'args: ["--max-model-len 8192"]  # mgpu-lint: disable=MG014'))
    out = _run(capsys, runtime, str(sv))
    assert "MG014" not in out and "MG012" not in out, out
