"""Which files to lint, of what kind, and reading them safely (MG001)."""

from __future__ import annotations

import fnmatch
import os
import re
from typing import Callable, Iterator

from . import safeio
from .bounds import MAX_GITIGNORE_PATTERNS
from .findings import Finding, Severity
from .policy import MAX_FILE_BYTES
from .source import SourceFile, Span
from .records import dataclass

MAX_BYTES = MAX_FILE_BYTES
SNIFF_BYTES = 4096  # how much of a suffix-less file is read to tell its kind
GITIGNORE_MAX_BYTES = 1024 * 1024

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
    if (lower in ("dockerfile", "containerfile")
            or lower.startswith(("dockerfile.", "containerfile."))
            or lower.endswith((".dockerfile", ".containerfile"))):
        return "dockerfile"
    return None


# top-level keys of a first YAML document that make it a file we read: Kubernetes objects
# (apiVersion, kind) and compose files (services)
_YAML_KEY = re.compile(r"^(apiVersion|kind|services)\s*:(?:\s|$)")
_JSON_KEY = re.compile(r'^\s*\{\s*"(apiVersion|kind|services)"\s*:')
# upper-case FROM with one image and an optional stage name: Python's `from x import y` is not
_DOCKER_FROM = re.compile(r"^FROM\s+(?:--platform=\S+\s+)?\S+(?:\s+[Aa][Ss]\s+\S+)?\s*$")
_DOCKER_PREAMBLE = re.compile(r"^(?:ARG\s+\S|#(?!!)|\s*$)")


def kind_by_content(text: str) -> str | None:
    """The kind of a text whose name does not tell (stdin, a file without a suffix).

    A shell shebang → shell; a first instruction ``FROM`` (after comments, blank lines and
    ``ARG``s, as Docker allows) → Dockerfile; a first YAML document with a top-level
    ``apiVersion``, ``kind`` or ``services`` key (after comments, ``---`` and blank lines), or
    JSON opening with one of them → YAML. Anything else: None (not a kind we read).
    """
    head = text[:SNIFF_BYTES]
    first = head.split("\n", 1)[0]
    if _SHEBANG.match(first):
        return "shell"
    if _JSON_KEY.match(head):
        return "yaml"
    lines = head.splitlines()
    for line in lines:
        if _DOCKER_FROM.match(line):
            return "dockerfile"
        if not _DOCKER_PREAMBLE.match(line):
            break
    started = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("---"):
            if started:
                break  # only the first document counts
            continue
        if not stripped or stripped.startswith("#") or stripped.startswith("%"):
            continue
        started = True
        if _YAML_KEY.match(line):
            return "yaml"
    return None


def sniff_file(path: str) -> str | None:
    """The kind of a walked file whose name does not tell, from its first bytes: any such file
    by a shell shebang, a file without a suffix also by its content (see kind_by_content)."""
    suffixed = "." in os.path.basename(path).lstrip(".")
    try:
        with open(path, "rb") as fh:
            head = fh.read(128 if suffixed else SNIFF_BYTES)
    except OSError:
        return None
    if b"\0" in head or (suffixed and not head.startswith(b"#!")):
        return None
    kind = kind_by_content(head.decode("utf-8", "replace"))
    return kind if not suffixed or kind == "shell" else None


def excluder(patterns: list[str] | tuple[str, ...], root: str) -> Callable[[str], bool]:
    """A test for paths matched by exclude globs (ruff's form): a glob with a ``/`` is matched
    against the path relative to ``root`` (the configuration's directory or the current one), one
    without against every part of the path; ``dir/`` matches a directory and what is under it."""
    slashed = [p.strip("/").removeprefix("./") for p in patterns if "/" in p.strip("/")]
    named = [p.strip("/") for p in patterns if "/" not in p.strip("/") and p.strip("/")]
    base = os.path.abspath(root)
    under = base if base.endswith(os.sep) else base + os.sep
    # each list as one regex of fnmatch's own translations (what fnmatch.fnmatch matches on
    # POSIX, where normcase is the identity): one match per path part instead of one fnmatch
    # call per pattern per part, ~80 per file with the default excludes
    named_re = _alternation(named)
    slashed_re = _alternation([q for p in slashed for q in (p, p + "/*")])

    def excluded(path: str) -> bool:
        full = os.path.abspath(path)
        # a path under ``base`` (every walked file): its relative path is the rest of it, what
        # os.path.relpath gives for two normalised absolute paths, without its splitting
        rel = (full[len(under):] if full.startswith(under) else
               os.path.relpath(full, base)).replace(os.sep, "/")
        if named_re is not None and any(
                named_re.match(os.path.normcase(part)) for part in rel.split("/") if part != ".."):
            return True
        return slashed_re is not None and slashed_re.match(os.path.normcase(rel)) is not None

    return excluded


