"""The parse result of one launch: a typed, immutable Invocation, and what the walkers share.

An ``Invocation`` holds every option the launch states (``OptionValue``: the spelling used, the
span of the flag and of the value, the typed value) in precedence order, so that the last one
wins.  Rules read ``Setting`` views through the typed properties (``inv.tensor_parallel_size``,
``inv.n_gpu_layers`` …): the effective value (the engine's default when not stated), whether it
was stated, whether it is known, and the span to point at.

A value that is broken (MG003–MG006, MG013 as an error, MG014) or holds an unresolved variable
is ``known=False``: rules that need it stay silent (no cascades).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from operator import methodcaller
from typing import TYPE_CHECKING, Any, Literal

from ..bounds import MAX_FINDINGS_PER_CODE
from ..findings import Finding, Related, Severity, findings_of, not_listed
from ..fixes import split_glued
from ..source import Span, VarRef, Word
from .catalog import FlagCatalog, OptionSpec
from ..records import dataclass, field

if TYPE_CHECKING:
    from ..fixes import Fix
    from ..launch import Launch

Origin = Literal["argv", "env", "config"]


# Plain frozen dataclasses, not pydantic models: the walkers build one OptionValue per stated
# option on every launch, and pydantic's import and class construction alone cost more start-up
# than a one-file lint does (issue 19).  Keyword-only, like the models they replace.
@dataclass(frozen=True, slots=True, kw_only=True)
class OptionValue:
    """One stated occurrence of an option."""

    key: str
    spelling: str  # as written: "-tp", "--tensor_parallel_size", "--tensor-para", "LLAMA_ARG_…"
    origin: Origin = "argv"
    flag_span: Span
    value_span: Span | None = None  # None for a flag without a value
    raw: str | None = None  # the value text as the engine receives it
    value: Any = None  # typed value; a list for accumulating options; None when unknown
    known: bool = True
    negative: bool = False  # a --no-x form (or LLAMA_ARG_NO_X)
    subkeys: tuple[str, ...] = ()  # vLLM dotted form: --compilation-config.mode → ("mode",)
    # a list value written in one word (`--rpc a:1,b:2`, `-ts 3,1`, `-dev CUDA0,CUDA1`): each
    # item's text and span, so that a finding points at the one item it is about
    items: tuple[tuple[str, Span], ...] = ()

    @property
    def span(self) -> Span:
        """Where a finding about this value points: the value, or the flag when it has none."""
        return self.value_span or self.flag_span


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRef:
    """The model a launch serves.  ``known`` False: missing, defaulted, broken or unresolved."""

    value: str | None
    span: Span | None  # None when no token states it (the engine's default)
    origin: str  # "positional", the flag spelling ("--model", "-m", "-hf"), an env name, "default"
    known: bool = True


@dataclass(frozen=True, slots=True)
class Setting:
    """What a rule reads: one option's effective value and where it came from."""

    key: str
    value: Any  # effective typed value: the winner's, else the engine default; None if unknown
    given: bool  # stated by the launch (argv, environment or config file)
    known: bool  # False: stated but broken or unresolved (rules needing it stay silent)
    occurrences: tuple[OptionValue, ...] = ()  # every stated occurrence, winner last

    @property
    def winner(self) -> OptionValue | None:
        return self.occurrences[-1] if self.occurrences else None

    @property
    def span(self) -> Span | None:
        """The token to point at (the value, or the flag of a boolean); None when defaulted."""
        win = self.winner
        return win.span if win is not None else None

    @property
    def flag_span(self) -> Span | None:
        win = self.winner
        return win.flag_span if win is not None else None

    @property
    def int_value(self) -> int | None:
        """The value when it is a known integer (not a bool), else None."""
        v = self.value
        return v if self.known and isinstance(v, int) and not isinstance(v, bool) else None


def _setting(key: str) -> property:
    # methodcaller, not a lambda: with ``Invocation.setting`` the table's lookup, a read of a
    # computed setting runs no Python frame
    return property(methodcaller("setting", key), doc=f"The `{key}` option (a Setting).")


