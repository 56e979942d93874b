"""What Melee's CPU reads of one frame (:class:`Seen`) and the memory it carries between frames (:class:`Memory`),
shared by its rules (:mod:`.melee_move`, :mod:`.melee_defend`, :mod:`.melee_attack`)."""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from melee_agent.arena.cpu.common import PadOut, mine, put, theirs
from melee_agent.arena.cpu.melee_data import (BODY_HALF_WIDTH, DEFEND_ROLL, HOLD_SHIELD, MELEE_SEED_OFFSET, N_DRAWS,
                                              NONE, SHIELD, STOP_REDRAW, STOP_SPAN)
from melee_agent.arena.draws import uniform_streams
from melee_agent.arena.env_state import EnvState
from melee_agent.arena.fight.fighter import rows_of


class Seen(NamedTuple):
    """This frame as the CPU reads it, ``[B]`` each (Marth ``m``, the agent ``f``)."""

    L: Tensor  # the level (float)
    Li: Tensor  # the level (long), an index into the level tables
    t: Tensor  # the game's frame: the CPU's x7C counter (its phase a guess)
    x80: Tensor  # the CPU's own counter x80, this frame's value
    u: Tensor  # [N_DRAWS, B] this frame's draws
    half_range: Tensor  # 0.5 x570 + 0.5: the attack boxes' scale
    near: Tensor  # x38: the stop distance of the walk
    mx: Tensor
    my: Tensor
    fx: Tensor
    fy: Tensor
    dx: Tensor
    dist: Tensor
    dirx: Tensor
    mr: Tensor  # Marth's move row
    m_af: Tensor
    ground: Tensor
    stunned: Tensor
    free: Tensor
    in_shield: Tensor
    facing: Tensor
    inward: Tensor  # toward the stage's centre
    edge: float


class Memory(NamedTuple):
    """The CPU's memory, ``[B]`` each (FightState's ``cpu_*`` fields)."""

    plan: Tensor
    timer: Tensor
    act: Tensor
    wait: Tensor
    count: Tensor


class Out(NamedTuple):
    """The controller written so far and where a rule has decided it."""

    pad: PadOut
    decided: Tensor

    def put(self, mask: Tensor, **values: Tensor) -> Out:
        """Write ``values`` where ``mask`` holds and no earlier rule decided (:func:`~.common.put`)."""
        return Out(*put(self.pad, self.decided, mask, **values))


def carried(state: EnvState) -> Memory:
    """Last frame's memory moved on a frame: timers up, the wait down; a knock out of a plan ends it (the roll and the
    shield run on: the defence mode's scripts)."""
    fs = state.fight
    stunned = (mine(state.players.hitstun_frames_left) > 0) | (mine(fs.hitlag_left) > 0)
    plan = torch.where(stunned & (fs.cpu_plan != DEFEND_ROLL) & (fs.cpu_plan != HOLD_SHIELD), NONE, fs.cpu_plan)
    return Memory(plan, fs.cpu_timer + 1, fs.cpu_act, (fs.cpu_wait - 1).clamp(min=0), fs.cpu_count)


def see(state: EnvState, seed: int | Tensor, edge: float, plan: Tensor) -> Seen:
    """The frame as the CPU reads it, with ``plan`` this frame's running plan (:func:`carried`)."""
    ps, fs, g = state.players, state.fight, state.game
    L = g.cpu_level
    t = g.episode_frame
    # x80 counts the frames its handler runs: those with no command script running [D ftCo_800B2790].
    x80 = fs.cpu_x80 + (plan == NONE).float()
    u = uniform_streams(g.env_id, g.tick, seed + MELEE_SEED_OFFSET, range(N_DRAWS))
    # x570, drawn again when x7C % 30 == 0 [D ftCo_800B33B0]: a counter draw of its own.
    u_half = uniform_streams(g.env_id, torch.floor(t / 30.0), seed + MELEE_SEED_OFFSET + 1, (0,))[0]
    # x56C = 4 (1 - u^3), drawn again when x7C % 600 == 0 [D ftCo_800A0CB0]; the walk stops at x38 = x56C plus the
    # target's half width x564 [D ftCo_800A75DC].
    u_stop = uniform_streams(g.env_id, torch.floor(t / STOP_REDRAW), seed + MELEE_SEED_OFFSET + 2, (0,))[0]
    mx, my, fx, fy = mine(ps.position_x), mine(ps.position_y), theirs(ps.position_x), theirs(ps.position_y)
    dx = fx - mx
    stunned = (mine(ps.hitstun_frames_left) > 0) | (mine(fs.hitlag_left) > 0)
    free = (mine(ps.move) < 0) & ~stunned
    return Seen(L, L.long(), t, x80, u, 0.5 * (0.05 * (L + 1) + 0.05 * u_half) + 0.5,
                STOP_SPAN * (1.0 - u_stop ** 3) + BODY_HALF_WIDTH, mx, my, fx, fy, dx, dx.abs(),
                torch.where(dx >= 0, 1.0, -1.0), mine(rows_of(ps.move)), mine(ps.action_frame), mine(ps.on_ground) > 0,
                stunned, free, (mine(ps.action) == SHIELD) & free, mine(ps.facing), -torch.sign(mx + (mx == 0).float()),
                edge)
