"""`mgpu-lint server`: the language server over stdio (see mgpu_lint.lsp)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command("server")
    def server_cmd() -> None:
        """Run the language server over stdio: diagnostics for open documents in an editor."""
        from ..lsp import serve

        serve()
