"""Before the first train step, actors play every action at random (DQN's replay fill, SB3's ``learning_starts``):
an untrained network's greedy action is one fixed macro whatever it sees, and where that was a 32-frame roll a
15-minute run filled its replay one roll at a time and made no train step for 10 minutes."""

from __future__ import annotations

import pytest
import torch

from melee_agent.arena import Arena
from melee_agent.rl.model import DuelingDQN
from melee_agent.rl.rows import ACTION
from melee_agent.workers.play import SegmentPlayer


def _always(action: int) -> DuelingDQN:
    """A network whose greedy action is ``action`` in every state (what an untrained one often is)."""
    model = DuelingDQN(num_actions=5)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.advantage[-1].bias[action] = 1.0
    return model


@pytest.mark.slow
def test_uniform_play_spreads_over_every_action_and_greedy_play_keeps_the_networks():
    model = _always(2)
    assert model(torch.rand(4, 27)).argmax(1).tolist() == [2, 2, 2, 2]
    greedy = SegmentPlayer(Arena(16, cpu_level=9, seed=0), epsilon=0.0, n_step=3, gamma=0.99, seed=0)
    rows, _ = greedy.play(model, frames_per_env=240)
    assert set(rows[:, ACTION].long().tolist()) == {2}
    uniform = SegmentPlayer(Arena(16, cpu_level=9, seed=0), epsilon=0.0, n_step=3, gamma=0.99, seed=0)
    rows, _ = uniform.play(model, frames_per_env=240, uniform=True)
    counts = torch.bincount(rows[:, ACTION].long(), minlength=5)
    assert bool((counts > 0).all()), counts.tolist()
