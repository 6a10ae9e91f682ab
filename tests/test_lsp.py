"""`mgpu-lint server`: a real client drives the language server over stdio with JSON-RPC."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from mgpu_lint.lsp import PositionMap
from mgpu_lint.source import Span

from tests.conftest import ROOT

TIMEOUT = 20.0  # seconds for any one message; the first lint also imports the whole linter

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.30.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B", "--served-model-name=é🙂", "--tensor-paralel-size", "2"]
"""
SCRIPT = '#!/bin/sh\necho "é🙂" && vllm serve "Qwen/Qwen3-8B --port 8000\n'
FIXED_SCRIPT = '#!/bin/sh\necho "é🙂" && vllm serve "Qwen/Qwen3-8B" --port 8000\n'


def utf16(line: str, before: str) -> int:
    """UTF-16 column of the first ``before`` in ``line``, counted independently of the server."""
    return len(line[:line.index(before)].encode("utf-16-le")) // 2


class Client:
    """A minimal LSP client: Content-Length framing, a reader thread, a timeout on every read."""

    def __init__(self, stderr: IO[bytes]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mgpu_lint.cli", "server"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.next_id = 0
        self.capabilities: dict[str, Any] = {}
        self.errors: list[dict[str, Any]] = []  # error messages the server showed or logged
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while (header := out.readline()) not in (b"\r\n", b""):
                name, _, value = header.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if header == b"" or length is None:
                self.inbox.put(None)
                return
            self.inbox.put(json.loads(out.read(length).decode("utf-8")))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.send({"method": method, **({"params": params} if params is not None else {})})

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method,
                   **({"params": params} if params is not None else {})})
        reply = self.receive(lambda m: m.get("id") == self.next_id and "method" not in m)
        assert "error" not in reply, reply
        return reply.get("result")

    def receive(self, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The next message ``wanted`` accepts (others are dropped), within TIMEOUT seconds."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                message = self.inbox.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no answer from the server within {TIMEOUT} s") from None
            assert message is not None, "the server closed its output"
            if wanted(message):
                return message
            if message.get("method", "").startswith("window/") and (
                    message["params"].get("type") == 1):
                self.errors.append(message)

    def diagnostics(self, uri: str) -> dict[str, Any]:
        message = self.receive(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                               and m["params"]["uri"] == uri)
        return message["params"]

    def open(self, uri: str, text: str, language: str, version: int = 1) -> dict[str, Any]:
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": language, "version": version, "text": text}})
        return self.diagnostics(uri)

    def change(self, uri: str, text: str, version: int) -> dict[str, Any]:
        self.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"text": text}]})
        return self.diagnostics(uri)


@contextlib.contextmanager
def running_server(root: Path, capabilities: dict[str, Any]) -> Iterator[Client]:
    """A server past `initialize`; on leaving, `shutdown` and `exit` must end it cleanly."""
    with open(root / "server.err", "wb") as err:
        c = Client(err)
        try:
            result = c.request("initialize", {
                "processId": None, "rootUri": root.as_uri(), "capabilities": capabilities})
            assert result["serverInfo"]["name"] == "mgpu-lint"
            assert result["capabilities"]["textDocumentSync"]["openClose"] is True
            c.capabilities = result["capabilities"]
            c.notify("initialized", {})
            yield c
            assert c.request("shutdown") is None
            assert c.errors == []
            c.notify("exit")
            assert c.proc.wait(timeout=TIMEOUT) == 0
        finally:
            if c.proc.poll() is None:
                c.proc.kill()
                c.proc.wait(timeout=TIMEOUT)
    stderr = (root / "server.err").read_text(errors="replace")
    assert "Traceback" not in stderr, stderr


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    """One server for the module (it takes a second or two to start); every test its own files."""
    with running_server(tmp_path_factory.mktemp("lsp"), {}) as c:
        yield c


def test_yaml_diagnostics_with_utf16_columns(client: Client, tmp_path: Path) -> None:
    assert client.capabilities["positionEncoding"] == "utf-16"
    uri = (tmp_path / "deploy.yaml").as_uri()
    published = client.open(uri, DEPLOYMENT, "yaml")
    assert published["version"] == 1
    by_code = {d["code"]: d for d in published["diagnostics"]}
    assert set(by_code) == {"MG004", "MG702", "MG703"}
    flag = by_code["MG004"]
    line = DEPLOYMENT.splitlines()[10]
    start = utf16(line, '"--tensor-paralel-size"') + 1
    assert start == line.index('"--tensor-paralel-size"') + 2  # é is 1 unit, 🙂 is 2
    assert flag["range"] == {"start": {"line": 10, "character": start},
                             "end": {"line": 10, "character": start + len("--tensor-paralel-size")}}
    assert flag["severity"] == 1 and flag["source"] == "mgpu-lint"
    # no docs-url configured: the rule page shipped with the package, a file the editor opens
    page = flag["codeDescription"]["href"]
    assert page == (ROOT / "docs" / "rules" / "MG004.md").as_uri()
    assert flag["message"].startswith("unknown flag --tensor-paralel-size")
    probe = by_code["MG702"]
    assert probe["severity"] == 2
    assert probe["range"]["start"] == {"line": 8, "character": 16}
    assert "hint: add readinessProbe" in probe["message"]
    (related,) = probe["relatedInformation"]
    assert related["message"] == "the engine starts here"
    assert related["location"] == {"uri": uri, "range": {
        "start": {"line": 10, "character": 21}, "end": {"line": 10, "character": 25}}}


