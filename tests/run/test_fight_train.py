"""Fight training's figures: games in a worker's segment statistics (over the wire and into TensorBoard),
the evaluation's game keys with ``ko_causes``, keep-best by win rate, and `eval --json` for fights."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
import torch

from melee_agent.report import compare
from melee_agent.arena import Arena
from melee_agent.arena.env_state import AGENT, CPU, with_player
from melee_agent.report.evaluate import EvalResult, GameFigures, evaluate, ko_cause_names, merge_games
from melee_agent.rl.model import DuelingDQN
from melee_agent.io.segment_stats import SegmentStats
from melee_agent.run.training import ModelCheck, better
from melee_agent.io.wire import decode_experience, encode_experience
from melee_agent.workers.play import SegmentPlayer
from tests.manager_kit import scalar_tags

ROOT = Path(__file__).resolve().parents[2]
GAME_KEYS = ("games", "win_rate", "wins", "losses", "draws", "stocks_taken_per_game", "stocks_lost_per_game",
             "damage_dealt_per_game", "damage_taken_per_game", "ko_causes", "lost_causes")


def fight_arena(n: int = 4) -> Arena:
    return Arena(n, cpu_level=9, seed=0, game="fight", action_set="fight", reward="fight")


def last_stock_beyond_the_blast_zone(env: Arena, attack_id: int, who: int = CPU) -> None:
    """``who`` on its last stock past the right blast zone (a KO next frame: the game ends), with ``attack_id``
    the other's move on its KO credit (-1: none, a self-destruct)."""
    env.state = with_player(env.state, who, stock=1.0, position_x=300.0, on_ground=0.0)
    env.state = with_player(env.state, 1 - who, percent=20.0)
    credit = env.state.fight.ko_credit.clone()
    credit[:, who] = float(attack_id)
    env.state = env.state._replace(fight=env.state.fight._replace(ko_credit=credit))


def _noop_after(env: Arena, arm) -> Callable[[torch.Tensor], torch.Tensor]:
    """A noop policy that calls ``arm()`` once, after evaluate's reset (the next frame ends every game)."""
    armed = []

    def policy(obs: torch.Tensor) -> torch.Tensor:
        if not armed:
            arm()
            armed.append(True)
        return torch.full((obs.shape[0],), env.noop_index, dtype=torch.long)

    return policy


def test_ko_causes_name_the_move_on_credit_and_the_game_keys_are_reported():
    names = {v: k for k, v in ko_cause_names().items()}
    env = fight_arena(4)
    r = evaluate(env, _noop_after(env, lambda: last_stock_beyond_the_blast_zone(env, names["fsmash"])), 4,
                 progress=False)
    assert all(k in r.to_json() for k in GAME_KEYS)
    g = r.fights
    assert g is not None and g.games == 4 and g.wins == 4 and g.win_rate == 1.0
    assert g.stocks_taken_per_game == 1.0 and g.stocks_lost_per_game == 0.0
    assert g.ko_causes == {"fsmash": 4} and g.lost_causes == {}


def test_stocks_lost_are_named_by_the_opponents_move_or_a_self_destruct():
    by_id = ko_cause_names("opponent")
    assert by_id[-1] == "self_destruct" and "dolphin_slash" in by_id.values() and "firefox" not in by_id.values()
    marth = {v: k for k, v in by_id.items()}
    env = fight_arena(3)
    r = evaluate(env, _noop_after(env, lambda: last_stock_beyond_the_blast_zone(env, marth["fsmash"], AGENT)), 3,
                 progress=False)
    assert r.fights is not None and r.fights.losses == 3 and r.fights.lost_causes == {"fsmash": 3}
    assert r.fights.ko_causes == {}
    env = fight_arena(2)
    r = evaluate(env, _noop_after(env, lambda: last_stock_beyond_the_blast_zone(env, -1, AGENT)), 2, progress=False)
    assert r.fights is not None and r.fights.lost_causes == {"self_destruct": 2}
    assert EvalResult.from_json(r.to_json()).fights.lost_causes == {"self_destruct": 2}


