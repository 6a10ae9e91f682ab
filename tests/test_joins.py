"""Objects of two files joined into one launch: a KServe InferenceService and the
ServingRuntime / ClusterServingRuntime it runs (sources/kserve.py ``select_runtime``,
sources ``join_kserve``), an LLMInferenceService merged over the LLMInferenceServiceConfigs
its baseRefs name (``kserve.base_configs``, ``extract_llmisvc``), each finding placed in the
file that holds its span."""

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
    "llmisvc": ("llmisvc-config.yaml", "llmisvc-service.yaml"),
    "llmisvc-system": ("llmisvc-system-config.yaml", "llmisvc-system-service.yaml"),
    "llmisvc-command": ("llmisvc-command-config.yaml", "llmisvc-command-services.yaml"),
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


# --------------------------------------------------------------------- LLMInferenceService baseRefs

SVC = f"{DIR}/llmisvc-service.yaml"
CFG = f"{DIR}/llmisvc-config.yaml"
ONE = f"{DIR}/llmisvc-one-file.yaml"


def _words(la: dict) -> list[tuple[str, str]]:
    return [(w["word"], w["at"]) for w in la["argv"]]


def test_llmisvc_flags_from_the_config_file(capsys: pytest.CaptureFixture[str]) -> None:
    (la,) = _launches(capsys, CFG, SVC)
    # the launch is the service's (its `main` container), in its file
    assert la["path"] == SVC and la["at"] == "16:15"
    assert la["context"]["object"] == "LLMInferenceService/granite-8b"
    assert la["context"]["image"] == "vllm/vllm-openai:v0.10.2"  # the config's
    assert la["gpus"]["count"] == 2 and la["gpus"]["at"] == "19:29"
    # VLLM_ADDITIONAL_ARGS of the config, each word where the config writes it
    assert _words(la) == [
        ("ibm-granite/granite-3.3-8b-instruct", "10:15"),
        ("--served-model-name=granite", "11:11"),
        ("--tensor-parallel-size", f"{CFG}:15:21"), ("4", f"{CFG}:15:44"),
        ("--max-model-len", f"{CFG}:15:46"), ("32768", f"{CFG}:15:62")]
    out = _run(capsys, CFG, SVC)
    # tp 4 (the config's word, in its file) on the service's 2 GPUs (its file)
    assert f"{CFG}:15:44: MG101 [error]" in out, out
    assert f"--> {SVC}:19:29: 2 GPUs given here" in out, out
    assert out.count("MG101") == 1 and "MG017" not in out, out


def test_llmisvc_alone_reads_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    # the service alone: its command may come from the config not read, so no launch
    assert _launches(capsys, SVC) == []
    assert "MG017" in _run(capsys, SVC)
    # the config alone: its own container, no GPUs stated, nothing about GPUs
    (la,) = _launches(capsys, CFG)
    assert la["context"]["object"] == "LLMInferenceServiceConfig/vllm-tp4-long-context"
    assert "MG101" not in _run(capsys, CFG)


