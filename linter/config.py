"""Configuration: `[tool.mgpu-lint]` in pyproject.toml, `mgpu-lint.toml`, `.mgpu-lint.toml`.

The file closest to each linted file wins (searched upward from its directory, like ruff), unless
`--config` names one.  Rule selection and defaults come from that file; command-line options
override it.  An invalid file is a usage error (exit 2) that names the file, the key and why.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, Mapping

from .bounds import MAX_CONFIG_ENTRIES, MAX_TOKENS
from .identity import ByIdentity
from .policy import MAX_FILE_BYTES
from .records import dataclass, field

if TYPE_CHECKING:
    from pydantic import ValidationError

CONFIG_NAMES = (".mgpu-lint.toml", "mgpu-lint.toml", "pyproject.toml")
# skipped when walking directories unless `exclude` replaces them (ruff's convention); .gitignore
# is respected besides
DEFAULT_EXCLUDE = (".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox",
                   ".mypy_cache", ".pytest_cache", ".ruff_cache")


class ConfigError(Exception):
    """An unusable configuration: reported with exit code 2."""


@dataclass(frozen=True)
class Settings:
    """Every configuration key, with its default (keys are kebab-case in TOML).

    A plain value at run time; files are validated by the pydantic schema ``_schema()``,
    built only when a configuration file is actually read (the lint path stays lean).
    ``stated`` names the keys the file set.
    """

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    fail_on: str | None = None
    gpu: str | None = None
    gpus_per_node: int = 8
    users: int = 32
    context: int = 8192
    target_version: str | None = None
    max_file_size: int = MAX_FILE_BYTES
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    force_exclude: bool = False
    models: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    gpus: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # custom images: image name or glob pattern -> the engine entry point it runs
    # (`"registry.corp/llm/vllm-*" = "vllm serve"`); read by linter/images.py
    images: Mapping[str, str] = field(default_factory=dict)
    docs_url: str | None = None  # rule pages for links (report/rule_pages.py): a URL, {code}
    stated: frozenset[str] = frozenset()


@lru_cache(maxsize=1)
def _schema() -> type:
    from pydantic import BaseModel, ConfigDict, Field, field_validator

    class Schema(BaseModel):
        model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

        select: list[str] | None = None
        ignore: list[str] = Field(default_factory=list)
        extend_select: list[str] = Field(default_factory=list, alias="extend-select")
        per_file_ignores: dict[str, list[str]] = Field(default_factory=dict,
                                                       alias="per-file-ignores")
        fail_on: Literal["error", "warning", "info"] | None = Field(default=None,
                                                                     alias="fail-on")
        gpu: str | None = None
        gpus_per_node: int = Field(default=8, ge=1, le=1024, alias="gpus-per-node")
        users: int = Field(default=32, ge=1, le=MAX_TOKENS)  # each sequence holds a token
        context: int = Field(default=8192, ge=1, le=MAX_TOKENS)
        target_version: str | None = Field(default=None, alias="target-version")
        max_file_size: int = Field(default=MAX_FILE_BYTES, ge=1, alias="max-file-size")
        exclude: list[str] = Field(default_factory=lambda: list(DEFAULT_EXCLUDE))
        extend_exclude: list[str] = Field(default_factory=list, alias="extend-exclude")
        force_exclude: bool = Field(default=False, alias="force-exclude")
        models: dict[str, dict[str, Any]] = Field(default_factory=dict)
        gpus: dict[str, dict[str, Any]] = Field(default_factory=dict)
        images: dict[str, str] = Field(default_factory=dict)
        docs_url: str | None = Field(default=None, alias="docs-url")

        @field_validator("per_file_ignores", "exclude", "extend_exclude", "models", "gpus",
                         "images", mode="before")
        @classmethod
        def _few(cls, v: Any) -> Any:
            # each entry is tried for every file or launch: bounded like any other count
            if isinstance(v, (list, dict)) and len(v) > MAX_CONFIG_ENTRIES:
                raise ValueError(f"{len(v):,} entries, more than the {MAX_CONFIG_ENTRIES:,} "
                                 "a configuration may hold")
            return v

        @field_validator("images")
        @classmethod
        def _images(cls, v: dict[str, str]) -> dict[str, str]:
            for pattern, entry in v.items():
                check_image_entry(pattern, entry)
            return v

        @field_validator("docs_url")
        @classmethod
        def _docs_url(cls, v: str | None) -> str | None:
            if v is not None and not v.startswith(("https://", "http://")):
                raise ValueError("docs-url must be an http(s) URL, e.g. "
                                 "https://example.org/mgpu-lint/rules/{code}.html")
            return v

        @field_validator("select", "ignore", "extend_select")
        @classmethod
        def _codes(cls, v: list[str] | None) -> list[str] | None:
            return check_selectors(v)

        @field_validator("per_file_ignores")
        @classmethod
        def _file_codes(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
            out = {}
            for glob, codes in v.items():
                try:
                    out[glob] = check_selectors(codes) or []
                except ValueError as exc:
                    raise ValueError(f"{glob!r}: {exc}") from None
            return out

        @field_validator("target_version")
        @classmethod
        def _version(cls, v: str | None) -> str | None:
            return None if v is None else normalise_target_version(v)

    return Schema


def _settings_from(data: Any) -> Settings:
    """Validate a configuration table (raises pydantic's ValidationError)."""
    model = _schema().model_validate(data)
    return Settings(
        select=tuple(model.select) if model.select is not None else None,
        ignore=tuple(model.ignore),
        extend_select=tuple(model.extend_select),
        per_file_ignores={k: tuple(v) for k, v in model.per_file_ignores.items()},
        fail_on=model.fail_on,
        gpu=model.gpu,
        gpus_per_node=model.gpus_per_node,
        users=model.users,
        context=model.context,
        target_version=model.target_version,
        max_file_size=model.max_file_size,
        exclude=tuple(model.exclude),
        extend_exclude=tuple(model.extend_exclude),
        force_exclude=model.force_exclude,
        models=model.models,
        gpus=model.gpus,
        images=model.images,
        docs_url=model.docs_url,
        stated=frozenset(model.model_fields_set),
    )


def check_image_entry(pattern: str, entry: str) -> None:
    """An `[images]` entry: a non-empty pattern and an entry point that starts an engine when read
    as a command (the same reader as every command line), with no arguments of its own."""
    import shlex

    from .source import SourceFile
    from .sources import extract

    if not pattern.strip():
        raise ValueError("an empty image pattern")
    try:
        words = shlex.split(entry)
    except ValueError as exc:
        raise ValueError(f"{pattern!r}: entry point {entry!r}: {exc}") from None
    launches = extract(SourceFile("<config>", " ".join(shlex.quote(w) for w in words),
                                  "command")).launches if words else []
    if not launches or launches[0].args:
        raise ValueError(
            f"{pattern!r}: {entry!r} is not an engine entry point (e.g. \"vllm serve\", "
            "\"python3 -m vllm.entrypoints.openai.api_server\", \"llama-server\", "
            "\"rpc-server\", \"python3 -m sglang.launch_server\")")


@lru_cache(maxsize=1)
def _selectable() -> tuple[frozenset[str], tuple[str, ...]]:
    """Every rule code and every prefix of one (MG, MG1, MG10, MG101)."""
    from .rules import ALL

    codes = tuple(r.code for r in ALL)
    return frozenset(c[:n] for c in codes for n in range(2, len(c) + 1)), codes


def check_selectors(values: list[str] | None, where: str | None = None) -> list[str] | None:
    """Upper-cased rule selectors; an unknown code or prefix raises ValueError naming it, with
    the closest known code (like ruff's `Unknown rule selector`)."""
    if values is None:
        return None
    known, codes = _selectable()
    out = []
    for raw in values:
        code = raw.strip().upper()
        if code not in known:
            import difflib

            close = difflib.get_close_matches(code, codes, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]}?" if close else \
                "; `mgpu-lint rules` lists the codes"
            what = f"Invalid value for '{where}': " if where else ""
            raise ValueError(f"{what}unknown rule selector {raw!r}{hint}")
        out.append(code)
    return out