def test_a_ko_with_no_credit_is_a_self_destruct_an_unrecorded_one_unknown_and_levels_merge():
    env = fight_arena(2)
    r = evaluate(env, _noop_after(env, lambda: last_stock_beyond_the_blast_zone(env, -1)), 2, progress=False)
    assert r.fights is not None and r.fights.ko_causes == {"self_destruct": 2}
    env = fight_arena(2)
    r = evaluate(env, _noop_after(env, lambda: last_stock_beyond_the_blast_zone(env, 0)), 2, progress=False)
    assert r.fights is not None and r.fights.ko_causes == {"unknown": 2}
    other = dataclasses.replace(r, fights=dataclasses.replace(r.fights, games=2, wins=0, losses=2, draws=0,
                                                              win_rate=0.0, ko_causes={"bair": 1},
                                                              lost_causes={"fsmash": 2}))
    m, worst = merge_games([r, other])
    assert m is not None and m.games == 4 and m.win_rate == 0.5 and worst == 0.0
    assert m.ko_causes == {"unknown": 2, "bair": 1} and m.lost_causes == {"fsmash": 2}
    old = r.to_json()
    del old["lost_causes"]  # eval.json files from before lost_causes still read
    assert EvalResult.from_json(old).fights.lost_causes == {}


def test_ko_cause_names_cover_foxs_attacks():
    names = set(ko_cause_names().values())
    assert {"jab", "ftilt", "utilt", "dtilt", "fsmash", "usmash", "dsmash", "dash_attack", "nair", "fair", "bair",
            "uair", "dair", "fthrow", "bthrow", "uthrow", "dthrow", "shine", "firefox"} <= names


def test_a_worker_segment_counts_games_won_stocks_and_damage():
    env = fight_arena(3)
    player = SegmentPlayer(env, epsilon=0.0, n_step=3, gamma=0.99)
    last_stock_beyond_the_blast_zone(env, 10)
    _, stats = player.play(DuelingDQN(num_actions=env.num_actions), frames_per_env=4)
    assert stats.games == 3 and stats.wins == 3 and stats.stocks_taken == 3 and stats.stocks_lost == 0
    assert stats.episodes == 3 and stats.damage_dealt == 0.0


def test_segment_stats_with_games_cross_the_wire_and_bad_ones_are_refused():
    s = SegmentStats(episodes=2, games=2, wins=1, stocks_taken=5, stocks_lost=7, damage_dealt=412.5)
    data = encode_experience(np.zeros((3, 57), np.float32), action_set="fight", worker_id="w0", batch_seq=1,
                             model_version=1, stats=s)
    got = decode_experience(data, action_set="fight", num_actions=46, max_rows=100).stats
    assert got == s
    # A fight's returns can be negative (0.01 x damage, stocks): the manager takes them.
    assert SegmentStats.from_json('{"episodes": 1, "return_sum": -4.2}').return_sum == -4.2
    with pytest.raises(ValueError, match="wins"):
        SegmentStats.from_json('{"games": 1, "wins": 2}')
    with pytest.raises(ValueError, match="stocks_taken"):
        SegmentStats.from_json('{"stocks_taken": -1}')


def test_the_board_shows_games_under_episode(tmp_path):
    from manager.metrics import Board
    board = Board(tmp_path)
    board.episodes(SegmentStats(episodes=2, return_sum=1.0, length_sum=100.0, games=2, wins=1, stocks_taken=5,
                                stocks_lost=7, damage_dealt=412.5), step=3)
    board.close()
    tags = scalar_tags(tmp_path)
    assert {"episode/stocks_taken", "episode/stocks_lost", "episode/damage_dealt", "episode/win_rate"} <= tags
    assert not any("untouched" in t or t == "episode/hits" for t in tags), tags  # a game is not a dodging minute