class _SettingTable(dict):  # type: ignore[type-arg]
    """An Invocation's Settings by key, each computed on first read (``__missing__``)."""

    __slots__ = ("_index", "_open", "_engine", "_version", "_catalog", "_filled")

    def __init__(self, index: dict[str, tuple[OptionValue, ...]], open_: bool, engine: str,
                 version: str) -> None:
        super().__init__()
        self._index, self._open, self._engine, self._version = index, open_, engine, version
        self._catalog: FlagCatalog | None = None
        self._filled = open_  # an open launch's defaults are unknown: nothing to copy

    def catalog(self) -> FlagCatalog:
        cat = self._catalog
        if cat is None:
            cat = self._catalog = catalog_for(self._engine, self._version)
        return cat

    def __missing__(self, key: str) -> Setting:
        if not self._filled:
            # the first read: every shared default the release has built so far goes into the
            # table in one copy, so the ~50 defaults rules read per launch are plain lookups
            # (a __missing__ call each was a fifth of the parse's time on 3,283 launches)
            self._filled = True
            self.update(self.catalog().default_settings)
            for stated in self._index:
                self.pop(stated, None)
            if key in self:
                return self[key]  # type: ignore[no-any-return]
        if self._open or key in self._index:
            setting = self[key] = self._compute(key)
            return setting
        # not stated (most reads): the release's shared default
        shared = self.catalog().default_settings.get(key)
        if shared is None:
            shared = self._compute(key)
        self[key] = shared
        return shared

    def _compute(self, key: str) -> Setting:
        occs = self._index.get(key, ())
        catalog = self.catalog()
        if not occs:
            if self._open:
                return Setting(key, None, False, False)
            # a setting the launch does not state is the same immutable Setting on every launch
            # of the release: built once per catalog, not once per launch
            shared = catalog.default_settings.get(key)
            if shared is None:
                spec = catalog.by_key.get(key)
                shared = catalog.default_settings[key] = Setting(
                    key, spec.default if spec is not None else None, False, True)
            return shared
        spec = catalog.by_key.get(key)
        if spec is not None and spec.accumulates:
            known = all(o.known for o in occs)
            items: list[Any] = []
            for o in occs:
                items.extend(o.value or ())
            return Setting(key, items if known else None, True, known, occs)
        dotted = [o for o in occs if o.subkeys]
        if dotted:
            # vLLM merges the dotted keys into one JSON object appended after every other
            # argument, so it replaces a whole-JSON value whatever the order (vllm-notes §3)
            known = all(o.known for o in dotted)
            return Setting(key, merge_dotted(dotted) if known else None, True, known,
                           tuple(o for o in occs if not o.subkeys) + tuple(dotted))
        win = occs[-1]
        return Setting(key, win.value if win.known else None, True, win.known, occs)


