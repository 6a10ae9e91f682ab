"""The rule type and its registry entry.  The table of all rules is ``mgpu_lint.rules.ALL``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable, Iterable

from mgpu_lint.findings import Finding, Severity
from mgpu_lint.records import dataclass

if TYPE_CHECKING:
    from mgpu_lint.deployment import Deployment
    from mgpu_lint.engines import Engine
    from mgpu_lint.source import SourceFile, Span

Check = Callable[["Deployment"], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    """A rule: stable code, kebab-case name, default severity, one-line summary, explanation.

    ``check`` is None for rules whose findings come from the readers and parsers (MG001-MG016):
    those are found while reading, and registered here for their metadata.

    ``needs``: the engine capabilities the rule applies to (``engines/adapter.py``); the runner
    runs it only on launches whose engine has them all.  ``reads``: the settings whose value the
    rule needs (directly or through a fact): when one is stated but unresolved (``$TP``), the rule
    stays silent and MG009 names it.  ``rules.settings_read`` derives each engine's table.
    """

    code: str
    name: str
    severity: Severity
    summary: str
    explanation: str
    check: Check | None = None
    needs: frozenset[str] = frozenset()
    reads: tuple[str, ...] = ()
    given: frozenset[str] = frozenset()
    on: frozenset[str] = frozenset()

    def applies_to(self, engine: Engine) -> bool:
        return engine.has(*self.needs)

    def finding(self, message: str, source: SourceFile, span: Span, *,
                severity: Severity | None = None, **kw: Any) -> Finding:
        """A finding of this rule: its code, and its severity unless the case sets another."""
        return Finding(self.code, severity or self.severity, message, source, span, **kw)

    def url(self, docs_url: str | None = None) -> str | None:
        """A link to the rule's page: the configured ``docs-url``, else the page shipped with
        the package (``file:`` URI); None when there is neither (see report/rule_pages.py)."""
        from mgpu_lint.report.rule_pages import rule_href

        return rule_href(self.code, docs_url)


def cleandoc(doc: str) -> str:
    """``inspect.cleandoc``: the first line stripped, the others' common indentation removed,
    blank lines at both ends dropped.  Written out because importing ``inspect`` (with ``ast``,
    ``dis`` and ``tokenize``) costs ~5 ms of a one-file lint's start-up (issue 19);
    tests/test_rule_table.py checks it against ``inspect.cleandoc`` on every rule."""
    lines = doc.expandtabs().split("\n")
    margin = sys.maxsize
    for line in lines[1:]:
        content = len(line.lstrip())
        if content:
            margin = min(margin, len(line) - content)
    lines[0] = lines[0].lstrip()
    if margin < sys.maxsize:
        lines[1:] = [line[margin:] for line in lines[1:]]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)


def rule(code: str, name: str, severity: Severity, summary: str, *,
         needs: Iterable[str] = (), reads: Iterable[str] = (), given: Iterable[str] = (),
         on: Iterable[str] = ()) -> Callable[[Check], Rule]:
    """Decorator: the function's docstring is the rule's explanation (``mgpu-lint rule CODE``)."""

    def wrap(fn: Check) -> Rule:
        return Rule(code, name, severity, summary, cleandoc(fn.__doc__ or ""), fn,
                    frozenset(needs), tuple(reads), frozenset(given), frozenset(on))

    return wrap


def reader_rule(code: str, name: str, severity: Severity, summary: str, explanation: str, *,
                reads: Iterable[str] = ()) -> Rule:
    return Rule(code, name, severity, summary, cleandoc(explanation), None,
                frozenset(), tuple(reads))
