"""Language server (`mgpu-lint server`): diagnostics for open documents, over stdio.

Each open YAML/JSON, shell, Dockerfile or Markdown document is linted from its in-memory text on
open, change and save, through the same pipeline as the command line (so the configuration
closest to the file applies, with its suppressions), with the files of its directory as context
(linter/context.py): its findings are those `mgpu-lint DIR` reports for it, the editor's text
standing for the file on disk (a Service or HPA in a file beside it links to its launches; a
sibling's own findings are not shown).  The siblings' readings are kept from one lint to the
next while they and the side files they read are unchanged (`SIBLINGS`); a lint's findings are
reused for the same text only while its siblings are the ones it read, and a saved document
lints the open documents beside it again.  A document with no directory (an untitled buffer) is
linted alone, as `mgpu-lint - --stdin-filename PATH`.  The kind comes from the file
name, then a shell shebang, then the editor's language id (for unsaved buffers).  MG017 ("nothing
checked") is left out: an editor opens files the way a directory walk finds them, not by request.

Edits are debounced: a didChange is linted after DEBOUNCE seconds without another change, on one
worker thread.  A run whose document changes meanwhile stops (`runner.lint`'s ``cancelled``
check, asked before each launch is analysed and every `cancel.EVERY` steps of reading; a run
whose text is outdated before it starts does not start) and publishes nothing, so the newer
text's run starts without waiting for the rest of the outdated one.  A codeAction or hover on a
text not linted yet lints it on that worker too (after the run there), so the messages after it
are still read and answered; that lint stops the same way when the document changes, and the
request gets an empty answer (the editor asks again for the new text).  A document whose text did not change is not linted again.  Configuration files are watched
(`workspace/didChangeWatchedFiles`, and saves of open ones): a change re-lints every open
document.  Side files (a --config, a built Dockerfile, a GGUF header, a .env) are kept from one
lint to the next while their state on disk is unchanged (`SIDE_FILES`).  Code actions: each
finding's fix (quick fix), "disable CODE for this line" (a suppression comment on its own line
above, never where the file would take it as content: not inside a multi-line YAML scalar or
shell string, nor in Markdown prose; see `_disable_edit`), and `source.fixAll.mgpu-lint` (every
safe fix).
Hover on a finding, or on a code in a suppression comment, shows the rule's explanation.

Diagnostics: at most `policy.LSP_MAX_DIAGNOSTICS` per document, the most severe first, and one
more that says how many are not shown (`diagnostics_json`; the command line reports them all).
They are published in their JSON form, not as lsprotocol objects (`_converter`).

Positions: findings carry code-point offsets; LSP positions are 0-based lines and UTF-16 columns
(or UTF-8/UTF-32 when the client asks for them in `general.positionEncodings`).
"""

from __future__ import annotations

import asyncio
import bisect
import os
import re
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument

from . import __version__
from .config import CONFIG_NAMES, ConfigError, config_for, find_for_directory
from .discover import kind_by_content, kind_by_name
from .findings import Finding, Severity
from .options import Options
from .policy import GC_YOUNG, LSP_MAX_DIAGNOSTICS
from .runner import LintCancelled, lint
from .safeio import SideCache, side_files
from .context import Siblings, context_of, lint_in_directory
from .source import SourceFile, Span

if TYPE_CHECKING:
    from .rules.registry import Rule

SOURCE = "mgpu-lint"
SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
# editor language id -> a suffix that names the kind (kind_by_name), for buffers with no file name
LANGUAGE_SUFFIXES = {
    "yaml": ".yaml", "json": ".json", "shellscript": ".sh", "dockerfile": ".dockerfile",
    "markdown": ".md",
}


def lint_path(uri: str, text: str, language_id: str | None) -> str | None:
    """The name to lint ``text`` under (its kind shows in it), or None for a kind we do not
    read."""
    path = to_fs_path(uri) or uri.rsplit("/", 1)[-1]
    if kind_by_name(path) or kind_by_content(text):
        return path
    suffix = LANGUAGE_SUFFIXES.get(language_id or "")
    return path + suffix if suffix else None


# side files (--config, config.json, GGUF headers, .env, built Dockerfiles, entrypoint scripts)
# parsed by one lint and reused by the next while the file is unchanged (safeio.SideCache): the
# command line reads them again each run
SIDE_FILES: SideCache | None = SideCache()


# the readings of the files beside each document, kept from one lint to the next while they
# and the side files they read are unchanged (linter/context.py); None: the document alone
SIBLINGS: Siblings | None = Siblings()


def in_directory(path: str) -> bool:
    """Whether the document ``path`` is linted with the files of its directory: a file name
    (not an untitled buffer's) in a directory that exists."""
    return os.path.isabs(path) and os.path.isdir(os.path.dirname(path))


def lint_document(path: str, text: str, cancelled: Callable[[], bool] | None = None,
                  disk: str | None = None) -> tuple[list[Finding], tuple[int, ...] | None]:
    """`lint_text`, and the context it was linted in (`context.Siblings.serials`: None when
    there is none, or it was not kept)."""
    # the editor's text may hold lone surrogates, which have no UTF-8 form; one `?` each keeps
    # every offset
    clean = text.encode("utf-8", "replace").decode("utf-8")
    with side_files(SIDE_FILES):
        if SIBLINGS is not None and in_directory(path):
            found, serials = lint_in_directory(path, clean, SIBLINGS, disk, cancelled)
        else:
            run = lint([], Options(), stdin_text=clean, stdin_filename=path,
                       cancelled=cancelled)
            found, serials = run.findings, None
    return [f for f in found if f.code != "MG017"], serials


