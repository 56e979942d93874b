"""Reward and episode rules, shared by the arena and the Dolphin loop (torch tensors, any B).

``untouchable`` (Dilipkumar et al. 2017): +1/60 for every frame the agent spends in STANDING
during a noop; the episode ends (terminal) the moment the agent is hit, i.e. its percent rises or
it loses a stock, and is cut off (not terminal) after 3,600 frames.
``damage``: ``0.01 * (dealt - taken) + (stocks taken - stocks lost)`` per frame; the episode ends
with the game (a player out of stocks), and is also cut off at the frame limit.

Example::

    >>> import torch
    >>> standing_noop_reward(torch.tensor([14, 235]), torch.tensor([True, True]))
    tensor([0.0167, 0.0000])
"""

from __future__ import annotations

import torch
from melee.enums import Action

REWARDS = ("untouchable", "damage")
MAX_FRAMES = 3_600  # one minute at 60 frames per second
STANDING = Action.STANDING.value


def check_reward(name: str) -> str:
    if name not in REWARDS:
        raise ValueError(f"unknown reward {name!r}; known: {', '.join(REWARDS)}")
    return name


def standing_noop_reward(agent_action: torch.Tensor, is_noop: torch.Tensor) -> torch.Tensor:
    """``untouchable``: 1/60 where the agent stands during a noop."""
    return ((agent_action == STANDING) & is_noop).to(torch.float32) / 60.0


def agent_hit(percent_before: torch.Tensor, percent_after: torch.Tensor, stock_before: torch.Tensor,
              stock_after: torch.Tensor) -> torch.Tensor:
    """The agent was hit: its percent rose or it lost a stock."""
    return (percent_after > percent_before) | (stock_after < stock_before)


def damage_reward(dealt: torch.Tensor, taken: torch.Tensor, stocks_taken: torch.Tensor,
                  stocks_lost: torch.Tensor) -> torch.Tensor:
    """``damage``: 0.01 x (damage dealt - damage taken) + (stocks taken - stocks lost)."""
    return 0.01 * (dealt - taken) + (stocks_taken.to(torch.float32) - stocks_lost.to(torch.float32))
