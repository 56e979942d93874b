"""The snapshot schedule (melee_agent.league.schedule): when the main is copied into its pool, and who stays."""

from __future__ import annotations

import pytest

from melee_agent.league.schedule import SnapshotSchedule


def test_a_snapshot_every_n_steps_the_oldest_leaving_past_keep():
    s = SnapshotSchedule(every=1_000, keep=3)
    taken, left = [], []
    for step in range(0, 6_001, 250):  # the main's train steps as the loop sees them
        if s.due(step):
            left += s.take(step, f"snap-{step}")
            taken.append(step)
    assert taken == [1_000, 2_000, 3_000, 4_000, 5_000, 6_000]
    assert s.active == ["snap-4000", "snap-5000", "snap-6000"]
    assert left == ["snap-1000", "snap-2000", "snap-3000"]
    assert [n for _, n in s.taken] == [f"snap-{k}" for k in taken]


def test_a_burst_of_steps_owes_one_snapshot_not_several():
    s = SnapshotSchedule(every=100, keep=10)
    assert s.due(350)
    s.take(350, "snap-350")
    assert not s.due(399) and s.due(400)  # the next multiple of 100, not 450 and not 200, 300 again


def test_bad_schedules_are_refused():
    with pytest.raises(ValueError, match="at least 1"):
        SnapshotSchedule(every=0, keep=1)
    with pytest.raises(ValueError, match="at least 1"):
        SnapshotSchedule(every=10, keep=0)
