"""Which files to lint, of what kind, and reading them safely (MG001)."""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from typing import Iterator

from .findings import Finding, Severity
from .source import SourceFile, Span

MAX_BYTES = 10 * 1024 * 1024
SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".hg", ".svn", ".tox",
             ".mypy_cache", ".pytest_cache", ".ruff_cache"}

_SHEBANG = re.compile(r"^#!\s*\S*(?:/|\s)(?:env\s+)?(?:ba|da|z|k|a)?sh\b")
YAML_SUFFIXES = (".yaml", ".yml", ".json")
SHELL_SUFFIXES = (".sh", ".bash", ".zsh")
MARKDOWN_SUFFIXES = (".md", ".markdown")


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str  # as given / as found under a given directory
    explicit: bool  # named on the command line


def kind_by_name(path: str) -> str | None:
    name = os.path.basename(path)
    lower = name.lower()
    if lower.endswith(YAML_SUFFIXES):
        return "yaml"
    if lower.endswith(SHELL_SUFFIXES):
        return "shell"
    if lower.endswith(MARKDOWN_SUFFIXES):
        return "markdown"
    if (lower in ("dockerfile", "containerfile") or lower.startswith("dockerfile.")
            or lower.endswith(".dockerfile") or lower.endswith(".containerfile")):
        return "dockerfile"
    return None


def kind_by_content(text: str) -> str | None:
    first = text[:200].split("\n", 1)[0]
    if _SHEBANG.match(first):
        return "shell"
    return None


def _gitignore_patterns(directory: str) -> list[str]:
    try:
        with open(os.path.join(directory, ".gitignore"), encoding="utf-8") as fh:
            lines = fh.read(100_000).splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


def _ignored(rel: str, name: str, is_dir: bool, patterns: list[tuple[str, str]]) -> bool:
    """gitignore matching (the common subset: globs, anchored `/x`, dir-only `x/`, `!x`)."""
    ignored = False
    for base, pat in patterns:
        negate = pat.startswith("!")
        if negate:
            pat = pat[1:]
        dir_only = pat.endswith("/")
        pat = pat.rstrip("/")
        if dir_only and not is_dir:
            continue
        path = os.path.relpath(rel, base) if base else rel
        if path.startswith(".."):
            continue
        if "/" in pat.lstrip("/"):
            hit = fnmatch.fnmatch(path, pat.lstrip("/")) or fnmatch.fnmatch(path, pat.lstrip("/")
                                                                           + "/*")
        elif pat.startswith("/"):
            hit = fnmatch.fnmatch(path, pat[1:])
        else:
            hit = fnmatch.fnmatch(name, pat)
        if hit:
            ignored = not negate
    return ignored


def walk(root: str) -> Iterator[str]:
    """Files under ``root``, skipping VCS/tool directories and what `.gitignore` excludes."""
    patterns: list[tuple[str, str]] = []
    stack = [(root, patterns)]
    while stack:
        directory, inherited = stack.pop()
        local = inherited + [(os.path.relpath(directory, root) if directory != root else "", p)
                             for p in _gitignore_patterns(directory)]
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            rel = os.path.relpath(entry.path, root)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file(follow_symlinks=True)
            except OSError:
                continue
            if is_dir:
                if entry.name in SKIP_DIRS or _ignored(rel, entry.name, True, local):
                    continue
                subdirs.append(entry.path)
            elif is_file and not _ignored(rel, entry.name, False, local):
                yield entry.path
        for sub in reversed(subdirs):
            stack.append((sub, local))


def candidates(paths: list[str]) -> Iterator[Candidate]:
    for p in paths:
        if os.path.isdir(p):
            for f in walk(p):
                yield Candidate(f, False)
        else:
            yield Candidate(p, True)


def read_source(path: str, kind: str | None, max_bytes: int = MAX_BYTES
                ) -> tuple[SourceFile | None, Finding | None]:
    """Read and decode a file; every failure is an MG001 finding, never an exception."""
    empty = SourceFile(path, "", kind or "unknown")
    try:
        size = os.stat(path).st_size
        if size > max_bytes:
            return None, Finding("MG001", Severity.ERROR,
                                 f"file is {size:,} bytes, over the {max_bytes:,}-byte limit; "
                                 "not read", empty, Span(0, 0),
                                 hint="raise `max-file-size` in the configuration to lint it")
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        return None, Finding("MG001", Severity.ERROR, f"cannot read file: {exc.strerror or exc}",
                             empty, Span(0, 0))
    return decode(path, data, kind)


def decode(path: str, data: bytes, kind: str | None) -> tuple[SourceFile | None, Finding | None]:
    empty = SourceFile(path, "", kind or "unknown")
    if b"\0" in data[:8192]:
        return None, Finding("MG001", Severity.ERROR, "binary file (contains NUL bytes); not "
                             "linted", empty, Span(0, 0))
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = data[:exc.start].decode("utf-8", "replace")
        src = SourceFile(path, data.decode("utf-8", "replace"), kind or "unknown")
        return None, Finding("MG001", Severity.ERROR,
                             f"not valid UTF-8: byte 0x{data[exc.start]:02x} at byte offset "
                             f"{exc.start}", src, Span(len(prefix), len(prefix) + 1))
    if kind is None:
        kind = kind_by_content(text) or "unknown"
    return SourceFile(path, text, kind), None