def lint_text(path: str, text: str, cancelled: Callable[[], bool] | None = None,
              disk: str | None = None) -> list[Finding]:
    """Findings for one in-memory document, as the command line reports them for that file
    when it lints the document's directory (DECISIONS "The file set": the files beside it are
    its context, linter/context.py; ``disk``: the file the document is when ``path`` is another
    name for it, a suffix added for its kind) or, for a document in no directory, the document
    alone (`LintCancelled` when ``cancelled`` answers True: it is asked while the texts are
    read and before each launch is analysed)."""
    return lint_document(path, text, cancelled, disk)[0]


class PositionMap:
    """Code-point offsets of one text to LSP positions: 0-based lines, and columns in the code
    units the client and server agreed on at initialisation (UTF-16 unless the client prefers
    UTF-8 or UTF-32).

    A column costs O(1) on a line where every character is one unit (all ASCII, or no character
    beyond the BMP in UTF-16), else a lookup in that line's running unit count, made once: many
    findings on one long line cost linear time (counting the line's prefix again for each of
    16,000 findings on a 200 KB line took minutes)."""

    def __init__(self, text: str, encoding: str = types.PositionEncodingKind.Utf16) -> None:
        self.file = SourceFile("", text)
        self.encoding = encoding
        self._lines: dict[int, list[int] | None] = {}  # line -> units before each character

    def units(self, chars: str) -> int:
        if self.encoding == types.PositionEncodingKind.Utf8:
            return len(chars.encode("utf-8", "surrogatepass"))
        if self.encoding == types.PositionEncodingKind.Utf32:
            return len(chars)
        return len(chars) + sum(1 for ch in chars if ord(ch) > 0xFFFF)

    def _running(self, line: int) -> list[int] | None:
        """Units before each character of the 0-based ``line`` (and after its last), or None
        when every character of it is one unit."""
        if line in self._lines:
            return self._lines[line]
        starts = self.file.line_starts()
        text = self.file.text
        begin = starts[line]
        end = starts[line + 1] - 1 if line + 1 < len(starts) else len(text)
        chars = text[begin:end]
        running: list[int] | None = None
        if self.encoding != types.PositionEncodingKind.Utf32 and not chars.isascii() and \
                self.units(chars) != len(chars):
            running = [0]
            total = 0
            for ch in chars:
                total += self.units(ch)
                running.append(total)
        self._lines[line] = running
        return running

    def position(self, offset: int) -> types.Position:
        line, col = self.file.line_col(offset)
        running = self._running(line - 1)
        return types.Position(line=line - 1,
                              character=col - 1 if running is None else running[col - 1])

    def offset(self, pos: types.Position) -> int:
        """The code-point offset of an LSP position (clamped to its line)."""
        starts = self.file.line_starts()
        if pos.line >= len(starts):
            return len(self.file.text)
        start = starts[pos.line]
        end = starts[pos.line + 1] - 1 if pos.line + 1 < len(starts) else len(self.file.text)
        units = 0
        i = start
        while i < end and units < pos.character:
            units += self.units(self.file.text[i])
            i += 1
        return i

    def range(self, span: Span, shift: int = 0) -> types.Range:
        return types.Range(start=self.position(span.start + shift),
                           end=self.position(span.end + shift))

    def json_position(self, offset: int) -> dict[str, int]:
        """`position` as its JSON form (no lsprotocol object)."""
        line, col = self.file.line_col(offset)
        running = self._running(line - 1)
        return {"line": line - 1, "character": col - 1 if running is None else running[col - 1]}

    def json_range(self, span: Span, shift: int = 0) -> dict[str, dict[str, int]]:
        return {"start": self.json_position(span.start + shift),
                "end": self.json_position(span.end + shift)}


def _message(f: Finding) -> str:
    lines = [f.message, *f.math]
    if f.hint:
        lines.append(f"hint: {f.hint}")
    return "\n".join(lines)


def diagnostics(uri: str, text: str, findings: Iterable[Finding], urls: dict[str, str | None],
                encoding: str = types.PositionEncodingKind.Utf16) -> list[types.Diagnostic]:
    """LSP diagnostics for ``findings`` made from ``text`` (the document at ``uri``)."""
    positions = PositionMap(text, encoding)
    shift = 1 if text.startswith("\ufeff") else 0  # the reader drops a byte-order mark
    other: dict[str, PositionMap] = {}
    out = []
    for f in findings:
        related = []
        for r in f.related:
            if r.source.path == f.source.path:
                where = types.Location(uri=uri, range=positions.range(r.span, shift))
            else:
                pm = other.setdefault(r.source.path, PositionMap(r.source.text, encoding))
                where = types.Location(uri=from_fs_path(os.path.abspath(r.source.path)) or "",
                                       range=pm.range(r.span))
            related.append(types.DiagnosticRelatedInformation(location=where, message=r.message))
        href = urls.get(f.code)
        out.append(types.Diagnostic(
            range=positions.range(f.span, shift),
            message=_message(f),
            severity=SEVERITIES[f.severity],
            code=f.code,
            code_description=types.CodeDescription(href=href) if href else None,
            source=SOURCE,
            related_information=related or None,
        ))
    return out


