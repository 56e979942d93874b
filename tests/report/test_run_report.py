"""`RunReport`: eval.json read and written by one class; the reports `train` left in docs/ read back unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from melee_agent.report.run_report import ModelCheck, RunReport, TrainingFigures
from tests.run_reports import check, dodge_result, fight_result, report

DOCS = Path(__file__).resolve().parents[2] / "docs"
SHIPPED = sorted([DOCS / "train-eval.json", *(DOCS / "gpu").glob("train-*-eval.json")])


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_a_report_train_wrote_reads_back_to_the_same_document(path):
    doc = json.loads(path.read_text())
    r = RunReport.from_json(doc, str(path))
    assert r.to_json() == doc
    assert not r.whole_games
    assert r.model.result.untouched_share == doc["untouched_share"] and len(r.curve) == len(doc["curve"])


def test_the_shipped_reports_span_the_old_shapes():
    """The files above are the old shapes from_json must read: without ``training``, and with only steps and rows."""
    docs = [json.loads(p.read_text()) for p in SHIPPED]
    assert any("training" not in d for d in docs)
    assert any(set(d.get("training", {})) == {"rows", "train_steps"} for d in docs)


def test_a_fight_report_keeps_its_level_9_action_set_and_delay():
    model = check(fight_result(0.9, 0.5, {lv: 0.9 for lv in range(1, 10)}), version=4, step=4000, minutes=2.0)
    level_9 = check(fight_result(0.5, games=20, ko_causes={"usmash": 3}))
    r = report(model, [model], TrainingFigures(train_steps=4000, rows=10, fused=True, envs=8), level_9)
    doc = json.loads(json.dumps(r.to_json()))
    assert doc["level_9"]["ko_causes"] == {"usmash": 3} and doc["action_set"] == "fight" and doc["delay_frames"] == 0
    assert doc["training"] == {"train_steps": 4000, "rows": 10, "fused": True, "envs": 8}
    back = RunReport.from_json(doc)
    assert back == r and back.whole_games
    # A fight run with final_games_level_9 = 0 writes level_9 as null, and it reads back so.
    assert RunReport.from_json({**doc, "level_9": None}).to_json()["level_9"] is None


def test_a_dodging_report_keeps_its_level_9_episodes_and_one_without_them_has_none():
    model = check(dodge_result(0.8, 0.7, {lv: 0.8 for lv in range(1, 10)}, episodes=1_800), version=3, step=3000)
    level_9 = check(dodge_result(0.82, episodes=1_000))
    doc = json.loads(json.dumps(report(model, [model], level_9=level_9).to_json()))
    assert doc["level_9"]["episodes"] == 1_000 and doc["level_9"]["untouched_share"] == 0.82
    assert "action_set" not in doc  # a fight's fields stay a fight's
    back = RunReport.from_json(doc)
    assert back.level_9 == level_9 and not back.whole_games
    assert "level_9" not in report(model, [model]).to_json()  # as reports written before it


def test_a_baseline_played_on_another_action_set_keeps_it_and_the_run_keeps_its_own():
    base = ModelCheck("fighter", [9], fight_result(0.1), action_set="basic", note="scripted for 'basic'")
    r = report(check(fight_result(0.9)), [check(fight_result(0.9))])
    doc = RunReport(**{**r.__dict__, "baselines": {"fighter": base}}).to_json()
    back = RunReport.from_json(doc)
    assert back.action_set == "fight" and back.model.action_set is None
    assert back.baselines["fighter"].action_set == "basic" and back.baselines["fighter"].note == "scripted for 'basic'"


@pytest.mark.parametrize("damage, why", [
    ({"kept": "first"}, "'kept' must be 'best' or 'last'"),
    ({"trained_levels": "9"}, "'trained_levels' must be a list"),
    ({"training": {"rows": "many"}}, "training: field 'rows' must be int"),
    ({"curve": [{"policy": "model"}]}, "curve point 0: field 'cpu_level'"),
    ({"baselines": {"noop": {"policy": "noop", "cpu_level": 9}}}, "baseline noop: missing field 'episodes'"),
])
def test_a_damaged_report_is_refused_naming_the_field(damage, why):
    doc = report(check(fight_result(0.9)), [check(fight_result(0.9))]).to_json()
    with pytest.raises(ValueError, match=why):
        RunReport.from_json({**doc, **damage})


def test_module_examples_run():
    import melee_agent.games as games
    import melee_agent.report.run_report as run_report
    from tests.examples_kit import examples_failed

    assert examples_failed(run_report) == 0 and examples_failed(games) == 0