def test_shell_change_save_and_close(client: Client, tmp_path: Path) -> None:
    uri = (tmp_path / "serve.sh").as_uri()
    (quote,) = client.open(uri, SCRIPT, "shellscript")["diagnostics"]
    line = SCRIPT.splitlines()[1]
    start = utf16(line, '"Qwen')
    assert quote["code"] == "MG003"
    assert quote["range"] == {"start": {"line": 1, "character": start},
                              "end": {"line": 1, "character": start + 1}}
    fixed = client.change(uri, FIXED_SCRIPT, 2)
    assert fixed["version"] == 2
    assert [d["code"] for d in fixed["diagnostics"]] == []
    broken = client.change(uri, SCRIPT, 3)
    assert [d["code"] for d in broken["diagnostics"]] == ["MG003"]
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert [d["code"] for d in client.diagnostics(uri)["diagnostics"]] == ["MG003"]
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri)["diagnostics"] == []


def test_many_findings_publish_the_most_severe_and_a_summary(client: Client,
                                                             tmp_path: Path) -> None:
    from mgpu_lint.lsp import lint_text
    from mgpu_lint.policy import LSP_MAX_DIAGNOSTICS

    # every --port of a launch after its first is a duplicate (MG007, a warning; a launch lists
    # 99, under its own limit of bounds.MAX_FINDINGS_PER_CODE); the misspelt flag at the end of
    # the last launch is an error, past the first LSP_MAX_DIAGNOSTICS findings in position order
    ports = " ".join(f"--port {8000 + i}" for i in range(100))
    launches = LSP_MAX_DIAGNOSTICS // 99 + 2
    text = "#!/bin/sh\n" + "".join(f"vllm serve Qwen/Qwen3-8B {ports}\n"
                                   for _ in range(launches - 1)) \
        + f"vllm serve Qwen/Qwen3-8B {ports} --tensor-paralel-size 2\n"
    everything = lint_text(str(tmp_path / "many.sh"), text)  # what the command line reports
    assert len(everything) > LSP_MAX_DIAGNOSTICS + 1
    uri = (tmp_path / "many.sh").as_uri()
    published = client.open(uri, text, "shellscript")["diagnostics"]
    assert len(published) == LSP_MAX_DIAGNOSTICS + 1
    *shown, summary = published
    codes = [d["code"] for d in shown]
    assert "MG004" in codes  # the error comes first, though it is the last finding on the line
    assert codes.count("MG007") == LSP_MAX_DIAGNOSTICS - codes.count("MG004")
    starts = [(d["range"]["start"]["line"], d["range"]["start"]["character"]) for d in shown]
    assert starts == sorted(starts)  # still in position order
    more = len(everything) - LSP_MAX_DIAGNOSTICS
    assert "code" not in summary and summary["severity"] == 3
    assert summary["message"].startswith(f"{more:,} more findings in this file are not shown")
    # at the first finding left out: the duplicate --port just past the ones shown
    dropped = [m for m in everything if m.code == "MG007"][LSP_MAX_DIAGNOSTICS - 1]
    line = text.count("\n", 0, dropped.span.start)
    assert summary["range"]["start"] == {
        "line": line, "character": dropped.span.start - text.rfind("\n", 0, dropped.span.start) - 1}
    # below the cap everything is published, with no summary
    few = client.change(uri, "#!/bin/sh\nvllm serve Qwen/Qwen3-8B --port 1 --port 2\n", 2)
    assert [d["code"] for d in few["diagnostics"]] == ["MG007"]


def test_kind_by_content_language_and_unknown(client: Client, tmp_path: Path) -> None:
    script = (tmp_path / "serve").as_uri()  # no suffix: the shebang tells
    assert [d["code"] for d in client.open(script, SCRIPT, "plaintext")["diagnostics"]] == [
        "MG003"]
    untitled = "untitled:Untitled-1"  # an unsaved buffer: the editor's language id tells
    codes = {d["code"] for d in client.open(untitled, DEPLOYMENT, "yaml")["diagnostics"]}
    assert codes == {"MG004", "MG702", "MG703"}
    notes = (tmp_path / "notes.txt").as_uri()
    assert client.open(notes, 'vllm serve "x\n', "plaintext")["diagnostics"] == []
    empty = (tmp_path / "empty.yaml").as_uri()
    assert client.open(empty, "", "yaml")["diagnostics"] == []


def test_suppression_and_configuration_apply(client: Client, tmp_path: Path) -> None:
    config = tmp_path / "mgpu-lint.toml"
    config.write_text('ignore = ["MG702"\n')
    uri = (tmp_path / "deploy.yaml").as_uri()
    suppressed = DEPLOYMENT.replace('"2"]\n', '"2"]  # mgpu-lint: disable=MG004\n')
    (error,) = client.open(uri, suppressed, "yaml")["diagnostics"]
    assert error["message"].startswith("configuration error: ") and "mgpu-lint.toml" in (
        error["message"])
    assert error["severity"] == 1
    config.write_text('ignore = ["MG702", "MG703"]\n')
    client.notify("textDocument/didSave", {"textDocument": {"uri": config.as_uri()}})
    assert client.diagnostics(uri)["diagnostics"] == []


