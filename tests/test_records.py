"""mgpu_lint.records.dataclass behaves as dataclasses.dataclass on the same class bodies."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from pathlib import Path

import pytest

from mgpu_lint import records

ROOT = Path(__file__).resolve().parents[1]


def make(deco, field=records.field, **options):  # type: ignore[no-untyped-def]
    """The same class bodies decorated by ``deco`` (the standard one or ours), with ``field``
    from the same module."""

    @deco(**options)
    class Point:
        """A point."""

        x: int
        y: float = 0.5
        tags: tuple[str, ...] = ()
        notes: list[str] = field(default_factory=list)
        cache: dict[str, int] | None = field(default=None, repr=False, compare=False)

    @deco(**options, kw_only=True)
    class Keyed:
        name: str
        size: int = 1
        extra: list[int] = field(default_factory=list, compare=False)

    @deco(**options)
    class Derived:
        """__post_init__ fills fields that __init__ does not take."""

        items: tuple[int, ...]
        total: int = field(init=False, repr=False, compare=False)
        seen: dict[int, int] = field(init=False, repr=False, compare=False,
                                     default_factory=dict)

        def __post_init__(self) -> None:
            object.__setattr__(self, "total", sum(self.items))

    @deco(**options)
    class Mixed:
        a: int
        b: int = field(default=2, hash=False)
        c: str = field(default="c", kw_only=True)

    @deco(**options)
    class Custom:
        value: int

        def __repr__(self) -> str:
            return f"<{self.value}>"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Custom) and other.value % 10 == self.value % 10

        def __hash__(self) -> int:
            return self.value % 10

    return Point, Keyed, Derived, Mixed, Custom


# every combination the package uses
OPTIONS = [{}, {"frozen": True}, {"slots": True}, {"frozen": True, "slots": True},
           {"eq": False}]


def _ours(**options):  # type: ignore[no-untyped-def]
    return records.dataclass(**options)


def _std(**options):  # type: ignore[no-untyped-def]
    return dataclasses.dataclass(**options)


def outcome(fn):  # type: ignore[no-untyped-def]
    """What calling ``fn`` gives: its value, or the exception's type and message."""
    try:
        return ("ok", fn())
    except Exception as exc:  # noqa: BLE001 - compared, not swallowed
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(o) or "plain")
def test_same_behaviour_as_the_standard_library(options: dict[str, bool]) -> None:
    ours, std = make(_ours, **options), make(_std, dataclasses.field, **options)
    for mine, theirs in zip(ours, std):
        assert [(f.name, f.init, f.repr, f.compare, f.kw_only) for f in dataclasses.fields(mine)] \
            == [(f.name, f.init, f.repr, f.compare, f.kw_only) for f in dataclasses.fields(theirs)]
        assert getattr(mine, "__match_args__", None) == getattr(theirs, "__match_args__", None)
        assert getattr(mine, "__slots__", None) == getattr(theirs, "__slots__", None)
        assert (mine.__hash__ is None) == (theirs.__hash__ is None)
        params = ("init", "repr", "eq", "frozen")
        assert [getattr(mine.__dataclass_params__, p) for p in params] == \
            [getattr(theirs.__dataclass_params__, p) for p in params]

    def calls(Point, Keyed, Derived, Mixed, Custom):  # type: ignore[no-untyped-def]
        return [
            lambda: Point(1), lambda: Point(1, 2.0, ("a",), ["n"], {"k": 1}),
            lambda: Point(x=3, notes=["z"]), lambda: Point(), lambda: Point(1, 2, 3, 4, 5, 6),
            lambda: Point(1, nope=2), lambda: Keyed(name="k"), lambda: Keyed("k"),
            lambda: Keyed(name="k", size=3, extra=[1]), lambda: Derived((1, 2, 3)),
            lambda: Derived((1,), 5), lambda: Mixed(1), lambda: Mixed(1, 3, c="d"),
            lambda: Mixed(1, 3, "d"), lambda: Custom(13),
        ]

    for make_mine, make_theirs in zip(calls(*ours), calls(*std)):
        a, b = outcome(make_mine), outcome(make_theirs)
        assert a[0] == b[0], (a, b)
        if a[0] != "ok":
            assert a[1].replace("Point", "").replace("Keyed", "") == \
                b[1].replace("Point", "").replace("Keyed", ""), (a, b)
            continue
        x, y = a[1], b[1]
        assert repr(x) == repr(y)
        assert dataclasses.asdict(x) == dataclasses.asdict(y)
        if options.get("eq", True):
            twin = copy.copy(x)
            assert (x == twin) == (y == copy.copy(y))
            assert outcome(lambda: hash(x)) == outcome(lambda: hash(y)) == \
                outcome(lambda: hash(twin))
        assert outcome(lambda: setattr(x, dataclasses.fields(x)[0].name, 0))[0] == \
            outcome(lambda: setattr(y, dataclasses.fields(y)[0].name, 0))[0]
        assert outcome(lambda: delattr(x, dataclasses.fields(x)[0].name))[0] == \
            outcome(lambda: delattr(y, dataclasses.fields(y)[0].name))[0]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(o) or "plain")
