"""Values derived from an object that does not change once made (a configuration's table), kept
by the object's identity so that a run derives each once, however many files or launches ask.

The object is kept alive beside its value, so its id cannot be reused by another object while the
entry exists; the oldest entry goes when the memo is full, so a long language-server session does
not grow with every configuration it reloads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class ByIdentity(Generic[T]):
    """``derive(obj)``, computed once per object (by ``is``, not by equality)."""

    def __init__(self, derive: Callable[[Any], T], entries: int = 64) -> None:
        self._derive = derive
        self._entries = entries
        self._kept: dict[int, tuple[Any, T]] = {}
        self._lock = threading.Lock()  # the language server lints on worker threads

    def __call__(self, obj: Any) -> T:
        kept = self._kept.get(id(obj))
        if kept is not None and kept[0] is obj:
            return kept[1]
        value = self._derive(obj)
        with self._lock:
            if len(self._kept) >= self._entries:
                self._kept.pop(next(iter(self._kept)))
            self._kept[id(obj)] = (obj, value)
        return value