_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def shown(findings: list[Finding], limit: int = LSP_MAX_DIAGNOSTICS) -> list[Finding]:
    """The findings the server publishes: all of them up to ``limit``, else the ``limit`` most
    severe (errors, then warnings, then the rest; position order within each), back in the
    given order."""
    if len(findings) <= limit:
        return findings
    order = sorted(range(len(findings)), key=lambda i: _RANK.get(findings[i].severity, 3))
    return [findings[i] for i in sorted(order[:limit])]


def diagnostics_json(uri: str, text: str, findings: list[Finding],
                     urls: dict[str, str | None],
                     encoding: str = types.PositionEncodingKind.Utf16,
                     limit: int = LSP_MAX_DIAGNOSTICS) -> list[dict[str, object]]:
    """The diagnostics the server publishes for ``findings`` of ``text`` (the document at
    ``uri``), in their JSON form: `diagnostics` for at most ``limit`` of them (`shown`), and
    when there are more, one more diagnostic (information, at the first finding left out) that
    says how many are not shown."""
    positions = PositionMap(text, encoding)
    shift = 1 if text.startswith("\ufeff") else 0  # the reader drops a byte-order mark
    other: dict[str, PositionMap] = {}
    picked = shown(findings, limit)
    out: list[dict[str, object]] = []
    for f in picked:
        diag: dict[str, object] = {
            "range": positions.json_range(f.span, shift), "message": _message(f),
            "severity": SEVERITIES[f.severity].value, "code": f.code, "source": SOURCE}
        href = urls.get(f.code)
        if href:
            diag["codeDescription"] = {"href": href}
        related = []
        for r in f.related:
            if r.source.path == f.source.path:
                where = {"uri": uri, "range": positions.json_range(r.span, shift)}
            else:
                pm = other.setdefault(r.source.path, PositionMap(r.source.text, encoding))
                where = {"uri": from_fs_path(os.path.abspath(r.source.path)) or "",
                         "range": pm.json_range(r.span)}
            related.append({"location": where, "message": r.message})
        if related:
            diag["relatedInformation"] = related
        out.append(diag)
    if len(picked) < len(findings):
        kept = {id(f) for f in picked}
        first = next(f for f in findings if id(f) not in kept)
        more = len(findings) - len(picked)
        out.append({
            "range": positions.json_range(first.span, shift),
            "message": f"{more:,} more findings in this file are not shown here (the first "
                       f"{len(picked):,}, most severe first, are); the command line lists "
                       "them all",
            "severity": types.DiagnosticSeverity.Information.value, "source": SOURCE})
    return out


def _converter():  # type: ignore[no-untyped-def]
    """pygls' converter, except that publishDiagnostics params may also be given as their JSON
    form (a dict, sent as it is): building lsprotocol objects for thousands of diagnostics and
    unstructuring them again cost more than the lint of a 200 KB document."""
    from pygls.protocol import default_converter

    converter = default_converter()
    base = converter.get_unstructure_hook(types.PublishDiagnosticsParams)
    converter.register_unstructure_hook(
        types.PublishDiagnosticsParams,
        lambda params: params if isinstance(params, dict) else base(params))
    return converter


# seconds of quiet after a change before it is linted.  Each is a tenth of a second of the 1 s
# that issue 20 gives an answer on a 200 KB document, whose lint alone can take 0.8 s; a run
# started for a text typed on stops within a few milliseconds (the check every cancel.EVERY
# steps of reading and before each launch), so a short quiet wastes little
DEBOUNCE = 0.1
FIX_ALL = "source.fixAll.mgpu-lint"
# file kinds whose comment syntax is `#` (JSON has none: no "disable" action there)
_DIRECTIVE_CODE = re.compile(r"#\s*mgpu-lint:\s*disable(?:-file)?\s*=\s*([A-Za-z0-9, ]+)")


class _State:
    """Per-document lint results: the text they were made from and its findings."""

    def __init__(self) -> None:
        # uri -> (text, its findings, the context's serial numbers, linted with a context)
        self.linted: dict[str, tuple[str, list[Finding], tuple[int, ...] | None, bool]] = {}
        # where "disable" comments go, for the findings list it was made for (`CommentPlaces`)
        self.places: dict[str, tuple[list[Finding], CommentPlaces]] = {}
        self.generation: dict[str, int] = {}
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mgpu-lint")
        # what tests read through workspace/executeCommand `mgpu-lint.stats`: lints started,
        # and the recent events of the runs on the worker [event, uri, version, checks asked]
        self.runs = 0
        self.log: deque[list[object]] = deque(maxlen=64)
        self.running: list[object] | None = None  # [uri, version, checks asked so far]


def _paths(doc: TextDocument, text: str) -> tuple[str | None, str | None]:
    """The name ``doc``'s ``text`` is linted under (`lint_path`), and the file on disk it is
    when that name is another (a suffix added for its kind)."""
    path = lint_path(doc.uri, text, doc.language_id)
    disk = to_fs_path(doc.uri)
    return path, disk if disk != path else None


