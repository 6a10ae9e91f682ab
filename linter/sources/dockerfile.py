"""Dockerfiles: the final stage's ENTRYPOINT + CMD, with the base image's entrypoint.

Exec form (a JSON array) gives list-form words; shell form runs through ``/bin/sh -c``.  A line
ending in the escape character continues the instruction; comment lines inside it are dropped, as
BuildKit does.  ``RUN pip install vllm==X`` pins the release for the launch.  An exec-form
ENTRYPOINT without CMD gets its arguments at ``docker run`` time: they are an unknown-words
marker at the closing bracket (never "no model given"); a shell-form one takes none.

An ENTRYPOINT or CMD that runs a script (`["/app/start.sh"]`, `bash /app/start.sh`) which a
`COPY`/`ADD` of the stage put there from the build context is followed when that file is in the
linted tree (beside the Dockerfile, else under the current directory): the script is read
through linter/safeio.py and its launches run in the image (the stage's ENV and release pin;
positions are the script's, values from the Dockerfile keep no position there).  The runner
moves such launches to the script's own file result (``FileResult`` of that path).
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import Iterator

from ..findings import Finding, Severity
from ..launch import Context, EnvVar, Located
from ..safeio import PartlyRead, SideFileError, is_regular_file, memo, read_text, side_finding
from .. import bounds
from ..bounds import ReadBudget
from ..cancel import step as cancel_step
from ..source import CharMap, MapBuilder, SourceFile, Span, Word, unknown_words
from .commandline import Found, Scope, find_launches, launch_from_image, search_script
from ..records import dataclass, field, replace

_INSTR = re.compile(r"^\s*([A-Za-z]+)(\s+|$)")
_ESCAPE_DIRECTIVE = re.compile(r"^#\s*escape\s*=\s*([\\`])\s*$", re.I)
_JSON_PLAIN = re.compile(r'[^"\\]+')  # a JSON string's characters up to a quote or an escape
_JSON_ESC = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class _Instruction:
    """One instruction: its name, its arguments after the instruction word (continuation lines
    joined) and their map to the file.  The map of an instruction written over several lines is
    made when it is first asked for: most are RUNs, whose map only a `pip install` pin needs,
    and one RUN of 1.9 million continuation lines (9.5 MiB) has two runs a line."""

    __slots__ = ("name", "text", "words", "_cmap", "_file", "_start", "_escape", "_arg_start")

    def __init__(self, name: str, text: str, cmap: CharMap | None, file: str = "",
                 start: int = 0, escape: str = "\\", arg_start: int = 0) -> None:
        self.name = name
        self.text = text
        # an ENTRYPOINT's, CMD's, COPY's or ADD's exec-form words (None: shell form), read once
        # by _stages in the order of the file, so they spend the file's budget of words there
        self.words: list[Word] | None = None
        self._cmap = cmap
        # where the instruction's first line starts in ``file``, to map it again (cmap)
        self._file, self._start, self._escape, self._arg_start = file, start, escape, arg_start

    @property
    def cmap(self) -> CharMap:
        if self._cmap is None:
            places = MapBuilder()  # each character of the logical line: one file character
            logical, _ = _logical_line(self._file, self._start, self._escape, places)
            full = places.build(0)
            n = len(logical)
            self._cmap = full.slice(self._arg_start, n, tail=full.end(n - 1))
        return self._cmap


@dataclass(slots=True)
class _Stage:
    """A build stage.  Its ENV and COPY/ADD are its own; those of the stages it is built from
    are theirs (``environment``, ``all_copies``): each stage holding a copy of what it inherits
    was quadratic along a chain of stages (9.5 MiB of `ENV Ai=1 / FROM s(i-1) AS si` ran past
    120 s into 24 GiB)."""

    image: Word | None = None
    alias: str | None = None
    entrypoint: _Instruction | None = None
    cmd: _Instruction | None = None
    env: dict[str, EnvVar] = field(default_factory=dict)
    pin: Located | None = None
    inherited: "_Stage | None" = None
    workdir: str | None = "/"  # None: not known (_in_image)
    # (working directory, destination, source path in the build context, destination is a
    # directory) of each single-source COPY/ADD from the context; the destination in the
    # image is made where it is looked up (_in_image): 100,000 COPYs under a working
    # directory of 4 KiB held 400 MiB of destinations
    copies: list[tuple[str | None, str, str, bool]] = field(default_factory=list)

    def chain(self) -> list["_Stage"]:
        """This stage and the ones it is built from, this one first."""
        chain = []
        s: _Stage | None = self
        while s is not None:
            chain.append(s)
            s = s.inherited
        return chain

    def environment(self) -> dict[str, EnvVar]:
        """The image's ENV and ARG values: each stage's over those of the stage it is built
        from."""
        env: dict[str, EnvVar] = {}
        for s in reversed(self.chain()):
            env.update(s.env)
        return env

    def all_copies(self) -> Iterator[tuple[str | None, str, str, bool]]:
        """Every COPY/ADD of the context into the image, the newest first."""
        for s in self.chain():
            yield from reversed(s.copies)


def _line_end(text: str, pos: int) -> int:
    """Where the physical line that starts at ``pos`` ends (its newline, or the end of text)."""
    e = text.find("\n", pos)
    return len(text) if e < 0 else e


def _logical_line(text: str, pos: int, escape: str, places: MapBuilder | None
                  ) -> tuple[str, int]:
    """The logical line that starts with the physical line at ``pos``, and where the line
    after it starts (past the end of ``text`` at its end).  A line ending in the escape
    character continues on the next line; comment and blank lines inside it are dropped, as
    BuildKit does.  ``places`` (when given) gets each character's place in the file."""
    n = len(text)
    chars: list[str] = []
    while True:
        e = _line_end(text, pos)
        body = text[pos:e].rstrip("\r")
        trimmed = body.rstrip(" \t")
        cont = trimmed.endswith(escape)
        if cont:
            body = trimmed[:-1]
        chars.append(body)
        if places is not None:
            places.linear(pos, len(body))
        pos = e + 1
        if not cont:
            break
        while pos <= n:
            e = _line_end(text, pos)
            line = text[pos:e]
            if not (line.lstrip().startswith("#") or not line.strip()):
                break
            pos = e + 1
        if pos > n:
            break
        chars.append(" ")
        if places is not None:
            places.linear(pos - 1, 1)
    return "".join(chars), pos


