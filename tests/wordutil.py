"""Build Launch records from plain strings for the engine tests (no shell involved)."""

from __future__ import annotations

from collections.abc import Mapping

from mgpu_lint.findings import Finding
from mgpu_lint.launch import Context, EnvVar, Launch, Located
from mgpu_lint.source import CharMap, SourceFile, Span, VarRef, Word

ENTRIES = {"vllm": "vllm serve", "llama-server": "llama-server", "rpc-server": "rpc-server"}


def words_of(text: str, offset: int = 0) -> list[Word]:
    """Split on single spaces; ``$NAME`` / ``$(NAME)`` parts are kept as unresolved variables."""
    words: list[Word] = []
    pos = offset
    for part in text.split(" "):
        if part:
            words.append(_word(part, pos))
        pos += len(part) + 1
    return words


def _word(part: str, pos: int) -> Word:
    refs: list[VarRef] = []
    i = part.find("$")
    while i != -1:
        j = i + 1
        if part[j:j + 1] == "(":
            j = part.index(")", j) + 1
            name = part[i + 2:j - 1]
        else:
            while j < len(part) and (part[j].isalnum() or part[j] == "_"):
                j += 1
            name = part[i + 1:j]
        refs.append(VarRef(name, Span(pos + i, pos + j)))
        i = part.find("$", j)
    return Word(part, CharMap.linear(pos, len(part)), unresolved=tuple(refs))


def make_launch(
    command: str,
    *,
    engine: str | None = None,
    entry: str | None = None,
    skip: int | None = None,
    env: Mapping[str, str | None] | None = None,
    path: str = "<command>",
    version_pin: str | None = None,
    image_entrypoint: bool = False,
) -> Launch:
    """A launch from a command string: the program word, then ``skip`` words (``serve``)."""
    words = words_of(command)
    program = words[0]
    if engine is None:
        name = program.text.rsplit("/", 1)[-1]
        engine = "vllm" if name == "vllm" else name if name in ENTRIES else "rpc-server"
    entry = entry or ENTRIES[engine]
    if skip is None:
        skip = 2 if engine == "vllm" and entry == "vllm serve" and not image_entrypoint else 1
    source = SourceFile(path, command)
    env_vars = {k: EnvVar(k, v, Span(0, 0) if v is None else None) for k, v in (env or {}).items()}
    return Launch(
        source=source, engine=engine, entry=entry, program=program,
        args=tuple(words[skip:]), env=env_vars, context=Context(kind="command"),
        version_pin=Located(version_pin, program.span, source) if version_pin else None,
        image_entrypoint=image_entrypoint,
    )


def list_launch(items: list[str], *, engine: str = "vllm", program: str = "vllm/vllm-openai",
                image_entrypoint: bool = True) -> Launch:
    """An exec-form list (Kubernetes ``args:``): one Word per item, however it looks."""
    text = program + ' ["' + '", "'.join(items) + '"]'
    source = SourceFile("<command>", text)
    pos = len(program) + 3
    words: list[Word] = []
    for item in items:
        words.append(Word(item, CharMap.linear(pos, len(item)), quoted=True))
        pos += len(item) + 4
    return Launch(
        source=source, engine=engine, entry=ENTRIES[engine],
        program=Word(program, CharMap.linear(0, len(program))), args=tuple(words), env={},
        context=Context(kind="k8s"), list_form=True, image_entrypoint=image_entrypoint,
    )


def render(findings: list[Finding]) -> list[str]:
    """Findings as `CODE severity [text at span] message` lines, in file order."""
    out = []
    for f in sorted(findings, key=lambda f: f.sort_key()):
        token = f.source.text[f.span.start:f.span.end]
        out.append(f"{f.code} {f.severity.value} [{token}] {f.message}")
    return out


def codes(findings: list[Finding]) -> list[str]:
    return sorted(f.code for f in findings)
