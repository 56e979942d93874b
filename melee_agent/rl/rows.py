"""The experience row: one transition as 57 float32, the layout workers send, the replay stores and
the learner reads, with no conversion on the way (docs/design.md).

    obs[0:27] | action[27] | reward[28] | discount[29] | next_obs[30:57]

That is the default state layout's (27 floats); a layout of ``d`` floats has rows of ``2d + 3`` in the same
order (:func:`columns`), so a row's width says its layout's width (:func:`state_dim_of`).

``discount`` is ``gamma^k`` for a k-step return and 0 at a terminal state, so one column serves
1-step and n-step targets.

Example::

    >>> import numpy as np
    >>> rows = np.zeros((2, ROW_WIDTH), np.float32); rows[:, DISCOUNT] = 0.99
    >>> rows[:, OBS].shape, rows[0, DISCOUNT]
    ((2, 27), np.float32(0.99))
"""

from __future__ import annotations

from typing import NamedTuple

from melee_agent.envs.state import STATE_DIM

OBS = slice(0, STATE_DIM)
ACTION = STATE_DIM
REWARD = STATE_DIM + 1
DISCOUNT = STATE_DIM + 2
NEXT_OBS = slice(STATE_DIM + 3, 2 * STATE_DIM + 3)
ROW_WIDTH = 2 * STATE_DIM + 3
assert ROW_WIDTH == 57


class Columns(NamedTuple):
    """Where each field sits in a row for a state of ``state_dim`` floats."""

    obs: slice
    action: int
    reward: int
    discount: int
    next_obs: slice
    width: int


def columns(state_dim: int = STATE_DIM) -> Columns:
    """The row's columns for a state of ``state_dim`` floats.

    >>> columns(30).width, columns(30).discount, columns().next_obs
    (63, 32, slice(30, 57, None))
    """
    d = int(state_dim)
    return Columns(slice(0, d), d, d + 1, d + 2, slice(d + 3, 2 * d + 3), 2 * d + 3)


def state_dim_of(width: int) -> int:
    """The state's width in rows ``width`` wide; a ``ValueError`` where no state gives that width."""
    if width < 5 or (width - 3) % 2:
        raise ValueError(f"a row of {width} values is no experience row (2 x state + 3)")
    return (width - 3) // 2
