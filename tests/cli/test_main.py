"""The command line keeps every subcommand: one whose import fails is listed and explains itself."""

from __future__ import annotations

import sys

import pytest

from melee_agent.cli import main as cli


def test_a_subcommand_that_fails_to_import_is_listed_and_says_why(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "melee_agent.cli.eval", None)  # importing it now raises ImportError
    parser = cli.build_parser()
    assert "eval" in parser.format_help() and "unavailable" in parser.format_help()
    assert cli.main(["eval", "--policy", "noop"]) == 2
    err = capsys.readouterr().err
    assert "`eval` cannot run here" in err and "ModuleNotFoundError" in err and "melee_agent.cli.eval" in err


def test_every_subcommand_imports_here():
    help_text = cli.build_parser().format_help()
    assert "unavailable" not in help_text
    for name in cli.SUBCOMMANDS:
        assert name.replace("_", "-") in help_text  # a module cpu_report registers the command cpu-report


def test_the_config_flag_lists_every_shipped_config(capsys):
    with pytest.raises(SystemExit):
        cli.main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in ("default", "fight", "fight-d18", "dolphin-fight", "small"):
        assert f" {name}," in text or f" {name} " in text, name
