"""scripts/ko_context.py on real arena games: every hit counted once, with the damage Marth took."""

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "ko_context.py"


def _load():
    spec = importlib.util.spec_from_file_location("ko_context", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_counts_every_hit_and_its_damage():
    ko = _load()
    from melee_agent.arena import Arena

    # The same games as the script plays, followed here by Marth's percent on every frame.
    env = Arena(2, cpu_level=1, seed=7, game="fight", max_frames=900)
    risen = []
    prev = None

    def watch(s):
        nonlocal prev
        if prev is not None:
            d = (s.players.percent[:, 1] - prev.players.percent[:, 1]).clamp(min=0)
            same = s.players.stock[:, 1] == prev.players.stock[:, 1]
            risen.append(float((d * same).sum()))
        prev = s

    env.on_frame = watch
    from melee_agent.policies import make_policy
    act = make_policy("fighter", env.action_set)
    obs, done_games = env.reset(), 0
    while done_games < 2:
        obs, _, done, _ = env.step(act(obs))
        done_games += int(done.sum())

    r = ko.play("fighter", 1, 2, seed=7, clock_frames=900)
    assert r["games"] >= 2 and sum(r["hits"].values()) > 0
    assert sum(r["damage"].values()) == pytest.approx(sum(risen), abs=0.5)
    assert set(r["hit_share"]) == set(r["hits"]) and sum(r["hit_share"].values()) == pytest.approx(1.0, abs=1e-3)
    assert sum(c["kos"] for c in r["ko_context"]) <= sum(r["kos"].values())
    assert sum(r["decisions"].values()) == pytest.approx(1.0, abs=1e-3)

    text = ko.report(r)
    top = max(r["hits"], key=r["hits"].get)
    assert f"{top}  " in text and f"{r['games']} games" in text
    json.dumps(r)  # the report is plain JSON


def test_bad_arguments_are_refused_before_any_game(tmp_path, capsys):
    ko = _load()
    out = tmp_path / "k.json"
    for bad in (["--cpu-level", "10"], ["--games", "0"]):
        with pytest.raises(SystemExit):
            ko.main(["--policy", "fighter", "--json", str(out), *bad])
        assert "--cpu-level must be 1-9 and --games >= 1" in capsys.readouterr().err
    assert not out.exists()
