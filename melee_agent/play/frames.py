"""One frame of a game with a person in it, through the arena's own fight frame.

* Against the CPU the person plays Fox (port 0, the agent's port) and the frame is the one training
  plays (:func:`~melee_agent.arena.fight.frame.fight_frame_fox`: count down, Melee's or the designed
  CPU picks Marth's controller, then the frame), Fox's controller read from the person's raw frame as
  the game reads any controller (:func:`~melee_agent.arena.fight.pads.read`).
* Against a policy both ports are raw frames (:func:`~melee_agent.arena.fight.frame.fight_frame_pads`,
  what ``Arena.step_pads`` plays): the person's, and the policy's macro frame.

Either way the frame's reward and end are the arena's (:func:`~melee_agent.arena.async_step.outcome`),
as seen from port 0.
"""

from __future__ import annotations

import torch

from melee_agent.arena import Arena
from melee_agent.arena.async_step import FrameStep, Totals, outcome
from melee_agent.arena.fight import pads as pad_reading
from melee_agent.arena.fight.frame import fight_frame_fox, fight_frame_pads
from melee_agent.arena.fight.pads import Pads


@torch.inference_mode()
def play_frame(arena: Arena, raw: Pads, cpu: bool) -> FrameStep:
    """Advance ``arena`` (one environment, a fight) by one frame from ``raw`` (``[1, 2]``); ``cpu``: port 1 is
    the arena's CPU and only port 0's frame is read. The arena's state becomes the new one; nothing resets."""
    c = arena._consts
    state = arena.state
    if cpu:
        read = pad_reading.read(raw, state.fight.a_held > 0)
        fox = tuple(t[:, 0] for t in read)
        result, _ = fight_frame_fox(state, fox, c.fight, c.seed, c.spawn_x)
    else:
        result = fight_frame_pads(state, raw, c.fight, c.spawn_x)
    state, damage, ko = result
    noop = torch.full((arena.num_envs,), arena.noop_index, dtype=torch.long, device=arena.device)
    step = outcome(state, damage, ko, Totals.zeros(arena.num_envs, arena.device), noop, torch.zeros_like(noop), c)
    arena.state = step.state
    return step


__all__ = ["play_frame"]
