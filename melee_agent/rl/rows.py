"""The experience row: one transition as 57 float32, the layout workers send, the replay stores and
the learner reads, with no conversion on the way (docs/design.md).

    obs[0:27] | action[27] | reward[28] | discount[29] | next_obs[30:57]

``discount`` is ``gamma^k`` for a k-step return and 0 at a terminal state, so one column serves
1-step and n-step targets.

Example::

    >>> import numpy as np
    >>> rows = np.zeros((2, ROW_WIDTH), np.float32); rows[:, DISCOUNT] = 0.99
    >>> rows[:, OBS].shape, rows[0, DISCOUNT]
    ((2, 27), np.float32(0.99))
"""

from __future__ import annotations

from melee_agent.envs.state import STATE_DIM

OBS = slice(0, STATE_DIM)
ACTION = STATE_DIM
REWARD = STATE_DIM + 1
DISCOUNT = STATE_DIM + 2
NEXT_OBS = slice(STATE_DIM + 3, 2 * STATE_DIM + 3)
ROW_WIDTH = 2 * STATE_DIM + 3
assert ROW_WIDTH == 57
