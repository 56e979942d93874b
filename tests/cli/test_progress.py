"""Long work shows its progress, with the time left, on a terminal and nothing in a pipe: the final evaluation
after `train` (which took minutes in silence), `fidelity`'s replays."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest

from melee_agent.report import progress

#: The smallest run that reaches the final evaluation: a few seconds of training, short checks, no baselines.
TRAIN = ["train", "--config", "small", "--fused", "--minutes", "0.05", "--set", "train.progress_eval_episodes=9",
         "--set", "train.final_baselines=false"]


def _cli(args: list[str], cwd: Path, terminal: bool) -> tuple[int, str]:
    """Run ``melee-agent ARGS`` with stderr on a pseudo-terminal (``terminal``) or a pipe; its stderr."""
    cmd = [sys.executable, "-m", "melee_agent.cli", *args]
    env = dict(os.environ)
    if not terminal:
        r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=600)
        return r.returncode, r.stderr
    master, slave = pty.openpty()
    # A terminal's size, as a real one has (a fresh pseudo-terminal says 0 columns: no room for a bar).
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed its end
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    rc = proc.wait(timeout=600)
    reader.join(timeout=10)
    os.close(master)
    return rc, b"".join(chunks).decode(errors="replace")


@pytest.mark.slow
@pytest.mark.parametrize("terminal", [True, False], ids=["pty", "pipe"])
def test_the_final_evaluation_shows_its_progress_on_a_terminal_only(tmp_path, terminal):
    rc, err = _cli([*TRAIN, "--run-dir", str(tmp_path / "run")], tmp_path, terminal)
    assert rc == 0, err[-3000:]
    if terminal:
        # The bar counts every game of the report (9 of the last model's check, 4 at each of 9 levels, 4 more at
        # level 9: the small config's final_games_level_9) with the time left, and ends full.
        assert "final evaluation: the last model" in err and "final evaluation: the kept model" in err
        assert "49/49" in err and "<" in err, err[-2000:]
    else:
        assert "final evaluation" not in err and "\r" not in err, err[-2000:]


def test_no_bar_where_stderr_is_no_terminal(capsys):
    bar = progress.progress_bar(3, "work")
    bar.update(3)
    bar.close()
    assert bar.disable and capsys.readouterr().err == ""


def test_fidelity_counts_its_replays_on_a_terminal(tmp_path):
    from tests.replays_kit import replay_path

    game = replay_path("libmelee_test_game_1.slp")
    rc, err = _cli(["fidelity", str(game)], tmp_path, terminal=True)
    assert rc == 0 and "replays" in err and "1/1" in err, err[-2000:]
