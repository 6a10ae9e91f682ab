"""Release strings: one parse for every place that orders releases (vLLM catalogs, image
entrypoints, rules keyed on the release a launch pins)."""

from __future__ import annotations

import re
from functools import lru_cache

_RELEASE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.?(rc|dev|post)(\d*))?")


@lru_cache(maxsize=1024)  # a few releases, asked about by every rule of every launch
def version_key(version: str) -> tuple[int, ...]:
    """Sort key of a release string: ``0.8.5.post1`` → (0, 8, 5, 1); a pre-release sorts before
    its release (``0.9.0rc1`` → (0, 9, 0, -1)); () when it names no release."""
    m = _RELEASE.match(version)
    if m is None:
        return ()
    major, minor, patch, fourth, kind, number = m.groups()
    extra = int(fourth or 0)
    if kind == "post":
        extra = int(number or 0)
    elif kind in ("rc", "dev"):
        extra = -1
    return (int(major), int(minor), int(patch or 0), extra)


class PipPin:
    """`pip install PACKAGE==X` (also `pip3`, `uv pip`, `python -m pip`, extras such as
    `PACKAGE[all]==X`, quoted): ``search(text)`` is the match of group 1, the release, that
    ``pattern`` finds, in linear time (``pattern`` read from every `pip install` to its line's
    end, and from every `PACKAGE[` to the next `]`, again: quadratic, 21 s for 190 KB of
    `pip install`).

    ``pattern`` is INSTALL ``[^\\n;&|]*?`` ``[\\s'"]PACKAGE(?:\\[[^\\]]*\\])?==\\s*(RELEASE)``: after the
    install words, the first place up to the line's end (its `\\n`, `;`, `&` or `|`) where
    the package is named, then optional extras to the first `]` (a shorter one never ends in
    `]`), then `==`.  When an install has none, a later install whose words end before that
    line end reads a part of the same places and has none either."""

    def __init__(self, package: str) -> None:
        install = r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b"
        self.pattern = re.compile(
            install + r"[^\n;&|]*?"
            rf"[\s'\"]{re.escape(package)}(?:\[[^\]]*\])?==\s*([0-9][0-9A-Za-z.+\-]*)")
        self._install = re.compile(install)
        self._named = re.compile(rf"[\s'\"]{re.escape(package)}")
        self._pin = re.compile(r"==\s*([0-9][0-9A-Za-z.+\-]*)")
        self._stop = re.compile(r"[\n;&|]")

    def search(self, text: str) -> re.Match[str] | None:
        pos, dead = 0, -1
        close = (len(text) + 1, -1)  # (from, next `]` at or after it; -1: none)
        while (inst := self._install.search(text, pos)) is not None:
            pos = inst.start() + 1
            if inst.end() <= dead:
                continue
            stop = self._stop.search(text, inst.end())
            dead = len(text) if stop is None else stop.start()
            at = inst.end()
            while (named := self._named.search(text, at)) is not None and named.start() <= dead:
                at = named.start() + 1
                u = named.end()
                if text.startswith("[", u):
                    if not close[0] <= u + 1 <= (close[1] if close[1] >= 0 else len(text)):
                        close = (u + 1, text.find("]", u + 1))
                    if close[1] < 0:
                        continue
                    u = close[1] + 1
                pin = self._pin.match(text, u)
                if pin is not None:
                    return pin
        return None


def pip_pin_pattern(package: str) -> PipPin:
    """`pip install PACKAGE==X`: ``.search(text)`` gives a match whose group 1 is the release
    (PipPin)."""
    return PipPin(package)
