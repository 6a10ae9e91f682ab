"""``dataclass``, ``field``, ``fields``, ``replace``, ``asdict``: the standard library's
dataclasses with the same meaning, at a fraction of their start-up cost.

``dataclasses.dataclass`` writes every method it adds (``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, and ``__setattr__``/``__delattr__`` for frozen classes) as source text and compiles
each with ``exec``: 0.3-0.7 ms per class on this machine, ~45 ms for the ~90 classes a one-file
lint imports, a quarter of its start-up; importing ``dataclasses`` itself costs ~7 ms more
(``inspect``, ``ast``, ``dis``, ``tokenize``, ``copy``), and its class analysis ~0.07 ms per
class (issue 19, measured in-process).  Here the class analysis is a loop over the annotations;
the methods that only read the field list are shared closures, and ``__init__`` -- the one
method whose speed matters per object -- is compiled the first time the class is instantiated,
so classes a run never builds cost nothing.

The standard library's view of a record is built when something asks for it:
``__dataclass_fields__`` and ``__dataclass_params__`` are computed on first access (importing
``dataclasses`` then), so ``dataclasses.fields``/``replace``/``asdict``/``is_dataclass`` and
pydantic (which validates configuration and, in the tests, the shipped catalogs against these
classes) work on records unchanged.

Supported (what the package uses; anything else raises ``TypeError`` at decoration):
``frozen``, ``slots``, ``kw_only``, ``eq``, ``repr``, and per field ``default``,
``default_factory``, ``init``, ``repr``, ``compare``, ``hash``, ``kw_only``, ``metadata``;
``__post_init__`` without ``InitVar``; no ``KW_ONLY`` marker; no inheritance
between dataclasses.  One difference: a class without a docstring gets its name as ``__doc__``
(the standard library writes its signature, which costs an ``inspect.signature``).
``tests/test_records.py`` checks the behaviour against ``dataclasses.dataclass`` on the same
class bodies.
"""

from __future__ import annotations

import re
from _thread import get_ident  # not threading: its import is not needed here
from operator import attrgetter
from types import MappingProxyType, MemberDescriptorType
from typing import Any, Callable, Iterable, TypeVar

T = TypeVar("T")

__all__ = ["MISSING", "FrozenInstanceError", "asdict", "dataclass", "field", "fields", "replace"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # no default (the standard library's MISSING is its own object)
_EMPTY: Any = MappingProxyType({})


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a frozen record (the standard library's has the same name)."""


class Field:
    """One field: what ``field()`` was given, with the name and annotation filled in."""

    __slots__ = ("name", "type", "default", "default_factory", "init", "repr", "hash",
                 "compare", "metadata", "kw_only")

    def __init__(self, default: Any, default_factory: Any, init: bool, repr: bool,
                 hash: bool | None, compare: bool, metadata: Any, kw_only: Any) -> None:
        self.name: str = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.hash = hash
        self.compare = compare
        self.metadata = _EMPTY if metadata is None else MappingProxyType(metadata)
        self.kw_only = kw_only

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r}, init={self.init!r})"


