"""n-step rows: returns, discounts and bootstrap states against a direct per-row computation."""

from __future__ import annotations

import pytest
import torch

from melee_agent.rl.rows import ACTION, DISCOUNT, NEXT_OBS, OBS, REWARD
from melee_agent.workers.nstep import nstep_rows
from melee_agent.workers.play import SegmentPlayer, ape_x_epsilon


def _reference(obs, action, reward, next_obs, done, terminal, n, gamma):
    T, B = action.shape
    out = []
    for t in range(T):
        for b in range(B):
            g, disc, last = 0.0, 1.0, t
            for k in range(n):
                if t + k >= T:
                    break
                g += disc * float(reward[t + k, b])
                disc *= gamma
                last = t + k
                if done[t + k, b]:
                    break
            d = 0.0 if terminal[last, b] else disc
            out.append((t, b, g, d, last))
    return out


@pytest.mark.parametrize("n", [1, 3, 5])
def test_nstep_rows_match_a_direct_computation(n):
    g = torch.Generator().manual_seed(n)
    T, B, gamma = 40, 6, 0.9
    obs = torch.rand(T, B, 27, generator=g)
    next_obs = torch.rand(T, B, 27, generator=g)
    action = torch.randint(0, 5, (T, B), generator=g)
    reward = torch.rand(T, B, generator=g)
    done = torch.rand(T, B, generator=g) < 0.15
    terminal = done & (torch.rand(T, B, generator=g) < 0.6)  # the rest are time-limit cuts
    rows = nstep_rows(obs, action, reward, next_obs, done, terminal, n, gamma).view(T, B, -1)
    for t, b, ret, disc, last in _reference(obs, action, reward, next_obs, done, terminal, n, gamma):
        row = rows[t, b]
        assert torch.equal(row[OBS], obs[t, b])
        assert row[ACTION].item() == action[t, b].item()
        assert row[REWARD].item() == pytest.approx(ret, rel=1e-5)
        assert row[DISCOUNT].item() == pytest.approx(disc, rel=1e-6)
        assert torch.equal(row[NEXT_OBS], next_obs[last, b])


def test_ape_x_epsilons_span_the_fleet():
    eps = [ape_x_epsilon(i, 8) for i in range(8)]
    assert eps[0] == pytest.approx(0.4) and eps[-1] == pytest.approx(0.4 ** 8)
    assert all(a > b for a, b in zip(eps, eps[1:]))
    assert ape_x_epsilon(0, 1) == 0.4
    with pytest.raises(ValueError, match="worker index"):
        ape_x_epsilon(3, 3)


def test_a_segment_on_the_arena_gives_consistent_rows_and_stats():
    from melee_agent.arena import Arena
    from melee_agent.rl.model import DuelingDQN

    env = Arena(8, cpu_level=9, seed=0)
    player = SegmentPlayer(env, epsilon=1.0, n_step=3, gamma=0.99, seed=0)
    rows, stats = player.play(DuelingDQN(num_actions=5), frames_per_env=300)
    assert rows.shape == (stats.steps, 57)  # one row per decision
    assert stats.frames >= 300 * 8 and stats.episodes > 0  # random play is hit within seconds at level 9
    assert stats.untouched == 0 and stats.hits >= stats.episodes
    d = rows[:, DISCOUNT]
    allowed = torch.tensor([0.0, 0.99, 0.99 ** 2, 0.99 ** 3])
    assert bool(torch.isclose(d.unsqueeze(1), allowed).any(1).all()), "discount must be 0 or gamma^k, k <= 3"
    assert int((d == 0).sum()) >= stats.episodes - 8  # every terminal (hit) gives at least one zero-discount row
    assert bool(((rows[:, ACTION] >= 0) & (rows[:, ACTION] < 5)).all())
    assert bool(((rows[:, OBS] >= 0) & (rows[:, OBS] <= 1)).all())


def test_a_stop_request_ends_the_segment_within_a_decision_and_keeps_its_rows():
    # systemd stops a worker with SIGTERM and kills it 60 s later (TimeoutStopSec): the segment
    # (two minutes of game by default) must end at the next decision, with its rows kept.
    import threading

    from melee_agent.arena import Arena
    from melee_agent.rl.model import DuelingDQN

    stop = threading.Event()
    stop.set()
    player = SegmentPlayer(Arena(1, cpu_level=9, seed=0), epsilon=1.0, n_step=3, gamma=0.99, seed=0)
    rows, stats = player.play(DuelingDQN(num_actions=5), frames_per_env=7200, stop=stop)
    assert stats.steps == 1 and rows.shape[0] == 1
