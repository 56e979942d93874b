"""The arena's public API: shapes, info keys, determinism across B, episode rules, rewards."""

from __future__ import annotations

import pytest
import torch
from melee.enums import Action

from melee_agent.arena import Arena
from melee_agent.arena.env_state import AGENT, CPU, with_game, with_player
from melee_agent.envs.state import STATE_DIM


def _rollout(env: Arena, steps: int, action_seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(action_seed)
    obs_seq, rew_seq, done_seq = [env.reset()], [], []
    for _ in range(steps):
        actions = torch.randint(0, env.num_actions, (env.num_envs,), generator=g)
        # Environment 0 always gets the first draw; make every batch size agree on it.
        actions[0] = torch.randint(0, env.num_actions, (1,), generator=torch.Generator().manual_seed(
            action_seed * 100_003 + len(rew_seq)))
        obs, rew, done, _ = env.step(actions)
        obs_seq.append(obs[:1].clone())
        rew_seq.append(rew[:1].clone())
        done_seq.append(done[:1].clone())
    return torch.cat(obs_seq[1:]), torch.cat(rew_seq), torch.cat(done_seq)


@pytest.mark.slow
def test_same_seed_and_actions_give_the_same_trajectory_at_b1_and_b1024():
    small = _rollout(Arena(1, cpu_level=9, seed=3), 40, action_seed=5)
    big = _rollout(Arena(1024, cpu_level=9, seed=3), 40, action_seed=5)
    for a, b in zip(small, big):
        assert torch.equal(a, b)
    assert bool(small[2].any()), "the rollout should include at least one episode end (auto-reset)"


def test_different_seeds_differ():
    a = _rollout(Arena(4, cpu_level=9, seed=1), 8, action_seed=5)[0]  # they part from the first step
    b = _rollout(Arena(4, cpu_level=9, seed=2), 8, action_seed=5)[0]
    assert not torch.equal(a, b)


def test_step_returns_the_documented_shapes_and_info():
    env = Arena(6, cpu_level=5, seed=0)
    obs = env.reset()
    assert obs.shape == (6, STATE_DIM) and obs.dtype == torch.float32
    obs, reward, done, info = env.step(torch.tensor([0, 1, 2, 3, 4, 0]))
    assert obs.shape == (6, STATE_DIM) and bool(((obs >= 0) & (obs <= 1)).all())
    assert reward.shape == done.shape == (6,)
    assert info["hit"].dtype == torch.bool and info["hit"].shape == (6,)
    # One decision plays the whole macro: 1 frame for noop, 22 for spot dodge, 32 for rolls, 6 for shine.
    assert info["frames"].tolist() == [1, 22, 32, 32, 6, 1]
    assert info["episode_frame"].tolist() == [1, 22, 32, 32, 6, 1]
    assert obs[:, 26].tolist() == pytest.approx([0, 0.25, 0.5, 0.75, 1.0, 0])  # previous action / (5 - 1)


def test_bad_actions_are_rejected_with_a_clear_error():
    env = Arena(2, seed=0)
    env.reset()
    with pytest.raises(ValueError, match=r"actions must be in \[0, 5\)"):
        env.step(torch.tensor([0, 5]))
    with pytest.raises(ValueError, match="expected 2 actions"):
        env.step(torch.tensor([0]))
    with pytest.raises(ValueError, match="cpu_level"):
        Arena(1, cpu_level=10)


def test_untouchable_reward_is_one_sixtieth_per_standing_noop_frame_and_a_hit_ends_the_episode():
    env = Arena(1, cpu_level=9, seed=0)
    env.reset()
    env.state = with_game(env.state, cpu_cooldown=10_000.0)  # the CPU waits
    _, reward, done, info = env.step(torch.tensor([0]))
    assert reward.item() == pytest.approx(1 / 60) and not done.item()
    _, reward, _, _ = env.step(torch.tensor([1]))  # spot dodge: not standing, not a noop
    assert reward.item() == 0.0
    # Now let the CPU attack a standing Fox: the step with the hit is terminal.
    env.state = with_game(env.state, cpu_cooldown=0.0)
    for _ in range(3600):
        _, _, done, info = env.step(torch.tensor([0]))
        if done.item():
            break
    assert info["hit"].item() and info["terminal"].item() and not info["truncated"].item()
    assert info["damage_taken"].item() > 0
    assert env.state.game.episode_frame[0].item() == 0  # reset itself


def test_an_episode_is_cut_at_the_frame_limit_and_not_terminal():
    env = Arena(3, cpu_level=1, seed=0, max_frames=50)
    env.reset()
    env.state = with_player(env.state, CPU, position_x=80.0)  # far away and never attacking
    env.state = with_player(env.state, AGENT, position_x=-80.0)
    for _ in range(49):
        env.state = with_game(env.state, cpu_cooldown=10_000.0)
        _, _, done, _ = env.step(torch.zeros(3, dtype=torch.long))
        assert not bool(done.any())
    env.state = with_game(env.state, cpu_cooldown=10_000.0)
    _, reward, done, info = env.step(torch.zeros(3, dtype=torch.long))
    assert bool(done.all()) and bool(info["truncated"].all()) and not bool(info["terminal"].any())
    assert info["episode_frame"].tolist() == [50, 50, 50]
    assert info["episode_return"].tolist() == pytest.approx([50 / 60] * 3)


def test_players_exposes_libmelee_named_fields():
    env = Arena(2, seed=0)
    env.reset()
    players = env.players()
    for who in ("agent", "opponent"):
        for field in ("position_x", "position_y", "speed_x", "speed_y", "action", "action_frame", "facing",
                      "on_ground", "jumps_left", "shield_strength", "hitstun_frames_left", "invulnerable",
                      "percent", "stock"):
            assert players[who][field].shape == (2,)
    assert players["agent"]["action"].tolist() == [Action.STANDING.value] * 2
    assert players["agent"]["stock"].tolist() == [4, 4]


def test_damage_reward_counts_damage_and_stocks():
    env = Arena(1, cpu_level=9, seed=0, reward="damage")
    env.reset()
    total, taken = 0.0, 0.0
    for _ in range(300):
        _, reward, done, info = env.step(torch.tensor([0]))
        total += reward.item()
        taken += info["damage_taken"].item() + 100 * info["stocks_lost"].item()
        if done.item():
            break
    assert taken > 0 and total == pytest.approx(-0.01 * taken, rel=1e-4)


@pytest.mark.slow
def test_step_async_transitions_equal_lockstep_steps_of_the_same_environment():
    """Env 0 of an asynchronous batch plays exactly what a lone environment plays with step()."""
    B = 6
    env = Arena(B, cpu_level=9, seed=4)
    obs = env.reset()
    g = torch.Generator().manual_seed(0)
    chosen, got = [], []
    ready = torch.ones(B, dtype=torch.bool)
    while len(got) < 60:
        actions = torch.randint(0, 5, (B,), generator=g)
        if ready[0]:
            chosen.append(int(actions[0]))
        obs, reward, done, info = env.step_async(actions)
        ready = info["ready"]
        if ready[0]:
            got.append((obs[0].clone(), reward[0].item(), done[0].item(), info["frames"][0].item(), info["hit"][0].item()))
    assert len(set(r[3] for r in got)) > 1, "macros of different lengths were played"
    lone = Arena(1, cpu_level=9, seed=4)
    lone.reset()
    for a, (o, r, d, f, h) in zip(chosen, got):
        o2, r2, d2, info2 = lone.step(torch.tensor([a]))
        assert torch.equal(o2[0], o) and r2.item() == pytest.approx(r) and d2.item() == d
        assert info2["frames"].item() == f and info2["hit"].item() == h


def test_step_async_reads_actions_only_where_ready():
    env = Arena(2, cpu_level=1, seed=0)
    env.reset()
    env.state = with_game(env.state, cpu_cooldown=10_000.0)
    _, _, _, info = env.step_async(torch.tensor([0, 2]))  # env 1 starts a 32-frame roll
    assert info["ready"].tolist() == [True, False]
    with pytest.raises(ValueError, match="actions must be in"):
        env.step_async(torch.tensor([7, 0]))
    for _ in range(30):
        _, _, _, info = env.step_async(torch.tensor([0, 4]))  # env 1's 4 is ignored mid-roll
    assert env.state.players.action[1, AGENT].item() in (Action.ROLL_BACKWARD.value, Action.ROLL_FORWARD.value)