@dataclass(frozen=True, slots=True, kw_only=True)
class Invocation:
    """A parsed launch.  ``occurrences`` are in precedence order (the last of a key wins)."""

    engine: str
    entry: str
    version: str  # the catalog release the flags were checked against
    model: ModelRef | None = None
    occurrences: tuple[OptionValue, ...] = ()
    # an unexpanded word that may hold options (`$ARGS` from a secret): a setting the launch
    # does not state may be set there, so its default is not known (no finding rests on it)
    open_span: Span | None = None

    # derived, not part of equality: the occurrences of each key, and each Setting once computed
    _index: dict[str, tuple[OptionValue, ...]] = field(init=False, repr=False, compare=False)
    _settings: "_SettingTable" = field(init=False, repr=False, compare=False)
    # ``setting(key)``: the effective value of an option (see the typed properties below).  It
    # is the settings table's own lookup, not a method: rules read ~100 settings per launch,
    # and a Python call per read was a tenth of the per-launch time (issue 19)
    setting: Callable[[str], Setting] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index: dict[str, list[OptionValue]] = {}
        for occ in self.occurrences:
            index.setdefault(occ.key, []).append(occ)
        frozen = {k: tuple(v) for k, v in index.items()}
        table = _SettingTable(frozen, self.open_span is not None, self.engine, self.version)
        object.__setattr__(self, "_index", frozen)
        object.__setattr__(self, "_settings", table)
        object.__setattr__(self, "setting", table.__getitem__)

    @property
    def catalog(self) -> FlagCatalog:
        return self._settings.catalog()

    def default(self, key: str) -> Any:
        """The engine's default for a setting in the launch's release (its flag catalog)."""
        spec = self.catalog.by_key.get(key)
        return spec.default if spec is not None else None

    def long_name(self, key: str) -> str:
        """The option's canonical long name in the launch's catalog (``--max-model-len``)."""
        spec = self.catalog.by_key.get(key)
        names = [n for n in spec.names if n.startswith("--")] if spec is not None else []
        return names[0] if names else "--" + key.replace("_", "-")

    def spelling(self, setting: Setting) -> str:
        """The spelling the launch used for a setting, else its canonical long name."""
        win = setting.winner
        return win.spelling if win is not None else self.long_name(setting.key)

    @property
    def stated_keys(self) -> frozenset[str]:
        """The keys of the settings the launch states (argv, environment, --config file)."""
        return frozenset(self._index)

    def stated(self, key: str) -> tuple[OptionValue, ...]:
        """Every stated occurrence of an option, in precedence order."""
        return self._index.get(key, ())

    # vLLM: parallel layout
    tensor_parallel_size = _setting("tensor_parallel_size")
    pipeline_parallel_size = _setting("pipeline_parallel_size")
    data_parallel_size = _setting("data_parallel_size")
    data_parallel_size_local = _setting("data_parallel_size_local")
    data_parallel_rank = _setting("data_parallel_rank")
    data_parallel_backend = _setting("data_parallel_backend")
    data_parallel_address = _setting("data_parallel_address")
    prefill_context_parallel_size = _setting("prefill_context_parallel_size")
    decode_context_parallel_size = _setting("decode_context_parallel_size")
    nnodes = _setting("nnodes")
    node_rank = _setting("node_rank")
    master_addr = _setting("master_addr")
    headless = _setting("headless")
    api_server_count = _setting("api_server_count")
    distributed_executor_backend = _setting("distributed_executor_backend")
    device_ids = _setting("device_ids")
    disable_custom_all_reduce = _setting("disable_custom_all_reduce")
    # vLLM: memory, lengths, precision
    max_model_len = _setting("max_model_len")
    gpu_memory_utilization = _setting("gpu_memory_utilization")
    kv_cache_memory_bytes = _setting("kv_cache_memory_bytes")
    max_num_seqs = _setting("max_num_seqs")
    max_num_batched_tokens = _setting("max_num_batched_tokens")
    kv_cache_dtype = _setting("kv_cache_dtype")
    dtype = _setting("dtype")
    quantization = _setting("quantization")
    cpu_offload_gb = _setting("cpu_offload_gb")
    hf_overrides = _setting("hf_overrides")
    enable_prefix_caching = _setting("enable_prefix_caching")
    enforce_eager = _setting("enforce_eager")
    speculative_config = _setting("speculative_config")
    served_model_name = _setting("served_model_name")
    # vLLM: MoE
    enable_expert_parallel = _setting("enable_expert_parallel")
    enable_eplb = _setting("enable_eplb")
    eplb_config = _setting("eplb_config")
    all2all_backend = _setting("all2all_backend")
    # vLLM: LoRA
    enable_lora = _setting("enable_lora")
    max_loras = _setting("max_loras")
    max_lora_rank = _setting("max_lora_rank")
    max_cpu_loras = _setting("max_cpu_loras")
    lora_modules = _setting("lora_modules")
    fully_sharded_loras = _setting("fully_sharded_loras")
    # every engine: network
    host = _setting("host")
    port = _setting("port")
    api_key = _setting("api_key")
    # llama-server
    n_gpu_layers = _setting("n_gpu_layers")
    tensor_split = _setting("tensor_split")
    split_mode = _setting("split_mode")
    main_gpu = _setting("main_gpu")
    ctx_size = _setting("ctx_size")
    parallel = _setting("parallel")
    rpc = _setting("rpc")
    cache_type_k = _setting("cache_type_k")
    cache_type_v = _setting("cache_type_v")
    fit = _setting("fit")
    batch_size = _setting("batch_size")
    ubatch_size = _setting("ubatch_size")
    kv_unified = _setting("kv_unified")
    kv_offload = _setting("kv_offload")
    flash_attn = _setting("flash_attn")
    override_tensor = _setting("override_tensor")
    cpu_moe = _setting("cpu_moe")
    n_cpu_moe = _setting("n_cpu_moe")
    lora = _setting("lora")
    lora_scaled = _setting("lora_scaled")
    warmup = _setting("warmup")
    # llama-server -dev and rpc-server -d
    device = _setting("device")
    # rpc-server
    cache = _setting("cache")
    threads = _setting("threads")


