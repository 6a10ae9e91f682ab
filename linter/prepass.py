"""The cheap pre-pass: can this text hold a launch, or an object that links to one?

Most files of a platform repository (CustomResourceDefinitions, Helm values, CI workflows, plain
Services) hold no launch. Composing their YAML is most of what linting them would cost, so each
decoded file is first searched, as text, for what every reader needs to see before it can find
anything: an engine's name (a program, module, image or orchestrator field all spell it), an
object kind that links to launches in other files (Service, HPA, Ingress/Gateway routes, KServe
InferenceService), or a suppression comment (an unused one is reported). A file with none of them
cannot yield a finding and is not composed.

The test is a superset on purpose: a false "may matter" costs one composition, a false "cannot
matter" loses findings. ``tests/test_prepass.py`` checks it against every fixture (and the corpus
when it is beside the repository): no file that yields a finding is skipped.

A file whose every YAML document is a CustomResourceDefinition is skipped even when its schema
text names an engine: a CRD declares a type, it never runs a container.  In a file that mixes
them (an install bundle), the CRD documents are blanked before composition (``without_crds``).
"""

from __future__ import annotations

import bisect
import re

# Words every launch reader needs before it finds a launch (case-insensitive): the programs
# (`vllm`, `llama-server`, `rpc-server`, `ggml-rpc-server`, `sglang`), python modules
# (`vllm.entrypoints`, `dynamo.vllm`, `sglang.launch_server`), images (`vllm/vllm-openai`,
# `ggml-org/llama.cpp`, `lmsysorg/sglang`, `llm-d`), orchestrator engine fields (KubeAI
# `engine: VLLM` / `LlamaCPP`), `LLAMA_ARG_*` environment variables, the kinds of objects that
# link to launches in other files, and the operator kinds whose operator starts an engine the
# text need not name (a KServe LLMInferenceService runs its preset's `vllm serve`). `mgpu-lint` covers suppression comments and annotations.
_MAY_MATTER = re.compile(
    r"vllm|llama|rpc-server|sglang|dynamo|llm-?d|mgpu-lint"
    r"|kind:\s*[\"']?(?:Service|HorizontalPodAutoscaler|Ingress|Gateway|HTTPRoute|GRPCRoute"
    r"|InferenceService|ServingRuntime|ClusterServingRuntime|InferencePool|LeaderWorkerSet"
    r"|RayService|RayCluster|RayJob|RayClusterFleet|StormService|LLMInferenceService"
    r"|LLMInferenceServiceConfig|DynamoGraphDeployment|DynamoComponentDeployment)\b"
    r"|\"kind\"\s*:\s*\"(?:Service|HorizontalPodAutoscaler|Ingress|InferenceService)\"",
    re.IGNORECASE,
)
_DOC_SEPARATOR = re.compile(r"^---[ \t]*(?:#.*)?$", re.M)
_CRD_KIND = re.compile(r"^kind:[ \t]*[\"']?CustomResourceDefinition[\"']?[ \t]*(?:#.*)?$", re.M)
_CONTENT_LINE = re.compile(r"^[ \t]*[^\s#]", re.M)


def may_matter(text: str, kind: str) -> bool:
    """False only when no reader could find a launch, a linked object or a directive in ``text``."""
    if kind not in ("yaml", "markdown", "shell", "dockerfile"):
        return True
    if kind == "yaml" and "CustomResourceDefinition" in text and _only_crds(text):
        return "mgpu-lint" in text
    if _MAY_MATTER.search(text) is not None:
        return True
    # a compose service built from a Dockerfile runs what the Dockerfile says: its launch may
    # name no engine in the compose file (`build: .` with `command: [--model, …]`)
    return kind == "yaml" and _COMPOSE_BUILD.search(text) is not None and \
        _COMPOSE_ROOT.search(text) is not None


_COMPOSE_ROOT = re.compile(r"^[\"']?services[\"']?[ \t]*:", re.M)
_COMPOSE_BUILD = re.compile(r"^[ \t]+[\"']?build[\"']?[ \t]*:", re.M)
_DOC_MARKER = re.compile(r"^(?:---|\.\.\.)", re.M)
_ROOT_KIND = re.compile(r"^kind:", re.M)


def without_crds(text: str) -> str:
    """``text`` with each CustomResourceDefinition document of a multi-document file blanked
    (every character but line breaks a space, so offsets and lines stay), for composition: an
    install bundle is megabytes of CRD schemas around a few workloads, and a CRD runs no
    container.  A document is blanked only when its one root `kind:` is the CRD's and nothing in
    it could be another document or a directive (`---`, `...`, `mgpu-lint`)."""
    if "CustomResourceDefinition" not in text:
        return text
    bounds = [m.start() for m in _DOC_SEPARATOR.finditer(text)]
    if not bounds:
        return text
    starts = [0, *[text.find("\n", b) + 1 or len(text) for b in bounds]]
    ends = [*bounds, len(text)]
    parts: list[str] = []
    last = 0
    for lo, hi in zip(starts, ends):
        chunk = text[lo:hi]
        if _CRD_KIND.search(chunk) is None or len(_ROOT_KIND.findall(chunk)) != 1 or \
                _DOC_MARKER.search(chunk) is not None or "mgpu-lint" in chunk:
            continue
        parts.append(text[last:lo])
        parts.append(re.sub(r"[^\n]", " ", chunk))
        last = hi
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