def normalise_target_version(value: str) -> str:
    """`vllm==0.8.5`, `vllm 0.8.5`, `0.8.5` → `0.8.5`."""
    v = value.strip()
    for prefix in ("vllm==", "vllm=", "vllm ", "vllm"):
        if v.lower().startswith(prefix):
            v = v[len(prefix):].strip()
            break
    parts = v.lstrip("v").split(".")
    if len(parts) < 2 or not all(p[:1].isdigit() for p in parts[:2]):
        raise ValueError(f"{value!r} is not a vLLM release (write it as vllm==0.8.5)")
    return v.lstrip("v")


@dataclass(frozen=True)
class LoadedConfig:
    settings: Settings
    path: str | None  # None: built-in defaults
    root: str  # directory that per-file-ignores globs are relative to

    def ignored_for(self, file_path: str) -> list[str]:
        if not self.settings.per_file_ignores:
            return []
        rel = os.path.normcase(os.path.relpath(os.path.abspath(file_path), self.root))
        name = os.path.basename(rel)
        any_glob, globs = _per_file_ignores_of(self.settings.per_file_ignores)
        if not (any_glob.match(rel) or any_glob.match(name)):
            return []  # most files match no glob: one regex says so
        codes: list[str] = []
        for pattern, listed in globs:
            if pattern.match(rel) or pattern.match(name):
                codes.extend(listed)
        return codes


_Globs = tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]