def test_client_chosen_position_encoding(tmp_path: Path) -> None:
    line = SCRIPT.splitlines()[1]
    wanted = {"utf-8": len(line[:line.index('"Qwen')].encode("utf-8")),
              "utf-32": line.index('"Qwen')}
    assert wanted["utf-8"] == wanted["utf-32"] + 4  # é is 2 bytes, 🙂 is 4
    capabilities = {"general": {"positionEncodings": ["utf-32", "utf-16"]}}
    with running_server(tmp_path, capabilities) as c:
        assert c.capabilities["positionEncoding"] == "utf-32"
        (quote,) = c.open((tmp_path / "serve.sh").as_uri(), SCRIPT, "shellscript")["diagnostics"]
        assert quote["range"]["start"] == {"line": 1, "character": wanted["utf-32"]}
    pm = PositionMap(SCRIPT, "utf-8")
    offset = SCRIPT.index('"Qwen')
    assert pm.position(offset).character == wanted["utf-8"]


def test_position_map_utf16() -> None:
    text = "é🙂x\n🙂🙂y"
    pm = PositionMap(text)
    assert pm.position(text.index("x")).character == 3
    assert pm.position(text.index("y")).character == 4
    assert pm.range(Span(len(text), len(text))).end.line == 1
    bom = "\ufeff🙂x"
    assert PositionMap(bom).range(Span(1, 2), shift=1).start.character == 3


# --------------------------------------------------------------------------- fixes, hover, debounce

FIXABLE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.30.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B", "--max-model-le", "8192", "--tensor-paralel-size", "2"]
"""


def _apply(text: str, edits: list[dict[str, Any]]) -> str:
    """Apply LSP TextEdits (UTF-16 columns) to ``text``, from the end backwards."""
    lines = text.split("\n")

    def offset(pos: dict[str, int]) -> int:
        line = lines[pos["line"]]
        units = 0
        col = 0
        while col < len(line) and units < pos["character"]:
            units += len(line[col].encode("utf-16-le")) // 2
            col += 1
        return sum(len(x) + 1 for x in lines[:pos["line"]]) + col

    spans = sorted(((offset(e["range"]["start"]), offset(e["range"]["end"]), e["newText"])
                    for e in edits), reverse=True)
    for s, e, new in spans:
        text = text[:s] + new + text[e:]
    return text


def _whole(text: str) -> dict[str, Any]:
    n = text.count("\n")
    return {"start": {"line": 0, "character": 0}, "end": {"line": n, "character": 0}}


def test_position_map_columns_on_mixed_lines_in_every_encoding() -> None:
    """Columns on ASCII lines, lines with accents, emoji (two UTF-16 units, four UTF-8 bytes)
    and CRLF line ends are the unit count of the line's prefix, in each encoding."""
    lines = ["plain ascii line", "caf\u00e9 \U0001F600 x \U0001F680y", "", "\u00e9\u00e9\r",
             "\U0001F600" * 5 + "end"]
    text = "\n".join(lines) + "\n"
    for enc, count in (("utf-16", lambda s: len(s.encode("utf-16-le")) // 2),
                       ("utf-8", lambda s: len(s.encode("utf-8"))), ("utf-32", len)):
        pm = PositionMap(text, enc)
        begin = 0
        for n, line in enumerate(lines):
            for col in range(len(line) + 1):
                pos = pm.position(begin + col)
                assert (pos.line, pos.character) == (n, count(line[:col])), (enc, n, col)
            begin += len(line) + 1


def test_code_actions_fix_disable_and_fix_all(client: Client, tmp_path: Path) -> None:
    uri = (tmp_path / "deploy.yaml").as_uri()
    diags = client.open(uri, FIXABLE, "yaml")["diagnostics"]
    by_code = {d["code"]: d for d in diags}
    assert {"MG004", "MG013"} <= set(by_code)
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": by_code["MG013"]["range"],
        "context": {"diagnostics": [by_code["MG013"]]}})
    titles = [a["title"] for a in actions]
    assert "Write --max-model-len (MG013)" in titles
    assert "Disable MG013 for this line" in titles
    fix = next(a for a in actions if a["title"] == "Write --max-model-len (MG013)")
    assert fix["kind"] == "quickfix" and fix["isPreferred"] is True
    fixed = _apply(FIXABLE, fix["edit"]["changes"][uri])
    assert '"--max-model-len", "8192"' in fixed and fixed.count("\n") == FIXABLE.count("\n")
    # the did-you-mean is offered, marked unsafe, never preferred
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": by_code["MG004"]["range"],
        "context": {"diagnostics": [by_code["MG004"]]}})
    unsafe = next(a for a in actions if "--tensor-parallel-size" in a["title"])
    assert unsafe["title"].endswith("[unsafe]") and "isPreferred" not in unsafe
    # disabling writes a suppression comment the linter honours
    disable = next(a for a in actions if a["title"] == "Disable MG004 for this line")
    suppressed = _apply(FIXABLE, disable["edit"]["changes"][uri])
    assert "          # mgpu-lint: disable=MG004\n          command:" in suppressed
    after = client.change(uri, suppressed, 2)["diagnostics"]
    assert "MG004" not in {d["code"] for d in after} and "MG012" not in {
        d["code"] for d in after}
    # fix all: every safe fix, only those
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": _whole(suppressed),
        "context": {"diagnostics": [], "only": ["source.fixAll.mgpu-lint"]}})
    (fix_all,) = actions
    assert fix_all["kind"] == "source.fixAll.mgpu-lint"
    all_fixed = _apply(suppressed, fix_all["edit"]["changes"][uri])
    assert "--max-model-len" in all_fixed and "--tensor-paralel-size" in all_fixed