def _alternation(globs: list[str]) -> re.Pattern[str] | None:
    """One regex matching what any of ``globs`` matches (fnmatch.translate of each)."""
    if not globs:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(os.path.normcase(g))})" for g in globs))


def _gitignore_patterns(directory: str) -> list[str]:
    path = os.path.join(directory, ".gitignore")
    if not os.path.lexists(path):
        return []
    try:  # a FIFO or device named .gitignore is refused, not opened (it would block)
        lines = safeio.read_text(path, GITIGNORE_MAX_BYTES).splitlines()
    except safeio.SideFileError:
        return []
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


_WILD = re.compile(r"[*?\[]")
_WILD_END = re.compile(r"[*?\[\]]")


class _Candidates:
    """The patterns (by index) that can match a string, found by the literal text a glob starts
    with, else the literal text it ends with: a string is looked up by its own beginnings and
    endings of those lengths, so thousands of patterns cost a few dictionary look-ups, not one
    regex each (only globs with a wildcard at both ends are tried on every string)."""

    def __init__(self) -> None:
        self.prefix: dict[str, list[int]] = {}
        self.suffix: dict[str, list[int]] = {}
        self.always: list[int] = []

    def add(self, index: int, globs: list[str]) -> None:
        """Index pattern ``index``, which matches what any of ``globs`` matches."""
        # what every string a glob matches starts with: the text before its first wildcard
        # (a `[` that never closes is literal to fnmatch, so this is at most too short)
        prefix = os.path.commonprefix([_WILD.split(g, maxsplit=1)[0] for g in globs])
        if prefix:
            self.prefix.setdefault(prefix, []).append(index)
            return
        # and ends with: the text after its last wildcard or `]` (a class's members are not
        # literal; a `]` outside a class is, and cutting there is again only too short)
        ends = [_WILD_END.split(g)[-1][::-1] for g in globs]
        suffix = os.path.commonprefix(ends)[::-1]
        if suffix:
            self.suffix.setdefault(suffix, []).append(index)
            return
        self.always.append(index)

    def freeze(self) -> None:
        self.prefix_lengths = sorted({len(k) for k in self.prefix})
        self.suffix_lengths = sorted({len(k) for k in self.suffix})

    def of(self, text: str) -> list[int]:
        found = list(self.always)
        for n in self.prefix_lengths:
            if n > len(text):
                break
            found += self.prefix.get(text[:n], ())
        for n in self.suffix_lengths:
            if n > len(text):
                break
            found += self.suffix.get(text[len(text) - n:], ())
        return found


@dataclass(frozen=True)
class _IgnoreFile:
    """One `.gitignore`: the directory it sits in (relative to the walk's root, "" for the root)
    and its patterns translated once, each as (negated, directory only, matched against the path
    rather than the name, regex), indexed by their literal beginnings and endings, so that a
    path costs the patterns that can match it, not one fnmatch and one relpath per pattern (a
    5,000-line .gitignore over 5,000 files: 114 s)."""

    base: str
    rules: tuple[tuple[bool, bool, bool, str], ...]  # the regex compiled when first tried
    on_path: _Candidates
    on_name: _Candidates
    compiled: dict[int, re.Pattern[str]]

    def regex(self, i: int) -> re.Pattern[str]:
        found = self.compiled.get(i)
        if found is None:
            found = self.compiled[i] = re.compile(self.rules[i][3])
        return found


def _ignore_file(base: str, patterns: list[str]) -> _IgnoreFile:
    rules = []
    on_path, on_name = _Candidates(), _Candidates()
    for pat in patterns:
        negate = pat.startswith("!")
        if negate:
            pat = pat[1:]
        dir_only = pat.endswith("/")
        pat = pat.rstrip("/")
        if "/" in pat.lstrip("/"):
            body = pat.lstrip("/")
            globs, target = [body, body + "/*"], on_path
        elif pat.startswith("/"):
            globs, target = [pat[1:]], on_path
        else:
            globs, target = [pat], on_name
        globs = [os.path.normcase(g) for g in globs]
        target.add(len(rules), globs)
        # what fnmatch.fnmatch matches (its translation; normcase is the identity on POSIX)
        regex = "|".join(f"(?:{fnmatch.translate(g)})" for g in globs)
        rules.append((negate, dir_only, target is on_path, regex))
    on_path.freeze()
    on_name.freeze()
    return _IgnoreFile(base, tuple(rules), on_path, on_name, {})


