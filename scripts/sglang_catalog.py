"""SGLang flag catalogs, read statically from SGLang's own argument parser.

    python scripts/sglang_catalog.py dump sglang-0.5.5-py3-none-any.whl …
        reads ``sglang/srt/server_args.py`` from each wheel (never imported, never unpacked to
        disk), walks ``ServerArgs.add_cli_args`` with ``ast`` and writes one record per
        ``parser.add_argument`` call to ``tests/data/engines/sglang-versions/<release>.json``
    python scripts/sglang_catalog.py dump-parser sglang-0.5.23-….whl UNPACKED_DIR
        for releases whose options are built at run time (0.5.23 builds them from the
        msgspec fields of sglang/srt/arg_groups/): run with a throwaway interpreter in which
        ``sglang.srt.server_args`` imports from UNPACKED_DIR (the wheel unzipped; its imports
        need numpy, torch, triton, msgspec, pydantic, starlette, pyzmq, … — none of them ever
        a dependency of mgpu-lint), builds the parser as ``prepare_server_args`` does
        (``argparse.ArgumentParser(prog="sglang serve")`` + ``ServerArgs.add_cli_args``) and
        records every option it holds
    python scripts/sglang_catalog.py build
        turns every dump into ``linter/catalog/flags/sglang-<release>.json``
    python scripts/sglang_catalog.py check
        exits 1 when a catalog differs from what ``build`` would write

What the dump resolves statically, and how: a default written ``ServerArgs.<field>`` is the
class attribute's literal (a ``field(default_factory=…)`` or any other expression stays
unresolved: ``null``); ``choices`` are kept only when they are a literal list, or a module-level
literal list that nothing in the module extends (``QUANTIZATION_CHOICES.extend(…)`` in the
``add_*_choices`` plugin hooks of 0.5.x makes them open, so they are not enforced).  Releases
whose ``add_cli_args`` is not a flat list of ``add_argument`` calls (0.5.23 builds them from
dataclass fields, sglang/srt/arg_groups/) are refused rather than guessed.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DUMPS = ROOT / "tests" / "data" / "engines" / "sglang-versions"
FLAGS = ROOT / "linter" / "catalog" / "flags"
SERVER_ARGS = "sglang/srt/server_args.py"

# argparse `type=` callables of server_args.py and the catalog value type they give; a
# parser whose accepted spellings are not plain Python literals is "str" (anything passes:
# human_readable_int takes "4k", sglang/srt/utils/common.py, 0.5.23)
TYPES = {"int": "int", "float": "float", "str": "str", "nullable_str": "str",
         "json_list_type": "json", "loads": "json", "human_readable_int": "str",
         "parse_cuda_graph_backend_arg": "str", "parse_cuda_graph_config_arg": "str"}
# argparse Action classes of 0.5.23 and the plain action they behave as
# (sglang/srt/arg_groups/argparse_actions.py: the deprecated spellings still store)
ACTIONS = {"_StoreAction": None, "_StoreTrueAction": "store_true",
           "_StoreFalseAction": "store_false", "_StoreConstAction": "store_const",
           "BooleanOptionalAction": "boolean_optional", "LoRAPathAction": "LoRAPathAction",
           "DeprecatedStoreTrueAction": "store_true", "DeprecatedStoreConstAction": "store_const"}
_UNRESOLVED = object()


def _literal(node: ast.AST | None) -> Any:
    if node is None:
        return _UNRESOLVED
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return _UNRESOLVED


class _Module:
    """Module-level literals of server_args.py and the ServerArgs class defaults."""

    def __init__(self, tree: ast.Module) -> None:
        self.lists: dict[str, Any] = {}
        self.extended: set[str] = set()
        self.defaults: dict[str, Any] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], ast.Name):
                self.lists[node.targets[0].id] = _literal(node.value)
            if isinstance(node, ast.ClassDef) and node.name == "ServerArgs":
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        self.defaults[item.target.id] = _literal(item.value) \
                            if item.value is not None else _UNRESOLVED
        for node in ast.walk(tree):
            # NAME.extend(…), NAME.append(…), NAME += …: the list is open to plugins
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                    node.attr in ("extend", "append", "insert", "add", "update"):
                self.extended.add(node.value.id)
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                self.extended.add(node.target.id)

    def choices(self, node: ast.AST) -> Any:
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return _literal(node)
        if isinstance(node, ast.Name):
            if node.id in self.extended:
                return _UNRESOLVED
            value = self.lists.get(node.id, _UNRESOLVED)
            return value if isinstance(value, (list, tuple)) else _UNRESOLVED
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.choices(node.left), self.choices(node.right)
            if left is _UNRESOLVED or right is _UNRESOLVED:
                return _UNRESOLVED
            return list(left) + list(right)
        return _UNRESOLVED

    def default(self, node: ast.AST | None) -> Any:
        if node is None:
            return None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id == "ServerArgs":
            return self.defaults.get(node.attr, _UNRESOLVED)
        return _literal(node)


def _json(value: Any) -> Any:
    return None if value is _UNRESOLVED else value


def dump_source(text: str) -> list[dict[str, Any]]:
    """One record per ``parser.add_argument`` call of ``ServerArgs.add_cli_args``."""
    tree = ast.parse(text)
    module = _Module(tree)
    fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
               and n.name == "add_cli_args"), None)
    if fn is None:
        raise SystemExit("no ServerArgs.add_cli_args in server_args.py")
    records = []
    for stmt in fn.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "add_argument"):
            if isinstance(stmt, ast.Assign):
                continue  # help-text and choice helpers (`bucket_rule = "…"`)
            raise SystemExit(f"line {stmt.lineno}: add_cli_args is not a flat list of "
                             "add_argument calls; this release is not read statically")
        names = [_literal(a) for a in call.args]
        if not names or not all(isinstance(n, str) and n.startswith("-") for n in names):
            raise SystemExit(f"line {call.lineno}: option names are not literals")
        kw = {k.arg: k.value for k in call.keywords}
        if None in kw or "dest" in kw:
            raise SystemExit(f"line {call.lineno}: **kwargs or dest= is not handled")
        action = kw.get("action")
        action_name = _literal(action) if action is not None else None
        if action_name is _UNRESOLVED:
            action_name = ast.unparse(action)  # a custom Action class: LoRAPathAction
        choices = module.choices(kw["choices"]) if "choices" in kw else None
        record = {
            "names": names,
            # argparse's dest: the first long option without its dashes, '-' → '_'
            "dest": next(n for n in names if n.startswith("--"))[2:].replace("-", "_"),
            "action": action_name,
            "type": ast.unparse(kw["type"]) if "type" in kw else None,
            "nargs": _json(_literal(kw.get("nargs"))) if "nargs" in kw else None,
            "const": _json(_literal(kw.get("const"))) if "const" in kw else None,
            "default": _json(module.default(kw.get("default"))),
            "default_resolved": module.default(kw.get("default")) is not _UNRESOLVED,
            "choices": _json(choices),
            "choices_source": ast.unparse(kw["choices"]) if "choices" in kw else None,
            "required": bool(_literal(kw.get("required"))) if "required" in kw else False,
            "line": call.lineno,
        }
        records.append(record)
    return records


def dump_wheel(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    with zipfile.ZipFile(path) as z:
        text = z.read(SERVER_ARGS).decode("utf-8")
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        version = next(line.split(":", 1)[1].strip()
                       for line in z.read(meta).decode("utf-8").splitlines()
                       if line.startswith("Version:"))
        ep_name = meta.replace("METADATA", "entry_points.txt")
        entry_points = [line.strip() for line in z.read(ep_name).decode("utf-8").splitlines()
                        if line.strip() and not line.startswith("[")] \
            if ep_name in z.namelist() else []
        modules = sorted(n for n in z.namelist() if n in ("sglang/launch_server.py",
                                                           "sglang/cli/main.py"))
    return {
        "release": version,
        "wheel": path.name,
        "wheel_sha256": hashlib.sha256(data).hexdigest(),
        "server_args_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "entry_points": entry_points,
        "modules": modules,
        "actions": dump_source(text),
    }


def parser_records(parser: argparse.ArgumentParser) -> list[dict[str, Any]]:
    """One record per option of a built argparse parser (``parser._actions``)."""
    records: list[dict[str, Any]] = []
    for action in parser._actions:
        if not action.option_strings or action.dest == "help":
            continue
        kind = type(action).__name__
        if kind not in ACTIONS:
            raise SystemExit(f"{action.option_strings[0]}: unknown action {kind}")
        if kind == "DeprecatedStoreConstAction" and action.nargs is None:
            kind = "_StoreAction"  # a retired valued flag: it still takes one of its choices
        type_name = getattr(action.type, "__name__", None) if action.type else None
        default = action.default
        resolved = default is None or isinstance(default, (bool, int, float, str))
        choices = action.choices
        if choices is not None:
            choices = sorted(choices, key=str) if isinstance(choices, set) else list(choices)
            if not all(isinstance(c, (bool, int, float, str)) for c in choices):
                choices = None
        records.append({
            "names": list(action.option_strings),
            "dest": action.dest,
            "action": ACTIONS[kind],
            "type": type_name,
            "nargs": action.nargs if isinstance(action.nargs, (str, int)) and
            ACTIONS[kind] is None or kind == "LoRAPathAction" else None,
            "const": action.const if isinstance(action.const, (bool, int, float, str)) else None,
            "default": default if resolved else None,
            "default_resolved": resolved,
            "choices": choices,
            "choices_source": None,
            "required": bool(action.required),
            "line": None,
        })
    return records


def dump_parser(wheel: Path, unpacked: Path) -> dict[str, Any]:
    """The options of the parser ``prepare_server_args`` builds, imported from ``unpacked``."""
    sys.path.insert(0, str(unpacked))
    from sglang.srt.server_args import ServerArgs  # type: ignore[import-not-found]

    parser = argparse.ArgumentParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)
    records = parser_records(parser)
    data = wheel.read_bytes()
    dist = next(unpacked.glob("sglang-*.dist-info"), None)
    meta = (dist / "METADATA").read_text("utf-8") if dist else ""
    version = next((line.split(":", 1)[1].strip() for line in meta.splitlines()
                    if line.startswith("Version:")), wheel.name.split("-")[1])
    eps = dist / "entry_points.txt" if dist else None
    entry_points = [line.strip() for line in eps.read_text("utf-8").splitlines()
                    if line.strip() and not line.startswith("[")] if eps and eps.is_file() else []
    server_args = (unpacked / SERVER_ARGS).read_bytes()
    return {
        "release": version,
        "wheel": wheel.name,
        "wheel_sha256": hashlib.sha256(data).hexdigest(),
        "server_args_sha256": hashlib.sha256(server_args).hexdigest(),
        "entry_points": entry_points,
        "modules": sorted(m for m in ("sglang/launch_server.py", "sglang/cli/main.py")
                          if (unpacked / m).is_file()),
        "read": "imported: the parser prepare_server_args builds (argparse._actions)",
        "actions": records,
    }


def catalog(dump: dict[str, Any], keys: dict[str, str] | None = None,
            closed: set[str] | None = None) -> dict[str, Any]:
    """The flag catalog (linter/catalog/flags schema) of one dump.  ``keys``: spelling → the
    key an earlier release gave that option, so a setting keeps one key across releases
    (0.5.23 stores --tp-size as the field ``tp_size``, 0.5.5 as ``tensor_parallel_size``)."""
    keys = keys or {}
    used: set[str] = set()
    release = dump["release"]
    options: list[dict[str, Any]] = [
        # argparse adds -h/--help to every parser (prepare_server_args builds a plain
        # argparse.ArgumentParser())
        {"key": "help", "names": ["-h", "--help"], "type": "help", "nargs": 0},
    ]
    for rec in dump["actions"]:
        earlier = next((keys[n] for n in rec["names"] if n in keys), None)
        key = earlier or rec["dest"]
        if key in used:
            # two options argparse stores in one dest (a retired spelling beside its
            # replacement: --monokernel-backend amd and --enable-amd-monokernel, 0.5.23)
            key = rec["names"][0].lstrip("-").replace("-", "_")
        used.add(key)
        opt: dict[str, Any] = {"key": key, "names": rec["names"]}
        action = rec["action"]
        if action in ("store_true", "store_false"):
            opt["type"] = "flag"
            opt["nargs"] = 0
            opt["default"] = rec["default"] if rec["default"] is not None else \
                action == "store_false"
        elif action == "boolean_optional":
            # argparse.BooleanOptionalAction: --x stores True, --no-x False
            opt["names"] = [n for n in rec["names"] if not n.startswith("--no-")]
            opt["neg"] = [n for n in rec["names"] if n.startswith("--no-")]
            opt["type"] = "flag"
            opt["nargs"] = 0
            if rec["default"] is not None:
                opt["default"] = rec["default"]
        elif action == "store_const":
            opt["type"] = "flag"
            opt["nargs"] = 0
            if rec["const"] is not None:
                opt["const"] = rec["const"]
        elif action in (None, "LoRAPathAction"):
            # LoRAPathAction (server_args.py) stores the nargs='*' words as name=path items
            type_name = rec["type"] or "str"
            if type_name not in TYPES:
                raise SystemExit(f"{release} {rec['names'][0]}: unknown type {type_name}")
            opt["type"] = TYPES[type_name]
            if type_name == "nullable_str":
                opt["nullable"] = True
            if rec["nargs"] is not None:
                opt["nargs"] = rec["nargs"]
            if rec["const"] is not None:
                opt["const"] = rec["const"]
            # an imported parser shows choice lists after the plugin hooks extended them
            # (QUANTIZATION_CHOICES.extend …): enforced only where an earlier release read
            # statically had the option's choices closed
            imported_open = dump.get("read") and not (closed and any(
                n in closed for n in rec["names"]))
            if rec["choices"] is not None and not imported_open:
                opt["choices"] = rec["choices"]
            if rec["default"] is not None:
                opt["default"] = rec["default"]
        else:
            raise SystemExit(f"{release} {rec['names'][0]}: unknown action {action}")
        options.append({k: opt[k] for k in ("key", "names", "neg", "type", "nargs", "choices",
                                            "nullable", "default", "const") if k in opt})
    return {
        "generated": "generated by scripts/sglang_catalog.py from "
                     f"tests/data/engines/sglang-versions/{release}.json; do not edit",
        "engine": "sglang",
        "version": release,
        "source": f"sglang {release} wheel: ServerArgs.add_cli_args in "
                  "sglang/srt/server_args.py, " + (
                      "the built parser (imported)" if dump.get("read") else
                      "read statically (ast)"),
        "options": options,
    }


def _text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def _release_key(release: str) -> tuple[int, ...]:
    return tuple(int(p) for p in release.replace(".post", ".").split("."))


def built() -> dict[Path, str]:
    out = {}
    dumps = [json.loads(p.read_text("utf-8")) for p in DUMPS.glob("*.json")]
    keys: dict[str, str] = {}
    closed: set[str] = set()
    for dump in sorted(dumps, key=lambda d: _release_key(d["release"])):
        out[FLAGS / f"sglang-{dump['release']}.json"] = _text(catalog(dump, keys, closed))
        for rec in dump["actions"]:
            if not dump.get("read"):
                # the newest statically read release says whether the list is closed
                if rec["choices"] is not None:
                    closed.update(rec["names"])
                else:
                    closed.difference_update(rec["names"])
            key = next((keys[n] for n in rec["names"] if n in keys), rec["dest"])
            for name in rec["names"]:
                keys.setdefault(name, key)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("wheels", nargs="+", type=Path)
    dp = sub.add_parser("dump-parser")
    dp.add_argument("wheel", type=Path)
    dp.add_argument("unpacked", type=Path)
    sub.add_parser("build")
    sub.add_parser("check")
    args = parser.parse_args(argv)
    if args.cmd == "dump":
        DUMPS.mkdir(parents=True, exist_ok=True)
        for wheel in args.wheels:
            dump = dump_wheel(wheel)
            (DUMPS / f"{dump['release']}.json").write_text(_text(dump), "utf-8")
            print(f"{dump['release']}: {len(dump['actions'])} options")
        return 0
    if args.cmd == "dump-parser":
        dump = dump_parser(args.wheel, args.unpacked)
        (DUMPS / f"{dump['release']}.json").write_text(_text(dump), "utf-8")
        print(f"{dump['release']}: {len(dump['actions'])} options")
        return 0
    return build_or_check(args.cmd, built())


def build_or_check(cmd: str, catalogs: dict[Path, str]) -> int:
    """`build` writes the catalogs; `check` names each stale one and exits 1 (this script's and
    scripts/sglang_router_catalog.py's)."""
    if cmd == "check":
        stale = [p for p, text in catalogs.items()
                 if not p.is_file() or p.read_text("utf-8") != text]
        for p in stale:
            print(f"stale: {p.relative_to(ROOT)}", file=sys.stderr)
        return 1 if stale else 0
    for p, text in catalogs.items():
        p.write_text(text, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