FOLDED = """\
apiVersion: v1
kind: Pod
metadata:
  name: folded
spec:
  containers:
    - name: engine
      image: vllm/vllm-openai:v0.30.0
      command: ["/bin/sh", "-c"]
      args:
        - >-
          exec vllm serve Qwen/Qwen2.5-7B-Instruct
          --max-model-le 8192
          --port 8000
"""


def test_disable_inside_a_block_scalar_goes_above_the_container(client: Client,
                                                                tmp_path: Path) -> None:
    """A `#` line inside a folded `sh -c` script would be part of the script (the shell would
    then drop every flag after it): the comment goes above the container's `name:` line,
    which the suppression reads for the launch, and the YAML's values stay as they were."""
    from ruamel.yaml import YAML

    uri = (tmp_path / "folded.yaml").as_uri()
    diags = client.open(uri, FOLDED, "yaml")["diagnostics"]
    flag = next(d for d in diags if d["code"] == "MG013")
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": flag["range"],
        "context": {"diagnostics": [flag]}})
    disable = next(a for a in actions if a["title"] == "Disable MG013 for this line")
    suppressed = _apply(FOLDED, disable["edit"]["changes"][uri])
    assert "    # mgpu-lint: disable=MG013\n    - name: engine\n" in suppressed
    load = YAML(typ="safe", pure=True).load
    assert load(suppressed) == load(FOLDED)
    after = {d["code"] for d in client.change(uri, suppressed, 2)["diagnostics"]}
    assert "MG013" not in after and "MG012" not in after


