"""`bench learn`'s parts: the arena as SB3's VecEnv, SB3's side of the race, and reading minutes-to-target off a curve."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from melee_agent.benchmarks.learn import Sb3ArenaVecEnv, first_at_target, quiet_dqn, race_sb3


def test_first_at_target_reads_the_worst_level() -> None:
    curve = [{"minutes": 2.5, "untouched_share_worst_level": 0.9}, {"minutes": 5.0, "untouched_share_worst_level": 0.95},
             {"minutes": 7.5, "untouched_share_worst_level": 1.0}]
    assert first_at_target(curve) == 5.0
    assert first_at_target(curve[:1]) is None


@pytest.mark.slow
def test_the_arena_as_an_sb3_vecenv_reports_ends_as_sb3_expects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("stable_baselines3", reason="stable-baselines3 is in the test extra: pip install -e .[test]")
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path / "sb3"))  # where SB3's own logger would make its folder

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
    model = quiet_dqn(venv, learning_starts=100, policy_kwargs={"net_arch": [32]}, seed=0, device="cpu")
    model.learn(total_timesteps=400)
    assert model.num_timesteps >= 400
    assert not (tmp_path / "sb3").exists()  # SB3's own logger, which leaves an empty folder, never set up


@pytest.mark.slow
def test_race_sb3_trains_checks_and_scores_its_last_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("stable_baselines3", reason="stable-baselines3 is in the test extra: pip install -e .[test]")
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path / "sb3"))
    r = race_sb3(minutes=0.02, eval_every=0.01, envs=4, final_episodes=1, seed=0, check_episodes=1)
    assert r["steps"] > 0 and r["total_timesteps_planned"] >= 1_000
    assert 1 <= len(r["curve"]) <= 2  # a check every 0.6 s of training over 1.2 s (a slow step may skip one)
    assert r["curve"][-1]["minutes"] >= 0.02  # the last at the end of training, its check's time not counted
    assert set(r["final_per_level"]) == {str(lv) for lv in range(1, 10)}
    assert all(0.0 <= v <= 1.0 for v in r["final_per_level"].values())
    assert not (tmp_path / "sb3").exists()


def test_sb3_budget_and_speedup_read_every_run() -> None:
    from melee_agent.benchmarks.learn import sb3_minutes, speedup

    ours = [{"minutes_to_target": 7.5}, {"minutes_to_target": 5.0}]
    assert sb3_minutes(ours, 15.0) == 22.5  # 3x the slowest of ours
    assert sb3_minutes(ours + [{"minutes_to_target": None}], 15.0) == 15.0  # one of ours never got there
    assert sb3_minutes(None, 15.0) == 15.0
    # SB3's fastest run sets the ratio; one SB3 run at target makes it a measured ratio, not a bound.
    assert speedup(ours, [{"minutes_to_target": None}, {"minutes_to_target": 15.0}], 22.5) == {"ratio": 2.0, "lower_bound": False}
    assert speedup(ours, [{"minutes_to_target": None}] * 2, 22.5) == {"ratio": 3.0, "lower_bound": True}
    assert speedup([{"minutes_to_target": None}], [{"minutes_to_target": 2.5}], 15.0)["ratio"] is None


def test_bench_learn_sb3_alone_makes_no_run_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    # Only melee-agent's runs have files to keep; SB3's side alone leaves nothing in the temp directory.
    import argparse
    import tempfile

    from melee_agent.benchmarks import learn as bench_learn
    from melee_agent.cli.common import add_common

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    raced = []

    def race(minutes, eval_every, envs, final, seed):  # SB3's side is race_sb3's own test, above
        raced.append(minutes)
        return {"curve": [], "minutes_to_target": None, "steps": 1, "total_timesteps_planned": 1_000,
                "final_per_level": {}, "final_worst_level": 0.0}
    monkeypatch.setattr(bench_learn, "race_sb3", race)
    p = argparse.ArgumentParser()
    add_common(p, config=False)  # as `melee-agent bench learn` builds it (bench.USES)
    bench_learn.add_args(p)
    r = bench_learn.run(p.parse_args(["--only", "sb3", "--minutes", "2", "--runs", "2"]))
    assert raced == [2.0, 2.0] and len(r["sb3"]) == 2 and "melee-agent" not in r
    assert "sb3 run 2: never" in capsys.readouterr().out
    assert not list(tmp_path.iterdir())


def test_bench_learn_fused_trains_both_sides_on_the_device_asked_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `bench learn --fused --device cuda` must race on the GPU: each side's TrainingRun gets the device.
    import argparse

    from melee_agent.benchmarks import learn as bench_learn
    from melee_agent.cli.common import add_common
    from melee_agent.run import training

    seen: list[tuple[str, bool]] = []

    class Stop(Exception):
        pass

    class Run:
        def __init__(self, cfg, run_dir, minutes, device="cpu", progress=True):
            seen.append((device, cfg.train.fused))

        def run(self):
            raise Stop

    monkeypatch.setattr(training, "TrainingRun", Run)
    p = argparse.ArgumentParser()
    add_common(p, config=False)
    bench_learn.add_args(p)
    with pytest.raises(Stop):
        bench_learn.run(p.parse_args(["--fused", "--device", "meta", "--runs", "1", "--run-dir", str(tmp_path)]))
    assert seen == [("meta", False)]
