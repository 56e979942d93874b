"""A short league run (tiny networks, a 20-frame clock): league/ tags in TensorBoard, ratings, snapshots, a reset."""

from __future__ import annotations

import pytest
import torch

from melee_agent.config import ConfigError, load_config
from melee_agent.league.trainer import LeagueTrainer

TINY = ["fused.envs=4", "league.model_envs=4", "league.exploiter_envs=4", "learner.shared=8", "learner.stream=8",
        "learner.batch_size=8", "manager.burn_in=8", "league.exploiter_burn_in=8", "env.clock_frames=20",
        "env.compile=false", "replay.capacity=2000", "replay.block_size=100", "league.exploiter_replay_capacity=1000",
        "manager.publish_every=1000", "manager.checkpoint_every=100000", "fused.replay_ratio=2.0",
        "league.snapshot_every_steps=2", "fused.chunk_frames=4", "league.max_snapshots=2", "env.cpu_levels=[1, 9]"]


def tags(run_dir) -> set[str]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: PLC0415

    acc = EventAccumulator(str(run_dir))
    acc.Reload()
    return set(acc.Tags()["scalars"])


@pytest.mark.slow
def test_a_short_league_run_rates_its_members_and_writes_league_tags(tmp_path):
    # The exploiter is judged on every 2 games with no patience, and reset unless it wins them all (promote_at 1):
    # a fresh exploiter against the main does not, so it is reset within the run.
    cfg = load_config("league", TINY + ["league.exploiter_window=2", "league.exploiter_patience_steps=0",
                                        "league.exploiter_reset_below=0.99", "league.exploiter_promote_at=1.0"])
    torch.manual_seed(0)
    league = LeagueTrainer(cfg, tmp_path, seed=0)
    league.work(0.0, chunks=10)
    league.stop()
    doc = league.report()
    names = {m["name"]: m for m in doc["members"]}
    assert {"cpu1", "cpu9", "exploiter0-gen0"} <= set(names)
    snaps = [s["name"] for s in doc["snapshots"]]
    assert snaps and all(names[s]["kind"] == "snapshot" for s in snaps)
    assert all((tmp_path / "league" / "members" / f"{s}.safetensors").is_file() for s in snaps)
    assert sum(m["drawable"] for m in doc["members"] if m["kind"] == "snapshot") <= 2  # max_snapshots
    played = [m for m in doc["members"] if m["main_wins"] + m["main_losses"] + m["main_draws"] > 0]
    assert any(m["kind"] == "cpu" for m in played)
    # Rated from their games, in the right direction: a member that started at 1,500 (the CPU's levels, exploiters)
    # and that the main beat more often than it lost to is rated below it, one the main lost to more, above. (Draws
    # pull a rating toward the main's, which stays within a few points of 1,500 here: less than one decisive game.)
    decisive = [m for m in played if m["kind"] in ("cpu", "exploiter") and m["main_wins"] != m["main_losses"]]
    assert decisive
    for m in decisive:
        assert (m["elo"] > 1500.0) == (m["main_losses"] > m["main_wins"]), m
    assert doc["exploiter_resets"] >= 1 and (tmp_path / "league" / "exploiter0-gen1").is_dir()
    assert sum(w for w in (m["pfsp_weight"] for m in doc["members"])) == pytest.approx(1.0, abs=1e-3)
    seen = tags(tmp_path)
    assert {"league/elo/main", "league/elo/cpu1", "league/elo/cpu9", "league/pfsp/cpu9", "league/members",
            "league/snapshots", "league/exploiter_resets"} <= seen
    assert f"league/elo/{snaps[0]}" in seen


@pytest.mark.slow
def test_an_exploiter_that_wins_puts_a_frozen_copy_into_the_pool(tmp_path):
    # Promoted at a score of 1/100 over 2 games: a draw by the 20-frame clock is already half a win.
    cfg = load_config("league", TINY + ["league.exploiter_window=2", "league.exploiter_promote_at=0.01",
                                        "league.exploiter_reset_below=0.0"])
    league = LeagueTrainer(cfg, tmp_path, seed=1)
    league.work(0.0, chunks=8)
    league.stop()
    doc = league.report()
    promoted = [m for m in doc["members"] if m["kind"] == "exploiter" and m["drawable"]]
    assert doc["exploiter_promotions"] >= 1 and promoted and promoted[0]["name"] == "exploiter0-gen0"
    assert (tmp_path / "league" / "members" / "exploiter0-gen0.safetensors").is_file()
    assert doc["exploiters"][0]["generation"] >= 1  # and the exploiter itself was reset
    assert "exploiter0-gen0" in league.opponents.slots  # drawn in the models' arena from now on


