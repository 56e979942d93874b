"""A frame as the JSON the page draws: :func:`melee_agent.report.watch.view_of`'s numbers (the geometry ``watch``
draws: bodies as the hit test's capsules, hitboxes as its circles), rounded for the wire.

Example::

    >>> import torch
    >>> from melee_agent.arena import Arena
    >>> a = Arena(1, game="fight"); _ = a.reset()
    >>> v = frame_json(view_of(a.state, a.T))
    >>> sorted(v), [f["name"] for f in v["fighters"]], v["fighters"][0]["stock"]
    (['cpu_level', 'fighters', 'frame'], ['Fox', 'Marth'], 4)
"""

from __future__ import annotations

from typing import Any

from melee_agent.report.watch import FighterView, FrameView, view_of


def _r(v: float) -> float:
    return round(float(v), 2)


def fighter_json(f: FighterView) -> dict[str, Any]:
    b = f.body
    return {"name": f.name, "x": _r(b.x), "bottom": _r(b.bottom), "top": _r(b.top), "r": _r(b.r),
            "facing": 1 if f.facing > 0 else -1, "hitboxes": [[_r(c.x), _r(c.y), _r(c.r)] for c in f.hitboxes],
            "intangible": f.intangible, "hitstun": f.hitstun, "shield": None if f.shield is None else _r(f.shield),
            "percent": _r(f.percent), "stock": f.stock, "action": f.action, "action_frame": f.action_frame}


def frame_json(view: FrameView) -> dict[str, Any]:
    """``view`` as plain JSON values."""
    return {"frame": view.frame, "fighters": [fighter_json(f) for f in view.fighters], "cpu_level": view.cpu_level}


__all__ = ["frame_json", "fighter_json", "view_of"]
