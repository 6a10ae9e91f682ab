"""vLLM's ``--config FILE.yaml`` (``FlexibleArgumentParser._pull_args_from_config``,
vllm/utils/argparse_utils.py 0.30.0): keys become flags, command-line values win.  A mixin of
``vllm._Walker``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, NamedTuple

from ..findings import Related, Severity
from ..safeio import SideFileError
from ..records import replace
from ..source import SourceFile, Span, Word
from .invocation import OptionValue
from .vllm_values import _check_choice, _yaml_text, convert

if TYPE_CHECKING:
    from ..launch import Launch
    from .catalog import FlagCatalog
    from .invocation import Builder

# A value check that a rule makes instead of MG006 (one cause, one finding: DECISIONS.md).
CHECKED_BY_RULE = {"max_lora_rank": "MG307"}
CONFIG_MAX_BYTES = 1 << 20


class _Loaded(NamedTuple):
    """A --config file as read: its text, the value, the keys given twice, why the value is not
    option values (``safeio.unencodable``), the error that stopped reading it.  Shared by the
    launches naming the file: read only."""

    text: str
    data: Any
    duplicates: tuple[tuple[str, int, int], ...]
    why: str | None
    error: SideFileError | None
    # what the file does to a launch, per (catalog, api_server): _ConfigMixin._plan's steps
    plans: dict[tuple[Any, bool], list[tuple[Any, ...]]]


_PLACE = Span(0, 0)  # where _plan's steps are shown until replayed at a launch's word


class _Recorder:
    """The builder's ``report`` and ``add``, written down as steps for ``_apply_config``."""

    def __init__(self, steps: list[tuple[Any, ...]]) -> None:
        self.steps = steps

    def report(self, code: str, severity: Severity, message: str, span: Span, *,
               hint: str | None = None) -> None:
        self.steps.append(("report", code, severity, message, hint))

    def add(self, occ: OptionValue, *, before: bool = False) -> None:
        # replayed with before=True: a config's values come before the command line's, which win
        self.steps.append(("add", occ))


def _parse_config(path: str, name: str) -> _Loaded:
    from .. import bounds, safeio

    # regular files only, size limit, nesting guard and alias budget (linter/safeio.py); the
    # text read once for every name it is given by (`c.yaml`, `./c.yaml`)
    text = safeio.memo(path, ("text", CONFIG_MAX_BYTES),
                       lambda p: safeio.read_text(p, CONFIG_MAX_BYTES))
    duplicates: list[tuple[str, int, int]] = []
    try:
        # vLLM reads the file with PyYAML's safe_load (load_config_file,
        # vllm/utils/argparse_utils.py 0.30.0): YAML 1.1 scalars, `yes` is True
        data = safeio.loads_yaml(text, bounds.MAX_CONFIG_VALUES, name=name,
                                 duplicates=duplicates, pyyaml=True)
    except safeio.SideFileTooBig:
        raise  # the linter's bound: MG001, the launch's settings unknown (_load_yaml)
    except SideFileError as exc:
        return _Loaded(text, None, (), None, exc, {})
    return _Loaded(text, data, tuple(duplicates), safeio.unencodable(data), None, {})


