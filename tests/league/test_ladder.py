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
    tally: dict[str, int] = {}
    w, lo, d = play(m, m, 4, clock_frames=120, tally=tally)
    assert w + lo + d == 4
    assert tally == {"at_time": 4}  # two seconds: nobody loses four stocks, the clock decides every game


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
    for r in doc["records"]:  # each port's record adds up to the pair's: one game from each port between models
        ports = r["by_port"]
        for key in ("wins", "losses", "draws"):
            assert sum(p[key] for p in ports.values()) == r[key]
        assert set(ports) == ({"a_on_port_0"} if r["b"] == "cpu1" else {"a_on_port_0", "a_on_port_1"})
        if r["b"] != "cpu1":
            assert [sum(p.values()) for p in ports.values()] == [1, 1]
    assert all(r["at_time"] == 2 for r in doc["records"])  # a 120-frame clock decides every game
    assert (tmp_path / "l.png").read_bytes()[:4] == b"\x89PNG"
    out = capsys.readouterr().out
    assert "Elo" in out and "a on port 0" in out and "a on port 1" in out and "at time" in out


@pytest.mark.slow
def test_a_character_suffix_puts_a_model_on_another_character(tmp_path, capsys):
    """``MODEL:marth`` plays Marth whatever the file records; the entrant's name says so, and the same file may
    enter twice as two characters."""
    a = _model(tmp_path / "a.safetensors", 1, "fox")
    rc = main(["ladder", a, a + ":marth", "--games", "2", "--clock-frames", "60", "--json", str(tmp_path / "l.json")])
    assert rc == 0
    doc = json.loads((tmp_path / "l.json").read_text())
    assert {(r["name"], r["character"]) for r in doc["ratings"]} == {("a", "fox"), ("a as marth", "marth")}
    assert (doc["records"][0]["a"], doc["records"][0]["b"]) == ("a", "a as marth")


def test_split_model_arg_keeps_colons_that_name_no_character():
    from melee_agent.league.ladder import split_model_arg

    assert split_model_arg("x.safetensors:Marth") == ("x.safetensors", "marth")
    assert split_model_arg("dir:1/x.safetensors") == ("dir:1/x.safetensors", None)
    assert split_model_arg("x.safetensors:fox") == ("x.safetensors", "fox")


def test_ladder_refuses_bad_input_before_playing(tmp_path, capsys):
    assert main(["ladder", str(tmp_path / "missing.safetensors"), "--cpu-levels", "9"]) != 0
    assert "model file not found" in capsys.readouterr().err
    a = _model(tmp_path / "a.safetensors", 1, "fox")
    assert main(["ladder", a]) != 0
    assert "two entrants" in capsys.readouterr().err
    assert main(["ladder", a, "--cpu-levels", "10"]) != 0
    assert "1-9" in capsys.readouterr().err


def test_plot_league_draws_snapshots_by_step_and_the_cpu_levels(tmp_path):
    from melee_agent.league.ladder import plot_league

    members = [{"name": f"cpu{lv}", "kind": "cpu", "cpu_level": lv, "elo": 1400.0 + 20 * lv, "joined_at_step": None}
               for lv in (1, 9)]
    members += [{"name": f"snap-{s}", "kind": "snapshot", "cpu_level": None, "elo": 1300.0 + s / 100,
                 "joined_at_step": s} for s in (20_000, 40_000)]
    plot_league({"members": members, "main_elo": 1800.0}, tmp_path / "league.png", final_step=50_000)
    assert (tmp_path / "league.png").read_bytes()[:4] == b"\x89PNG"
    plot_league({"members": members[:2], "main_elo": 1500.0}, tmp_path / "none.png")  # no snapshot taken yet
    assert (tmp_path / "none.png").stat().st_size > 0
