"""Sources: from a file's text to Launch records (and Services/HPAs for cross-file links).

``extract(source)`` dispatches on ``source.kind``; every problem reading the file is a finding.
"""

from __future__ import annotations

import re
from typing import Any

from ..findings import Finding, Severity
from ..launch import Context, HpaInfo, Launch, Located, ServiceInfo
from .. import bounds
from ..bounds import launches_full
from ..source import SourceFile, Span
from ..prepass import without_crds
from ..versions import pip_pin_pattern
from ..yamlsrc import YamlError, YamlTooLarge, compose_documents
from .commandline import Found, Scope, search_script
from .compose import extract_compose, is_compose
from .kserve import (
    ISVC_KIND,
    LLMISVC_CONFIG_KINDS,
    LLMISVC_KINDS,
    MAIN_CONTAINER,
    RUNTIME_KINDS,
    KObject,
    base_configs,
    configs_by_name,
    extract_isvc,
    extract_llmisvc_joined,
    extract_llmisvc_config,
    is_joinable,
    is_llmisvc_config,
    keep_ref_names,
    rebased,
    Autoselect,
    runtimes_by_name,
    select_runtime,
)
from .kubernetes import extract_object, is_kubernetes
from .operators import extract_kubeai_models_values, is_kubeai_models_values
from .prodstack import extract_stack_values, is_stack_values
from .yamlnodes import Doc, too_large_finding
from ..records import dataclass, field, replace


@dataclass(slots=True)
class FileResult:
    source: SourceFile
    launches: list[Launch] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    services: list[ServiceInfo] = field(default_factory=list)
    hpas: list[HpaInfo] = field(default_factory=list)
    # regions covered by a Kubernetes `mgpu-lint/ignore` annotation: (span, codes)
    ignores: list[tuple[Span, str]] = field(default_factory=list)
    # KServe objects that join objects of other documents or files (join_kserve)
    kserve: list[KObject] = field(default_factory=list)


_PIP_PIN = pip_pin_pattern("vllm")
_HELM = re.compile(r"\{\{")
# `key: {{ … }}` or `- {{ … }}`: a template where YAML expects a value (it would read a flow
# mapping); templates inside quoted strings and block scalars are ordinary text
# (a Go-template action: `{{ .Values… }}`, `{{- include … }}`; not a `{{TOKEN}}` placeholder)
_BARE_TEMPLATE = re.compile(
    r"^[ \t]*(?:-[ \t]+)*(?:-[ \t]+|[^\s#'\"\-][^#'\"\n]*?:[ \t]+)\{\{-?\s*(?:[.$]|(?:include|"
    r"template|toYaml|toJson|if|else|range|with|end|define|default|printf|tpl|quote|required|"
    r"lookup|not|and|or|eq|ne)\b)", re.M)


def _bare_template(text: str) -> re.Match[str] | None:
    """``_BARE_TEMPLATE.search(text)``, tried only at the start of lines holding `{{`: nothing
    the pattern allows before the `{{` crosses a line, so every match starts on the line of
    its `{{`, and the lines are tried in order (the first match is search's).  The search over
    a 9.5 MiB file with one `{{` took half a second."""
    at = text.find("{{")
    while at != -1:
        m = _BARE_TEMPLATE.match(text, text.rfind("\n", 0, at) + 1)
        if m is not None:
            return m
        end = text.find("\n", at)
        if end == -1:
            return None
        at = text.find("{{", end)
    return None


_CONFLICT = re.compile(r"^(?:<{7}|>{7}) ", re.M)


def pip_pin(source: SourceFile, text: str, base: int = 0) -> Located | None:
    """`pip install vllm==X` (or `uv pip install`) in a script or Dockerfile pins the release."""
    m = _PIP_PIN.search(text)
    if m is None:
        return None
    return Located(m.group(1), Span(base + m.start(1), base + m.end(1)), source)


def _with_pin(launches: list[Launch], pin: Located | None) -> list[Launch]:
    if pin is None:
        return launches
    return [la if la.version_pin is not None else replace(la, version_pin=pin) for la in launches]


