"""Melee's CPU on a stage with platforms: jumping up to a target above, dropping through toward one below, walking
on to the end of its floor (doldecomp/melee ``ftCo_0A01.c``, cited per rule as ``[D fn]``).

The game's CPU moves toward a destination (``x1A88.x54``; here the agent's position). On the ground, when the
destination is not on its own floor (``mpIsland``: the floor found from 5 above the destination, 10 down [D
ftCo_800AB224]), it picks by the angle up to it, ``atan2(dy, |dx|)`` [D ftCo_800AB224]:

* above 35 degrees: facing the destination, the jump script [D ftCo_800A0148]; not facing it, a turn under 75
  degrees, else it walks on;
* between -45 and 35 degrees: facing it, it walks on; within 5 of its floor's end [D ftCo_800A28D0, ftCo_800AA844]
  it drops through (standing on a platform), else jumps with the destination above or more than 40 away in x, else
  walks off the end; not facing it, a turn;
* below -45 degrees: on a platform, the drop script [D ftCo_800AACD0, ftCo_800A08F0]; else it walks on.

The jump script: the stick toward the destination if it is more than 30 away in x (else neutral) and Y held 10
frames, a full hop [D ftCo_800A0148]. The drop script: the stick neutral for a wait by level (45 frames at level 0
... 1 at 9), then down (-127) for 5 frames [D ftCo_800A08F0]; the squat's drop does the rest (fight/ground.py).

Guesses, marked: "facing the destination" for ``ftCo_800A2BD4`` (not read here); the flag ``x2168`` the drop also
asks for [D ftCo_800AA844] taken as set; the destination is the agent wherever it is (the game's path finding,
``ftCo_800A1CC4`` with its per-stage tables, is left out); a destination over no floor (off stage, or in the air
higher than 5 above any) leaves the CPU to its walk, as on Final Destination. Only arenas whose stages have
platforms play these rules (Final Destination's games are as they were).
"""

from __future__ import annotations

import torch
from torch import Tensor

from melee_agent.arena.cpu.common import mine
from melee_agent.arena.cpu.melee_data import (DOWN_ANGLE, DROP_HOLD, FAR_X, ISLAND_ABOVE, ISLAND_BELOW, ISLAND_END,
                                              JUMP_HOLD, JUMP_TOWARD, NONE, PLAT_DROP, PLAT_JUMP, STEEP_ANGLE, TURN,
                                              UP_ANGLE, MeleeLevels)
from melee_agent.arena.cpu.melee_frame import Memory, Out, Seen
from melee_agent.arena.env_state import EnvState
from melee_agent.arena.stage_table import StageGeo

#: Which floor: -1 the main floor, k platform k, -2 none.
MAIN, NO_FLOOR = -1.0, -2.0


def _column(v: Tensor | float, like: Tensor) -> Tensor:
    """A stage number (``[B, 1]`` or a float) as ``[B]``."""
    return v[:, 0] if isinstance(v, Tensor) else torch.full_like(like, v)