def _ignored(rel: str, name: str, is_dir: bool, files: list[_IgnoreFile]) -> bool:
    """gitignore matching (the common subset: globs, anchored `/x`, dir-only `x/`, `!x`): the
    last pattern that matches decides, files read from the root down."""
    ignored = False
    name = os.path.normcase(name)
    for f in files:
        path = os.path.normcase(os.path.relpath(rel, f.base) if f.base else rel)
        if path.startswith(".."):
            continue
        for i in sorted(f.on_path.of(path) + f.on_name.of(name)):
            negate, dir_only, on_path, _ = f.rules[i]
            if dir_only and not is_dir:
                continue
            if f.regex(i).match(path if on_path else name):
                ignored = not negate
    return ignored


def walk(root: str, excluded: Callable[[str], bool] | None = None,
         recursive: bool = True) -> Iterator[str]:
    """Files under ``root``, skipping what ``excluded`` matches (by default VCS and tool
    directories: config.DEFAULT_EXCLUDE) and what `.gitignore` excludes; ``recursive`` False:
    the files of ``root`` itself only."""
    if excluded is None:
        from .config import DEFAULT_EXCLUDE

        excluded = excluder(DEFAULT_EXCLUDE, root)
    files: list[_IgnoreFile] = []
    stack = [(root, files)]
    while stack:
        directory, inherited = stack.pop()
        patterns = _gitignore_patterns(directory)[
            :max(0, MAX_GITIGNORE_PATTERNS - sum(len(f.rules) for f in inherited))]
        local = inherited + [_ignore_file(
            os.path.relpath(directory, root) if directory != root else "", patterns)] \
            if patterns else inherited
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            # the path relative to ``root`` is needed only when a .gitignore applies
            rel = os.path.relpath(entry.path, root) if local else ""
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file(follow_symlinks=True)
            except OSError:
                continue
            if is_dir:
                if excluded(entry.path) or _ignored(rel, entry.name, True, local):
                    continue
                subdirs.append(entry.path)
            elif is_file and not excluded(entry.path) and not _ignored(rel, entry.name, False,
                                                                        local):
                yield entry.path
        if recursive:
            for sub in reversed(subdirs):
                stack.append((sub, local))


def candidates(paths: list[str], excluded: Callable[[str], bool] | None = None,
               force_exclude: bool = False) -> Iterator[Candidate]:
    """Files named and found under directories; a named file is linted even when excluded,
    unless ``force_exclude`` (ruff's convention)."""
    for p in paths:
        if os.path.isdir(p):
            if force_exclude and excluded is not None and excluded(p):
                continue
            for f in walk(p, excluded):
                yield Candidate(f, False)
        elif not (force_exclude and excluded is not None and excluded(p)):
            yield Candidate(p, True)


def too_big(path: str, size: str, max_bytes: int) -> Finding:
    """MG001 for an input over the size limit (``size``: what it is known to hold)."""
    return Finding("MG001", Severity.ERROR,
                   f"file is {size}, over the {max_bytes:,}-byte limit; not read",
                   SourceFile(path, "", "unknown"), Span(0, 0),
                   hint="raise `max-file-size` in the configuration to lint it")


def read_source(path: str, kind: str | None, max_bytes: int = MAX_BYTES
                ) -> tuple[SourceFile | None, Finding | None]:
    """Read and decode a file; every failure is an MG001 finding, never an exception."""
    empty = SourceFile(path, "", kind or "unknown")
    try:
        size = os.stat(path).st_size
        if size > max_bytes:
            return None, too_big(path, f"{size:,} bytes", max_bytes)
        with open(path, "rb") as fh:
            # A read of max_bytes + 1 allocates that buffer (10 MiB) for every file, however small:
            # 25 µs per file against 10; read what stat says, then whatever the file grew by.
            data = fh.read(size + 1)
            if len(data) > size:
                data += fh.read(max_bytes - len(data) + 1)
        if len(data) > max_bytes:  # it grew past the limit since stat
            return None, too_big(path, f"more than {max_bytes:,} bytes", max_bytes)
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
