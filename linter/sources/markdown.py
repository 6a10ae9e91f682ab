"""Markdown: fenced shell and YAML blocks (docs are where deployments get copied from).

Shell blocks (`bash`, `sh`, `shell`, `console`, `zsh`, `shell-session`) are searched as scripts;
when a block uses `$ ` prompts only the prompted lines and their continuations are commands (the
rest is output).  YAML blocks are read as Kubernetes or compose documents.  Every position
maps back to the Markdown file.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..launch import Context
from ..source import CharMap, MapBuilder, SourceFile, Word
from .commandline import Scope, search_script
from .yamlnodes import Doc

if TYPE_CHECKING:
    from . import FileResult

_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})[ \t]*([^`\s]*)[^`\n]*$")
SHELL_LANGS = {"bash", "sh", "shell", "console", "zsh", "shell-session", "shellsession",
               "terminal"}
YAML_LANGS = {"yaml", "yml"}
_PROMPT = re.compile(r"^[ \t]*(?:\([^)]*\)\s*)?(?:[\w.@~:/-]*)?\$ ")
_ROOT_PROMPT = re.compile(r"^[ \t]*(?:\([^)]*\)\s*)?(?:[\w.@~:/-]*)?[$#] ")
_CONSOLE = {"console", "shell-session", "shellsession", "terminal"}


def _blocks(text: str):  # type: ignore[no-untyped-def]
    """(language, [(line start offset, line text)]) for each fenced block."""
    lines = text.split("\n")
    offsets = []
    pos = 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i].rstrip("\r"))
        if not m:
            i += 1
            continue
        indent, fence, lang = len(m.group(1)), m.group(2), m.group(3).lower()
        body = []
        j = i + 1
        while j < len(lines):
            stripped = lines[j].rstrip("\r")
            if stripped.lstrip().startswith(fence[0] * len(fence)) and \
                    not stripped.strip().strip(fence[0]):
                break
            cut = min(indent, len(stripped) - len(stripped.lstrip(" ")))
            body.append((offsets[j] + cut, stripped[cut:]))
            j += 1
        yield lang, body
        i = j + 1


def _segment(lines: list[tuple[int, str]]) -> Word:
    chars: list[str] = []
    places = MapBuilder()
    for offset, line in lines:
        # the line and the break after it, each character from its own place
        chars.append(line + "\n")
        places.linear(offset, len(line) + 1)
    if not chars:
        return Word("", CharMap(0, 0))
    last_offset, last_line = lines[-1]
    return Word("".join(chars), places.build(last_offset + len(last_line) + 1))


def _commands_only(lines: list[tuple[int, str]], prompt: re.Pattern[str]) -> list[tuple[int, str]]:
    """Prompted lines without their prompt, and their continuation lines; output dropped."""
    out: list[tuple[int, str]] = []
    continuing = False
    for offset, line in lines:
        m = prompt.match(line)
        if m:
            out.append((offset + m.end(), line[m.end():]))
        elif continuing:
            out.append((offset, line))
        else:
            out.append((offset, ""))
        continuing = (m is not None or continuing) and line.rstrip().endswith("\\")
    return out


def transcript(text: str) -> tuple[str, Word | None]:
    """A shell text written as a terminal transcript (`$ cmd` lines) without prompts and output;
    other texts unchanged (None: no map needed)."""
    if "$ " not in text:
        return text, None
    lines = []
    pos = 0
    for line in text.split("\n"):
        lines.append((pos, line))
        pos += len(line) + 1
    if not any(_PROMPT.match(line) for _, line in lines):
        return text, None
    word = _segment(_commands_only(lines, _PROMPT))
    return word.text, word


def extract_markdown(source: SourceFile, result: "FileResult") -> None:
    from . import _add, extract_yaml

    for lang, lines in _blocks(source.text):
        if not lines:
            continue
        if lang in SHELL_LANGS:
            if lang in _CONSOLE:
                lines = _commands_only(lines, _ROOT_PROMPT)
            elif any(_PROMPT.match(line) for _, line in lines):
                lines = _commands_only(lines, _PROMPT)
            word = _segment(lines)
            found = search_script(word.text, word, Scope(source, Context(kind="markdown")),
                                  on_yaml=lambda body, cmap: extract_yaml(
                                      Doc(source, body, cmap), result))
            _add(result, found, None)
        elif lang in YAML_LANGS:
            word = _segment(lines)
            extract_yaml(Doc(source, word.text, word.cmap), result)
