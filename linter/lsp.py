"""Language server (`mgpu-lint server`): diagnostics for open documents, over stdio.

Each open YAML/JSON, shell, Dockerfile or Markdown document is linted from its in-memory text on
open, change and save, through the same pipeline as `mgpu-lint - --stdin-filename PATH` (so the
configuration closest to the file applies, with its suppressions).  The kind comes from the file
name, then a shell shebang, then the editor's language id (for unsaved buffers).  MG017 ("nothing
checked") is left out: an editor opens files the way a directory walk finds them, not by request.

Positions: findings carry code-point offsets; LSP positions are 0-based lines and UTF-16 columns
(or UTF-8/UTF-32 when the client asks for them in `general.positionEncodings`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument

from . import __version__
from .config import CONFIG_NAMES, ConfigError, find_for_directory
from .discover import kind_by_content, kind_by_name
from .findings import Finding, Severity
from .runner import Options, lint
from .source import SourceFile, Span

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


def lint_text(path: str, text: str) -> list[Finding]:
    """Findings for one in-memory document, as the command line reports them for that file."""
    # the editor's text may hold lone surrogates, which have no UTF-8 form; one `?` each keeps
    # every offset
    clean = text.encode("utf-8", "replace").decode("utf-8")
    run = lint([], Options(), stdin_text=clean, stdin_filename=path)
    return [f for f in run.findings if f.code != "MG017"]


class PositionMap:
    """Code-point offsets of one text to LSP positions: 0-based lines, and columns in the code
    units the client and server agreed on at initialisation (UTF-16 unless the client prefers
    UTF-8 or UTF-32)."""

    def __init__(self, text: str, encoding: str = types.PositionEncodingKind.Utf16) -> None:
        self.file = SourceFile("", text)
        self.encoding = encoding

    def units(self, chars: str) -> int:
        if self.encoding == types.PositionEncodingKind.Utf8:
            return len(chars.encode("utf-8", "surrogatepass"))
        if self.encoding == types.PositionEncodingKind.Utf32:
            return len(chars)
        return len(chars) + sum(1 for ch in chars if ord(ch) > 0xFFFF)

    def position(self, offset: int) -> types.Position:
        line, col = self.file.line_col(offset)
        start = self.file.line_starts()[line - 1]
        return types.Position(line=line - 1,
                              character=self.units(self.file.text[start:start + col - 1]))

    def range(self, span: Span, shift: int = 0) -> types.Range:
        return types.Range(start=self.position(span.start + shift),
                           end=self.position(span.end + shift))


def _message(f: Finding) -> str:
    lines = [f.message, *f.math]
    if f.hint:
        lines.append(f"hint: {f.hint}")
    return "\n".join(lines)


def diagnostics(uri: str, text: str, findings: Iterable[Finding], urls: dict[str, str],
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
        out.append(types.Diagnostic(
            range=positions.range(f.span, shift),
            message=_message(f),
            severity=SEVERITIES[f.severity],
            code=f.code,
            code_description=types.CodeDescription(
                href=urls.get(f.code, f"https://mgpu-lint.dev/rules/{f.code}")),
            source=SOURCE,
            related_information=related or None,
        ))
    return out


def create_server() -> LanguageServer:
    from .rules import ALL

    server = LanguageServer(SOURCE, __version__)
    urls = {r.code: r.url for r in ALL}

    def publish(ls: LanguageServer, doc: TextDocument) -> None:
        text = doc.source
        path = lint_path(doc.uri, text, doc.language_id)
        try:
            found = diagnostics(doc.uri, text, lint_text(path, text) if path else [], urls,
                                ls.workspace.position_encoding or types.PositionEncodingKind.Utf16)
        except ConfigError as exc:
            start = types.Position(line=0, character=0)
            found = [types.Diagnostic(range=types.Range(start=start, end=start),
                                      message=f"configuration error: {exc}",
                                      severity=types.DiagnosticSeverity.Error, source=SOURCE)]
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=doc.uri, diagnostics=found, version=doc.version))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        publish(ls, ls.workspace.get_text_document(params.text_document.uri))

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        publish(ls, ls.workspace.get_text_document(params.text_document.uri))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: LanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if os.path.basename(to_fs_path(uri) or "") in CONFIG_NAMES:
            # a configuration changed: every open document may lint differently now
            find_for_directory.cache_clear()
            for doc in list(ls.workspace.text_documents.values()):
                publish(ls, doc)
        else:
            publish(ls, ls.workspace.get_text_document(uri))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: LanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=params.text_document.uri, diagnostics=[]))

    return server


def serve() -> None:
    """Run the language server on stdin/stdout until the client says `exit`."""
    create_server().start_io()
