"""`mgpu-lint check`: the lint command, as typer sees it (the command list and shell completion).

`mgpu-lint check …` is parsed by mgpu_lint.cli's own option table (``LINT_OPTIONS``) before typer
is imported; this entry declares the same options to typer, built from that table, so completion
offers them and their choices, and hands the words over when typer runs it.
"""

from __future__ import annotations

import inspect
from enum import Enum
from typing import Any, List, Optional

import typer


def _parameters() -> list[inspect.Parameter]:
    from ..cli import LINT_OPTIONS

    params = [inspect.Parameter("paths", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                default=typer.Argument(None, help="files, directories or -"),
                                annotation=Optional[List[str]])]
    for opt in LINT_OPTIONS:
        if opt.dest == "help":
            continue
        annotation: Any
        if opt.value is None:
            annotation, default = bool, False
        elif opt.kind == "choice":
            annotation = Optional[Enum(opt.dest, {c: c for c in opt.choices}, type=str)]
            default = None
        elif opt.kind == "int":
            annotation, default = Optional[int], None
        else:
            annotation, default = Optional[str], None
        params.append(inspect.Parameter(
            opt.dest, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
            default=typer.Option(default, *opt.names, help=opt.help, show_default=False)))
    return params


def register(app: typer.Typer) -> None:
    def check_cmd(**values: Any) -> None:
        """Lint files, directories, stdin (-) or one --command (the default command)."""
        from ..cli import LINT_OPTIONS, PROG, lint_main

        # `mgpu-lint check` never gets here (mgpu_lint.cli parses it first); when typer itself
        # runs the command, its parsed values are turned back into the lint command's words
        words: list[str] = []
        for opt in LINT_OPTIONS:
            value = values.get(opt.dest)
            if value is None or value is False:
                continue
            if value is True:
                words.append(opt.names[0])
            else:
                words += [opt.names[0], str(getattr(value, "value", value))]
        raise typer.Exit(lint_main(words + ["--", *(values.get("paths") or [])],
                                   f"{PROG} check"))

    check_cmd.__signature__ = inspect.Signature(_parameters())  # type: ignore[attr-defined]
    app.command("check", context_settings={"help_option_names": ["-h", "--help"]})(check_cmd)
