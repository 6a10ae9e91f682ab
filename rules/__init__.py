"""The rule table: every rule code, in one place (explicit, no import-time registration magic)."""

from __future__ import annotations

from .exposure import RULES as _EXPOSURE
from .files import RULES as _FILES
from .operations import RULES as _OPERATIONS
from .registry import Rule
from .syntax import RULES as _SYNTAX

ALL: list[Rule] = [*_FILES, *_SYNTAX, *_EXPOSURE, *_OPERATIONS]
BY_CODE: dict[str, Rule] = {r.code: r for r in ALL}
CHECKS: list[Rule] = [r for r in ALL if r.check is not None]
