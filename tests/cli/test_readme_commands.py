"""Every `melee-agent` command the README and docs/ show is one the CLI takes: its subcommand, flags and
choices parse, and its `--config` and `--set` name a shipped config and real settings. So is every one
`scripts/gpu_runs.sh` runs (prepared for a lent GPU, where a stale flag would waste its minutes).

Commands in code blocks are whole (required arguments included); a command quoted in the prose may
name a subcommand alone (`melee-agent compare`), so there only flags and values are checked. Nothing
is run: argparse parses, and the config is loaded as the command would load it.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
import shlex
from pathlib import Path

import pytest

from melee_agent.cli.main import build_parser
from melee_agent.config import load_config

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]  # every page of the site, results/ included
COMMAND = re.compile(r"^(?:\S*/)?melee-agent\s+(.*)$")
PLACEHOLDER = re.compile(r"\[|<|\.\.\.")  # usage notation, not a command: [--json FILE], <model>, REPLAY...


def block_commands(text: str) -> list[str]:
    """The ``melee-agent`` commands in a document's fenced code blocks (continuations joined; ``&&``, ``;``
    and ``|`` split a line into commands)."""
    out = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            for part in re.split(r"&&|;|\|", line):
                m = COMMAND.match(part.strip())
                if m:
                    out.append(m.group(1))
    return out


def inline_commands(text: str) -> list[str]:
    """The ``melee-agent`` commands quoted in backticks in the prose, usage notation left out."""
    found = re.findall(r"`((?:\S*/)?melee-agent [^`]+)`", text.replace("\n", " "))
    return [c.split("melee-agent", 1)[1].strip() for c in found if not PLACEHOLDER.search(c)]


@functools.cache
def _parser():
    return build_parser()


def parse_error(args: str) -> str | None:
    """argparse's message for ``melee-agent ARGS``, or None when it parses and its config loads."""
    argv = shlex.split(args, comments=True)
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            _parser().parse_args(argv)
    except SystemExit as e:
        if e.code == 0:  # --help, --version: shown, then a clean exit
            return None
        return err.getvalue().strip() or "exit"
    return config_error(argv)


def config_error(argv: list[str]) -> str | None:
    """Whether ``--config NAME`` (a shipped config, not a path; ``default`` where a ``--set`` comes without
    one, as every command with --config defaults to it) loads with the command's ``--set`` values."""
    flags = dict(zip(argv, argv[1:]))
    sets = [v for k, v in zip(argv, argv[1:]) if k == "--set"]
    config = flags.get("--config", "default" if sets else None)
    if config is None or "/" in config or config.endswith(".toml"):
        return None
    try:
        load_config(config, sets)
    except Exception as e:  # noqa: BLE001 (the message is the finding)
        return f"--config {config}: {e}"
    return None


def script_commands(text: str, config: str | None = None) -> list[str]:
    """The ``python -m melee_agent.cli`` commands of a shell script, its variables at their defaults
    (``${X:-d}`` is d, ``${X:+...}`` nothing, any other ``$X`` a placeholder word), ``${CONFIG:-...}`` at
    ``config`` where given."""
    text = text.replace("\\\n", " ")
    if config is not None:
        text = re.sub(r"\$\{CONFIG:-[^}]*\}", config, text)
    text = text.replace('"$config"', config or "gpu").replace('"$DEV"', "cuda").replace("$extra", "")  # gpu_runs.sh's train()
    text = re.sub(r"\$\{\w+:\+[^}]*\}", "", text)
    text = re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", text)
    text = re.sub(r"\$\w+", "x", text)
    return [m.split("2>&1")[0].strip() for m in re.findall(r"-m melee_agent\.cli (.*)", text)]


GPU_RUNS = ROOT / "scripts" / "gpu_runs.sh"


@pytest.mark.parametrize("config", [None, "gpu-fight"])
def test_the_gpu_scripts_commands_parse(config):
    """Each stage's command, with the default config and with the fight's prepared one (CONFIG=gpu-fight)."""
    commands = script_commands(GPU_RUNS.read_text(), config)
    assert len(commands) >= 4 and any(c.startswith("train") for c in commands)
    for args in commands:
        assert parse_error(args) is None, f"scripts/gpu_runs.sh: `melee-agent {args}`: {parse_error(args)}"


def _commands(kind) -> list[tuple[str, str]]:
    return [(doc.relative_to(ROOT).as_posix(), c) for doc in DOCS for c in kind(doc.read_text())]


def test_the_documents_show_commands():
    """The scan finds what it checks (a broken pattern would pass every command by finding none)."""
    blocks, inline = _commands(block_commands), _commands(inline_commands)
    assert len(blocks) >= 10 and len(inline) >= 20
    assert any(c.startswith("train") for _, c in blocks) and any(c.startswith("eval") for _, c in inline)


@pytest.mark.parametrize(("doc", "args"), _commands(block_commands))
def test_a_code_block_command_parses(doc, args):
    assert parse_error(args) is None, f"{doc}: `melee-agent {args}`: {parse_error(args)}"


@pytest.mark.parametrize(("doc", "args"), _commands(inline_commands))
def test_a_quoted_command_has_real_flags(doc, args):
    """Missing required arguments are allowed (the prose names a command); an unknown flag, choice or setting is not."""
    error = parse_error(args)
    if error is not None and ("are required" in error or "expected one argument" in error):
        error = config_error(shlex.split(args, comments=True))
    assert error is None, f"{doc}: `melee-agent {args}`: {error}"


def test_a_stale_flag_is_caught():
    assert "unrecognized arguments: --no-such-flag" in parse_error("train --no-such-flag")
    assert "invalid choice" in parse_error("eval --env nowhere")
    assert parse_error("train --config fight --set learner.no_such_setting=1").startswith("--config fight:")
    assert parse_error("train --config fight --set learner.shared=64") is None
    assert config_error(shlex.split("eval --config fihgt --json")).startswith("--config fihgt: config file not found")