def extract(source: SourceFile) -> FileResult:
    result = FileResult(source)
    kind = source.kind
    if kind == "yaml":
        extract_yaml(Doc(source, source.text), result)
    elif kind == "shell":
        from .markdown import transcript

        text, base = transcript(source.text)
        found = search_script(text, base, Scope(source, Context(kind="shell")),
                              on_yaml=lambda body, cmap: extract_yaml(
                                  Doc(source, body, cmap), result))
        _add(result, found, pip_pin(source, source.text))
    elif kind == "dockerfile":
        from .dockerfile import extract_dockerfile

        _add(result, extract_dockerfile(source), None)
    elif kind == "markdown":
        from .markdown import extract_markdown

        extract_markdown(source, result)
    elif kind == "command":
        from .markdown import transcript

        text, base = transcript(source.text)
        found = search_script(text, base, Scope(source, Context(kind="command")))
        _add(result, found, None)
    return result


def _add(result: FileResult, found: Found, pin: Located | None) -> None:
    result.launches.extend(_with_pin(found.launches, pin))
    result.findings.extend(found.findings)


def extract_yaml(doc: Doc, result: FileResult, syntax_errors: bool = True) -> None:
    """All documents of a YAML text: Kubernetes objects and compose files.

    Template syntax inside strings (`{{ … }}` in a script or a chat template) is valid YAML and
    the file is linted; only a file that fails to parse because of templates is a Helm template
    (MG011 instead of a YAML syntax error).  ``syntax_errors`` False: a text that does not parse
    gives neither (a Markdown block that names no engine: see sources/markdown.py).
    """
    found = Found()
    bare = _bare_template(doc.text)
    if bare is not None:
        if syntax_errors:
            _helm_finding(doc, result, bare.start() + bare.group(0).rfind("{{"))
        return
    kserve_before = len(result.kserve)
    error: YamlError | None = None
    composed = compose_documents(without_crds(doc.text), doc.source.budget)
    try:
        # each document is read as it is composed (not all composed first): a file of more
        # launches than are checked stops being read there (bounds.launches_full)
        for index, root in enumerate(composed):
            _read_document(doc, index, root, found, result)
            if launches_full(len(result.launches) + len(found.launches)):
                break
    except YamlError as exc:
        error = exc
    finally:
        composed.close()
    if isinstance(error, YamlTooLarge):
        if syntax_errors or error.scope == "file":  # (the file's YAML after it is not read)
            result.findings.append(too_large_finding(doc, error, "the rest of the file"))
        error = None
    if error is not None:
        exc = error
        helm = _helm_marker(doc.text)
        if helm is not None:
            if syntax_errors:
                _helm_finding(doc, result, helm)
            del result.kserve[kserve_before:]  # nothing of this text is read
            return
        if not syntax_errors:
            _add(result, found, None)
            return
        offset = min(exc.offset, len(doc.text))
        message = f"YAML syntax error: {exc.message}"
        conflict = _CONFLICT.search(doc.text)
        if conflict is not None:
            offset = conflict.start()
            message = "unresolved merge conflict marker: the file is not valid YAML"
        result.findings.append(Finding(
            "MG002", Severity.ERROR, message, doc.source,
            _to_file(doc, offset, min(offset + 1, len(doc.text))),
        ))
    _add(result, found, None)


def _read_document(doc: Doc, index: int, root: Any, found: Found, result: FileResult) -> None:
    """One composed YAML document of ``doc``: its launches into ``found``, its Services, HPAs,
    ignores and KServe objects into ``result``."""
    if is_joinable(root):
        # a KServe runtime is read on its own here and joined to the InferenceServices
        # that run it once every file is read (join_kserve)
        obj = KObject(doc, root)
        result.kserve.append(obj)
        before = len(found.launches)
        extract_object(doc, root, found, result.services, result.hpas, result.ignores)
        obj.launches = found.launches[before:]
        if obj.kind in LLMISVC_KINDS:
            keep_ref_names(obj)
        return
    if is_llmisvc_config(root):
        # a KServe config template, read with its actions unknown (kserve.py), and kept
        # for the LLMInferenceServices whose baseRefs name it (join_kserve)
        obj = KObject(doc, root)
        result.kserve.append(obj)
        before = len(found.launches)
        if not extract_llmisvc_config(doc, root, index, found, result.services,
                                      result.hpas, result.ignores, obj):
            extract_object(doc, root, found, result.services, result.hpas, result.ignores)
        obj.launches = found.launches[before:]
        return
    if is_kubernetes(root):
        extract_object(doc, root, found, result.services, result.hpas, result.ignores)
    elif is_compose(root):
        extract_compose(doc, root, found)
    elif is_stack_values(root):
        # vLLM production-stack Helm values (sources/prodstack.py)
        extract_stack_values(doc, root, found)
    elif is_kubeai_models_values(root):
        # the KubeAI models chart's catalog (sources/operators.py)
        extract_kubeai_models_values(doc, root, found)


