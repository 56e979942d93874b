"""EvalResult: evaluate()'s typed report and its one JSON encoding (docs/design.md "Commands", "Fights")."""

from __future__ import annotations

import json

import pytest
import torch

from melee_agent.arena import Arena
from melee_agent.report.evaluate import EvalResult, GameFigures, evaluate

DODGE_KEYS = {"episodes", "untouched_share", "episodes_cut", "mean_seconds_to_first_hit", "damage_taken",
              "damage_dealt", "stocks_lost", "stocks_taken"}
GAME_KEYS = {"games", "wins", "losses", "draws", "win_rate", "stocks_taken_per_game", "stocks_lost_per_game",
             "damage_dealt_per_game", "damage_taken_per_game", "ko_causes", "lost_causes"}


def dodge(share: float = 0.5) -> EvalResult:
    return EvalResult(episodes=4, untouched_share=share, episodes_cut=1, mean_seconds_to_first_hit=12.5,
                      damage_taken=30.0, damage_dealt=2.5, stocks_lost=0.25, stocks_taken=0.0)


def fight(win_rate: float) -> EvalResult:
    g = GameFigures(games=4, wins=int(4 * win_rate), losses=4 - int(4 * win_rate), draws=0, win_rate=win_rate,
                    stocks_taken_per_game=2.5, stocks_lost_per_game=3.0, damage_dealt_per_game=250.0,
                    damage_taken_per_game=300.5, ko_causes={"fsmash": 6, "unknown": 4},
                    lost_causes={"self_destruct": 7, "fsmash": 5})
    return EvalResult(episodes=4, untouched_share=0.0, episodes_cut=0, mean_seconds_to_first_hit=3.0,
                      damage_taken=300.5, damage_dealt=250.0, stocks_lost=3.0, stocks_taken=2.5, fights=g)


def test_a_dodge_result_round_trips_through_its_json():
    r = dodge()
    doc = r.to_json()
    assert set(doc) == DODGE_KEYS
    assert EvalResult.from_json(json.loads(json.dumps(doc))) == r


def test_a_fight_result_with_levels_round_trips_through_its_json():
    per = {8: fight(0.75), 9: fight(0.25)}
    r = EvalResult(episodes=8, untouched_share=0.0, episodes_cut=0, mean_seconds_to_first_hit=3.0, damage_taken=300.5,
                   damage_dealt=250.0, stocks_lost=3.0, stocks_taken=2.5, fights=fight(0.5).fights, per_level=per,
                   untouched_share_worst_level=0.0, win_rate_worst_level=0.25)
    doc = r.to_json()
    assert set(doc) == DODGE_KEYS | GAME_KEYS | {"per_level", "untouched_share_worst_level", "win_rate_worst_level"}
    assert set(doc["per_level"]) == {"8", "9"} and set(doc["per_level"]["9"]) == DODGE_KEYS | GAME_KEYS
    back = EvalResult.from_json(json.loads(json.dumps(doc)))
    assert back == r and back.per_level is not None and back.per_level[9].win_rate == 0.25
    # Other keys a document carries beside the figures (policy, seconds...) are not the result's.
    assert EvalResult.from_json({"policy": "random", "seconds": 1.0, **doc}) == r


@pytest.mark.parametrize("field", ["episodes", "untouched_share", "win_rate", "ko_causes"])
def test_from_json_names_a_missing_field(field):
    doc = fight(0.5).to_json()
    del doc[field]
    with pytest.raises(ValueError, match=repr(field)):
        EvalResult.from_json(doc)


def test_from_json_names_a_wrong_field_and_a_bad_level():
    with pytest.raises(ValueError, match="'episodes'"):
        EvalResult.from_json({**dodge().to_json(), "episodes": "4"})
    with pytest.raises(ValueError, match="'untouched_share'"):
        EvalResult.from_json({**dodge().to_json(), "per_level": {"9": {**dodge().to_json(), "untouched_share": None}}})
    with pytest.raises(ValueError, match="per_level"):
        EvalResult.from_json({**dodge().to_json(), "per_level": {"nine": dodge().to_json()}})


def test_evaluate_on_a_small_arena_returns_an_eval_result_with_the_documented_keys():
    r = evaluate(Arena(2, cpu_level=1, seed=0, max_frames=30), lambda obs: torch.zeros(2, dtype=torch.long),
                 episodes=2, progress=False)
    assert isinstance(r, EvalResult) and r.episodes == 2 and r.fights is None and r.per_level is None
    assert set(r.to_json()) == DODGE_KEYS
    assert EvalResult.from_json(r.to_json()) == r
    filled = r.with_worst_levels()
    assert filled.untouched_share_worst_level == r.untouched_share and filled.win_rate_worst_level is None