def _compiled_ignores(table: Mapping[str, list[str]]) -> tuple[re.Pattern[str], _Globs]:
    """Each glob as the regex fnmatch.fnmatch would match (after normcase), with its codes
    upper-cased, and one regex matching what any of them matches: compiled once per
    configuration, not looked up per glob per file (5 µs each)."""
    translated = [fnmatch.translate(os.path.normcase(p)) for p in table]
    return (re.compile("|".join(f"(?:{t})" for t in translated)),
            tuple((re.compile(t), tuple(c.upper() for c in listed))
                  for t, listed in zip(translated, table.values())))


_per_file_ignores_of = ByIdentity(_compiled_ignores)


DEFAULT = LoadedConfig(Settings(), None, os.getcwd())


def _table_header(line: str) -> str | None:
    """Group 1 of ``^\\s*\\[+\\s*([^\\]]+?)\\s*\\]+`` matched on ``line`` (None: no match), in
    linear time: the lazy name ends where the blanks before the first `]` begin; only a name
    that would be empty takes a blank or a `[` given back.  The regex tried the blanks after
    every character of a long run of them (quadratic: 16,000 blanks, 1.2 s)."""
    import re

    m = re.match(r"\s*(\[+)\s*", line)
    if m is None:
        return None
    p = m.end()
    if p < len(line) and line[p] != "]":
        close = line.find("]", p)
        return None if close < 0 else line[p:close].rstrip()
    if p == len(line):
        return None
    if line[p - 1] != "[":
        return line[p - 1]  # a blank the \s* after the brackets gives back
    return "[" if len(m.group(1)) >= 2 else None


def _key_line(text: str, key: str, table: str | None) -> int | None:
    """The line (1-based) where ``key`` is set, inside ``[table]`` when given (best effort)."""
    import re

    inside = table is None
    head = key.split(".", 1)[0]
    setting = re.compile(r"^\s*[\"']?" + re.escape(head) + r"[\"']?\s*=")
    for number, line in enumerate(text.splitlines(), 1):
        found = _table_header(line)
        if found is not None:
            name = found.replace('"', "").replace("'", "")
            if table is None:
                if name == head:
                    return number
                continue
            inside = name == table
            if name == f"{table}.{head}":
                return number
            continue
        if inside and setting.match(line):
            return number
    return None


def _format_error(path: str, exc: "ValidationError", text: str, table: str | None) -> str:
    lines = []
    for err in exc.errors():
        key = ".".join(str(x) for x in err["loc"]) or "(file)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        elif msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        line = _key_line(text, key, table)
        lines.append(f"{path}:{line}: key `{key}`: {msg}" if line else
                     f"{path}: key `{key}`: {msg}")
    return "\n".join(lines)


# A configuration file is read whole or not at all; real ones are a few KiB.
CONFIG_MAX_BYTES = 1 << 20


def _read_toml(path: str) -> tuple[dict[str, Any], str]:
    """A TOML file's table and text; unreadable or invalid TOML is a ConfigError with the line
    and column tomllib reports."""
    import re

    # imported here: most runs find no configuration file (the byte check in _has_table)
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    from . import safeio

    try:  # a regular file only (a FIFO would block), and whole: a cut file would parse wrongly
        raw = safeio.read_bytes(path, CONFIG_MAX_BYTES)
    except safeio.SideFileError as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from None
    text = raw.decode("utf-8", "replace")
    try:
        return tomllib.loads(raw.decode("utf-8")), text
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: not UTF-8 at byte {exc.start}") from None
    except RecursionError:  # tomllib parses nested arrays and inline tables recursively
        raise ConfigError(f"{path}: not valid TOML: arrays or inline tables nested too deeply "
                          "to read") from None
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\s*\(at line (\d+), column (\d+)\)$", msg)
        if m:
            reason = msg[:m.start()]
            raise ConfigError(f"{path}:{m.group(1)}:{m.group(2)}: not valid TOML: {reason}") \
                from None
        m = re.search(r"\s*\(at end of document\)$", msg)
        if m:
            line = text.count("\n") + (0 if text.endswith("\n") else 1)
            raise ConfigError(f"{path}:{max(line, 1)}: not valid TOML: {msg[:m.start()]} "
                              "(at end of document)") from None
        raise ConfigError(f"{path}: not valid TOML: {msg}") from None


def load_file(path: str) -> LoadedConfig:
    data, text = _read_toml(path)
    table = None
    if os.path.basename(path) == "pyproject.toml":
        tool = data.get("tool", {})
        table = tool.get("mgpu-lint") if isinstance(tool, dict) else None
        if table is None:
            raise ConfigError(f"{path}: no [tool.mgpu-lint] table")
        data, table = table, "tool.mgpu-lint"
    from pydantic import ValidationError

    try:
        settings = _settings_from(data)
    except ValidationError as exc:
        raise ConfigError(_format_error(path, exc, text, table)) from None
    _check_catalog_entries(path, settings, text, table)
    return LoadedConfig(settings, path, os.path.dirname(os.path.abspath(path)))


