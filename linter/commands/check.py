"""`mgpu-lint check`: the lint command, as typer sees it (for the command list and completion).

`mgpu-lint check …` is parsed by mgpu_lint.cli's own option table before typer is imported; this
entry only hands the words over when typer runs it (shell completion).
"""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command("check", add_help_option=False,
                 context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
    def check_cmd(ctx: typer.Context) -> None:
        """Lint files, directories, stdin (-) or one --command (the default command)."""
        from ..cli import PROG, lint_main

        raise typer.Exit(lint_main(list(ctx.args), f"{PROG} check"))