# Comment and blank lines, each with its newline (`\s` is str.isspace's whitespace, which
# str.strip removes).  Between instructions they are skipped at once: 9.5 MiB of blank lines
# read one by one took 7 s.  Each repetition is possessive, which changes no match (no piece
# gives back a character the next one could take) and keeps the engine from holding a
# backtracking point per line (740 MiB for 1.9 million lines).
_SKIPPED = re.compile(r"(?:[^\S\n]*+(?:#[^\n]*+)?\n)*+")
_HEAD = re.compile(r"(?:#[^\n]*+\n)*+")  # the comment lines at the top: parser directives
_ESCAPE_WORD = re.compile(r"escape", re.I)
# the continued lines of an instruction before its last one, with the comment and blank lines
# among them; what joins two of them (the escape character to the next line read)
_CONTINUED = {e: re.compile(rf"(?:[^\n]*{re.escape(e)}[ \t]*+\r*+\n{_SKIPPED.pattern})++")
              for e in "\\`"}
_JOIN = {e: re.compile(rf"{re.escape(e)}[ \t]*+\r*+\n{_SKIPPED.pattern}") for e in "\\`"}


class _TooLong(Exception):
    """The Dockerfile has more lines of instructions than are read (bounds); the argument is
    where the first instruction not read begins."""


def _skippable(line: str) -> bool:
    return not line.strip() or line.lstrip().startswith("#")