def field(*, default: Any = MISSING, default_factory: Any = MISSING, init: bool = True,
          repr: bool = True, hash: bool | None = None, compare: bool = True,
          metadata: Any = None, kw_only: Any = MISSING) -> Any:
    """``dataclasses.field``."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, init, repr, hash, compare, metadata, kw_only)


def fields(class_or_instance: Any) -> tuple[Field, ...]:
    """``dataclasses.fields`` of a record (of another dataclass: the standard library's)."""
    found = getattr(class_or_instance, "__records_fields__", None)
    if found is None:
        import dataclasses

        return dataclasses.fields(class_or_instance)  # type: ignore[return-value]
    return found  # type: ignore[no-any-return]


def replace(obj: T, /, **changes: Any) -> T:
    """``dataclasses.replace``: a copy of ``obj`` with ``changes``."""
    found = getattr(type(obj), "__records_fields__", None)
    if found is None:
        import dataclasses

        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    for f in found:
        if not f.init:
            if f.name in changes:
                raise ValueError(f"field {f.name} is declared with init=False, it cannot be "
                                 "specified with replace()")
        elif f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return obj.__class__(**changes)  # type: ignore[no-any-return]


def asdict(obj: Any) -> dict[str, Any]:
    """``dataclasses.asdict`` (nested records and containers copied)."""
    import dataclasses

    return dataclasses.asdict(obj)


def dataclass(cls: type[T] | None = None, /, *, frozen: bool = False, slots: bool = False,
              kw_only: bool = False, eq: bool = True, repr: bool = True) -> Any:
    """``dataclasses.dataclass`` with these options (see the module docstring)."""

    def wrap(c: type[T]) -> type[T]:
        return _build(c, frozen=frozen, slots=slots, kw_only=kw_only, eq=eq, add_repr=repr)

    return wrap if cls is None else wrap(cls)


# `ClassVar[...]`, `typing.ClassVar[...]` (annotations are strings under
# `from __future__ import annotations`), as dataclasses._is_type reads them
_ANNOTATION_NAME = re.compile(r"^(?:\s*(\w+)\s*\.)?\s*(\w+)")


def _special(annotation: Any) -> str | None:
    """"ClassVar", "InitVar" or "KW_ONLY" when the annotation is one of them."""
    if isinstance(annotation, str):
        m = _ANNOTATION_NAME.match(annotation)
        if m and m.group(2) in ("ClassVar", "InitVar", "KW_ONLY") and \
                m.group(1) in (None, "typing", "dataclasses"):
            return m.group(2)
        return None
    name = getattr(annotation, "__name__", None) or getattr(
        getattr(annotation, "__origin__", None), "_name", None) or getattr(
        annotation, "_name", None)
    return name if name in ("ClassVar", "InitVar", "KW_ONLY") else None


def _analyse(cls: type, kw_only: bool) -> list[Field]:
    """The fields in annotation order, as ``dataclasses._process_class`` finds them, and the
    class attributes it leaves (defaults as plain values, fields without one removed)."""
    own = cls.__dict__
    annotations = own.get("__annotations__", {})
    out: list[Field] = []
    for name, annotation in annotations.items():
        special = _special(annotation)
        if special == "ClassVar":
            continue
        if special is not None:
            raise TypeError(f"{cls.__qualname__}.{name}: records.dataclass does not support "
                            f"{special}")
        value = own.get(name, MISSING)
        if _is_standard_field(value):
            value = _from_standard(value)
            setattr(cls, name, value)
        if isinstance(value, Field):
            f = value
        else:
            if isinstance(value, MemberDescriptorType):
                value = MISSING  # a slot of an earlier __slots__ class body
            f = field(default=value)
        f.name, f.type = name, annotation
        if f.kw_only is MISSING:
            f.kw_only = kw_only
        if f.default is not MISSING and f.default.__class__.__hash__ is None:
            raise ValueError(f"mutable default {type(f.default)} for field {name} is not "
                             "allowed: use default_factory")
        out.append(f)
    for name, value in list(own.items()):
        if isinstance(value, Field):
            if name not in annotations:
                raise TypeError(f"{name!r} is a field but has no type annotation")
            if value.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, value.default)
    return out


def _is_standard_field(value: Any) -> bool:
    """A ``dataclasses.field(...)`` (recognised without importing ``dataclasses``)."""
    kind = type(value)
    return kind.__name__ == "Field" and kind.__module__ == "dataclasses"


def _from_standard(value: Any) -> Field:
    import dataclasses

    def ours(v: Any) -> Any:
        return MISSING if v is dataclasses.MISSING else v

    return field(default=ours(value.default), default_factory=ours(value.default_factory),
                 init=value.init, repr=value.repr, hash=value.hash, compare=value.compare,
                 metadata=dict(value.metadata) or None, kw_only=ours(value.kw_only))


