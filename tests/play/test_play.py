"""melee_agent/play without a browser: a person's controller frames move Fox in the arena (and Marth against a
policy), the input delay holds them back, a game ends with a result, is saved for `watch --replay` and recorded
as experience rows a manager accepts."""

from __future__ import annotations

import argparse

import pytest
import torch
from melee.enums import Action

from melee_agent.envs.actions import COL, get_action_set
from melee_agent.cli.main import main
from melee_agent.cli.play import build_app
from melee_agent.play.human import parse
from melee_agent.play.keep import finished_game, snapshot
from melee_agent.play.replay_file import load_frames
from melee_agent.play.session import PlayOptions, PlaySession
from melee_agent.rl.policies import make_policy
from melee_agent.rl.rows import ACTION, DISCOUNT
from melee_agent.io.wire import decode_experience


def _play(s: PlaySession, pad: dict, frames: int) -> list[dict]:
    s.set_input(parse({**pad, "seq": s.read_seq + 1}))
    return [s.step() for _ in range(frames)]


@pytest.mark.slow
def test_right_moves_fox_the_jump_button_lifts_him_and_a_attacks_against_the_cpu():
    s = PlaySession(PlayOptions(cpu_level=1, seed=3))
    fox = lambda: s.players()["fox"]  # noqa: E731
    x0 = fox()["position_x"]
    toward = 1.0 if x0 < 0 else 0.0  # toward the stage's centre: not off its edge
    _play(s, {"main_x": toward}, 20)
    assert (fox()["position_x"] - x0) * (toward - 0.5) > 10
    _play(s, {}, 20)
    _play(s, {"y": True}, 8)
    assert fox()["on_ground"] == 0.0 and fox()["position_y"] > 0
    for _ in range(90):  # lands again (a full hop and a fall: about 50 frames)
        _play(s, {}, 1)
        if fox()["on_ground"] == 1.0:
            break
    assert fox()["on_ground"] == 1.0
    _play(s, {"a": True}, 2)
    assert int(fox()["action"]) not in (Action.STANDING.value, Action.FALLING.value)
    assert s.arena.state.players.move[0, 0] >= 0  # a move of the table: the jab


def test_the_input_delay_holds_a_press_back_that_many_frames():
    s = PlaySession(PlayOptions(cpu_level=1, delay_frames=3))
    s.set_input(parse({"main_x": 1.0, "seq": 0}))
    seqs = [s.step()["seq"] for _ in range(5)]
    assert seqs == [-1, -1, -1, 0, 0]


def test_as_marth_a_person_moves_marth_while_a_policy_plays_fox():
    o = PlayOptions(policy="noop", human="marth", action_set="fight", label="noop")
    s = PlaySession(o, make_policy("noop", "fight"))
    m0, f0 = s.players()["marth"]["position_x"], s.players()["fox"]["position_x"]
    _play(s, {"main_x": 0.0}, 30)
    assert s.players()["marth"]["position_x"] < m0 - 20
    assert s.players()["fox"]["position_x"] == pytest.approx(f0)  # noop stands


def test_bad_games_and_bad_controller_frames_are_refused_naming_the_problem():
    with pytest.raises(ValueError, match="CPU plays Marth only"):
        PlaySession(PlayOptions(human="marth"))
    with pytest.raises(ValueError, match="--delay-frames"):
        PlaySession(PlayOptions(delay_frames=61))
    with pytest.raises(ValueError, match="b must be true or false"):
        parse({"b": 1})
    with pytest.raises(ValueError, match="unknown controller fields"):
        parse({"start": True})
    args = argparse.Namespace(policy="nope.safetensors", human="fox", cpu_level=9, cpu="designed", compile=False, delay_frames=0,
                              seconds=5.0, seed=0, save=None, record=None, spectate=None)
    with pytest.raises(ValueError, match="model file not found"):
        build_app(args)


@pytest.mark.slow
def test_a_finished_game_is_saved_for_watch_and_recorded_as_rows(tmp_path):
    s = PlaySession(PlayOptions(cpu_level=9, seconds=1.0), keep_rows=True)
    frames = _play(s, {"main_x": 1.0}, 40) + _play(s, {"a": True}, 20)
    assert frames[-1]["over"] and s.step() is None
    assert s.result["winner"] in ("you", "opponent", "draw") and s.result["frames"] == 60
    paths = finished_game(snapshot(s), tmp_path / "games", tmp_path / "rows", 0.99)
    game = load_frames(paths[0])
    assert len(game.views) == 61 and game.labels == ("you", "CPU level 9")
    assert game.views[-1].frame == 60
    aset = get_action_set("fight")
    exp = decode_experience(open(paths[1], "rb").read(), action_set="fight", num_actions=aset.num_actions,
                            max_rows=10_000)
    rows = exp.rows
    assert exp.meta["worker_id"] == "human" and 2 <= len(rows) <= 60
    assert rows[-1, DISCOUNT] == 0.0 and (rows[:-1, DISCOUNT] == pytest.approx(0.99))
    first = aset.table[int(rows[0, ACTION])][0]  # the label of the first frames: a macro pushing right
    assert first[COL["stick_x"]] > 0.5
    out = tmp_path / "replay.gif"
    assert main(["watch", "--replay", paths[0], "--out", str(out), "--fps", "10"]) == 0
    from PIL import Image

    with Image.open(out) as im:
        assert im.n_frames == 11  # frames 0, 6, ..., 60 at 10 of the game's 60 a second


@pytest.mark.parametrize("human", ["fox", "marth"])
def test_a_fight_model_file_plays_the_other_port(tmp_path, human):
    from melee_agent.rl.model import DuelingDQN, model_to_bytes

    aset = get_action_set("fight")
    torch.manual_seed(0)
    path = tmp_path / "m.safetensors"
    path.write_bytes(model_to_bytes(DuelingDQN(num_actions=aset.num_actions, shared=8, stream=8), version=3,
                                    train_step=30, action_set="fight", delay_frames=2))
    args = argparse.Namespace(policy=str(path), human=human, cpu_level=9, cpu="designed", compile=False, delay_frames=0,
                              seconds=5.0, seed=0, save=None, record=None, spectate=None)
    s = build_app(args).state.session
    assert s.o.policy_delay == 2 and s.opponent.port == (1 if human == "fox" else 0)
    frames = [s.step() for _ in range(20)]
    assert frames[-1]["frame"] == 20 and s.opponent.previous in range(aset.num_actions)
