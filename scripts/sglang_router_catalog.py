"""The router-only options of `python -m sglang_router.launch_server`, from the router's parser.

    python scripts/sglang_router_catalog.py dump sglang_router-0.3.2-….whl
        reads ``sglang_router/router_args.py`` and ``sglang_router/launch_server.py`` from the
        wheel (`pip download --no-deps sglang-router`), builds the parser as
        ``launch_server.main`` does and writes its router options to
        ``tests/data/engines/sglang-router-versions/<release>.json``
    python scripts/sglang_router_catalog.py build
        turns every dump into ``linter/catalog/flags/sglang-router-<release>.json``
    python scripts/sglang_router_catalog.py check
        exits 1 when a catalog differs from what ``build`` would write

``launch_server.main`` (sglang_router/launch_server.py, 0.2.2 and 0.3.2) builds one plain
``argparse.ArgumentParser``: ``ServerArgs.add_cli_args(parser)`` (the installed SGLang's own
options: its catalog, linter/catalog/flags/sglang-*.json), then
``RouterArgs.add_cli_args(parser, use_router_prefix=True, exclude_host_port=True)`` and its own
``parser.add_argument`` calls (``--router-dp-worker-base-port``).  The dump records only the
router part.  ``router_args.py`` is imported from a temporary directory beside a stand-in for
the Rust extension ``sglang_router.sglang_router_rs``, whose one function it calls,
``get_available_tool_call_parsers`` (the choices of ``--router-tool-call-parser``, known only
at run time: left open).  The main() calls are checked statically with ``ast`` (a release that
builds its parser otherwise is refused); the wheel is never installed or kept.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.util
import json
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DUMPS = ROOT / "tests" / "data" / "engines" / "sglang-router-versions"
FLAGS = ROOT / "linter" / "catalog" / "flags"
ROUTER_ARGS = "sglang_router/router_args.py"
LAUNCH_SERVER = "sglang_router/launch_server.py"
_RUNTIME = "<known at run time>"


def _sglang_catalog_module() -> Any:
    spec = importlib.util.spec_from_file_location("sglang_catalog",
                                                  Path(__file__).with_name("sglang_catalog.py"))
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def _main_calls(source: str) -> tuple[list[ast.Call], ast.Call]:
    """launch_server.main's RouterArgs.add_cli_args call (checked) and its own
    parser.add_argument calls."""
    tree = ast.parse(source)
    main = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"),
                None)
    if main is None:
        raise SystemExit(f"{LAUNCH_SERVER}: no main()")
    calls = [n for n in ast.walk(main) if isinstance(n, ast.Call)]
    names = [ast.unparse(c.func) for c in calls]
    if "ServerArgs.add_cli_args" not in names:
        raise SystemExit(f"{LAUNCH_SERVER}: main() does not call ServerArgs.add_cli_args")
    router = [c for c in calls if ast.unparse(c.func) == "RouterArgs.add_cli_args"]
    if len(router) != 1:
        raise SystemExit(f"{LAUNCH_SERVER}: main() does not call RouterArgs.add_cli_args once")
    own = [c for c in calls if ast.unparse(c.func) == "parser.add_argument"]
    return own, router[0]


def _add_own(parser: argparse.ArgumentParser, call: ast.Call) -> None:
    """Replay one literal ``parser.add_argument`` call of main()."""
    types = {"int": int, "float": float, "str": str}
    args = [ast.literal_eval(a) for a in call.args]
    kwargs: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg == "type":
            kwargs["type"] = types[ast.unparse(kw.value)]
        elif kw.arg is not None:
            kwargs[kw.arg] = ast.literal_eval(kw.value)
    parser.add_argument(*args, **kwargs)


def dump_wheel(path: Path) -> dict[str, Any]:
    sc = _sglang_catalog_module()
    with zipfile.ZipFile(path) as z:
        router_args = z.read(ROUTER_ARGS)
        launch_server = z.read(LAUNCH_SERVER)
        meta_name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = z.read(meta_name).decode("utf-8")
        eps_name = next((n for n in z.namelist() if n.endswith(".dist-info/entry_points.txt")),
                        None)
        eps = z.read(eps_name).decode("utf-8") if eps_name else ""
    version = next(line.split(":", 1)[1].strip() for line in meta.splitlines()
                   if line.startswith("Version:"))
    own, router_call = _main_calls(launch_server.decode("utf-8"))
    keywords = {kw.arg: ast.literal_eval(kw.value) for kw in router_call.keywords}
    if keywords != {"use_router_prefix": True, "exclude_host_port": True}:
        raise SystemExit(f"{LAUNCH_SERVER}: RouterArgs.add_cli_args called with {keywords}")
    with tempfile.TemporaryDirectory() as tmp:
        pkg = Path(tmp) / "sglang_router"
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        (pkg / "router_args.py").write_bytes(router_args)
        (pkg / "sglang_router_rs.py").write_text(
            f"def get_available_tool_call_parsers():\n    return [{_RUNTIME!r}]\n")
        sys.path.insert(0, tmp)
        try:
            from sglang_router.router_args import RouterArgs  # type: ignore[import-not-found]

            parser = argparse.ArgumentParser(add_help=False)
            RouterArgs.add_cli_args(parser, use_router_prefix=True, exclude_host_port=True)
            for call in own:
                _add_own(parser, call)
        finally:
            sys.path.remove(tmp)
            for name in [m for m in sys.modules if m.startswith("sglang_router")]:
                del sys.modules[name]
    # argparse's "append" (--router-prefill URL [PORT], --router-decode URL: each occurrence
    # adds one worker) stores like a plain option, every occurrence kept
    sc.ACTIONS["_AppendAction"] = None
    appended = {a.option_strings[0] for a in parser._actions
                if type(a).__name__ == "_AppendAction"}
    records = sc.parser_records(parser)
    for rec in records:
        if rec["names"][0] in appended:
            rec["action"] = "append"
        if rec["choices"] is not None and _RUNTIME in rec["choices"]:
            rec["choices"] = None
            rec["choices_source"] = "sglang_router_rs.get_available_tool_call_parsers()"
    return {
        "release": version,
        "wheel": path.name,
        "wheel_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "router_args_sha256": hashlib.sha256(router_args).hexdigest(),
        "launch_server_sha256": hashlib.sha256(launch_server).hexdigest(),
        "entry_points": [line.strip() for line in eps.splitlines()
                         if line.strip() and not line.startswith("[")],
        "read": "imported: RouterArgs.add_cli_args(use_router_prefix=True, "
                "exclude_host_port=True) and launch_server.main's own add_argument calls",
        "actions": records,
    }


def catalog(dump: dict[str, Any]) -> dict[str, Any]:
    sc = _sglang_catalog_module()
    appended = {r["names"][0] for r in dump["actions"] if r["action"] == "append"}
    plain = [dict(r, action=None) if r["action"] == "append" else r for r in dump["actions"]]
    # router_args.py writes its choices as literal lists (closed), except the tool-call
    # parsers, dropped at dump time
    closed = {n for r in dump["actions"] if r["choices"] is not None for n in r["names"]}
    doc = sc.catalog(dict(dump, actions=plain), closed=closed)
    for opt in doc["options"]:
        if opt["names"][0] in appended:
            opt["repeat"] = "append"
    release = dump["release"]
    return {
        "generated": "generated by scripts/sglang_router_catalog.py from "
                     f"tests/data/engines/sglang-router-versions/{release}.json; do not edit",
        "engine": "sglang-router",
        "version": release,
        "source": f"sglang-router {release} wheel: the router-only options of "
                  "sglang_router/launch_server.py main() (RouterArgs.add_cli_args with "
                  "use_router_prefix=True, exclude_host_port=True, in router_args.py)",
        # -h/--help is SGLang's catalog's (one parser holds both parts)
        "options": [o for o in doc["options"] if o["key"] != "help"],
    }


def built() -> dict[Path, str]:
    sc = _sglang_catalog_module()
    out = {}
    for p in sorted(DUMPS.glob("*.json")):
        dump = json.loads(p.read_text("utf-8"))
        out[FLAGS / f"sglang-router-{dump['release']}.json"] = sc._text(catalog(dump))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("wheels", nargs="+", type=Path)
    sub.add_parser("build")
    sub.add_parser("check")
    args = parser.parse_args(argv)
    if args.cmd == "dump":
        sc = _sglang_catalog_module()
        DUMPS.mkdir(parents=True, exist_ok=True)
        for wheel in args.wheels:
            dump = dump_wheel(wheel)
            (DUMPS / f"{dump['release']}.json").write_text(sc._text(dump), "utf-8")
            print(f"{dump['release']}: {len(dump['actions'])} options")
        return 0
    return _sglang_catalog_module().build_or_check(args.cmd, built())


if __name__ == "__main__":
    sys.exit(main())
