"""Recognise engine launches in argv words, whatever file they came from.

Every source (Kubernetes, compose, shell, Dockerfile, Markdown, ``--command``) ends here with a list
of words: wrappers (``exec``, ``env``, ``sudo``, ``nohup``, ``timeout``, ``numactl``, ``taskset``,
``uv run`` …) are unwrapped, ``sh -c '…'`` scripts are parsed as shell (positions composed through
the script word's map), ``docker run``/``podman run`` bring their image's entrypoint, and the
program word decides the engine.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import Callable, Iterable, Mapping

from .. import images
from ..findings import Finding, Severity
from ..launch import (
    ENTRY_LLAMA_SERVER,
    ENTRY_RPC_SERVER,
    ENTRY_SGLANG_LAUNCH_SERVER,
    ENTRY_SGLANG_ROUTER_SERVER,
    ENTRY_SGLANG_SERVE,
    ENTRY_VLLM_API_SERVER,
    ENTRY_VLLM_DEMO,
    ENTRY_VLLM_SERVE,
    LLAMA_SERVER,
    PYTHON_PROGRAM,
    RPC_SERVER,
    SGLANG,
    SGLANG_ROUTER,
    VLLM,
    VLLM_DEMO,
    Context,
    EnvVar,
    GpuRequest,
    Launch,
    Located,
    Port,
)
from ..bounds import cut_findings
from ..script_env import ScriptEnv, frozen, with_var
from ..shell import Command, ShellProblem, split_commands
from ..source import CharMap, MapBuilder, SourceFile, Span, VarRef, Word
from ..records import dataclass, field, replace

MAX_NESTING = 8  # sh -c inside sh -c …: bounded

_SHELLS = {"sh", "bash", "dash", "zsh", "ash", "ksh"}
_API_SERVER_MODULE = "vllm.entrypoints.openai.api_server"
# sglang-router's console scripts ([console_scripts] of the 0.3.2 wheel; `amg`, its third
# name, is left out: a common word for other tools)
_ROUTER_SCRIPTS = ("sglang-router", "smg")


@dataclass(slots=True)
class Scope:
    """What surrounds a command line while it is being searched for launches."""

    source: SourceFile
    context: Context
    env: Mapping[str, EnvVar] = field(default_factory=dict)
    list_form: bool = False
    version_pin: Located | None = None
    depth: int = 0


@dataclass(slots=True)
class Found:
    launches: list[Launch] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def extend(self, other: "Found") -> None:
        self.launches.extend(other.launches)
        self.findings.extend(other.findings)


YamlHook = Callable[[str, "CharMap | None"], None]
_MANIFEST = re.compile(r"^(?:apiVersion|kind|services):", re.M)


def search_script(text: str, outer: Word | None, scope: Scope,
                  on_yaml: YamlHook | None = None) -> Found:
    """Parse a shell script and search each of its commands for launches.

    ``text`` is a whole file (``outer`` None) or the text of ``outer``, a word such as the
    script of `sh -c '…'`, whose map carries positions back to the file.  Here-documents that
    hold Kubernetes or compose YAML (`cat <<EOF | kubectl apply -f -`) go to ``on_yaml`` with
    their text and its map to the file.
    """
    found = Found()
    env = ScriptEnv(scope.env)

    composer = WordComposer(outer) if outer is not None else None

    def to_file(w: Word) -> Word:
        return w if composer is None else composer(w)

    def span_to_file(span: Span) -> Span:
        return span if outer is None else outer.cmap.span(span.start, span.end)

    # bash arrays assigned in this text: their element words keep their own positions
    arrays: dict[str, list[Word]] = {}

    def resolve(name: str) -> str | None:
        var = env.get(name)
        return var.value if var is not None else None

    # values assigned in this text, as lexed (their characters' places in ``text``)
    defined: dict[str, Word] = {}
    budget = scope.source.budget

    def kept(w: Word, value: str) -> str | None:
        """The value a variable is set to by ``w``, or None (unknown): ``w`` holds something
        unknown, or the file's scripts keep more value characters than bounds.MAX_ENV_CHARS
        (each value is kept with its change, for the launches after it)."""
        if w.unresolved:
            return None
        budget.env_chars -= len(value)
        return value if budget.env_chars >= 0 else None

    # a broken continuation's problems, until the next command says whether a launch is at stake
    pending: list[ShellProblem] = []

    def report(problems: list[ShellProblem]) -> None:
        found.findings.extend(
            Finding("MG003", Severity.ERROR, p.message, scope.source, span_to_file(p.span),
                    hint=p.hint)
            for p in problems
        )

    for cmd in split_commands(text, resolve, arrays.get, defined.get, scope.source.budget,
                              None if outer is None else outer.cmap):
        for name, elements, appended in cmd.arrays:
            # extended in place (each list is this dict's own: its readers copy the elements),
            # not copied per `a+=(x)`: 9.5 MiB of appends ran over 40 s, quadratic
            if appended and name in arrays:
                arrays[name].extend(elements)
            else:
                arrays[name] = list(elements)
            env.pop(name)
        if on_yaml is not None:
            for body in cmd.heredocs:
                body_text = text[body.start:body.end]
                if _MANIFEST.search(body_text):
                    base = CharMap.linear(body.start, len(body_text))
                    on_yaml(body_text, base if outer is None else base.compose(outer.cmap))
        cmd_words = list(cmd.words) if composer is None else composer.many(cmd.words)
        assigns = [(name, to_file(w)) for name, w in cmd.assignments]
        launch = bool(pending or cmd.problems) and _is_launch(cmd_words, scope)
        if pending and launch:
            report(pending)  # the line a broken continuation cut off runs as a launch
        pending = []
        if cmd.problems:
            if launch or (any(p.swallows for p in cmd.problems)
                          and _swallows_launch(text, cmd, scope)):
                report(cmd.problems)
            else:
                pending = cmd.problems
        if not cmd_words:
            for (name, lexed), (_, w) in zip(cmd.assignments, assigns):
                value = kept(w, w.text)
                env[name] = EnvVar(name, value, w.span)
                if value is None and not w.unresolved:
                    defined.pop(name, None)  # not kept: unknown where it is expanded
                else:
                    defined[name] = lexed
            continue
        if cmd_words[0].text in ("export", "declare", "readonly"):
            for w in cmd_words[1:]:
                if "=" in w.text and not w.text.startswith("-"):
                    name, _, value = w.text.partition("=")
                    env[name] = EnvVar(name, kept(w, value), w.sub(len(name) + 1))
            continue
        if not _may_launch(cmd_words[0]):
            for _, w in assigns:
                kept(w, w.text)  # spent as for the launches' environment below
            continue
        local = env.view({name: EnvVar(name, kept(w, w.text), w.span) for name, w in assigns})
        result = find_launches(cmd_words, Scope(scope.source, scope.context, env=local,
                                                version_pin=scope.version_pin,
                                                depth=scope.depth))
        if cmd.problems:
            # broken quoting: these words are not what the shell would run (no cascade)
            result.launches = []
        found.extend(result)
    found.findings.extend(cut_findings(scope.source))
    return found


def _is_launch(words: list[Word], scope: Scope) -> bool:
    return bool(words) and bool(find_launches(words, replace(scope, list_form=False)).launches)


def _swallows_launch(text: str, cmd: Command, scope: Scope) -> bool:
    """Whether the text an unclosed quote in ``cmd`` swallows holds an engine launch: the
    command's own line read with quotes, brackets and commas as blanks (a broken exec form
    `["vllm", serve", …]` is one), or a later line (`export A="x` then `vllm serve …`).

    MG003 is reported only where broken quoting or a broken continuation breaks an engine
    launch: the command starts one, the line a broken continuation cuts off does (search_script
    asks the next command), or the quote swallows one.  `kubectl logs "pod`, an apostrophe in
    prose or command output inside a ```bash fence hold no launch: their syntax is not the
    linter's to report.  An unclosed quote runs to the end of the text, so this reads the rest
    of the text at most once per quote character."""
    start = min([p.span.start for p in cmd.problems] + [w.span.start for w in cmd.words])
    lines = text[start:].splitlines()
    for line in [_UNQUOTE.sub(" ", lines[0]) if lines else "", *lines[1:]]:
        for inner in split_commands(line):
            if _is_launch(inner.words, scope):
                return True
    return False


_UNQUOTE = re.compile(r"[\[\]\"',]")


def _through(refs: tuple[VarRef, ...], span: Callable[[int, int], Span]) -> tuple[VarRef, ...]:
    """An inner word's own unresolved references (the outer word's text, kept as literal
    text) in the file, through the outer word's map ``span``: they belong to the inner words
    that contain them, not to every word of the script.  (VarRef's fields, built directly: a
    ``records.replace`` each cost a third of composing 40,000 `${A}`.)"""
    return tuple([VarRef(v.name, span(v.span.start, max(v.span.end, v.span.start)), v.split,
                         v.option) for v in refs])


class WordComposer:
    """Maps words lexed from ``outer.text`` to the file through ``outer``'s map
    (``composer(inner)``, or ``composer.many(words)`` for a list): the words of one script,
    one after another."""

    __slots__ = ("outer", "_index", "_lo", "_at")

    def __init__(self, outer: Word) -> None:
        self.outer = outer
        # the starts and ends of outer's references, or False when they are not in order
        self._index: tuple[list[int], list[int]] | bool | None = None
        # where the last word looked its references up: _lo is the first reference ending
        # after _at (bisect_right(ends, _at))
        self._lo = 0
        self._at = -(1 << 62)

    def __call__(self, inner: Word) -> Word:
        return self.many((inner,))[0]

    def many(self, words: Iterable[Word]) -> list[Word]:
        """Each of ``words`` in the file: its map composed through outer's, its own
        references' spans mapped through outer's map, then the outer references it meets.

        Outer's references in order (starts and ends ascending, as an interpolation or the
        lexer lists them) that meet a word are a run of them, found from where the last
        word's run began (the next word of a script meets the next references) or by
        bisection: each word of a script looked through all of them, and 4,000 unknown `${A}`
        in a compose command took over 30 s.  A word costs a few objects and no
        ``records.replace`` per reference: the 40,000 `${A}` of one compose command took
        0.17 s here, now 0.11 s (tests/test_sources_compose.py keeps the old code as the
        reference)."""
        outer = self.outer
        ocm = outer.cmap
        oquoted = outer.quoted
        refs = outer.unresolved
        span = ocm.span
        out: list[Word] = []
        append = out.append
        index = self._index
        if index is None and refs:
            index = self._index = self._in_order(refs)
        if not index:
            for w in words:
                cmap = w.cmap.compose(ocm)
                own = w.unresolved
                if not own and not refs:
                    append(Word(w.text, cmap, w.quoted or oquoted))
                    continue
                if own:
                    own = _through(own, span)
                if refs:
                    a, b = cmap.bounds()
                    own += tuple(v for v in refs if v.span.start < b and a < v.span.end)
                append(Word(w.text, cmap, w.quoted or oquoted, own))
            return out
        starts, ends = index  # type: ignore[misc]
        n = len(refs)
        lo, at = self._lo, self._at
        for w in words:
            cmap = w.cmap.compose(ocm)
            a, b = cmap.bounds()
            # lo: the first reference ending after a
            if a < at:
                lo = bisect_right(ends, a)
            elif lo < n and ends[lo] <= a:
                lo += 1
                if lo < n and ends[lo] <= a:
                    lo = bisect_right(ends, a, lo)
            at = a
            # hi: the first reference starting at or after b
            hi = lo
            if hi < n and starts[hi] < b:
                hi += 1
                if hi < n and starts[hi] < b:
                    hi = bisect_left(starts, b, hi)
            own = w.unresolved
            if own:
                own = _through(own, span) + refs[lo:hi]
            else:
                own = refs[lo:hi]
            append(Word(w.text, cmap, w.quoted or oquoted, own))
        self._lo, self._at = lo, at
        return out

    @staticmethod
    def _in_order(refs: tuple[VarRef, ...]) -> tuple[list[int], list[int]] | bool:
        """(starts, ends) of 16 references or more whose starts and ends ascend, else False."""
        if len(refs) < 16:
            return False
        starts = [v.span.start for v in refs]
        ends = [v.span.end for v in refs]
        if all(a <= b for a, b in zip(starts, starts[1:])) and \
                all(a <= b for a, b in zip(ends, ends[1:])):
            return starts, ends
        return False


def _basename(word: Word) -> str:
    # posixpath.basename's own arithmetic (the text after the last `/`), without its fspath
    # and separator calls: asked twice for each command of a script
    text = word.text.rstrip("/")
    return text[text.rfind("/") + 1:]


# Every program name _unwrap or find_launches acts on (besides PYTHON_PROGRAM): a command whose
# program is none of them holds no launch, and search_script goes on without looking further
# (a 200 KB script of one-word commands spent a third of its lint in find_launches).
# tests/test_sources_shell.py checks that each name their branches compare with is here.
_PROGRAMS = frozenset({
    # wrappers (_unwrap)
    "exec", "nohup", "time", "command", "builtin", "setsid", "caffeinate", "conda", "mamba",
    "micromamba", "env", "sudo", "timeout", "nice", "numactl", "taskset", "stdbuf", "uv",
    # programs (find_launches)
    *_SHELLS, "eval", "docker", "podman", "nerdctl", "sglang", *_ROUTER_SCRIPTS, "vllm",
    "llama-server", "rpc-server", "ggml-rpc-server", "tools.sh",
})


def _may_launch(program: Word) -> bool:
    """Whether find_launches may find a launch in a command whose first word is ``program``."""
    name = _basename(program)
    return name in _PROGRAMS or PYTHON_PROGRAM.match(name) is not None


def _unwrap(words: list[Word], scope: Scope) -> tuple[list[Word], Mapping[str, EnvVar]]:
    """Drop wrapper programs in front of the real one; collect `env X=y` assignments."""
    env = scope.env
    i = 0
    n = len(words)
    while i < n:
        name = _basename(words[i])
        if name in ("exec", "nohup", "time", "command", "builtin", "setsid", "caffeinate"):
            i += 1
            while i < n and words[i].text.startswith("-") and name in (
                    "exec", "time", "setsid"):
                # `exec -a NAME`: the name given to the program, not the program
                i += 2 if (name == "exec" and words[i].text == "-a") else 1
        elif name in ("conda", "mamba", "micromamba") and i + 1 < n and words[i + 1].text == "run":
            # `conda run -n ENV [--no-capture-output] PROGRAM …`
            i += 2
            while i < n and words[i].text.startswith("-"):
                t = words[i].text
                i += 2 if t in ("-n", "--name", "-p", "--prefix", "--cwd") else 1
        elif name == "env":
            i += 1
            while i < n:
                t = words[i].text
                if t in ("-u", "--unset", "-C", "--chdir", "-S"):
                    i += 2
                elif t.startswith("-"):
                    i += 1
                elif re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", t):
                    key, _, value = t.partition("=")
                    env = with_var(env, key, EnvVar(key, None if words[i].unresolved else value,
                                                    words[i].sub(len(key) + 1)))
                    i += 1
                else:
                    break
        elif name == "sudo":
            i += 1
            while i < n and words[i].text.startswith("-"):
                i += 2 if words[i].text in ("-u", "-g", "-C", "-D", "-h", "-p", "-U") else 1
            while i < n and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[i].text):
                key, _, value = words[i].text.partition("=")
                env = with_var(env, key, EnvVar(key, None if words[i].unresolved else value,
                                                words[i].sub(len(key) + 1)))
                i += 1
        elif name == "timeout":
            i += 1
            while i < n and words[i].text.startswith("-"):
                i += 2 if words[i].text in ("-s", "-k", "--signal", "--kill-after") else 1
            i += 1  # the duration
        elif name == "nice":
            i += 1
            while i < n and words[i].text.startswith("-"):
                i += 2 if words[i].text == "-n" else 1
        elif name == "numactl":
            i += 1
            while i < n and words[i].text.startswith("-"):
                t = words[i].text
                takes = (
                    len(t) == 2 and t[1] not in "alHs"
                ) or (t.startswith("--") and "=" not in t and t not in (
                    "--all", "--localalloc", "--hardware", "--show"))
                i += 2 if takes else 1
        elif name == "taskset":
            i += 1
            while i < n and words[i].text.startswith("-"):
                i += 1
            i += 1  # mask or cpu list
        elif name == "stdbuf":
            i += 1
            while i < n and words[i].text.startswith("-"):
                i += 1
        elif name == "uv" and i + 1 < n and words[i + 1].text == "run":
            i += 2
            valued = {"--with", "--python", "-p", "--env-file", "--project", "--directory",
                      "--group", "--extra", "--index-url", "--extra-index-url",
                      "--with-requirements",
                      "--package", "-w"}
            while i < n and words[i].text.startswith("-"):
                if words[i].text == "--":
                    i += 1
                    break
                i += 2 if words[i].text in valued else 1
        else:
            break
    return words[i:], env


def find_launches(words: list[Word], scope: Scope) -> Found:
    """Search one argv for an engine launch (recursing through `sh -c` and `docker run`)."""
    found = Found()
    if not words or scope.depth > MAX_NESTING:
        return found
    words, env = _unwrap(words, scope)
    if not words:
        return found
    if env is not scope.env:
        scope = replace(scope, env=env)
    program = words[0]
    name = _basename(program)
    if name in _SHELLS:
        return _shell_c(words, scope)
    if name == "eval":
        return _eval(words, scope)
    if name in ("docker", "podman", "nerdctl") and len(words) > 1 and words[1].text == "run":
        return _docker_run(words, scope)
    if name == "sglang":
        # the `sglang` console script (sglang.cli.main:main, entry_points.txt of the 0.5.5
        # wheel; 0.4.10.post2 has none): `serve` hands the rest to prepare_server_args
        if len(words) > 1 and words[1].text == "serve":
            found.launches.append(_make(scope, SGLANG, ENTRY_SGLANG_SERVE, program, words[2:],
                                        prefix=(words[1],)))
        return found
    if name in _ROUTER_SCRIPTS:
        # sglang-router's console scripts (sglang_router.cli:main, entry_points.txt of 0.3.2):
        # `server` runs launch_server.main with the rest; `launch` starts a router only
        if len(words) > 1 and words[1].text == "server":
            found.launches.append(_make(scope, SGLANG_ROUTER, ENTRY_SGLANG_ROUTER_SERVER, program,
                                        words[2:], prefix=(words[1],)))
        return found
    if name == "vllm":
        if len(words) > 1 and words[1].text == "serve":
            found.launches.append(_make(scope, VLLM, ENTRY_VLLM_SERVE, program, words[2:],
                                        prefix=(words[1],)))
        return found
    if PYTHON_PROGRAM.match(name):
        j = 1
        while j < len(words) and words[j].text.startswith("-") and words[j].text != "-m":
            j += 1
        if j + 1 < len(words) and words[j].text == "-m":
            module = words[j + 1].text
            if module == _API_SERVER_MODULE:
                found.launches.append(_make(scope, VLLM, ENTRY_VLLM_API_SERVER, program,
                                            words[j + 2:], prefix=tuple(words[1:j + 2])))
            elif module == ENTRY_VLLM_DEMO:
                # vLLM's demo server (vllm/entrypoints/api_server.py `__main__`, 0.6.6.post1 to
                # 0.24.0; no such module from 0.25.0): its own parser (engines/vllm_demo.py)
                found.launches.append(_make(scope, VLLM_DEMO, ENTRY_VLLM_DEMO, program,
                                            words[j + 2:], prefix=tuple(words[1:j + 2])))
            elif module == "sglang.launch_server":
                # sglang/launch_server.py: prepare_server_args(sys.argv[1:]) (0.4.10.post2, 0.5.5)
                found.launches.append(_make(scope, SGLANG, ENTRY_SGLANG_LAUNCH_SERVER, program,
                                            words[j + 2:], prefix=tuple(words[1:j + 2])))
            elif module == "sglang_router.launch_server":
                # sglang_router/launch_server.py main(): SGLang's and the router's options in
                # one parser, dp_size SGLang servers started beside the router (0.2.2, 0.3.2);
                # sglang_router.launch_router starts the router alone: no engine launch
                found.launches.append(_make(scope, SGLANG_ROUTER, ENTRY_SGLANG_ROUTER_SERVER,
                                            program, words[j + 2:],
                                            prefix=tuple(words[1:j + 2])))
            elif module == "sglang_router" and j + 2 < len(words) and \
                    words[j + 2].text == "server":
                # sglang_router/__main__.py runs cli.main (0.3.2): `server` as above
                found.launches.append(_make(scope, SGLANG_ROUTER, ENTRY_SGLANG_ROUTER_SERVER,
                                            program, words[j + 3:],
                                            prefix=tuple(words[1:j + 3])))
            elif module in ("vllm", "vllm.entrypoints.cli.main") and j + 2 < len(words) and \
                    words[j + 2].text == "serve":
                found.launches.append(_make(scope, VLLM, ENTRY_VLLM_SERVE, program,
                                            words[j + 3:], prefix=tuple(words[1:j + 3])))
        return found
    if name == "llama-server":
        found.launches.append(_make(scope, LLAMA_SERVER, ENTRY_LLAMA_SERVER, program, words[1:]))
    elif name in ("rpc-server", "ggml-rpc-server"):
        found.launches.append(_make(scope, RPC_SERVER, ENTRY_RPC_SERVER, program, words[1:]))
    elif name == "tools.sh" and len(words) > 1 and words[1].text in ("--server", "-s"):
        found.launches.append(_make(scope, LLAMA_SERVER, ENTRY_LLAMA_SERVER, program, words[2:],
                                    prefix=(words[1],)))
    return found


def launch_from_image(
    image: Located, image_word: Word, args: list[Word], scope: Scope
) -> Found:
    """An image whose entrypoint is an engine, run with ``args`` only."""
    found = Found()
    entry = images.lookup(image.value)
    if entry is None:
        return _inferred(image, image_word, args, scope)
    pin = scope.version_pin
    if pin is None and entry.version is not None:
        pin = Located(entry.version, image.span, scope.source)
    scope = replace(scope, version_pin=pin)
    if entry.engine == images.CUSTOM:
        return _custom_image(entry, image, image_word, args, scope)
    if entry.engine == VLLM:
        if entry.entry is None:
            # this release's entrypoint is not known (api_server module or `vllm serve`): the
            # flags read the same either way; what depends on the entry point is not judged
            found.launches.append(_make(scope, VLLM, ENTRY_VLLM_SERVE, image_word, args,
                                        image_entrypoint=True, entry_known=False))
            return found
        found.launches.append(_make(scope, VLLM, entry.entry, image_word, args,
                                    image_entrypoint=True))
        return found
    if entry.entry == "tools.sh":
        if args and args[0].text in ("--server", "-s"):
            found.launches.append(_make(scope, LLAMA_SERVER, ENTRY_LLAMA_SERVER, image_word,
                                        args[1:], image_entrypoint=True, prefix=(args[0],)))
        return found
    found.launches.append(_make(scope, entry.engine, entry.entry or ENTRY_LLAMA_SERVER, image_word,
                                args, image_entrypoint=True))
    return found


# What makes the arguments of an unknown image not clean for the engine its name names: a word
# the engine does not take (MG004, MG014), a value it refuses or misses (MG005, MG006), an
# abbreviation (MG013), a model it ignores (MG016).  Deprecated and repeated flags are still the
# engine's own flags.
_NOT_CLEAN = frozenset({"MG004", "MG005", "MG006", "MG013", "MG014", "MG016"})
# llama.cpp's options only its server takes (common/arg.cpp: `--host`, `--port` are
# set_examples({LLAMA_EXAMPLE_SERVER}); ngxson/llama.cpp 3f545becc): llama-cli and the other
# tools an image may run take the rest of the common options too
_LLAMA_SERVER_ONLY = frozenset({"--host", "--port"})


def _inferred(image: Located, image_word: Word, args: list[Word], scope: Scope) -> Found:
    """A launch for an image no table names, when its name names an engine and ``args`` read as
    that engine's arguments: a model is stated, every word is the engine's, and for llama.cpp a
    server option says the image runs the server.  Otherwise nothing (a custom image may run
    anything; the `[images]` table says what it runs)."""
    from ..engines import parse_launch

    engine = images.named_engine(image.value)
    if engine is None or not args or find_launches(args, scope).launches:
        return Found()
    at = Located(image.value, image.span, scope.source)
    if engine == VLLM:
        prefix: tuple[Word, ...] = ()
        if args[0].text == "serve":  # an image whose entry point is `vllm`
            prefix, args = (args[0],), args[1:]
        launch = _make(scope, VLLM, ENTRY_VLLM_SERVE, image_word, args, image_entrypoint=True,
                       entry_known=False, prefix=prefix)
    else:
        launch = _make(scope, LLAMA_SERVER, ENTRY_LLAMA_SERVER, image_word, args,
                       image_entrypoint=True)
    launch = replace(launch, inferred_from=at)
    inv, findings = parse_launch(launch)
    if inv.model is None or inv.model.span is None or \
            any(f.code in _NOT_CLEAN or f.severity is Severity.ERROR for f in findings):
        return Found()
    if engine == LLAMA_SERVER and not any(o.spelling in _LLAMA_SERVER_ONLY
                                          for o in inv.occurrences):
        return Found()
    found = Found()
    found.launches.append(launch)
    return found


def _custom_image(entry: images.ImageEntry, image: Located, image_word: Word, args: list[Word],
                  scope: Scope) -> Found:
    """An image the `[images]` table names: its entry point's words (placed at the image, where
    the entry point is chosen) are read like a command, followed by ``args``.  The launch's
    program is the image, as for the known images."""
    entry_words = [Word(w, _const_map(image.span, len(w))) for w in entry.argv]
    found = find_launches([*entry_words, *args], scope)
    synthetic = {id(w) for w in entry_words}
    found.launches = [
        replace(la, program=image_word, image_entrypoint=True,
                prefix_args=tuple(w for w in la.prefix_args if id(w) not in synthetic))
        for la in found.launches if id(la.program) in synthetic]
    return found


def _const_map(span: Span, n: int) -> CharMap:
    place = MapBuilder()
    place.const(span.start, span.end, n)
    return place.build(span.end)


def _make(
    scope: Scope,
    engine: str,
    entry: str,
    program: Word,
    args: list[Word],
    *,
    prefix: tuple[Word, ...] = (),
    image_entrypoint: bool = False,
    entry_known: bool = True,
) -> Launch:
    context = scope.context
    pin = scope.version_pin
    if pin is None and engine in (VLLM, VLLM_DEMO) and context.image is not None:
        # the image a command runs in pins the release even when the command is explicit
        image_entry = images.lookup(context.image.value)
        if image_entry is not None and image_entry.version is not None:
            pin = Located(image_entry.version, context.image.span, context.image.source)
    if context.gpus is None:
        gpus = gpus_from_visible_devices(scope.env)
        if gpus is not None:
            context = replace(context, gpus=gpus)
    return Launch(
        source=scope.source,
        engine=engine,
        entry=entry,
        program=program,
        args=tuple(args),
        env=frozen(scope.env),
        context=context,
        list_form=scope.list_form,
        version_pin=pin,
        image_entrypoint=image_entrypoint,
        prefix_args=prefix,
        entry_known=entry_known,
    )


def gpus_from_visible_devices(env: Mapping[str, EnvVar]) -> GpuRequest | None:
    """GPUs a process sees from CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES (if a list)."""
    for key in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        var = env.get(key)
        if var is not None and var.value is not None:
            ids = tuple(x for x in var.value.split(",") if x.strip())
            if var.value.strip() in ("all", ""):
                return None
            return GpuRequest(len(ids), key, var.span, device_ids=ids)
    return None


# ----------------------------------------------------------------------------- sh -c

def _shell_c(words: list[Word], scope: Scope) -> Found:
    """`sh -c SCRIPT`, `bash -lc -- SCRIPT`: the script is the first word after the options
    (bash(1): "commands are read from the first non-option argument")."""
    j = 1
    has_c = False
    while j < len(words):
        t = words[j].text
        if t == "--":
            j += 1
            break
        if t in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            j += 2
            continue
        if (t.startswith("-") or t.startswith("+")) and len(t) > 1:
            if not t.startswith("--") and "c" in t[1:]:
                has_c = True
            j += 1
            continue
        break
    if not has_c or j >= len(words):
        return Found()
    script = words[j]
    return search_script(script.text, script, replace(scope, depth=scope.depth + 1))


_GO_TEMPLATE = re.compile(r"\{\{.*?\}\}", re.S)


def _eval(words: list[Word], scope: Scope) -> Found:
    """`eval WORDS`: the words joined by spaces are run as shell again (POSIX XCU `eval`: "The
    eval utility shall construct a command by concatenating arguments together, separating
    each with a <space> character. The constructed command shall be read and executed by the
    shell."), so `eval vllm serve '"$M"' $FLAGS` is parsed, expanded and split a second time,
    each character still pointing where it was written.  Words whose expansion is unknown keep
    their `$NAME` text, which the second reading again treats as unknown."""
    args = words[1:]
    # (searched only up to the last `}}`: a `{{` after it has no end, and the regex read from
    # each such `{{` to the end of the word, quadratic)
    if not args or any(_GO_TEMPLATE.search(w.text, 0, w.text.rfind("}}") + 2) for w in args):
        # an unrendered template (KServe's LLMInferenceServiceConfig writes `eval "exec vllm
        # serve … {{ if .Spec… }} --tensor-parallel-size {{ … }}{{ end }}"`): the command
        # exists only once the operator renders it, so it is not read
        return Found()
    inner = replace(scope, depth=scope.depth + 1)
    if len(args) == 1:
        return search_script(args[0].text, args[0], inner)
    chars: list[str] = []
    places = MapBuilder()
    for k, w in enumerate(args):
        if k:
            # the separating space: placed in the gap between the two words
            gap = args[k - 1].span.end
            chars.append(" ")
            places.char(gap, max(w.span.start, gap + 1))
        chars.append(w.text)
        places.extend(w.cmap, 0, len(w.text))
    joined = Word("".join(chars), places.build(args[-1].span.end))
    return search_script(joined.text, joined, inner)


# ----------------------------------------------------------------------------- docker run

_DOCKER_VALUED = {
    "-e", "--env", "-p", "--publish", "-v", "--volume", "--name", "--gpus", "--shm-size",
    "--ipc", "--entrypoint", "--network", "--net", "-w", "--workdir", "--runtime", "--device",
    "--env-file", "--mount", "-u", "--user", "--label", "-l", "--cpus", "--memory", "-m",
    "--restart", "--platform", "--ulimit", "--security-opt", "--cap-add", "--cap-drop",
    "--add-host", "--hostname", "-h", "--log-driver", "--log-opt", "--health-cmd",
    "--health-interval", "--health-retries", "--health-timeout", "--health-start-period",
    "--pull", "--cgroupns", "--pid", "--uts", "--userns", "--group-add", "--tmpfs", "--expose",
    "--link", "--dns", "--memory-swap", "--cpuset-cpus", "--stop-signal", "--stop-timeout",
    "--storage-opt", "--sysctl", "--volumes-from", "--label-file", "--mac-address", "--ip",
    "--ip6", "--network-alias", "--oom-score-adj", "--cpu-shares", "-c", "--cidfile",
    "--annotation", "--device-cgroup-rule", "--gpus-per-node", "--hooks-dir", "--secret",
}


def parse_publish(value: str) -> tuple[str, int | None]:
    """(host ip, container port) of a `-p`/`ports:` value: '' host ip means all interfaces."""
    spec = value.split("/")[0]
    host_ip = ""
    if spec.startswith("["):
        end = spec.find("]")
        host_ip, spec = spec[1:end], spec[end + 2:]
    parts = spec.split(":")
    if len(parts) == 3:
        host_ip = parts[0]
    container = parts[-1].split("-")[0]
    return host_ip, int(container) if container.isdigit() else None


def publish_unresolved(value: str) -> bool:
    """The container port of a `-p`/`ports:` value is a variable left unexpanded."""
    return "$" in value.split("/")[0].rsplit(":", 1)[-1]


def _docker_run(words: list[Word], scope: Scope) -> Found:
    # the container's environment is only what -e gives it, not the host shell's
    env: dict[str, EnvVar] = {}
    ctx = scope.context
    gpus: GpuRequest | None = None
    entrypoint: Word | None = None
    ports: list[Port] = []
    shm: Located | None = None
    shm_bytes: int | None = None
    i = 2
    n = len(words)
    while i < n:
        w = words[i]
        t = w.text
        if not t.startswith("-") or t == "-":
            break
        if t == "--":
            i += 1
            break
        if "=" in t and t.startswith("--"):
            opt, _, value = t.partition("=")
            value_word: Word | None = sub_word(w, len(opt) + 1)
            i += 1
        elif t in _DOCKER_VALUED:
            opt = t
            value_word = words[i + 1] if i + 1 < n else None
            value = value_word.text if value_word else ""
            i += 2
        else:
            i += 1
            continue
        if value_word is None:
            continue
        if opt in ("-e", "--env"):
            key, eq, val = value.partition("=")
            env[key] = EnvVar(key, val if eq and not value_word.unresolved else None,
                              value_word.sub(len(key) + 1) if eq else value_word.span)
        elif opt == "--gpus":
            gpus = _docker_gpus(value, value_word)
        elif opt == "--entrypoint":
            entrypoint = value_word
        elif opt in ("-p", "--publish"):
            host_ip, cport = parse_publish(value)
            ports.append(Port(cport, True, host_ip, value_word.span, "docker run -p",
                              unresolved=cport is None and bool(value_word.unresolved)
                              and publish_unresolved(value)))
        elif opt == "--ipc" and value == "host":
            shm = Located("--ipc=host", value_word.span, scope.source)
        elif opt == "--shm-size":
            shm_bytes = parse_size(value)
            shm = Located(f"--shm-size={value}", value_word.span, scope.source)
    if i >= n:
        return Found()
    image_word = words[i]
    args = words[i + 1:]
    image = Located(image_word.text, image_word.span, scope.source)
    new_ctx = replace(
        ctx,
        kind=ctx.kind,
        image=image,
        gpus=gpus if gpus is not None else ctx.gpus,
        ports=tuple(ports),
        shm=shm,
        shm_size_bytes=shm_bytes,
    )
    sub = replace(scope, env=env, context=new_ctx, depth=scope.depth + 1, list_form=True)
    if entrypoint is not None:
        return find_launches([entrypoint, *args], sub)
    entry = images.lookup(image.value)
    if entry is not None:
        return launch_from_image(image, image_word, list(args), sub)
    inferred = _inferred(image, image_word, list(args), sub)
    return inferred if inferred.launches else find_launches(list(args), sub)


def sub_word(word: Word, start: int, end: int | None = None) -> Word:
    """Characters [start, end) of a word as a word of their own (same positions)."""
    end = len(word.text) if end is None else end
    cmap = word.cmap.slice(start, end)
    return Word(word.text[start:end], cmap, word.quoted, word.unresolved)


def _docker_gpus(value: str, word: Word) -> GpuRequest | None:
    v = value.strip().strip('"').strip("'")
    if v == "all":
        return GpuRequest(None, "docker --gpus all", word.span)
    if v.isdigit():
        return GpuRequest(int(v), "docker --gpus", word.span)
    m = re.search(r"device=([0-9A-Za-z,\-]+)", v)
    if m:
        ids = tuple(x for x in m.group(1).split(",") if x)
        return GpuRequest(len(ids), "docker --gpus device=", word.span, device_ids=ids)
    m = re.search(r"count=(\d+)", v)
    if m:
        return GpuRequest(int(m.group(1)), "docker --gpus count=", word.span)
    return GpuRequest(None, "docker --gpus", word.span)


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgGtTpPeE]?)(i?)([bB]?)\s*$")


def parse_size(value: str) -> int | None:
    """Bytes of a size: Kubernetes `16Gi` (binary) / `1G` (decimal); docker and compose `16g`,
    `2gb` (binary, as docker reads them)."""
    m = _SIZE.match(value)
    if not m:
        return None
    number, unit, binary_i, b = m.groups()
    power = "kmgtpe".find(unit.lower()) + 1 if unit else 0
    decimal = bool(unit) and unit.isupper() and not binary_i and not b
    return int(float(number) * (1000 if decimal else 1024) ** power)
