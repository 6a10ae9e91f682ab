"""The language server lints a document with the files of its directory as context (DECISIONS
"The file set"): a Service or HPA beside it links to its launches as on the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_lsp import Client, running_server

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen
spec:
  replicas: 1
  template:
    metadata:
      labels: {app: qwen}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.30.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B", "--host", "127.0.0.1", "--port", "8000"]
          resources:
            limits: {nvidia.com/gpu: 1}
"""
SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: qwen
spec:
  selector: {app: qwen}
  ports:
    - port: 80
      targetPort: 8000
"""
HPA = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: qwen
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: qwen}
  minReplicas: 1
  maxReplicas: 4
  metrics:
    - type: Pods
      pods:
        metric: {name: DCGM_FI_DEV_GPU_UTIL}
        target: {type: AverageValue, averageValue: "80"}
"""
# a sibling with a finding of its own (an unknown flag), which is not the document's
OTHER = DEPLOY.replace("qwen", "other").replace('"--port", "8000"', '"--bogus-flag", "1"')


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    with running_server(tmp_path_factory.mktemp("lsp-context"), {}) as c:
        yield c


def cli(folder: Path) -> dict[str, list[tuple[str, int, int, int, int]]]:
    """The command line's findings for each file when it lints ``folder``: code and range
    (0-based lines, 0-based columns: the texts here are ASCII, where code points and UTF-16
    units agree)."""
    out = subprocess.run([sys.executable, "-m", "mgpu_lint.cli", "--format", "json",
                          "--exit-zero", str(folder)], capture_output=True, text=True,
                         check=True, cwd=folder).stdout
    found: dict[str, list[tuple[str, int, int, int, int]]] = {}
    for f in json.loads(out)["findings"]:
        r = f["range"]
        found.setdefault(os.path.basename(f["path"]), []).append(
            (f["code"], r["start"]["line"] - 1, r["start"]["column"] - 1,
             r["end"]["line"] - 1, r["end"]["column"] - 1))
    return {k: sorted(v) for k, v in found.items()}


def published(params: dict[str, Any]) -> list[tuple[str, int, int, int, int]]:
    return sorted((d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"],
                   d["range"]["end"]["line"], d["range"]["end"]["character"])
                  for d in params["diagnostics"] if "code" in d)


def codes(params: dict[str, Any]) -> set[str]:
    return {d["code"] for d in params["diagnostics"] if "code" in d}


def write(folder: Path, files: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)


def test_a_document_gets_the_findings_of_a_directory_run(client: Client,
                                                         tmp_path: Path) -> None:
    """The Service beside the Deployment makes its loopback bind a finding there (MG606), the
    HPA beside it one in the HPA's file (MG704, at its metric); each document gets what the
    command line reports for it when it lints the directory, and no sibling's findings (the
    HPA's MG704 and the other Deployment's unknown flag are not deploy.yaml's)."""
    folder = tmp_path / "app"
    write(folder, {"deploy.yaml": DEPLOY, "service.yaml": SERVICE, "hpa.yaml": HPA,
                   "other.yaml": OTHER})
    want = cli(folder)
    assert "MG606" in {c for c, *_ in want["deploy.yaml"]}
    assert "MG704" in {c for c, *_ in want["hpa.yaml"]}
    assert "MG004" in {c for c, *_ in want["other.yaml"]}
    for name, text in (("deploy.yaml", DEPLOY), ("hpa.yaml", HPA), ("service.yaml", SERVICE)):
        got = client.open((folder / name).as_uri(), text, "yaml")
        assert published(got) == want.get(name, []), name
    # alone in its directory, the same Deployment has no Service: no MG606
    alone = tmp_path / "alone"
    write(alone, {"deploy.yaml": DEPLOY})
    assert "MG606" not in {c for c, *_ in cli(alone).get("deploy.yaml", [])}
    assert "MG606" not in codes(client.open((alone / "deploy.yaml").as_uri(), DEPLOY, "yaml"))


def test_the_unsaved_text_is_linted_with_the_files_on_disk(client: Client,
                                                           tmp_path: Path) -> None:
    """The editor's text of the document wins over its file on disk (bound to every interface
    there), and the siblings are read from disk: an edit of the document is linted against
    them, an edit of a sibling on disk is seen at the next lint of the document."""
    folder = tmp_path / "app"
    write(folder, {"deploy.yaml": DEPLOY.replace("127.0.0.1", "0.0.0.0"),
                   "service.yaml": SERVICE})
    uri = (folder / "deploy.yaml").as_uri()
    assert "MG606" in codes(client.open(uri, DEPLOY, "yaml"))
    assert "MG606" not in codes(client.change(uri, DEPLOY.replace("127.0.0.1", "0.0.0.0"), 2))
    assert "MG606" in codes(client.change(uri, DEPLOY, 3))
    # the Service now selects other pods: the next lint no longer links it
    (folder / "service.yaml").write_text(SERVICE.replace("{app: qwen}", "{app: elsewhere}"))
    assert "MG606" not in codes(client.change(uri, DEPLOY + "# edited\n", 4))
    # a save of the document (its text unchanged) lints it again once the Service changed
    (folder / "service.yaml").write_text(SERVICE)
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert "MG606" in codes(client.diagnostics(uri))


def test_a_saved_sibling_lints_the_open_documents_beside_it_again(client: Client,
                                                                  tmp_path: Path) -> None:
    folder = tmp_path / "app"
    write(folder, {"deploy.yaml": DEPLOY, "service.yaml": SERVICE})
    deploy, service = (folder / "deploy.yaml").as_uri(), (folder / "service.yaml").as_uri()
    assert "MG606" in codes(client.open(deploy, DEPLOY, "yaml"))
    client.open(service, SERVICE, "yaml")
    moved = SERVICE.replace("{app: qwen}", "{app: elsewhere}")
    (folder / "service.yaml").write_text(moved)
    client.change(service, moved, 2)
    client.notify("textDocument/didSave", {"textDocument": {"uri": service}})
    assert "MG606" not in codes(client.diagnostics(deploy))