def _cached(state: _State, doc: TextDocument, text: str) -> list[Finding] | None:
    """``doc``'s findings of the last lint, when that was of ``text`` and its context (the
    files beside it, as the lint read them) is as it was (a stat of each)."""
    cached = state.linted.get(doc.uri)
    if cached is None or cached[0] != text:
        return None
    if cached[2] is not None:
        path, disk = _paths(doc, text)
        if path is None or SIBLINGS is None or context_of(path, SIBLINGS, disk) != cached[2]:
            return None
    elif cached[3]:
        return None  # linted with a context that was not kept: read it again
    return cached[1]


def _lint_doc(state: _State, doc: TextDocument, text: str | None = None,
              cancelled: Callable[[], bool] | None = None) -> list[Finding]:
    """``doc``'s findings for ``text`` (its current text by default), from the cache when that
    text was linted last in the same context; a cancelled run caches nothing."""
    text = doc.source if text is None else text
    hit = _cached(state, doc, text)
    if hit is not None:
        return hit
    path, disk = _paths(doc, text)
    state.runs += 1
    # the comment places of the text linted before are of no use now, and may be large (a
    # 9.5 MB YAML text composed: 445 MB): let them go before this lint, not at the next
    # codeAction after it
    state.places.pop(doc.uri, None)
    found, serials = lint_document(path, text, cancelled, disk) if path else ([], None)
    state.linted[doc.uri] = (text, found, serials,
                             bool(path and SIBLINGS is not None and in_directory(path)))
    return found


