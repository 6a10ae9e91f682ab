"""Per launch: parse the engine's arguments, resolve the deployment, run the rules."""

from __future__ import annotations

import bisect
import math
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .bounds import MAX_GPUS
from .deployment import Deployment, LinkIndex
from .engines import ENGINES, parse_launch
from .facts.peers import GpuPeer, physical_gpus
from .findings import Finding, Severity, internal_error, placed
from .images import parse_image
from .launch import RPC_SERVER, VLLM, GpuRequest, HpaInfo, Launch, ServiceInfo
from .resolve import ModelFacts, gpu_facts, layout, model_facts
from .rules import checks_stating
from .records import dataclass, field, replace

if TYPE_CHECKING:
    from .config import Settings
    from .source import Span
    from .engines import Invocation
    from .options import Options


@dataclass
class FileSet:
    """Objects of the whole run that refer to each other (Services, HPAs, all launches), and
    what is computed once per launch for every rule that needs it (its parse, its GPUs)."""

    services: list[ServiceInfo]
    hpas: list[HpaInfo]
    launches: list[Launch]
    _parsed: dict[tuple[int, str | None], tuple[Invocation, list[Finding]]] = field(
        default_factory=dict, repr=False)
    _gpu_index: dict[tuple[int, int | None, str | None], dict[str, Any]] = field(
        default_factory=dict, repr=False)
    # the parses another launch may still ask for: the GPU records of gpu_peers
    _records: set[tuple[int, str | None]] = field(default_factory=set, repr=False)
    # (manifest path, model reference) -> the local model directory, once per run
    local_dirs: dict[tuple[str, str], str | None] = field(default_factory=dict, repr=False)

    @cached_property
    def links(self) -> LinkIndex:
        return LinkIndex(self.services, self.hpas)

    @cached_property
    def by_host(self) -> dict[tuple[int, int | None], tuple[Launch, ...]]:
        """The launches of each machine a file describes: the file, or one of its hosts
        (``Context.host``: each Markdown block is its own)."""
        groups: dict[tuple[int, int | None], list[Launch]] = {}
        for la in self.launches:
            groups.setdefault((id(la.source), la.context.host), []).append(la)
        return {k: tuple(v) for k, v in groups.items()}

    def parse(self, launch: Launch, version: str | None) -> tuple[Invocation, list[Finding]]:
        """The launch's parse, once per launch and target-version (a peer's parse is shared
        with the launch's own analysis)."""
        key = (id(launch), version)
        hit = self._parsed.get(key)
        if hit is None:
            hit = parse_launch(launch, version)
            if physical_gpus(launch) is not None:
                # only a launch on stated GPUs can be another's peer: keep just those, so a
                # run's memory does not grow with every parse
                self._parsed[key] = hit
        return hit[0], list(hit[1])

    def finished(self, launch: Launch, version: str | None) -> None:
        """The launch's own analysis is over: its parse stays only while a later launch may
        have it as a GPU peer (a record), so that a file of n launches on stated GPUs does not
        keep n parses with every setting the rules read (20,000 launches on one GPU peaked at
        over 500 MiB)."""
        key = (id(launch), version)
        if key not in self._records:
            self._parsed.pop(key, None)

    def gpu_peers(self, launch: Launch, version: str | None) -> tuple[GpuPeer, ...]:
        """Earlier vLLM launches of the same file and host, given one of this launch's physical
        GPUs, that a --gpu-memory-utilization could add up with past 1 (MG108), in file order.

        Per GPU only the records are kept: the first vLLM launch with a known utilisation and
        each later one whose utilisation is higher than all before it (and any that is not a
        finite number).  Whatever the other engine's utilisation, the first earlier launch
        whose sum with it passes 1 is a record (every launch before it has a lower one, since
        the sum only grows with it), so MG108 finds the same peer; and a file of n launches on
        one GPU costs n times the records, not n² (2,000 launches took 17 s)."""
        mine = physical_gpus(launch)
        if mine is None:
            return ()
        key = (id(launch.source), launch.context.host, version)
        index = self._gpu_index.get(key)
        if index is None:
            index = self._gpu_index[key] = self._gpu_records(launch, version)
        start = launch.program.span.start
        found: dict[int, tuple[Launch, tuple[frozenset[str], Span | None]]] = {}
        for gpu in mine[0]:
            entry = index.get(gpu)
            if entry is None:
                continue
            later, positions, records = entry
            # the launches before the first of this GPU's list that starts at or after this one
            j = bisect.bisect_left(later, start)
            cut = positions[j] if j < len(positions) else math.inf
            for pos, la, claim in records:
                if pos >= cut:
                    break
                found[pos] = (la, claim)
        return tuple(GpuPeer(la, self.parse(la, version)[0], claim[0], claim[1])
                     for _, (la, claim) in sorted(found.items(), key=lambda kv: kv[0]))

    def _gpu_records(self, launch: Launch, version: str | None) -> dict[str, tuple[
            list[int], list[int], list[tuple[int, Launch, tuple[frozenset[str], Span | None]]]]]:
        """GPU id -> (running maximum of the program offsets of its launches in file order,
        their positions, its records as ``gpu_peers`` says)."""
        from .engines import ENGINES
        from .engines.adapter import VLLM_ARGS

        lists: dict[str, tuple[list[int], list[int], list[Any], list[float]]] = {}
        host = (id(launch.source), launch.context.host)
        for pos, la in enumerate(self.by_host.get(host, ())):
            claim = physical_gpus(la)
            if claim is None:
                continue
            util: float | None = None
            if ENGINES[la.engine].has(VLLM_ARGS):
                setting = self.parse(la, version)[0].gpu_memory_utilization
                if setting.known and isinstance(setting.value, (int, float)):
                    util = setting.value
            for gpu in claim[0]:
                later, positions, records, best = lists.setdefault(gpu, ([], [], [], []))
                at = la.program.span.start
                later.append(max(later[-1], at) if later else at)
                positions.append(pos)
                if util is None:
                    continue
                if not records or not math.isfinite(util) or not best or util > best[0]:
                    records.append((pos, la, claim))
                    self._records.add((id(la), version))
                    if math.isfinite(util) and (not best or util > best[0]):
                        best[:] = [util]
        return {gpu: (later, positions, records) for gpu, (later, positions, records, _)
                in lists.items()}


