"""What is kept of a finished game: its frames as a replay (``--save DIR``) and the person's rows
(``--record DIR``), each a file named by the time and the game's number.

A finished game is taken as a :class:`Kept` snapshot first (the session's lists of that game: a rematch makes
new ones), so its files can be written on a thread of their own while the next game starts.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, NamedTuple

from melee_agent.play.record import game_rows, write_rows
from melee_agent.play.replay_file import SUFFIX, save_frames


class Kept(NamedTuple):
    """One game as it is kept: its frames, the person's trace, who played which port, its number and result."""

    frames: list[dict[str, Any]]
    trace: dict[str, list[Any]]
    labels: tuple[str, str]
    game: int
    result: dict[str, Any] | None
    action_set: str
    rows: bool  # the trace holds the person's view (the session kept rows)
    stage: str = "final_destination"  # the stage it was played on


def labels(session: Any) -> tuple[str, str]:
    """Fox's and Marth's labels: who played each."""
    them = session.o.opponent
    return ("you", them) if session.human_port == 0 else (them, "you")


def snapshot(session: Any) -> Kept:
    with session.lock:
        number = session.games if session.over else session.games + 1  # a game in progress is the next one
        return Kept(list(session.frames), session.trace, labels(session), number, session.result,
                    session.o.action_set, session.keep_rows, session.o.stage)


def _stem(game: int) -> str:
    return f"play-{time.strftime('%Y%m%d-%H%M%S')}-g{game:03d}"


def save_replay(kept: Kept, save_dir: Path) -> Path:
    save_dir.mkdir(parents=True, exist_ok=True)
    path = save_dir / f"{_stem(kept.game)}{SUFFIX}"
    save_frames(path, kept.frames, kept.labels, stage=kept.stage)
    return path


def finished_game(kept: Kept, save_dir: Path | None, record_dir: Path | None, gamma: float) -> list[str]:
    """Save what is asked of a game that ended; the paths written."""
    out = []
    if save_dir is not None:
        out.append(str(save_replay(kept, save_dir)))
    if record_dir is not None and kept.rows:
        record_dir.mkdir(parents=True, exist_ok=True)
        tr = kept.trace
        rows = game_rows(tr["obs"], tr["pad"], tr["reward"], tr["done"], kept.action_set, gamma)
        path = record_dir / f"{_stem(kept.game)}.rows.safetensors"
        won = None if kept.result is None else kept.result["winner"] == "you"
        write_rows(path, rows, kept.action_set, kept.game, won, len(tr["pad"]))
        out.append(str(path))
    return out


__all__ = ["Kept", "snapshot", "save_replay", "finished_game", "labels"]