def _instructions(text: str) -> Iterator[_Instruction]:
    """The instructions of a Dockerfile, one at a time (a list of 1.6 million `RUN a` of a
    9.5 MiB file held 500 MiB); _TooLong past bounds.MAX_DOCKERFILE_LINES lines of them."""
    escape = "\\"
    n = len(text)
    head = _HEAD.match(text).end()  # type: ignore[union-attr]
    seen = -1
    for word in _ESCAPE_WORD.finditer(text, 0, head):
        at = text.rfind("\n", 0, word.start()) + 1
        if at == seen:
            continue
        seen = at
        m = _ESCAPE_DIRECTIVE.match(text[at:_line_end(text, at)].rstrip("\r"))
        if m:
            escape = m.group(1)
    continued, join = _CONTINUED[escape], _JOIN[escape]
    limit = bounds.MAX_DOCKERFILE_LINES
    read = 0  # lines of instructions
    pos = 0
    while pos <= n:
        pos = _SKIPPED.match(text, pos).end()  # type: ignore[union-attr]
        e = _line_end(text, pos)
        line = text[pos:e].rstrip("\r")
        if _skippable(line):  # the last line, without a newline
            pos = e + 1
            continue
        start = pos
        if not line.rstrip(" \t").endswith(escape):
            # one physical line (most instructions): the arguments are a slice of it
            read += 1
            if read > limit:
                raise _TooLong(start)
            pos = e + 1
            m = _INSTR.match(line)
            if m is None:
                continue
            a = m.end()
            yield _Instruction(m.group(1).upper(), line[a:],
                               CharMap(start + a, len(line) - a, tail=start + len(line)))
            continue
        # continued: its lines up to the last one are found (and counted) at once, and joined
        # with a space where each continues (_logical_line, which makes the map, reads them
        # one by one)
        block = continued.match(text, start)
        last = block.end() if block is not None else start  # the last line's start
        e = _line_end(text, last)
        read += text.count("\n", start, last) + 1
        if read > limit:
            raise _TooLong(start)
        joined = join.sub(" ", text[start:last])
        tail = text[last:e]
        if e == n and _skippable(tail):
            logical = joined[:-1]  # the text ends inside the instruction
        else:
            body = tail.rstrip("\r")
            trimmed = body.rstrip(" \t")
            logical = joined + (trimmed[:-1] if trimmed.endswith(escape) else body)
        pos = e + 1
        m = _INSTR.match(logical)
        if m is None:
            continue
        yield _Instruction(m.group(1).upper(), logical[m.end():], None, text, start, escape,
                           m.end())


class _OutOfWords(Exception):
    """The file's budget of words (bounds.ReadBudget) ran out in an exec-form array."""


def _json_array(ins: _Instruction, budget: ReadBudget | None = None) -> list[Word] | None:
    """Words of an exec-form JSON array with exact positions, None when not valid JSON.

    Each element is a word of a command, as a shell word is, and spends one of ``budget``
    (the file's): past it, _OutOfWords, and the array's place becomes ``budget.cut`` (9.5 MiB
    of `CMD ["m", "a", "a", …]` is 1.9 million words, 12 s and 530 MiB to read and check)."""
    text = ins.text
    i = 0
    n = len(text)

    def skip() -> None:
        nonlocal i
        while i < n and text[i] in " \t\r\n":
            i += 1

    skip()
    if i >= n or text[i] != "[":
        return None
    cmap = ins.cmap
    i += 1
    words: list[Word] = []
    skip()
    if i < n and text[i] == "]":
        return words
    while True:
        skip()
        if i >= n or text[i] != '"':
            return None
        i += 1
        j = _JSON_PLAIN.match(text, i)
        j = j.end() if j is not None else i
        if j < n and text[j] == '"':
            # no escape (most elements): the word is a slice of the instruction's text, whose
            # map is sliced without building one character by character
            words.append(Word(text[i:j], cmap.slice(i, j, tail=cmap.start(j)), quoted=True))
            i = j + 1
        else:
            word = _json_string(text, i, cmap)
            if word is None:
                return None
            i = word[1]
            words.append(word[0])
        cancel_step()  # a step of reading, as a shell word is (linter/cancel.py)
        if budget is not None:
            budget.words -= 1
            if budget.words < 0:
                if budget.cut is None:
                    budget.cut = cmap.start(0)
                raise _OutOfWords
        skip()
        if i < n and text[i] == ",":
            i += 1
            continue
        if i < n and text[i] == "]":
            i += 1
            skip()
            return words if i == n else None
        return None


