"""The rule type and its registry entry.  The table of all rules is ``mgpu_lint.rules.ALL``."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

from mgpu_lint.findings import Finding, Severity

if TYPE_CHECKING:
    from mgpu_lint.deployment import Deployment

Check = Callable[["Deployment"], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    """A rule: stable code, kebab-case name, default severity, one-line summary, explanation.

    ``check`` is None for rules whose findings come from the readers and parsers (MG001-MG016):
    those are found while reading, and registered here for their metadata.
    """

    code: str
    name: str
    severity: Severity
    summary: str
    explanation: str
    check: Check | None = None

    @property
    def url(self) -> str:
        return f"https://mgpu-lint.dev/rules/{self.code}"


def rule(code: str, name: str, severity: Severity, summary: str) -> Callable[[Check], Rule]:
    """Decorator: the function's docstring is the rule's explanation (``mgpu-lint rule CODE``)."""

    def wrap(fn: Check) -> Rule:
        return Rule(code, name, severity, summary, inspect.cleandoc(fn.__doc__ or ""), fn)

    return wrap


def reader_rule(code: str, name: str, severity: Severity, summary: str, explanation: str) -> Rule:
    return Rule(code, name, severity, summary, inspect.cleandoc(explanation), None)
