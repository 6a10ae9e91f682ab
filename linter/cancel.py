"""Stopping a run whose findings are no longer wanted (the language server's run of a text the
editor has changed since): `runner.lint`'s ``cancelled`` check, asked once the files are read,
before each launch is analysed, and while a file is read, every `EVERY` steps of reading
(`step`: a shell word lexed, a YAML node or document composed).  Reading is most of a run of a
file of few launches (200 KB of one-word commands: 0.8 s of lexing, one launch), so a check
asked only between launches left an outdated run to read on while the newer text waited."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# steps of reading between two questions: a step costs a few microseconds (a shell word), so a
# run of an outdated text goes on for a few milliseconds at most, and 250,000 words (the most a
# file is lexed, bounds.MAX_SHELL_WORDS) ask a few hundred times
EVERY = 1024
DOCUMENT = 64  # steps a YAML document counts for (composed in C, its nodes are not counted)


class LintCancelled(BaseException):
    """Raised when the run's ``cancelled`` check answers True.  Not an Exception (as
    asyncio.CancelledError is not): the readers turn every Exception that malformed input
    raises into a finding (runner.extract_file: MG000; the YAML composer's: MG002), and a
    stop asked for is neither."""


class _Asker:
    __slots__ = ("check", "left")

    def __init__(self, check: Callable[[], bool]) -> None:
        self.check = check
        self.left = EVERY


_ASKER: ContextVar[_Asker | None] = ContextVar("mgpu_lint_cancelled", default=None)


@contextmanager
def asking(check: Callable[[], bool] | None) -> Iterator[None]:
    """`step` asks ``check`` inside this block (nothing when it is None).  A context variable:
    the language server's worker thread has its own."""
    if check is None:
        yield
        return
    token = _ASKER.set(_Asker(check))
    try:
        yield
    finally:
        _ASKER.reset(token)


def step(steps: int = 1) -> None:
    """Count ``steps`` of reading; every `EVERY` of them, ask the run's check (`asking`) and
    raise LintCancelled when it answers True."""
    asker = _ASKER.get()
    if asker is None:
        return
    asker.left -= steps
    if asker.left <= 0:
        asker.left = EVERY
        if asker.check():
            raise LintCancelled
