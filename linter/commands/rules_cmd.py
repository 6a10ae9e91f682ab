"""`mgpu-lint rules` (the table) and `mgpu-lint rule CODE` (one rule explained)."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any, Optional

import typer


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


def rule_dict(r: Any, docs_url: str | None = None) -> dict[str, Any]:
    """One rule as JSON; ``url`` is its page: ``docs_url`` (the configuration's ``docs-url``)
    when given, else the page shipped with the package (report/rule_pages.py), as in the lint
    report's JSON, SARIF and the language server."""
    from ..rules.docs import rule_doc

    doc = rule_doc(r)
    example = None if doc.example is None else {
        "path": doc.example.path, "source": doc.example.source, "report": doc.example.report}
    return {"code": r.code, "name": r.name, "severity": r.severity.value, "summary": r.summary,
            "explanation": r.explanation, "sections": doc.sections, "example": example,
            "url": r.url(docs_url)}


def configured_docs_url(config: str | None) -> str | None:
    """``docs-url`` of ``--config FILE``, else of the configuration closest to the working
    directory (the one a lint run from here reads); a bad file is a usage error."""
    import os

    from ..config import ConfigError, find_for_directory, load_file

    try:
        loaded = load_file(config) if config else find_for_directory(os.getcwd())
    except ConfigError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--config'") from None
    return loaded.settings.docs_url


def register(app: typer.Typer) -> None:
    @app.command("rules")
    def rules_cmd(
        fmt: OutputFormat = typer.Option("text", "--output-format", "--format",
                                         help="text or json"),
        config: Optional[str] = typer.Option(
            None, "--config", help="configuration file (TOML) whose docs-url the JSON links"),
    ) -> None:
        """List every rule: code, name, default severity, summary."""
        from ..rules import ALL

        ordered = sorted(ALL, key=lambda r: r.code)
        if fmt.value == "json":
            docs_url = configured_docs_url(config)
            typer.echo(json.dumps([{k: v for k, v in rule_dict(r, docs_url).items()
                                    if k != "explanation"} for r in ordered], indent=2))
            return
        for r in ordered:
            typer.echo(f"{r.code}  {r.name:<32} {r.severity.value:<8} {r.summary}")

    @app.command("rule")
    def rule_cmd(
        ctx: typer.Context,
        code: Optional[str] = typer.Argument(None, help="rule code, e.g. MG101"),
        all_rules: bool = typer.Option(False, "--all", help="explain every rule"),
        fmt: OutputFormat = typer.Option("text", "--output-format", "--format",
                                         help="text or json"),
        config: Optional[str] = typer.Option(
            None, "--config", help="configuration file (TOML) whose docs-url the JSON links"),
    ) -> None:
        """Explain one rule (or --all), with the math behind it."""
        from ..rules import ALL, BY_CODE

        if code is None and not all_rules:
            ctx.fail("Missing argument 'CODE' (or --all).")
        if code is not None and all_rules:
            ctx.fail("give a rule CODE or --all, not both")
        if code is not None:
            r = BY_CODE.get(code.upper())
            if r is None:
                import difflib

                close = difflib.get_close_matches(code.upper(), list(BY_CODE), n=1)
                raise typer.BadParameter(
                    f"unknown rule {code}" + (f"; did you mean {close[0]}?" if close else "")
                    + "; `mgpu-lint rules` lists them", param_hint="CODE")
            chosen = [r]
        else:
            chosen = sorted(ALL, key=lambda r: r.code)
        if fmt.value == "json":
            docs_url = configured_docs_url(config)
            docs = [rule_dict(r, docs_url) for r in chosen]
            typer.echo(json.dumps(docs if all_rules else docs[0], indent=2))
            return
        from ..rules.docs import render_text, rule_doc

        typer.echo("\n\n".join(render_text(rule_doc(r)) for r in chosen))
