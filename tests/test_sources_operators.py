"""Operator resources read as launches (linter/sources/operators.py): KubeAI Model, RayJob."""

from __future__ import annotations

import json

import pytest
from mgpu_lint.cli import main

KUBEAI = "fixtures/operators/kubeai-model.yaml"


def _launches(capsys: pytest.CaptureFixture[str], path: str) -> list[dict]:
    assert main(["launches", "--format", "json", path]) == 0
    return json.loads(capsys.readouterr().out)["launches"]


def _launches_text(capsys: pytest.CaptureFixture[str], path: str) -> str:
    main(["launches", path])
    return capsys.readouterr().out


def _lint(capsys: pytest.CaptureFixture[str], path: str) -> str:
    main(["--no-color", "--exit-zero", path])
    return capsys.readouterr().out


def test_kubeai_model_is_the_controllers_command(capsys):
    first, second, cached = _launches(capsys, KUBEAI)
    assert first["entry"] == "api_server" and first["at"] == "9:11"  # engine: VLLM
    argv = first["argv"]
    # --model from spec.url (the repo's characters), --served-model-name from metadata.name
    assert argv[0] == {"word": "--model=Qwen/Qwen2.5-32B-Instruct", "at": "8:8"}
    assert argv[1] == {"word": "--served-model-name=qwen25-32b-h100", "at": "5:9"}
    assert argv[3] == {"word": "--tensor-parallel-size=2", "at": "12:7"}
    assert first["gpus"] == {"count": 2, "origin": "KubeAI resourceProfile", "vendor": "nvidia",
                             "at": "17:20"}
    assert first["env"] == {"VLLM_LOGGING_LEVEL": "INFO"}
    assert second["gpus"]["count"] == 2
    assert cached["gpus"]["count"] == 1


def test_kubeai_findings(capsys):
    out = _lint(capsys, KUBEAI)
    lines = [ln for ln in out.splitlines() if ln.startswith(KUBEAI)]
    # tp 4 on a two-GPU profile, at the 4 of --tensor-parallel-size=4
    assert any(":27:34: MG101 [error]" in ln for ln in lines), out
    assert sum(": MG101 " in ln for ln in lines) == 1
    # the controller's fixed parts are not the user's: no probe, shm or entry-point findings
    for code in ("MG702", "MG008", "MG105", "MG016", "Traceback"):
        assert code not in out, out
    # a cache profile holds the weights: no download at every start for that model
    assert sum(": MG703 " in ln for ln in lines) == 2
    assert "L4" in out  # the GPU type comes from the profile name