def _only_crds(text: str) -> bool:
    """Every non-empty YAML document of ``text`` is a block mapping with `kind: CRD` at column 0."""
    docs = 0
    for chunk in _DOC_SEPARATOR.split(text):
        if _CONTENT_LINE.search(chunk) is None:
            continue  # empty or comments only
        if _CRD_KIND.search(chunk) is None:
            return False
        docs += 1
    return docs > 0


# An engine named where a launch would be written (MG017 fires only then): a program or module
# (`vllm`, `python -m vllm.entrypoints…`, `dynamo.vllm`, `llama-server`, `rpc-server`,
# `ggml-rpc-server`, `sglang`), an engine image (`vllm/vllm-openai`, `ggml-org/llama.cpp`,
# `lmsysorg/sglang`) or an orchestrator's engine field (KubeAI `engine: VLLM` / `LlamaCPP`).
# Not a model name that merely contains "llama" (`meta-llama/…`), not a `VLLM_*` variable alone,
# not `sglang-router` (the router's program: its engine launch is `server`, commandline.py).
_ENGINE_MENTION = re.compile(
    r"(?<![\w-])(?:vllm|llama-server|ggml-rpc-server|rpc-server|sglang(?!-router)|llama\.cpp"
    r"|llamacpp)"
    r"(?![\w])",
    re.IGNORECASE,
)


# lines that name an engine as a package or a Python module, not as something to start
# (a line is one when ``\b(?:TOOL)\b[^\n]*\b(?:install|add)\b|IMPORT`` finds a match in it:
# _not_a_launch searches the installer's word, then the verb after the first one; the one
# pattern read from every installer word to the line's end, quadratic in a line of them)
_INSTALLER = re.compile(r"\b(?:pip3?|uv|conda|mamba|micromamba|pipx|poetry|apt(?:-get)?|brew)\b")
_INSTALL = re.compile(r"\b(?:install|add)\b")
_IMPORT = re.compile(r"\b(?:from\s+vllm\S*\s+import|import\s+vllm)\b")


