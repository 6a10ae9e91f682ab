"""Markdown: fenced shell and YAML blocks (docs are where deployments get copied from).

Shell blocks (`bash`, `sh`, `shell`, `console`, `zsh`, `shell-session`) are searched as scripts;
when a block uses `$ ` prompts only the prompted lines and their continuations are commands (the
rest is output).  Untagged blocks are read as shell too, but only their launches count: a block
without a language may be output or another language, so its shell syntax errors are dropped.
YAML blocks are read as Kubernetes or compose documents.  Every position maps back to the
Markdown file.

Each block is its own host (``Context.host``): a README shows alternatives, and two blocks are
never two engines on the same machine's GPUs (MG108).  A GPU named with its count in the
paragraph just before a block or in the nearest heading above it ("on 8×H200", "4xB200",
"8 x A100 80GB") is the launch's GPU type and the node's GPU count (``Context.stated_gpu``);
a count without a type ("on 8 GPUs", "an 8-GPU node") is the node's GPU count alone, the type
then assumed. The count is not taken as the GPUs given to the process, since a doc's hardware
line says what the machine has, not what each alternative uses.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Sequence

from .. import bounds
from ..bounds import launches_full
from ..catalog import knowledge
from ..findings import Finding, Severity
from ..launch import Context, Located
from ..source import CharMap, MapBuilder, SourceFile, Span, Word, line_starts
from .commandline import Scope, search_script
from .yamlnodes import Doc
from ..records import replace

if TYPE_CHECKING:
    from . import FileResult

# The runs after the fence are possessive: the greedy `([^`\s]*)[^`\n]*$` tried every split of a
# long info string when a backtick ended the line, quadratic ("```" + 16 KB + "`": 0.9 s).  What
# the language run gives back the rest of the line accepts too, so the longest run is the one
# that matches: the same lines match with the same groups.
_FENCE = re.compile(r"^([ \t]*+)(`{3,}|~{3,})[ \t]*+([^`\s]*+)[^`\n]*+$")
SHELL_LANGS = {"bash", "sh", "shell", "console", "zsh", "shell-session", "shellsession",
               "terminal"}
YAML_LANGS = {"yaml", "yml"}
_PROMPT = re.compile(r"^[ \t]*(?:\([^)]*\)\s*)?(?:[\w.@~:/-]*)?\$ ")
_ROOT_PROMPT = re.compile(r"^[ \t]*(?:\([^)]*\)\s*)?(?:[\w.@~:/-]*)?[$#] ")
_CONSOLE = {"console", "shell-session", "shellsession", "terminal"}


def _lines(text: str) -> tuple[list[str], Sequence[int]]:
    """The lines of ``text`` (split at newlines) and the offset where each starts."""
    return text.split("\n"), line_starts(text)


def _blocks(lines: list[str], offsets: Sequence[int]):  # type: ignore[no-untyped-def]
    """(language, [(line start offset, line text)], index of the opening and of the closing
    fence line) for each fenced block."""
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
        yield lang, body, i, j
        i = j + 1


def fenced_bodies(text: str, read_only: bool = False) -> list[tuple[int, str]]:
    """(offset, text) of every fenced block's body (with ``read_only``: of the blocks this
    reader reads; MG017 looks for engine names there)."""
    lines, offsets = _lines(text)
    out = []
    for lang, body, _, _ in _blocks(lines, offsets):
        if read_only and lang and lang not in SHELL_LANGS and lang not in YAML_LANGS:
            continue
        if body:
            start = body[0][0]
            end = body[-1][0] + len(body[-1][1])
            out.append((start, text[start:end]))
    return out


# A GPU named with its count: "8×H200", "4xB200", "8 x A100 80GB", "2 RTX 4090s", "8 H100 GPUs".
# The name is checked against the GPU catalog, so "3x faster" or "2 x 2" name nothing.
_GPU_NAME = (r"(?P<name>(?:(?:NVIDIA|AMD)\s+)?(?:(?:GeForce\s+)?RTX\s+(?:PRO\s+)?|Tesla\s+|"
             r"Instinct\s+)?[A-Z]{1,3}\d{1,4}[A-Z]?(?:[ -](?:SXM\d?|PCIe|NVL|Ti|\d{2,3}\s?GB)\b)*)")
_STATED_GPU = re.compile(
    r"(?<![\w.])(?P<count>\d{1,4})\s*(?:[×xX*]\s*|\s)" + _GPU_NAME + r"(?:s\b|\b)"
    r"|(?<![\w.])" + _GPU_NAME.replace("?P<name>", "?P<name2>") +
    r"\s*[×xX*]\s*(?P<count2>\d{1,4})(?![\w.])")
# A GPU count without a type: "on 8 GPUs", "with 4x GPUs", "across two GPUs", "a single GPU",
# "an 8-GPU node", "8 GPU machine".  Only where it says what the machine has (after on / with /
# using / across, or before node / machine / server …), not "at least 2 GPUs" or "2 GPUs or more".
_WORD_COUNTS = {"one": 1, "single": 1, "two": 2, "four": 4, "eight": 8}
_COUNT = r"(?P<n>\d{1,4}|single|one|two|four|eight)"  # "a single": the article is optional
_STATED_COUNT = re.compile(
    r"(?i:\b(?:on|with|using|across|to)\s+(?:an?\s+|the\s+)?)" + _COUNT +
    r"\s*(?:[×xX]\s*)?(?:NVIDIA\s+|AMD\s+)?GPUs?\b(?!\s*(?:or more|or fewer|or less|\+|/))"
    r"|(?<![\w.])(?P<m>\d{1,4})[- ]GPU\s+(?:node|machine|server|host|instance|box|VM)s?\b",
)
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+\S")


def _stated_gpu(source: SourceFile, lines: list[str], offsets: Sequence[int], fence: int,
                heading: int | None) -> tuple[Located | None, Located] | None:
    """The GPU type (None when the text names none) and count the paragraph just before the
    fence on line ``fence`` states, else the nearest heading above it (line ``heading``,
    outside any block)."""
    # the paragraph directly before the block (blank lines between are allowed)
    i = fence - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    while i >= 0 and lines[i].strip() and not _FENCE.match(lines[i].rstrip("\r")) \
            and not _HEADING.match(lines[i]):
        hit = _gpu_in(source, lines[i], offsets[i])  # the line nearest the block first
        if hit is not None:
            return hit
        i -= 1
    return _gpu_in(source, lines[heading], offsets[heading]) if heading is not None else None


def _gpu_in(source: SourceFile, line: str, offset: int) -> tuple[Located | None, Located] | None:
    """The last GPU-with-count the line names (nearest the block); else the last count of
    GPUs without a type.  (Only the last match is kept: a 9 MiB paragraph of `8×H200 ` made
    1.2 million places, 550 MiB.)"""
    last = None
    for m in _STATED_GPU.finditer(line):
        name = m.group("name") or m.group("name2")
        if int(m.group("count") or m.group("count2")) >= 1 and \
                knowledge.resolve_gpu(name) is not None:
            last = m
    if last is not None:
        span = Span(offset + last.start(), offset + last.end())
        count = int(last.group("count") or last.group("count2"))
        return (Located(last.group("name") or last.group("name2"), span, source),
                Located(str(count), span, source))
    for m in _STATED_COUNT.finditer(line):
        word = m.group("n") or m.group("m")
        if (int(word) if word.isdigit() else _WORD_COUNTS[word.lower()]) >= 1:
            last = m
    if last is None:
        return None
    word = last.group("n") or last.group("m")
    count = int(word) if word.isdigit() else _WORD_COUNTS[word.lower()]
    start = last.start("n") if last.group("n") else last.start("m")
    return None, Located(str(count), Span(offset + start, offset + last.end()), source)


_TOP_KEY = re.compile(r"^(apiVersion|kind):[ \t]*\S")


def _is_k8s_object(lines: list[tuple[int, str]]) -> bool:
    """Whether the block's lines state a Kubernetes object's top-level apiVersion and kind."""
    keys = {m.group(1) for _, line in lines if (m := _TOP_KEY.match(line))}
    return len(keys) == 2


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
    lines = list(zip(line_starts(text), text.split("\n")))
    if not any(_PROMPT.match(line) for _, line in lines):
        return text, None
    word = _segment(_commands_only(lines, _PROMPT))
    return word.text, word


def extract_markdown(source: SourceFile, result: "FileResult") -> None:
    lines_, offsets = _lines(source.text)
    heading: int | None = None  # the last heading line outside blocks, seen so far
    scanned = 0  # lines before this one that lie outside blocks have been looked at
    read = 0  # blocks read
    for host, (lang, lines, fence, close) in enumerate(_blocks(lines_, offsets)):
        for k in range(scanned, fence):
            if _HEADING.match(lines_[k]):
                heading = k
        scanned = close + 1
        if not lines:
            continue
        if launches_full(len(result.launches)):
            break  # runner.extract_file says where reading stopped
        read += 1
        if read > bounds.MAX_MARKDOWN_BLOCKS:
            result.findings.append(Finding(
                "MG001", Severity.WARNING,
                f"reading stops here: this file has more than {bounds.MAX_MARKDOWN_BLOCKS:,} "
                "code blocks (no document comes close), so the rest of it is not checked",
                source, Span(offsets[fence], offsets[fence] + len(lines_[fence])),
                hint="lint the part of the file that launches the engine on its own"))
            break
        before = len(result.launches)
        _read_block(source, result, lang, lines, lines_, offsets, fence, heading, host)
        # YAML (a compose file in a block, a here-document) is on the block's host too
        result.launches[before:] = [
            la if la.context.host is not None else
            replace(la, context=replace(la.context, host=host))
            for la in result.launches[before:]]


def _read_block(source: SourceFile, result: "FileResult", lang: str,
                lines: list[tuple[int, str]], lines_: list[str], offsets: Sequence[int],
                fence: int, heading: int | None, host: int) -> None:
    from . import _add, extract_yaml

    if not lang and _is_k8s_object(lines):
        # an untagged block holding a whole Kubernetes object (top-level apiVersion and kind):
        # read as the YAML it is; a text that does not parse is not reported (it may be
        # anything)
        word = _segment(lines)
        extract_yaml(Doc(source, word.text, word.cmap), result, syntax_errors=False)
        return
    if lang in SHELL_LANGS or not lang:
        if lang in _CONSOLE:
            lines = _commands_only(lines, _ROOT_PROMPT)
        elif any(_PROMPT.match(line) for _, line in lines):
            lines = _commands_only(lines, _PROMPT)
        stated = _stated_gpu(source, lines_, offsets, fence, heading)
        context = Context(kind="markdown", host=host,
                          stated_gpu=stated[0] if stated else None,
                          stated_gpu_count=stated[1] if stated else None)
        word = _segment(lines)
        found = search_script(word.text, word, Scope(source, context),
                              on_yaml=lambda body, cmap: extract_yaml(
                                  Doc(source, body, cmap), result))
        if not lang:
            # an untagged block may be output or another language: only its launches count
            found.findings = [f for f in found.findings if f.code != "MG003"]
        _add(result, found, None)
    elif lang in YAML_LANGS:
        word = _segment(lines)
        # a YAML block that names no engine is a doc's illustration, often elided (`...`,
        # `{username}/image`): it can hold no launch, so its syntax is not reported
        from ..prepass import names_engine

        extract_yaml(Doc(source, word.text, word.cmap), result,
                     syntax_errors=names_engine(word.text))
