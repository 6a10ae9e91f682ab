"""`mgpu-lint rules` (the table) and `mgpu-lint rule CODE` (one rule explained)."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any, Optional

import typer


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


def rule_dict(r: Any) -> dict[str, Any]:
    from ..rules.docs import rule_doc

    doc = rule_doc(r)
    example = None if doc.example is None else {
        "path": doc.example.path, "source": doc.example.source, "report": doc.example.report}
    return {"code": r.code, "name": r.name, "severity": r.severity.value, "summary": r.summary,
            "explanation": r.explanation, "sections": doc.sections, "example": example,
            "url": r.url()}


def register(app: typer.Typer) -> None:
    @app.command("rules")
    def rules_cmd(
        fmt: OutputFormat = typer.Option("text", "--output-format", "--format",
                                         help="text or json"),
    ) -> None:
        """List every rule: code, name, default severity, summary."""
        from ..rules import ALL

        ordered = sorted(ALL, key=lambda r: r.code)
        if fmt.value == "json":
            typer.echo(json.dumps([{k: v for k, v in rule_dict(r).items() if k != "explanation"}
                                   for r in ordered], indent=2))
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
            docs = [rule_dict(r) for r in chosen]
            typer.echo(json.dumps(docs if all_rules else docs[0], indent=2))
            return
        from ..rules.docs import render_text, rule_doc

        typer.echo("\n\n".join(render_text(rule_doc(r)) for r in chosen))