def test_keep_best_prefers_the_worst_levels_win_rate_then_the_mix():
    def check(win_rate: float, worst: float) -> ModelCheck:
        games = GameFigures(games=10, wins=int(win_rate * 10), losses=0, draws=10 - int(win_rate * 10),
                            win_rate=win_rate, stocks_taken_per_game=3.0, stocks_lost_per_game=1.0,
                            damage_dealt_per_game=0.0, damage_taken_per_game=0.0, ko_causes={})
        r = EvalResult(episodes=10, untouched_share=0.0, episodes_cut=0, mean_seconds_to_first_hit=1.0,
                       damage_taken=0.0, damage_dealt=0.0, stocks_lost=1.0, stocks_taken=3.0, fights=games,
                       untouched_share_worst_level=0.0, win_rate_worst_level=worst)
        return ModelCheck(policy="model", cpu_level=[1, 9], result=r)

    a, b, c = check(0.9, 0.2), check(0.5, 0.4), check(0.6, 0.4)
    assert better((a, b"a"), b, b"b")[1] == b"b"
    assert better((b, b"b"), a, b"a")[1] == b"b"
    assert better((b, b"b"), c, b"c")[1] == b"c"


@pytest.mark.slow
def test_eval_json_for_fights_has_the_design_keys(tmp_path):
    out = tmp_path / "fight.json"
    proc = subprocess.run([sys.executable, "-m", "melee_agent.cli.main", "eval", "--config", "fight", "--policy",
                           "random", "--cpu-level", "8,9", "--episodes", "1", "--json", str(out), "--no-progress",
                           "--set", "env.compile_eval=false", "--set", "env.compile=false",  # compiling takes minutes; it has its own tests
                           "--set", "env.clock_frames=2400"],  # a 40 s clock: random loses stocks to levels 8 and 9
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(out.read_text())
    assert all(k in r for k in GAME_KEYS + ("per_level", "win_rate_worst_level"))
    assert r["games"] == 2 and set(r["per_level"]) == {"8", "9"}
    assert all(k in r["per_level"]["9"] for k in GAME_KEYS)
    assert isinstance(r["ko_causes"], dict) and "win rate" in proc.stdout
    assert "1 whole games (4 stocks, 0:40) per level" in proc.stdout  # the header gives the clock played
    # Random loses stocks in 40 s against levels 8 and 9: each lost stock is counted, by cause, and printed.
    lost = round(r["stocks_lost_per_game"] * r["games"])
    assert lost > 0 and sum(r["lost_causes"].values()) == lost and "stocks lost to: " in proc.stdout
    assert Path(r["plot"]).is_file()  # the bars of games won per level


def test_the_eval_table_names_the_causes_and_fights_plot_their_win_rate(tmp_path):
    from melee_agent.cli.eval import format_causes
    from melee_agent.report.plots import per_level_bars

    g = GameFigures(games=2, wins=1, losses=1, draws=0, win_rate=0.5, stocks_taken_per_game=2.0,
                    stocks_lost_per_game=2.5, damage_dealt_per_game=300.0, damage_taken_per_game=320.0,
                    ko_causes={"usmash": 3, "bair": 1}, lost_causes={"self_destruct": 5})
    assert format_causes(g) == "KOs by: usmash 3 (75%), bair 1 (25%)\nstocks lost to: self_destruct 5 (100%)"
    rows = [{"cpu_level": 1, "win_rate": 1.0, "untouched_share": 0.0}, {"cpu_level": 9, "win_rate": 0.5,
                                                                     "untouched_share": 0.0}]
    per_level_bars(rows, "fights", tmp_path / "bars.png", key="win_rate")
    assert (tmp_path / "bars.png").stat().st_size > 0
    with pytest.raises(ValueError, match="not 'stocks'"):
        per_level_bars(rows, "fights", tmp_path / "x.png", key="stocks")


@pytest.mark.slow
def test_train_config_fight_end_to_end(tmp_path):
    """`train --config fight` with tiny settings (a 2-second clock, one game per level): eval.json has the
    fight keys, the baselines and the level-9 games; TensorBoard has the eval/ and episode/ game tags.

    The clock is shorter than a worker's 5-second segment, so the first segment uploaded already holds finished
    games (at the segment's own length a game could end on the next one, which a loaded machine never sends)."""
    run_dir = tmp_path / "run"
    sets = ["replay.capacity=20000", "replay.block_size=500", "learner.batch_size=32", "learner.target_sync=200",
            "learner.metrics_every=10", "worker.envs=8", "worker.segment_seconds=5", "worker.upload_rows=500",
            "manager.burn_in=500", "manager.publish_every=50", "manager.checkpoint_every=200",
            "env.clock_frames=120", "env.cpu_levels=[2, 9]", "env.level_weights=[]", "train.progress_eval_episodes=2",
            "train.final_games_per_level=1", "train.final_games_level_9=2",
            "env.compile_eval=false", "env.compile=false"]  # compiling takes minutes; it has its own tests
    proc = subprocess.run([sys.executable, "-m", "melee_agent.cli.main", "train", "--config", "fight", "--minutes",
                           "0.6", "--run-dir", str(run_dir), "--no-progress", *[a for s in sets for a in ("--set", s)]],
                          cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    r = json.loads((run_dir / "eval.json").read_text())
    assert all(k in r for k in GAME_KEYS + ("per_level", "win_rate_worst_level"))
    assert r["games"] == 9 and r["cpu_level"] == list(range(1, 10)) and r["action_set"] == "fight"
    assert {k: v["games"] for k, v in r["per_level"].items()} == {str(lv): 1 for lv in range(1, 10)}
    assert r["win_rate_worst_level"] == min(v["win_rate"] for v in r["per_level"].values())
    assert r["level_9"]["games"] == 2 and r["level_9"]["cpu_level"] == 9
    assert set(r["baselines"]) == {"noop", "random", "dodger", "fighter"}
    assert "note" not in r["baselines"]["fighter"]  # scripted for the fight set: it plays the run's set
    assert all(b["games"] == 9 and "win_rate" in b for b in r["baselines"].values())
    assert all(set(p["per_level"]) == {"2", "9"} and p["games"] == 2 for p in r["curve"])
    assert (run_dir / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert r["training"]["rows"] > 0 and r["training"]["train_steps"] >= r["train_step"]
    row = compare.summarize([compare.load_run(run_dir)])["runs"][0]  # `compare` reads the folder train left
    assert row["level_9"]["games"] == 2 and row["train_steps"] == r["training"]["train_steps"]
    assert [c["win_rate"] for c in row["checks"]] == [p["win_rate"] for p in r["curve"]]
    l9 = r["level_9"]
    assert row["stocks_level_9"]["net"] == pytest.approx(l9["stocks_taken_per_game"] - l9["stocks_lost_per_game"])
    kos = l9["ko_causes"]
    assert row["top_ko"] is None if not kos else row["top_ko"]["share"] == pytest.approx(max(kos.values()) / sum(kos.values()))
    tags = scalar_tags(run_dir)
    assert {"eval/win_rate", "eval/win_rate_worst_level", "eval/win_rate_level_2", "eval/win_rate_level_9",
            "episode/stocks_taken", "episode/stocks_lost", "episode/damage_dealt"} <= tags, sorted(tags)
    assert "won" in proc.stdout and "win rate" in proc.stdout


def test_a_check_that_would_end_past_the_budget_is_skipped():
    from melee_agent.run.training import check_due  # noqa: PLC0415

    end = 3_600.0
    assert check_due(300.0, 300.0, end, 0.0) and not check_due(299.0, 300.0, end, 0.0)  # due at its time
    assert check_due(3_500.0, 3_300.0, end, 60.0)  # one as long as the last (60 s) ends before the hour
    assert not check_due(3_500.0, 3_300.0, end, 420.0)  # a 7-minute check would run on past it
    assert not check_due(3_575.0, 3_300.0, end, 5.0)  # whatever the last took, 30 s is the least a check is given


@pytest.mark.slow
def test_a_fight_eval_at_one_level_has_per_level_too(tmp_path):
    """docs/design.md lists per_level among a fight eval's keys, one level or several (it was left out for one)."""
    from melee_agent.cli.main import main

    out = tmp_path / "one.json"
    assert main(["eval", "--config", "fight", "--policy", "noop", "--cpu-level", "9", "--episodes", "1", "--json",
                 str(out), "--no-progress", "--set", "env.compile_eval=false", "--set", "env.compile=false",
                 "--set", "env.clock_frames=300"]) == 0
    r = json.loads(out.read_text())
    assert set(r["per_level"]) == {"9"} and r["per_level"]["9"]["games"] == r["games"] == 1
    assert all(k in r for k in GAME_KEYS) and all(k in r["per_level"]["9"] for k in GAME_KEYS)
