"""`mgpu-lint launches PATH…`: every launch found, with its words and positions."""

from __future__ import annotations

import json
from itertools import islice
from enum import Enum
from typing import TYPE_CHECKING, Any, List, Optional

import typer

from ..launch import VLLM, VLLM_DEMO, Launch
from ..script_env import EnvView
from ..source import Span

if TYPE_CHECKING:
    from ..analyze import FileSet
    from ..options import Options


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


MEMORY_KEYS = ("gpu_memory_bytes", "requested_bytes", "weights_bytes_per_gpu", "activation_bytes",
               "non_torch_bytes", "cudagraph_bytes", "kv_cache_bytes_per_gpu", "kv_cache_tokens",
               "max_concurrency")


def resolved(la: Launch, options: Options, fileset: FileSet) -> dict[str, Any] | None:
    """The deployment the rules see: layout, GPU type and its origin, the model, and for vLLM
    the memory as vLLM would budget it (integer bytes; null where unknown).  Engines without a
    layout of their own (llama.cpp, the RPC server): None."""
    from ..engines import ENGINES
    from ..engines.adapter import GPU_LAYOUT

    if not ENGINES[la.engine].has(GPU_LAYOUT):
        return None
    from ..analyze import deployment
    from ..config import config_for
    from ..sizing import memory as mem
    from ..sizing.vllm_launch import launch_memory

    d, _ = deployment(la, config_for(la.source.path, options.config).settings, options, fileset)
    inv = d.inv
    lay, g, model = d.layout, d.gpu, d.model
    if la.engine not in (VLLM, VLLM_DEMO):
        return _facts(lay, g, model)
    memory: dict[str, Any] = dict.fromkeys(MEMORY_KEYS)
    length = None
    if model is not None and model.shape is not None:
        stated = inv.max_model_len
        if stated.known and isinstance(stated.value, int) and stated.value > 0:
            length = stated.value
        elif stated.known and stated.value is None and not inv.hf_overrides.given:
            length = mem.derived_max_model_len(model.shape)
    m = launch_memory(d, length) if length else None
    if m is not None:
        b = m.budget
        memory.update(gpu_memory_bytes=b.gpu_memory, requested_bytes=b.requested,
                      weights_bytes_per_gpu=b.weights, activation_bytes=b.activation,
                      non_torch_bytes=b.non_torch, cudagraph_bytes=b.cudagraph,
                      kv_cache_bytes_per_gpu=b.kv_budget,
                      kv_cache_tokens=b.kv_tokens if b.kv_budget > 0 else 0,
                      max_concurrency=round(b.max_concurrency, 2) if b.kv_budget > 0 else 0)
    elif g is not None and g.spec is not None:
        from ..sizing.vllm_launch import card_bytes

        memory["gpu_memory_bytes"] = card_bytes(g.spec)[0]
    return {
        **_facts(lay, g, model),
        "vllm_release": str(inv.version),
        "max_model_len": length,
        "memory": memory,
        "memory_log": list(_log(m)) if m is not None else [],
    }


def _facts(lay: Any, g: Any, model: Any) -> dict[str, Any]:
    return {
        "layout": None if lay is None else {
            "tp": lay.tp.value, "pp": lay.pp.value, "dp": lay.dp.value,
            "dp_local": lay.dp_local.value, "pcp": lay.pcp.value, "nnodes": lay.nnodes.value,
            "world_size": lay.world_size, "gpus_per_node": lay.gpus_per_node,
            "known": lay.known},
        "gpu": None if g is None or g.spec is None else {
            "type": g.spec.id, "name": g.spec.name, "origin": g.origin, "assumed": g.assumed,
            "cuda_memory_catalogued": g.spec.cuda_memory_gib is not None},
        "model": None if model is None else {
            "ref": model.ref, "known": model.shape is not None,
            "shape": model.shape.id if model.shape is not None else None,
            "precision": model.weights.label, "precision_origin": model.weights.origin},
    }


def _log(m: Any) -> tuple[str, ...]:
    from ..sizing.vllm_launch import log_lines

    return log_lines(m)


