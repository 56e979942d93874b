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
def test_counts_every_hit_and_ko_of_exactly_the_games_asked_for():
    ko = _load()
    # Two whole games of the scripted fighter against level 1 on a 40-second clock (it takes stocks in that time).
    r = ko.play("fighter", 1, 2, seed=7, clock_frames=2_400)
    assert r["games"] == 2
    kos = sum(r["kos"].values())
    # The frame-by-frame counts agree with the arena's own account of the same two games.
    assert kos == r["arena_totals"]["stocks_taken"] and 0 < kos <= 4 * 2
    assert sum(r["hits"].values()) > kos
    assert sum(r["damage"].values()) == pytest.approx(r["arena_totals"]["damage_dealt"], abs=0.5)
    # Every KO credited to a move has its context, under that move.
    credited = {m: n for m, n in r["kos"].items() if m != "self_destruct"}
    by_move: dict[str, int] = {}
    for c in r["ko_context"]:
        by_move[c["move"]] = by_move.get(c["move"], 0) + c["kos"]
        assert c["marth"] in ("ground", "air") and c["marth_vs_fox"] in ("above", "level", "below")
    assert by_move == credited
    text = ko.report(r)
    top = max(r["hits"], key=r["hits"].get)
    assert f"{top}  " in text and "2 games" in text
    json.dumps(r)  # the report is plain JSON


def test_bad_arguments_are_refused_before_any_game(tmp_path, capsys):
    ko = _load()
    out = tmp_path / "k.json"
    for bad in (["--cpu-level", "10"], ["--games", "0"]):
        with pytest.raises(SystemExit):
            ko.main(["--policy", "fighter", "--json", str(out), *bad])
        assert "--cpu-level must be 1-9 and --games >= 1" in capsys.readouterr().err
    assert not out.exists()