def _json_string(text: str, i: int, cmap: CharMap) -> tuple[Word, int] | None:
    """The JSON string whose characters start at ``i`` (after its opening quote) as a word,
    and where its closing quote ends; None when it is not valid."""
    n = len(text)
    chars: list[str] = []
    places = MapBuilder()
    while i < n and text[i] != '"':
        if text[i] == "\\":
            if i + 1 >= n:
                return None
            e = text[i + 1]
            if e in _JSON_ESC:
                chars.append(_JSON_ESC[e])
                places.char(cmap.start(i), cmap.end(i + 1))
                i += 2
                continue
            if e == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2:i + 6]):
                chars.append(chr(int(text[i + 2:i + 6], 16)))
                places.char(cmap.start(i), cmap.end(i + 5))
                i += 6
                continue
            return None
        j = _JSON_PLAIN.match(text, i).end()  # type: ignore[union-attr]
        chars.append(text[i:j])
        places.extend(cmap, i, j)
        i = j
    if i >= n:
        return None
    tail = cmap.start(i)
    return Word("".join(chars), places.build(tail) if chars
                else CharMap(tail, 0, tail=tail), quoted=True), i + 1


def _env_pairs(ins: _Instruction, env: dict[str, EnvVar], source: SourceFile) -> None:
    text = ins.text.strip()
    if "=" not in text.split(" ")[0]:
        key, _, value = text.partition(" ")
        env[key] = EnvVar(key, value.strip(), ins.cmap.span(len(key) + 1, len(ins.text)))
        return
    from ..shell import split_commands

    def placed(span: Span) -> Span:
        # the words' places are in the instruction's text (split_commands maps only where the
        # budget ran out): this is where they are in the file
        return ins.cmap.span(span.start, span.end)

    for cmd in split_commands(ins.text, budget=source.budget,
                              cmap=ins.cmap):
        for key, w in cmd.assignments:
            env[key] = EnvVar(key, w.text, placed(w.cmap.to_span()))
        for w in cmd.words:
            if "=" in w.text:
                key, _, value = w.text.partition("=")
                env[key] = EnvVar(key, value, placed(w.sub(len(key) + 1)))


def extract_dockerfile(source: SourceFile) -> Found:
    try:
        stages = _stages(source)
    except _TooLong as cut:
        # the last stage is not known, nor what the image runs: nothing of the file is checked
        at = cut.args[0]
        found = Found()
        found.findings.append(Finding(
            "MG001", Severity.WARNING,
            f"reading stops here: this Dockerfile has more than {bounds.MAX_DOCKERFILE_LINES:,} "
            "lines of instructions (no real one comes close), so what its image runs is not "
            "checked", source, Span(at, _line_end(source.text, at)),
            hint="lint a Dockerfile of the stages the image is built from"))
        return found
    if not stages:
        return Found()  # when reading stopped short, runner.extract_file says where
    return _final_stage(source, stages[-1])


