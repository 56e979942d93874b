"""`bench learn`'s parts: the arena as SB3's VecEnv, and reading minutes-to-target off a curve."""

from __future__ import annotations

import numpy as np
import pytest

from melee_agent.cli.bench_learn import Sb3ArenaVecEnv, first_at_target


def test_first_at_target_reads_the_worst_level() -> None:
    curve = [{"minutes": 2.5, "untouched_share_worst_level": 0.9}, {"minutes": 5.0, "untouched_share_worst_level": 0.95},
             {"minutes": 7.5, "untouched_share_worst_level": 1.0}]
    assert first_at_target(curve) == 5.0
    assert first_at_target(curve[:1]) is None


@pytest.mark.slow
def test_the_arena_as_an_sb3_vecenv_reports_ends_as_sb3_expects() -> None:
    pytest.importorskip("stable_baselines3", reason="stable-baselines3 is in the test extra: pip install -e .[test]")
    from stable_baselines3 import DQN

    venv = Sb3ArenaVecEnv(4, seed=0, cpu_level=9).env
    obs = venv.reset()
    assert obs.shape == (4, 27) and obs.dtype == np.float32
    ended = 0
    for _ in range(300):  # noop at level 9: hit within seconds
        venv.step_async(np.zeros(4, np.int64))
        obs, reward, done, infos = venv.step_wait()
        for i in np.flatnonzero(done):
            ended += 1
            assert infos[i]["terminal_observation"].shape == (27,)
            assert not np.array_equal(infos[i]["terminal_observation"], obs[i])  # obs is the next episode's
    assert ended > 0
    model = DQN("MlpPolicy", venv, learning_starts=100, policy_kwargs={"net_arch": [32]}, seed=0, device="cpu")
    model.learn(total_timesteps=400)
    assert model.num_timesteps >= 400


def test_sb3_budget_and_speedup_read_every_run() -> None:
    from melee_agent.cli.bench_learn import sb3_minutes, speedup

    ours = [{"minutes_to_target": 7.5}, {"minutes_to_target": 5.0}]
    assert sb3_minutes(ours, 15.0) == 22.5  # 3x the slowest of ours
    assert sb3_minutes(ours + [{"minutes_to_target": None}], 15.0) == 15.0  # one of ours never got there
    assert sb3_minutes(None, 15.0) == 15.0
    # SB3's fastest run sets the ratio; one SB3 run at target makes it a measured ratio, not a bound.
    assert speedup(ours, [{"minutes_to_target": None}, {"minutes_to_target": 15.0}], 22.5) == {"ratio": 2.0, "lower_bound": False}
    assert speedup(ours, [{"minutes_to_target": None}] * 2, 22.5) == {"ratio": 3.0, "lower_bound": True}
    assert speedup([{"minutes_to_target": None}], [{"minutes_to_target": 2.5}], 15.0)["ratio"] is None
