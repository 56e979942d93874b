"""What is kept of a finished game: its frames as a replay (``--save DIR``) and the person's rows
(``--record DIR``), each a file named by the time and the game's number."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from melee_agent.play.record import game_rows, write_rows
from melee_agent.play.replay_file import SUFFIX, save_frames


def _stem(session: Any) -> str:
    return f"play-{time.strftime('%Y%m%d-%H%M%S')}-g{session.games:03d}"


def labels(session: Any) -> tuple[str, str]:
    """Fox's and Marth's labels: who played each."""
    me = "you"
    them = session.o.opponent
    return (me, them) if session.human_port == 0 else (them, me)


def save_replay(session: Any, save_dir: Path) -> Path:
    save_dir.mkdir(parents=True, exist_ok=True)
    path = save_dir / f"{_stem(session)}{SUFFIX}"
    with session.lock:
        frames = list(session.frames)
    save_frames(path, frames, labels(session))
    return path


def finished_game(session: Any, save_dir: Path | None, record_dir: Path | None, gamma: float) -> list[str]:
    """Save what is asked of the game that just ended; the paths written."""
    out = []
    if save_dir is not None:
        out.append(str(save_replay(session, save_dir)))
    if record_dir is not None and session.keep_rows:
        record_dir.mkdir(parents=True, exist_ok=True)
        tr = session.trace
        rows = game_rows(tr["obs"], tr["pad"], tr["reward"], tr["done"], session.o.action_set, gamma)
        path = record_dir / f"{_stem(session)}.rows.safetensors"
        won = None if session.result is None else session.result["winner"] == "you"
        write_rows(path, rows, session.o.action_set, session.games, won, len(tr["pad"]))
        out.append(str(path))
    return out


__all__ = ["save_replay", "finished_game", "labels"]
