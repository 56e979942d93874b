"""Progress bars for long work: on a terminal, how far it is and the time left; elsewhere nothing.

Every long command (the final evaluation after training, ``eval``, ``ladder``, ``exploit``, ``cpu-report``,
``fidelity``) draws its bar through here, so the rule is one: a bar goes to stderr only when stderr is a
terminal, and a pipe or a log file gets no carriage-return lines. A bar that is not shown is tqdm's disabled
bar, whose ``update``, ``set_description`` and ``close`` do nothing, so callers need no test of their own.

>>> bar = progress_bar(10, "games", enabled=False)
>>> bar.update(3); bar.close()
>>> list(progress_iter([1, 2], "replays", "replay"))  # under doctest stderr is no terminal: the items, no bar
[1, 2]
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterable, Iterator, TypeVar

from tqdm import tqdm

T = TypeVar("T")


def on_terminal() -> bool:
    """Whether stderr, where the bars go, is a terminal."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced by an object without isatty, or closed
        return False


def progress_bar(total: float, desc: str, unit: str = "game", enabled: bool = True, **kwargs) -> tqdm:
    """A bar counting to ``total`` with the time left (tqdm's ``elapsed<remaining``), shown where
    ``enabled`` and stderr is a terminal; it clears itself on ``close`` (the command's own output stays)."""
    return tqdm(total=total, desc=desc, unit=unit, disable=not (enabled and on_terminal()), leave=False,
                dynamic_ncols=True, file=sys.stderr, **kwargs)


def progress_iter(items: Iterable[T], desc: str, unit: str, enabled: bool = True) -> Iterator[T]:
    """``items`` one by one, counted by a :func:`progress_bar` (its total: ``len(items)`` where it has one)."""
    total = len(items) if hasattr(items, "__len__") else None  # type: ignore[arg-type]
    bar = progress_bar(total, desc, unit, enabled)  # type: ignore[arg-type]
    try:
        for item in items:
            yield item
            bar.update(1)
    finally:
        bar.close()


@contextmanager
def printing_beside(bar: tqdm) -> Iterator[None]:
    """Lines printed inside this block go above the bar, which is drawn again below them."""
    if bar.disable:
        yield
        return
    with tqdm.external_write_mode(file=sys.stderr):
        yield