def effective_settings(settings: Settings, options: Options) -> Settings:
    """`--target-version` on the command line outranks the configuration's (DECISIONS
    "Release precedence"): rules that ask whether a release is pinned read it here."""
    if options.target_version and options.target_version != settings.target_version:
        return replace(settings, target_version=options.target_version)
    return settings


def deployment(launch: Launch, settings: Settings, options: Options,
               fileset: FileSet) -> tuple[Deployment, list[Finding]]:
    """The Deployment the rules see, and the findings of parsing and resolving it."""
    settings = effective_settings(settings, options)
    inv, findings = fileset.parse(launch, settings.target_version)
    model = model_facts(inv, launch, settings, fileset.local_dirs) \
        if launch.engine != RPC_SERVER else None
    if model is not None and model.shape is None:
        findings.append(unknown_model(launch, model))
    if launch.inferred_from is not None:
        findings.append(inferred_engine(launch))
    gpu = gpu_facts(launch, settings, options.gpu, options.gpus_per_node)
    if gpu is not None and gpu.request is not None and gpu.request.beyond_bounds:
        findings.append(implausible_gpus(launch, gpu.request))
    d = Deployment(
        launch=launch,
        inv=inv,
        settings=settings,
        layout=layout(inv, launch),
        model=model,
        gpu=gpu,
        services=fileset.links.services_of(launch),
        hpas=fileset.links.hpas_of(launch),
        gpu_peers=fileset.gpu_peers(launch, settings.target_version),
    )
    return d, findings


def analyze(launch: Launch, settings: Settings, options: Options,
            fileset: FileSet) -> list[Finding]:
    d, findings = deployment(launch, settings, options, fileset)
    for r in checks_stating(d.adapter, d.inv):
        try:
            findings.extend(r.check(d))  # type: ignore[misc]
        except Exception as exc:  # noqa: BLE001 - one rule's bug must not hide the others
            findings.append(internal_error(launch.source, exc))
    fileset.finished(launch, d.settings.target_version)
    if launch.source.parts:
        return _placed(launch, findings)
    return findings


def _placed(launch: Launch, findings: list[Finding]) -> list[Finding]:
    """The findings of a launch joined from several files, each place back in its own file; one
    in another file than the object the launch runs for also points at that object (the
    InferenceService a runtime's command runs for: its GPUs and args made the finding; the
    LLMInferenceService a config's words are merged into), unless a related location there
    already does."""
    from .findings import Related
    from .source import Span

    ctx = launch.context
    there = launch.source.place(ctx.object_span) if ctx.object_span is not None else None
    why = ("with its GPUs, args and env" if ctx.object_kind == "InferenceService"
           else "its spec merged over the configs its baseRefs name")
    out = []
    for f in findings:
        f = placed(f)
        if there is not None and f.source is not there[0] \
                and not any(r.source is there[0] for r in f.related):
            at = Span(there[1].start, there[1].start)
            f = replace(f, related=(*f.related, Related(
                there[0], at, f"{ctx.object_kind} {ctx.object_name}: this launch runs for it, "
                f"{why}")))
        out.append(f)
    return out


def unknown_model(launch: Launch, model: ModelFacts) -> Finding:
    span = model.span if model.span is not None else launch.program.span
    return Finding(
        "MG010", Severity.INFO,
        f"model `{model.ref}` has no known shape: memory, attention-head and expert checks are "
        "skipped for this launch",
        launch.source, span,
        hint="add its shape under [models] in mgpu-lint.toml (params, layers, hidden, heads, "
             "kv_heads, head_dim …), or keep its config.json beside the manifest",
    )


def implausible_gpus(launch: Launch, request: GpuRequest) -> Finding:
    """MG006: a GPU request no deployment has (linter/bounds.py); resolve._count leaves the
    count unknown, so every rule that compares or loops over GPUs stays silent."""
    return Finding(
        "MG006", Severity.WARNING,
        f"{request.origin} {request.count} is beyond any deployment (at most {MAX_GPUS:,} GPUs "
        "are checked): the GPU-count rules are skipped for this launch",
        launch.source, request.span if request.span is not None else launch.program.span,
        hint="state the number of GPUs the container gets",
    )


def inferred_engine(launch: Launch) -> Finding:
    """MG018: the launch's engine comes from its image's name (commandline._inferred)."""
    image = launch.inferred_from
    assert image is not None
    engine = ENGINES[launch.engine]
    entry = "vllm serve" if launch.engine == VLLM else engine.name
    repository = parse_image(image.value).repository
    return Finding(
        "MG018", Severity.INFO,
        f"image `{image.value}` is not one mgpu-lint knows: its name and arguments read as "
        f"{engine.display}'s, so this launch is checked as {engine.display} (its entry point and "
        "release are assumed)",
        launch.source, image.span,
        hint=f'if that is what it runs, say so in mgpu-lint.toml: [images] "{repository}" = '
             f'"{entry}"' + (" (and set target-version to the release it is built on)"
                             if launch.engine == VLLM else ""),
    )