def _stages(source: SourceFile) -> list[_Stage] | None:
    """The build stages of a Dockerfile, in order, each with what it inherits from the stage it
    is built `FROM`; None when reading stopped short (the file's budget of words ran out, at
    ``source.budget.cut``): what the image runs is not known."""
    stages: list[_Stage] = []
    # the first stage of each alias (what a later `FROM alias` builds on), looked up at once:
    # scanning every stage before each FROM was quadratic (9.5 MiB of 210,000 stages, over 40 s)
    first_of: dict[str, _Stage] = {}
    from . import pip_pin

    budget = source.budget
    for ins in _instructions(source.text):
        if budget.cut is not None:
            return None  # an ENV's words ran out: nothing after them is read
        if ins.name in ("ENTRYPOINT", "CMD", "COPY", "ADD") and stages:
            try:
                ins.words = _json_array(ins, budget)
            except _OutOfWords:
                return None
        if ins.name == "FROM":
            parts = ins.text.split()
            words = [p for p in parts if not p.startswith("--")]
            if not words:
                continue
            image_text = words[0]
            at = ins.text.find(image_text)
            image = Word(image_text, ins.cmap.slice(at, at + len(image_text),
                                                    tail=ins.cmap.start(at + len(image_text))))
            alias = words[2] if len(words) >= 3 and words[1].lower() == "as" else None
            parent = first_of.get(image_text)
            stage = _Stage(image=image, alias=alias, inherited=parent)
            if alias:
                first_of.setdefault(alias, stage)
            if parent is not None:
                stage.pin = parent.pin
                stage.workdir = parent.workdir
            stages.append(stage)
        elif not stages:
            continue
        elif ins.name in ("ENV", "ARG"):
            _env_pairs(ins, stages[-1].env, source)
        elif ins.name == "ENTRYPOINT":
            stages[-1].entrypoint = ins
            stages[-1].cmd = None
        elif ins.name == "CMD":
            stages[-1].cmd = ins
        elif ins.name == "WORKDIR":
            path = ins.text.strip()
            if path and "$" not in path:
                stages[-1].workdir = _in_image(stages[-1].workdir, path)
        elif ins.name in ("COPY", "ADD"):
            copy = _copy(ins, stages[-1].workdir)
            if copy is not None:
                stages[-1].copies.append(copy)
        elif ins.name == "RUN":
            pin = pip_pin(source, ins.text)
            if pin is not None:
                m = ins.text.find(pin.value, 0)
                stages[-1].pin = Located(pin.value, ins.cmap.span(m, m + len(pin.value)), source)
    return stages if budget.cut is None else None


def _in_image(workdir: str | None, path: str) -> str | None:
    """``path`` in the image, from the working directory ``workdir`` (normalised, as
    posixpath.normpath(posixpath.join(workdir, path))); None when it is not known: relative to
    a working directory that is not, or longer than bounds.MAX_PATH_CHARS.

    A path relative to ``workdir`` is appended to it without normalising ``workdir`` again:
    9.5 MiB of `WORKDIR a` normalised a path one component longer each time (100,000 of them
    took 15 s), and COPYs under a long working directory as much."""
    if path.startswith("/"):
        full = posixpath.normpath(path)
    elif workdir is None:
        return None
    else:
        rel = posixpath.normpath(path)
        if rel == ".":
            full = workdir
        elif rel == ".." or rel.startswith("../"):
            full = posixpath.normpath(posixpath.join(workdir, rel))
        else:
            # ``workdir`` is normalised and ``rel`` stays under it: the join is normalised
            full = posixpath.join(workdir, rel)
    return full if len(full) <= bounds.MAX_PATH_CHARS else None


def _copy(ins: _Instruction, workdir: str | None) -> tuple[str | None, str, str, bool] | None:
    """A COPY/ADD of one path from the build context: (working directory, destination, source,
    destination is a directory)."""
    words = ins.words
    parts = [w.text for w in words] if words is not None else ins.text.split()
    args = [p for p in parts if not p.startswith("--")]
    if any(p.startswith("--from") for p in parts) or len(args) != 2:
        return None  # from another stage or image, or several sources
    src, dest = args
    if any(c in src + dest for c in "$*?[") or "://" in src:
        return None
    as_dir = dest.endswith("/") or dest in (".", "..")
    return workdir, dest, src, as_dir


_SHELLS = {"sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/bash", "/usr/bin/env"}


