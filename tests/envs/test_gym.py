"""The arena through Gymnasium: registration, Gymnasium's own checker, the vector env, seeding, SB3."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import melee_agent.envs.gym as mgym


@pytest.mark.parametrize("env_id", sorted(mgym.IDS))
def test_gymnasium_checker_passes(env_id: str) -> None:
    env = gymnasium.make(env_id)
    assert env.observation_space == gymnasium.spaces.Box(0, 1, (27,), np.float32)
    assert isinstance(env.action_space, gymnasium.spaces.Discrete)
    check_env(env.unwrapped, skip_render_check=True)


def _play(env: gymnasium.Env, seed: int, actions: list[int]) -> list[tuple]:
    obs, _ = env.reset(seed=seed)
    out = [tuple(obs)]
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        out.append((tuple(obs), r, term, trunc, info["frames"]))
        if term or trunc:
            obs, _ = env.reset()
            out.append(tuple(obs))
    return out


@pytest.mark.slow
def test_seeding_reproduces_an_episode_and_seeds_differ() -> None:
    env = gymnasium.make("MeleeAgent/Untouchable-v0", cpu_level=9)
    actions = list(np.random.default_rng(0).integers(0, 5, 60))
    a, b = _play(env, 5, actions), _play(env, 5, actions)
    assert a == b
    assert _play(env, 6, actions) != a


def test_a_finished_episode_is_reported_then_reset() -> None:
    env = gymnasium.make("MeleeAgent/Untouchable-v0", cpu_level=9)  # noop at level 9 is hit within seconds
    env.reset(seed=1)
    for _ in range(5_000):
        obs, reward, terminated, truncated, info = env.step(0)
        if terminated or truncated:
            break
    assert terminated and not truncated and info["hit"]
    with pytest.raises(RuntimeError, match="the episode has ended: call reset"):
        env.step(0)  # it would play the next episode without handing over its first observation
    first, _ = env.reset()
    assert not np.array_equal(first, obs)
    _, _, terminated, _, info = env.step(0)
    assert info["episode_frame"] == 1 and not terminated  # a fresh episode


@pytest.mark.parametrize("bad", [1.5, 2.0, np.float32(1.0), "1", None, 2**70, -1, 5, np.array([1])])
def test_an_action_that_is_not_an_int_of_the_space_is_refused(bad) -> None:
    """Before: 1.5 was played as 1, a string as its digit, 2**70 an OverflowError (Discrete.contains says no)."""
    env = gymnasium.make("MeleeAgent/Untouchable-v0", cpu_level=9)
    env.reset(seed=1)
    with pytest.raises(ValueError, match=r"action must be an int in \[0, 5\)"):
        env.unwrapped.step(bad)
    for good in (1, np.int64(1), np.array(1), np.uint8(1)):
        env.reset(seed=1)
        assert env.unwrapped.step(good)[4]["frames"] > 0


def test_the_vector_env_refuses_float_actions() -> None:
    venv = gymnasium.make_vec("MeleeAgent/Untouchable-v0", num_envs=3, cpu_level=9)
    venv.reset(seed=1)
    with pytest.raises(ValueError, match="actions must be 3 ints"):
        venv.step(np.array([0.5, 1, 2]))
    venv.step(np.array([0, 1, 2]))


@pytest.mark.slow
def test_make_vec_is_one_arena_that_plays_as_single_environments() -> None:
    venv = gymnasium.make_vec("MeleeAgent/Untouchable-v0", num_envs=6, cpu_level=[5, 9])
    assert isinstance(venv.unwrapped, mgym.ArenaVectorEnv) and venv.unwrapped._arena.num_envs == 6
    assert venv.observation_space.shape == (6, 27) and venv.single_action_space == gymnasium.spaces.Discrete(5)
    obs, info = venv.reset(seed=3)
    assert obs.shape == (6, 27) and obs.dtype == np.float32 and set(info["cpu_level"]) <= {5, 9}
    ended_once = np.zeros(6, bool)
    single = gymnasium.make("MeleeAgent/Untouchable-v0", cpu_level=[5, 9])
    single_obs, _ = single.reset(seed=3)
    assert np.array_equal(single_obs, obs[0])  # environment 0 of six plays the game of one
    rng = np.random.default_rng(1)
    for t in range(4_000):  # noop is cut at a minute (3,600 frames) at the latest
        actions = rng.integers(0, 5, 6) if t < 40 else np.zeros(6, np.int64)
        obs, reward, terminated, truncated, info = venv.step(actions)
        if t < 40 and not ended_once[0]:
            s_obs, s_r, s_term, s_trunc, _ = single.step(actions[0])
            assert np.array_equal(s_obs, info["final_obs"][0]) and s_r == pytest.approx(reward[0])
        ended = terminated | truncated
        assert np.array_equal(info["_final_obs"], ended)
        for i in np.flatnonzero(ended):  # same-step reset: obs is the next episode's first
            assert not np.array_equal(obs[i], info["final_obs"][i])
        ended_once |= ended
        if ended_once.all():
            break
    assert ended_once.all()
    with pytest.raises(ValueError, match="actions must be 6 ints"):
        venv.step(np.full(6, 7))


@pytest.mark.slow
def test_sb3_dqn_trains_on_the_untouchable_env(tmp_path, monkeypatch) -> None:
    pytest.importorskip("stable_baselines3", reason="stable-baselines3 is in the test extra: pip install -e .[test]")
    from melee_agent.benchmarks.learn import quiet_dqn  # SB3's DQN, its logger leaving no /tmp/SB3-<time>

    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path / "sb3"))  # where SB3's own logger would make its folder
    env = gymnasium.make("MeleeAgent/Untouchable-v0")
    model = quiet_dqn(env, learning_starts=50, train_freq=4, buffer_size=5_000, batch_size=32,
                      target_update_interval=200, policy_kwargs={"net_arch": [64]}, seed=0, device="cpu")
    before = [p.detach().clone() for p in model.q_net.parameters()]
    model.learn(total_timesteps=200)
    assert model.num_timesteps >= 200 and model._n_updates > 0
    assert not (tmp_path / "sb3").exists()
    assert any(not np.allclose(b.numpy(), p.detach().numpy()) for b, p in zip(before, model.q_net.parameters()))
    action, _ = model.predict(env.reset(seed=0)[0], deterministic=True)
    assert env.action_space.contains(np.int64(action))
