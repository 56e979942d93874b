"""The arena's named state: fields by name, one player's column replaced, per-environment selection."""

from __future__ import annotations

import torch

from melee_agent.arena import Arena
from melee_agent.arena import env_state as env_state_module
from melee_agent.arena.env_state import AGENT, CPU, EnvState, GameState, PlayerState, put, where, with_player
from tests.examples_kit import examples_failed


def test_module_examples_run():
    assert examples_failed(env_state_module) == 0


def test_put_replaces_one_players_column_and_leaves_the_input_alone():
    field = torch.arange(6, dtype=torch.float32).view(3, 2)
    out = put(field, CPU, torch.tensor([-1.0, -2.0, -3.0]))
    assert out[:, CPU].tolist() == [-1.0, -2.0, -3.0] and out[:, AGENT].tolist() == [0.0, 2.0, 4.0]
    assert field[:, CPU].tolist() == [1.0, 3.0, 5.0]  # a new tensor: nothing updated in place
    assert put(field, AGENT, 7.0)[:, AGENT].tolist() == [7.0, 7.0, 7.0]


def test_where_selects_whole_environments_in_every_field():
    a = EnvState.zeros(3, torch.device("cpu"))
    b = EnvState(PlayerState(*(t + 1 for t in a.players)), GameState(*(t + 2 for t in a.game)), a.inputs)
    mixed = where(torch.tensor([True, False, True]), b, a)
    for t in mixed.players:
        assert t[:, 0].tolist() == [1.0, 0.0, 1.0] and t[:, 1].tolist() == [1.0, 0.0, 1.0]
    for t in mixed.game:
        assert t.tolist() == [2.0, 0.0, 2.0]


def test_the_arena_holds_its_state_by_name_and_a_frame_makes_a_new_one():
    env = Arena(4, cpu_level=9, seed=0)
    env.reset()
    before = env.state
    assert before.players.stock[:, AGENT].tolist() == [4.0] * 4 and before.game.episode.tolist() == [0.0] * 4
    env.state = with_player(env.state, AGENT, percent=torch.tensor([0.0, 10.0, 20.0, 30.0]))
    env.step(torch.zeros(4, dtype=torch.long))
    assert env.state is not before and env.state.game.episode_frame.tolist() == [1.0] * 4
    assert env.state.players.percent[:, AGENT].tolist() == [0.0, 10.0, 20.0, 30.0]
    assert before.players.percent[:, AGENT].tolist() == [0.0] * 4  # the old state is untouched
