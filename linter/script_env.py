"""The variables of one shell text while it is read, with constant-time snapshots.

A script sets and unsets variables in order, and each launch sees them as they are when it
starts.  Copying them for every command and every launch was quadratic: 40,000 assignments then
40,000 commands (400 KB) took 15 s, 4,000 assignments and 4,000 launches 431 MiB.  Here every
change is appended once, a launch keeps a ``EnvView`` of the first ``n`` changes, and a lookup
finds a name's last change before ``n`` by bisection.

A view reads like the dict the old copies were: ``dict(base)``, then each change in order
(``env[name] = var`` or ``env.pop(name)``), including the order its names iterate in.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import islice
from operator import itemgetter
from typing import Any, Iterable, Iterator, Mapping

from .launch import EnvVar


Place = tuple  # where a name stands in a view's iteration order (compared as tuples)
_index = itemgetter(0)


class ScriptEnv:
    """The variables as they change: ``base`` (never modified), then each set or unset."""

    __slots__ = ("base", "n", "_changes", "_history", "_base_order", "_cursor")

    def __init__(self, base: Mapping[str, EnvVar]) -> None:
        self.base = base
        self.n = 0
        self._changes: list[tuple[str, EnvVar | None]] = []
        # per name, its changes in order: (index, value or None when unset, where the name
        # then stands in the iteration order: (1, the change that inserted it), or None where
        # it has kept its place in ``base``); one tuple a change, ~130 bytes
        self._history: dict[str, list[tuple[int, EnvVar | None, Place | None]]] = {}
        self._base_order: dict[str, int] | None = None
        self._cursor: list[Any] | None = None  # [n, the dict after the first n changes]

    def dict_at(self, n: int) -> dict[str, EnvVar]:
        """The variables after the first ``n`` changes, as one dict that the next call may
        change (read it at once, keep nothing): replayed from the last call's when ``n`` is
        past it, as a script's launches ask, else from the start."""
        cur = self._cursor
        if cur is None or cur[0] > n:
            cur = self._cursor = [0, dict(self.base)]
        d = cur[1]
        for name, var in self._changes[cur[0]:n]:
            if var is None:
                d.pop(name, None)
            else:
                d[name] = var
        cur[0] = n
        return d

    def base_place(self, name: str) -> Place:
        """Where a name of ``base`` stands in its iteration order (before any change's)."""
        base = self.base
        if isinstance(base, EnvView):
            return (0, base.place(name))
        order = self._base_order
        if order is None:
            order = self._base_order = base.order() if isinstance(base, ImageVars) else \
                {k: i for i, k in enumerate(base)}
        return (0, order[name])

    def _change(self, name: str, var: EnvVar | None) -> None:
        h = self._history.get(name)
        if h is None:
            present = name in self.base
            place: Place | None = None
            h = self._history[name] = []
        else:
            present = h[-1][1] is not None
            place = h[-1][2]
        if var is not None and not present:
            place = (1, self.n)  # inserted anew: it iterates after every name present now
        h.append((self.n, var, place))
        self._changes.append((name, var))
        self.n += 1

    def __setitem__(self, name: str, var: EnvVar) -> None:
        self._change(name, var)

    def pop(self, name: str) -> None:
        if self.get(name) is not None:
            self._change(name, None)

    def get(self, name: str) -> EnvVar | None:
        h = self._history.get(name)
        if h is not None:
            return h[-1][1]
        return self.base.get(name)

    def view(self, extra: Mapping[str, EnvVar] | None = None) -> "EnvView":
        """The variables as they are now (plus ``extra``, set on top, e.g. a command's own
        ``X=1 cmd`` assignments); later changes do not show in it."""
        return EnvView(self, self.n, dict(extra) if extra else None)


