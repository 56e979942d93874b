"""The arena plays ``untouchable-paper``'s post-shine scripts: after a shine, index k presses the paper's macro."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from melee_agent.arena import Arena
from melee_agent.envs.actions import get_action_set

PAPER = get_action_set("untouchable-paper")
SHINE = PAPER.index("shine")


def _pressed(env: Arena, n: int) -> np.ndarray:
    """The last ``n`` controller frames the agent pressed (``[n, C]``): with ``n`` frames of input delay the arena
    holds exactly them, still on their way to the game."""
    assert env.delay_frames == n
    return env.state.inputs[0].numpy()


def _arena(delay: int, action_set: str = "untouchable-paper") -> Arena:
    env = Arena(1, cpu_level=1, seed=0, action_set=action_set, delay_frames=delay)
    env.reset()
    return env


@pytest.mark.parametrize("k", range(PAPER.num_actions))
@pytest.mark.parametrize("stepping", ["step", "step_async"])
def test_after_a_shine_index_k_plays_the_post_shine_script(k, stepping):
    macro = PAPER.macro_index(k, SHINE)
    n = int(PAPER.lengths[macro])
    env = _arena(n)
    step = getattr(env, stepping)
    step(torch.tensor([SHINE]))
    assert float(env.state.game.previous_action[0]) == SHINE  # the state's last float: 1.0, the last was a shine
    _, _, done, info = step(torch.tensor([k]))
    assert not bool(done[0]) and int(info.frames[0]) == n  # the whole post-shine macro, however long
    np.testing.assert_array_equal(_pressed(env, n), PAPER.table[macro, :n])
    if k != 0:  # every index but noop plays something else than it does after any other decision
        assert not np.array_equal(PAPER.table[macro, :n], PAPER.table[k, :n])


@pytest.mark.parametrize("k", range(PAPER.num_actions))
def test_after_anything_but_a_shine_index_k_plays_its_own_macro(k):
    n = int(PAPER.lengths[k])
    env = _arena(n)
    env.step(torch.tensor([1]))  # a spot dodge
    _, _, _, info = env.step(torch.tensor([k]))
    assert int(info.frames[0]) == n
    np.testing.assert_array_equal(_pressed(env, n), PAPER.table[k, :n])


def test_shines_chain_into_multishines_and_the_plain_set_never_remaps():
    multi = PAPER.macro_index(SHINE, SHINE)
    n = int(PAPER.lengths[multi])
    env = _arena(n)
    for _ in range(3):  # shine, multishine, multishine: each decision's previous one was index 4
        _, _, _, info = env.step(torch.tensor([SHINE]))
    assert int(info.frames[0]) == n
    np.testing.assert_array_equal(_pressed(env, n), PAPER.table[multi, :n])
    plain = _arena(6, "untouchable")
    for _ in range(2):
        _, _, _, info = plain.step(torch.tensor([SHINE]))
    assert int(info.frames[0]) == 6
    np.testing.assert_array_equal(_pressed(plain, 6), PAPER.table[SHINE, :6])


def test_a_new_episode_starts_from_no_shine():
    env = _arena(1)
    env.step(torch.tensor([SHINE]))
    env.reset()
    _, _, _, info = env.step(torch.tensor([1]))
    assert int(info.frames[0]) == int(PAPER.lengths[1])  # the spot dodge (22 frames), not the wavedash (13)