def _disable_action(client: Client, uri: str, text: str, language: str, line: int
                    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The MG013 diagnostic on 0-based ``line`` and its "Disable MG013 for this line" action
    (None when none is offered)."""
    diags = client.open(uri, text, language)["diagnostics"]
    flag = next(d for d in diags if d["code"] == "MG013" and d["range"]["start"]["line"] == line)
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": flag["range"],
        "context": {"diagnostics": [flag]}})
    assert any(a["title"] == "Write --max-model-len (MG013)" for a in actions)
    return flag, next((a for a in actions if a["title"] == "Disable MG013 for this line"), None)


MULTILINE_SH = """\
#!/bin/sh
exec sh -c "echo starting
vllm serve Qwen/Qwen3-8B --max-model-le 8192"
"""
CONTINUED_SH = """\
#!/bin/sh
exec sh -c "vllm serve Qwen/Qwen3-8B \\
  --max-model-le 8192"
"""


def test_disable_is_not_offered_inside_a_multi_line_shell_string(client: Client,
                                                                  tmp_path: Path) -> None:
    """A line inside a double-quoted `sh -c` script is part of that word: a `#` line there
    would be written into the string, so no "disable" action (the fix still is); where the
    string's line is continued from the line that opens it, the comment goes above that one,
    outside the string, and the linter honours it."""
    uri = (tmp_path / "multi.sh").as_uri()
    _, disable = _disable_action(client, uri, MULTILINE_SH, "shellscript", 2)
    assert disable is None
    uri = (tmp_path / "continued.sh").as_uri()
    _, disable = _disable_action(client, uri, CONTINUED_SH, "shellscript", 2)
    assert disable is not None
    suppressed = _apply(CONTINUED_SH, disable["edit"]["changes"][uri])
    assert suppressed == CONTINUED_SH.replace(
        "exec sh -c", "# mgpu-lint: disable=MG013\nexec sh -c")
    after = {d["code"] for d in client.change(uri, suppressed, 2)["diagnostics"]}
    assert "MG013" not in after and "MG012" not in after


MARKDOWN = "# Serving\n\n```yaml\n" + FOLDED + "```\n\n```console\n" \
    "$ vllm serve Qwen/Qwen3-8B --max-model-le 8192\n```\n\n```bash\n" \
    "vllm serve Qwen/Qwen3-8B \\\n  --max-model-le 8192\n```\n"


def test_disable_inside_markdown_blocks(client: Client, tmp_path: Path) -> None:
    """In a fenced YAML block the comment goes above the container's `name:` line, as in a
    YAML file (not into the folded script); in a bash block above the continued command; in
    a console transcript no action (`# ` there is a root prompt)."""
    from ruamel.yaml import YAML

    lines = MARKDOWN.splitlines()
    folded = next(i for i, t in enumerate(lines) if "--max-model-le 8192" in t)
    console = next(i for i, t in enumerate(lines) if t.startswith("$ vllm"))
    bash = next(i for i, t in enumerate(lines) if t == "  --max-model-le 8192")
    uri = (tmp_path / "README.md").as_uri()
    _, disable = _disable_action(client, uri, MARKDOWN, "markdown", folded)
    assert disable is not None
    suppressed = _apply(MARKDOWN, disable["edit"]["changes"][uri])
    assert "```yaml\n" + FOLDED.replace(
        "    - name: engine\n", "    # mgpu-lint: disable=MG013\n    - name: engine\n") in suppressed
    block = suppressed.split("```yaml\n")[1].split("```")[0]
    load = YAML(typ="safe", pure=True).load
    assert load(block) == load(FOLDED)
    _, disable = _disable_action(client, uri, MARKDOWN, "markdown", console)
    assert disable is None
    _, disable = _disable_action(client, uri, MARKDOWN, "markdown", bash)
    assert disable is not None
    suppressed = _apply(MARKDOWN, disable["edit"]["changes"][uri])
    assert "```bash\n# mgpu-lint: disable=MG013\nvllm serve" in suppressed
    after = [d for d in client.change(uri, suppressed, 2)["diagnostics"]
             if d["code"] in ("MG013", "MG012")]
    assert [d["range"]["start"]["line"] for d in after] == [folded, console]


def _offered(text: str, uri: str, path: str) -> list[tuple[str, list[tuple[Any, str]]]]:
    """The quick fixes a codeAction over the whole of ``text`` offered before the comment
    places were indexed: each finding's fix, then its "disable" line from the reference's
    per-finding reading of the text (tests/test_lsp_places.py)."""
    from mgpu_lint.lsp import lint_text

    from tests.test_lsp_places import _ref_disable_edit

    positions = PositionMap(text)
    out = []
    for f in lint_text(path, text):
        if f.fix is not None:
            out.append((f"{f.fix.title} ({f.code})" + ("" if f.fix.safe else " [unsafe]"),
                        [(positions.json_range(e.span), e.text) for e in f.fix.edits]))
        disable = _ref_disable_edit(f)
        if disable is not None:
            out.append((f"Disable {f.code} for this line",
                        [(positions.json_range(disable[0]), disable[1])]))
    return out


def test_a_code_action_over_a_whole_document_reads_it_once(client: Client,
                                                           tmp_path: Path) -> None:
    """A codeAction from the first line to the last of a 100 KB document of launches in
    folded `sh -c` scripts (a "disable" goes above the container's `name:`) answers within
    a few seconds, with the actions offered before (each finding used to compose the YAML
    again: 35 s here, 70 s for 200 KB; a shell text was tokenised up to each finding's
    line: 200 KB 20 s)."""
    pod = FOLDED.replace("name: folded", "name: folded-{i}")
    text = "---\n".join(pod.replace("{i}", str(i)) for i in range(100_000 // len(pod)))
    script = "#!/bin/sh\n" + "".join(
        f'sh -c "echo {i}\nvllm serve Qwen/Qwen3-8B --max-model-le 8192" &\n'
        f"vllm serve Qwen/Qwen3-8B \\\n  --max-model-le {i}\n" for i in range(600))
    for name, body, language in (("pods.yaml", text, "yaml"), ("run.sh", script, "shellscript")):
        uri = (tmp_path / name).as_uri()
        client.open(uri, body, language)
        began = time.monotonic()
        actions = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": _whole(body),
            "context": {"diagnostics": [], "only": ["quickfix"]}})
        took = time.monotonic() - began
        got = [(a["title"], [(e["range"], e["newText"]) for e in a["edit"]["changes"][uri]])
               for a in actions]
        want = _offered(body, uri, str(tmp_path / name))
        assert got == want
        assert sum(t.startswith("Disable") for t, _ in got) >= 500
        assert took < 5.0, f"{name}: {took:.1f} s"


def test_a_request_waiting_for_a_lint_does_not_hold_back_the_next(client: Client,
                                                                 tmp_path: Path) -> None:
    """A codeAction on a text not linted yet (just changed, before the debounced run) waits
    for its lint on the worker; a hover on another document sent after it is answered first
    (the codeAction linted on the event loop, and every later message waited), and the
    codeAction's answer is for the changed text."""
    small = (tmp_path / "small.yaml").as_uri()
    flag = next(d for d in client.open(small, FIXABLE, "yaml")["diagnostics"]
                if d["code"] == "MG013")
    big = (tmp_path / "big.yaml").as_uri()
    client.open(big, _big("a"), "yaml")
    changed = _big("b", 1500)  # its lint takes a good part of a second
    client.notify("textDocument/didChange", {"textDocument": {"uri": big, "version": 2},
                                             "contentChanges": [{"text": changed}]})
    action, hover = client.next_id + 1, client.next_id + 2
    client.next_id += 2
    client.send({"id": action, "method": "textDocument/codeAction", "params": {
        "textDocument": {"uri": big}, "range": _whole(changed),
        "context": {"diagnostics": [], "only": ["quickfix"]}}})
    client.send({"id": hover, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": small}, "position": flag["range"]["start"]}})
    replies = [client.receive(lambda m: m.get("id") in (action, hover) and "method" not in m)
               for _ in range(2)]
    assert [r["id"] for r in replies] == [hover, action]
    assert "**MG013**" in replies[0]["result"]["contents"]["value"]
    fixes = [a for a in replies[1]["result"] if a["title"] == "Write --max-model-len (MG013)"]
    assert len(fixes) > 120  # the changed text's launches, not the 120 of the one opened


def test_a_request_whose_text_changes_during_its_lint_is_answered_empty(client: Client,
                                                                     tmp_path: Path) -> None:
    """A codeAction on a text not linted yet lints it on the worker; an edit during that lint
    stops it, as it stops a debounced run, and the codeAction is answered with nothing (it
    used to lint its outdated text to the end and answer for it, and an editor asking after
    each edit queued one whole lint per edit before the last text's); the latest text's
    diagnostics follow."""
    uri = (tmp_path / "asked.yaml").as_uri()
    client.open(uri, FIXABLE, "yaml")
    changed = _big("r", 1500)  # its lint takes a good part of a second
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": changed}]})
    client.next_id += 1
    action = client.next_id
    client.send({"id": action, "method": "textDocument/codeAction", "params": {
        "textDocument": {"uri": uri}, "range": _whole(changed),
        "context": {"diagnostics": [], "only": ["quickfix"]}}})
    latest = FIXABLE.replace("name: qwen", "name: qwen-latest")
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                             "contentChanges": [{"text": latest}]})
    reply = client.receive(lambda m: m.get("id") == action and "method" not in m)
    assert reply["result"] == []
    published = client.diagnostics(uri)
    assert published["version"] == 3
    assert {d["code"] for d in published["diagnostics"]} == {"MG004", "MG013", "MG702",
                                                              "MG703"}


def test_a_new_lint_lets_the_old_comment_places_go(tmp_path: Path) -> None:
    """The comment places kept for a document's findings (a YAML text's composed nodes) are
    dropped when another text of it is linted, not kept until the next codeAction; a lint
    served from the cache keeps them."""
    from types import SimpleNamespace

    from mgpu_lint.lsp import CommentPlaces, _lint_doc, _State

    state = _State()
    doc = SimpleNamespace(uri=(tmp_path / "d.yaml").as_uri(), source=FIXABLE, language_id="yaml")
    findings = _lint_doc(state, doc)  # type: ignore[arg-type]
    state.places[doc.uri] = (findings, CommentPlaces())
    assert _lint_doc(state, doc) is findings  # type: ignore[arg-type]
    assert doc.uri in state.places
    doc.source = FIXABLE.replace("8192", "4096")
    _lint_doc(state, doc)  # type: ignore[arg-type]
    assert doc.uri not in state.places
    state.executor.shutdown()


def test_shell_lines_inside_words_and_here_documents() -> None:
    """Where a line of a shell text starts: inside a word (quoted, `$(…)`, after an
    unbalanced quote) or a here-document body, or free."""
    from mgpu_lint.lsp import _TextPlaces
    from mgpu_lint.source import SourceFile

    def free(text: str) -> list[bool]:
        places = _TextPlaces(SourceFile("run.sh", text, "shell"))
        return [places.shell_line_free(line) for line in range(1, text.count("\n") + 1)]

    assert free("a\nb 'c\nd' e\nf\n") == [True, True, False, True]
    assert free('x "$(echo\ny)"\nz\n') == [True, False, True]
    assert free("cat <<EOF\nbody\nEOF\nafter\n") == [True, False, False, True]
    assert free("cat <<-'END' > f\n\tbody\n\tEND\nnext\n") == [True, False, False, True]
    assert free("echo 'open\nmore\nstill\n") == [True, False, False]
    assert free("a # it's a comment\nb\n") == [True, True]


def test_hover_on_a_finding_and_on_a_suppression_code(client: Client, tmp_path: Path) -> None:
    uri = (tmp_path / "hover.yaml").as_uri()
    text = FIXABLE.replace("      containers:\n",
                           "      containers:  # mgpu-lint: disable=MG702, MG703\n")
    diags = client.open(uri, text, "yaml")["diagnostics"]
    flag = next(d for d in diags if d["code"] == "MG013")
    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                  "position": flag["range"]["start"]})
    assert hover["contents"]["kind"] == "markdown"
    assert "**MG013**" in hover["contents"]["value"]
    assert "abbreviated-flag" in hover["contents"]["value"]
    line = text.splitlines()[7]
    col = line.index("MG703") + 2
    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                  "position": {"line": 7, "character": col}})
    assert "### MG703" in hover["contents"]["value"]
    assert hover["range"]["start"] == {"line": 7, "character": line.index("MG703")}
    nothing = client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                    "position": {"line": 0, "character": 2}})
    assert nothing is None


