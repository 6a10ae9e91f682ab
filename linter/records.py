"""``dataclass``: the standard library's decorator with the same meaning, at a fraction of its
start-up cost.

``dataclasses.dataclass`` writes every method it adds (``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, and ``__setattr__``/``__delattr__`` for frozen classes) as source text and compiles
each with ``exec``: 0.3-0.7 ms per class on this machine, ~45 ms for the ~90 classes a one-file
lint imports, a quarter of its start-up (issue 19, measured with ``dataclasses._process_class``
timed in-process).  Here the standard library still does the class analysis (fields, defaults,
``kw_only``, ``__slots__``, ``__match_args__``; ``dataclasses.fields`` and ``replace`` work
unchanged); the methods that only read the field list are shared closures, and ``__init__`` — the
one method whose speed matters per object — is compiled the first time the class is
instantiated, so classes a run never builds cost nothing.

Supported (what the package uses; anything else raises ``TypeError`` at decoration):
``frozen``, ``slots``, ``kw_only``, ``eq``, ``repr``, and per field ``default``,
``default_factory``, ``init``, ``repr``, ``compare``, ``hash``, ``kw_only``; ``__post_init__``
without ``InitVar``; no inheritance between dataclasses.  One difference: a class without a
docstring gets its name as ``__doc__`` (the standard library writes its signature, which costs
an ``inspect.signature``).  ``tests/test_records.py`` checks the behaviour against
``dataclasses.dataclass`` on the same class bodies.
"""

from __future__ import annotations

import dataclasses
from dataclasses import MISSING, FrozenInstanceError
from operator import attrgetter
from _thread import get_ident  # not threading: its import is not needed here
from typing import Any, Callable, TypeVar

T = TypeVar("T")

__all__ = ["dataclass"]


def dataclass(cls: type[T] | None = None, /, *, frozen: bool = False, slots: bool = False,
              kw_only: bool = False, eq: bool = True, repr: bool = True) -> Any:
    """``dataclasses.dataclass`` with these options (see the module docstring)."""

    def wrap(c: type[T]) -> type[T]:
        return _build(c, frozen=frozen, slots=slots, kw_only=kw_only, eq=eq, add_repr=repr)

    return wrap if cls is None else wrap(cls)


def _build(cls: type[T], *, frozen: bool, slots: bool, kw_only: bool, eq: bool,
           add_repr: bool) -> type[T]:
    if any(dataclasses.is_dataclass(b) for b in cls.__mro__[1:]):
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
    if own.get("__doc__") is None:
        # the standard library would build one from inspect.signature (~ms on first use)
        cls.__doc__ = cls.__name__

    # the standard library's analysis, with none of the methods it would compile
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False, frozen=False,
                                slots=slots, kw_only=kw_only)  # type: ignore[call-overload]
    if any(f._field_type is not dataclasses._FIELD  # type: ignore[attr-defined]
           and f._field_type is not dataclasses._FIELD_CLASSVAR  # type: ignore[attr-defined]
           for f in cls.__dataclass_fields__.values()):  # type: ignore[attr-defined]
        raise TypeError(f"{cls.__qualname__}: records.dataclass does not support InitVar")
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    params.init, params.repr, params.eq, params.frozen = True, add_repr, eq, frozen
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    names = tuple(f.name for f in fields)

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


def _lazy_init(cls: type, fields: tuple[dataclasses.Field[Any], ...],
               frozen: bool) -> Callable[..., None]:
    """An ``__init__`` that compiles the real one on the first call and puts it in its place."""
    _init_source(cls, fields, frozen)  # argument-order errors are raised at decoration

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        real = _compile_init(cls, fields, frozen)
        cls.__init__ = real  # type: ignore[misc]
        real(self, *args, **kwargs)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _init_source(cls: type, fields: tuple[dataclasses.Field[Any], ...],
                 frozen: bool) -> tuple[str, dict[str, Any]]:
    """The source of ``__init__`` as ``dataclasses._init_fn`` writes it, and its globals."""
    env: dict[str, Any] = {"_HAS_DEFAULT_FACTORY": _HAS_DEFAULT_FACTORY,
                           "__records_object__": object}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
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
            body.append(f"__records_object__.__setattr__(self, {f.name!r}, {value})")
        else:
            body.append(f"self.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    params = ["self", *positional, *(["*", *keyword] if keyword else [])]
    source = (f"def __init__({', '.join(params)}):\n"
              + "".join(f"    {line}\n" for line in body or ["pass"]))
    return source, env


def _compile_init(cls: type, fields: tuple[dataclasses.Field[Any], ...],
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