def installs(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` (one line) is an install command (`pip install`, `uv add`,
    `apt-get install` …)."""
    tool = _INSTALLER.search(text, start, end)
    if tool is not None:
        stop = text.find("\n", tool.end(), end)
        return _INSTALL.search(text, tool.end(), end if stop < 0 else stop) is not None
    return False


def _not_a_launch(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` (one line) installs or imports an engine."""
    return installs(text, start, end) or _IMPORT.search(text, start, end) is not None


def engine_mention(text: str, kind: str) -> tuple[int, int] | None:
    """Where ``text`` first names an engine outside a comment line, an install command, a
    Python import or the words of a command that only prints or searches them (``echo``,
    ``grep``, a here-document given to ``cat``: _DATA_COMMANDS) (in Markdown: inside a fenced
    block the Markdown reader reads, since prose that names vLLM is no attempt at a launch);
    None when it does not."""
    if kind == "markdown":
        from .sources.markdown import fenced_bodies  # the Markdown reader, for .md files only

        for start, body in fenced_bodies(text, read_only=True):
            hit = _first_mention(body)
            if hit is not None:
                return start + hit[0], start + hit[1]
        return None
    return _first_mention(text)


# SGLang's router started alone, in front of workers started elsewhere: the file is understood
# and holds no engine launch (`python -m sglang_router.launch_router`, and `launch` of the
# console scripts and `python -m sglang_router`: sglang_router/cli.py, 0.3.2)
_ROUTER_ONLY = re.compile(
    r"\bsglang_router\.launch_router\b"
    r"|(?:\bsglang-router|\bsmg|-m[\"',\s]+sglang_router)[\"',\s]+launch\b")


def names_engine(text: str) -> bool:
    """Whether ``text`` names an engine where a launch would be written (``engine_mention``
    for text that is not Markdown)."""
    return _first_mention(text) is not None


def _first_mention(text: str) -> tuple[int, int] | None:
    if _ROUTER_ONLY.search(text):
        return None
    pos = 0
    heredocs: list[tuple[int, int, bool]] | None = None
    line_start = line_end = -1  # the line read last (its comment mark and installs checked)
    while (m := _ENGINE_MENTION.search(text, pos)) is not None:
        resumed = pos
        # a line skipped is skipped for each mention in it (its comment mark, its install
        # command): the next mention is looked for on the next line, each line read once; a
        # mention in a command that only prints or searches its words resumes after that
        # command, on the same line (which is not read again)
        if m.start() > line_end:
            line_start = text.rfind("\n", 0, m.start()) + 1
            line_end = text.find("\n", m.end())
            line_end = len(text) if line_end < 0 else line_end
            pos = line_end + 1
            if text[line_start:m.start()].lstrip().startswith(("#", "//")):
                continue  # a comment line
            if _not_a_launch(text, line_start, line_end):
                continue
        pos = line_end + 1
        if heredocs is None:
            heredocs = _heredocs(text) if "<<" in text else []
        i = bisect.bisect_right(heredocs, (m.start(), len(text) + 1)) - 1
        if i >= 0 and heredocs[i][0] <= m.start() < heredocs[i][1]:
            if heredocs[i][2]:
                pos = heredocs[i][1]  # the text of a here-document that is only printed
                continue
            return m.start(), m.end()
        data_end = _data_words_end(text, _command_start(text, m.start(), max(line_start, resumed)),
                                   m.start(), line_end)
        if data_end is not None:
            pos = data_end  # the words of a command that only prints, searches or logs them
            continue
        return m.start(), m.end()
    return None


# Commands whose arguments are data, never a program they start: the words after them name an
# engine only as text to print (echo, printf, logger), to search for (grep, pgrep, pkill …), a
# file or directory to read or change (cat, tail, cd, ls, rm …), a program looked up
# (command -v, which) or a URL (curl, wget). `vllm` among them is no attempt at a launch.
_DATA_COMMANDS = frozenset((
    "echo", "printf", "logger", "grep", "egrep", "fgrep", "rg", "pgrep", "pkill", "pidof",
    "killall", "cat", "tail", "head", "less", "more", "cd", "ls", "mkdir", "rm", "cp", "mv",
    "ln", "touch", "chmod", "chown", "test", "command", "which", "type", "curl",
    "wget",
))
# a pipe into one of these runs the printed words (`echo "vllm serve m" | sh`) or writes them
# to a file, perhaps a script run later (tee, as a redirection `> start.sh` does)
_RUNNERS = frozenset(("tee", "sh", "bash", "zsh", "dash", "ksh", "xargs", "parallel", "ssh",
                      "source", ".", "eval", "env", "sudo", "su", "nohup", "exec"))
# where one shell command ends and the next begins (a `;` inside quotes ends nothing: such a
# split only keeps a mention, never hides one)
_COMMAND_BREAK = re.compile(r"\$\(|[;&|()`{}]")
# a command's name after what may come before it: blanks, a YAML list's dash, quotes and
# brackets of a JSON list, `!`, a shell keyword or Dockerfile RUN, a `$ ` prompt, variable
# assignments (each alternative begins differently: no backtracking between them)
_LEADING = re.compile(r"(?:[\s\[\]\-\"',!(]|(?:RUN|if|then|do|else|elif|while|until|time)\b"
                      r"|\$(?=\s)|\w+=\S*\s)*([\w./-]+)")
_REDIRECT = re.compile(r"(?<![<&\d])>>?\s*(?!&|/dev/null\b)[^\s;&|)]")


def _command_start(text: str, at: int, floor: int) -> int:
    """Where the shell command holding ``at`` begins (after the last break from ``floor``, the
    start of its line or the end of the command read before it)."""
    last = floor
    for b in _COMMAND_BREAK.finditer(text, floor, at):
        last = b.end()
    return last


def _data_words_end(text: str, start: int, at: int, line_end: int) -> int | None:
    """Where the command that begins at ``start`` ends, when its name is one of
    _DATA_COMMANDS and what it prints goes nowhere that runs it (no pipe into a shell or
    xargs, no redirection into a file); None when the mention at ``at`` may be a launch."""
    m = _LEADING.match(text, start, at)
    if m is None or m.end(1) > at:
        return None
    name = m.group(1).rsplit("/", 1)[-1]
    if name not in _DATA_COMMANDS:
        return None
    brk = _COMMAND_BREAK.search(text, at, line_end)
    end = line_end if brk is None else brk.start()
    if _REDIRECT.search(text, start, end) is not None:
        return None  # the words are written to a file: perhaps a script run later
    if brk is not None and text[brk.start()] == "|" and text[brk.end():brk.end() + 1] != "|":
        nxt = _LEADING.match(text, brk.end(), line_end)
        if nxt is None or nxt.group(1).rsplit("/", 1)[-1] in _RUNNERS:
            return None
    return end


_HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_]\w*)\1")


def _heredocs(text: str) -> list[tuple[int, int, bool]]:
    """Each here-document's body (start, end) and whether it is only printed: given to one of
    _DATA_COMMANDS (`cat <<EOF`) with its output going to no file and no shell."""
    found: list[tuple[int, int, bool]] = []
    pos = 0
    while (h := _HEREDOC.search(text, pos)) is not None:
        line_start = text.rfind("\n", 0, h.start()) + 1
        line_end = text.find("\n", h.end())
        if line_end < 0:
            break
        body_end = line_end + 1
        delim = h.group(2)
        while body_end < len(text):
            nl = text.find("\n", body_end)
            stop = len(text) if nl < 0 else nl
            if text[body_end:stop].strip() == delim:
                break
            body_end = stop + 1
        start = _command_start(text, h.start(), max(line_start, pos))
        printed = _data_words_end(text, start, h.start(), line_end) is not None
        found.append((line_end + 1, min(body_end, len(text)), printed))
        pos = max(body_end, h.end())
    return found