def join_kserve(results: list[FileResult]) -> tuple[list[Finding], set[int]]:
    """Each KServe InferenceService of ``results`` joined to the ServingRuntime or
    ClusterServingRuntime it runs (``kserve.select_runtime``), in any of the files: the launch
    joins the runtime's command with the InferenceService's GPUs, args and env, is kept with
    the runtime's file (where its command is) and replaces the runtime's own reading.  Files in
    two parts are read as one joined text (``source.joined_source``), whose findings
    ``findings.placed`` puts back in their files.  Returns the findings the joins found (placed)
    and the ids of the results that took part."""
    from ..findings import placed
    from ..source import joined_source

    findings: list[Finding] = []
    involved: set[int] = set()
    _join_base_refs(results, findings, involved)
    runtimes = [(r, o) for r in results for o in r.kserve if o.kind in RUNTIME_KINDS]
    if not runtimes:
        return findings, involved
    home = {id(o): r for r, o in runtimes}
    candidates = [o for _, o in runtimes]
    named, auto = runtimes_by_name(candidates), Autoselect(candidates)
    joined: set[int] = set()
    joins: dict[int, int] = {}  # launches joined into each file, which has a launch limit
    for ires, isvc in [(r, o) for r in results for o in r.kserve if o.kind == ISVC_KIND]:
        runtime = select_runtime(isvc, candidates, named, auto)
        if runtime is None:
            continue
        rres = home[id(runtime)]
        joins[id(rres)] = joins.get(id(rres), 0) + 1
        if launches_full(joins[id(rres)]):
            if joins[id(rres)] == bounds.MAX_LAUNCHES + 1:
                findings.append(Finding(
                    "MG001", Severity.WARNING,
                    f"more than {bounds.MAX_LAUNCHES:,} InferenceServices run the "
                    f"ServingRuntimes of {rres.source.path} (no deployment comes close): this "
                    "one and the ones after it are not checked", isvc.doc.source,
                    isvc.doc.span(isvc.root), hint="lint the files in parts"))
            continue
        rdoc, idoc = runtime.doc, isvc.doc
        if rdoc.source is not idoc.source:
            text = joined_source([rdoc.source, idoc.source])
            rdoc, idoc = rebased(rdoc, text, 0), rebased(idoc, text, text.parts[1][0])
        found = Found()
        if not extract_isvc(rdoc, runtime.root, idoc, isvc.root, found):
            continue
        rres.launches.extend(found.launches)
        findings.extend(placed(f) for f in found.findings)
        joined.add(id(runtime))
        involved.update((id(rres), id(ires)))
    # each file's launches filtered and sorted once, not once per joined runtime in it
    # (quadratic); a stable sort after each filter gives the same list
    drops: dict[int, tuple[FileResult, set[int]]] = {}
    for res, runtime in runtimes:
        if id(runtime) in joined:
            drops.setdefault(id(res), (res, set()))[1].update(id(la) for la in runtime.launches)
    for res, drop in drops.values():
        res.launches = [la for la in res.launches if id(la) not in drop]
        res.launches.sort(key=lambda la: la.program.span.start)
    return findings, involved


