"""The help and error texts a new user met and found untrue or naming nothing: each corrected line is held here."""

from __future__ import annotations

import argparse
import re

import pytest

from melee_agent.cli.main import build_parser, main


def _sub(*path: str) -> argparse.ArgumentParser:
    parser = build_parser()
    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


def _help(*path: str) -> str:
    return " ".join(_sub(*path).format_help().split())


def _err(capsys, *argv: str) -> tuple[int, str]:
    rc = main(list(argv))
    return rc, capsys.readouterr().err


def test_umi_usage_shows_serving_needs_no_action_and_both_forms_need_policy():
    usage = _sub("umi").format_usage()
    # --policy repeats for a model per stage (STAGE=MODEL).
    assert usage.splitlines() == [
        "usage: melee-agent umi [-h] --policy [STAGE=]MODEL [--policy STAGE=MODEL ...] [--socket SOCKET]",
        "       melee-agent umi export [-h] --policy [STAGE=]MODEL [--policy STAGE=MODEL ...] --out ZIP [--name NAME]"]
    assert _sub("umi", "export").format_usage().strip() == \
        "usage: melee-agent umi export [-h] --policy [STAGE=]MODEL [--policy STAGE=MODEL ...] --out ZIP [--name NAME]"


@pytest.mark.parametrize("path", [("umi",), ("umi", "export")], ids=" ".join)
def test_the_written_umi_usage_names_every_shown_option(path):
    """The usage is written by hand: an option added to the parser and not to the usage fails here."""
    parser = _sub(*path)
    usage = parser.format_usage()
    shown = [o for a in parser._actions if a.help is not argparse.SUPPRESS for o in a.option_strings[:1]]
    assert shown and all(o in usage for o in shown), (shown, usage)


def test_umi_with_no_action_serves_and_export_without_policy_names_the_flag(capsys):
    assert build_parser().parse_args(["umi", "--policy", "m.safetensors"]).func.__name__ == "serve"
    rc, err = _err(capsys, "umi", "export", "--out", "b.zip")
    assert rc == 2 and err.startswith("melee-agent umi: error: --policy MODEL is required")


def test_umi_export_names_the_policy_flag_of_a_missing_file(tmp_path, capsys):
    rc, err = _err(capsys, "umi", "export", "--policy", "nosuch", "--out", str(tmp_path / "b.zip"))
    assert (rc, err) == (2, "melee-agent umi: error: --policy nosuch: model file not found\n")


def test_play_help_offers_the_shipped_models():
    assert "pretrained:NAME" in _help("play") and "pretrained:fight" in _help("play")


def test_train_help_says_minutes_count_training_and_the_evaluation_comes_after():
    text = _help("train")
    assert re.search(r"--minutes MINUTES minutes of training; the final evaluation comes after them", text), text


def test_ladder_names_its_model_argument_not_a_flag(capsys):
    rc, err = _err(capsys, "ladder", "pretrained:nosuch")
    assert rc == 2 and "--models" not in err
    assert err.startswith("melee-agent ladder: error: argument MODEL: pretrained:nosuch: no model of that name")


@pytest.mark.parametrize("flag,value", [("--games", "0"), ("--minutes", "0"), ("--check-minutes", "-1")])
def test_exploit_names_the_flag_of_a_count_that_cannot_work(tmp_path, capsys, flag, value):
    argv = {"--model": "pretrained:fight", "--minutes": "1", "--run-dir": str(tmp_path / "x"), flag: value}
    with pytest.raises(SystemExit) as e:
        main(["exploit", *[x for kv in argv.items() for x in kv]])
    err = capsys.readouterr().err
    assert e.value.code == 2 and f"error: argument {flag}: must be a positive" in err and err.count("\n") == 1


def test_fidelity_with_no_readable_replay_is_one_line_exit_2(tmp_path, capsys):
    missing = tmp_path / "nosuch.slp"
    rc, err = _err(capsys, "fidelity", str(missing))
    assert (rc, err) == (2, f"melee-agent fidelity: error: no replay could be read: {missing}: no such replay file\n")
    for report in ("--motion", "--intangibility"):
        rc, err = _err(capsys, "fidelity", report, str(missing), str(tmp_path / "other.slp"))
        assert rc == 2 and err.count("\n") == 1 and "(and 1 more replay(s) unreadable)" in err