@pytest.mark.slow
def test_model_clock_frames_cuts_the_games_between_models_only(tmp_path):
    # The CPU's games keep Melee's 8:00; the models' arena and the exploiter's play 20-frame games, so within 8
    # chunks of 4 frames the exploiter has finished games against the main and the CPU's arena has none.
    sets = [s for s in TINY if not s.startswith("env.clock_frames")] + ["league.model_clock_frames=20"]
    league = LeagueTrainer(load_config("league", sets), tmp_path, seed=2)
    assert league.model_env.env.max_frames == 20 and league.exploiters[0].fused.env.env.max_frames == 20
    assert league.cpu_env.env.max_frames == 28_800  # Melee's 8:00
    league.work(0.0, chunks=8)
    league.stop()
    members = {m["name"]: m for m in league.report()["members"]}
    played = lambda m: m["main_wins"] + m["main_losses"] + m["main_draws"]  # noqa: E731
    assert played(members["exploiter0-gen0"]) > 0
    assert all(played(m) == 0 for m in members.values() if m["kind"] == "cpu")
    with pytest.raises(ConfigError, match="model_clock_frames"):
        load_config("league", ["league.model_clock_frames=-1"])


def test_the_league_needs_the_fused_path_and_sane_thresholds():
    with pytest.raises(ConfigError, match="fused path"):
        load_config("league", ["train.fused=false"])
    with pytest.raises(ConfigError, match="must be below"):
        load_config("league", ["league.exploiter_reset_below=0.8"])
    with pytest.raises(ValueError, match="does not resume"):
        LeagueTrainer(load_config("league", TINY), "unused", resume=True)
    assert load_config("league-d18").env.delay_frames == 18 and load_config("league-d18").league.enabled


@pytest.mark.slow
def test_train_config_league_adds_league_to_eval_json(tmp_path):
    """`train --config league`: the run folder `train --fused` leaves, and eval.json's added "league" key."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    sets = [*TINY, "train.eval_every_minutes=0.1", "train.progress_eval_episodes=2", "train.final_games_per_level=1",
            "train.final_games_level_9=0", "train.final_baselines=false", "env.compile_eval=false", "train.eval_envs=4"]
    run_dir = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "melee_agent.cli.main", "train", "--config", "league", "--minutes",
                           "0.3", "--run-dir", str(run_dir), "--no-progress", *[a for s in sets for a in ("--set", s)]],
                          cwd=root, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    doc = json.loads((run_dir / "eval.json").read_text())
    assert doc["training"]["fused"] is True and "per_level" in doc and "curve" in doc  # the usual keys stay
    league = doc["league"]
    assert {"cpu1", "cpu9", "exploiter0-gen0"} <= {m["name"] for m in league["members"]}
    assert isinstance(league["main_elo"], float) and league["snapshots"]
    assert any(t.startswith("league/elo/") for t in tags(run_dir))
    assert (run_dir / "league.png").read_bytes()[:4] == b"\x89PNG"  # the members' ratings, drawn


@pytest.mark.slow
@pytest.mark.parametrize("init", ["main", "fresh"])
def test_exploiter_init_main_starts_every_generation_from_the_main(tmp_path, init):
    cfg = load_config("league", TINY + [f"league.exploiter_init={init}"])
    torch.manual_seed(3)
    league = LeagueTrainer(cfg, tmp_path, seed=3)
    life = league.exploiters[0].life
    calls = {"n": 0}

    def reset_on_the_fourth(train_steps: int) -> str:
        calls["n"] += 1
        return "reset" if calls["n"] == 4 else "train"

    life.verdict = reset_on_the_fourth  # the 4th round ends with a reset; the main does not train after it
    league.work(0.0, chunks=4)
    ex, main = league.exploiters[0], league.main.learner
    assert ex.life.generation == 1 and main.train_steps > 0
    same = [torch.equal(a, b) for net in (ex.fused.learner.online, ex.fused.learner.target)
            for a, b in zip(net.parameters(), main.online.parameters())]
    league.stop()
    assert all(same) if init == "main" else not any(same)
    with pytest.raises(ConfigError, match="exploiter_init"):
        load_config("league", ["league.exploiter_init=copy"])


@pytest.mark.slow
def test_exploiter_chunks_and_replay_ratio_set_an_exploiters_share(tmp_path):
    league = LeagueTrainer(load_config("league", TINY + ["league.exploiter_chunks=3",
                                                         "league.exploiter_replay_ratio=0.5"]), tmp_path, seed=4)
    ex = league.exploiters[0]
    assert ex.fused.cfg.fused.replay_ratio == 0.5 and league.main.cfg.fused.replay_ratio == 2.0
    calls, chunk = [], ex.fused.chunk
    ex.fused.chunk = lambda *a: (calls.append(1), chunk(*a))
    league.work(0.0, chunks=2)
    league.stop()
    assert len(calls) == 2 * 3  # rounds x exploiter_chunks
    with pytest.raises(ConfigError, match="exploiter_chunks"):
        load_config("league", ["league.exploiter_chunks=0"])
