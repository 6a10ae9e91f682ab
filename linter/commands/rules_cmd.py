"""`mgpu-lint rules` (the table) and `mgpu-lint rule CODE` (one rule explained)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command("rules")
    def rules_cmd() -> None:
        """List every rule: code, name, default severity, summary."""
        from ..rules import ALL

        for r in sorted(ALL, key=lambda r: r.code):
            typer.echo(f"{r.code}  {r.name:<32} {r.severity.value:<8} {r.summary}")

    @app.command("rule")
    def rule_cmd(code: str = typer.Argument(..., help="rule code, e.g. MG101")) -> None:
        """Explain one rule, with the math behind it."""
        from ..rules import BY_CODE

        r = BY_CODE.get(code.upper())
        if r is None:
            typer.echo(f"mgpu-lint rule: unknown rule {code}; `mgpu-lint rules` lists them",
                       err=True)
            raise typer.Exit(2)
        typer.echo(f"{r.code} {r.name} ({r.severity.value})\n\n{r.summary}\n\n{r.explanation}")