def _script_word(words: list[str]) -> str | None:
    """The script an ENTRYPOINT/CMD runs: its first word, or the first operand of a shell
    (`bash /app/start.sh`, `/usr/bin/env bash start.sh`); None for `sh -c '…'` and programs."""
    i = 0
    while i < len(words) and words[i] in _SHELLS:
        i += 1
        while i < len(words) and words[i].startswith("-"):
            if words[i] == "-c":
                return None
            i += 1
    return words[i] if i < len(words) else None


def _context_file(dockerfile: str, stage: _Stage, target: str) -> str | None:
    """The build-context file a COPY/ADD of the stage put at ``target`` in the image, when it
    exists in the linted tree (beside the Dockerfile, else under the current directory)."""
    for workdir, to, src, as_dir in stage.all_copies():
        dest = _in_image(workdir, to)
        if dest is None:
            return None  # a copy to a place not known may have put it there
        rel = None
        if not as_dir and target == dest:
            rel = src
        elif target.startswith(dest.rstrip("/") + "/"):
            inner = target[len(dest.rstrip("/")) + 1:]
            # `COPY start.sh /app/` puts the file in the directory; `COPY scripts /app/` (or
            # `COPY scripts/ /app/x`) copies the directory's contents
            rel = src if as_dir and inner == posixpath.basename(src.rstrip("/")) and \
                not src.endswith("/") else posixpath.join(src, inner)
        if rel is None:
            continue
        for root in (os.path.dirname(os.path.abspath(dockerfile)), os.getcwd()):
            path = os.path.normpath(os.path.join(root, rel))
            if os.path.commonpath([root, path]) == root and is_regular_file(path):
                return path
        return None  # the newest copy to that place decides; it is not in the tree
    return None


def _follow_script(source: SourceFile, stage: _Stage, words: list[str], ctx: Context
                   ) -> Found | None:
    """The launches of the script the image starts, read from the build context; None when
    the command is not such a script."""
    script = _script_word(words)
    if not script or "$" in script:
        return None
    target = _in_image(stage.workdir, script)
    if target is None:
        return None
    path = _context_file(source.path, stage, target)
    if path is None:
        return None
    shown = os.path.relpath(path) if not os.path.isabs(source.path) else path
    try:
        text = memo(path, ("text",), read_text)
    except SideFileError as err:
        found = Found()
        found.findings.append(side_finding(
            shown, err,
            f"the script {script} that {os.path.basename(source.path)} starts is not read"))
        return found
    script_src = SourceFile(shown, text, "shell")
    # values from the Dockerfile have no position in the script
    env = {k: EnvVar(v.name, v.value, None) for k, v in stage.environment().items()}
    pin = Located(stage.pin.value, None, source) if stage.pin is not None else None
    image = Located(ctx.image.value, None, source) if ctx.image is not None else None
    scope = Scope(script_src, replace(ctx, image=image), env=env, version_pin=pin)
    found = search_script(text, None, scope)
    return found if found.launches else None


def _command(stage: _Stage) -> tuple[_Instruction | None, _Instruction | None, Word | None]:
    """The ENTRYPOINT and CMD an image built to ``stage`` runs, and the image its chain of
    stages starts `FROM` (whose own entrypoint runs when no stage sets one).  A stage inherits
    both from the stage it is built from; setting ENTRYPOINT resets the CMD inherited with it
    (Dockerfile reference, "Understand how CMD and ENTRYPOINT interact"; within a stage,
    `_stages` clears a CMD that an ENTRYPOINT follows)."""
    entry = cmd = None
    s: _Stage | None = stage
    while s is not None and entry is None:
        cmd = cmd if cmd is not None else s.cmd
        entry = s.entrypoint
        s = s.inherited
    root = stage
    while root.inherited is not None:
        root = root.inherited
    return entry, cmd, root.image


