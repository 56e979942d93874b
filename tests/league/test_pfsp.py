"""PFSP's draw (melee_agent.league.pfsp) on known win rates, and the pool that applies it."""

from __future__ import annotations

import pytest

from melee_agent.league.payoff import Payoff
from melee_agent.league.pfsp import f_hard, f_var, pfsp_weights
from melee_agent.league.pool import Pool, PoolMember


def test_f_hard_weights_the_members_the_main_loses_to():
    """AlphaStar's f_hard with p = 2 on win rates 0, 1/4, 1/2, 1: raw weights 1, 9/16, 1/4, 0 (sum 29/16)."""
    w = pfsp_weights([0.0, 0.25, 0.5, 1.0])
    assert w == pytest.approx([16 / 29, 9 / 29, 4 / 29, 0.0])
    assert pfsp_weights([0.0, 0.5], p=1.0) == pytest.approx([2 / 3, 1 / 3])  # p = 1: AlphaStar's "linear"
    assert f_hard(0.75, 3.0) == pytest.approx(1 / 64) and f_var(0.5) == 0.25


def test_a_main_that_beats_everyone_draws_evenly_and_bad_rates_are_refused():
    assert pfsp_weights([1.0, 1.0, 1.0, 1.0]) == [0.25] * 4
    assert pfsp_weights([0.5, 0.5], "var") == [0.5, 0.5]
    assert pfsp_weights([]) == []
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        pfsp_weights([0.5, 1.5])
    with pytest.raises(ValueError, match="weighting"):
        pfsp_weights([0.5], "soft")
    with pytest.raises(ValueError, match="positive"):
        pfsp_weights([0.5], p=0.0)


def test_the_pool_draws_by_the_mains_recent_results_and_not_the_retired():
    pool, payoff = Pool(power=2.0), Payoff(decay=1.0)
    for name, kind, level in (("cpu1", "cpu", 1), ("cpu9", "cpu", 9), ("snap-10", "snapshot", None)):
        pool.add(PoolMember(name, kind, level=level, policy=None if level else (lambda obs: obs)))
        payoff.add(name)
    payoff.record("cpu1", wins=4)  # always beaten: never drawn
    payoff.record("cpu9", wins=1, losses=3)  # the main wins 25%: (3/4)^2 = 9/16
    # snap-10 unplayed: 0.5 (AlphaStar's prior for a pair that has not met): (1/2)^2 = 4/16
    assert pool.weights(payoff) == pytest.approx({"cpu1": 0.0, "cpu9": 9 / 13, "snap-10": 4 / 13})
    pool.retire("snap-10")
    assert pool.weights(payoff) == pytest.approx({"cpu1": 0.0, "cpu9": 1.0})
    assert [m.name for m in pool.drawable("model")] == [] and len(pool.members) == 3
    with pytest.raises(ValueError, match="level"):
        PoolMember("x", "cpu")
    with pytest.raises(ValueError, match="kind"):
        PoolMember("x", "human")


def test_the_cpu_arena_draws_its_levels_by_the_weights_it_is_given():
    """Arena.set_level_weights (the league's PFSP on the CPU levels): from the next reset on, a level of weight 0 is
    never drawn."""
    from melee_agent.arena import Arena

    env = Arena(64, cpu_level=[1, 9], seed=0)
    env.set_level_weights([0.0, 1.0])
    env.reset()
    assert env.cpu_levels.tolist() == [9] * 64
    env.set_level_weights([1.0, 0.0])
    env.reset()
    assert env.cpu_levels.tolist() == [1] * 64
    with pytest.raises(ValueError, match="weights"):
        env.set_level_weights([1.0])
