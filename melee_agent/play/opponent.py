"""A policy on one port of a played game: it sees the game from its own port, chooses a macro when the last
one is over, and plays it one raw controller frame a frame, through its own input delay.

Its view is the 27-float state with its own 13 values first (docs/design.md "Ports": the state is
built from each port's own view, so one model plays either port); on port 1 the arena's observation
(port 0 first) has its halves swapped. Its delay is the one the model trained under (a model file's
``delay_frames``; 0 for a scripted policy): what it presses reaches the game that many frames later,
as in training (``env.delay_frames``).
"""

from __future__ import annotations

from collections import deque

import torch

from melee_agent.envs.actions import get_action_set
from melee_agent.arena import Arena
from melee_agent.arena.fight.pads import Pads, from_table
from melee_agent.rl.policies import Policy
from melee_agent.envs.state import STATE_DIM

PER_PLAYER = (STATE_DIM - 1) // 2  # 13 values a player, then the previous action


def own_view(obs: torch.Tensor, port: int) -> torch.Tensor:
    """``obs`` (``[B, 27]``, port 0's values first) as port ``port`` sees it: its own 13 values first.

    >>> o = torch.arange(27.0).view(1, 27)
    >>> own_view(o, 1)[0, :2].tolist(), own_view(o, 1)[0, 13:15].tolist(), own_view(o, 1)[0, 26].item()
    ([13.0, 14.0], [0.0, 1.0], 26.0)
    >>> own_view(torch.arange(30.0).view(1, 30), 1)[0, 26:].tolist()  # the fight layout: the stocks swap too
    [26.0, 27.0, 29.0, 28.0]
    """
    if port == 0:
        return obs
    n = PER_PLAYER
    out = torch.cat((obs[:, n:2 * n], obs[:, :n], obs[:, 2 * n:]), 1)
    if obs.shape[1] > STATE_DIM:  # the fight layout: the time left, then the stocks, its own first
        s = STATE_DIM + 1
        out = torch.cat((out[:, :s], obs[:, s + 1:s + 2], obs[:, s:s + 1], out[:, s + 2:]), 1)
    return out


def frame_values(pads: Pads) -> dict[str, float | bool]:
    """A one-environment, one-port ``Pads`` (``[1]`` each) as raw values by field."""
    return {k: (bool(v[0]) if v.dtype == torch.bool else float(v[0])) for k, v in zip(Pads._fields, pads)}


class PolicyPort:
    """``policy`` playing port ``port`` of a one-environment arena with ``action_set``'s macros."""

    def __init__(self, policy: Policy, action_set: str, port: int, delay_frames: int = 0):
        aset = get_action_set(action_set)
        self.policy, self.port, self.delay_frames = policy, port, delay_frames
        self.num_actions = aset.num_actions
        self.table = torch.as_tensor(aset.table).permute(2, 0, 1).contiguous()  # [button, action, frame]
        self.lengths = [int(n) for n in aset.lengths]
        self.noop = aset.noop_index
        self.reset()

    def reset(self) -> None:
        """A new game: no macro in flight, nothing pressed yet in the delay."""
        self.action, self.frame, self.previous = self.noop, self.lengths[self.noop], 0
        rest = frame_values(from_table(self.table[:, self.noop, 0].unsqueeze(1)))
        self.in_flight: deque[dict[str, float | bool]] = deque([rest] * self.delay_frames)

    def next_frame(self, arena: Arena) -> dict[str, float | bool]:
        """This frame's raw values for the port (what it pressed ``delay_frames`` frames ago)."""
        if self.frame >= self.lengths[self.action]:  # the macro is over: choose the next one
            prev = torch.tensor([float(self.previous)], device=arena.device)
            obs = own_view(arena.observe(prev), self.port)
            self.previous = self.action = int(self.policy(obs)[0])
            self.frame = 0
        pressed = frame_values(from_table(self.table[:, self.action, self.frame].unsqueeze(1)))
        self.frame += 1
        if self.delay_frames == 0:
            return pressed
        self.in_flight.append(pressed)
        return self.in_flight.popleft()


__all__ = ["PolicyPort", "own_view", "frame_values", "PER_PLAYER"]
