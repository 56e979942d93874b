"""Initial priorities computed by the worker (Ape-X): each row's absolute n-step TD error.

Ape-X's actors rank their own experience with their copy of the network, so the learner never
has to look at a new row to place it in the prioritized replay. For a row ``(s, a, r, d, s')``
(``d`` the row's discount: ``gamma^k``, 0 at a terminal state), with the worker's model as its own
target (the learner's double-DQN form with ``target = online``)::

    a*       = argmax_a' Q(s', a')
    priority = | c * r + d * Q(s', a*) - Q(s, a) |     # c: the learner's reward_scale, 1 by default

One forward pass over ``[s; s']`` (``2n`` states) per batch of rows.

Example::

    >>> import torch
    >>> from melee_agent.rl.model import DuelingDQN
    >>> from melee_agent.rl.rows import ROW_WIDTH
    >>> rows = torch.zeros(4, ROW_WIDTH)
    >>> td_priorities(DuelingDQN(num_actions=5), rows).shape
    torch.Size([4])
"""

from __future__ import annotations

import torch

from melee_agent.rl.model import DuelingDQN
from melee_agent.rl.rows import columns, state_dim_of


@torch.inference_mode()
def td_priorities(model: DuelingDQN, rows: torch.Tensor, reward_scale: float = 1.0) -> torch.Tensor:
    """``[n]`` float32 absolute TD errors of ``rows`` ``[n, 57]`` under ``model`` (on the rows' device), the
    reward scaled as the learner scales it (``learner.reward_scale``), so that a row's first priority and the
    ones the learner writes back measure the same error."""
    n = rows.shape[0]
    if n == 0:
        return torch.zeros(0, dtype=torch.float32, device=rows.device)
    c = columns(state_dim_of(rows.shape[1]))  # the state layout's columns
    q = model(torch.cat((rows[:, c.obs], rows[:, c.next_obs])))
    q_s, q_next = q[:n], q[n:]
    y = reward_scale * rows[:, c.reward] + rows[:, c.discount] * q_next.max(dim=1).values  # Q(s', argmax Q(s')) with target = online
    taken = q_s.gather(1, rows[:, c.action].long().unsqueeze(1)).squeeze(1)
    return (y - taken).abs().float()