@dataclass(slots=True, frozen=True)  # shared by the services building one file (safeio.memo)
class BuiltImage:
    """What an image built from a Dockerfile starts with, for a compose service's `build:`:
    the ENTRYPOINT and CMD its stages end with (exec form: the words; shell form: the text),
    the image the stages start `FROM` (its own entrypoint runs when no stage sets one), the
    stage's ENV and the release a `RUN pip install` pins."""

    base: str | None
    entrypoint: list[str] | str | None
    cmd: list[str] | str | None
    env: dict[str, str]
    pin: str | None
    path: str | None  # the Dockerfile's real path (None for an inline one)


def built_image(source: SourceFile, target: str | None, path: str | None = None
                ) -> BuiltImage | None:
    """The image a build of ``source`` makes: its last stage, or the stage named ``target``
    (`docker build --target`); None when there is no such stage.  PartlyRead when the file is
    past the bounds of what is read."""
    try:
        stages = _stages(source)
    except _TooLong as cut:
        # what the image runs is not known; read alone, the file gets the MG001 where its
        # reading stops, but a build names it from elsewhere
        raise PartlyRead(
            f"it has more than {bounds.MAX_DOCKERFILE_LINES:,} lines of instructions (no real "
            "one comes close)", cut.args[0]) from None
    if stages is None:
        return None  # reading stopped short of its end (MG001 where it is linted itself)
    if target is not None:
        stage = next((s for s in stages if s.alias == target), None)
    else:
        stage = stages[-1] if stages else None
    if stage is None:
        return None
    entry, cmd, base = _command(stage)

    def form(ins: _Instruction | None) -> list[str] | str | None:
        if ins is None:
            return None
        words = ins.words
        return [w.text for w in words] if words is not None else ins.text

    return BuiltImage(base.text if base is not None else None, form(entry), form(cmd),
                      {k: v.value for k, v in stage.environment().items() if v.value is not None},
                      stage.pin.value if stage.pin is not None else None, path)


def _final_stage(source: SourceFile, stage: _Stage) -> Found:
    entry, cmd, base = _command(stage)
    ctx = Context(kind="dockerfile",
                  image=Located(base.text, base.span, source) if base is not None else None)
    scope = Scope(source, ctx, env=stage.environment(), version_pin=stage.pin)
    entry_words = entry.words if entry is not None else None
    cmd_words = cmd.words if cmd is not None else None
    first, first_words = (entry, entry_words) if entry is not None else (cmd, cmd_words)
    if first is not None:
        texts = [w.text for w in first_words] if first_words is not None else first.text.split()
        if entry is not None and cmd is not None and entry_words is not None:
            texts += [w.text for w in cmd_words] if cmd_words is not None else []
        followed = _follow_script(source, stage, texts, ctx)
        if followed is not None:
            return followed
    if entry is not None:
        words = entry_words
        if words is None:
            return search_script(entry.text, Word(entry.text, entry.cmap), scope)
        if cmd is None and words:
            # an exec-form ENTRYPOINT without CMD takes its arguments at `docker run IMAGE
            # ARGS` time (Dockerfile reference, "Understand how CMD and ENTRYPOINT interact"):
            # the words that follow are unknown, never "no model given"
            # shown at the array's closing bracket, where they would follow
            close = entry.text.rstrip()
            at = (Span(entry.cmap.start(len(close) - 1), entry.cmap.end(len(close) - 1))
                  if close.endswith("]") else words[-1].span)
            cmd_words = [unknown_words(at, "docker-run-arguments")]
        scope.list_form = True
        return find_launches(words + (cmd_words or []), scope)
    if cmd is None:
        # an image that only adds to its base: the command comes at `docker run` time
        return Found()
    words = cmd_words
    if words is None:
        return search_script(cmd.text, Word(cmd.text, cmd.cmap), scope)
    scope.list_form = True
    if base is not None and ctx.image is not None:
        found = launch_from_image(ctx.image, base, words, scope)
        if found.launches:
            return found
    return find_launches(words, scope)