def _big(tag: str, count: int = 120) -> str:
    doc = FIXABLE.replace("name: qwen", f"name: qwen-{tag}-{{i}}")
    return "---\n".join(doc.replace("{i}", str(i)) for i in range(count))


def test_debounce_lints_the_latest_text_once(client: Client, tmp_path: Path) -> None:
    uri = (tmp_path / "typing.yaml").as_uri()
    client.open(uri, FIXABLE, "yaml")
    runs = client.request("workspace/executeCommand", {"command": "mgpu-lint.stats"})["runs"]
    for v in range(2, 12):  # ten quick edits: "--max-model-le" typed on
        client.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": v},
            "contentChanges": [{"text": FIXABLE.replace("8192", "8192"[: v % 4 + 1])}]})
    final = FIXABLE.replace("--max-model-le", "--max-model-len")
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 12},
                                             "contentChanges": [{"text": final}]})
    published = client.diagnostics(uri)
    assert published["version"] == 12
    assert "MG013" not in {d["code"] for d in published["diagnostics"]}
    after = client.request("workspace/executeCommand", {"command": "mgpu-lint.stats"})["runs"]
    assert after - runs == 1
    # the same text again: published from the last run, not linted again
    client.change(uri, final, 13)
    assert client.request("workspace/executeCommand",
                          {"command": "mgpu-lint.stats"})["runs"] == after