# variables of one launch the JSON lists: a script of 20,000 assignments and 1,000 launches
# printed 450 MB (each launch all 20,000); past this many, "env_more" counts the rest
MAX_ENV_SHOWN = 100


def launch_dict(la: Launch, target_version: str | None = None,
                deployment: dict[str, Any] | None = None, env: bool = True) -> dict[str, Any]:
    src = la.source
    home = src.place(la.program.span)[0]

    def pos(offset: int) -> str:
        # a launch joined from several files (a KServe InferenceService and its runtime): a
        # place in another file than the program's is written with that file's path
        there, at = src.place(Span(offset, offset))
        line, col = there.line_col(at.start)
        return f"{line}:{col}" if there is home else f"{there.path}:{line}:{col}"

    ctx = la.context
    gpus = None
    if ctx.gpus is not None:
        g = ctx.gpus
        gpus = {"count": g.count, "origin": g.origin, "vendor": g.vendor,
                "at": pos(g.span.start) if g.span else None}
    catalog = release = None
    from ..engines import ENGINES

    adapter = ENGINES[la.engine]
    if adapter.choose_release is not None:
        from ..engines import release_for

        requested, origin = release_for(la, target_version)
        catalog = f"{la.engine} {adapter.choose_release(requested).version}"
        release = {"requested": requested, "from": origin}
    elif adapter.release_pin is not None:
        # an engine whose image tag names the release (SGLang): else its newest catalogue
        pin = adapter.release_pin(la)
        catalog = f"{la.engine} {adapter.catalog(pin or '').version}"
        release = {"requested": pin, "from": "image tag or pip install" if pin else
                   "newest catalogued"}
    return {
        "path": home.path,
        "at": pos(la.program.span.start),
        "engine": la.engine,
        "entry": la.entry if la.entry_known else f"{la.entry}? (image entrypoint unknown)",
        "program": la.program.text,
        "image_entrypoint": la.image_entrypoint,
        "engine_inferred": la.inferred_from is not None,
        "version_pin": la.version_pin.value if la.version_pin else None,
        "catalog": catalog,
        "release": release,
        "context": {k: v for k, v in {
            "kind": ctx.kind,
            "object": f"{ctx.object_kind}/{ctx.object_name}" if ctx.object_kind else None,
            "container": ctx.container_name.value if ctx.container_name else None,
            "role": ctx.role,
            "image": ctx.image.value if ctx.image else None,
            # TPU chips instead of GPUs: GPU rules stay silent (Context.tpu)
            "tpu": ctx.tpu.value if ctx.tpu else None,
        }.items() if v is not None},
        "gpus": gpus,
        "argv": [{"word": w.text, "at": pos(w.span.start)} for w in la.args],
        **(_env(la) if env else {}),
        **({"deployment": deployment} if deployment is not None else {}),
    }


def _env(la: Launch) -> dict[str, Any]:
    """The launch's variables by name; past MAX_ENV_SHOWN, the first ones set and a count."""
    env = la.env
    if isinstance(env, EnvView):
        first, total = env.head(MAX_ENV_SHOWN)
    else:
        first, total = list(islice(env.items(), MAX_ENV_SHOWN)), len(env)
    shown = {k: v.value for k, v in sorted(first)}
    return {"env": shown, "env_more": total - len(first)} if total > len(first) else \
        {"env": shown}