def _with_slots(cls: type, names: tuple[str, ...]) -> type:
    """The class again with ``__slots__`` (``dataclasses._add_slots``)."""
    if "__slots__" in cls.__dict__:
        raise TypeError(f"{cls.__name__} already specifies __slots__")
    body = dict(cls.__dict__)
    body["__slots__"] = names
    for name in names:
        body.pop(name, None)  # defaults live in __init__
    body.pop("__dict__", None)
    body.pop("__weakref__", None)
    qualname = getattr(cls, "__qualname__", None)
    new = type(cls)(cls.__name__, cls.__bases__, body)
    if qualname is not None:
        new.__qualname__ = qualname
    return new


class _StandardView:
    """``__dataclass_fields__`` / ``__dataclass_params__`` of a record: the standard library's
    objects, built on first access (which imports ``dataclasses``), then stored on the class."""

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __get__(self, obj: Any, owner: type) -> Any:
        import dataclasses

        if self.attribute == "__dataclass_fields__":
            value: Any = {}
            for f in owner.__records_fields__:  # type: ignore[attr-defined]
                std = dataclasses.field(
                    default=dataclasses.MISSING if f.default is MISSING else f.default,
                    default_factory=dataclasses.MISSING if f.default_factory is MISSING
                    else f.default_factory,
                    init=f.init, repr=f.repr, hash=f.hash, compare=f.compare,
                    metadata=dict(f.metadata) or None, kw_only=f.kw_only)
                std.name, std.type = f.name, f.type
                std._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
                value[f.name] = std
        else:
            init, add_repr, eq, frozen, kw_only, slots = owner.__records_params__  # type: ignore[attr-defined]
            params = dataclasses._DataclassParams  # type: ignore[attr-defined]
            try:  # Python 3.12+
                value = params(init=init, repr=add_repr, eq=eq, order=False,
                               unsafe_hash=False, frozen=frozen, match_args=True,
                               kw_only=kw_only, slots=slots, weakref_slot=False)
            except TypeError:
                value = params(init, add_repr, eq, False, False, frozen)
        setattr(owner, self.attribute, value)
        return value


