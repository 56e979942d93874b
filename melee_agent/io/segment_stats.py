"""A segment's episode statistics: what a worker's batch carries in its ``stats`` metadata.

One typed record crosses the process boundary through one encode/decode pair: the worker fills
a :class:`SegmentStats` and :meth:`SegmentStats.to_json` writes it into the batch; the manager's
:func:`~melee_agent.io.wire.decode_experience` reads it back with :meth:`SegmentStats.from_json`,
which refuses a wrong type by naming the key (the upload gets a 400, nothing is stored).

>>> s = SegmentStats(episodes=2, return_sum=1.5, per_level={"9": [2, 1]}, extra={"worker_id": "w0"})
>>> SegmentStats.from_json(s.to_json()) == s
True
>>> SegmentStats.from_json(SegmentStats(games=1, wins=1, stocks_taken=4, damage_dealt=310.5).to_json()).stocks_taken
4
>>> SegmentStats.from_json('{"episodes": "two"}')
Traceback (most recent call last):
...
ValueError: stats 'episodes' must be a number, got 'two'
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from typing import Any

_INTS = ("episodes", "hits", "untouched", "frames", "steps", "games", "wins", "stocks_taken", "stocks_lost")
_FLOATS = ("return_sum", "length_sum", "seconds", "damage_dealt")
_SIGNED = ("return_sum",)  # the damage and fight rewards' returns can be negative


@dataclass
class SegmentStats:
    """Episode statistics of one segment (sums; the manager divides by ``episodes``)."""

    episodes: int = 0  # episodes that ended in the segment
    return_sum: float = 0.0  # their returns, summed (negative where the reward is: damage, fight)
    length_sum: float = 0.0  # their lengths in frames, summed
    hits: int = 0  # episodes in which the agent was hit
    untouched: int = 0  # episodes that reached the frame limit unhit
    frames: int = 0  # game frames played (all environments)
    steps: int = 0  # decisions taken
    seconds: float = 0.0  # wall time of the segment
    # Fights (whole games): the episodes that ended as a game ends, and their figures summed.
    games: int = 0  # episodes that were whole games played to their end (info.game_over)
    wins: int = 0  # of those, the games the agent won
    stocks_taken: int = 0  # stocks the agent took in those games
    stocks_lost: int = 0  # stocks it lost in them
    damage_dealt: float = 0.0  # percent it dealt in them
    per_level: dict[str, list[int]] = field(default_factory=dict)  # CPU level -> [episodes, untouched]
    # Anything else a worker reports (its id, epsilon, Dolphin and spool counters): JSON values.
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """True for a batch that carries no statistics (all but a segment's last)."""
        return self == SegmentStats()

    def to_json(self) -> str:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        return json.dumps({**self.extra, **d})

    @classmethod
    def from_json(cls, text: str | None) -> SegmentStats:
        """Parse a batch's ``stats``; a ValueError names what is wrong."""
        try:
            d = json.loads(text or "{}")
        except ValueError:
            raise ValueError("stats is not JSON") from None
        if not isinstance(d, dict):
            raise ValueError("stats is not a JSON object")
        out: dict[str, Any] = {}
        for k in _INTS + _FLOATS:
            if k not in d:
                continue
            v = d.pop(k)
            # Returns may be negative (the damage and fight rewards); every other figure is a count or a sum of counts.
            signed = k in _SIGNED
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or (v < 0 and not signed):
                raise ValueError(f"stats {k!r} must be a number, got {v!r}"
                                 if not isinstance(v, (int, float)) or isinstance(v, bool)
                                 else f"stats {k!r} must be finite{'' if signed else ' and >= 0'}, got {v!r}")
            out[k] = int(v) if k in _INTS else float(v)
        if out.get("wins", 0) > out.get("games", 0):
            raise ValueError(f"stats 'wins' ({out['wins']}) must not exceed 'games' ({out.get('games', 0)})")
        per_level = d.pop("per_level", {})
        if not isinstance(per_level, dict) or not all(
                str(lv).isdigit() and isinstance(c, list) and len(c) == 2
                and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in c) and c[1] <= c[0]
                for lv, c in per_level.items()):
            raise ValueError("stats 'per_level' must map CPU levels to [episodes, untouched] counts")
        return cls(**out, per_level={str(k): list(v) for k, v in per_level.items()}, extra=d)