def _join_base_refs(results: list[FileResult], findings: list[Finding],
                    involved: set[int]) -> None:
    """Each KServe LLMInferenceService with baseRefs merged over the LLMInferenceServiceConfigs
    they name (``kserve.base_configs``: all of them among ``results``, else nothing is
    joined and the service stays as read alone).  The launch is kept with the file of its
    program (the service's `main` container, else a config's) and replaces the `main`
    launches the service and its configs gave read alone; a config several services name
    gives one launch per service."""
    from ..findings import placed
    from ..source import joined_source

    configs = [(r, o) for r in results for o in r.kserve if o.kind in LLMISVC_CONFIG_KINDS]
    if not configs:
        return
    home = {id(o): r for r, o in configs}
    by_name = configs_by_name([o for _, o in configs])
    by_source = {id(r.source): r for r in results}
    # each object once (a config many services name: its own launches are dropped once)
    used: dict[int, tuple[FileResult, KObject]] = {}
    merges = 0
    for sres, svc in [(r, o) for r in results for o in r.kserve if o.kind in LLMISVC_KINDS]:
        if merges > bounds.MAX_BASE_REF_MERGES:
            continue  # past the bound (said once, below): not merged
        refs = base_configs(svc, by_name)
        if refs is None:
            continue
        if merges + len(refs) > bounds.MAX_BASE_REF_MERGES:
            merges = bounds.MAX_BASE_REF_MERGES + 1  # one finding, at the first left out
            findings.append(Finding(
                "MG001", Severity.WARNING,
                f"the LLMInferenceServices of this run name more than "
                f"{bounds.MAX_BASE_REF_MERGES:,} configs in their baseRefs (no deployment "
                "comes close): this one and the ones after it are not merged over their "
                "configs, so not checked", svc.doc.source, svc.doc.span(svc.root),
                hint="lint the files in parts"))
            continue
        merges += len(refs)
        sources = [svc.doc.source]
        seen = {id(svc.doc.source)}
        for c in refs:
            if id(c.doc.source) not in seen:
                seen.add(id(c.doc.source))
                sources.append(c.doc.source)
        sdoc, cdocs = svc.doc, [(c.doc, c) for c in refs]
        if len(sources) > 1:
            text = joined_source(sources)
            start = {id(src): at for at, src in text.parts}
            sdoc = rebased(sdoc, text, 0)
            cdocs = [(rebased(d, text, start[id(d.source)]), c) for d, c in cdocs]
        found = Found()
        extract_llmisvc_joined(sdoc, svc.root, cdocs, found)
        findings.extend(placed(f) for f in found.findings)
        if not found.launches:
            continue
        for la in found.launches:
            src = la.source.place(la.program.span)[0]
            by_source.get(id(src), sres).launches.append(la)
        used[id(svc)] = (sres, svc)
        used.update((id(c), (home[id(c)], c)) for c in refs)
        involved.add(id(sres))
        involved.update(id(home[id(c)]) for c in refs)
    drops: dict[int, tuple[FileResult, set[int]]] = {}
    for res, obj in used.values():
        # the objects' own readings of `main`: the merged launch is what runs
        drop = drops.setdefault(id(res), (res, set()))[1]
        drop.update(id(la) for la in obj.launches if la.context.container_name is not None
                    and la.context.container_name.value == MAIN_CONTAINER)
    for res, drop in drops.values():
        if drop:
            res.launches = [la for la in res.launches if id(la) not in drop]
        res.launches.sort(key=lambda la: la.program.span.start)


def _helm_finding(doc: Doc, result: FileResult, offset: int) -> None:
    result.findings.append(Finding(
        "MG011", Severity.INFO,
        "unrendered Helm template: `{{ … }}` is not YAML until rendered; launches in this file "
        "are not checked",
        doc.source, _to_file(doc, offset, offset + 2),
        hint="render it first: `helm template RELEASE CHART | mgpu-lint - --stdin-filename "
             "rendered.yaml`",
    ))


def _helm_marker(text: str) -> int | None:
    """Offset of the first `{{` outside a comment line, if any."""
    for m in _HELM.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if not text[line_start:m.start()].lstrip().startswith("#"):
            return m.start()
    return None


def _to_file(doc: Doc, start: int, end: int) -> Span:
    if doc.base is None:
        return Span(start, end)
    return doc.base.span(start, end)


__all__ = ["FileResult", "extract", "extract_yaml", "join_kserve", "pip_pin"]