def test_an_edit_during_a_running_lint_ends_with_the_latest_text(client: Client,
                                                                 tmp_path: Path) -> None:
    """The stale lint may finish first on a fast machine (then it is published before the
    latest); what must hold is that the latest text's diagnostics come last."""
    from mgpu_lint.lsp import DEBOUNCE

    uri = (tmp_path / "big.yaml").as_uri()
    client.open(uri, FIXABLE, "yaml")
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": _big("a")}]})
    time.sleep(DEBOUNCE + 0.05)  # the lint of version 2 (~120 Deployments) is running
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                             "contentChanges": [{"text": FIXABLE}]})
    published = client.diagnostics(uri)
    if published["version"] == 2:  # the running lint finished before the edit arrived
        published = client.diagnostics(uri)
    assert published["version"] == 3
    assert len(published["diagnostics"]) < 10  # the small document's findings


def _events(client: Client, uri: str) -> list[list[Any]]:
    """The server's recent events of its runs of ``uri`` (`mgpu-lint.stats`)."""
    log = client.request("workspace/executeCommand", {"command": "mgpu-lint.stats"})["log"]
    return [e for e in log if e[1] == uri]


def _started(client: Client, uri: str, version: int) -> None:
    """Wait until the server's run of ``version`` of ``uri`` has started."""
    deadline = time.monotonic() + TIMEOUT
    while ["start", uri, version, 0] not in _events(client, uri):
        assert time.monotonic() < deadline, f"the lint of version {version} never started"
        time.sleep(0.005)


def test_an_edit_during_a_long_lint_abandons_the_stale_run(client: Client,
                                                          tmp_path: Path) -> None:
    """An edit while a long lint runs stops that run: it publishes nothing, and the latest
    text's run starts next.  The server's own event log (`mgpu-lint.stats`) gives the order
    and how far the stale run got; the edit is sent as soon as the log shows the stale run
    started (reading a document of 1,500 Deployments alone takes a good part of a second)."""
    uri = (tmp_path / "long.yaml").as_uri()
    client.open(uri, FIXABLE, "yaml")
    count = 1500
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": _big("c", count)}]})

    _started(client, uri, 2)
    latest = FIXABLE.replace("name: qwen", "name: qwen-latest")  # not the cached text
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                             "contentChanges": [{"text": latest}]})
    published = client.diagnostics(uri)  # the outdated text's diagnostics never come first
    assert published["version"] == 3
    assert {d["code"] for d in published["diagnostics"]} == {"MG004", "MG013", "MG702",
                                                              "MG703"}
    log = _events(client, uri)
    assert [(e[0], e[2]) for e in log] == [  # the open's run (on the worker too), then these
        ("start", 1), ("done", 1), ("start", 2), ("cancelled", 2), ("start", 3), ("done", 3)]
    checked = log[3][3]  # one check once the text is read, then one before each launch
    assert 1 <= checked < count + 1  # stopped with launches of the outdated text left


def test_an_edit_just_after_opening_a_long_document_is_not_held_behind_its_lint(
        client: Client, tmp_path: Path) -> None:
    """An open is linted on the worker as an edit is, not inline on the server's one event
    loop: an edit sent while the opened text is being linted is read at once, stops that run
    (nothing published for it) and is the one answered.  Linted inline, the open's run went
    to its end (about a second of 1,500 Deployments, longer with its directory as context)
    before the edit was even read."""
    uri = (tmp_path / "opened.yaml").as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "yaml", "version": 1, "text": _big("o", 1500)}})

    _started(client, uri, 1)
    published = client.change(uri, FIXABLE, 2)
    assert published["version"] == 2
    assert [(e[0], e[2]) for e in _events(client, uri)] == [
        ("start", 1), ("cancelled", 1), ("start", 2), ("done", 2)]


def test_a_cancelled_lint_stops_before_the_next_launch() -> None:
    """`runner.lint`'s check is asked once the text is read and before each launch: answering
    True stops the run there (LintCancelled), answering False changes nothing."""
    from mgpu_lint.lsp import lint_text
    from mgpu_lint.runner import LintCancelled

    text = _big("k", 6)
    asked: list[int] = []

    def after(n: int) -> Callable[[], bool]:
        def check() -> bool:
            asked.append(n)
            return len(asked) > n
        return check

    def key(found: list[Any]) -> list[tuple[str, int, int, str]]:
        return [(f.code, f.span.start, f.span.end, f.message) for f in found]

    plain = key(lint_text("deploy.yaml", text))
    assert len(plain) == 24 and key(lint_text("deploy.yaml", text, after(100))) == plain
    assert len(asked) == 7  # after reading, then before each of the 6 launches
    for n in (0, 1, 4):
        asked.clear()
        with pytest.raises(LintCancelled):
            lint_text("deploy.yaml", text, after(n))
        assert len(asked) == n + 1  # stopped at the first True: no launch after it analysed


