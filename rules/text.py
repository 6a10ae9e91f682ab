"""Phrases and related locations that several rule families print the same way."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from mgpu_lint.findings import Related, Severity

if TYPE_CHECKING:
    from mgpu_lint.catalog.knowledge import GpuSpec
    from mgpu_lint.deployment import Deployment
    from mgpu_lint.engines import Setting
    from mgpu_lint.source import Span


def gpu_phrase(d: Deployment, spec: GpuSpec) -> str:
    return f"assuming {spec.name} ({d.gpu.assumption})" if d.gpu is not None and \
        d.gpu.assumed else spec.name



def gpu_related(d: Deployment) -> tuple[Related, ...]:
    g = d.gpu
    if g is None:
        return ()
    out = []
    if g.span is not None:
        out.append(Related(d.source, g.span, f"the GPU type ({g.origin})"))
    if g.request is not None and g.request.span is not None:
        out.append(Related(d.source, g.request.span, f"the GPUs ({g.request.origin})"))
    return tuple(out)



def cap_assumed(severity: Severity, assumed: bool) -> Severity:
    return Severity.WARNING if assumed and severity == Severity.ERROR else severity



def model_span(d: Deployment) -> Span:
    return d.model.span if d.model is not None and d.model.span is not None else d.program_span



def layout_related(d: Deployment) -> tuple[Related, ...]:
    lay = d.layout
    if lay is None:
        return ()
    return tuple(Related(d.source, s.span, f"{n} {s.value}") for n, s in lay.explicit_sizes
                 if s.span is not None)



def setting_related(d: Deployment, *settings: Setting) -> tuple[Related, ...]:
    return tuple(Related(d.source, s.span, f"{d.inv.spelling(s)} {s.winner.raw if s.winner else ''}"
                         .strip()) for s in settings if s.given and s.span is not None)


def model_name(d: Deployment) -> str:
    """The model as the launch names it (the catalog shape may be a sibling checkpoint)."""
    return d.model.ref.rstrip("/").rsplit("/", 1)[-1] if d.model is not None else "the model"


def at_line(d: Deployment, span: Span | None) -> str:
    """` at deploy.yaml:31` (the file's name and the line), or nothing without a place."""
    if span is None:
        return ""
    source, span = d.source.place(span)  # a launch joined from several files: the span's own
    return f" at {os.path.basename(source.path)}:{source.line_col(span.start)[0]}"


def plural(n: int, word: str = "GPU") -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def receiver(d: Deployment) -> str:
    """Who gets the GPUs: a container (Kubernetes, compose, docker run) or a command."""
    ctx = d.context
    return "the container" if ctx.in_container else "the command"
