"""n-step experience rows from a segment of vectorized play (Ape-X, rlpyt).

A segment is ``T`` decisions in ``B`` environments. For decision ``t`` in environment ``b`` the
row is::

    m        = min(n, decisions until the episode ends (inclusive), decisions left in the segment)
    reward   = sum_{k<m} gamma^k r[t+k]
    next_obs = next_obs[t+m-1]            (the last state seen: the pre-reset one at an episode end)
    discount = 0 if the episode ended in a terminal state at t+m-1, else gamma^m

so a cut episode (time limit) and a segment boundary both bootstrap from the last state, and a
terminal state does not. Rows are ``[T*B, 57]`` float32 in the replay's column order.

Example::

    >>> import torch
    >>> obs = torch.zeros(3, 1, 27); nxt = torch.ones(3, 1, 27)
    >>> rows = nstep_rows(obs, torch.tensor([[1], [2], [3]]), torch.tensor([[1.0], [1.0], [1.0]]),
    ...                   nxt, torch.tensor([[False], [True], [False]]), torch.tensor([[False], [True], [False]]),
    ...                   n=3, gamma=0.5)
    >>> rows[:, 27:30].tolist()  # action, reward, discount
    [[1.0, 1.5, 0.0], [2.0, 1.0, 0.0], [3.0, 1.0, 0.5]]
"""

from __future__ import annotations

import torch

from melee_agent.rows import ACTION, DISCOUNT, NEXT_OBS, OBS, REWARD, ROW_WIDTH


def nstep_rows(obs: torch.Tensor, action: torch.Tensor, reward: torch.Tensor, next_obs: torch.Tensor,
               done: torch.Tensor, terminal: torch.Tensor, n: int, gamma: float) -> torch.Tensor:
    """Build n-step rows from ``[T, B, ...]`` segment tensors (``next_obs`` pre-reset at ends)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    T, B = action.shape
    reward = reward.to(torch.float32)
    ret = torch.zeros(T, B, device=reward.device)
    scale = torch.ones(T, B, device=reward.device)  # gamma^k while the window is still open
    open_ = torch.ones(T, B, dtype=torch.bool, device=reward.device)
    last = torch.arange(T, device=reward.device).view(T, 1).expand(T, B).clone()  # index of the window's last step
    ended_terminal = torch.zeros(T, B, dtype=torch.bool, device=reward.device)
    steps = torch.zeros(T, B, device=reward.device)
    for k in range(n):
        idx = torch.arange(T, device=reward.device) + k
        inside = (idx < T).view(T, 1) & open_
        j = idx.clamp(max=T - 1)
        ret += torch.where(inside, scale * reward[j], 0.0)
        steps += inside.float()
        last = torch.where(inside, j.view(T, 1).expand(T, B), last)
        ends = inside & done[j]
        ended_terminal |= inside & terminal[j]
        open_ = inside & ~ends
        scale = scale * gamma
    discount = torch.where(ended_terminal, 0.0, gamma ** steps)
    b = torch.arange(B, device=reward.device).view(1, B).expand(T, B)
    rows = torch.empty(T, B, ROW_WIDTH, device=reward.device)
    rows[..., OBS] = obs
    rows[..., ACTION] = action.to(torch.float32)
    rows[..., REWARD] = ret
    rows[..., DISCOUNT] = discount
    rows[..., NEXT_OBS] = next_obs[last, b]
    return rows.reshape(T * B, ROW_WIDTH)
