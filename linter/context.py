"""The files beside the language server's document, read as the context of its lint.

DECISIONS ("The file set"): objects that refer to each other (Services, HPAs, a KServe
InferenceService and its ServingRuntime, a compose service and the Dockerfile it builds) are
linked across all files of one run, and the language server lints the open document with the
files of its directory as context.  So the server lints the document as `mgpu-lint DIR` lints
the directory (`runner.lint` with `runner.Focus`): the files of the document's directory chosen
as a directory walk chooses them (their kind by name or content; the excludes and `.gitignore`
of the configuration that applies to the directory, as a run from the directory uses), in the
same order, with the editor's text in the document's place (unsaved edits win over the file on
disk); the findings kept are the document's own, also those a sibling's launch places in it (an
HPA in the document scaling a Deployment beside it, MG704).  Only the directory itself is read,
not its subdirectories: the files one edits together sit side by side, and a walk of a tree
would make each keystroke's context as large as a repository.

What a sibling's reading gives (`runner.Outcome`: its Services, HPAs, launches, its reading's
findings) is kept from one lint to the next (`Siblings`), under the key `safeio.memo` gives a
side file: the file's identity and state (`safeio.state`), stat'ed again at each lint, with the
state of every side file its reading went through (a compose file's `.env`, the Dockerfile it
builds) and, for the kinds whose reading looks for files that may not exist yet (compose files,
Dockerfiles), the directory's own state.  A file changed within `safeio.RACY_NS` of its reading
is used for that lint only, as `safeio.SideCache` does.  A reading stopped by the document's
next change (`LintCancelled`) keeps nothing of the file it was in; the files read before it
stay kept.
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from . import safeio
from .cancel import LintCancelled
from .discover import kind_by_name, read_source, sniff_file, walk
from .findings import Finding
from .options import Options
from .policy import MAX_FILE_BYTES
from .runner import Focus, Outcome, RunResult, extract_input, lint, text_source
from .source import SourceFile
from .sources import FileResult

# The bounds of one document's context.  Its first lint reads and extracts every sibling
# before the document's own findings can be published: `read_files` runs at 0.4-0.6 MB/s over
# fixtures/ and the shared corpus (0.2-0.3 MB each, imports included), and 200 manifests of
# 5 KB (1 MiB) beside a 200 KB one made its first lint 0.5 s longer; every later lint of it
# stats the siblings and links their kept objects (0.03-0.05 s more an edit there).  So 1 MiB
# costs 0.5-2 s once, when the document is opened.  A directory of manifests one deploys
# together is far below both (the shared corpus: 66 files, 295 KB in all); a directory of thousands of files is a dump, not a
# file set, and its first files in name order are linked, the rest not read.  Entries looked at
# (files not excluded, whatever their kind) are bounded too: a file whose name does not tell its
# kind is opened to sniff it (kept by its state afterwards), and each is stat'ed at every lint.
MAX_CONTEXT_FILES = 200
MAX_CONTEXT_BYTES = 1 << 20
MAX_CONTEXT_ENTRIES = 2_000
# what `Siblings` keeps across documents and directories: bytes of the texts of the files read
# (a few directories' contexts), then the least recently used dropped
MAX_KEPT_BYTES = 8 * MAX_CONTEXT_BYTES
MAX_KEPT_ENTRIES = 4 * MAX_CONTEXT_ENTRIES


class _Kept:
    """A sibling's reading: what it gave, the state of each side file it read, the reading
    budgets of its texts as they were after it (`_budgets`), a serial number (a lint's context
    is the serial numbers of its siblings' readings) and its cost in bytes."""

    __slots__ = ("outcome", "deps", "budgets", "serial", "cost")

    def __init__(self, outcome: Outcome, deps: tuple[tuple[str, Any], ...],
                 budgets: list[tuple[Any, dict[str, Any]]], serial: int, cost: int) -> None:
        self.outcome = outcome
        self.deps = deps
        self.budgets = budgets
        self.serial = serial
        self.cost = cost


def _texts(result: FileResult) -> list[SourceFile]:
    """The texts whose reading budgets a result's later use may spend: its own, its launches'
    (a followed script, a built Dockerfile) and the files they are joined from."""
    seen: dict[int, SourceFile] = {id(result.source): result.source}
    for la in result.launches:
        seen.setdefault(id(la.source), la.source)
        for _, part in la.source.parts:
            seen.setdefault(id(part), part)
    return list(seen.values())


def _budget_of(src: SourceFile) -> dict[str, Any]:
    b = src.budget
    return {k: (set(getattr(b, k)) if k == "side_seen" else getattr(b, k))
            for k in type(b).__slots__}


def _restore(budgets: list[tuple[Any, dict[str, Any]]]) -> None:
    """The budgets as they were after the reading: a lint spends them (a launch's side files,
    the MG001 reported once a file) as a first run of the file would."""
    for src, values in budgets:
        for k, v in values.items():
            setattr(src.budget, k, set(v) if k == "side_seen" else v)


def _copy(result: FileResult) -> FileResult:
    """A result a run may change (runner._adopt_followed and join_kserve replace and extend its
    lists) without changing the one kept."""
    return FileResult(result.source, list(result.launches), list(result.findings),
                      list(result.services), list(result.hpas), list(result.ignores),
                      list(result.kserve))


class Siblings:
    """Readings of the files beside documents, kept across lints (see the module docstring).
    Used from several threads (the server lints on its worker; it looks at a document's context
    from its event loop): one lint at a time holds ``lock`` from its plan to its end, since a lint
    spends the kept texts' reading budgets (restored before it); what is kept is looked up and
    changed under ``_mutex``, held for a few stats at a time, so that a look at a document's
    context (`context_of`) does not wait for a lint."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._mutex = threading.RLock()
        self._kept: OrderedDict[tuple[Any, ...], _Kept] = OrderedDict()
        self._bytes = 0
        self._serial = 0
        # directory -> (its state, its .gitignore's, the files a walk of it gives)
        self._listings: dict[str, tuple[Any, Any, list[str]]] = {}
        self._sniffed: dict[tuple[str, tuple[int, ...]], str | None] = {}  # the kind by content

    def clear(self) -> None:
        with self._mutex:
            self._kept.clear()
            self._listings.clear()
            self._sniffed.clear()
            self._bytes = 0

    # ---------------------------------------------------------------- the files of a directory

    def _listing(self, directory: str) -> list[str]:
        """The files a walk of ``directory`` (not of its subdirectories) gives, with the excludes
        of the configuration that applies to it (`runner.discover_inputs`, run from there);
        kept while the directory and its `.gitignore` are unchanged (a file added, removed or
        renamed changes the directory)."""
        from .config import find_for_directory
        from .discover import excluder

        before = safeio.state(directory)
        ignore = safeio.state(os.path.join(directory, ".gitignore"))
        held = self._listings.get(directory)
        if held is not None and before is not None and held[0] == before and held[1] == ignore:
            return held[2]
        cfg = find_for_directory(directory)
        s = cfg.settings
        excluded = excluder([*s.exclude, *s.extend_exclude], cfg.root if cfg.path else directory)
        began = time.time_ns()
        files: list[str] = []
        if not (s.force_exclude and excluded(directory)):
            for path in walk(directory, excluded, recursive=False):
                files.append(path)
                if len(files) >= MAX_CONTEXT_ENTRIES:
                    break
        if before is not None and safeio.state(directory) == before and \
                safeio.settled(before, began):
            if len(self._listings) >= 64:
                self._listings.pop(next(iter(self._listings)))
            self._listings[directory] = (before, ignore, files)
        return files

    def _kind(self, path: str, st: tuple[int, ...]) -> str | None:
        """The kind a directory walk gives ``path`` (by name, else by its first bytes)."""
        kind = kind_by_name(path)
        if kind is not None:
            return kind
        key = (path, st)
        if key in self._sniffed:
            return self._sniffed[key]
        began = time.time_ns()
        kind = sniff_file(path)
        if safeio.state(path) == st and safeio.settled(st, began):
            if len(self._sniffed) >= MAX_KEPT_ENTRIES:
                self._sniffed.pop(next(iter(self._sniffed)))
            self._sniffed[key] = kind
        return kind

    def plan(self, directory: str, document: str, skip: tuple[str, ...] = (),
             cancelled: Callable[[], bool] | None = None
             ) -> list[tuple[str, str, tuple[int, ...]]]:
        """The siblings of ``document`` (its path, and ``skip``: the file on disk it stands for)
        to read as its context: (path, kind, state), in the walk's order, within the bounds."""
        with self._mutex:
            return self._plan(directory, document, skip, cancelled)

    def _plan(self, directory: str, document: str, skip: tuple[str, ...],
              cancelled: Callable[[], bool] | None) -> list[tuple[str, str, tuple[int, ...]]]:
        out: list[tuple[str, str, tuple[int, ...]]] = []
        total = 0
        mine = {os.path.normpath(p) for p in (document, *skip)}
        for i, path in enumerate(self._listing(directory)):
            if cancelled is not None and i % 64 == 63 and cancelled():
                raise LintCancelled
            if os.path.normpath(path) in mine:
                continue
            st = safeio.state(path)
            if st is None:
                continue
            kind = self._kind(path, st)
            if kind is None:
                continue
            if total + st[3] > MAX_CONTEXT_BYTES:
                continue  # too large for what is left: the smaller files after it still fit
            total += st[3]
            out.append((path, kind, st))
            if len(out) >= MAX_CONTEXT_FILES:
                break
        return out

    # ---------------------------------------------------------------- a sibling's reading

    def _keep(self, key: tuple[Any, ...], kept: _Kept) -> None:
        if kept.cost > MAX_KEPT_BYTES:
            return
        old = self._kept.pop(key, None)
        if old is not None:
            self._bytes -= old.cost
        while self._kept and (len(self._kept) >= MAX_KEPT_ENTRIES
                              or self._bytes + kept.cost > MAX_KEPT_BYTES):
            self._bytes -= self._kept.popitem(last=False)[1].cost
        self._kept[key] = kept
        self._bytes += kept.cost

    def _valid(self, key: tuple[Any, ...]) -> _Kept | None:
        kept = self._kept.get(key)
        if kept is None:
            return None
        if any(safeio.state(p) != st for p, st in kept.deps):
            del self._kept[key]
            self._bytes -= kept.cost
            return None
        self._kept.move_to_end(key)
        return kept

    @staticmethod
    def _key(path: str, kind: str, st: tuple[int, ...]) -> tuple[Any, ...]:
        from .config import config_for

        table = config_for(path, None).settings.images
        return ("read", path, kind, st, tuple(sorted(table.items())) if table else None)

    def serials(self, planned: list[tuple[str, str, tuple[int, ...]]]) -> tuple[int, ...] | None:
        """The serial numbers of the kept readings of ``planned``, None when one is not kept:
        the same numbers mean the same context as a lint before."""
        with self._mutex:
            return self._serials(planned)

    def _serials(self, planned: list[tuple[str, str, tuple[int, ...]]]
                 ) -> tuple[int, ...] | None:
        out = []
        for path, kind, st in planned:
            kept = self._valid(self._key(path, kind, st))
            if kept is None:
                return None
            out.append(kept.serial)
        return tuple(out)

    def outcome(self, path: str, kind: str, st: tuple[int, ...]) -> Outcome:
        """What reading the sibling gives, kept or read now (`runner.extract_input`, as a
        directory walk reads it: not named on the command line)."""
        from .config import config_for

        key = self._key(path, kind, st)
        with self._mutex:
            kept = self._valid(key)
        if kept is None:
            began = time.time_ns()
            directory = os.path.dirname(path)
            dir_state = safeio.state(directory)
            with safeio.recorded() as reads:
                src, err = read_source(path, kind, MAX_FILE_BYTES)
                outcome = extract_input(src, err, False, lambda p: config_for(p, None))
            deps: list[tuple[str, Any]] = [(path, st), *reads]
            if kind == "dockerfile" or (src is not None and "services" in src.text):
                # a compose file's .env, a build's Dockerfile, an image's entrypoint script are
                # looked for before they are read: one created later changes the directory
                deps.append((directory, dir_state))
            result = outcome[1]
            with self._mutex:
                self._serial += 1
                serial = self._serial
            kept = _Kept(outcome, tuple(dict.fromkeys(deps)),
                         [(s, _budget_of(s)) for s in _texts(result)] if result else [],
                         serial, len(src.text) if src is not None else 64)
            if all(safeio.settled(st, began) for _, st in kept.deps if st is not None) and \
                    all(safeio.state(p) == st for p, st in kept.deps):
                with self._mutex:
                    self._keep(key, kept)
        _restore(kept.budgets)
        err, result = kept.outcome
        return err, _copy(result) if result is not None else None


def lint_in_directory(path: str, text: str, siblings: Siblings, disk: str | None = None,
                      cancelled: Callable[[], bool] | None = None
                      ) -> tuple[list[Finding], tuple[int, ...] | None]:
    """The findings of the document ``text`` at ``path`` (absolute) linted with the files of its
    directory as context (``disk``: the file the document is, when ``path`` is another name for
    it), and the context's serial numbers (`Siblings.serials`).  Holds ``siblings.lock``."""
    from .config import config_for

    def config_of(p: str) -> Any:
        return config_for(p, None)

    with siblings.lock:
        planned = siblings.plan(os.path.dirname(path), path, (disk,) if disk else (), cancelled)
        names = [os.path.basename(p) for p, _, _ in planned]
        states = {p: (kind, st) for p, kind, st in planned}
        found: list[tuple[str, str | None, bool]] = [(p, kind, False) for p, kind, _ in planned]
        found.insert(bisect.bisect_left(names, os.path.basename(path)),
                     (path, kind_by_name(path), True))
        focus = Focus(path, None)

        def outcome_of(p: str, kind: str | None, explicit: bool) -> Outcome:
            if explicit:
                src, err = text_source(path, text, MAX_FILE_BYTES)
                focus.source = src
                return extract_input(src, err, True, config_of)
            if cancelled is not None and cancelled():
                raise LintCancelled
            return siblings.outcome(p, *states[p])

        run: RunResult = lint([], Options(), cancelled=cancelled, found=found,
                              outcome_of=outcome_of, focus=focus)
        return run.findings, siblings.serials(planned)


def context_of(path: str, siblings: Siblings, disk: str | None = None
               ) -> tuple[int, ...] | None:
    """The serial numbers of the kept readings of ``path``'s siblings now (None when one is
    not kept): equal to a lint's (`lint_in_directory`), its findings are still the document's
    for the same text.  It does not wait for a lint (`Siblings._mutex`)."""
    return siblings.serials(siblings.plan(os.path.dirname(path), path, (disk,) if disk else ()))