def merge_dotted(occs: list[OptionValue]) -> dict[str, Any]:
    """vLLM's merge of ``--x.a.b v`` forms into one nested dict (``key+`` appends list items)."""
    out: dict[str, Any] = {}
    for occ in occs:
        node = out
        *parents, last = occ.subkeys
        for part in parents:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        if last.endswith("+"):
            name = last[:-1]
            current = node.get(name)
            items = occ.value if isinstance(occ.value, list) else [occ.value]
            node[name] = (current if isinstance(current, list) else []) + list(items)
        else:
            node[last] = occ.value
    return out


_ENGINES: Any = None  # the registry, once imported (a function-level import per call cost ~8 us)


def catalog_for(engine: str, version: str) -> FlagCatalog:
    global _ENGINES
    if _ENGINES is None:
        from . import ENGINES  # the registry imports the walkers, which import this module

        _ENGINES = ENGINES
    return _ENGINES[engine].catalog(version)


# ---------------------------------------------------------------------------------------------
# Option-word syntax (grammars/options.lark)


@dataclass(frozen=True, slots=True)
class OptionToken:
    """The parts of a word that starts with '-' (indices into the word's text)."""

    dashes: str  # "-" or "--"
    name: str  # between the dashes and the first '.', '+' or '='
    subkeys: tuple[str, ...]  # dotted parts (vLLM); the last one keeps a trailing '+'
    flag_end: int  # end of the flag part (where '=' is, or the word's length)
    value_start: int | None  # just after '=' (None without '=')

    @property
    def dotted_name(self) -> str:
        """The flag part without dashes, dots kept (llama.cpp names may hold dots)."""
        return ".".join((self.name, *self.subkeys))


@lru_cache(maxsize=1)
def _terminals() -> dict[str, re.Pattern[str]]:
    """options.lark's terminals, compiled (generated into grammars/terminals.py)."""
    from ..grammars.terminals import OPTIONS

    return {name: re.compile(regexp) for name, regexp in OPTIONS}


NEGATIVE_NUMBER = "negnum"