def render_text(launches: list[Launch], target_version: str | None = None,
                deployments: list[dict[str, Any] | None] | None = None) -> str:
    out = []
    for i, la in enumerate(launches):
        d = launch_dict(la, target_version, env=False)
        head = f"{d['path']}:{d['at']}: {d['engine']} ({d['entry']})"
        if d["image_entrypoint"]:
            head += f" from image entrypoint of {d['program']}"
            if d["engine_inferred"]:
                head += " (engine inferred from the image name)"
        out.append(head)
        ctx = d["context"]
        out.append("  where: " + ", ".join(f"{k}={v}" for k, v in ctx.items()))
        if d["catalog"]:
            rel = d["release"]
            why = {"pinned in the file": f"pinned {d['version_pin']} in the file",
                   "target-version": f"target-version {rel['requested']}"
                   + (f"; the file's {d['version_pin']} names no release"
                      if d["version_pin"] else "; the file pins none"),
                   "default": "the default: no pin in the file, no target-version",
                   "image tag or pip install": f"pinned {rel['requested']} in the file: "
                                               "image tag or pip install",
                   "newest catalogued": "the newest catalogued: the image pins none"}[rel["from"]]
            out.append(f"  flags: {d['catalog']} catalog ({why})")
        g = d["gpus"]
        if g:
            out.append(f"  gpus: {g['count'] if g['count'] is not None else 'all/unknown'} "
                       f"({g['origin']}{' at ' + g['at'] if g['at'] else ''})")
        else:
            out.append("  gpus: not stated")
        dep = deployments[i] if deployments else None
        if dep is not None:
            lay, gpu = dep["layout"], dep["gpu"]
            if lay is not None:
                out.append(f"  layout: tp {lay['tp']} × pp {lay['pp']} × dp {lay['dp']} "
                           f"(world {lay['world_size']}, GPUs on this node: "
                           f"{lay['gpus_per_node']}"
                           + ("" if lay["known"] else "; not known: the rules skip it") + ")")
            if gpu is not None:
                out.append(f"  gpu type: {gpu['name']} ({gpu['origin']}"
                           f"{', assumed' if gpu['assumed'] else ''})")
            for line in dep.get("memory_log", ()):
                out.append(f"  memory: {line}")
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
        gpu: Optional[str] = typer.Option(None, "--gpu", help="GPU type when no file states it"),
        gpus_per_node: Optional[int] = typer.Option(None, "--gpus-per-node",
                                                    help="GPUs per node (8)"),
        config: Optional[str] = typer.Option(None, "--config", help="configuration file (TOML)"),
    ) -> None:
        """Print every engine launch found: program position, engine, argv words, GPUs, and
        for vLLM the resolved deployment and its memory as vLLM would budget it."""
        import os

        from ..analyze import FileSet
        from ..config import (ConfigError, config_for, find_for_directory, load_file,
                              normalise_target_version)
        from ..options import Options
        from ..runner import read_files
        from ..safeio import side_files

        try:
            explicit = load_file(config) if config else None
        except ConfigError as exc:
            raise typer.BadParameter(str(exc), param_hint="'--config'") from None
        try:
            target = normalise_target_version(target_version) if target_version else \
                (explicit or find_for_directory(os.getcwd())).settings.target_version
        except (ConfigError, ValueError) as exc:
            raise typer.BadParameter(str(exc), param_hint="'--target-version'") from None
        if gpu is not None:
            from ..catalog.knowledge import gpu_names, resolve_gpu

            if resolve_gpu(gpu) is None:
                raise typer.BadParameter(f"unknown GPU {gpu!r}; known: {', '.join(gpu_names())}",
                                         param_hint="'--gpu'")
        options = Options(gpu=gpu, gpus_per_node=gpus_per_node,
                          target_version=target if target_version else None, config=explicit)
        with side_files():  # read once for every launch naming them (safeio.memo)
            try:
                run = read_files(list(paths or []), command=command,
                                 config_of=lambda path: config_for(path, explicit))
            except ConfigError as exc:
                raise typer.BadParameter(str(exc), param_hint="'--config'") from None
            launches = run.launches
            fileset = FileSet(run.services, run.hpas, launches)
            try:
                deps = [resolved(la, options, fileset) for la in launches]
            except ConfigError as exc:
                raise typer.BadParameter(str(exc), param_hint="'--config'") from None
        if fmt.value == "json":
            typer.echo(json.dumps({"version": 1, "launches": [
                launch_dict(la, target, dep) for la, dep in zip(launches, deps)]}, indent=2))
        else:
            typer.echo(render_text(launches, target, deps), nl=False)
