"""A finished game's reset: the observation the next decision sees is that of the new episode's state."""

from __future__ import annotations

import pytest
import torch
from torch.utils import _pytree as pytree

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


def test_distinct_leaves_copies_exactly_the_tensors_that_share_memory():
    env = Arena(8, cpu_level=9, seed=0, game="dodge", cpu="melee")
    env.reset()
    s = env.state
    x = s.players.position_x
    shared_within = s._replace(players=s.players._replace(position_y=x.view(-1).view(8, 2)))  # a view of another field
    outside = torch.zeros(3)
    shared_outside = s._replace(game=s.game._replace(tick=outside[:1].expand(8)))  # shares memory with a report
    own = storage.distinct_leaves(s, (outside, None), [torch.ones(2)])
    assert all(a is b for a, b in zip(pytree.tree_leaves(own), pytree.tree_leaves(s)))  # nothing shared: kept
    out = storage.distinct_leaves(shared_within, (outside,))
    assert out.players.position_x is x and out.players.position_y is not x  # the later of the two is copied
    assert torch.equal(out.players.position_y, x) and out.players.position_y.untyped_storage().data_ptr() != (
        x.untyped_storage().data_ptr())
    out = storage.distinct_leaves(shared_outside, {"report": None}, (outside,))
    assert out.game.tick.untyped_storage().data_ptr() != outside.untyped_storage().data_ptr()
    assert torch.equal(out.game.tick, shared_outside.game.tick)
    assert type(out) is type(s) and type(out.game) is type(s.game)


@pytest.mark.parametrize("done,k,rows,left", [
    ([0, 0, 0, 0], 2, None, [0, 0, 0, 0]),  # nothing ended: any rows, written back unchanged
    ([0, 1, 0, 1], 3, [1, 3, 1], [0, 0, 0, 0]),  # fewer than k: padded with the first
    ([1, 1, 0, 1], 2, [0, 1], [0, 0, 0, 1]),  # more than k: the rest left for the whole-batch reset
])
def test_first_rows_finds_the_first_k_ended_games_and_leaves_the_rest(done, k, rows, left):
    got_rows, got_left = storage.first_rows(torch.tensor(done, dtype=torch.bool), k)
    assert got_rows.shape == (k,) and ((got_rows >= 0) & (got_rows < len(done))).all()
    if rows is not None:
        assert got_rows.tolist() == rows
    assert got_left.tolist() == [bool(x) for x in left]


def test_reset_first_rows_matches_the_whole_batch_reset_where_it_reaches():
    """The first k ended games get the whole-batch reset's fresh episodes and next observations; the games beyond
    them, and those still playing, keep their state."""
    env = Arena(32, cpu_level=[1, 9], seed=1, game="dodge", cpu="melee")
    env.reset()
    gen = torch.Generator().manual_seed(0)
    for _ in range(3):
        env.step_async(torch.randint(0, env.num_actions, (32,), generator=gen))
    c = env._consts
    end = storage.close_decision(env.state, torch.ones(32, dtype=torch.bool), torch.full((32,), 2.0), torch.zeros(32),
                                 env.T, env.num_actions)
    done = torch.arange(32) % 4 == 1  # 8 ended: 5 reset here, 3 left
    whole = storage.reset_finished(end, done, c.seed, c.mix, c.neutral, env.T, env.num_actions, c.stages)
    out, left = storage.reset_first_rows(end, done, 5, c.seed, c.mix, c.neutral, env.T, env.num_actions, c.stages)
    reached = done & ~left
    assert int(reached.sum()) == 5 and int(left.sum()) == 3
    for a, b, before in zip(pytree.tree_leaves(out.state), pytree.tree_leaves(whole.state), pytree.tree_leaves(end.state)):
        if isinstance(a, torch.Tensor):
            assert torch.equal(a[reached], b[reached])
            assert torch.equal(a[~reached], before[~reached])
    assert torch.equal(out.next[reached], whole.next[reached]) and torch.equal(out.next[~reached], end.final[~reached])