def _check_catalog_entries(path: str, settings: Settings, text: str, table: str | None) -> None:
    """[models] and [gpus] entries validate here, as every other key does, with the line of the
    entry's table: a shape the catalog refuses (``heads = 0``, ``params = 1e400``) was otherwise
    first met while linting a file, as an internal error there."""
    from .catalog.knowledge import CatalogError, validate_extra

    try:  # all entries at once: the same (cached) catalog the lint then uses
        validate_extra(settings.models, settings.gpus)
    except CatalogError as exc:
        dotted = ".".join(part for part in (table, exc.section, exc.name) if part)
        line = _table_line(text, dotted)
        raise ConfigError(f"{path}:{line}: {exc}" if line else f"{path}: {exc}") from None


def _table_line(text: str, dotted: str) -> int | None:
    """The line (1-based) of the header ``[dotted]`` (quotes around its parts ignored)."""
    for number, line in enumerate(text.splitlines(), 1):
        found = _table_header(line)
        if found is not None and found.replace('"', "").replace("'", "") == dotted:
            return number
    return None


def _has_table(path: str) -> bool:
    """Whether a configuration file applies: mgpu-lint's own files always, a pyproject.toml
    with a [tool.mgpu-lint] table. A pyproject.toml that does not parse is an error (it may
    hold our table), not silently skipped."""
    if os.path.basename(path) != "pyproject.toml":
        return True
    try:
        with open(path, "rb") as fh:
            head = fh.read(CONFIG_MAX_BYTES + 1)
    except OSError:
        return False
    if b"mgpu-lint" not in head:
        return False
    data, _ = _read_toml(path)
    tool = data.get("tool", {})
    return isinstance(tool, dict) and "mgpu-lint" in tool


# A run asks for each file's configuration in three passes (discover, read, analyse): with more
# directories than the cache holds, every configuration was read and validated three times
# (5,000 directories each with its own file: 3.35 s, 15,000 loads). 16,384 directories' entries
# are a few tens of MiB at most.
@lru_cache(maxsize=1 << 14)
def find_for_directory(directory: str) -> LoadedConfig:
    """The configuration closest to ``directory`` (upward), or the defaults."""
    d = os.path.abspath(directory)
    while True:
        for name in CONFIG_NAMES:
            candidate = os.path.join(d, name)
            if os.path.isfile(candidate) and _has_table(candidate):
                return load_file(candidate)
        parent = os.path.dirname(d)
        if parent == d:
            return DEFAULT
        d = parent


def config_for(file_path: str, explicit: LoadedConfig | None) -> LoadedConfig:
    if explicit is not None:
        return explicit
    if file_path.startswith("<"):
        return find_for_directory(os.getcwd())
    return find_for_directory(os.path.dirname(os.path.abspath(file_path)) or ".")


def render_settings(path: str, options: Any) -> str:
    """`--show-settings`: the configuration file that applies to ``path`` and the settings after
    the command line's options are merged in, as TOML."""
    import json

    cfg = config_for(path, options.config)
    s = cfg.settings
    merged: dict[str, Any] = {
        "select": list(options.select if options.select is not None else
                       s.select if s.select is not None else ["MG"]),
        "extend-select": [*s.extend_select, *(options.extend_select or [])],
        "ignore": [*s.ignore, *(options.ignore or [])],
        "per-file-ignores": {k: list(v) for k, v in s.per_file_ignores.items()},
        "exclude": list(options.exclude if options.exclude is not None else s.exclude),
        "extend-exclude": [*s.extend_exclude, *(options.extend_exclude or [])],
        "force-exclude": bool(options.force_exclude or s.force_exclude),
        "fail-on": s.fail_on or "warning",
        "gpu": options.gpu or s.gpu,
        "gpus-per-node": options.gpus_per_node or s.gpus_per_node,
        "users": s.users,
        "context": s.context,
        "target-version": options.target_version or s.target_version,
        "max-file-size": s.max_file_size,
    }
    where = cfg.path if cfg.path else "none (built-in defaults)"
    lines = [f"# settings for {path}", f"# configuration file: {where}"]
    tables = []
    for key, value in merged.items():
        if value is None:
            lines.append(f"# {key} is not set")
        elif isinstance(value, dict):
            tables.append(f"\n[{key}]")
            tables += [f"{json.dumps(k)} = {json.dumps(v)}" for k, v in value.items()]
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    for name in ("models", "gpus"):
        for key, entry in getattr(s, name).items():
            tables.append(f"\n[{name}.{json.dumps(key)}]")
            tables += [f"{k} = {json.dumps(v)}" for k, v in entry.items()]
    return "\n".join(lines + tables) + "\n"