def test_llmisvc_finding_in_the_config_points_at_the_service(
        tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text((ROOT / CFG).read_text().replace(
        "--max-model-len 32768", "--max-model-len 32768 --gpu-memory-utilization 1.5"))
    main(["--no-color", "--format", "json", str(cfg), str(ROOT / SVC)])
    found = json.loads(capsys.readouterr().out)["findings"]
    (f,) = [f for f in found if f["code"] == "MG305"]  # 1.5 is not a share of the memory
    assert f["path"] == str(cfg) and f["range"]["start"]["line"] == 15
    assert [(r["path"], r["message"]) for r in f["related"]] == [
        (str(ROOT / SVC), ("LLMInferenceService granite-8b: this launch runs for it, its spec "
                           "merged over the configs its baseRefs name"))]


def test_llmisvc_args_replace_env_merges(capsys: pytest.CaptureFixture[str]) -> None:
    own, from_config = _launches(capsys, ONE)
    # `args` carry no patch strategy (corev1.Container): the service's replace the config's
    assert own["context"]["object"] == "LLMInferenceService/own-args"
    assert [w for w, _ in _words(own)][2:] == [
        "--enable-prefix-caching", "--tensor-parallel-size=4", "--max-model-len=16384"]
    # env merges by name: VLLM_ADDITIONAL_ARGS of the config reaches both services
    assert _words(from_config)[2:] == [("--enable-prefix-caching", "17:20"),
                                       ("--tensor-parallel-size=8", "14:13")]
    out = _run(capsys, ONE)
    assert "llmisvc-one-file.yaml:14:36: MG101 [error]" in out, out  # config-args: tp 8 on 4
    assert out.count("MG101") == 1, out  # own-args: tp 4 on 4


def test_llmisvc_service_env_replaces_the_configs(
        tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    svc = tmp_path / "svc.yaml"
    svc.write_text((ROOT / SVC).read_text().replace(
        "      - name: main\n", "      - name: main\n        env:\n"
        "          - {name: VLLM_ADDITIONAL_ARGS, value: --max-model-len 8192}\n"))
    (la,) = _launches(capsys, str(svc), CFG)
    # one variable of one name: the service's value, not the config's tp 4
    assert [w for w, _ in _words(la)][2:] == ["--max-model-len", "8192"]
    assert "MG101 [error]" not in _run(capsys, str(svc), CFG)


def test_llmisvc_system_namespace(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg, svc = _paths("llmisvc-system")
    (la,) = _launches(capsys, cfg, svc)
    assert la["context"]["image"] == "vllm/vllm-openai:v0.10.2"
    assert f"{cfg}:13:43: MG101 [error]" in _run(capsys, cfg, svc)
    # a config of that name in the service's own namespace comes first (getConfig)
    own = tmp_path / "own.yaml"
    own.write_text((ROOT / cfg).read_text().replace("namespace: kserve", "namespace: team-b")
                   .replace("--tensor-parallel-size 2", "--tensor-parallel-size 1"))
    (la,) = [la for la in _launches(capsys, cfg, svc, str(own))
             if la["context"]["object"].startswith("LLMInferenceService/")]
    assert ("--tensor-parallel-size", f"{own}:13:20") in _words(la)
    assert "MG101" not in _run(capsys, cfg, svc, str(own))
    # in a third namespace it is not found: no launch for the service
    other = tmp_path / "other.yaml"
    other.write_text((ROOT / cfg).read_text().replace("namespace: kserve", "namespace: team-c"))
    launches = _launches(capsys, str(other), svc)
    assert [la["context"]["object"] for la in launches] == [
        "LLMInferenceServiceConfig/shared-vllm"]


def test_llmisvc_missing_ref_gives_no_launch(capsys: pytest.CaptureFixture[str]) -> None:
    path = f"{DIR}/llmisvc-missing-ref.yaml"
    # gpu-profile-a100 is in no linted file: the merge is not known, and vllm-base's tp 8 on
    # the service's 1 GPU is no finding
    assert _launches(capsys, path) == []
    out = _run(capsys, path)
    assert "MG101" not in out and "MG017" in out, out


def test_llmisvc_config_parallelism_is_not_the_command(
        tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """ReplaceVariables executes the merged config over the LLMInferenceService itself
    (config_merge.go, v0.20.0), so the preset's `--tensor-parallel-size {{
    .Spec.Parallelism.Tensor }}` is the service's own parallelism, not a config's."""
    text = (ROOT / ONE).read_text().split("---\n")[0].replace(
        "        args:\n          - --tensor-parallel-size=8\n", "")
    text = text.replace("spec:\n  template:", "spec:\n  parallelism: {tensor: 4}\n  template:")
    svc = ("apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceService\n"
           "metadata: {name: qwen}\nspec:\n  model: {uri: hf://Qwen/Qwen2.5-32B-Instruct}\n"
           "  baseRefs: [{name: vllm-defaults}]\n")
    (tmp_path / "cfg.yaml").write_text(text)
    (tmp_path / "svc.yaml").write_text(svc)
    (la,) = _launches(capsys, str(tmp_path / "cfg.yaml"), str(tmp_path / "svc.yaml"))
    assert not any(w.startswith("--tensor-parallel-size") for w, _ in _words(la))
    (tmp_path / "svc.yaml").write_text(svc + "  parallelism: {tensor: 2}\n")
    (la,) = _launches(capsys, str(tmp_path / "cfg.yaml"), str(tmp_path / "svc.yaml"))
    assert ("--tensor-parallel-size=2", f"{tmp_path / 'svc.yaml'}:7:25") in _words(la)


def test_llmisvc_config_template_action_is_unknown(
        tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text((ROOT / CFG).read_text().replace(
        "--tensor-parallel-size 4", "--tensor-parallel-size {{ .Spec.Parallelism.Tensor }}"))
    (la,) = _launches(capsys, str(cfg), SVC)
    (tp,) = [w for w in la["argv"] if w["word"].startswith("{{")]
    assert tp["word"] == "{{ .Spec.Parallelism.Tensor }}" and tp["at"] == f"{cfg}:15:44"
    out = _run(capsys, str(cfg), SVC)
    assert "MG101 [" not in out and "MG000" not in out, out
    assert f"{cfg}:15:44: MG009 [info]" in out, out


def test_llmisvc_data_parallel_needs_the_services_own_parallelism(
        tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceServiceConfig\n"
                   "metadata: {name: dp}\nspec:\n  parallelism: {data: 4, dataLocal: 2}\n"
                   "  worker:\n    containers: [{name: main}]\n")
    svc = tmp_path / "svc.yaml"
    base = ("apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceService\n"
            "metadata: {name: moe}\nspec:\n  model: {uri: hf://Qwen/Qwen3-30B-A3B}\n"
            "  baseRefs: [{name: dp}]\n")
    # the data-parallel preset reads .Spec.Parallelism.Expert of the service: nil, the
    # template fails and nothing runs
    svc.write_text(base)
    assert _launches(capsys, str(cfg), str(svc)) == []
    svc.write_text(base + "  parallelism: {tensor: 1}\n")
    roles = [la["context"]["role"] for la in _launches(capsys, str(cfg), str(svc))]
    assert sorted(roles) == ["leader", "worker"]


def test_llmisvc_suppression_in_the_config_file(
        tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text((ROOT / CFG).read_text().replace(
        '--max-model-len 32768"', '--max-model-len 32768"  # mgpu-lint: disable=MG101'))
    out = _run(capsys, str(cfg), SVC)
    assert "MG101" not in out and "MG012" not in out, out


def test_llmisvc_config_command_replaces_the_presets(capsys: pytest.CaptureFixture[str]) -> None:
    cfg, svcs = _paths("llmisvc-command")
    first, second = _launches(capsys, cfg, svcs)
    # the config's command (its file), one launch per service, each with that service's GPUs
    assert (first["path"], first["at"], first["entry"]) == (cfg, "14:20", "api_server")
    assert first["context"]["object"] == "LLMInferenceService/llama-70b"
    assert first["gpus"]["at"] == f"{svcs}:16:36"
    # /mnt/models is the repo of the hf:// uri; the config's args (no service args)
    assert _words(first) == [("--model=meta-llama/Llama-3.1-70B-Instruct", "16:13"),
                             ("--tensor-parallel-size=8", "17:13"), ("--port=8000", "18:13")]
    # the second service's args replace the config's
    assert second["context"]["object"] == "LLMInferenceService/llama-70b-tp4"
    assert [w for w, _ in _words(second)] == [
        "--model=meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size=4", "--port=8000"]
    out = _run(capsys, cfg, svcs)
    assert f"{cfg}:17:36: MG101 [error]" in out and out.count("MG101") == 1, out
    # the config alone: its own container, no GPUs
    (alone,) = _launches(capsys, cfg)
    assert alone["context"]["object"] == "LLMInferenceServiceConfig/vllm-api-server"
    assert "MG101" not in _run(capsys, cfg)


def test_llmisvc_prefill_needs_the_services_own_prefill(
        tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """The prefill preset (config-llm-prefill-template.yaml, v0.20.0) reads
    `.Spec.Prefill.KVCacheOffloading` of the service with no nil guard: a prefill workload
    only a config states makes the template fail, and nothing runs."""
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceServiceConfig\n"
                   "metadata: {name: pd}\nspec:\n  template:\n    containers:\n"
                   "      - {name: main, image: vllm/vllm-openai:v0.10.2}\n"
                   "  prefill:\n    template:\n      containers:\n"
                   "        - {name: main, image: vllm/vllm-openai:v0.10.2}\n")
    svc = tmp_path / "svc.yaml"
    base = ("apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceService\n"
            "metadata: {name: pd-8b}\nspec:\n"
            "  model: {uri: hf://meta-llama/Llama-3.1-8B-Instruct}\n  baseRefs: [{name: pd}]\n")
    svc.write_text(base)
    assert [la["context"]["object"] for la in _launches(capsys, str(cfg), str(svc))] == [
        "LLMInferenceServiceConfig/pd", "LLMInferenceServiceConfig/pd"]  # read alone
    svc.write_text(base + "  prefill:\n    parallelism: {tensor: 2}\n    template:\n"
                   "      containers:\n        - name: main\n"
                   "          resources: {limits: {nvidia.com/gpu: \"2\"}}\n")
    launches = _launches(capsys, str(cfg), str(svc))
    by_role = {la["context"]["role"]: la for la in launches}
    assert sorted(by_role) == ["decode", "prefill"]
    assert by_role["prefill"]["gpus"]["count"] == 2
    assert ("--tensor-parallel-size=2", "8:27") in _words(by_role["prefill"])  # its file
    assert by_role["decode"]["context"]["image"] == "vllm/vllm-openai:v0.10.2"


def test_llmisvc_joins_in_a_walked_directory(capsys: pytest.CaptureFixture[str]) -> None:
    launches = _launches(capsys, DIR)
    objects = [la["context"]["object"] for la in launches]
    for name in ("granite-8b", "own-args", "config-args", "mistral-small", "llama-70b",
                 "llama-70b-tp4"):
        assert objects.count(f"LLMInferenceService/{name}") == 1, objects
    # the service whose second config is in no file gives none
    assert "LLMInferenceService/llama-8b" not in objects


def _reference_autoselect(isvc, runtimes, model):  # type: ignore[no-untyped-def]
    """The search without a runtime name as it read every runtime per InferenceService
    (before kserve.Autoselect): the reference the indexed, memoised search must equal."""
    from mgpu_lint.sources.kserve import _YAML_TRUE, RUNTIME_KINDS, _protocol_ok, \
        _same_namespace, _supports
    from mgpu_lint.sources.yamlnodes import get, get_str, items

    def priority(spec, fmt):  # type: ignore[no-untyped-def]
        for entry in items(get(spec, "supportedModelFormats")):
            if get_str(entry, "name") == fmt:
                p = (get_str(entry, "priority") or "").strip()
                return int(p) if p.lstrip("-").isdigit() else None
        return None

    visible = [r for r in runtimes if _same_namespace(isvc, r)]
    fmt = get_str(model, "modelFormat", "name")
    for kind in RUNTIME_KINDS:
        tier = [r for r in visible if r.kind == kind
                and get_str(get(r.root, "spec"), "disabled") not in _YAML_TRUE
                and get_str(get(r.root, "spec"), "multiModel") not in _YAML_TRUE
                and get(get(r.root, "spec"), "workerSpec") is None
                and _supports(get(r.root, "spec"), model, False)
                and _protocol_ok(get(r.root, "spec"), model)]
        if len(tier) == 1:
            return tier[0]
        if tier:
            ranked = [(p, r) for r in tier if (p := priority(get(r.root, "spec"), fmt)) is not None]
            if not ranked:
                return None
            best = max(p for p, _ in ranked)
            winners = [r for p, r in ranked if p == best]
            return winners[0] if len(winners) == 1 else None
    return None


def test_autoselect_index_answers_as_the_search_of_every_runtime() -> None:
    """kserve.Autoselect (runtimes read once, answers kept per format, protocol and the
    namespaces a service sees) against the search of every runtime, on 400 random sets of
    runtimes with 30 InferenceServices each: formats, versions, priorities, autoSelect,
    disabled, multiModel, protocols and namespaces drawn from small pools so they collide."""
    import random

    from mgpu_lint.source import SourceFile
    from mgpu_lint.sources.kserve import Autoselect, KObject, select_runtime
    from mgpu_lint.sources.yamlnodes import Doc, get
    from mgpu_lint.yamlsrc import compose_documents

    rng = random.Random(7)
    pick = rng.choice
    answered = 0
    for _ in range(400):
        docs = []
        for i in range(rng.randint(1, 7)):
            fmts = ", ".join(
                "{name: %s%s%s%s}" % (pick(["vLLM", "hf", "x"]),
                                      pick(["", ", autoSelect: true", ", autoSelect: 'true'",
                                            ", autoSelect: false"]),
                                      pick(["", ", version: '1'", ", version: '2'"]),
                                      pick(["", ", priority: 1", ", priority: 2", ", priority: x"]))
                for _ in range(rng.randint(0, 3)))
            ns = pick(["", "  namespace: a\n", "  namespace: b\n"])
            extra = pick(["", "  disabled: true\n", "  multiModel: true\n",
                          "  protocolVersions: [v2]\n", "  protocolVersions: [v1, v2]\n"])
            docs.append(f"kind: {pick(['ServingRuntime', 'ServingRuntime', 'ClusterServingRuntime'])}\n"
                        f"metadata:\n  name: r{i}\n{ns}spec:\n  supportedModelFormats: [{fmts}]\n{extra}")
        for i in range(30):
            ns = pick(["", "  namespace: a\n", "  namespace: b\n", "  namespace: c\n"])
            model = "{name: %s%s}%s" % (pick(["vLLM", "hf", "x"]),
                                        pick(["", ", version: '1'", ", version: '2'"]),
                                        pick(["", "\n      protocolVersion: v2"]))
            docs.append(f"kind: InferenceService\nmetadata:\n  name: s{i}\n{ns}"
                        f"spec:\n  predictor:\n    model:\n      modelFormat: {model}\n")
        text = "---\n".join(docs)
        doc = Doc(SourceFile("k.yaml", text), text)
        objs = [KObject(doc, root) for root in compose_documents(text)]
        runtimes = [o for o in objs if o.kind != "InferenceService"]
        auto = Autoselect(runtimes)
        for isvc in (o for o in objs if o.kind == "InferenceService"):
            model = get(isvc.root, "spec", "predictor", "model")
            want = _reference_autoselect(isvc, runtimes, model)
            assert select_runtime(isvc, runtimes, None, auto) is want
            answered += want is not None
    assert answered > 1_000


def test_joins_past_the_launch_limit_are_not_checked(capsys, tmp_path, monkeypatch) -> None:
    from mgpu_lint import bounds

    monkeypatch.setattr(bounds, "MAX_LAUNCHES", 2)
    runtime = tmp_path / "runtime.yaml"
    runtime.write_text((ROOT / DIR / "explicit-runtime.yaml").read_text())
    isvc = (ROOT / DIR / "explicit-isvc.yaml").read_text()
    services = tmp_path / "isvcs.yaml"
    services.write_text("---\n".join(isvc.replace("name: ", f"name: s{i}", 1) for i in range(4)))
    main(["--format", "json", "--exit-zero", str(runtime), str(services)])
    report = json.loads(capsys.readouterr().out)
    cut = [f for f in report["findings"] if f["code"] == "MG001"]
    assert len(cut) == 1 and "more than 2 InferenceServices run the ServingRuntimes" in \
        cut[0]["message"]
    assert cut[0]["path"].endswith("isvcs.yaml")


def _reference_find_config(svc, name, configs):  # type: ignore[no-untyped-def]
    """The scan of every config that kserve._find_config replaced (kept as the reference)."""
    from mgpu_lint.sources.kserve import SYSTEM_NAMESPACE

    named = [c for c in configs if c.name == name]
    ns = svc.namespace
    if ns is not None:
        here = [c for c in named if c.namespace in (ns, None)]
        if not here:
            here = [c for c in named if c.namespace == SYSTEM_NAMESPACE]
    else:
        here = [c for c in named if c.namespace is None] or named
    return here[0] if len(here) == 1 else None


def test_base_configs_by_name_answer_as_the_scan_of_every_config() -> None:
    """Random configs of a few names and namespaces (the service's, none, the system one,
    another) and services naming some of them, some twice: the configs looked up by name
    are the ones the scan of every config finds, in baseRefs order (fails when the index
    leaves out the configs without a namespace)."""
    import random

    from ruamel.yaml import YAML
    from mgpu_lint.sources.kserve import KObject, base_configs, configs_by_name

    rng = random.Random(826)
    names, spaces = ["a", "b", "c", "d"], [None, "ns", "kserve", "other"]

    def obj(kind: str, name: str | None, ns: str | None, extra: str = "") -> KObject:
        meta = ", ".join(x for x in (f"name: {name}" if name else "",
                                      f"namespace: {ns}" if ns else "") if x)
        text = (f"apiVersion: serving.kserve.io/v1alpha1\nkind: {kind}\n"
                f"metadata: {{{meta}}}\nspec: {{{extra}}}\n")
        return KObject(None, YAML().compose(text))  # type: ignore[arg-type]

    for _ in range(400):
        configs = [obj("LLMInferenceServiceConfig", rng.choice(names + [None]), rng.choice(spaces))
                   for _ in range(rng.randint(0, 10))]
        for c in configs:
            c.usable = rng.random() > 0.1
        by_name = configs_by_name(configs)
        for _ in range(10):
            refs = [rng.choice(names + ["e"]) for _ in range(rng.randint(0, 4))]
            svc = obj("LLMInferenceService", "s", rng.choice(spaces),
                      "baseRefs: [" + ", ".join(f"{{name: {r}}}" for r in refs) + "]")
            want: list | None = []
            for r in refs:
                hit = _reference_find_config(svc, r, configs)
                if hit is None or not hit.usable:
                    want = None
                    break
                want.append(hit)  # type: ignore[union-attr]
            got = base_configs(svc, by_name)
            assert (None if got is None else [id(c) for c in got]) == \
                (None if not want else [id(c) for c in want])


def _llmisvc_configs_and_services(n: int) -> str:
    """``n`` configs, then ``n`` services each naming all of them in baseRefs."""
    cfg = ("apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceServiceConfig\n"
           "metadata: {{name: c{i}, namespace: ns}}\nspec:\n  template:\n    containers:\n"
           "    - name: main\n      image: vllm/vllm-openai:v0.10.2\n"
           "      args: [--max-model-len, '4096']\n")
    refs = ", ".join(f"{{name: c{i}}}" for i in range(n))
    svc = ("apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceService\n"
           "metadata: {{name: s{i}, namespace: ns}}\nspec:\n"
           "  model: {{uri: 'hf://meta-llama/Llama-3.1-8B-Instruct', name: m}}\n"
           "  baseRefs: [REFS]\n  template:\n    containers:\n    - name: main\n"
           "      resources: {{limits: {{nvidia.com/gpu: '2'}}}}\n")
    return "---\n".join([cfg.format(i=i) for i in range(n)] + [svc.format(i=i).replace("REFS", refs)
                                                            for i in range(n)])


def test_base_refs_read_each_config_name_once(tmp_path, capsys, monkeypatch) -> None:
    """30 services each naming the same 30 configs: every ref read the name of every config
    (27,000 reads; 300 x 300 x 2,000 services took minutes); now each config's once."""
    from mgpu_lint.sources import kserve

    reads = []
    real = kserve.get_str

    def counted(node, *path):  # type: ignore[no-untyped-def]
        if path == ("metadata", "name"):
            reads.append(1)
        return real(node, *path)

    monkeypatch.setattr(kserve, "get_str", counted)
    (tmp_path / "x.yaml").write_text(_llmisvc_configs_and_services(30))
    main(["--exit-zero", "--output-format", "json", str(tmp_path / "x.yaml")])
    found = json.loads(capsys.readouterr().out)["findings"]
    assert [f["code"] for f in found].count("MG101") == 30  # tp 1 on 2 GPUs, each service
    assert len(reads) < 200, len(reads)


def test_base_ref_merges_stop_at_the_bound(tmp_path, capsys, monkeypatch) -> None:
    """Past bounds.MAX_BASE_REF_MERGES configs merged in a run, the next service and the ones
    after it are not merged (MG001 at the first), the ones before are checked."""
    from mgpu_lint import bounds

    monkeypatch.setattr(bounds, "MAX_BASE_REF_MERGES", 70)
    (tmp_path / "x.yaml").write_text(_llmisvc_configs_and_services(30))
    main(["--exit-zero", "--output-format", "json", str(tmp_path / "x.yaml")])
    found = json.loads(capsys.readouterr().out)["findings"]
    assert [f["code"] for f in found].count("MG101") == 2  # 60 merges; the third would pass 70
    (cut,) = [f for f in found if f["code"] == "MG001"]
    assert "name more than 70 configs in their baseRefs" in cut["message"]
    lines = (tmp_path / "x.yaml").read_text().split("\n")
    assert lines[cut["range"]["start"]["line"] - 1] == "apiVersion: serving.kserve.io/v1alpha2"
    assert lines[cut["range"]["start"]["line"] + 1] == "metadata: {name: s2, namespace: ns}"


def test_a_service_kept_for_the_join_holds_its_ref_names_not_their_nodes(tmp_path) -> None:
    """The services' baseRefs nodes are let go once read (2,000 services naming 300 configs
    kept 2 million nodes: 790 MB); the names stay."""
    from mgpu_lint.runner import read_files
    from mgpu_lint.sources.kserve import LLMISVC_KINDS
    from mgpu_lint.sources.yamlnodes import get, items

    (tmp_path / "x.yaml").write_text(_llmisvc_configs_and_services(3))
    run = read_files([str(tmp_path / "x.yaml")])
    services = [o for r in run.files for o in r.kserve if o.kind in LLMISVC_KINDS]
    assert len(services) == 3
    for svc in services:
        assert svc.ref_names == ("c0", "c1", "c2")
        assert items(get(svc.root, "spec", "baseRefs")) == []
        assert get(svc.root, "spec", "model") is not None