class ConfigMixin:
    """The walker's --config reader (state lives on ``vllm._Walker``)."""

    launch: Launch
    b: Builder
    catalog: FlagCatalog
    api_server: bool
    configs: list[tuple[Word, Span]]
    config_data: dict[str, Any] | None

    def _read_configs(self) -> None:
        for extra, _ in self.configs[1:]:
            self.b.report("MG006", Severity.ERROR,
                          "only one --config file is allowed: vLLM fails on the second",
                          extra.span)
        word, flag_span = self.configs[0]
        name = word.text
        if word.unresolved:
            return
        if not name.endswith((".yaml", ".yml")):
            self.b.report("MG006", Severity.ERROR,
                          f"--config {name}: vLLM reads only .yaml/.yml config files",
                          word.span)
            return
        loaded = self._load_yaml(word)
        if loaded is None:
            return
        self.config_data = loaded.data
        self._apply_config(loaded, word)

    def _load_yaml(self, word: Word) -> _Loaded | None:
        # Files named inside a manifest are read only relative to it (DECISIONS.md "The file set")
        src = self.launch.source.path
        if src.startswith("<") or src == "-" or os.path.isabs(word.text):
            return None
        path = os.path.join(os.path.dirname(src), word.text)
        if not os.path.exists(path):
            return None
        from .. import safeio

        try:  # read and parsed once a run for every launch naming it (safeio.memo)
            loaded = safeio.memo(path, ("vllm-config", word.text),
                                  lambda p: _parse_config(p, word.text),
                                  spend=(self.launch.source.budget, word.span,
                                         f"--config {word.text}"), limit=CONFIG_MAX_BYTES)
        except safeio.SideBudgetSpent:
            # the file may set any option: what the launch does not state is unknown
            self.b.open_span = self.b.open_span or word.span
            return None
        except safeio.SideFileTooBig as exc:
            # the linter's bounds (bytes, values): vLLM reads any size (load_config_file,
            # 0.30.0), so no error, and the launch's settings are unknown, not the defaults (a
            # tp 8 in the file)
            self.b.report("MG001", Severity.WARNING,
                          f"--config {word.text} is not read: {exc.message}, so what it sets "
                          "is unknown", word.span)
            self.b.open_span = self.b.open_span or word.span
            return None
        except safeio.SideFileError as exc:  # not a regular file, not UTF-8
            loaded = _Loaded("", None, (), None, exc, {})
        text, data, duplicates, why, error, _ = loaded
        if error is not None:
            # the places the message names, in the config file, for editors and SARIF
            side = SourceFile(path, text, "yaml")
            related = tuple(Related(side, Span(o, min(o + 1, len(side.text))), label)
                            for o, label in error.places)
            self.b.report("MG006", Severity.ERROR,
                          f"--config {word.text} is not read: {error.message}", word.span,
                          related=related)
            return None
        side = SourceFile(path, text, "yaml")
        for key, first, last in duplicates:
            # PyYAML's BaseConstructor.construct_mapping (the loader of vLLM's load_config_file,
            # vllm/utils/argparse_utils.py 0.30.0) assigns each pair in turn: the last wins
            self.b.report(
                "MG007", Severity.WARNING,
                f"`{key}` is given twice in one mapping of {word.text}, at "
                f"{safeio.where(text, first, word.text)} and "
                f"{safeio.where(text, last, word.text)}: vLLM's YAML loader keeps the last "
                "value and drops the first", word.span,
                hint=f"remove one `{key}`",
                related=(Related(side, Span(first, first + 1), "dropped"),
                         Related(side, Span(last, last + 1), "this value wins")))
        if why is not None:
            self.b.report("MG006", Severity.ERROR,
                          f"--config {word.text} holds {why}, not an option value vLLM's "
                          "command line can take; the file is not checked", word.span)
            return None
        if not isinstance(data, dict):
            self.b.report("MG006", Severity.ERROR,
                          f"--config {word.text} must hold a mapping of option names to values",
                          word.span)
            return None
        return loaded

    def _apply_config(self, loaded: _Loaded, word: Word) -> None:
        """vLLM's ``_pull_args_from_config``: keys become flags, CLI values win.  Worked out
        once per file, catalog and front end (``_plan``) and replayed at this launch's --config
        word: 1,000 launches naming a config of a 130,000-item list converted each item 1,000
        times (about 0.1 s a launch)."""
        key = (self.catalog, self.api_server)  # the catalog object: the plans keep it alive
        plan = loaded.plans.get(key)
        if plan is None:
            plan = loaded.plans[key] = self._plan(loaded.data, word.text)
        span = word.span
        for step in plan:
            if step[0] == "report":
                _, code, severity, message, hint = step
                self.b.report(code, severity, message, span, hint=hint)
            else:
                self.b.add(replace(step[1], flag_span=span, value_span=span), before=True)

    def _plan(self, data: dict[str, Any], name: str) -> list[tuple[Any, ...]]:
        """The findings and option values ``data`` gives, in order, at a placeholder span (every
        one is shown at the --config word)."""
        steps: list[tuple[Any, ...]] = []
        span = _PLACE
        record = _Recorder(steps)
        for key, value in data.items():
            spelling = "--" + str(key).replace("_", "-")
            written = f"{key}: {_yaml_text(value)}"
            match = self.catalog.lookup(spelling)
            if match is None or match.option.type == "help":
                suggestion = self.catalog.suggest(spelling)
                record.report(
                    "MG004", Severity.ERROR,
                    f"`{key}` in {name} is not a vLLM option (it becomes {spelling})"
                    + (f"; did you mean `{suggestion[2:]}`?" if suggestion else ""),
                    span,
                )
                continue
            spec = match.option
            if spec.is_bool:
                if value is True:
                    occ = OptionValue(key=spec.key, spelling=written, origin="config",
                                      flag_span=span, value_span=span, value=True)
                elif value is False and self.api_server and spec.neg:
                    occ = OptionValue(key=spec.key, spelling=written, origin="config",
                                      flag_span=span, value_span=span, value=False,
                                      negative=True)
                elif value is False:
                    record.report(
                        "MG006", Severity.WARNING,
                        f"`{key}: false` in {name} is silently dropped by vllm serve "
                        f"(it only adds {spec.neg[0] if spec.neg else spelling} when the "
                        "top-level parser knows it); the setting keeps its default",
                        span, hint=f"write {spec.neg[0]} on the command line"
                        if spec.neg else f"remove `{key}` from the file",
                    )
                    continue
                else:
                    record.report("MG006", Severity.ERROR,
                                  f"`{key}` in {name} is a boolean: write true or false",
                                  span)
                    continue
                record.add(occ, before=True)
                continue
            raws = ([_yaml_text(v) for v in value] if isinstance(value, list)
                    else [_yaml_text(value)])
            if not isinstance(value, list) or spec.nargs == "+":
                values: list[Any] = []
                error: str | None = None
                for raw in raws:
                    item, error = convert(spec, raw)
                    if error is None and spec.choices is not None and \
                            spec.key not in CHECKED_BY_RULE:
                        error = _check_choice(spec, item)
                    if error is not None:
                        break
                    values.append(item)
                if error is None:
                    typed: Any = values if spec.nargs == "+" else values[0]
                    if spec.repeat == "append":
                        typed = values
                    record.add(OptionValue(key=spec.key, spelling=written, origin="config",
                                           flag_span=span, value_span=span,
                                           raw=" ".join(raws), value=typed), before=True)
                    continue
            else:
                error = f"{spelling} takes one value, the file gives a list"
            record.report("MG006", Severity.ERROR,
                          f"invalid value for `{key}` in {name}: {error}", span)
            record.add(OptionValue(key=spec.key, spelling=written, origin="config",
                                   flag_span=span, value_span=span, known=False), before=True)
        return steps