def create_server() -> LanguageServer:
    from .rules import ALL

    server = LanguageServer(SOURCE, __version__, converter_factory=_converter)
    rules = {r.code: r for r in ALL}
    state = _State()
    links: dict[str | None, dict[str, str | None]] = {}  # docs-url -> code -> link

    def urls_for(doc: TextDocument) -> dict[str, str | None]:
        """Each rule's link for ``doc``: the ``docs-url`` of the configuration closest to it,
        else the rule page shipped with the package (report/rule_pages.py)."""
        path = to_fs_path(doc.uri)
        try:
            docs_url = config_for(path or "<stdin>", None).settings.docs_url
        except ConfigError:
            docs_url = None
        if docs_url not in links:
            links[docs_url] = {code: r.url(docs_url) for code, r in rules.items()}
        return links[docs_url]

    def encoding(ls: LanguageServer) -> str:
        return ls.workspace.position_encoding or types.PositionEncodingKind.Utf16

    def send(ls: LanguageServer, doc: TextDocument, text: str, findings: list[Finding],
             version: int | None) -> None:
        found = diagnostics_json(doc.uri, text, findings, urls_for(doc), encoding(ls))
        params: dict[str, object] = {"uri": doc.uri, "diagnostics": found}
        if version is not None:
            params["version"] = version
        # the JSON form as it is (`_converter`), not lsprotocol objects
        ls.text_document_publish_diagnostics(params)  # type: ignore[arg-type]

    def publish(ls: LanguageServer, doc: TextDocument) -> None:
        try:
            findings = _lint_doc(state, doc)
        except ConfigError as exc:
            start = types.Position(line=0, character=0)
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=doc.uri, version=doc.version, diagnostics=[types.Diagnostic(
                    range=types.Range(start=start, end=start),
                    message=f"configuration error: {exc}",
                    severity=types.DiagnosticSeverity.Error, source=SOURCE)]))
            return
        send(ls, doc, doc.source, findings, doc.version)

    async def findings_of(doc: TextDocument, text: str) -> list[Finding] | None:
        """``doc``'s findings for ``text``, for a request: the last lint's when it was of that
        text, else a lint on the worker, so that the requests after this one are read and
        answered meanwhile (pygls runs a plain handler inline on its one event loop: a lint
        there held back every later message, a hover of another document, a cancel).  None
        when the document changes before that lint is done: it stops (as a debounced run
        does), and the request is answered with nothing.  An editor asks for code actions
        after each edit; each of those lints ran to its end, in turn, before the debounced
        run of the last text (four edits 0.12 s apart on 200 KB: its diagnostics 2.4-3 s
        after it)."""
        hit = _cached(state, doc, text)
        if hit is not None:
            return hit
        gen = state.generation.get(doc.uri, 0)

        def changed() -> bool:
            return state.generation.get(doc.uri, 0) != gen

        def work() -> list[Finding]:
            if changed():
                raise LintCancelled  # outdated while it waited for the worker
            return _lint_doc(state, doc, text, changed)

        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(state.executor, work)
        except LintCancelled:
            return None

    def relint_all(ls: LanguageServer) -> None:
        find_for_directory.cache_clear()
        links.clear()
        if SIBLINGS is not None:
            SIBLINGS.clear()  # the excludes and `[images]` tables they were read with
        state.linted.clear()
        state.places.clear()
        for doc in list(ls.workspace.text_documents.values()):
            schedule(ls, doc.uri)

    @server.feature(types.INITIALIZED)
    def initialized(ls: LanguageServer, params: types.InitializedParams) -> None:
        caps = ls.client_capabilities.workspace
        watched = caps.did_change_watched_files if caps else None
        if watched is not None and watched.dynamic_registration:
            ls.client_register_capability(types.RegistrationParams(registrations=[
                types.Registration(
                    id="mgpu-lint-config", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[
                        types.FileSystemWatcher(glob_pattern=f"**/{name}")
                        for name in CONFIG_NAMES]))]))

    def next_generation(uri: str) -> int:
        """A new generation of ``uri``'s text: a run of an older one stops and publishes
        nothing."""
        gen = state.generation[uri] = state.generation.get(uri, 0) + 1
        return gen

    def schedule(ls: LanguageServer, uri: str) -> None:
        """Lint ``uri``'s text on the worker and publish, as a change does but without its
        quiet period: a document opened, saved or beside one saved, or every open one when a
        configuration changes.  Linted inline on the event loop (pygls's one thread), an open
        of a 200 KB document with its directory read as context held every later message for
        about a second, an edit typed just after it too."""
        gen = next_generation(uri)
        asyncio.ensure_future(relint(ls, uri, gen))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        gen = next_generation(uri)
        await relint(ls, uri, gen)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        gen = next_generation(uri)
        await asyncio.sleep(DEBOUNCE)
        if state.generation.get(uri) != gen:
            return  # a newer change arrived during the quiet period: its own run lints it
        await relint(ls, uri, gen)

    async def relint(ls: LanguageServer, uri: str, gen: int) -> None:
        """Lint the document's text of generation ``gen`` on the worker and publish its
        diagnostics, unless a newer generation (a change) is asked for meanwhile."""
        if state.generation.get(uri) != gen:
            return
        doc = ls.workspace.text_documents.get(uri)
        if doc is None:
            return  # closed meanwhile
        text, version = doc.source, doc.version
        hit = _cached(state, doc, text)
        if hit is not None:
            send(ls, doc, text, hit, version)
            return
        run: list[object] = [uri, version, 0]

        def stale() -> bool:
            """Asked by the lint while it reads and before each launch (on the worker
            thread): has the document changed since this run's text?"""
            run[2] += 1  # type: ignore[operator]
            return state.generation.get(uri) != gen

        def work() -> list[Finding]:
            if state.generation.get(uri) != gen:
                # outdated while it waited for the worker (behind a run of another text)
                state.log.append(["dropped", *run])
                raise LintCancelled
            state.running = run
            state.log.append(["start", *run])
            try:
                return _lint_doc(state, doc, text, stale)
            except LintCancelled:
                # logged here, on the worker, so the log's order is the worker's order
                state.log.append(["cancelled", *run])
                raise
            finally:
                state.running = None

        loop = asyncio.get_running_loop()
        try:
            findings = await loop.run_in_executor(state.executor, work)
        except LintCancelled:
            return  # the document changed while this ran: the newer text's run publishes
        except ConfigError:
            publish(ls, doc)
            return
        if state.generation.get(uri) != gen:
            state.log.append(["stale", *run])
            return  # changed after the last launch was checked
        state.log.append(["done", *run])
        send(ls, doc, text, findings, version)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: LanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if os.path.basename(to_fs_path(uri) or "") in CONFIG_NAMES:
            # a configuration changed: every open document may lint differently now
            relint_all(ls)
        else:
            schedule(ls, uri)
            # the open documents beside it have it as context: each is linted again when the
            # file it read is no longer the one on disk (`_cached`)
            folder = os.path.dirname(to_fs_path(uri) or "")
            for doc in list(ls.workspace.text_documents.values()):
                if doc.uri != uri and folder and \
                        os.path.dirname(to_fs_path(doc.uri) or "") == folder:
                    schedule(ls, doc.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: LanguageServer,
                           params: types.DidChangeWatchedFilesParams) -> None:
        if any(os.path.basename(to_fs_path(c.uri) or c.uri) in CONFIG_NAMES
               for c in params.changes):
            relint_all(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: LanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        state.linted.pop(params.text_document.uri, None)
        state.places.pop(params.text_document.uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=params.text_document.uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]))
    async def code_action(ls: LanguageServer,
                          params: types.CodeActionParams) -> list[types.CodeAction]:
        doc = ls.workspace.get_text_document(params.text_document.uri)
        text = doc.source
        findings = await findings_of(doc, text)
        if findings is None:
            return []  # the document changed meanwhile: the editor asks again
        held = state.places.get(doc.uri)
        if held is None or held[0] is not findings:
            held = state.places[doc.uri] = (findings, CommentPlaces())
        places = held[1]
        positions = PositionMap(text, encoding(ls))
        shift = 1 if text.startswith("\ufeff") else 0
        only = params.context.only
        out: list[types.CodeAction] = []

        def edit(edits: list[tuple[Span, str]]) -> types.WorkspaceEdit:
            return types.WorkspaceEdit(changes={doc.uri: [
                types.TextEdit(range=positions.range(sp, shift), new_text=t) for sp, t in edits]})

        if only is None or any(k.startswith(types.CodeActionKind.Source) for k in only):
            from .fixes import apply

            safe = [f.fix for f in findings if f.fix is not None and f.fix.safe]
            _, chosen = apply(text, safe)  # type: ignore[arg-type]
            if chosen:
                out.append(types.CodeAction(
                    title="mgpu-lint: fix all safe problems", kind=FIX_ALL,
                    edit=edit([(e.span, e.text) for fx in chosen for e in fx.edits])))
        if only is not None and not any(k.startswith(types.CodeActionKind.QuickFix)
                                        for k in only):
            return out
        want = params.range
        urls = urls_for(doc)
        here = []
        for f in findings:
            r = positions.json_range(f.span, shift)
            if (r["end"]["line"], r["end"]["character"]) >= \
                    (want.start.line, want.start.character) and \
                    (r["start"]["line"], r["start"]["character"]) <= \
                    (want.end.line, want.end.character):
                here.append(f)
        for f, diag in zip(here, diagnostics(doc.uri, text, here, urls, encoding(ls))):
            if f.fix is not None:
                out.append(types.CodeAction(
                    title=f"{f.fix.title} ({f.code})" + ("" if f.fix.safe else " [unsafe]"),
                    kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                    is_preferred=f.fix.safe or None,
                    edit=edit([(e.span, e.text) for e in f.fix.edits])))
            disable = _disable_edit(f, places)
            if disable is not None:
                out.append(types.CodeAction(
                    title=f"Disable {f.code} for this line", kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag], edit=edit([disable])))
        return out

    @server.command("mgpu-lint.stats")
    def stats(ls: LanguageServer, *args: object) -> dict[str, object]:
        """How many lints ran (what the debounce saves shows in it), the debounced run now on
        the worker ([uri, version, checks asked] or None) and the recent runs' events
        ([event, uri, version, checks asked]: dropped, start, cancelled, stale, done; a lint
        asks once its text is read, before each launch and every `cancel.EVERY` steps of
        reading)."""
        running = state.running
        return {"runs": state.runs, "running": list(running) if running else None,
                "log": [list(e) for e in state.log]}

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: LanguageServer, params: types.HoverParams) -> types.Hover | None:
        doc = ls.workspace.get_text_document(params.text_document.uri)
        text = doc.source
        positions = PositionMap(text, encoding(ls))
        offset = positions.offset(params.position)
        shift = 1 if text.startswith("\ufeff") else 0
        at = offset - shift
        # a code in a suppression comment
        line_start = text.rfind("\n", 0, offset) + 1
        line_end = text.find("\n", offset)
        line_end = len(text) if line_end == -1 else line_end
        for m in _DIRECTIVE_CODE.finditer(text, line_start, line_end):
            for c in re.finditer(r"[A-Za-z0-9]+", m.group(1)):
                s0, e0 = m.start(1) + c.start(), m.start(1) + c.end()
                if s0 <= offset <= e0:
                    code = c.group().upper()
                    matches = [r for k, r in sorted(rules.items()) if k.startswith(code)]
                    if not matches:
                        return None
                    urls = urls_for(doc)
                    value = "\n\n---\n\n".join(_rule_markdown(r, urls) for r in matches[:5])
                    return types.Hover(contents=types.MarkupContent(
                        kind=types.MarkupKind.Markdown, value=value),
                        range=types.Range(start=positions.position(s0),
                                          end=positions.position(e0)))
        findings = await findings_of(doc, text)
        if findings is None:
            return None  # the document changed meanwhile
        found = [f for f in findings if f.span.start <= at <= f.span.end]
        if not found:
            return None
        parts = []
        urls = urls_for(doc)
        for f in found[:3]:
            r = rules.get(f.code)
            head = f"**{f.code}** {f.message}"
            parts.append(head + ("\n\n" + _rule_markdown(r, urls) if r else ""))
        return types.Hover(contents=types.MarkupContent(
            kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)))

    return server


