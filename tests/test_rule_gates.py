"""A rule's ``given``/``on`` precondition (``rules.checks_stating``) only skips calls that would
report nothing: every skipped rule, called anyway on every launch of the fixtures, is silent."""

from __future__ import annotations

import pytest

import mgpu_lint.analyze as analyze
from mgpu_lint.cli import main
from mgpu_lint.engines import ENGINES
from mgpu_lint.engines.catalog import SGLANG_VERSIONS, vllm_versions
from mgpu_lint.rules import ALL, checks_for, checks_stating

from tests.conftest import ROOT


class _Skipped:
    """A rule ``checks_stating`` left out, called anyway: it must report nothing."""

    calls: list[str] = []

    def __init__(self, rule):  # type: ignore[no-untyped-def]
        self.rule = rule

    def check(self, d):  # type: ignore[no-untyped-def]
        found = list(self.rule.check(d))
        assert not found, (self.rule.code, str(d.source.path), [f.message for f in found])
        _Skipped.calls.append(self.rule.code)
        return found


def test_skipped_rules_report_nothing(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    def every(engine, inv):  # type: ignore[no-untyped-def]
        run = set(checks_stating(engine, inv))
        return tuple(r if r in run else _Skipped(r) for r in checks_for(engine))

    monkeypatch.setattr(analyze, "checks_stating", every)
    _Skipped.calls.clear()
    main(["--no-color", "--exit-zero", "--format", "json", str(ROOT / "fixtures")])
    out = capsys.readouterr().out
    assert '"MG000"' not in out
    # the gates skip something: every gated rule was skipped on some fixture launch
    gated = {r.code for r in ALL if r.given or r.on}
    assert gated and gated <= set(_Skipped.calls)


@pytest.mark.parametrize("rule", [r for r in ALL if r.given or r.on], ids=lambda r: r.code)
def test_gate_keys_are_settings(rule) -> None:  # type: ignore[no-untyped-def]
    """A misspelt key would skip its rule on every launch: each is an option of a catalogued
    release of an engine the rule runs on."""
    keys: set[str] = set()
    for engine in ENGINES.values():
        if not rule.applies_to(engine):
            continue
        for v in {*vllm_versions(), *SGLANG_VERSIONS, ""}:
            try:
                keys |= set(engine.catalog(v).by_key)
            except (KeyError, ValueError, OSError):
                continue
    assert keys, rule.code
    assert (rule.given | rule.on) <= keys, sorted((rule.given | rule.on) - keys)
