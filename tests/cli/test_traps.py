"""Command-line traps a newcomer fell into: each is refused before any work, in one line naming the flag,
or does what its name says (a value taken from the model file, a config's own game, the real default)."""

from __future__ import annotations

import json
import logging

import pytest

from melee_agent.cli.main import build_parser, main
from melee_agent.rl.model import DuelingDQN, save_model


def _err(capsys, *argv: str) -> tuple[int, str]:
    try:
        rc = main(list(argv))
    except SystemExit as e:  # argparse's own refusals
        rc = e.code
    return rc, capsys.readouterr().err


def _one_line(err: str) -> bool:
    return err.count("\n") == 1 and "Traceback" not in err


@pytest.fixture()
def fight_d18_model(tmp_path):
    path = tmp_path / "fight-d18.safetensors"
    save_model(path, DuelingDQN(num_actions=46), version=3, train_step=10, action_set="fight:18", delay_frames=18)
    return path


@pytest.fixture()
def dodge_model(tmp_path):
    path = tmp_path / "dodge.safetensors"
    save_model(path, DuelingDQN(num_actions=5), version=1, train_step=10, action_set="untouchable", delay_frames=0)
    return path


# --- refused before any work, naming the flag ---

def test_a_manager_open_to_the_network_without_a_token_is_refused_before_it_says_serving(tmp_path, capsys, caplog,
                                                                                        monkeypatch):
    monkeypatch.delenv("MELEE_AGENT_TOKEN", raising=False)
    with caplog.at_level(logging.INFO):
        rc, err = _err(capsys, "manager", "--host", "0.0.0.0", "--port", "18765", "--run-dir", str(tmp_path / "run"))
    assert rc == 2 and "--host 0.0.0.0" in err and "token" in err and _one_line(err)
    assert "serving on" not in caplog.text and not (tmp_path / "run").exists()


def test_launch_local_refuses_an_unknown_env_by_its_choices(capsys):
    rc, err = _err(capsys, "launch", "local", "--count", "1", "--manager", "http://127.0.0.1:9", "--env", "dolphn")
    assert rc == 2 and "--env: invalid choice: 'dolphn'" in err and _one_line(err)


@pytest.mark.parametrize("command", [["worker"], ["launch", "local", "--count", "2"]])
def test_a_dolphin_worker_without_a_dolphin_path_fails_at_once(capsys, command):
    """Before: the worker waited on the manager (a port nothing listens on here) before it built Dolphin."""
    rc, err = _err(capsys, *command, "--manager", "http://127.0.0.1:9", "--env", "dolphin")
    assert rc == 2 and "dolphin.dolphin_path is not set" in err and _one_line(err)


def test_launch_gce_names_the_missing_gs_scheme(capsys):
    rc, err = _err(capsys, "launch", "gce", "--count", "1", "--project", "p", "--zone", "z", "--manager",
                   "http://10.0.0.2:8000", "--bucket", "mybucket", "--dry-run")
    assert rc == 2 and "--bucket mybucket" in err and "gs://mybucket" in err and "--manager" not in err
    rc, err = _err(capsys, "launch", "gce", "--count", "1", "--project", "p", "--zone", "z", "--bucket", "gs://b",
                   "--dry-run")
    assert rc == 2 and "--manager" in err and "--bucket" not in err
    rc, err = _err(capsys, "launch", "gce", "--count", "1", "--project", "p", "--zone", "z", "--bucket", "gs://b",
                   "--manager", "10.0.0.2:8000", "--dry-run")
    assert rc == 2 and "--manager: must be an http(s) URL" in err and _one_line(err)


def test_umi_export_refuses_an_out_that_is_not_a_zip(dodge_model, tmp_path, capsys):
    rc, err = _err(capsys, "umi", "export", "--policy", str(dodge_model), "--out", str(tmp_path / "bot.txt"))
    assert rc == 2 and "--out" in err and ".zip" in err and _one_line(err)
    assert not (tmp_path / "bot.txt").exists()


# --- no flag accepted and ignored; one name per meaning ---

IGNORED = [
    (["manager", "--json", "x.json"], "--json"),
    (["worker", "--manager", "http://h:1", "--run-dir", "r"], "--run-dir"),
    (["launch", "local", "--count", "1", "--manager", "http://h:1", "--json", "x.json"], "--json"),
    (["launch", "local", "--count", "1", "--manager", "http://h:1", "--run-dir", "r"], "--run-dir"),
    (["bench", "replay", "--run-dir", "r"], "--run-dir"),
    (["bench", "arena", "--config", "fight"], "--config"),
]


