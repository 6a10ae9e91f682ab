"""A compose service with `build:` runs the image its Dockerfile makes: the base image's
entrypoint (or the Dockerfile's ENTRYPOINT) with the service's `command:`, the Dockerfile's ENV
and `pip install` pin, on the service's GPUs.  Words from the Dockerfile are shown at the
compose file's `dockerfile:`/`context:` value; when the Dockerfile cannot be read as the build
would, nothing is claimed about what the image runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mgpu_lint.cli import main

GPUS = ("    deploy:\n      resources:\n        reservations:\n          devices:\n"
        "            - driver: nvidia\n              count: 2\n              capabilities: [gpu]\n")


def launches(capsys: pytest.CaptureFixture[str], path: Path) -> list[dict]:
    assert main(["launches", "--format", "json", str(path)]) == 0
    return json.loads(capsys.readouterr().out)["launches"]


def lint(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, list[dict]]:
    code = main(["--format", "json", str(path)])
    return code, json.loads(capsys.readouterr().out)["findings"]


def compose(tmp_path: Path, build: str, command: str = '["--model", "Qwen/Qwen2.5-7B-Instruct"]',
            extra: str = "") -> Path:
    path = tmp_path / "compose.yaml"
    path.write_text(f"services:\n  llm:\n    build: {build}\n    command: {command}\n"
                    f"{extra}{GPUS}")
    return path


def test_base_image_entrypoint_runs_the_command(tmp_path: Path, capsys) -> None:
    (tmp_path / "Dockerfile").write_text("FROM vllm/vllm-openai:v0.10.2\nENV HF_HOME=/models\n")
    (la,) = launches(capsys, compose(tmp_path, "."))
    assert (la["engine"], la["image_entrypoint"], la["version_pin"]) == ("vllm", True, "0.10.2")
    assert la["context"]["image"] == "vllm/vllm-openai:v0.10.2"
    assert la["at"] == "3:12"  # the build context: where what runs is defined
    assert [w["word"] for w in la["argv"]] == ["--model", "Qwen/Qwen2.5-7B-Instruct"]
    assert la["gpus"]["count"] == 2
    assert la["env"]["HF_HOME"] == "/models"


def test_the_prepass_keeps_a_compose_file_that_names_no_engine(tmp_path: Path, capsys) -> None:
    (tmp_path / "Dockerfile").write_text("FROM vllm/vllm-openai:v0.10.2\n")
    path = compose(tmp_path, ".", '["--model", "meta-llama/Llama-3.1-70B-Instruct", "-tp", "3"]')
    assert "vllm" not in path.read_text()
    code, findings = lint(capsys, path)
    assert code == 1 and "MG102" in {f["code"] for f in findings}


def test_dockerfile_entrypoint_of_the_target_stage(tmp_path: Path, capsys) -> None:
    (tmp_path / "serve.Dockerfile").write_text(
        "FROM python:3.12 AS base\nRUN pip install vllm==0.10.1\nENTRYPOINT [\"vllm\", \"serve\"]\n"
        "FROM base AS runtime\nENV VLLM_LOGGING_LEVEL=DEBUG\n"
        "FROM base AS debug\nENTRYPOINT [\"bash\"]\n")
    build = "\n      context: .\n      dockerfile: serve.Dockerfile\n      target: runtime"
    (la,) = launches(capsys, compose(tmp_path, build, "Qwen/Qwen2.5-7B-Instruct --port 8000",
                                     "    environment:\n      VLLM_LOGGING_LEVEL: INFO\n"))
    assert (la["entry"], la["program"], la["version_pin"]) == ("vllm serve", "vllm", "0.10.1")
    assert la["at"] == "5:19"  # the `dockerfile:` value
    assert [w["word"] for w in la["argv"]] == ["Qwen/Qwen2.5-7B-Instruct", "--port", "8000"]
    assert la["argv"][0]["at"] == "7:14"  # the service's own words keep their places
    # the service's environment is set over the image's ENV
    assert la["env"]["VLLM_LOGGING_LEVEL"] == "INFO"
    assert la["context"]["image"] == "python:3.12"


def test_from_an_alias_builds_on_its_first_stage(tmp_path: Path, capsys) -> None:
    """`FROM base` inherits from the first stage named `base` before it (stages are looked up
    by alias at once, no longer by scanning every stage before each FROM: 9.5 MiB of them took
    over 40 s); a stage does not find itself."""
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12 AS base\nRUN pip install vllm==0.10.1\nENTRYPOINT [\"vllm\", \"serve\"]\n"
        "FROM python:3.11 AS base\nENTRYPOINT [\"bash\"]\n"
        "FROM base AS base2\nENV HF_HOME=/models\n")
    (la,) = launches(capsys, compose(tmp_path, "."))
    assert (la["entry"], la["version_pin"]) == ("vllm serve", "0.10.1")
    assert la["context"]["image"] == "python:3.12"
    assert la["env"]["HF_HOME"] == "/models"


def test_last_stage_by_default(tmp_path: Path, capsys) -> None:
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12 AS base\nENTRYPOINT [\"vllm\", \"serve\"]\n"
        "FROM base AS debug\nENTRYPOINT [\"bash\"]\n")
    assert launches(capsys, compose(tmp_path, ".")) == []


def test_child_stage_cmd_keeps_the_inherited_entrypoint(tmp_path: Path, capsys) -> None:
    """A stage that sets only CMD runs its parent's ENTRYPOINT (the service's command replaces
    that CMD)."""
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12 AS base\nENTRYPOINT [\"python3\", \"-m\", "
        "\"vllm.entrypoints.openai.api_server\"]\nFROM base\nCMD [\"--help\"]\n")
    (la,) = launches(capsys, compose(tmp_path, "."))
    assert la["entry"] == "api_server"
    assert [w["word"] for w in la["argv"]] == ["--model", "Qwen/Qwen2.5-7B-Instruct"]


def test_shell_form_entrypoint_ignores_the_command(tmp_path: Path, capsys) -> None:
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12\nENTRYPOINT vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000\n")
    (la,) = launches(capsys, compose(tmp_path, ".", '["--port", "9000"]'))
    assert [w["word"] for w in la["argv"]] == ["Qwen/Qwen2.5-7B-Instruct", "--port", "8000"]
    assert {w["at"] for w in la["argv"]} == {"3:12"}


def test_dockerfile_inline(tmp_path: Path, capsys) -> None:
    build = ("\n      dockerfile_inline: |\n        FROM vllm/vllm-openai:v0.10.2\n"
             "        ENV HF_HOME=/models")
    (la,) = launches(capsys, compose(tmp_path, build))
    assert (la["version_pin"], la["at"]) == ("0.10.2", "4:26")


def test_service_entrypoint_replaces_the_images(tmp_path: Path, capsys) -> None:
    (tmp_path / "Dockerfile").write_text("FROM python:3.12\nENTRYPOINT [\"bash\"]\n")
    path = compose(tmp_path, ".", '["Qwen/Qwen2.5-7B-Instruct"]',
                   '    entrypoint: ["vllm", "serve"]\n')
    (la,) = launches(capsys, path)
    assert la["program"] == "vllm" and la["at"] == "5:19"


@pytest.mark.parametrize("build", [
    "https://github.com/example/server.git#main",  # a remote context
    "${CONTEXT}",  # a variable no .env sets
    "./nowhere",  # no Dockerfile there and no image
    "\n      context: .\n      target: missing",  # no such stage
])
def test_unknown_image_claims_nothing(tmp_path: Path, capsys, build: str) -> None:
    (tmp_path / "Dockerfile").write_text("FROM vllm/vllm-openai:v0.10.2\n")
    assert launches(capsys, compose(tmp_path, build)) == []


def test_without_the_dockerfile_the_named_image_is_used(tmp_path: Path, capsys) -> None:
    path = compose(tmp_path, "./nowhere", extra="    image: vllm/vllm-openai:v0.10.2\n")
    (la,) = launches(capsys, path)
    assert (la["version_pin"], la["context"]["image"]) == ("0.10.2", "vllm/vllm-openai:v0.10.2")


def test_a_fifo_dockerfile_is_a_finding(tmp_path: Path, capsys) -> None:
    os.mkfifo(tmp_path / "Dockerfile")
    code, findings = lint(capsys, compose(tmp_path, "."))
    (f,) = findings
    assert (code, f["code"]) == (1, "MG001")
    assert "Dockerfile" in f["path"] and "build" in f["message"]


def test_a_dockerfile_a_service_builds_is_not_nothing_checked(tmp_path: Path, capsys) -> None:
    """Named together (pre-commit names every changed file), the Dockerfile's image is checked
    through the service that builds it; named alone, it says nothing was checked there."""
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM vllm/vllm-openai:v0.10.2\n")
    path = compose(tmp_path, ".")
    main(["--format", "json", str(path), str(dockerfile)])
    report = json.loads(capsys.readouterr().out)
    assert [f["code"] for f in report["findings"]] == ["MG101"]  # 2 GPUs for tp 1, in compose
    code, findings = lint(capsys, dockerfile)
    assert (code, [f["code"] for f in findings]) == (0, ["MG017"])


def test_a_dockerfile_read_short_claims_nothing(tmp_path: Path, capsys, monkeypatch) -> None:
    """Reading the Dockerfile stops where its budget of words (linter/bounds.py) runs out, here
    in a COPY array, or past its limit of lines: its last stage is not known, so neither is
    what the image runs."""
    from mgpu_lint import bounds

    (tmp_path / "Dockerfile").write_text('FROM vllm/vllm-openai:v0.10.2\nCOPY ["a", "b", "c"]\n')
    path = compose(tmp_path, ".")
    monkeypatch.setattr(bounds, "MAX_SHELL_WORDS", 3)
    assert [la["engine"] for la in launches(capsys, path)] == ["vllm"]
    monkeypatch.setattr(bounds, "MAX_SHELL_WORDS", 2)
    assert launches(capsys, path) == []
    monkeypatch.setattr(bounds, "MAX_SHELL_WORDS", 3)
    monkeypatch.setattr(bounds, "MAX_DOCKERFILE_LINES", 1)
    assert launches(capsys, path) == []


def test_a_build_of_a_dockerfile_past_the_line_bound_says_so(tmp_path: Path, capsys,
                                                              monkeypatch) -> None:
    """Past bounds.MAX_DOCKERFILE_LINES the image's command is not known: the build gets an
    MG001 warning in the compose file (it had no launch and no finding), file or inline."""
    from mgpu_lint import bounds

    monkeypatch.setattr(bounds, "MAX_DOCKERFILE_LINES", 3)
    dockerfile = "FROM vllm/vllm-openai:v0.10.2\nENV A=1\nENV B=2\nENV C=3\n"
    (tmp_path / "Dockerfile").write_text(dockerfile)
    path = compose(tmp_path, ".")
    code, found = lint(capsys, path)
    assert [(f["code"], f["severity"], f["path"], f["range"]["start"]["line"]) for f in found] \
        == [("MG001", "warning", str(path), 3)]
    assert found[0]["message"] == (
        "the Dockerfile of compose.yaml's build is not read: it has more than 3 lines of "
        "instructions (no real one comes close), so what the image runs is not known")
    inline = tmp_path / "inline"
    inline.mkdir()
    path = compose(inline, "{dockerfile_inline: " + json.dumps(dockerfile) + "}")
    code, found = lint(capsys, path)
    assert [(f["code"], f["range"]["start"]["line"]) for f in found] == [("MG001", 3)]
    assert found[0]["message"].startswith("the inline Dockerfile of this build is not read")


def test_services_building_one_image_read_its_env_where_it_is(tmp_path: Path) -> None:
    """Each service's environment reads the image's ENV where it is (script_env.ImageVars),
    not a copy a service: 1,000 services building one image of 60,000 ENV lines (a 200 KB
    compose file beside a 1 MiB Dockerfile) took 80 s, the language server as long after
    each edit.  Here 200 services and 2,000 ENV lines: the run's peak is within 4 MB (over
    40 MB before), and each launch still sees the image's variables and its own over them."""
    import tracemalloc

    from mgpu_lint.options import Options
    from mgpu_lint.runner import lint as run_lint

    (tmp_path / "Dockerfile").write_text(
        "FROM vllm/vllm-openai:v0.10.2\n" + "".join(f"ENV A{i}=v{i}\n" for i in range(2_000)))
    path = tmp_path / "compose.yaml"
    path.write_text("services:\n" + "".join(
        f"  s{i}:\n    build: .\n    command: [\"--model\", \"Qwen/Qwen2.5-7B-Instruct\"]\n"
        f"    environment:\n      A7: own{i}\n" for i in range(200)))
    run_lint([str(path)], Options())  # imports and catalogs loaded outside the measure
    tracemalloc.start()
    try:
        run = run_lint([str(path)], Options())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    found = run.launches
    assert len(found) == 200
    assert [(la.env["A1"].value, la.env["A7"].value, len(la.env)) for la in found[:2]] == [
        ("v1", "own0", 2_000), ("v1", "own1", 2_000)]
    assert peak < 4 << 20, f"{peak / (1 << 20):.1f} MiB"
