"""`melee-agent eval`: the report, the JSON keys from docs/design.md, the per-level plot, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from melee_agent.rl.model import DuelingDQN, save_model

ROOT = Path(__file__).resolve().parents[2]
KEYS = ("policy", "cpu_level", "episodes", "untouched_share", "mean_seconds_to_first_hit", "damage_taken",
        "damage_dealt", "stocks_lost", "stocks_taken")


def _eval(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "melee_agent.cli.main", "eval", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_dodger_survives_level_9_and_the_json_has_the_design_keys(tmp_path):
    out = tmp_path / "dodger.json"
    # The dodger is scripted against the designed CPU's attacks; Melee's CPU (the default) swings whenever a move
    # reaches, and no scripted dodge survives it a minute.
    proc = _eval("--policy", "dodger", "--cpu-level", "9", "--episodes", "4", "--json", str(out),
                 "--set", "env.cpu=designed")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(out.read_text())
    assert all(k in r for k in KEYS)
    assert r["episodes"] == 4 and r["cpu_level"] == 9 and r["policy"] == "dodger"
    assert r["untouched_share"] == 1.0 and r["mean_seconds_to_first_hit"] == 60.0
    assert "untouched" in proc.stdout and "100.0%" in proc.stdout


@pytest.mark.slow
def test_all_levels_draw_a_plot_and_random_lasts_longer_at_level_1(tmp_path):
    out = tmp_path / "random.json"
    # 10-second episodes: the dodging game plays the fights' engine, whose frames cost more op by op, and a random
    # Fox can last a whole minute at level 1; the comparison needs no more than 10 seconds.
    proc = _eval("--policy", "random", "--cpu-level", "all", "--episodes", "16", "--json", str(out),
                 "--set", "env.max_frames=600")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(out.read_text())
    levels = r["levels"]
    assert [x["cpu_level"] for x in levels] == list(range(1, 10))
    assert levels[0]["mean_seconds_to_first_hit"] > levels[-1]["mean_seconds_to_first_hit"]
    assert Path(r["plot"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_a_model_file_is_a_policy(tmp_path):
    path = tmp_path / "m.safetensors"
    save_model(path, DuelingDQN(num_actions=5), version=1, train_step=0, action_set="untouchable")
    out = tmp_path / "m.json"
    proc = _eval("--policy", str(path), "--cpu-level", "9", "--episodes", "2", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["policy"] == str(path)
    assert json.loads(out.read_text())["stage"] == "final_destination"  # a file without stages: Final Destination


@pytest.mark.parametrize("args, message", [
    (["--cpu-level", "10"], "between 1 and 9"),
    (["--cpu-level", "hard"], "--cpu-level must be"),
    (["--policy", "nothere.safetensors"], "model file not found"),
    (["--policy", "smart"], "unknown policy"),
    (["--episodes", "0"], "--episodes: must be a positive integer"),
    (["--stage", "corneria"], "--stage 'corneria' is not a stage; use one of final_destination"),
    (["--set", "env.stage=batlefield"], "env.stage 'batlefield' is not a stage (did you mean battlefield?)"),
])
def test_bad_input_gets_one_clear_line(args, message):
    proc = _eval(*args)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr
