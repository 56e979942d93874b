"""A browser's controller frame: the JSON the page sends, checked, as one port's raw values.

The page sends, each frame, libmelee's ``ControllerState`` meaning (docs/design.md "Motion: raw
controller frames"): ``main_x``, ``main_y``, ``c_x``, ``c_y`` in [0, 1] (0.5 neutral), ``l``, ``r``
analog in [0, 1], the buttons ``a``, ``b``, ``x``, ``y``, ``z``, ``l_button``, ``r_button`` as bools,
and ``seq``, the page's count of the frames it sent (what the game read is reported back by it).
A field left out is at rest; a value of the wrong kind is refused, naming the field.

Example::

    >>> p = parse({"main_x": 1.0, "a": True, "seq": 7})
    >>> p.seq, p.values["main_x"], p.values["a"], p.values["main_y"]
    (7, 1.0, True, 0.5)
    >>> parse({"main_x": 2})
    Traceback (most recent call last):
    ...
    ValueError: main_x must be a number in [0, 1], got 2
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from melee_agent.arena.fight.pads import Pads

STICKS = ("main_x", "main_y", "c_x", "c_y")
SHOULDERS = ("l", "r")
BUTTONS = ("a", "b", "x", "y", "z", "l_button", "r_button")
AT_REST: dict[str, float | bool] = {**{k: 0.5 for k in STICKS}, **{k: 0.0 for k in SHOULDERS},
                                    **{k: False for k in BUTTONS}}


@dataclass(frozen=True)
class HumanPad:
    """One frame of a person's controller: the raw values by ``Pads`` field, and the page's frame count."""

    values: dict[str, float | bool] = field(default_factory=lambda: dict(AT_REST))
    seq: int = -1  # -1: nothing sent yet (the controller at rest)


def parse(msg: Any) -> HumanPad:
    """The page's JSON object as a :class:`HumanPad`; ValueError naming the first bad field."""
    if not isinstance(msg, dict):
        raise ValueError(f"a controller frame is a JSON object, got {type(msg).__name__}")
    unknown = set(msg) - set(AT_REST) - {"seq", "type"}
    if unknown:
        raise ValueError(f"unknown controller fields {sorted(unknown)}; known: {', '.join(AT_REST)}, seq")
    values = dict(AT_REST)
    for k in (*STICKS, *SHOULDERS):
        if k in msg:
            v = msg[k]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 <= v <= 1:
                raise ValueError(f"{k} must be a number in [0, 1], got {v!r}")
            values[k] = float(v)
    for k in BUTTONS:
        if k in msg:
            if not isinstance(msg[k], bool):
                raise ValueError(f"{k} must be true or false, got {msg[k]!r}")
            values[k] = msg[k]
    seq = msg.get("seq", -1)
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < -1:
        raise ValueError(f"seq must be a non-negative integer, got {seq!r}")
    return HumanPad(values, seq)


def pads_of(ports: tuple[dict[str, float | bool], dict[str, float | bool]], device: torch.device) -> Pads:
    """Both ports' raw values (port 0, port 1) as a one-environment :class:`Pads` (``[1, 2]`` each)."""
    cols = []
    for name in Pads._fields:
        dtype = torch.bool if name in BUTTONS else torch.float32
        cols.append(torch.tensor([[ports[0][name], ports[1][name]]], dtype=dtype, device=device))
    return Pads(*cols)


__all__ = ["HumanPad", "parse", "pads_of", "AT_REST", "STICKS", "SHOULDERS", "BUTTONS"]