@lru_cache(maxsize=8192)
def classify(text: str) -> OptionToken | str | None:
    """An option word's parts, ``NEGATIVE_NUMBER`` for ``-1``/``-0.5``, None when the word does
    not follow option syntax (``-``, ``---x``, a blank in the flag part: ``--port 8000``).

    The rule of grammars/options.lark, ``NEGNUM | DASHES NAME ("." KEY)* APPEND? ("=" VALUE?)?``,
    read the way Lark's LALR parser with its contextual lexer reads it: at each point the
    terminals the rule allows there are tried in the lexer's order and the first that matches is
    taken whole (no backtracking into a token); anything left over is a syntax error (None).
    Lark itself is not imported (issue 19: start-up); tests/test_grammars.py checks that this
    gives Lark's parse of the grammar on every catalog spelling and on generated words."""
    if not text.startswith("-"):
        return None
    t = _terminals()
    n = len(text)
    m = t["NEGNUM"].match(text)  # tried before DASHES (longer possible match)
    if m is not None:
        return NEGATIVE_NUMBER if m.end() == n else None
    m = t["DASHES"].match(text)
    if m is None:
        return None
    dashes = m.group()
    m = t["NAME"].match(text, m.end())
    if m is None:
        return None
    name = m.group()
    pos = flag_end = m.end()
    keys: list[str] = []
    while pos < n and text[pos] == ".":
        m = t["KEY"].match(text, pos + 1)
        if m is None:
            return None
        keys.append(m.group())
        pos = flag_end = m.end()
    if pos < n and text[pos] == "+":
        if keys:
            keys[-1] += "+"
        pos = flag_end = pos + 1
    value_start: int | None = None
    if pos < n and text[pos] == "=":
        value_start = pos + 1  # also for a bare `--flag=`
        m = t["VALUE"].match(text, pos + 1)
        pos = m.end() if m is not None else pos + 1
    if pos != n:
        return None
    return OptionToken(dashes, name, tuple(keys), flag_end, value_start)


# ---------------------------------------------------------------------------------------------
# Shared by the engine walkers