def _rule_markdown(r: Rule, urls: dict[str, str | None]) -> str:
    text = f"### {r.code} {r.name}\n\n{r.summary}\n\n{r.explanation or ''}"
    href = urls.get(r.code)
    return f"{text}\n\n[{r.code}]({href})" if href else text


class CommentPlaces:
    """Where "disable" comments can go for one lint's findings: each text a finding is in is
    read once (one tokenisation of a shell text, one composition of a YAML text, one scan of a
    Markdown file's fences), on the first finding that asks, and kept with the lint's findings
    (`_State.places`).  Reading the text again for each finding made a codeAction over a whole
    200 KB document take 15-70 s (a prefix tokenisation or a composition per finding)."""

    def __init__(self) -> None:
        self._texts: dict[int, tuple[SourceFile, _TextPlaces]] = {}

    def of(self, src: SourceFile) -> _TextPlaces:
        held = self._texts.get(id(src))
        if held is None or held[0] is not src:
            held = self._texts[id(src)] = (src, _TextPlaces(src))
        return held[1]


def _disable_edit(f: Finding, places: CommentPlaces) -> tuple[Span, str] | None:
    """A `# mgpu-lint: disable=CODE` line above the finding's line, at its indentation; above
    the first line of a backslash-continued command (a comment cannot sit inside one); for a
    line inside a multi-line YAML scalar (a `sh -c` block, where a `#` line would become part
    of the script), above the container's `name:` line, which suppressions also read for the
    launch's findings.  In Markdown, the same inside the fenced YAML or shell block.  None
    (no action rather than a comment the file would take as content) for JSON, which has no
    comments, for findings at no line (file-level), for a multi-line scalar outside a named
    list item, for a shell line that starts inside a quoted string, a command substitution or
    a here-document, after an unbalanced quote, and in Markdown outside a YAML or plain shell
    block (prose, where `#` is a heading; a console transcript, where `# ` is a root
    prompt)."""
    src = f.source
    if src.path.endswith(".json") or not src.text:
        return None
    line, _ = src.line_col(f.span.start)
    here = places.of(src)
    if src.kind == "markdown":
        found = here.markdown_comment_line(f.span.start, line)
    else:
        found = here.comment_line(src.kind, f.span.start, line)
    if found is None:
        return None
    text = src.line_text(found)
    indent = text[:len(text) - len(text.lstrip())]
    start = src.line_starts()[found - 1]
    return Span(start, start), f"{indent}# mgpu-lint: disable={f.code}\n"


