"""A script's variables as ``ScriptEnv`` keeps them read like the dict copies they replace:
``dict(base)``, then each set or unset in order, copied at every launch."""

from __future__ import annotations

import random

from linter.launch import EnvVar
from linter.script_env import EnvView, ScriptEnv, env_items, frozen, with_var


def _var(name: str, k: int) -> EnvVar:
    return EnvVar(name, str(k))


def test_views_read_like_the_dicts_they_replace() -> None:
    rng = random.Random(20)
    names = [f"V{i}" for i in range(12)]
    for trial in range(300):
        base = {n: _var(n, -1) for n in rng.sample(names, rng.randrange(0, 6))}
        if trial % 3 == 0:  # a view as the base: a script inside a script (`sh -c`)
            outer = ScriptEnv(base)
            for k in range(rng.randrange(0, 6)):
                outer[rng.choice(names)] = _var("o", k)
            base_map = outer.view()
            base = dict(base_map)
        else:
            base_map = base
        env, model = ScriptEnv(base_map), dict(base)
        kept: list[tuple[EnvView, dict[str, EnvVar]]] = []
        for k in range(rng.randrange(1, 40)):
            op, name = rng.random(), rng.choice(names)
            if op < 0.55:
                env[name] = model[name] = _var(name, k)
            elif op < 0.75:
                env.pop(name)
                model.pop(name, None)
            else:
                extra = {n: _var(n, 100 + k) for n in rng.sample(names, rng.randrange(0, 3))}
                kept.append((env.view(extra), {**model, **extra}))
            assert env.get(name) == model.get(name)
        for view, expected in kept:
            assert list(view) == list(expected)
            assert len(view) == len(expected)
            for n in names:
                assert (n in view) == (n in expected)
                assert view.get(n) == expected.get(n)
            wanted = set(rng.sample(names, 5))
            assert view.select(wanted) == [(k, v) for k, v in expected.items() if k in wanted]
            assert env_items(view, dict.fromkeys(wanted)) == \
                [(k, v) for k, v in expected.items() if k in wanted]
        # the first few in order, and how many: views in and out of the order they were taken
        for view, expected in kept + kept[::-1]:
            k = rng.randrange(0, 5)
            assert view.head(k) == (list(expected.items())[:k], len(expected))


def test_a_view_does_not_see_later_changes() -> None:
    env = ScriptEnv({"A": _var("A", 0)})
    before = env.view()
    env["A"] = _var("A", 1)
    env["B"] = _var("B", 1)
    env.pop("A")
    assert dict(before) == {"A": _var("A", 0)}
    assert env.view() == {"B": _var("B", 1)}
    assert frozen(before) is before


def test_with_var_leaves_its_input_alone() -> None:
    env = ScriptEnv({})
    env["A"] = _var("A", 0)
    view = env.view()
    more = with_var(view, "B", _var("B", 0))
    assert isinstance(more, EnvView) and dict(more) == {"A": _var("A", 0), "B": _var("B", 0)}
    assert dict(view) == {"A": _var("A", 0)}
    plain = {"A": _var("A", 0)}
    assert with_var(plain, "A", _var("A", 1)) == {"A": _var("A", 1)} and plain["A"].value == "0"
    copy = frozen(plain)
    assert copy == plain and copy is not plain
