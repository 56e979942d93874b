"""`melee-agent ladder`: a round robin of models and CPU levels in the arena, rated by Elo."""

from __future__ import annotations

import json

import pytest
import torch

from melee_agent.cli.main import main
from melee_agent.league.ladder import Member, play
from melee_agent.rl.model import DuelingDQN, save_model


def _model(path, seed: int, character: str) -> str:
    torch.manual_seed(seed)
    save_model(path, DuelingDQN(num_actions=46, shared=8, stream=8), version=0, train_step=0, action_set="fight",
               character=character)
    return str(path)


@pytest.mark.slow
def test_a_model_against_itself_splits_every_game_between_the_ports(tmp_path):
    """The same model on both ports of a ditto, started as the arena starts: the records from either port add up
    to every game played, each decided by the short clock."""
    m = Member("m", path=_model(tmp_path / "m.safetensors", 0, "fox"), character="fox")
    w, lo, d = play(m, m, 4, clock_frames=120)
    assert w + lo + d == 4


@pytest.mark.slow
def test_ladder_prints_a_table_and_writes_json_and_a_plot(tmp_path, capsys):
    a = _model(tmp_path / "a.safetensors", 1, "fox")
    b = _model(tmp_path / "b.safetensors", 2, "marth")
    rc = main(["ladder", a, b, "--cpu-levels", "1", "--games", "2", "--clock-frames", "120",
               "--json", str(tmp_path / "l.json"), "--plot", str(tmp_path / "l.png")])
    assert rc == 0
    doc = json.loads((tmp_path / "l.json").read_text())
    assert {r["name"] for r in doc["ratings"]} == {"a", "b", "cpu1"}
    assert {r["character"] for r in doc["ratings"] if r["name"] == "b"} == {"marth"}
    assert len(doc["records"]) == 3 and all(r["wins"] + r["losses"] + r["draws"] == 2 for r in doc["records"])
    assert (tmp_path / "l.png").read_bytes()[:4] == b"\x89PNG"
    assert "Elo" in capsys.readouterr().out


def test_ladder_refuses_bad_input_before_playing(tmp_path, capsys):
    assert main(["ladder", str(tmp_path / "missing.safetensors"), "--cpu-levels", "9"]) != 0
    assert "model file not found" in capsys.readouterr().err
    a = _model(tmp_path / "a.safetensors", 1, "fox")
    assert main(["ladder", a]) != 0
    assert "two entrants" in capsys.readouterr().err
    assert main(["ladder", a, "--cpu-levels", "10"]) != 0
    assert "1-9" in capsys.readouterr().err