@pytest.mark.parametrize("argv,flag", IGNORED, ids=[" ".join(a) for a, _ in IGNORED])
def test_a_flag_a_command_would_ignore_is_not_taken(argv, flag, capsys):
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(argv)
    assert e.value.code == 2 and f"unrecognized arguments: {flag}" in capsys.readouterr().err


def test_eval_writes_its_results_into_the_run_dir(tmp_path, capsys):
    assert main(["eval", "--policy", "noop", "--episodes", "2", "--cpu-level", "1", "--no-progress",
                 "--set", "env.max_frames=30", "--run-dir", str(tmp_path / "run")]) == 0
    assert json.loads((tmp_path / "run" / "eval.json").read_text())["episodes"] == 2


def test_one_name_per_meaning_old_names_kept_hidden(dodge_model, capsys):
    p = build_parser()
    umi = p.parse_args(["umi", "--model", str(dodge_model)])
    assert umi.policy == [str(dodge_model)]  # --policy repeats (a model per stage); --model with it
    assert p.parse_args(["umi", "export", "--model", "m.safetensors", "--out", "b.zip"]).policy == ["m.safetensors"]
    assert p.parse_args(["bench", "ingest", "--workers", "3"]).uploaders == 3
    for argv in (["umi", "--help"], ["bench", "ingest", "--help"], ["manager", "--help"]):
        with pytest.raises(SystemExit):
            p.parse_args(argv)
        text = capsys.readouterr().out
        assert "--model" not in text and "--workers" not in text, argv


def test_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"melee-agent {version('melee-agent')}"


def test_a_misspelt_config_name_gets_a_did_you_mean(capsys):
    rc, err = _err(capsys, "eval", "--config", "fihgt", "--episodes", "1")
    assert rc == 2 and "did you mean fight?" in err and _one_line(err)


def test_train_help_shows_each_configs_real_minutes(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "fight 60" in text and "gpu 4" in text and "default 15" in text and "config, 15" not in text


# --- game, action set and delay from the model file ---

def test_eval_plays_a_model_with_its_own_action_set_and_delay(fight_d18_model, capsys):
    """Before: `action set 'fight:18' does not match 'untouchable'`."""
    from melee_agent.cli.common import config_for_policy

    cfg, name = config_for_policy(None, [], str(fight_d18_model))
    assert (name, cfg.env.game, cfg.env.action_set, cfg.env.delay_frames) == ("fight-d18", "fight", "fight:18", 18)
    cfg, name = config_for_policy(None, [], str(fight_d18_model), env="dolphin")
    assert (cfg.env.env, cfg.env.game, cfg.env.action_set, cfg.env.delay_frames) == ("dolphin", "fight", "fight:18", 18)
    # Another delay asked for by name is played (measuring a model at another delay), the config's own is not.
    cfg, _ = config_for_policy("fight-d18", ["env.delay_frames=21"], str(fight_d18_model))
    assert cfg.env.delay_frames == 21


def test_a_mismatched_config_is_one_line_naming_the_right_one(fight_d18_model, capsys):
    rc, err = _err(capsys, "eval", "--policy", str(fight_d18_model), "--config", "fight", "--episodes", "1")
    assert rc == 2 and "--config fight" in err and "--config fight-d18" in err and _one_line(err)
    rc, err = _err(capsys, "watch", "--policy", str(fight_d18_model), "--config", "default", "--out", "w.gif")
    assert rc == 2 and "--config fight-d18" in err and _one_line(err)
    rc, err = _err(capsys, "watch", "--policy", str(fight_d18_model), "--game", "dodge", "--out", "w.gif")
    assert rc == 2 and "--game dodge: the model" in err and "plays fight" in err and _one_line(err)


def test_watch_takes_the_game_from_the_config_and_from_the_model(fight_d18_model, tmp_path, capsys):
    from melee_agent.cli import watch as watch_cli

    seen = {}
    real = watch_cli.watch

    def spy(o):
        seen["o"] = o
        return real(o._replace(seconds=0.1))

    watch_cli.watch = spy
    try:
        assert main(["watch", "--config", "fight", "--policy", "noop", "--out", str(tmp_path / "a.gif")]) == 0
        assert seen["o"].game == "fight" and seen["o"].action_set == "fight"
        assert main(["watch", "--policy", str(fight_d18_model), "--out", str(tmp_path / "b.gif")]) == 0
        assert (seen["o"].game, seen["o"].action_set, seen["o"].delay_frames) == ("fight", "fight:18", 18)
    finally:
        watch_cli.watch = real