def test_a_directory_over_the_bound_still_answers(client: Client, tmp_path: Path) -> None:
    """A directory of more files than a context holds (context.MAX_CONTEXT_FILES, in name
    order): the document is linted, with the siblings within the bound as context."""
    from mgpu_lint.context import MAX_CONTEXT_FILES

    folder = tmp_path / "many"
    files = {f"a{i:04}.yaml": SERVICE.replace("name: qwen", f"name: s{i}").replace(
        "{app: qwen}", f"{{app: s{i}}}") for i in range(MAX_CONTEXT_FILES + 50)}
    files["b-service.yaml"] = SERVICE  # past the bound: not read
    write(folder, files)
    got = client.open((folder / "deploy.yaml").as_uri(), DEPLOY, "yaml")
    assert "MG606" not in codes(got) and "MG004" not in codes(got)
    assert "MG606" in codes(client.change((folder / "deploy.yaml").as_uri(),
                                          DEPLOY.replace("{app: qwen}", "{app: s3}"), 2))


def test_a_lint_stops_while_the_files_beside_it_are_read(tmp_path: Path) -> None:
    """The ``cancelled`` check is asked while the siblings are read: a run cancelled at its
    first question stops within a sibling or two (a run of the same directory asks once a
    sibling at least), and the next lint reads the rest and links them."""
    from mgpu_lint.cancel import LintCancelled
    from mgpu_lint.lsp import lint_text

    folder = tmp_path / "app"
    files = {f"s{i:03}.yaml": SERVICE.replace("name: qwen", f"name: s{i}")
             for i in range(60)}
    write(folder, files)
    asked = [0]

    def count() -> bool:
        asked[0] += 1
        return False

    def first() -> bool:
        asked[0] += 1
        return True

    path = str(folder / "deploy.yaml")
    with pytest.raises(LintCancelled):
        lint_text(path, DEPLOY, first)
    assert asked[0] == 1
    asked[0] = 0
    assert "MG606" in {f.code for f in lint_text(path, DEPLOY, count)}
    assert asked[0] >= 60


def test_kept_siblings_are_read_again_when_they_change(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Siblings kept from one lint to the next (their reading kept at once here: no racy
    window) are read again when they change on disk, and a file added beside them is read."""
    from mgpu_lint import safeio
    from mgpu_lint.lsp import lint_text

    monkeypatch.setattr(safeio, "RACY_NS", -10**12)
    folder = tmp_path / "app"
    write(folder, {"service.yaml": SERVICE})
    path = str(folder / "deploy.yaml")
    for _ in range(2):
        assert "MG606" in {f.code for f in lint_text(path, DEPLOY)}
    (folder / "service.yaml").write_text(SERVICE.replace("{app: qwen}", "{app: elsewhere!}"))
    assert "MG606" not in {f.code for f in lint_text(path, DEPLOY)}
    (folder / "b.yaml").write_text(SERVICE.replace("name: qwen", "name: b"))
    assert "MG606" in {f.code for f in lint_text(path, DEPLOY)}


def test_a_sibling_reading_the_document_is_read_again_when_it_is_saved(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Dockerfile beside the script it starts: the script's launch runs in its image (a
    container's 64 MB /dev/shm, MG701 for tp 2), as `mgpu-lint DIR` reads it, once the script
    on disk is the document's text; the Dockerfile's kept reading went through the script, so
    a save of the script reads it again."""
    from mgpu_lint import safeio
    from mgpu_lint.lsp import lint_text

    monkeypatch.setattr(safeio, "RACY_NS", -10**12)
    folder = tmp_path / "image"
    script = "#!/bin/sh\nvllm serve Qwen/Qwen3-8B --tensor-parallel-size {}\n"
    write(folder, {"Dockerfile": "FROM vllm/vllm-openai:v0.30.0\nCOPY start.sh /start.sh\n"
                                 'ENTRYPOINT ["/start.sh"]\n',
                   "start.sh": script.format(1)})
    path = str(folder / "start.sh")
    assert "MG701" not in {f.code for f in lint_text(path, script.format(1))}
    (folder / "start.sh").write_text(script.format(2))
    want = cli(folder)["start.sh"]
    assert "MG701" in {c for c, *_ in want}
    got = lint_text(path, script.format(2))
    assert sorted((f.code, *(n - 1 for n in f.source.line_col(f.span.start))) for f in got) \
        == [(c, line, col) for c, line, col, _, _ in want]


def test_a_saved_document_sees_a_sibling_changed_after_it_was_kept(client: Client,
                                                                   tmp_path: Path) -> None:
    """Past the racy window (safeio.RACY_NS) the siblings' readings and the document's
    findings are kept; a sibling changed on disk after that is still seen at the next lint."""
    import time

    folder = tmp_path / "app"
    write(folder, {"deploy.yaml": DEPLOY, "service.yaml": SERVICE})
    time.sleep(2.1)
    uri = (folder / "deploy.yaml").as_uri()
    assert "MG606" in codes(client.open(uri, DEPLOY, "yaml"))
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert "MG606" in codes(client.diagnostics(uri))
    (folder / "service.yaml").write_text(SERVICE.replace("{app: qwen}", "{app: elsewhere}"))
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert "MG606" not in codes(client.diagnostics(uri))
