"""The pipeline: discover → read → sources → engines → resolve → rules → findings.

Errors are values: an unexpected exception while linting one file becomes an MG000 finding for
that file (an internal error the user should report), never a traceback.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field

from .discover import candidates, kind_by_name, read_source
from .findings import Finding, Severity
from .launch import HpaInfo, Launch, ServiceInfo
from .source import SourceFile, Span
from .sources import FileResult, extract


@dataclass(slots=True)
class RunResult:
    findings: list[Finding] = field(default_factory=list)
    files: list[FileResult] = field(default_factory=list)
    file_count: int = 0

    @property
    def launches(self) -> list[Launch]:
        return [la for f in self.files for la in f.launches]

    @property
    def services(self) -> list[ServiceInfo]:
        return [s for f in self.files for s in f.services]

    @property
    def hpas(self) -> list[HpaInfo]:
        return [h for f in self.files for h in f.hpas]


def internal_error(source: SourceFile, exc: BaseException) -> Finding:
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    loc = f" at {where.filename.rsplit('/', 1)[-1]}:{where.lineno}" if where else ""
    return Finding("MG000", Severity.ERROR,
                   f"internal error while linting this file: {type(exc).__name__}: {exc}{loc}",
                   source, Span(0, 0), hint="please report this with the file attached")


def extract_file(source: SourceFile) -> FileResult:
    try:
        return extract(source)
    except RecursionError as exc:
        result = FileResult(source)
        result.findings.append(internal_error(source, exc))
        return result
    except Exception as exc:  # noqa: BLE001 - errors are values (see module docstring)
        result = FileResult(source)
        result.findings.append(internal_error(source, exc))
        return result


def read_files(paths: list[str], stdin_text: str | None = None,
               stdin_filename: str | None = None, command: str | None = None,
               max_bytes: int | None = None) -> RunResult:
    """Read every input and run the sources on it (no rules yet)."""
    run = RunResult()
    inputs: list[tuple[SourceFile | None, Finding | None, bool]] = []
    if command is not None:
        inputs.append((SourceFile("<command>", command, "command"), None, True))
    for cand in candidates([p for p in paths if p != "-"]):
        kind = kind_by_name(cand.path)
        if kind is None and not cand.explicit:
            # walked files: only known names, or scripts with a shell shebang
            kind = _sniff(cand.path)
            if kind is None:
                continue
        src, err = read_source(cand.path, kind, max_bytes or 10 * 1024 * 1024)
        inputs.append((src, err, cand.explicit))
    if "-" in paths or stdin_text is not None:
        name = stdin_filename or "<stdin>"
        from .discover import decode

        data = (stdin_text or "").encode("utf-8", "surrogateescape")
        src, err = decode(name, data, kind_by_name(name))
        inputs.append((src, err, True))
    for src, err, explicit in inputs:
        run.file_count += 1
        if err is not None:
            run.findings.append(err)
            continue
        assert src is not None
        if src.kind == "unknown":
            if explicit:
                run.findings.append(Finding(
                    "MG017", Severity.INFO,
                    "not a file kind mgpu-lint reads (Kubernetes/compose YAML or JSON, shell "
                    "script, Dockerfile, Markdown); nothing checked", src, Span(0, 0),
                    hint="name the file so its kind shows (.yaml, .sh, Dockerfile, .md) or add a "
                         "shell shebang"))
            continue
        result = extract_file(src)
        run.files.append(result)
        run.findings.extend(result.findings)
        if explicit and not result.launches and not any(
                f.severity is Severity.ERROR or f.code == "MG011" for f in result.findings):
            run.findings.append(Finding(
                "MG017", Severity.INFO,
                "no engine launch found (vllm serve, llama-server, rpc-server); nothing checked",
                src, Span(0, 0)))
    return run


def _sniff(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            head = fh.read(128)
    except OSError:
        return None
    if head.startswith(b"#!"):
        from .discover import kind_by_content

        return kind_by_content(head.decode("utf-8", "replace"))
    return None
