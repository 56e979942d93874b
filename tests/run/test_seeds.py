"""A seed for every run: two runs from one seed train, check and report alike; the seed reaches every part."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from melee_agent.config import ConfigError, load_config
from melee_agent.io.safetensors_header import read_metadata
from melee_agent.manager.trainer import Trainer
from melee_agent.rl.model import DuelingDQN, save_model
from melee_agent.rl.seeds import MAX_SEED, derive

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "melee_agent.cli.main"]
# A counted budget (train.chunks): a run of wall minutes trains as many steps as the machine allows.
TINY = ["--config", "small", "--no-progress", "--set", "train.chunks=30", "--set", "train.eval_every_chunks=10",
        "--set", "manager.burn_in=100", "--set", "fused.envs=8", "--set", "env.max_frames=120",
        "--set", "train.progress_eval_episodes=2", "--set", "train.eval_episodes=1", "--set", "manager.publish_every=5"]
WALL = ("seconds", "rows_per_s", "train_steps_per_s")  # eval.json's figures of wall time


def _without_wall_time(doc: dict) -> dict:
    doc = {k: v for k, v in doc.items() if k != "run_dir"}
    doc["training"] = {k: v for k, v in doc["training"].items() if k not in WALL}
    doc["curve"] = [{k: v for k, v in p.items() if k != "minutes"} for p in doc["curve"]]
    return doc


@pytest.mark.slow
def test_two_fused_runs_from_one_seed_write_the_same_checks_report_and_model(tmp_path):
    docs, models = [], []
    for name in ("a", "b"):
        run_dir = tmp_path / name
        proc = subprocess.run([*CLI, "train", "--fused", "--seed", "7", "--run-dir", str(run_dir), *TINY], cwd=ROOT,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
        docs.append(json.loads((run_dir / "eval.json").read_text()))
        models.append((run_dir / "model-last.safetensors").read_bytes())
    a, b = docs
    assert a["training"]["seed"] == 7 and a["training"]["chunks"] == 30 and a["training"]["train_steps"] > 20
    # The checks came at the counted chunks: the untrained network, the models after chunks 10 and 20, the last one.
    steps = [p["train_step"] for p in a["curve"]]
    assert len(steps) == 4 and steps[0] == 0 and steps == sorted(steps) and steps[-1] > steps[1]
    assert _without_wall_time(a) == _without_wall_time(b)
    # The same weights (their sha256) and metadata; the files' bytes may differ in the header's key order.
    meta = [read_metadata(m) for m in models]
    assert meta[0] == meta[1] and meta[0]["seed"] == "7" and int(meta[0]["train_step"]) > 20


@pytest.mark.slow
def test_two_evals_of_one_model_from_one_seed_are_identical_and_another_seed_plays_other_games(tmp_path):
    # An untrained network, so that level 9 hits it within the 5-second episodes and the games show their seed (the
    # shipped dodging model is untouched in all of them, whatever the seed).
    torch.manual_seed(0)
    model = tmp_path / "untrained.safetensors"
    save_model(model, DuelingDQN(num_actions=5, action_embed=16), version=1, train_step=1, action_set="untouchable",
               delay_frames=0)

    def evaluate(seed: int, name: str) -> dict:
        out = tmp_path / f"{name}.json"
        proc = subprocess.run([*CLI, "eval", "--policy", str(model), "--episodes", "4", "--cpu-level", "9",
                               "--set", "env.max_frames=300", "--seed", str(seed), "--json", str(out), "--no-progress"],
                              cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
        doc = json.loads(out.read_text())
        assert doc.pop("seconds") >= 0 and doc["seed"] == seed  # the wall time is the one figure allowed to differ
        return doc

    first, again, other = evaluate(7, "a"), evaluate(7, "b"), evaluate(8, "c")
    assert first == again
    assert {k: v for k, v in first.items() if k != "seed"} != {k: v for k, v in other.items() if k != "seed"}


def test_the_seed_sets_the_networks_first_weights_the_replays_draws_and_the_model_files(tmp_path):
    cfg = load_config("small")

    def trainer(seed: int, name: str) -> Trainer:
        t = Trainer(cfg, tmp_path / name, seed=seed)
        t.replay.add(torch.arange(64 * 57, dtype=torch.float32).reshape(64, 57))
        t.replay.flush()
        return t

    a, b, c = trainer(7, "a"), trainer(7, "b"), trainer(8, "c")
    weights = [torch.cat([p.flatten() for p in t.learner.online.parameters()]) for t in (a, b, c)]
    draws = [t.replay.sample(16).idx for t in (a, b, c)]
    assert torch.equal(weights[0], weights[1]) and not torch.equal(weights[0], weights[2])
    assert torch.equal(draws[0], draws[1]) and not torch.equal(draws[0], draws[2])
    assert read_metadata(a.model.data)["seed"] == "7" and read_metadata(c.model.data)["seed"] == "8"
    # The parts' seeds: one per part and index, none shared, all in the arena's range.
    seeds = {derive(7, part, *i) for part, i in [("replay", ()), ("network", ()), ("worker", (0,)), ("worker", (1,)),
                                                  ("league", ()), ("exploiter", (0, 0)), ("exploiter", (0, 1))]}
    assert len(seeds) == 7 and all(0 <= s < MAX_SEED for s in seeds)
    for t in (a, b, c):
        t.stop()


def test_train_seed_must_be_a_whole_number_in_range_and_chunks_need_the_fused_path():
    assert load_config("small", ["train.seed=7"]).train.seed == 7
    with pytest.raises(ConfigError, match="train.seed"):
        load_config("small", ["train.seed=-1"])
    from melee_agent.run.training import TrainingRun

    with pytest.raises(ValueError, match="train.chunks.*--fused"):
        TrainingRun(load_config("small", ["train.chunks=10"]), run_dir="/nonexistent/never-made")


class _RecordingReport:
    """A final report's run that plays nothing: it records the seeds the model and the baselines are played on."""

    eval_episodes, final_games_per_level, final_games_level_9 = 2, 1, 1
    env_name, action_set, delay_frames, levels_text = "arena", "fight", 0, "level 9"

    def __init__(self, result):
        from tests.run_reports import check

        self.check, self.result, self.seeds = check, result, {}

    def log(self, line: str) -> None:
        pass

    def keep(self):
        c = self.check(self.result, version=1, step=1)
        return c, b"", c

    def play(self, data, episodes, levels, seed):
        self.seeds.setdefault("model", seed)
        return self.check(self.result, version=1, step=1)

    def baselines(self, episodes, seed):
        self.seeds["baselines"] = seed
        return {}

    def report(self, model, baselines, chosen, last, **kw):
        from tests.run_reports import report

        return report(model, [last])

    def write(self, *a, **kw) -> None:
        pass

    def log_table(self, *a) -> None:
        pass

    def log_paths(self) -> None:
        pass


@pytest.mark.parametrize("game", ["dodge", "fight"])
def test_the_final_reports_baselines_play_the_models_games(game, monkeypatch):
    from melee_agent.games import game_of
    from melee_agent.run.training import FinalReportRun
    from tests.run_reports import dodge_result, fight_result

    run = _RecordingReport(fight_result(0.5) if game == "fight" else dodge_result(0.5))
    game_of(game).final_report(run)
    assert run.seeds["baselines"] == run.seeds["model"]
    # ... and the run's baselines are played on the seed they are given.
    played = []
    fake = type("R", (), {"cfg": load_config("small"), "run_dir": Path("."), "minutes": 1.0, "log": print,
                          "training": None, "progress": False})()
    report = FinalReportRun(fake, None, None, b"", 0)  # type: ignore[arg-type]
    report.evals = type("E", (), {"run": lambda self, *a, seed, **kw: played.append(seed) or None})()
    monkeypatch.setattr("melee_agent.run.training.dataclasses.replace", lambda b, **kw: b)
    report.baselines(4, seed=31)
    assert played and set(played) == {31}
