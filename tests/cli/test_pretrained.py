"""Shipped models: ``pretrained:NAME`` plays right after set-up, with no training, wherever a model file goes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from melee_agent import pretrained
from melee_agent.cli.common import model_settings

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "melee_agent.cli.main"]
# Compiling the fight arena for one game costs minutes; the compiled arena has its own tests.
NO_COMPILE = ["--set", "env.compile_eval=false", "--set", "env.compile=false"]
# A whole 8-minute game op by op at one environment takes minutes: a 10-second clock ends it.
SHORT_GAME = ["--set", "env.clock_frames=600"]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_the_shipped_models_record_what_they_play():
    assert "fight" in pretrained.names() and "dodge" in pretrained.names()
    assert model_settings(str(pretrained.path("fight")))["env.game"] == "fight"
    assert model_settings(str(pretrained.path("dodge")))["env.game"] == "dodge"
    # The 18-frame model carries its delay and padded set, so eval and watch play it with 18 frames of delay.
    assert model_settings(str(pretrained.path("fight-d18"))) == {"env.game": "fight", "env.action_set": "fight:18",
                                                                  "env.delay_frames": 18,
                                                                  "env.state_layout": "untouchable-27"}
    assert pretrained.resolve("pretrained:fight") == str(pretrained.path("fight"))


@pytest.mark.slow
def test_eval_and_watch_play_the_shipped_fight_model_with_no_training(tmp_path):
    out = tmp_path / "eval.json"
    proc = _cli("eval", "--policy", "pretrained:fight", "--cpu-level", "1", "--episodes", "1", "--json", str(out),
                "--no-progress", *NO_COMPILE, *SHORT_GAME, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    # A fight model's own config (fight) was chosen from the file, with no --config: whole games were played.
    assert doc["games"] == 1 and doc["policy"] == str(pretrained.path("fight")) and set(doc["per_level"]) == {"1"}
    gif = tmp_path / "game.gif"
    proc = _cli("watch", "--policy", "pretrained:fight", "--seconds", "0.5", "--out", str(gif), "--no-progress",
                *NO_COMPILE, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert gif.read_bytes()[:6] == b"GIF89a"


def test_an_unknown_shipped_model_is_refused_before_any_work(tmp_path):
    out = tmp_path / "eval.json"
    proc = _cli("eval", "--policy", "pretrained:nope", "--json", str(out), cwd=tmp_path)
    assert proc.returncode == 2
    assert "pretrained:nope" in proc.stderr and "fight" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


def test_a_shipped_model_keeps_a_character_suffix_in_ladder(tmp_path):
    """``ladder pretrained:fight:marth`` is the shipped file entered as Marth (the suffix survives the lookup)."""
    out = tmp_path / "ladder.json"
    proc = _cli("ladder", "pretrained:fight", "pretrained:fight:marth", "--games", "2", "--clock-frames", "30",
                "--json", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert {r["character"] for r in doc["ratings"]} == {"fox", "marth"}
    assert all(r["path"] == str(pretrained.path("fight")) for r in doc["ratings"])
