"""A pool of model opponents in one arena (melee_agent.league.pool_opponents), each game's result by who played it."""

from __future__ import annotations

import pytest
import torch

from melee_agent.arena import Arena
from melee_agent.league.pool_opponents import PoolOpponents
from melee_agent.league.results_env import ResultsEnv


def constant(action: int):
    return lambda obs: torch.full((obs.shape[0],), action, dtype=torch.long)


def ditto(n: int, clock: int, seed: int = 0) -> tuple[Arena, PoolOpponents]:
    env = Arena(n, game="fight", characters=("fox", "fox"), max_frames=clock, seed=seed)
    pool = PoolOpponents(n, seed=seed)
    pool.set_member("a", constant(1))
    pool.set_member("b", constant(2))
    pool.set_member("c", constant(3))
    return env, pool


def test_draws_follow_the_weights_and_a_weight_of_zero_is_never_drawn():
    env, pool = ditto(400, 600)
    pool.set_weights({"a": 1.0, "b": 3.0})  # c: 0
    env.set_opponents(pool)
    env.reset()
    env.step(torch.zeros(400, dtype=torch.long))
    names = pool.names(torch.ones(400, dtype=torch.bool))
    n_a, n_b = names.count("a"), names.count("b")
    assert names.count("c") == 0 and n_a + n_b == 400
    assert 0.15 < n_a / 400 < 0.35  # 1/4 expected; 400 draws put 0.15-0.35 more than 5 sd apart
    with pytest.raises(ValueError, match="no such members"):
        pool.set_weights({"z": 1.0})


@pytest.mark.slow
def test_one_member_plays_a_game_from_start_to_end_and_its_result_is_counted_under_it():
    env, pool = ditto(16, 30, seed=3)
    pool.set_weights({"a": 1.0, "b": 1.0, "c": 1.0})
    env.set_opponents(pool)
    wrapped = ResultsEnv(env, key=lambda info: pool.assign)
    wrapped.reset()
    before, was_done = None, torch.zeros(16, dtype=torch.bool)
    ended = torch.zeros(3, dtype=torch.long)
    for _ in range(60):
        _, _, done, info = wrapped.step(torch.zeros(16, dtype=torch.long))
        if before is not None:  # who plays changes only where a game ended at the step before
            assert torch.equal(pool.assign[~was_done], before[~was_done])
        games = done & info.game_over
        # The member named for a game that just ended is the one whose macro was in flight in it.
        assert torch.equal(pool.action[games], pool.assign[games] + 1)
        ended += torch.bincount(pool.assign[games], minlength=3)
        before, was_done = pool.assign.clone(), done.clone()
    results = wrapped.take()
    assert int(ended.sum()) >= 16 and sorted(results) == [k for k in range(3) if ended[k] > 0]
    assert all(sum(results[k]) == int(ended[k]) for k in results)
    assert wrapped.take() == {}  # handed over once
