"""`mgpu-lint launches PATH…`: every launch found, with its words and positions."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any, List, Optional

import typer

from ..launch import VLLM, Launch


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


def launch_dict(la: Launch, target_version: str | None = None) -> dict[str, Any]:
    src = la.source

    def pos(offset: int) -> str:
        line, col = src.line_col(offset)
        return f"{line}:{col}"

    ctx = la.context
    gpus = None
    if ctx.gpus is not None:
        g = ctx.gpus
        gpus = {"count": g.count, "origin": g.origin, "vendor": g.vendor,
                "at": pos(g.span.start) if g.span else None}
    catalog = release = None
    if la.engine == VLLM:
        from ..engines import release_for
        from ..engines.catalog import choose_vllm_version

        requested, origin = release_for(la, target_version)
        catalog = f"vllm {choose_vllm_version(requested).version}"
        release = {"requested": requested, "from": origin}
    return {
        "path": src.path,
        "at": pos(la.program.span.start),
        "engine": la.engine,
        "entry": la.entry if la.entry_known else f"{la.entry}? (image entrypoint unknown)",
        "program": la.program.text,
        "image_entrypoint": la.image_entrypoint,
        "version_pin": la.version_pin.value if la.version_pin else None,
        "catalog": catalog,
        "release": release,
        "context": {k: v for k, v in {
            "kind": ctx.kind,
            "object": f"{ctx.object_kind}/{ctx.object_name}" if ctx.object_kind else None,
            "container": ctx.container_name.value if ctx.container_name else None,
            "role": ctx.role,
            "image": ctx.image.value if ctx.image else None,
        }.items() if v is not None},
        "gpus": gpus,
        "argv": [{"word": w.text, "at": pos(w.span.start)} for w in la.args],
        "env": {k: v.value for k, v in sorted(la.env.items())},
    }


def render_text(launches: list[Launch], target_version: str | None = None) -> str:
    out = []
    for la in launches:
        d = launch_dict(la, target_version)
        head = f"{d['path']}:{d['at']}: {d['engine']} ({d['entry']})"
        if d["image_entrypoint"]:
            head += f" from image entrypoint of {d['program']}"
        out.append(head)
        ctx = d["context"]
        out.append("  where: " + ", ".join(f"{k}={v}" for k, v in ctx.items()))
        if d["catalog"]:
            rel = d["release"]
            why = {"pinned in the file": f"pinned {d['version_pin']} in the file",
                   "target-version": f"target-version {rel['requested']}"
                   + (f"; the file's {d['version_pin']} names no release"
                      if d["version_pin"] else "; the file pins none"),
                   "default": "the default: no pin in the file, no target-version"}[rel["from"]]
            out.append(f"  flags: {d['catalog']} catalog ({why})")
        g = d["gpus"]
        if g:
            out.append(f"  gpus: {g['count'] if g['count'] is not None else 'all/unknown'} "
                       f"({g['origin']}{' at ' + g['at'] if g['at'] else ''})")
        else:
            out.append("  gpus: not stated")
        for w in d["argv"]:
            out.append(f"  {w['at']:>8}  {w['word']}")
    out.append(f"{len(launches)} launch(es)")
    return "\n".join(out) + "\n"


def register(app: typer.Typer) -> None:
    @app.command("launches")
    def launches_cmd(
        paths: List[str] = typer.Argument(None, help="files or directories"),
        fmt: OutputFormat = typer.Option("text", "--output-format", "--format",
                                         help="text or json"),
        command: Optional[str] = typer.Option(None, "--command", help="one command line"),
        target_version: Optional[str] = typer.Option(
            None, "--target-version", help="vLLM release for launches whose file pins none "
            "(default: the configuration's)"),
    ) -> None:
        """Print every engine launch found: program position, engine, argv words, GPUs."""
        import os

        from ..config import ConfigError, find_for_directory, normalise_target_version
        from ..runner import read_files

        try:
            target = normalise_target_version(target_version) if target_version else \
                find_for_directory(os.getcwd()).settings.target_version
        except (ConfigError, ValueError) as exc:
            raise typer.BadParameter(str(exc), param_hint="'--target-version'") from None
        run = read_files(list(paths or []), command=command)
        launches = run.launches
        if fmt.value == "json":
            typer.echo(json.dumps({"version": 1, "launches": [launch_dict(la, target)
                                                              for la in launches]}, indent=2))
        else:
            typer.echo(render_text(launches, target), nl=False)
