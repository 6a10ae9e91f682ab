"""An image no table names is read as the engine its name names only when its arguments read
cleanly as that engine's (commandline._inferred, MG018); otherwise it is not a launch."""

from __future__ import annotations

from mgpu_lint.options import Options
from mgpu_lint.runner import RunResult, lint

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: x}}
spec:
  template:
    spec:
      containers:
        - name: c
          image: {image}
          args: {args}
          resources: {{limits: {{nvidia.com/gpu: 2}}}}
"""


def _run(image: str, args: str) -> RunResult:
    return lint(["-"], Options(), stdin_text=DEPLOYMENT.format(image=image, args=args),
                stdin_filename="deploy.yaml")


def test_a_named_image_with_clean_arguments_is_checked_as_its_engine() -> None:
    result = _run("registry.corp/llm/vllm-cuda12:2.1",
                  '["--model", "Qwen/Qwen2.5-7B-Instruct", "-tp", "4"]')
    codes = [f.code for f in result.findings]
    assert "MG018" in codes
    # checked as vLLM: tp 4 on 2 GPUs is the layout rule's finding
    assert "MG101" in codes
    mg018 = next(f for f in result.findings if f.code == "MG018")
    text = mg018.source.text
    assert text[mg018.span.start:mg018.span.end] == "registry.corp/llm/vllm-cuda12:2.1"


def test_not_inferred() -> None:
    cases = [
        ("myorg/vllm:1", '["--model", "m/m", "--wrapper-only", "2"]'),  # a flag vLLM lacks
        ("myorg/vllm:1", '["--port", "8000"]'),  # no model
        ("myorg/vllm:1", '["--model", "m/m", "--tensor-par", "2"]'),  # an abbreviation
        ("myorg/vllm:1", '["--model", "m/m", "-tp", "two"]'),  # a value vLLM refuses
        ("vllm-project/server:1", '["--model", "m/m"]'),  # only the organisation names it
        ("ghcr.io/ggml-org/llama.cpp:light", '["-m", "/m.gguf", "--port", "8080"]'),  # llama-cli
        ("me/llamacpp:1", '["-m", "/m.gguf", "-ngl", "99"]'),  # nothing says it is the server
        ("me/server:1", '["--model", "m/m", "-tp", "2"]'),  # the name names no engine
    ]
    for image, args in cases:
        result = _run(image, args)
        # at most MG017: the file names an engine and no launch was understood
        codes = {f.code for f in result.findings}
        assert not result.launches and codes <= {"MG017"}, (image, args, result.findings)


def test_a_table_entry_outranks_the_name() -> None:
    from mgpu_lint.images import custom_images

    with custom_images({"myorg/vllm": "vllm serve"}):
        result = _run("myorg/vllm:1", '["m/m", "-tp", "2"]')
    assert len(result.launches) == 1
    assert "MG018" not in [f.code for f in result.findings]


PVC_POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  containers:
    - name: c
      image: {image}
      {command}
      args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
      resources: {{limits: {{nvidia.com/gpu: 1}}}}
      volumeMounts: [{{name: cache, mountPath: /home/app/.cache}}]
  volumes: [{{name: cache, persistentVolumeClaim: {{claimName: hf}}}}]
"""


def _mg703(image: str, command: str = "") -> list:  # type: ignore[type-arg]
    result = lint(["-"], Options(), stdin_text=PVC_POD.format(image=image, command=command),
                  stdin_filename="pod.yaml")
    return [f for f in result.findings if f.code == "MG703"]


def test_the_download_cache_of_an_image_whose_user_is_unknown() -> None:
    # vllm/vllm-openai runs as root: a volume at /home/app/.cache does not hold /root/.cache
    known = _mg703("vllm/vllm-openai:v0.9.2")
    assert len(known) == 1 and "/root/.cache/huggingface/hub" in known[0].message
    # an inferred image, or any image a command names, runs as whoever it was built for: the
    # persistent volume may be its cache
    assert _mg703("myorg/vllm-cuda:1") == []
    assert _mg703("python:3.11", 'command: ["vllm", "serve"]') == []


def test_a_registry_mirror_of_a_known_image_is_that_image() -> None:
    from mgpu_lint import images

    # another registry host (Docker's splitDockerDomain: a first component with `.` or `:`,
    # or `localhost`) serving the same path, possibly under a project prefix
    for ref in ("registry.example.com/vllm/vllm-openai:v0.8.5",
                "localhost/dockerhub/vllm/vllm-openai:v0.8.5",
                "harbor.corp:5000/proxy/vllm/vllm-openai:v0.8.5"):
        entry = images.lookup(ref)
        assert entry is not None and (entry.engine, entry.version) == ("vllm", "0.8.5"), ref
    # a fork under its own name, or a path that only ends like it without a registry host
    for ref in ("aibrix/vllm-openai:v0.8.5", "registry.example.com/aibrix/vllm-openai:v0.8.5",
                "team/vllm/vllm-openai:v0.8.5"):
        assert images.lookup(ref) is None, ref
