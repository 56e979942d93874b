"""A training run's budget and when its periodic checks come: wall minutes (the default) or counted chunks.

:class:`WallBudget` is ``train.minutes`` of wall time with a check every ``train.eval_every_minutes``; a check
that would end past the budget is skipped (the last model is checked when training ends anyway).
:class:`CountedBudget` is ``train.chunks`` chunks of the fused loop with a check every ``train.eval_every_chunks``:
a count of work, so two runs from one seed train the same steps and check the same models (docs/training.md
"Reproducing a run"); a check due while the last still plays waits for it rather than moving to a later chunk.
:class:`ProgressLine` is the progress bar either draws.

Both read the same way from :meth:`melee_agent.run.training.TrainingRun._train`::

    while not budget.over():
        budget.work(backend, pending)        # train until the next look (at most 2 s, or a slice of chunks)
        if budget.due(last_check_seconds, pending): ask for a check; budget.checked()
"""

from __future__ import annotations

import time
from typing import Any, Protocol

#: The longest slice of a counted budget between two looks (the progress line moves, checks finish).
SLICE_CHUNKS = 50


class Trains(Protocol):
    """What a budget drives: the backend's ``work`` (seconds of wall time, or exactly ``chunks``)."""

    def work(self, seconds: float, chunks: int | None = None) -> None: ...


def check_due(now: float, next_check: float, end: float, last_check_seconds: float) -> bool:
    """Whether a periodic check starts at ``now`` (monotonic seconds): it is due at ``next_check``, and one
    as long as the last (at least 30 s) must end before the budget's ``end``, since the learner keeps
    training while a check plays.

    Example::

        >>> check_due(300.0, 300.0, 3_600.0, 30.0), check_due(3_400.0, 3_300.0, 3_600.0, 420.0)
        (True, False)
    """
    return now >= next_check and now + max(30.0, last_check_seconds) < end


class WallBudget:
    """``minutes`` of wall time from now; a check every ``every_minutes`` (not while one is still playing)."""

    unit = "s"

    def __init__(self, minutes: float, every_minutes: float):
        self.t0 = time.monotonic()
        self.end = self.t0 + minutes * 60
        self.every = every_minutes * 60
        self.next_check = self.t0 + self.every
        self.total = int(minutes * 60)
        self._told_skip = False

    def over(self) -> bool:
        return time.monotonic() >= self.end

    def work(self, backend: Trains, pending: bool) -> None:
        """Train until the next look: at most 2 s, and not past a due check (a fused backend would train on)."""
        now = time.monotonic()
        wait = min(2.0, max(0.0, self.end - now))
        if self.next_check > now and not pending:
            wait = min(wait, self.next_check - now)
        backend.work(wait)

    def due(self, last_check_seconds: float, pending: bool) -> bool:
        return not pending and check_due(time.monotonic(), self.next_check, self.end, last_check_seconds)

    def checked(self) -> None:
        self.next_check = time.monotonic() + self.every

    def skip_note(self, last_check_seconds: float, pending: bool) -> str | None:
        """Once: the word that no more periodic checks come (otherwise a run whose checks slowed down, on a shared
        GPU, just falls silent). A check due in the last 30 s is skipped whatever it costs; that needs no word."""
        if self._told_skip or pending or time.monotonic() < self.next_check or last_check_seconds <= 30:
            return None
        self._told_skip = True
        return (f"no more periodic checks: the last took {last_check_seconds:.0f} s and the next would end past the "
                "training time; the last model is checked when training ends")

    def minutes(self) -> float:
        """Training minutes so far (where a check is recorded)."""
        return (time.monotonic() - self.t0) / 60

    def position(self) -> int:
        return int(min(time.monotonic() - self.t0, self.total))


class CountedBudget:
    """``chunks`` chunks of the fused loop (a league's rounds); a check every ``every`` chunks (0: none between the
    untrained network's and the last model's)."""

    unit = "chunk"

    def __init__(self, chunks: int, every: int):
        self.t0 = time.monotonic()
        self.total, self.every = chunks, every
        self.done = 0
        self.next_check = every if every > 0 else chunks

    def over(self) -> bool:
        return self.done >= self.total

    def work(self, backend: Trains, pending: bool) -> None:
        """Exactly the chunks up to the next check (or the end), at most :data:`SLICE_CHUNKS` of them."""
        n = min(min(self.next_check, self.total) - self.done, SLICE_CHUNKS)
        backend.work(0.0, chunks=n)
        self.done += n

    def due(self, last_check_seconds: float, pending: bool) -> bool:
        """At every multiple of ``every`` before the end, whatever is still playing (the asker waits for it)."""
        return self.done >= self.next_check and self.done < self.total

    def checked(self) -> None:
        self.next_check += self.every

    def skip_note(self, last_check_seconds: float, pending: bool) -> str | None:
        return None  # no check is ever skipped

    def minutes(self) -> float:
        return (time.monotonic() - self.t0) / 60

    def position(self) -> int:
        return self.done


class ProgressLine:
    """The training period's progress bar (tqdm), or nothing when ``on`` is false."""

    def __init__(self, on: bool, budget: WallBudget | CountedBudget):
        self.budget = budget
        self.bar: Any = None
        if on:
            from tqdm import tqdm  # noqa: PLC0415

            self.bar = tqdm(total=budget.total, unit=budget.unit, desc="train", dynamic_ncols=True,
                            bar_format="{desc} {bar} {elapsed}<{remaining} {postfix}")

    def __enter__(self) -> ProgressLine:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()

    def show(self, progress: tuple[int, int, int], last_check: str) -> None:
        if self.bar is None:
            return
        steps, rows, version = progress
        self.bar.n = self.budget.position()
        self.bar.set_postfix_str(f"steps {steps:,}  rows {rows:,}  model v{version}  eval {last_check}", refresh=True)