class _TextPlaces:
    """`CommentPlaces` for one text (a file's, or a Markdown block's body); each part is made
    on first use."""

    def __init__(self, src: SourceFile) -> None:
        self.src = src
        self._first: dict[int, int] = {}  # line -> first line of the continued command
        self._shell: bytearray | None = None
        self._yaml: _YamlTree | None = None
        self._blocks: _MarkdownBlocks | None = None

    def comment_line(self, kind: str, offset: int, line: int) -> int | None:
        """The 1-based line of the text (YAML or shell, or a Dockerfile) above which a
        suppression comment for ``offset`` on ``line`` can go, or None."""
        if kind == "yaml":
            if self._yaml is None:
                self._yaml = _YamlTree(self.src.text)
            anchor = self._yaml.anchor_line(offset, line)
            if anchor is False:
                return None
            line = anchor or line
        line = self.continued_from(line)
        if kind == "shell" and not self.shell_line_free(line):
            return None
        return line

    def continued_from(self, line: int) -> int:
        """The first line of the backslash-continued command ``line`` is in (``line`` itself
        when the line above does not end in a backslash); each line is walked once for all
        findings (a 100,000-line continued command with a finding per line stays linear)."""
        walked = []
        text = self.src.line_text
        while line > 1 and line not in self._first and text(line - 1).rstrip().endswith("\\"):
            walked.append(line)
            line -= 1
        top = self._first.get(line, line)
        for w in walked:
            self._first[w] = top
        return top

    def shell_line_free(self, line: int) -> bool:
        """Whether the 1-based ``line`` of the shell text starts outside every quoted string,
        `$(…)`, backquote, `${…}` and here-document body, with no unbalanced quote before it:
        a line written there is a line of the script, not part of a word."""
        if self._shell is None:
            self._shell = _shell_lines_taken(self.src)
        return not self._shell[line - 1]

    def markdown_comment_line(self, offset: int, line: int) -> int | None:
        """``comment_line`` inside the fenced block holding ``offset`` (a YAML block, or a
        shell block without `$ ` prompts), mapped back to the Markdown file's lines; None
        elsewhere."""
        if self._blocks is None:
            self._blocks = _MarkdownBlocks(self.src.text)
        return self._blocks.comment_line(offset, line)


def _shell_lines_taken(src: SourceFile) -> bytearray:
    """1 for each line of the shell text ``src`` that starts inside a word (a multi-line
    quoted string, `$(…)`, backquote or `${…}`), after an unbalanced quote (the shell reads
    the rest of the text as the quoted word) or in a here-document body; from one
    tokenisation (a token's lexing does not depend on the text after it) and one split."""
    from .shell import _tokens, split_commands

    text = src.text
    starts = src.line_starts()
    taken = bytearray(len(starts))

    def take(first: int, last: int) -> None:  # the lines with index first … last - 1
        if first < last:
            taken[first:last] = b"\x01" * (last - first)

    for ttype, value, start in _tokens(text):
        if ttype == "BAD_QUOTE":
            take(bisect.bisect_right(starts, start), len(starts))
            break
        if "\n" in value and ttype in ("SQ", "DQ", "ANSI", "CMDSUB", "BACKTICK", "PARAM"):
            # lines starting strictly inside the token (one starting at its end is free)
            take(bisect.bisect_right(starts, start), bisect.bisect_left(starts, start + len(value)))
    if "<<" in text:
        for cmd in split_commands(text):
            for body in cmd.heredocs:  # a line starting at its end too (the terminator's)
                take(bisect.bisect_left(starts, body.start), bisect.bisect_right(starts, body.end))
    return taken