def floor_of(x: Tensor, y: Tensor, geo: StageGeo, above: float, below: float) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The highest floor under ``(x, y)`` between ``above`` over it and ``below`` under it (``[B]`` each): which
    (:data:`MAIN`, a platform's index, :data:`NO_FLOOR`), its height, left and right ends."""
    edge = _column(geo.edge, x)
    pl, pr, ph = (v.expand(x.shape[0], -1) for v in (geo.plat_l, geo.plat_r, geo.plat_h))
    over = (x.unsqueeze(1) >= pl) & (x.unsqueeze(1) <= pr)
    near = (ph <= y.unsqueeze(1) + above) & (ph >= y.unsqueeze(1) - below) & over
    best = torch.where(near, ph, -1.0e9).amax(1)
    k = torch.where(near & (ph == best.unsqueeze(1)), torch.arange(ph.shape[1], device=x.device).float(), -1.0).amax(1)
    on_plat = k >= 0
    main = ~on_plat & (x.abs() <= edge) & (y + above >= 0) & (y - below <= 0)
    which = torch.where(on_plat, k, torch.where(main, MAIN, NO_FLOOR))
    ki = k.clamp(min=0).long().unsqueeze(1)
    height = torch.where(on_plat, best, 0.0)
    left = torch.where(on_plat, pl.gather(1, ki)[:, 0], -edge)
    right = torch.where(on_plat, pr.gather(1, ki)[:, 0], edge)
    return which, height, left, right


def platforms(s: Seen, state: EnvState, levels: MeleeLevels, out: Out, mem: Memory,
              geo: StageGeo) -> tuple[Out, Memory]:
    """The rules of the module docstring: its scripts in flight first, then a new choice where it is free on the
    ground with the agent on another floor."""
    yes = torch.ones_like(s.ground)
    one = torch.ones_like(s.mx)
    # The scripts in flight. A knock (hitstun, a grab) ends them (Memory: carried).
    jumping = (mem.plan == PLAT_JUMP) & ~out.decided
    out = out.put(jumping & (mem.timer >= 1) & (mem.timer <= JUMP_HOLD), jump=yes, sx=mem.act)
    out = out.put(jumping)
    wait = levels.drop_wait[s.Li]
    dropping = (mem.plan == PLAT_DROP) & ~out.decided
    down = dropping & (mem.timer >= wait) & (mem.timer < wait + DROP_HOLD)
    out = out.put(down, sy=-one).put(dropping)
    plan = torch.where(jumping & (mem.timer >= JUMP_HOLD + 1), NONE, mem.plan)
    plan = torch.where(dropping & (mem.timer >= wait + DROP_HOLD), NONE, plan)
    # A new choice: free on the ground, no script running, the agent over another floor.
    mine_floor, _, m_left, m_right = floor_of(s.mx, s.my, geo, 0.01, 0.01)
    its_floor, _, _, _ = floor_of(s.fx, s.fy, geo, ISLAND_ABOVE, ISLAND_BELOW)
    free = s.ground & s.free & (plan == NONE) & ~out.decided & (mine_floor != NO_FLOOR)
    other = free & (its_floor != NO_FLOOR) & (its_floor != mine_floor)
    dy = s.fy - s.my
    angle = torch.atan2(dy, s.dist)
    facing = s.facing * s.dx > 0  # guess: ftCo_800A2BD4 as facing the destination
    on_plat = mine_floor >= 0
    end = torch.where(s.facing > 0, m_right, m_left)
    at_end = (end - s.mx).abs() < ISLAND_END
    up = other & (angle > UP_ANGLE)
    level = other & (angle <= UP_ANGLE) & (angle > DOWN_ANGLE)
    steep_down = other & (angle <= DOWN_ANGLE)
    jump = (up & facing) | (level & facing & at_end & ~on_plat & ((dy > 0) | (s.dist > FAR_X)))
    jump = jump | (level & facing & at_end & on_plat & (dy > 0))  # ftCo_800AA844: the drop's test comes first
    drop = (steep_down & on_plat) | (level & facing & at_end & on_plat & (dy <= 0))
    turn = (up & ~facing & (angle < STEEP_ANGLE)) | (level & ~facing)
    walk_on = other & ~jump & ~drop & ~turn  # stick forward at the level's clamp (ftCo_800AABC8, ftCo_800AACD0)
    # Start the scripts; this frame is their first (ReleaseY / the wait: the stick neutral).
    act = torch.where(jump, torch.where(s.dist > JUMP_TOWARD, s.dirx, 0.0), mem.act)
    act = torch.where(turn, s.dirx, act)
    plan = torch.where(jump, PLAT_JUMP, torch.where(drop, PLAT_DROP, torch.where(turn, TURN, plan)))
    timer = torch.where(jump | drop | turn, 0.0, mem.timer)
    out = out.put(jump | drop)
    out = out.put(walk_on, sx=s.facing * levels.stick[s.Li])
    return out, mem._replace(plan=plan, timer=timer, act=act)


def air_jump(s: Seen, state: EnvState, out: Out, geo: StageGeo, ecb_air: Tensor) -> Out:
    """[D ftCo_800A9904, ftCo_800A3498]: airborne over the stage, falling, free, with the destination above its
    collision box's bottom (``x568`` above it: not in the sources here, 0 as a guess): a double jump toward it while it
    has one (the stick toward the destination, Y for a frame)."""
    ps = state.players
    over = s.mx.abs() <= _column(geo.edge, s.mx)
    falling = mine(state.fight.pos_dy) <= 0
    above = s.fy > s.my + ecb_air
    jump = ~s.ground & s.free & over & falling & above & (mine(ps.jumps_left) > 0) & (mine(ps.jump_held) == 0)
    return out.put(jump, jump=torch.ones_like(s.ground), sx=s.dirx)


__all__ = ["platforms", "air_jump", "floor_of"]
