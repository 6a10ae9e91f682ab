"""The rule table itself: codes, names, docs, and a firing and a silent fixture for each rule."""

from __future__ import annotations

import re

from mgpu_lint.rules import ALL, BY_CODE

from tests.rulecheck import RULE_FIXTURES


def test_codes_unique_and_well_formed() -> None:
    assert len(BY_CODE) == len(ALL)
    for r in ALL:
        assert re.fullmatch(r"MG\d{3}", r.code)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name)
        assert r.summary and len(r.explanation) > 80, r.code


def test_every_checked_rule_has_firing_and_silent_fixtures() -> None:
    for r in ALL:
        if r.check is None:
            continue
        d = RULE_FIXTURES / r.code
        names = [p.name for p in d.iterdir()] if d.is_dir() else []
        assert any(n.startswith("fires-") for n in names), f"{r.code}: no fires-* fixture"
        assert any(n.startswith("silent-") for n in names), f"{r.code}: no silent-* fixture"


def test_explanations_are_cleaned_as_inspect_cleandoc_does() -> None:
    import inspect

    from mgpu_lint.rules.registry import cleandoc

    docs = [r.check.__doc__ or "" for r in ALL if r.check is not None]
    docs += ["", "one", "\n\n  a\n    b\n\n", "\tx\n\t  y\n\t z", "  lead\n\n    body\n  end  \n"]
    for doc in docs:
        assert cleandoc(doc) == inspect.cleandoc(doc)
    assert all(r.explanation == inspect.cleandoc(r.check.__doc__ or "")
               for r in ALL if r.check is not None)
