"""The rule table: every rule code, in one place (explicit, no import-time registration magic).

One module per family: files (reading), syntax (flags), layout (MG1xx), interconnect (MG2xx),
memory (MG301-MG305, vLLM), lora (MG306-MG308), llamacpp_memory (MG309-MG310),
moe (MG4xx), llamacpp (MG5xx), exposure (MG6xx), operations (MG7xx), startup (MG8xx: vLLM's
own start-up refusals).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from . import (
    exposure,
    files,
    interconnect,
    layout,
    llamacpp,
    llamacpp_memory,
    lora,
    memory,
    moe,
    operations,
    placement,
    sglang_startup,
    startup,
    syntax,
)
from .registry import Rule

if TYPE_CHECKING:
    from mgpu_lint.engines import Engine, Invocation

ALL: list[Rule] = sorted(
    [*files.RULES, *syntax.RULES, *layout.RULES, *placement.RULES, *interconnect.RULES,
     *memory.RULES, *lora.RULES, *llamacpp_memory.RULES, *moe.RULES, *llamacpp.RULES,
     *exposure.RULES, *operations.RULES, *startup.RULES,
     *sglang_startup.RULES],
    key=lambda r: r.code,
)
BY_CODE: dict[str, Rule] = {r.code: r for r in ALL}
CHECKS: list[Rule] = [r for r in ALL if r.check is not None]


@cache
def checks_for(engine: Engine) -> tuple[Rule, ...]:
    """The rules that run on a launch of this engine: those whose needs it has."""
    return tuple(r for r in CHECKS if r.applies_to(engine))


# (engine, release, settings a launch states) -> the rules to call; cleared when full, so a file
# of launches that each state other settings keeps no more than this
_STATING: dict[tuple[Engine, str, frozenset[str]], tuple[Rule, ...]] = {}
_STATING_MAX = 1024


def checks_stating(engine: Engine, inv: Invocation) -> tuple[Rule, ...]:
    """The rules to call on a launch: ``checks_for(engine)`` less those whose precondition
    (``Rule.given``, ``Rule.on``) the settings it states cannot meet.  Most launches state a
    dozen settings and most rules need one the launch does not state: a call each cost more
    than the rest of the rules' work on a file of 3,283 `vllm serve` lines (issue 20).  Once
    per release and set of stated settings, shared by the launches that state the same ones."""
    stated = inv.stated_keys
    key = (engine, inv.version, stated)
    hit = _STATING.get(key)
    if hit is None:
        if len(_STATING) >= _STATING_MAX:
            _STATING.clear()
        by_key = inv.catalog.by_key
        hit = _STATING[key] = tuple(
            r for r in checks_for(engine)
            if not (r.given or r.on) or not r.given.isdisjoint(stated)
            or not r.on.isdisjoint(stated)
            or any(by_key[k].default for k in r.on if k in by_key))
    return hit


@cache
def settings_read(engine: Engine) -> dict[str, tuple[str, ...]]:
    """Setting → the codes of the rules that read it, for the rules that run on this engine
    (what a parser keeps; MG009 names them)."""
    out: dict[str, list[str]] = {}
    for r in ALL:
        if r.check is not None and not r.applies_to(engine):
            continue
        for key in r.reads:
            out.setdefault(key, []).append(r.code)
    return {k: tuple(sorted(v)) for k, v in out.items()}
