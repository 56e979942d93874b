"""A finished game's reset: the observation the next decision sees is that of the new episode's state."""

from __future__ import annotations

import pytest
import torch

from melee_agent.arena import Arena
from melee_agent.arena import episodes as storage


@pytest.mark.parametrize("game", ["dodge", "fight"])
def test_the_next_observation_of_a_reset_game_is_its_new_states(game):
    env = Arena(64, cpu_level=[1, 5, 9], seed=2, game=game, cpu="melee")
    env.reset()
    gen = torch.Generator().manual_seed(0)
    for _ in range(3):  # players away from where a game starts them, and previous actions other than 0
        env.step_async(torch.randint(0, env.num_actions, (64,), generator=gen))
    c = env._consts
    ready = torch.ones(64, dtype=torch.bool)
    end = storage.close_decision(env.state, ready, torch.full((64,), 2.0), torch.zeros(64), env.T, env.num_actions)
    done = torch.arange(64) % 3 == 0
    out = storage.reset_finished(end, done, c.seed, c.mix, c.neutral, env.T, env.num_actions)
    new = storage.observe(out.state.players, out.state.game.previous_action, env.T, env.num_actions)
    assert not torch.equal(new[done], end.final[done])  # the reset moved them
    assert torch.equal(out.next[done], new[done])
    assert torch.equal(out.next[~done], end.final[~done])  # the others go on from where they were