# files of one launch whose run is mostly reading: one-word commands (lexed), documents of no
# launch (composed by libyaml), flow-mapped services (the pure composer: a `:` libyaml refuses
# with a tag that holds one and a `!` in a plain scalar, yamlsrc._read_refused_colons), `${A}`
# references
READ_MOSTLY = {
    "run.sh": "#!/bin/sh\nvllm serve m\n" + "a\n" * 20_000,
    "objects.yaml": "---\n".join(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n"
                                 for i in range(1_000)) + "---\n" + FIXABLE,
    "compose.yaml": "services:\n  vllm: {labels: !t:x [hi !u:v], image: vllm/vllm-openai:v0.30.0, "
                    "command: [serve, m]}\n"
                    + "".join(f"  s{i}: {{image: redis:7, ports: [80]}}\n" for i in range(2_000)),
    "refs/compose.yaml": "services:\n  s:\n    image: vllm/vllm-openai:v0.30.0\n"
                         "    command: vllm serve m" + " ${A}" * 20_000 + "\n",
}


@pytest.mark.parametrize("name", sorted(READ_MOSTLY))
def test_a_cancelled_lint_stops_while_it_reads(name: str) -> None:
    """The check is asked while the text is read too (every cancel.EVERY steps: words lexed,
    references, YAML nodes or documents composed), not only once it is read and before each
    launch: 200 KB of one-word commands is 0.8 s of reading and one launch, and an outdated
    run read on to the end while the newer text waited (four edits 0.3 s apart: the last
    one's diagnostics 2.4 s after it).  Answering False changes nothing."""
    from mgpu_lint.lsp import lint_text
    from mgpu_lint.runner import LintCancelled

    text = READ_MOSTLY[name]
    asked: list[int] = []

    def never() -> bool:
        asked.append(1)
        return False

    def key(found: list[Any]) -> list[tuple[str, int, int, str]]:
        return [(f.code, f.span.start, f.span.end, f.message) for f in found]

    assert key(lint_text(name, text, never)) == key(lint_text(name, text))
    assert len(asked) > 10  # asked while it read, not only after it and before the launch
    asked.clear()

    def third() -> bool:
        asked.append(1)
        return len(asked) >= 3

    with pytest.raises(LintCancelled):
        lint_text(name, text, third)
    assert len(asked) == 3


def test_configuration_files_are_watched_when_the_client_can(tmp_path: Path) -> None:
    """A client that registers file watchers dynamically is asked to watch every name a
    configuration can have (the server re-lints on workspace/didChangeWatchedFiles)."""
    from mgpu_lint.config import CONFIG_NAMES

    capabilities = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}
    with running_server(tmp_path, capabilities) as c:
        request = c.receive(lambda m: m.get("method") == "client/registerCapability")
        c.send({"id": request["id"], "result": None})
        (registration,) = request["params"]["registrations"]
        assert registration["method"] == "workspace/didChangeWatchedFiles"
        globs = {w["globPattern"] for w in registration["registerOptions"]["watchers"]}
        assert globs == {f"**/{name}" for name in CONFIG_NAMES}
        assert {"**/pyproject.toml", "**/mgpu-lint.toml", "**/.mgpu-lint.toml"} <= globs


def test_config_change_on_disk_is_reapplied(client: Client, tmp_path: Path) -> None:
    uri = (tmp_path / "conf.yaml").as_uri()
    codes = {d["code"] for d in client.open(uri, FIXABLE, "yaml")["diagnostics"]}
    assert "MG013" in codes
    config = tmp_path / ".mgpu-lint.toml"
    config.write_text('ignore = ["MG013"]\n')
    client.notify("workspace/didChangeWatchedFiles", {"changes": [
        {"uri": config.as_uri(), "type": 1}]})
    assert "MG013" not in {d["code"] for d in client.diagnostics(uri)["diagnostics"]}
    config.write_text('ignore = []\ndocs-url = "https://docs.example.org/mgpu/{code}.html"\n')
    client.notify("workspace/didChangeWatchedFiles", {"changes": [
        {"uri": config.as_uri(), "type": 2}]})
    diags = {d["code"]: d for d in client.diagnostics(uri)["diagnostics"]}
    assert "MG013" in diags
    # the configured docs-url is every link now: diagnostics and hover
    assert diags["MG013"]["codeDescription"]["href"] == \
        "https://docs.example.org/mgpu/MG013.html"
    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                  "position": diags["MG013"]["range"]["start"]})
    assert "(https://docs.example.org/mgpu/MG013.html)" in hover["contents"]["value"]


def test_an_edited_side_file_is_read_again_on_the_next_lint(client: Client,
                                                            tmp_path: Path) -> None:
    """Side files the server keeps from one lint to the next (lsp.SIDE_FILES) are kept by
    their state on disk: a --config edited on disk (same size, modification time put back)
    shows on the next lint of the script."""
    config = tmp_path / "c.yaml"
    config.write_text("no-such-kez: 1\n")
    uri = (tmp_path / "serve.sh").as_uri()
    text = "vllm serve m --config c.yaml\n"

    def unknown(published: dict[str, Any]) -> list[str]:
        return [d["message"].split("`")[1] for d in published["diagnostics"]
                if d["code"] == "MG004"]

    assert unknown(client.open(uri, text, "shellscript")) == ["no-such-kez"]
    st = config.stat()
    config.write_text("no-such-kex: 1\n")
    os.utime(config, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert unknown(client.change(uri, text + "\n", 2)) == ["no-such-kex"]
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    client.diagnostics(uri)
