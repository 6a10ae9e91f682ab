"""Rounding as the lesson prints: Java's printf rounds the shortest decimal form of a double
half-up (2.125 → "2.13"), where Python's format rounds the binary value half-even ("2.12")."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal


def fixed(value: float, digits: int) -> str:
    """``value`` with ``digits`` decimals, rounded like Java's ``%.Nf``."""
    quantum = Decimal(1).scaleb(-digits)
    return format(Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_HALF_UP), "f")


def percent(share: float, digits: int = 1) -> str:
    """A share as a percentage, like the lesson's ``%.1f%%``."""
    return fixed(100.0 * share, digits) + "%"
