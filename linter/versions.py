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


def pip_pin_pattern(package: str) -> re.Pattern[str]:
    """`pip install PACKAGE==X` (also `pip3`, `uv pip`, `python -m pip`, extras such as
    `PACKAGE[all]==X`, quoted): group 1 is the release."""
    return re.compile(r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b[^\n;&|]*?"
                      rf"[\s'\"]{re.escape(package)}(?:\[[^\]]*\])?==\s*([0-9][0-9A-Za-z.+\-]*)")