class _MarkdownBlocks:
    """A Markdown text's fenced blocks (one scan), each block's body as its own text with its
    own `_TextPlaces`, made when a finding in it first asks."""

    def __init__(self, text: str) -> None:
        from .sources import markdown as md

        self.text = text
        lines, self.offsets = md._lines(text)
        self.fences: list[int] = []  # opening fence line (0-based), in order
        self.blocks: list[tuple[str | None, int]] = []  # (kind or None, closing fence line)
        for lang, body, fence, close in md._blocks(lines, self.offsets):
            kind: str | None = None
            if lang in md.YAML_LANGS:
                kind = "yaml"
            elif (lang in md.SHELL_LANGS or not lang) and lang not in md._CONSOLE and \
                    not any(md._PROMPT.match(b) for _, b in body):
                kind = "shell"
            self.fences.append(fence)
            self.blocks.append((kind, close))
        self._bodies: dict[int, _TextPlaces] = {}

    def comment_line(self, offset: int, line: int) -> int | None:
        # the body lines of a block are fence+2 … close (1-based); blocks follow one another
        # without overlapping, so the one holding ``line`` is the last opening at line-2 or
        # before
        i = bisect.bisect_right(self.fences, line - 2) - 1
        if i < 0:
            return None
        fence = self.fences[i]
        kind, close = self.blocks[i]
        if line > close or kind is None:
            return None
        text, offsets = self.text, self.offsets
        begin = offsets[fence + 1] if fence + 1 < len(offsets) else len(text)
        body = self._bodies.get(i)
        if body is None:
            end = offsets[close] if close < len(offsets) else len(text)
            body = self._bodies[i] = _TextPlaces(SourceFile("<block>", text[begin:end], kind))
        found = body.comment_line(kind, offset - begin, line - fence - 1)
        return None if found is None else found + fence + 1


class _YamlTree:
    """A YAML text composed once, to find the scalar holding an offset (`anchor_line`)."""

    def __init__(self, text: str) -> None:
        from .yamlsrc import YamlError, compose_documents

        self.roots: list[object] | None
        try:
            self.roots = list(compose_documents(text))
        except (YamlError, RecursionError):
            self.roots = None
        # id(parent) -> its children's (starts, ends) when they follow one another in the text
        # without overlapping, else None (an alias is its anchor's node, elsewhere)
        self._children: dict[int, tuple[list[int], list[int]] | None] = {}
        self._flats: dict[int, list[object]] = {}  # id(mapping) -> k0, v0, k1, v1, …
        self._named: dict[int, int | None] = {}  # id(list item) -> line of its `name:` key

    def _first_holding(self, parent: object, nodes: list[object], offset: int) -> int | None:
        """The index of the first of ``nodes`` (the children of ``parent``, in order) whose
        span holds ``offset``; a binary search when their spans are in order."""
        key = id(parent)
        if key not in self._children:
            starts = [n.start_mark.index for n in nodes]  # type: ignore[attr-defined]
            ends = [max(n.end_mark.index, s + 1)  # type: ignore[attr-defined]
                    for n, s in zip(nodes, starts)]
            ordered = all(ends[i] <= starts[i + 1] for i in range(len(nodes) - 1))
            self._children[key] = (starts, ends) if ordered else None
        found = self._children[key]
        if found is None:
            return next((i for i, n in enumerate(nodes) if _holds(n, offset)), None)
        starts, ends = found
        i = bisect.bisect_right(starts, offset) - 1
        return i if i >= 0 and offset < ends[i] else None

    def anchor_line(self, offset: int, line: int) -> int | None | bool:
        """None when ``line`` (1-based, holding ``offset``) is an ordinary YAML line; when the
        scalar holding ``offset`` began on an earlier line, the line of the ``name`` key of the
        innermost list item holding it, or False when there is none (or the text does not
        compose)."""
        if self.roots is None:
            return False
        i = self._first_holding(self, self.roots, offset)
        if i is None:
            return None
        named: int | None = None
        node: object | None = self.roots[i]
        steps = 0
        while node is not None and steps < 200:
            steps += 1
            if node.id == "scalar":  # type: ignore[attr-defined]
                if node.start_mark.line + 1 >= line:  # type: ignore[attr-defined]
                    return None
                return named if named is not None else False
            nxt = None
            if node.id == "mapping":  # type: ignore[attr-defined]
                # keys and values in order: the first holding ``offset``
                flat = self._flat(node)
                j = self._first_holding(flat, flat, offset)  # type: ignore[arg-type]
                if j is not None:
                    if j % 2 == 0:
                        return None
                    nxt = flat[j]
            else:
                items = node.value  # type: ignore[attr-defined]
                j = self._first_holding(node, items, offset)
                if j is not None:
                    item = items[j]
                    if item.id == "mapping":
                        named = self._name_line(item, named)
                    nxt = item
            node = nxt
        return None

    def _flat(self, mapping: object) -> list[object]:
        """A mapping's keys and values in order (k0, v0, k1, v1, …), the same list each time
        (it keys its children's index)."""
        flat = self._flats.get(id(mapping))
        if flat is None:
            flat = self._flats[id(mapping)] = [
                n for pair in mapping.value for n in pair]  # type: ignore[attr-defined]
        return flat

    def _name_line(self, item: object, named: int | None) -> int | None:
        """The line of the list item mapping's (last) `name:` key with a scalar value, else
        ``named`` (the enclosing item's)."""
        if id(item) not in self._named:
            line = None
            for k, v in item.value:  # type: ignore[attr-defined]
                if k.id == "scalar" and k.value == "name" and v.id == "scalar":
                    line = k.start_mark.line + 1
            self._named[id(item)] = line
        own = self._named[id(item)]
        return named if own is None else own


def _holds(node: object, offset: int) -> bool:
    start = node.start_mark.index  # type: ignore[attr-defined]
    return start <= offset < max(node.end_mark.index, start + 1)  # type: ignore[attr-defined]


def serve() -> None:
    """Run the language server on stdin/stdout until the client says `exit`."""
    import gc

    gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])
    create_server().start_io()