class EnvView(Mapping[str, EnvVar]):
    """The variables of a ``ScriptEnv`` after its first ``n`` changes, then ``extra``.
    Nothing changes a view once made."""

    __slots__ = ("env", "n", "extra")

    def __init__(self, env: ScriptEnv, n: int, extra: dict[str, EnvVar] | None) -> None:
        self.env = env
        self.n = n
        self.extra = extra

    def _at(self, name: str) -> tuple[EnvVar | None, Place | None]:
        """The name's value before ``extra`` (None: not set), and its place when a change
        set it (None: its place in the base)."""
        h = self.env._history.get(name)
        if h is not None:
            i = bisect_left(h, self.n, key=_index) - 1
            if i >= 0:
                return h[i][1], h[i][2]
        return self.env.base.get(name), None

    def __getitem__(self, name: str) -> EnvVar:
        extra = self.extra
        if extra is not None and name in extra:
            return extra[name]
        var = self._at(name)[0]
        if var is None:
            raise KeyError(name)
        return var

    def get(self, name: str, default: EnvVar | None = None) -> EnvVar | None:  # type: ignore[override]
        """Mapping.get without its KeyError: most names a launch asks for are not set (13,000
        misses in a 200 KB script of 3,283 launches, each a raised and caught exception)."""
        extra = self.extra
        if extra is not None and name in extra:
            return extra[name]
        var = self._at(name)[0]
        return default if var is None else var

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        extra = self.extra
        if extra is not None and name in extra:
            return True
        h = self.env._history.get(name)
        if h is None:  # never changed in the script: as in the base
            return self.env.base.get(name) is not None
        return self._at(name)[0] is not None

    def place(self, name: str) -> Place:
        """Where a name that is set stands in the iteration order."""
        var, place = self._at(name)
        if var is not None:
            return place if place is not None else self.env.base_place(name)
        extra = self.extra or {}
        return (2, list(extra).index(name))

    def with_var(self, name: str, var: EnvVar) -> "EnvView":
        """This view with one more variable set on top."""
        return EnvView(self.env, self.n, {**(self.extra or {}), name: var})

    def _materialized(self) -> dict[str, EnvVar]:
        """The whole dict, a fresh copy (not kept: a thousand launches' views of a script's
        20,000 variables would hold 20 million entries)."""
        d = dict(self.env.dict_at(self.n))
        if self.extra:
            d.update(self.extra)
        return d

    def __iter__(self) -> Iterator[str]:
        return iter(self._materialized())

    def items(self):  # type: ignore[no-untyped-def, override]
        return self._materialized().items()

    def values(self):  # type: ignore[no-untyped-def, override]
        return self._materialized().values()

    def __len__(self) -> int:
        return len(self._materialized())

    def head(self, k: int) -> tuple[list[tuple[str, EnvVar]], int]:
        """The first ``k`` (name, value) pairs in iteration order, and how many there are in
        all: for views taken in order (a script's launches), the cost of the changes since
        the last view and of ``k``, not of every variable."""
        d = self.env.dict_at(self.n)
        extra = self.extra or {}
        first = [(name, extra.get(name, var)) for name, var in islice(d.items(), k)]
        new = [(name, var) for name, var in extra.items() if name not in d]
        return (first + new)[:k], len(d) + len(new)

    def select(self, names: Iterable[str]) -> list[tuple[str, EnvVar]]:
        """The (name, value) pairs of ``names`` that are set, in the view's iteration order,
        without building the whole dict: a launch that looks for a hundred names among a
        script's hundred thousand variables costs the hundred."""
        found = [(self.place(name), name, self[name]) for name in names if name in self]
        found.sort(key=lambda t: t[0])
        return [(name, var) for _, name, var in found]


class ImageVars(Mapping[str, EnvVar]):
    """The ENV of an image a compose service builds, each variable set at ``at`` (the
    service's `build:`), made when it is asked for: the base of the service's environment
    (``ScriptEnv(ImageVars(…)).view(own)``).  A copy for each service was quadratic: 1,000
    services building one image of 60,000 ENV lines (a 200 KB compose file beside a 1 MiB
    Dockerfile) took 80 s.  ``values`` is shared by every service building the image and
    never changed."""

    __slots__ = ("values", "at")
    _order: tuple[dict[str, str | None], dict[str, int]] | None = None  # the last one made

    def __init__(self, values: dict[str, str | None], at: Any) -> None:
        self.values = values
        self.at = at

    def __getitem__(self, name: str) -> EnvVar:
        return EnvVar(name, self.values[name], self.at)

    def get(self, name: str, default: EnvVar | None = None) -> EnvVar | None:  # type: ignore[override]
        values = self.values
        return EnvVar(name, values[name], self.at) if name in values else default

    def __contains__(self, name: object) -> bool:
        return name in self.values

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def order(self) -> dict[str, int]:
        """Each name's place in the iteration order, made once for the services building
        one image (kept for the last image asked about)."""
        held = ImageVars._order
        if held is None or held[0] is not self.values:
            held = ImageVars._order = (self.values, {k: i for i, k in enumerate(self.values)})
        return held[1]


def with_var(env: Mapping[str, EnvVar], name: str, var: EnvVar) -> Mapping[str, EnvVar]:
    """``env`` with ``name`` set, ``env`` itself unchanged (a view stays a view)."""
    if isinstance(env, EnvView):
        return env.with_var(name, var)
    return {**env, name: var}


def frozen(env: Mapping[str, EnvVar]) -> Mapping[str, EnvVar]:
    """What a launch keeps: a view as it is (nothing changes it), a copy of anything else."""
    return env if isinstance(env, EnvView) else dict(env)


def env_items(env: Mapping[str, EnvVar], names: Mapping[str, object]) -> list[tuple[str, EnvVar]]:
    """The variables of ``env`` that ``names`` has, in ``env``'s order: the view's ``select``
    for a script's variables, a pass over a plain dict (a container's own) otherwise."""
    if isinstance(env, EnvView):
        return env.select(names)
    return [(k, v) for k, v in env.items() if k in names]
