"""Every command's and subcommand's ``--help`` prints and exits 0 (an unescaped ``%`` in a help string made
argparse raise TypeError: ``melee-agent bench --help`` crashed)."""

from __future__ import annotations

import argparse

import pytest

from melee_agent.cli.main import build_parser


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path under ``parser``, itself included."""
    out = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _commands(sub, (*path, name))
    return out


COMMANDS = _commands(build_parser())


def test_the_walk_finds_the_nested_commands() -> None:
    assert ("bench", "learn") in COMMANDS and ("train",) in COMMANDS and len(COMMANDS) > 12


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "melee-agent")
def test_help_exits_zero(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args([*path, "--help"])
    assert e.value.code == 0
    assert "usage: melee-agent" in capsys.readouterr().out
