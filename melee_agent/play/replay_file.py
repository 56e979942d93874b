"""A played game kept as its frames: each arena frame as the page drew it (:mod:`.view`'s JSON), gzipped, for
``melee-agent watch --replay FILE --out FILE.gif`` to draw again with ``watch``'s painter.

Schema ``melee-agent/arena-frames/1``: ``{"schema", "game": "fight", "labels": [Fox's, Marth's], "stage", "frames":
[...]}``; frame 0 is the game's start, one entry per frame played after it. ``stage`` (a stage's name) is left out
of games saved before stages: they were on Final Destination.

Example::

    >>> import tempfile, pathlib
    >>> from melee_agent.arena import Arena
    >>> from melee_agent.play.view import frame_json, view_of
    >>> a = Arena(1, game="fight"); _ = a.reset()
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "g.frames.json.gz"
    >>> save_frames(p, [frame_json(view_of(a.state, a.T))], ("you", "CPU level 9"))
    >>> g = load_frames(p); len(g.views), g.views[0].fighters[1].name, g.labels, g.stage
    (1, 'Marth', ('you', 'CPU level 9'), 'final_destination')
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, NamedTuple

from melee_agent.io.files import atomic_write_bytes
from melee_agent.report.watch import Capsule, Circle, FighterView, FrameView

SCHEMA = "melee-agent/arena-frames/1"
SUFFIX = ".frames.json.gz"


class SavedGame(NamedTuple):
    game: str
    labels: tuple[str, str]
    views: list[FrameView]
    stage: str = "final_destination"


def save_frames(path: str | Path, frames: list[dict[str, Any]], labels: tuple[str, str], game: str = "fight",
                stage: str = "final_destination") -> None:
    doc = {"schema": SCHEMA, "game": game, "labels": list(labels), "stage": stage, "frames": frames}
    atomic_write_bytes(path, gzip.compress(json.dumps(doc, separators=(",", ":")).encode()))


def _fighter(f: dict[str, Any]) -> FighterView:
    return FighterView(name=f["name"], body=Capsule(f["x"], f["bottom"], f["top"], f["r"]), facing=float(f["facing"]),
                       hitboxes=tuple(Circle(*c) for c in f["hitboxes"]), intangible=bool(f["intangible"]),
                       hitstun=bool(f["hitstun"]), shield=f["shield"], percent=float(f["percent"]),
                       stock=int(f["stock"]), action=f["action"], action_frame=int(f["action_frame"]))


def load_frames(path: str | Path) -> SavedGame:
    """A saved game; ValueError naming the problem where ``path`` is not one."""
    try:
        doc = json.loads(gzip.decompress(Path(path).read_bytes()))
    except (OSError, EOFError, ValueError) as e:
        raise ValueError(f"{path}: not a saved game ({SCHEMA}, gzipped JSON): {e}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise ValueError(f"{path}: schema is not {SCHEMA!r}")
    try:
        views = [FrameView(int(fr["frame"]), (_fighter(fr["fighters"][0]), _fighter(fr["fighters"][1])),
                           int(fr["cpu_level"])) for fr in doc["frames"]]
        labels = (str(doc["labels"][0]), str(doc["labels"][1]))
    except (KeyError, IndexError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: a frame is malformed ({type(e).__name__}: {e})") from None
    if not views:
        raise ValueError(f"{path}: no frames")
    stage = str(doc.get("stage", "final_destination"))
    from melee_agent.arena.stages import STAGES  # noqa: PLC0415

    if stage not in STAGES:
        raise ValueError(f"{path}: stage {stage!r} is not one of {', '.join(STAGES)}")
    return SavedGame(str(doc.get("game", "fight")), labels, views, stage)


__all__ = ["save_frames", "load_frames", "SavedGame", "SCHEMA", "SUFFIX"]
