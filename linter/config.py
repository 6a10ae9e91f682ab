"""Configuration: `[tool.mgpu-lint]` in pyproject.toml, `mgpu-lint.toml`, `.mgpu-lint.toml`.

The file closest to each linted file wins (searched upward from its directory, like ruff), unless
`--config` names one.  Rule selection and defaults come from that file; command-line options
override it.  An invalid file is a usage error (exit 2) that names the file, the key and why.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, Mapping

if TYPE_CHECKING:
    from pydantic import ValidationError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONFIG_NAMES = (".mgpu-lint.toml", "mgpu-lint.toml", "pyproject.toml")


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
    max_file_size: int = 10 * 1024 * 1024
    models: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    gpus: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
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
        users: int = Field(default=32, ge=1)
        context: int = Field(default=8192, ge=1)
        target_version: str | None = Field(default=None, alias="target-version")
        max_file_size: int = Field(default=10 * 1024 * 1024, ge=1, alias="max-file-size")
        models: dict[str, dict[str, Any]] = Field(default_factory=dict)
        gpus: dict[str, dict[str, Any]] = Field(default_factory=dict)

        @field_validator("select", "ignore", "extend_select")
        @classmethod
        def _codes(cls, v: list[str] | None) -> list[str] | None:
            if v is None:
                return v
            out = []
            for code in v:
                c = code.strip().upper()
                if not c.startswith("MG") or not c[2:].isdigit() and c != "MG":
                    raise ValueError(f"{code!r} is not a rule code or prefix (MG101, MG1)")
                out.append(c)
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
        models=model.models,
        gpus=model.gpus,
        stated=frozenset(model.model_fields_set),
    )


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
        rel = os.path.relpath(os.path.abspath(file_path), self.root)
        codes: list[str] = []
        for pattern, listed in self.settings.per_file_ignores.items():
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(os.path.basename(rel), pattern):
                codes.extend(c.upper() for c in listed)
        return codes


DEFAULT = LoadedConfig(Settings(), None, os.getcwd())


def _format_error(path: str, exc: "ValidationError") -> str:
    lines = []
    for err in exc.errors():
        key = ".".join(str(x) for x in err["loc"]) or "(file)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        lines.append(f"{path}: key `{key}`: {msg}")
    return "\n".join(lines)


def load_file(path: str) -> LoadedConfig:
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    if os.path.basename(path) == "pyproject.toml":
        table = data.get("tool", {}).get("mgpu-lint")
        if table is None:
            raise ConfigError(f"{path}: no [tool.mgpu-lint] table")
        data = table
    from pydantic import ValidationError

    try:
        settings = _settings_from(data)
    except ValidationError as exc:
        raise ConfigError(_format_error(path, exc)) from None
    return LoadedConfig(settings, path, os.path.dirname(os.path.abspath(path)))


def _has_table(path: str) -> bool:
    if os.path.basename(path) != "pyproject.toml":
        return True
    try:
        with open(path, "rb") as fh:
            return "mgpu-lint" in tomllib.load(fh).get("tool", {})
    except (OSError, tomllib.TOMLDecodeError):
        return False


@lru_cache(maxsize=512)
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