def _build(cls: type[T], *, frozen: bool, slots: bool, kw_only: bool, eq: bool,
           add_repr: bool) -> type[T]:
    if any("__dataclass_fields__" in b.__dict__ or "__records_fields__" in b.__dict__
           for b in cls.__mro__[1:]):
        raise TypeError(f"{cls.__qualname__}: records.dataclass does not support inheriting "
                        "from a dataclass")
    own = cls.__dict__
    if frozen and ("__setattr__" in own or "__delattr__" in own):
        raise TypeError(f"Cannot overwrite attribute __setattr__ or __delattr__ in class "
                        f"{cls.__name__}")
    # what the class body defines itself is kept, as the standard library does
    class_hash = own.get("__hash__", MISSING)
    explicit_hash = not (class_hash is MISSING or (class_hash is None and "__eq__" in own))
    keep = {name for name in ("__init__", "__repr__", "__eq__") if name in own}

    found = tuple(_analyse(cls, kw_only))
    names = tuple(f.name for f in found)
    if slots:
        cls = _with_slots(cls, names)  # type: ignore[assignment]
    if cls.__dict__.get("__doc__") is None:
        cls.__doc__ = cls.__name__
    cls.__records_fields__ = found  # type: ignore[attr-defined]
    cls.__records_params__ = (True, add_repr, eq, frozen, kw_only, slots)  # type: ignore[attr-defined]
    cls.__dataclass_fields__ = _StandardView("__dataclass_fields__")  # type: ignore[attr-defined]
    cls.__dataclass_params__ = _StandardView("__dataclass_params__")  # type: ignore[attr-defined]
    if "__match_args__" not in cls.__dict__:
        cls.__match_args__ = tuple(f.name for f in found if f.init and not f.kw_only)  # type: ignore[attr-defined]
    fields = found

    if "__init__" not in keep:
        cls.__init__ = _lazy_init(cls, fields, frozen)  # type: ignore[misc]
    if add_repr and "__repr__" not in keep:
        cls.__repr__ = _repr_fn(tuple(f.name for f in fields if f.repr))  # type: ignore[assignment]
    if eq and "__eq__" not in keep:
        cls.__eq__ = _eq_fn(_key(tuple(f.name for f in fields if f.compare)))  # type: ignore[assignment]
    if eq and not explicit_hash:
        if frozen:
            key = _key(tuple(f.name for f in fields
                             if (f.compare if f.hash is None else f.hash)))
            cls.__hash__ = lambda self: hash(key(self))  # type: ignore[assignment]
        else:
            cls.__hash__ = None  # type: ignore[assignment]
    if frozen:
        cls.__setattr__, cls.__delattr__ = _frozen_fns(cls, names)  # type: ignore[assignment]
        if slots:
            cls.__getstate__ = _getstate_fn(names)  # type: ignore[attr-defined]
            cls.__setstate__ = _setstate_fn(names)  # type: ignore[attr-defined]
    return cls


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of these attributes (as the standard library compares and hashes them)."""
    if not names:
        return lambda obj: ()
    if len(names) == 1:
        get1 = attrgetter(names[0])
        return lambda obj: (get1(obj),)
    return attrgetter(*names)


def _eq_fn(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _repr_fn(names: tuple[str, ...]) -> Callable[[Any], str]:
    running: set[tuple[int, int]] = set()

    def __repr__(self: Any) -> str:
        mark = (id(self), get_ident())
        if mark in running:
            return "..."
        running.add(mark)
        try:
            inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
        finally:
            running.discard(mark)
        return f"{self.__class__.__qualname__}({inner})"

    return __repr__


def _frozen_fns(cls: type, names: tuple[str, ...]) -> tuple[Callable[..., None], ...]:
    fields = frozenset(names)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in fields:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in fields:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__


def _getstate_fn(names: tuple[str, ...]) -> Callable[[Any], list[Any]]:
    def __getstate__(self: Any) -> list[Any]:
        return [getattr(self, n) for n in names]

    return __getstate__


def _setstate_fn(names: tuple[str, ...]) -> Callable[[Any, list[Any]], None]:
    def __setstate__(self: Any, state: list[Any]) -> None:
        for name, value in zip(names, state):
            object.__setattr__(self, name, value)

    return __setstate__


def _lazy_init(cls: type, fields: tuple[Field, ...],
               frozen: bool) -> Callable[..., None]:
    """An ``__init__`` that compiles the real one on the first call and puts it in its place."""
    _init_source(cls, fields, frozen)  # argument-order errors are raised at decoration

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        real = _compile_init(cls, fields, frozen)
        cls.__init__ = real  # type: ignore[misc]
        real(self, *args, **kwargs)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _init_source(cls: type, fields: tuple[Field, ...],
                 frozen: bool) -> tuple[str, dict[str, Any]]:
    """The source of ``__init__`` as ``dataclasses._init_fn`` writes it, and its globals."""
    # a frozen record's fields are set with ``object.__setattr__`` as the standard library
    # does, looked up once (not per field); an instance of exactly a class without slots whose
    # fields no data descriptor shadows gets them written to its ``__dict__``, which is what
    # ``object.__setattr__`` does there, at a third of the cost (a 22-field record took 7 µs)
    env: dict[str, Any] = {"_HAS_DEFAULT_FACTORY": _HAS_DEFAULT_FACTORY,
                           "__records_setattr__": object.__setattr__, "__records_cls__": cls}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    direct: list[str] = []  # the frozen body writing to __dict__
    slotted: dict[str, str] = {}  # the frozen body's fields and values, for _own_slots
    seen_default = False
    for f in fields:
        default = f"_dflt_{f.name}"
        if f.init:
            if f.default_factory is not MISSING:
                env[default] = f.default_factory
                param = f"{f.name}=_HAS_DEFAULT_FACTORY"
                value = f"{default}() if {f.name} is _HAS_DEFAULT_FACTORY else {f.name}"
            elif f.default is not MISSING:
                env[default] = f.default
                param = f"{f.name}={default}"
                value = f.name
            else:
                param = f.name
                value = f.name
            if f.kw_only:
                keyword.append(param)
            else:
                has_default = param != f.name
                if seen_default and not has_default:
                    raise TypeError(f"non-default argument {f.name!r} follows default argument")
                seen_default = seen_default or has_default
                positional.append(param)
        elif f.default_factory is not MISSING:
            env[default] = f.default_factory
            value = f"{default}()"
        elif f.default is not MISSING and "__slots__" in cls.__dict__:
            env[default] = f.default
            value = default
        else:
            continue  # read from the class attribute (or set by __post_init__)
        if frozen:
            body.append(f"__records_setattr__(self, {f.name!r}, {value})")
            direct.append(f"__records_d__[{f.name!r}] = {value}")
            slotted[f.name] = value
        else:
            body.append(f"self.{f.name} = {value}")
    if frozen and direct and _plain_dict(cls, fields):
        body = ["if type(self) is __records_cls__:", "    __records_d__ = self.__dict__",
                *("    " + line for line in direct), "else:", *("    " + line for line in body)]
    elif frozen and slotted and _own_slots(cls, slotted):
        # an instance of exactly a class whose slots hold the fields: each is written by its
        # slot's descriptor, which is what ``object.__setattr__`` finds and calls there, at
        # 60% of the cost (source.Span 0.35 -> 0.20 µs, VarRef 0.45 -> 0.25, Word 0.51 ->
        # 0.33); ``type`` by another name, as a field may be called type
        env["__records_type__"] = type
        for name in slotted:
            env[f"__records_set_{name}__"] = cls.__dict__[name].__set__
        body = ["if __records_type__(self) is __records_cls__:",
                *(f"    __records_set_{name}__(self, {value})" for name, value in slotted.items()),
                "else:", *("    " + line for line in body)]
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    params = ["self", *positional, *(["*", *keyword] if keyword else [])]
    source = (f"def __init__({', '.join(params)}):\n"
              + "".join(f"    {line}\n" for line in body or ["pass"]))
    return source, env


def _plain_dict(cls: type, fields: tuple[Field, ...]) -> bool:
    """Instances keep their fields in ``__dict__`` and no class in the MRO has a data
    descriptor (a property, a slot) of a field's name: a ``__dict__`` write is then exactly
    ``object.__setattr__``."""
    if "__slots__" in cls.__dict__ or not hasattr(cls, "__dict__"):
        return False
    if any("__slots__" in b.__dict__ for b in cls.__mro__[1:] if b is not object):
        return False
    for f in fields:
        for b in cls.__mro__:
            if f.name in b.__dict__:
                attr = type(b.__dict__[f.name])
                if hasattr(attr, "__set__") or hasattr(attr, "__delete__"):
                    return False
                break
    return True


def _own_slots(cls: type, names: Iterable[str]) -> bool:
    """Each of ``names`` is a slot of ``cls`` itself (its descriptor is the one
    ``object.__setattr__`` finds first for an instance of exactly ``cls``)."""
    own = cls.__dict__
    return all(type(own.get(name)) is MemberDescriptorType for name in names)


def _compile_init(cls: type, fields: tuple[Field, ...],
                  frozen: bool) -> Callable[..., None]:
    source, env = _init_source(cls, fields, frozen)
    namespace: dict[str, Any] = {}
    exec(source, env, namespace)  # noqa: S102 - generated from the field list, as dataclasses does
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init  # type: ignore[no-any-return]


class _HasDefaultFactory:
    def __repr__(self) -> str:
        return "<factory>"


_HAS_DEFAULT_FACTORY = _HasDefaultFactory()
