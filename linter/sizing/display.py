"""Rounding as Java's printf does it: it rounds the shortest decimal form of a double
half-up (2.125 → "2.13"), where Python's format rounds the binary value half-even ("2.12")."""

from __future__ import annotations

import math
from functools import lru_cache

# decimal is imported when a number is first printed (3 ms of start-up, and a clean file
# prints none).  Enough digits for any finite double (up to ~1.8e308) with its decimals:
# quantize fails beyond the default context's 28 digits (a 1e26 share of a split did)
_WIDE_PREC = 400


def fixed(value: float, digits: int) -> str:
    """``value`` with ``digits`` decimals, rounded like Java's ``%.Nf`` (NaN and infinities as
    Java prints them)."""
    value = float(value)
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    # keyed on the shortest decimal form, not the float: -0.0 == 0.0 but prints "-0.0"
    return _fixed(repr(value), digits)


@lru_cache(maxsize=4096)
def _fixed(shortest: str, digits: int) -> str:
    """The memory findings print the same few numbers on every launch of a file (the card, the
    weights): a Decimal quantize per number was a tenth of the per-launch budget."""
    from decimal import ROUND_HALF_UP, Context, Decimal

    quantum = Decimal(1).scaleb(-digits)
    return format(Decimal(shortest).quantize(quantum, rounding=ROUND_HALF_UP,
                                             context=Context(prec=_WIDE_PREC)), "f")


def percent(share: float, digits: int = 1) -> str:
    """A share as a percentage, like printf's ``%.1f%%`` (half-up)."""
    return fixed(100.0 * share, digits) + "%"


GIB = 1024 ** 3


def gb(value: float, digits: int = 1) -> str:
    """Bytes as decimal gigabytes (``35.3 GB``), as the memory findings print them."""
    return f"{fixed(value / 1e9, digits)} GB"


def gib(value: float) -> str:
    """Bytes as binary gibibytes with two decimals, as vLLM's start-up log prints them."""
    return f"{value / GIB:.2f} GiB"


def size(value: float) -> str:
    """MB below a gigabyte (adapters print as 83.9 MB), GB above."""
    return f"{fixed(value / 1e6, 1)} MB" if value < 1e9 else gb(value, 2)