class Builder:
    """Collects occurrences and findings while an engine walks a launch's words."""

    def __init__(self, launch: Launch, catalog: FlagCatalog, version: str,
                 needed: dict[str, tuple[str, ...]]) -> None:
        self.launch = launch
        self.source = launch.source
        self.catalog = catalog
        self.version = version
        self.needed = needed
        self.before: list[OptionValue] = []  # env / config file: applied before argv
        self.argv: list[OptionValue] = []
        self._findings: list[Finding] = []
        # per code past MAX_FINDINGS_PER_CODE: [where its summary stands in _findings, how many
        # are left out, the worst severity, the first and last span left out]
        self._over: dict[str, list[Any]] = {}
        self._counts: dict[str, int] = {}
        self.open_span: Span | None = None  # see Invocation.open_span

    def report(self, code: str, severity: Severity, message: str, span: Span, *,
               hint: str | None = None, related: tuple[Related, ...] = (),
               fix: Fix | None = None) -> None:
        n = self._counts.get(code, 0) + 1
        self._counts[code] = n
        if n <= MAX_FINDINGS_PER_CODE:
            self._findings.append(Finding(code, severity, message, self.source, span, hint=hint,
                                          related=related, fix=fix))
            return
        # a launch of a million stray words (`vllm serve m ab ab …`): argparse names them in
        # one error; the first ones are listed, the rest summed up in one finding
        over = self._over.get(code)
        if over is None:
            self._over[code] = [1, severity, span, span]
            return
        over[0] += 1
        over[2] = span if span.start < over[2].start else over[2]
        over[3] = span if span.start > over[3].start else over[3]
        if severity is Severity.ERROR or over[1] is Severity.INFO:
            over[1] = severity

    @property
    def findings(self) -> list[Finding]:
        """What the walk reported, then one summary per code past the limit."""
        if not self._over:
            return self._findings
        return self._findings + [
            not_listed(code, severity, f"{findings_of(code, n)} of this launch", self.source,
                       first, last, n, MAX_FINDINGS_PER_CODE)
            for code, (n, severity, first, last) in self._over.items()]

    def glued(self, word: Word, head: str, rest: str, engine: str, refusal: str,
              spelled: str | None = None) -> None:
        """MG014: a flag and its value in one word (a quoted `"--tp 4"` or one list item): the
        engine gets one argument and rejects it, how ``refusal`` says.  The safe fix splits it,
        writing ``spelled`` for an abbreviated ``head`` (the full name it resolves to)."""
        flag = spelled or head
        self.report(
            "MG014", Severity.ERROR,
            f"`{word.text}` is one argument: {engine} receives the flag and its value as a "
            f"single word and {refusal}",
            word.span,
            hint=f'split it into two list items: "{flag}", "{rest.strip()}"'
            if self.launch.list_form else f"unquote it: {flag} {rest.strip()}",
            fix=split_glued(self.source, word, head, self.launch.list_form, spelled),
        )

    def line(self, span: Span) -> int:
        return self.source.line_col(span.start)[0]

    def add(self, occ: OptionValue, *, before: bool = False) -> None:
        (self.before if before else self.argv).append(occ)

    def unresolved_in(self, word: Word, span: Span) -> tuple[VarRef, ...]:
        """Variable references of ``word`` that lie inside ``span``."""
        return tuple(
            v for v in word.unresolved if v.span.start >= span.start and v.span.end <= span.end
        ) if word.unresolved else ()

    def report_unresolved(self, spec: OptionSpec, refs: tuple[VarRef, ...]) -> None:
        """MG009 for a needed option whose value holds variables that were not expanded."""
        rules = self.needed.get(spec.key)
        if not rules:
            return
        for ref in refs:
            if ref.name.startswith("{{"):
                # a Go-template action of an operator's config (sources/kserve.py): its value
                # is the resource's that uses the config
                self.report(
                    "MG009", Severity.INFO,
                    f"{spec.display} is set from the template action `{ref.name}`, whose "
                    f"value is not in this file: {', '.join(rules)} skipped for this launch",
                    ref.span,
                    hint="lint the resource that uses this template, or its rendered objects")
                continue
            self.report(
                "MG009", Severity.INFO,
                f"{spec.display} is set from ${ref.name}, which could not be resolved: "
                f"{', '.join(rules)} skipped for this launch",
                ref.span,
                hint=f"define {ref.name} where the launch can see it, or write the value",
            )

    def duplicates(self, occurrences: list[OptionValue], *,
                   describe: Callable[[OptionValue], str]) -> None:
        """MG007 at each overridden occurrence of a last-one-wins option."""
        keys = [occ.key for occ in occurrences]
        if len(set(keys)) == len(keys):
            return  # each option once (most launches): nothing is overridden
        by_key: dict[str, list[OptionValue]] = {}
        for occ in occurrences:
            by_key.setdefault(occ.key, []).append(occ)
        for key, occs in by_key.items():
            spec = self.catalog.by_key[key]
            if len(occs) < 2 or spec.accumulates:
                continue
            whole = [o for o in occs if not o.subkeys]
            dotted = [o for o in occs if o.subkeys]
            if dotted:
                winner = dotted[-1]
                losers = whole + _overridden_dotted(dotted)
            else:
                winner, losers = occs[-1], occs[:-1]
            # the same for every overridden occurrence (16,000 of them on one line)
            given = f"{spec.display} given " \
                f"{_times(len(occs)) if not dotted else 'more than once'}: "
            wins = f"{describe(winner)} (line {self.line(winner.span)})"
            for occ in losers:
                if not occ.known:
                    continue  # already reported (MG005/MG006/MG013/MG014)
                self.report(
                    "MG007", Severity.WARNING,
                    f"{given}{describe(occ)} (line {self.line(occ.span)}) is overridden by "
                    f"{wins}"
                    + (" — vLLM appends the dotted keys as one JSON object after every other "
                       "argument, replacing the whole value (no deep merge)"
                       if dotted and not occ.subkeys else ""),
                    occ.span,
                    hint="remove the overridden occurrence",
                    related=(Related(self.source, winner.span, "this value wins"),),
                )

    def build(self, engine: str, entry: str, model: ModelRef | None) -> Invocation:
        return Invocation(engine=engine, entry=entry, version=self.version, model=model,
                          occurrences=tuple(self.before + self.argv), open_span=self.open_span)


def _times(n: int) -> str:
    return "twice" if n == 2 else f"{n} times"


def _overridden_dotted(dotted: list[OptionValue]) -> list[OptionValue]:
    """Dotted occurrences that set the same key path as a later one."""
    seen: set[tuple[str, ...]] = set()
    out: list[OptionValue] = []
    for occ in reversed(dotted):
        path = occ.subkeys
        if path in seen and not path[-1].endswith("+"):
            out.append(occ)
        seen.add(path)
    return list(reversed(out))
