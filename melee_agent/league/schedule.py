"""When a frozen snapshot of the main agent joins its pool, and which snapshots stay in the draw.

A snapshot is taken every ``every`` train steps of the main (at steps ``every``, ``2 every``, ...; the untrained
network is not one): fictitious self-play's past selves (AlphaStar adds a copy of each main agent to the league
every 2e9 steps). At most ``keep`` stay drawable, the oldest leaving first: each drawn snapshot plays its own
forward passes, and the pool arena's games are shared among the drawable members. A snapshot that leaves keeps its
rating and record in the report.

Example::

    >>> s = SnapshotSchedule(every=100, keep=2)
    >>> [s.due(step) for step in (0, 99, 100)], s.take(100, "snap-100"), s.take(200, "snap-200")
    ([False, False, True], [], [])
    >>> s.due(250), s.take(300, "snap-300")
    (False, ['snap-100'])
"""

from __future__ import annotations


class SnapshotSchedule:
    """Snapshots of the main every ``every`` train steps, ``keep`` of them drawable (see the module's docstring)."""

    def __init__(self, every: int, keep: int):
        if every < 1 or keep < 1:
            raise ValueError(f"a snapshot every {every} steps keeping {keep}: both must be at least 1")
        self.every, self.keep = every, keep
        self.next_step = every
        self.active: list[str] = []  # the drawable snapshots, oldest first
        self.taken: list[tuple[int, str]] = []  # every snapshot taken: (train step, name)

    def due(self, train_steps: int) -> bool:
        """Whether the main at ``train_steps`` is owed a snapshot."""
        return train_steps >= self.next_step

    def take(self, train_steps: int, name: str) -> list[str]:
        """Record the snapshot ``name`` taken at ``train_steps``; the snapshots that leave the draw."""
        self.taken.append((train_steps, name))
        self.active.append(name)
        # The next one is the next multiple of ``every`` after this step: a burst of train steps between two looks
        # (a long chunk) owes one snapshot, not several of the same network.
        self.next_step = (train_steps // self.every + 1) * self.every
        leaving = self.active[:-self.keep]
        self.active = self.active[-self.keep:]
        return leaving


__all__ = ["SnapshotSchedule"]
