"""The rule table: every rule code, in one place (explicit, no import-time registration magic).

One module per family: files (reading), syntax (flags), layout (MG1xx), interconnect (MG2xx),
memory (MG3xx), moe (MG4xx), llamacpp (MG5xx), exposure (MG6xx), operations (MG7xx),
startup (MG8xx: vLLM's own start-up refusals).
"""

from __future__ import annotations

from . import exposure, files, interconnect, layout, llamacpp, memory, moe, operations, syntax
from . import startup
from .registry import Rule

ALL: list[Rule] = sorted(
    [*files.RULES, *syntax.RULES, *layout.RULES, *interconnect.RULES, *memory.RULES,
     *moe.RULES, *llamacpp.RULES, *exposure.RULES, *operations.RULES, *startup.RULES],
    key=lambda r: r.code,
)
BY_CODE: dict[str, Rule] = {r.code: r for r in ALL}
CHECKS: list[Rule] = [r for r in ALL if r.check is not None]