def test_kubeai_non_vllm_and_malformed_are_skipped(capsys, tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("apiVersion: kubeai.org/v1\nkind: Model\nmetadata: {name: x}\n"
                    "spec: {engine: VLLM, url: [odd], resourceProfile: {a: b}}\n---\n"
                    "apiVersion: kubeai.org/v1\nkind: Model\nspec: 3\n")
    assert _launches(capsys, str(path)) == []


def test_rayjob_entrypoint_is_a_shell_command(capsys):
    (la,) = _launches(capsys, "fixtures/operators/rayjob.yaml")
    assert la["at"] == "8:5"
    words = [w["word"] for w in la["argv"]]
    assert words[:3] == ["Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "2"]
    assert la["argv"][2]["at"] == "9:34"  # the default of ${TP:-2}
    out = _lint(capsys, "fixtures/operators/rayjob.yaml")
    assert "MG702" not in out and "MG004" not in out


KSERVE = "fixtures/operators/kserve-llmisvc.yaml"


def test_llmisvc_is_the_presets_command(capsys):
    single, decode, prefill, secret, own, leader, worker = _launches(capsys, KSERVE)
    assert single["entry"] == "vllm serve" and single["at"] == "14:15"  # `name: main`
    words = [(w["word"], w["at"]) for w in single["argv"]]
    # the model from spec.model.uri (the repo's characters), tp from spec.parallelism.tensor
    assert words[0] == ("Qwen/Qwen2.5-32B-Instruct", "9:15")
    assert words[1] == ("--served-model-name=qwen32b", "6:9")  # metadata.name
    assert words[2] == ("--tensor-parallel-size=4", "11:13")
    # VLLM_ADDITIONAL_ARGS split as eval splits it: the single-quoted JSON is one word
    assert ('{"temperature": 0.7}', "19:45") in words
    assert words[-1] == ("--gpu-memory-utilization=0.9", "20:17")  # `args` are $@
    assert single["gpus"]["count"] == 2
    assert decode["argv"][1] == {"word": "--served-model-name=llama", "at": "33:11"}
    assert [w["word"] for w in decode["argv"]][2] == "--tensor-parallel-size=2"
    # the prefill workload reads spec.prefill.parallelism.tensor, not the decode's env
    assert [w["word"] for w in prefill["argv"]][2:] == ["--tensor-parallel-size=2"]
    assert secret["argv"][-1]["word"] == "$VLLM_ADDITIONAL_ARGS"
    assert own["argv"][0]["word"] == "/mnt/models"  # the user's own command, read as written
    # data parallel over a leader and workers: the stated sizes, the worker headless
    dp = ["--enable-expert-parallel", "--tensor-parallel-size=2", "--data-parallel-size=16",
          "--data-parallel-size-local=8"]
    assert [w["word"] for w in leader["argv"]][2:] == dp
    assert [w["word"] for w in worker["argv"]][2:] == dp + ["--headless"]


def test_llmisvc_findings(capsys):
    out = _lint(capsys, KSERVE)
    lines = [ln for ln in out.splitlines() if ln.startswith(KSERVE)]
    # tp 4 (spec.parallelism.tensor) on two GPUs, at the 4
    assert any(":11:13: MG101 [error]" in ln for ln in lines), out
    # 8 local engines of tp 2 on 8 GPUs, in the leader's pod and the worker's
    assert sum(":98:25: MG101 [error]" in ln for ln in lines) == 2, out
    assert sum(": MG101 " in ln for ln in lines) == 3
    # the preset's probes, /dev/shm and download are not the user's to fix
    for code in ("MG702", "MG701", "MG703", "MG004", "MG005", "Traceback"):
        assert code not in out, out
    # flags from a secret may set tp: its 4 GPUs are not called idle
    assert not any(":69:36: MG101" in ln for ln in lines), out
    # an unbalanced quote in VLLM_ADDITIONAL_ARGS fails eval: MG003 there, no launch
    assert any(": MG003 [error] unbalanced single quote" in ln for ln in lines), out
    assert "LLMInferenceService/broken-quote" not in _launches_text(capsys, KSERVE)


RAYSERVICE = "fixtures/operators/rayservice-llm.yaml"


def test_rayservice_serve_llm_entries_are_engines(capsys):
    llama, qwen = _launches(capsys, RAYSERVICE)  # the custom application is not read
    assert llama["at"] == "15:13"  # model_loading_config, inside serveConfigV2
    words = {w["word"]: w["at"] for w in llama["argv"]}
    # positions inside the YAML string embedded in the YAML file
    assert words["--model=meta-llama/Llama-3.1-8B-Instruct"] == "17:29"
    assert words["--tensor-parallel-size=3"] == "19:15"
    assert words["--enable-chunked-prefill"] == "21:15"
    # `false` reaches vLLM from Python, not as a word: unknown, never `--flag=false`
    assert words["$engine_kwargs.enable_prefix_caching"] == "22:38"
    assert llama["gpus"]["count"] == 4  # the GPU worker group's pods
    # model_id is the model when model_source is absent; the rejected key is not a flag
    assert [w["word"] for w in qwen["argv"]] == ["--model=Qwen/Qwen2.5-7B-Instruct",
                                                 "--served-model-name=Qwen/Qwen2.5-7B-Instruct"]


def test_rayservice_findings(capsys):
    out = _lint(capsys, RAYSERVICE)
    lines = [ln for ln in out.splitlines() if ln.startswith(RAYSERVICE)]
    assert any(":19:37: MG102 [error]" in ln for ln in lines), out  # tp 3, 32 heads
    # Ray Serve LLM takes exact field names: an abbreviation is refused, not resolved
    assert any(":29:15: MG004 [error]" in ln and "tensor_parallel_size" not in ln
               for ln in lines), out
    assert "MG013" not in out and "MG006" not in out
    # the Ray images' HOME, and HF_HUB_OFFLINE from runtime_env for the second entry
    assert sum(": MG703 " in ln for ln in lines) == 1 and "/home/ray/.cache" in out
    # KubeRay injects probes and /dev/shm; the Ray cluster's GPUs are not compared per pod
    for code in ("MG702", "MG701", "MG101", "Traceback"):
        assert code not in out, out


STACK = "fixtures/operators/production-stack-values.yaml"


def test_production_stack_model_specs_are_the_charts_deployments(capsys):
    llama, qwen, on_ray, qwen32 = _launches(capsys, STACK)  # disabled and odd entries skipped
    assert on_ray["context"]["object"] == "RayCluster/on-ray" and on_ray["gpus"] is None
    assert llama["at"] == "6:11" and llama["entry"] == "vllm serve"
    words = [(w["word"], w["at"]) for w in llama["argv"]]
    assert words[0] == ("meta-llama/Llama-3.1-70B-Instruct", "9:15")  # modelURL, positional
    assert ("--tensor-parallel-size=4", "16:7") in words  # vllmConfig.tensorParallelSize
    assert words[-2:] == [("--max-num-batched-tokens", "19:20"), ("8192", "19:48")]
    assert llama["gpus"] == {"count": 2, "origin": "requestGPU", "vendor": "nvidia",
                             "at": "13:17"}
    # the chart's own words are not the user's
    assert not any(w.startswith(("--host", "--port", "--no-enable")) for w, _ in words)
    assert qwen32["gpus"]["count"] == 2  # resources replaces requestGPU


def test_production_stack_findings(capsys):
    out = _lint(capsys, STACK)
    lines = [ln for ln in out.splitlines() if ln.startswith(STACK)]
    assert any(":16:27: MG101 [error]" in ln for ln in lines), out  # tp 4 on requestGPU 2
    # tp in extraArgs: the chart mounts /dev/shm only with vllmConfig.tensorParallelSize
    assert any(":26:11: MG701 " in ln for ln in lines), out
    assert sum(": MG701 " in ln for ln in lines) == 1  # extraVolumes /dev/shm counts
    # the chart's probes and the PVC that holds HF_HOME (/data)
    for code in ("MG702", "MG703", "MG004", "Traceback"):
        assert code not in out, out


STACK_RAY = "fixtures/operators/production-stack-ray.yaml"


def test_production_stack_ray_spec_is_the_ray_templates_head(capsys):
    # helm/templates/ray-cluster.yaml: vllm serve over Ray in the head container
    pp, llama = _launches(capsys, STACK_RAY)
    assert pp["context"]["container"] == "vllm-ray-head"
    words = [(w["word"], w["at"]) for w in pp["argv"]]
    # the template's executor word shown at raySpec.enabled; pp rendered; runner and a false
    # enablePrefixCaching are not
    assert ("--distributed-executor-backend=ray", "20:7") in words
    assert ("--pipeline-parallel-size=2", "16:7") in words
    assert not any(w.startswith(("--runner", "--no-enable", "--enable-prefix")) for w, _ in words)
    assert pp["gpus"]["at"] == "24:21"  # raySpec.headNode.requestGPU
    assert pp["env"]["VLLM_USE_V1"] == "0"  # a vllmConfig without v1
    out = _lint(capsys, STACK_RAY)
    lines = [ln for ln in out.splitlines() if ln.startswith(STACK_RAY)]
    # tp 4 over Ray pods of 2 GPUs; the abbreviation in extraArgs
    assert any(":35:27: MG105 [warning]" in ln for ln in lines), out
    assert any(":36:20: MG013 " in ln for ln in lines), out
    # one engine over the cluster: the Ray cluster's GPUs are not compared per pod; KubeRay
    # and the chart give /dev/shm and probes
    for code in ("MG101", "MG701", "MG702", "MG016", "Traceback"):
        assert code not in out, out


ISVC = "fixtures/operators/kserve-isvc-runtime.yaml"


def test_inference_service_runs_the_runtime_it_names(capsys):
    (la,) = _launches(capsys, ISVC)  # the runtime is not a launch of its own; `elsewhere` none
    assert la["at"] == "14:18"  # the runtime's command
    words = [(w["word"], w["at"]) for w in la["argv"]]
    # runtime args first, then the isvc's; the model is the storageUri's repo
    assert words[0] == ("--port=8080", "16:11")
    assert words[2] == ("--model=meta-llama/Llama-3.1-8B-Instruct", "18:11")
    assert words[3] == ("--tensor-parallel-size=4", "38:15")
    assert la["gpus"]["count"] == 2 and la["gpus"]["at"] == "40:34"  # the isvc's resources
    out = _lint(capsys, ISVC)
    assert ":38:38: MG101 [error]" in out, out
    for code in ("MG702", "MG701", "MG703", "Traceback"):
        assert code not in out, out


def test_inference_service_resources_merge_over_the_runtimes_key_by_key(capsys, tmp_path):
    # KServe merges the predictor's container over the runtime's with a strategic merge patch
    # (pkg/utils/container_merge.go, v0.20.0): resources.limits and requests merge key by key,
    # so the runtime's GPU limit stays when the predictor only requests GPUs
    text = open(ISVC).read().replace('limits: {nvidia.com/gpu: "2"}',
                                     'requests: {nvidia.com/gpu: "4"}')
    path = tmp_path / "isvc.yaml"
    path.write_text(text.replace('        - --model=/mnt/models\n',
                                 '        - --model=/mnt/models\n      resources:\n'
                                 '        limits: {nvidia.com/gpu: "4"}\n', 1))
    (la,) = _launches(capsys, str(path))
    assert la["gpus"]["count"] == 4 and la["gpus"]["at"] == "20:34", la["gpus"]
    out = _lint(capsys, str(path))
    for code in ("MG101", "MG102", "Traceback"):  # tp 4 on the runtime's 4-GPU limit
        assert code not in out, out


def test_kubeai_models_chart_values(capsys):
    path = "fixtures/operators/kubeai-models-values.yaml"
    (la,) = _launches(capsys, path)  # disabled entries and a bare `enabled: true` give none
    assert la["argv"][1] == {"word": "--served-model-name=llama-3.1-70b-h100", "at": "3:3"}
    assert la["gpus"]["count"] == 2
    out = _lint(capsys, path)
    assert f"{path}:9:32: MG101 [error]" in out, out
    assert "Traceback" not in out


def test_operator_model_from_an_unknown_source_is_unresolved_not_missing(capsys, tmp_path):
    # an s3:// url (KubeAI) or a cloud-mirror model_source (Ray Serve LLM) holds a model the
    # linter cannot name: MG009 at the value, never "no model given"
    kubeai = tmp_path / "m.yaml"
    kubeai.write_text("apiVersion: kubeai.org/v1\nkind: Model\nmetadata: {name: m}\n"
                      "spec: {url: 's3://bucket/llama', engine: VLLM,"
                      " resourceProfile: 'nvidia-gpu-h100:1'}\n")
    ray = tmp_path / "r.yaml"
    ray.write_text("apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: r}\nspec:\n"
                   "  serveConfigV2: |\n    applications:\n"
                   "    - import_path: ray.serve.llm:build_openai_app\n      args:\n"
                   "        llm_configs:\n          - model_loading_config:\n"
                   "              model_id: m\n              model_source:\n"
                   "                bucket_uri: 's3://b'\n"
                   "            engine_kwargs: {enforce_eager: 'yes'}\n")
    for path in (kubeai, ray):
        out = _lint(capsys, str(path))
        assert ": MG009 [info] --model is set from" in out, out
        # a string for a bare flag is Python truth to Ray, not `--enforce-eager=yes`
        for code in ("MG016", "MG006", "Traceback"):
            assert code not in out, out


DYNAMO = "fixtures/operators/dynamo-graph.yaml"


def test_dynamo_workers_are_vllm_launches_without_dynamos_options(capsys):
    launches = _launches(capsys, DYNAMO)
    by_name = {la["context"]["container"]: la for la in launches}
    # the frontend and the TensorRT-LLM worker give no launch, nor do odd services; the
    # SGLang worker is an SGLang launch
    assert sorted(by_name) == ["BrokenComponent", "FutureWorker", "MultiNodeWorker",
                               "SglangWorker", "VllmDecodeWorker", "VllmPrefillWorker",
                               "VllmWorker"]
    assert by_name["SglangWorker"]["engine"] == "sglang"
    prefill = by_name["VllmPrefillWorker"]
    assert prefill["at"] == "32:15"  # the `dynamo.vllm` item
    # --is-prefill-worker and --connector kvbm nixl are Dynamo's: not vLLM's words
    assert [(w["word"], w["at"]) for w in prefill["argv"]] == [
        ("--model", "34:15"), ("Qwen/Qwen3-8B", "35:15"), ("--tensor-parallel-size", "40:15"),
        ("4", "41:16"), ("--max-model-len", "42:15"), ("16384", "43:15")]  # $(MAX_LEN): envs
    assert prefill["gpus"] == {"count": 2, "origin": "Dynamo resources.limits.gpu",
                               "vendor": "nvidia", "at": "22:16"}
    # a `sh -c` string: --migration-limit=3 and --dyn-reasoning-parser qwen3 are Dynamo's
    decode = by_name["VllmDecodeWorker"]
    assert [(w["word"], w["at"]) for w in decode["argv"]] == [
        ("--model", "59:43"), ("Qwen/Qwen3-8B", "59:51"), ("--tensor-parallel-size", "60:15"),
        ("2", "60:38"), ("--enforce-eager", "61:44")]
    assert decode["gpus"]["origin"] == "Dynamo resources.requests.gpu"
    # an option neither Dynamo nor vLLM knows: its words are unknown, never an MG004
    future = [w["word"] for w in by_name["FutureWorker"]["argv"]]
    assert future == ["--model", "Qwen/Qwen3-0.6B", "$some-later-dynamo-option", "-tp", "1"]
    # v1beta1: the GPUs of the `main` container of the pod template
    assert by_name["VllmWorker"]["gpus"]["origin"] == "nvidia.com/gpu limit"
    assert [w["word"] for w in by_name["VllmWorker"]["argv"]][-1] == "2"


def test_dynamo_findings(capsys):
    out = _lint(capsys, DYNAMO)
    lines = [ln for ln in out.splitlines() if ln.startswith(DYNAMO)]
    # tp 4 on the service's 2 GPUs, at the "4"; the SGLang worker's --tp 8 on its one GPU
    assert [ln.split(" [")[0] for ln in lines if " MG101 " in ln] == [
        f"{DYNAMO}:41:16: MG101", f"{DYNAMO}:90:54: MG101"]
    # nodeCount 2 × 4 GPUs: tp 8 spans the two pods (not a count mismatch)
    assert any(ln.startswith(f"{DYNAMO}:81:68: MG105 ") for ln in lines), out
    # sharedMemorySize "0" takes the operator's /dev/shm away
    assert any(ln.startswith(f"{DYNAMO}:129:13: MG701 ") for ln in lines), out
    # the worker serves no HTTP API (the frontend does); the operator adds probes and /dev/shm;
    # the api_server entry point is Dynamo's, not deprecated vLLM use
    for code in ("MG004", "MG008", "MG605", "MG606", "MG702", "Traceback", "MG000"):
        assert code not in out, out
    assert sum(" MG701 " in ln for ln in lines) == 1


DYNAMO_SGLANG = "fixtures/operators/dynamo-sglang.yaml"


def test_dynamo_sglang_workers_are_sglang_launches(capsys):
    by_name = {la["context"]["container"]: la for la in _launches(capsys, DYNAMO_SGLANG)}
    # the frontend runs no engine; the image diffusion worker's arguments are SGLang's
    # diffusion server's, not the LLM server's the catalogs hold: no launch
    assert sorted(by_name) == ["AggWorker", "DecodeWorker", "FutureWorker", "PrefillWorker",
                               "SglangWorker", "ShellWorker", "WideWorker"]
    agg = by_name["AggWorker"]
    assert (agg["engine"], agg["entry"], agg["at"]) == ("sglang", "dynamo.sglang", "26:34")
    # --endpoint, --dyn-reasoning-parser, --migration-limit=2 and --use-sglang-tokenizer are
    # Dynamo's: SGLang never sees them
    assert [(w["word"], w["at"]) for w in agg["argv"]] == [
        ("--model-path", "28:15"), ("Qwen/Qwen3-0.6B", "29:15"),
        ("--served-model-name", "30:15"), ("Qwen/Qwen3-0.6B", "31:15"),
        ("--page-size", "34:15"), ("16", "35:16"), ("--tp", "36:15"), ("1", "37:16"),
        ("--trust-remote-code", "41:15"), ("--skip-tokenizer-init", "43:15"),
        ("--host", "44:15"), ("0.0.0.0", "45:15")]
    assert agg["gpus"] == {"count": 1, "origin": "Dynamo resources.limits.gpu",
                           "vendor": "nvidia", "at": "22:16"}
    # nodeCount 2: the operator appends --dist-init-addr and --nnodes 2 to the leader's
    # command (its --node-rank 0 is SGLang's default); the words point at nodeCount
    decode = by_name["DecodeWorker"]
    assert decode["context"]["role"] == "multi-node-leader"
    assert [(w["word"], w["at"]) for w in decode["argv"][-5:]] == [
        ("decode", "68:87"), ("--dist-init-addr", "60:20"),
        ("$dynamo_leader_hostname:29500", "60:20"), ("--nnodes", "60:20"), ("2", "60:20")]
    # a `sh -c` string: --dyn-tool-call-parser hermes is Dynamo's
    assert [w["word"] for w in by_name["ShellWorker"]["argv"]] == [
        "--model-path", "Qwen/Qwen3-8B", "--tp", "2", "--mem-fraction-static", "0.8"]
    # an option neither Dynamo nor SGLang knows: unknown words, never an MG004
    assert [w["word"] for w in by_name["FutureWorker"]["argv"]] == [
        "--model-path", "Qwen/Qwen3-0.6B", "$some-later-dynamo-option", "--tp", "1"]
    # v1beta1: --enable-multimodal is Dynamo's (it forwards it); GPUs of the `main` container
    beta = by_name["SglangWorker"]
    assert [w["word"] for w in beta["argv"]] == ["--model-path", "Qwen/Qwen3-8B", "--tp", "2"]
    assert beta["gpus"]["origin"] == "nvidia.com/gpu limit"


def test_dynamo_sglang_findings(capsys):
    out = _lint(capsys, DYNAMO_SGLANG)
    lines = [ln.split(" [")[0] for ln in out.splitlines() if ln.startswith(DYNAMO_SGLANG)]
    # tp 4 on 2 GPUs; tp 16 over the 2 nodes needs 8 GPUs per pod of 4; tp 8 over 2 × 4 fits
    assert [ln for ln in lines if " MG101" in ln] == [
        f"{DYNAMO_SGLANG}:55:59: MG101", f"{DYNAMO_SGLANG}:80:60: MG101"]
    assert "tp 16 over 2 nodes needs 8 GPUs on this node but the container gets 4 GPUs" in out
    # Dynamo's options are never unknown SGLang flags; a worker serves no HTTP API of its own
    # (--host 0.0.0.0 without --api-key is the frontend's business); the operator's
    # --dist-init-addr with its unknown leader host is no unresolved-variable note
    for code in ("MG004", "MG013", "MG014", "MG016", "MG605", "MG606", "MG702", "MG009",
                 "MG823", "Traceback"):
        assert code not in out, out


def test_dynamo_sglang_dynamo_values_and_config_files(capsys, tmp_path):
    path = tmp_path / "dgd.yaml"
    path.write_text(
        "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata: {name: g}\n"
        "spec:\n  services:\n    w:\n      componentType: worker\n"
        "      resources: {limits: {gpu: '1'}}\n      extraPodSpec:\n        mainContainer:\n"
        "          image: lmsysorg/sglang:v0.4.10.post2\n"
        "          command: [python3]\n"
        "          args: [-m, dynamo.sglang, --model-path, Qwen/Qwen3-0.6B, --load-format, gms,\n"
        "                 --disagg-config, /cfg/disagg.yaml, --disagg-config-key, prefill]\n")
    (la,) = _launches(capsys, str(path))
    # "gms" is a load format Dynamo adds to SGLang's choices (its GPU Memory Service loader);
    # --disagg-config's section becomes SGLang's --config file: settings unknown
    assert [w["word"] for w in la["argv"]] == ["--model-path", "Qwen/Qwen3-0.6B",
                                               "$disagg-config"]
    out = _lint(capsys, str(path))
    for code in ("MG004", "MG005", "MG006", "MG013", "Traceback"):
        assert code not in out, out


def test_sglang_words_that_may_set_any_option_make_unstated_settings_unknown(capsys, tmp_path):
    # Qwen3-32B's weights on one 24 GB L4 at SGLang's default tp 1 do not load (MG824); a
    # `$EXTRA` may hold --quantization or --tp, so the default is not known and nothing rests
    # on it (as vLLM's walker has it)
    found = {}
    for name, extra in (("plain", ""), ("extra", " $EXTRA")):
        path = tmp_path / f"{name}.yaml"
        path.write_text(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: s}\nspec:\n"
            "  template:\n    spec:\n"
            "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n      containers:\n"
            "        - name: s\n          image: lmsysorg/sglang:v0.5.5\n"
            "          command: [sh, -c, 'python3 -m sglang.launch_server"
            f" --model-path Qwen/Qwen3-32B{extra}']\n"
            "          resources: {limits: {nvidia.com/gpu: 1}}\n")
        found[name] = _lint(capsys, str(path))
    assert " MG824 [error]" in found["plain"], found["plain"]
    assert " MG824 " not in found["extra"] and "Traceback" not in found["extra"], found["extra"]


RAYJOB_CLUSTER = "fixtures/operators/rayjob-cluster.yaml"


def test_rayjob_gpus_are_the_ray_clusters(capsys):
    over, inside, existing, odd, odd2 = _launches(capsys, RAYJOB_CLUSTER)
    # the GPU worker group of spec.rayClusterSpec: per pod, with its node labels and image
    assert over["gpus"] == {"count": 1, "origin": "nvidia.com/gpu limit", "vendor": "nvidia",
                            "at": "30:37"}
    assert over["deployment"]["gpu"]["name"] == "NVIDIA L4 24GB"
    assert over["context"]["image"] == "rayproject/ray-ml:2.40.0-gpu"
    assert inside["gpus"]["count"] == 2
    # a clusterSelector names a cluster that is not here; odd specs give no GPUs, no error
    assert existing.get("gpus") is None and odd.get("gpus") is None and odd2.get("gpus") is None
    out = _lint(capsys, RAYJOB_CLUSTER)
    lines = [ln.split(" [")[0] for ln in out.splitlines() if ln.startswith(RAYJOB_CLUSTER)]
    # tp 2 over two one-GPU Ray pods, at the 2 of --tensor-parallel-size 2
    assert lines == [f"{RAYJOB_CLUSTER}:8:74: MG105"], out


def test_stormservice_roles_are_pod_templates(capsys):
    path = "fixtures/operators/aibrix-stormservice.yaml"
    prefill, decode = _launches(capsys, path)
    assert prefill["context"]["container"] == "prefill" and decode["gpus"]["count"] == 2
    out = _lint(capsys, path)
    errors = [ln.split(" [")[0] for ln in out.splitlines() if "[error]" in ln]
    assert errors == [f"{path}:19:75: MG101"], out  # tp 2 on the prefill role's one GPU


def test_rayservice_engine_kwargs_are_never_abbreviations(capsys, tmp_path):
    # `device` is a field of older vLLM releases only; a keyword argument is matched exactly,
    # so it is not `--device`, an abbreviation of --device-ids on the command line (MG013)
    ray = tmp_path / "r.yaml"
    ray.write_text("apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: r}\nspec:\n"
                   "  serveConfigV2: |\n    applications:\n"
                   "    - import_path: ray.serve.llm:build_openai_app\n      args:\n"
                   "        llm_configs:\n          - model_loading_config:\n"
                   "              model_id: Qwen/Qwen2.5-7B-Instruct\n"
                   "            engine_kwargs: {device: auto, max_model_len: 1024}\n")
    (la,) = _launches(capsys, str(ray))
    assert [w["word"] for w in la["argv"]][-2:] == ["$engine_kwargs.device",
                                                      "--max-model-len=1024"]
    out = _lint(capsys, str(ray))
    for code in ("MG013", "MG004", "Traceback"):
        assert code not in out, out


LLMISVC_CONFIG = "fixtures/operators/kserve-llmisvc-config.yaml"


def test_llmisvc_config_actions_are_unknowns_in_place(capsys):
    templated, plain = _launches(capsys, LLMISVC_CONFIG)  # the unclosed block gives nothing
    words = [(w["word"], w["at"]) for w in templated["argv"]]
    # each action keeps its own characters and place; the block whose condition is not
    # known is one unknown (no words or several)
    assert ("{{ .Spec.Model.Name }}", "17:36") in words
    assert ("{{ .Spec.Parallelism.Tensor }}", "22:38") in words
    assert words[words.index(("--kv-transfer-config", "20:15")) + 1] == (
        "{{ kvTransferConfig .Spec.KVCacheOffloading }}", "20:37")
    assert ("{{- if .Spec.Parallelism.Expert }} --enable-expert-parallel{{- end }}",
            "21:15") in words
    assert plain["context"]["object"] == "LLMInferenceServiceConfig/plain"
    out = _lint(capsys, LLMISVC_CONFIG)
    lines = [ln for ln in out.splitlines() if ln.startswith(LLMISVC_CONFIG)]
    assert any(ln.startswith(f"{LLMISVC_CONFIG}:19:40: MG305 [error]") for ln in lines), out
    assert any(ln.startswith(f"{LLMISVC_CONFIG}:22:38: MG009 [info] --tensor-parallel-size is "
                             "set from the template action `{{ .Spec.Parallelism.Tensor }}`")
               for ln in lines), out
    # a single-quoted action is not JSON the linter reads; the unclosed block is not read as
    # `{{`, `if` … arguments
    for code in ("MG004", "MG006", "MG702", "Traceback"):
        assert code not in out, out


@pytest.mark.parametrize("text, region", [
    # `{{-` trims the spaces before it on its line, `-}}` those after
    ("a {{- .X -}} b", (1, 13, "{{- .X -}}")),
    # a block whose condition is not known is one region, else and nested actions inside it
    ("x {{ if .A }}{{ .B }}{{ else }}c{{ end }} y",
     (2, 41, "{{ if .A }}{{ .B }}{{ else }}c{{ end }}")),
    # the indentation that opens a line is the YAML's: kept
    ("\n  {{- .X }}", (3, 12, "{{- .X }}")),
])
def test_render_templates_keeps_lengths(text, region):
    from mgpu_lint.sources.kserve import render_templates

    out, regions = render_templates(text, 0, len(text))
    assert regions == [region]
    lo, hi, _ = region
    # a shell expansion of the same length in place of the action; the rest as it was
    assert len(out) == len(text) and out[:lo] == text[:lo] and out[hi:] == text[hi:]
    assert out[lo:lo + 2] == "${" and out[hi - 1] == "}"


def test_render_templates_unclosed_block():
    from mgpu_lint.sources.kserve import render_templates

    assert render_templates("a {{ if .X }} b", 0, 15)[1] is None


def test_raycluster_head_engine_gets_the_worker_groups_gpus(capsys):
    path = "fixtures/operators/raycluster-head-engine.yaml"
    no_gpus, own = _launches(capsys, path)
    assert no_gpus["gpus"] == {"count": 4, "origin": "Ray worker group's nvidia.com/gpu limit",
                               "vendor": "nvidia", "at": "33:35"}
    assert no_gpus["deployment"]["gpu"]["name"] == "NVIDIA A100 SXM4 80GB"  # workers' labels
    assert own["gpus"]["count"] == 8  # the head's own GPUs win
    out = _lint(capsys, path)
    assert [ln.split(" [")[0] for ln in out.splitlines() if " MG105 " in ln] == [
        f"{path}:19:65: MG105"], out


def test_llmisvc_config_main_has_the_presets_shm_and_probes(tmp_path, capsys):
    # a config's `main` is merged over a preset (config-llm-template.yaml, KServe v0.20.0),
    # which mounts an emptyDir of medium Memory on /dev/shm and declares the /health probes
    path = tmp_path / "cfg.yaml"
    path.write_text("apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceServiceConfig\n"
                    "metadata: {name: tp8}\nspec:\n  template:\n    containers:\n"
                    "      - name: main\n        image: vllm/vllm-openai:v0.10.2\n"
                    "        args: [--tensor-parallel-size=8]\n")
    (la,) = _launches(capsys, str(path))
    assert la["context"]["object"] == "LLMInferenceServiceConfig/tp8"
    out = _lint(capsys, str(path))
    assert "MG701" not in out and "MG702" not in out, out
    # another container name gets no preset
    path.write_text(path.read_text().replace("name: main", "name: server"))
    out = _lint(capsys, str(path))
    assert "MG701" in out and "MG702" in out, out


def test_kubeai_adapters_enable_lora(capsys):
    # spec.adapters: the controller appends --enable-lora after spec.args and sets
    # VLLM_ALLOW_RUNTIME_LORA_UPDATING=True (engine_vllm.go vLLMPodForModel)
    (launch,) = _launches(capsys, "fixtures/rules/MG308/silent-kubeai-adapters.yaml")
    assert launch["argv"][-1] == {"word": "--enable-lora", "at": "15:3"}
    assert launch["env"] == {"VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True"}
    first = _launches(capsys, KUBEAI)[0]
    assert "--enable-lora" not in [a["word"] for a in first["argv"]]


def test_kubeai_s3_url_streams_with_runai(capsys, tmp_path):
    # vLLMPodForModel: an s3:// url without a cache profile adds --load-format=runai_streamer
    # after --served-model-name; with a cache profile the weights are read from the cache
    path = tmp_path / "m.yaml"
    path.write_text("apiVersion: kubeai.org/v1\nkind: Model\nmetadata: {name: m}\n"
                    "spec: {url: 's3://bucket/llama', engine: VLLM, args: [--max-model-len=4096]}\n"
                    "---\napiVersion: kubeai.org/v1\nkind: Model\nmetadata: {name: c}\n"
                    "spec: {url: 's3://bucket/llama', engine: VLLM, cacheProfile: efs}\n")
    streamed, cached = _launches(capsys, str(path))
    words = [a["word"] for a in streamed["argv"]]
    assert words[2:] == ["--load-format=runai_streamer", "--max-model-len=4096"], words
    assert "--load-format=runai_streamer" not in [a["word"] for a in cached["argv"]]


def test_production_stack_mounts_find_their_volumes_by_name_once(capsys, tmp_path, monkeypatch):
    """Each extraVolumeMounts entry's volume is looked up in an index of extraVolumes, not by
    reading every volume's name again for each mount (10,000 of each took 85 s): 2,000 mounts
    and volumes, the /dev/shm mount's Memory emptyDir last, read a few names each."""
    from mgpu_lint.sources import prodstack

    calls = 0
    real = prodstack.get_str

    def counted(*a):
        nonlocal calls
        calls += 1
        return real(*a)

    monkeypatch.setattr(prodstack, "get_str", counted)
    n = 2000
    mounts = "".join(f"      - {{name: v{i}, mountPath: /m{i}}}\n" for i in range(n))
    vols = "".join(f"      - {{name: v{i}, emptyDir: {{}}}}\n" for i in range(n))
    p = tmp_path / "values.yaml"
    p.write_text("servingEngineSpec:\n  modelSpec:\n  - name: a\n"
                 "    repository: vllm/vllm-openai\n    tag: v0.10.2\n"
                 "    modelURL: Qwen/Qwen2.5-7B-Instruct\n    requestGPU: 2\n"
                 "    vllmConfig:\n      extraArgs: [--tensor-parallel-size, '2']\n"
                 "    extraVolumeMounts:\n" + mounts + "      - {name: dshm, mountPath: /dev/shm}\n"
                 "    extraVolumes:\n" + vols
                 + "      - {name: dshm, emptyDir: {medium: Memory, sizeLimit: 8Gi}}\n")
    out = _lint(capsys, str(p))
    assert "MG701" not in out and "Traceback" not in out, out  # its /dev/shm is found
    assert calls < 20 * n, calls  # 4 million before


def test_production_stack_shared_env_read_again_per_entry_is_spent_from_the_words(
        capsys, tmp_path, monkeypatch):
    """servingEngineSpec.env is read again for every modelSpec entry, so each reading is spent
    from the file's words (bounds.MAX_SHELL_WORDS): past them reading stops with MG001 at the
    entry (2,000 shared entries beside 1,400 model entries: 20 s, 590 MiB before)."""
    from mgpu_lint import bounds

    monkeypatch.setattr(bounds, "MAX_SHELL_WORDS", 1000)
    env = "".join(f"    - {{name: E{i}, value: x}}\n" for i in range(100))
    specs = "".join(f"  - name: m{i}\n    modelURL: Qwen/Qwen2.5-7B-Instruct\n"
                    "    repository: vllm/vllm-openai\n" for i in range(20))
    p = tmp_path / "values.yaml"
    p.write_text("servingEngineSpec:\n  env:\n" + env + "  modelSpec:\n" + specs)
    assert len(_launches(capsys, str(p))) == 10  # 10 readings of 100 entries, then no more
    out = _lint(capsys, str(p))
    line = 104 + 3 * 10  # the 11th entry's `name:`
    assert f"values.yaml:{line}:5: MG001 [warning] reading stops here" in out, out
    assert "more than 1,000 words and env entries" in out, out
