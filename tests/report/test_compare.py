"""`melee-agent compare`: run folders side by side, the settings that set them apart, groups, errors.

The run folders here hold the real config of a shipped config file (``save_resolved_config``) and an
``eval.json`` built as ``train`` builds it (a ``RunReport``, tests/run_reports.py); the end-to-end train tests compare the folders a real
``train`` leaves (test_train_e2e.py, test_fight_train.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from melee_agent.report import compare
from melee_agent.cli.main import main
from melee_agent.config import load_config, save_resolved_config
from melee_agent.report.run_report import ModelCheck, TrainingFigures
from tests.run_reports import check, dodge_result, fight_result, report


def _check(minutes: float, mix: float, worst: float) -> ModelCheck:
    return check(fight_result(mix, worst), minutes=minutes, version=1, step=1000)


def _fight_run(root: Path, name: str, sets: list[str], level_9_wins: int, kos: dict[str, int],
               steps: int = 90_345) -> Path:
    run = root / name
    run.mkdir(parents=True)
    save_resolved_config(load_config("fight", sets), run)
    per_level = {lv: 1.0 if lv < 9 else level_9_wins / 1000 for lv in range(1, 10)}
    model = check(fight_result(0.99, level_9_wins / 1000, per_level), version=steps // 1000, step=steps // 1000 * 1000)
    level_9 = check(fight_result(level_9_wins / 1000, games=1000, ko_causes=kos, taken=3.9, lost=2.0))
    doc = report(model, [_check(0.0, 0.0, 0.0), _check(5.0, 0.8, 0.2), _check(10.0, 1.0, 1.0)],
                 TrainingFigures(train_steps=steps, rows=3_000_000), level_9, str(run)).to_json()
    (run / "eval.json").write_text(json.dumps(doc))
    return run


def test_the_setting_that_differs_is_named_and_runs_sharing_it_are_averaged(tmp_path, capsys):
    a1 = _fight_run(tmp_path, "A1", ["learner.lr=1e-4"], 960, {"usmash": 90, "bair": 10})
    a2 = _fight_run(tmp_path, "A2", ["learner.lr=1e-4"], 940, {"usmash": 70, "uair": 30})
    b1 = _fight_run(tmp_path, "B1", [], 990, {"usmash": 99, "utilt": 1}, steps=120_345)
    doc = compare.summarize([compare.load_run(p) for p in (a1, a2, b1)])
    assert doc["settings"] == ["learner.lr"]  # every other value of the fight config is shared
    rows = {r["run"]: r for r in doc["runs"]}
    assert rows["A1"]["settings"] == {"learner.lr": 1e-4} and rows["B1"]["settings"] == {"learner.lr": 2.5e-4}
    assert rows["A2"]["top_ko"] == {"move": "usmash", "share": 0.7}
    assert rows["B1"]["train_steps"] == 120_345 and rows["B1"]["rows"] == 3_000_000 and rows["B1"]["model_step"] == 120_000
    assert rows["A1"]["final_worst_levels"] == [9]
    assert [c["worst_level"] for c in rows["A1"]["checks"]] == [0.0, 0.2, 1.0]
    assert rows["A1"]["stocks_level_9"]["net"] == pytest.approx(1.9)
    groups = {g["runs"][0]: g for g in doc["groups"]}
    assert set(groups) == {"A1", "B1"} and groups["A1"]["runs"] == ["A1", "A2"]
    assert groups["A1"]["level_9_win_rate"] == {"mean": pytest.approx(0.95), "runs": 2}
    assert groups["A1"]["top_ko_share"]["mean"] == pytest.approx(0.8)
    assert groups["B1"]["train_steps"] == {"mean": 120_345, "runs": 1}

    out_json, out_png = tmp_path / "cmp.json", tmp_path / "cmp.png"
    assert main(["compare", str(a1), str(a2), str(b1), "--json", str(out_json), "--plot", str(out_png)]) == 0
    text = capsys.readouterr().out
    assert "settings that differ: learner.lr" in text and "usmash 70.0%" in text and "94.0% (940-60-0)" in text
    assert "A1 A2" in text  # the group's line
    assert json.loads(out_json.read_text()) == json.loads(json.dumps(doc))
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_repeats_of_one_config_have_no_differing_setting_and_one_group_averaged(tmp_path):
    runs = [_fight_run(tmp_path, "R1", [], 950, {"usmash": 1}), _fight_run(tmp_path, "R2", [], 970, {"usmash": 1})]
    doc = compare.summarize([compare.load_run(p) for p in runs])
    assert doc["settings"] == [] and len(doc["groups"]) == 1
    text = compare.format_table(doc)
    assert "none (repeats of one config)" in text and "(the same config)  R1 R2" in text
    assert doc["groups"][0]["level_9_win_rate"]["mean"] == pytest.approx(0.96)
    one = compare.format_table(compare.summarize([compare.load_run(runs[0])]))
    assert "mean level 9" not in one  # one run alone: no group line


def test_a_folder_that_is_not_a_finished_run_is_refused_by_name_and_nothing_is_written(tmp_path, capsys):
    good = _fight_run(tmp_path, "good", [], 950, {"usmash": 1})
    going = tmp_path / "going"
    going.mkdir()
    save_resolved_config(load_config("fight"), going)
    out = tmp_path / "cmp.json"
    assert main(["compare", str(good), str(going), "--json", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{going}: no eval.json" in err and "still training" in err
    assert not out.exists()
    # An output that cannot be written is named before anything is: the JSON is not left without its plot.
    (tmp_path / "taken.png").mkdir()
    assert main(["compare", str(good), "--json", str(out), "--plot", str(tmp_path / "taken.png")]) == 2
    assert "taken.png': is a folder" in capsys.readouterr().err and not out.exists()
    # A folder that is not there yet is made, as for every command's output.
    assert main(["compare", str(good), "--json", str(tmp_path / "nowhere" / "c.json")]) == 0
    assert json.loads((tmp_path / "nowhere" / "c.json").read_text())["runs"]
    assert main(["compare", str(good), "--plot", str(tmp_path / "c.svg")]) == 2
    assert "name it .png" in capsys.readouterr().err
    assert main(["compare", str(good), str(tmp_path / "good") + "/"]) == 2
    assert "given twice" in capsys.readouterr().err
    with pytest.raises(compare.CompareError, match="no such run folder"):
        compare.load_run(tmp_path / "missing")
    (going / "eval.json").write_text("{not json")
    with pytest.raises(compare.CompareError, match="eval.json is not valid JSON"):
        compare.load_run(going)
    (going / "eval.json").write_text(json.dumps({"wins": 3}))
    with pytest.raises(compare.CompareError, match="not a training run's report"):
        compare.load_run(going)
    doc = json.loads((good / "eval.json").read_text())
    for damage, why in (({"curve": None}, "'curve' must be a list"), ({"curve": [1, 2]}, "curve point 0: must be a JSON"),
                        ({"per_level": {"9": None}}, "per_level 9: must be a JSON object"),
                        ({"per_level": {"nine": {"win_rate": 1.0}}}, "'per_level' must be keyed by CPU level"),
                        ({"level_9": {**doc["level_9"], "stocks_lost_per_game": "x"}},
                         "level_9: field 'stocks_lost_per_game' must be int or float"),
                        ({"level_9": {**doc["level_9"], "ko_causes": None}}, "level_9: field 'ko_causes' must be dict")):
        (going / "eval.json").write_text(json.dumps({**doc, **damage}))
        with pytest.raises(compare.CompareError, match=f"{going}/eval.json: not a training run's report.*{why}"):
            compare.load_run(going)


def test_fights_and_dodging_runs_are_not_mixed(tmp_path):
    fight = _fight_run(tmp_path, "fight", [], 950, {"usmash": 1})
    dodge = tmp_path / "dodge"
    dodge.mkdir()
    save_resolved_config(load_config("default"), dodge)
    doc = report(check(dodge_result(0.9)), [check(dodge_result(0.5, 0.2), minutes=1.0)]).to_json()
    (dodge / "eval.json").write_text(json.dumps(doc))
    d = compare.load_run(dodge)
    assert not d.fights and d.metric == "untouched_share"
    dodging = compare.summarize([d])
    assert dodging["runs"][0]["checks"] == [{"minutes": 1.0, "untouched_share": 0.5, "worst_level": 0.2}]
    text = compare.format_table(dodging)
    assert "untouched over the mix" in text and "1: 50%/20%" in text and "level 9" not in text and "None" not in text
    with pytest.raises(compare.CompareError, match=r"different games.*fight \(fights\), dodge \(dodging\)"):
        compare.summarize([compare.load_run(fight), d])


def test_missing_figures_stay_missing_and_names_and_absent_settings_are_told_apart(tmp_path, capsys):
    old = _fight_run(tmp_path / "a", "R", [], 950, {"usmash": 1})
    new = _fight_run(tmp_path / "b", "R", ["env.delay_frames=18"], 900, {"usmash": 3, "bair": 1})
    doc = json.loads((old / "eval.json").read_text())
    del doc["training"]  # a report from before eval.json kept the run's totals
    doc["level_9"] = None  # a run with final_games_level_9 = 0
    doc["curve"] = [check(fight_result(0.6), minutes=5.0).to_json()]  # a check without a worst level
    (old / "eval.json").write_text(json.dumps(doc))
    config = json.loads((old / "config.json").read_text())
    del config["learner"]["huber_delta"]  # a config from before that setting existed
    (old / "config.json").write_text(json.dumps(config))
    doc = compare.summarize(compare.load_runs([old, new]))
    assert doc["settings"] == ["env.delay_frames", "learner.huber_delta"]
    r_old, r_new = doc["runs"]
    assert (r_old["run"], r_new["run"]) == ("a/R", "b/R")  # the same folder name under two parents
    assert r_old["settings"] == {"env.delay_frames": 0, "learner.huber_delta": compare.ABSENT}
    assert r_old["train_steps"] is None and r_old["model_step"] == 90_000
    assert r_old["level_9"] is None and r_old["stocks_level_9"] is None and r_old["top_ko"] is None
    assert r_old["checks"] == [{"minutes": 5.0, "win_rate": 0.6, "worst_level": None}]
    assert r_new["top_ko"] == {"move": "usmash", "share": 0.75}
    text = compare.format_table(doc)
    assert "learner.huber_delta=(absent)" in text and "- (kept model's: 90,000)" in text and "5: 60%/-" in text
    ignored = compare.summarize(compare.load_runs([old, new]), ignore=("learner.", "env.delay_frames"))
    assert ignored["settings"] == [] and len(ignored["groups"]) == 1
    group = ignored["groups"][0]
    assert group["level_9_win_rate"] == {"mean": 0.9, "runs": 1}  # the one run that played the level-9 games
    assert "90.0% (1 of 2)" in compare.format_table(ignored)
    assert compare.plot_png(doc)[:8] == b"\x89PNG\r\n\x1a\n"
