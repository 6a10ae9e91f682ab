"""Command line: `mgpu-lint [check] PATH…` and the sub-commands.

The lint path (`mgpu-lint PATH…`, `mgpu-lint check PATH…`) is parsed with argparse and imports
only what linting needs, so one small file in CI or a pre-commit hook starts fast.  The other
sub-commands (`rules`, `rule`, `plan`, `layers`, `launches`, `server`) are a typer app.  A path
that is also a sub-command name is linted when it exists as a file.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

SUBCOMMANDS = ("rules", "rule", "plan", "layers", "launches", "server")
FORMATS = ("text", "json", "sarif", "github")
SEVERITIES = ("error", "warning", "info")


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors, the same shape as the sub-commands' errors."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {message} (see `{self.prog} --help`)", file=sys.stderr)
        raise SystemExit(2)


def _lint_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="mgpu-lint",
        description="Lint the launch commands of multi-GPU LLM inference servers (vLLM, "
                    "llama.cpp) in Kubernetes YAML, compose files, shell scripts, Dockerfiles "
                    "and Markdown. Other commands: " + ", ".join(SUBCOMMANDS) +
                    " (mgpu-lint COMMAND --help).",
    )
    p.add_argument("paths", nargs="*", help="files or directories to lint; - reads stdin")
    p.add_argument("--format", choices=FORMATS, default=None, help="output format (text)")
    p.add_argument("--select", default=None, help="comma-separated codes or prefixes (MG1)")
    p.add_argument("--ignore", default=None, help="comma-separated codes or prefixes to skip")
    p.add_argument("--extend-select", default=None, help="codes to add to the selection")
    p.add_argument("--config", default=None, help="configuration file (TOML)")
    p.add_argument("--gpu", default=None, help="GPU type when no file states it (H100 SXM)")
    p.add_argument("--gpus-per-node", type=int, default=None, help="GPUs per node (8)")
    p.add_argument("--fail-on", choices=SEVERITIES, default=None,
                   help="lowest severity that fails the run (warning)")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    p.add_argument("--stdin-filename", default=None, help="name (and kind) of the stdin text")
    p.add_argument("--command", dest="command_text", default=None,
                   help="lint one command line, e.g. 'vllm serve MODEL -tp 4'")
    p.add_argument("--target-version", default=None,
                   help="engine release when no file pins one (vllm==0.30.0)")
    p.add_argument("--statistics", action="store_true", help="count findings per code")
    p.add_argument("--no-color", action="store_true", help="never colour the output")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the findings")
    return p


def _codes(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def lint_main(argv: Sequence[str]) -> int:
    parser = _lint_parser()
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    if not args.paths and args.command_text is None:
        print("mgpu-lint: error: give a PATH, - (stdin) or --command (see `mgpu-lint --help`)",
              file=sys.stderr)
        return 2
    from .config import ConfigError, find_for_directory, load_file, normalise_target_version
    from .findings import Severity
    from .runner import Options, lint

    try:
        explicit = load_file(args.config) if args.config else None
        cwd_config = explicit or find_for_directory(os.getcwd())
        target = normalise_target_version(args.target_version) if args.target_version else None
    except (ConfigError, ValueError) as exc:
        print(f"mgpu-lint: error: {exc}", file=sys.stderr)
        return 2
    if args.gpu is not None:
        from .catalog.knowledge import gpu_names, resolve_gpu

        if resolve_gpu(args.gpu) is None:
            print(f"mgpu-lint: error: unknown GPU {args.gpu!r}; known: {', '.join(gpu_names())}",
                  file=sys.stderr)
            return 2
    options = Options(select=_codes(args.select), ignore=_codes(args.ignore),
                      extend_select=_codes(args.extend_select), gpu=args.gpu,
                      gpus_per_node=args.gpus_per_node, target_version=target, config=explicit)
    stdin_text = None
    if "-" in args.paths:
        stdin_text = sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
    for p in args.paths:
        if p != "-" and not os.path.exists(p):
            print(f"mgpu-lint: error: {p}: no such file or directory", file=sys.stderr)
            return 2
    try:
        run = lint(args.paths, options, stdin_text, args.stdin_filename, args.command_text)
    except ConfigError as exc:
        print(f"mgpu-lint: error: {exc}", file=sys.stderr)
        return 2
    findings = run.findings
    summary = {
        "findings": len(findings),
        "files": run.file_count,
        "launches": len(run.launches),
        "by_severity": {s.value: sum(1 for f in findings if f.severity is s)
                        for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)},
    }
    fmt = args.format or "text"
    out = sys.stdout
    if fmt == "json":
        from .report.json_report import render as render_json

        out.write(render_json(findings, summary, _rule_names()))
    elif fmt == "sarif":
        from .report.sarif import render as render_sarif
        from .rules import ALL

        out.write(render_sarif(findings, ALL))
    elif fmt == "github":
        from .report.github import render as render_github

        out.write(render_github(findings))
    else:
        from .report.text import render as render_text

        color = not args.no_color and out.isatty() and "NO_COLOR" not in os.environ
        text = render_text(findings, summary, color=color, statistics=args.statistics)
        if args.quiet:
            text = text.rsplit("\n\n", 1)[0] + "\n" if findings else ""
        out.write(text)
    if args.exit_zero:
        return 0
    fail_on = Severity(args.fail_on or cwd_config.settings.fail_on or "warning")
    return 1 if any(f.severity.rank >= fail_on.rank for f in findings) else 0


def _rule_names() -> dict[str, tuple[str, str]]:
    from .rules import ALL

    return {r.code: (r.name, r.url) for r in ALL}


def _typer_app():  # type: ignore[no-untyped-def]
    import typer

    from .commands import launches, layers, plan, rules_cmd, server

    app = typer.Typer(
        name="mgpu-lint",
        help="Static analysis of multi-GPU LLM inference server launches. Lint with "
             "`mgpu-lint [check] PATH…` (see `mgpu-lint check --help`).",
        add_completion=False,
        no_args_is_help=True,
    )
    for module in (rules_cmd, launches, plan, layers, server):
        module.register(app)
    return app


def _run_subcommand(argv: list[str]) -> int:
    """Run a typer sub-command; a usage error is one line on stderr and exit 2.

    typer 0.29 vendors click as `typer._click` (there is no `click` package to import), so the
    errors are caught through typer's public names: `typer.Exit` and the base class
    `typer.TyperException` of every click usage error (`NoSuchOption`, `MissingParameter`,
    `BadParameter`, ...), which carry `exit_code` and `format_message()`.
    """
    import typer

    app = _typer_app()
    try:
        result = app(argv, prog_name="mgpu-lint", standalone_mode=False)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except typer.Exit as exc:
        return int(getattr(exc, "exit_code", 0) or 0)
    except typer.Abort:
        return 130
    except typer.TyperException as exc:
        ctx = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
            print(ctx.get_help(), file=sys.stderr)
            return 2
        name = "mgpu-lint" if ctx is None else ctx.command_path
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        hint = f" (see `{name} --help`)" if ctx is not None else ""
        print(f"{name}: error: {message}{hint}", file=sys.stderr)
        code = getattr(exc, "exit_code", 2)
        return code if isinstance(code, int) and code else 2
    return result if isinstance(result, int) else 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "check":
            return lint_main(argv[1:])
        if argv and argv[0] in SUBCOMMANDS and not os.path.isfile(argv[0]):
            return _run_subcommand(argv)
        if argv and argv[0] in ("-h", "--help") and len(argv) == 1:
            _lint_parser().print_help()
            return 0
        return lint_main(argv)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