def test_equality_hash_replace_and_copies(options: dict[str, bool]) -> None:
    Point, Keyed, Derived, Mixed, _ = make(_ours, **options)
    p = Point(1, tags=("a",))
    q = dataclasses.replace(p, y=2.5)
    assert (q.x, q.y, q.tags) == (1, 2.5, ("a",))
    if options.get("eq", True):
        assert p == Point(1, tags=("a",), cache={"different": 1})  # cache: compare=False
        assert p != q
        assert p.__eq__(object()) is NotImplemented
        if options.get("frozen"):  # b: hash=False, so only a and c are hashed
            assert hash(Mixed(1, 3)) == hash(Mixed(1, 4)) != hash(Mixed(1, 4, c="x"))
            assert len({Mixed(1), Mixed(1), Mixed(1, 3)}) == 2
    d = Derived((4, 5))
    assert d.total == 9 and dataclasses.replace(d, items=(1,)).total == 1
    assert d.seen == {}
    # module-level copies of the classes are needed for pickle; copy and deepcopy suffice here
    for clone in (copy.copy(p), copy.deepcopy(p)):
        assert dataclasses.astuple(clone) == dataclasses.astuple(p)
    assert Keyed(name="n").size == 1


@records.dataclass(frozen=True, slots=True)
class Pickled:
    a: int
    b: tuple[str, ...] = ()


def test_frozen_slotted_records_pickle() -> None:
    value = Pickled(1, ("x",))
    assert pickle.loads(pickle.dumps(value)) == value
    with pytest.raises(records.FrozenInstanceError) as raised:
        value.a = 2  # type: ignore[misc]
    assert isinstance(raised.value, AttributeError)  # as the standard library's


def test_the_standard_library_sees_records_as_dataclasses() -> None:
    """``__dataclass_fields__``/``__dataclass_params__`` are built on demand: what
    ``dataclasses.fields``, ``replace``, ``asdict`` and pydantic read."""
    for mine, theirs in zip(make(_ours, frozen=True, slots=True),
                            make(_std, dataclasses.field, frozen=True, slots=True)):
        assert dataclasses.is_dataclass(mine)
        std = dataclasses.fields(mine)
        assert [(f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare,
                 dict(f.metadata), f.kw_only) for f in std] == \
            [(f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare,
              dict(f.metadata), f.kw_only) for f in dataclasses.fields(theirs)]
        assert [f.name for f in records.fields(mine)] == [f.name for f in std]
        assert mine.__dataclass_params__.frozen and mine.__dataclass_params__.eq


def test_standard_field_objects_are_understood() -> None:
    @records.dataclass(frozen=True)
    class Mixed:
        a: int
        b: list[int] = dataclasses.field(default_factory=list, compare=False,
                                         metadata={"unit": "GPU"})

    assert Mixed(1, [2]) == Mixed(1, [3]) and Mixed(1).b == []
    assert records.fields(Mixed)[1].metadata == {"unit": "GPU"}


def test_unsupported_options_are_refused() -> None:
    @dataclasses.dataclass
    class Base:
        a: int

    with pytest.raises(TypeError):
        records.dataclass(type("Child", (Base,), {"__annotations__": {"b": "int"}}))
    with pytest.raises(TypeError):
        @records.dataclass
        class Bad:
            a: int = 1
            b: int  # type: ignore[misc]


def test_the_package_uses_records_not_the_standard_decorator() -> None:
    """Start-up (issue 19): no module imports dataclasses (~7 ms with inspect) or compiles
    dataclass methods one by one."""
    offenders = []
    for folder in ("linter", "rules"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "records.py":
                continue
            for line in path.read_text(encoding="utf-8").splitlines():
                code = line.split("#", 1)[0].strip()
                if code.startswith(("from dataclasses import", "import dataclasses")):
                    offenders.append(f"{path.relative_to(ROOT)}: {code}")
    assert offenders == [], (
        "use `from mgpu_lint.records import dataclass, field, replace` (same meaning, cheaper "
        "start-up; see linter/records.py)")


def test_a_frozen_slotted_record_sets_its_slots_and_a_subclass_goes_through_setattr() -> None:
    """The __init__ of a frozen slotted record writes each field of an instance of exactly
    its class with the field's slot descriptor (what ``object.__setattr__`` calls there); an
    instance of a subclass still goes through ``object.__setattr__``, which finds what the
    subclass defines, as the standard library's does."""
    def classes(deco):  # type: ignore[no-untyped-def]
        @deco(frozen=True, slots=True)
        class Rec:
            a: int
            b: tuple[int, ...] = ()
            type: str = "t"  # a field's name is a parameter of __init__

        class Shadowed(Rec):
            __slots__ = ()

            @property
            def b(self) -> tuple[int, ...]:  # type: ignore[override]
                return (0,)

        class Wider(Rec):
            __slots__ = ("c",)

        return Rec, Shadowed, Wider

    ours, std = classes(_ours), classes(_std)
    for mine, theirs in zip(ours, std):
        a = outcome(lambda: mine(1, (2,)))
        b = outcome(lambda: theirs(1, (2,)))
        assert a[0] == b[0], (a, b)
        if a[0] == "ok":
            assert (a[1].a, a[1].b, a[1].type) == (b[1].a, b[1].b, b[1].type) == (1, (2,), "t")
        else:
            assert a[1].replace(mine.__qualname__, "") == b[1].replace(theirs.__qualname__, "")
    assert outcome(lambda: ours[1](1))[0] == "AttributeError"  # the subclass's property
    source, _ = records._init_source(ours[0], records.fields(ours[0]), True)
    assert "__records_set_a__(self, a)" in source and "__records_set_b__(self, b)" in source
