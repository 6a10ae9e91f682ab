"""The rule table: every rule code, in one place (explicit, no import-time registration magic)."""

from __future__ import annotations

from .files import RULES as _FILES
from .registry import Rule

ALL: list[Rule] = [*_FILES]
BY_CODE: dict[str, Rule] = {r.code: r for r in ALL}
