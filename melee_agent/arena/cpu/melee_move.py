"""Melee's CPU off the attack: DI, the grab it holds, the ledge, recovery, the turn and the walk.

Each rule cites its function in doldecomp/melee (``[D fn]``, ``ftCo_0A01.c`` and ``ftcpuattack.c``); see
:mod:`melee_agent.arena.cpu.melee` for the order they run in.
"""

from __future__ import annotations

import torch

from melee_agent.arena.cpu.common import mine
from melee_agent.arena.cpu.melee_data import (APPROACH_RAMP, GRAB_EDGE, LEDGE_NEAR, NEAR_TURN, NONE, RECOVERY_STICK,
                                              TURN, TURN_FRAMES, TURN_STICK, UPB, UPB_DRIFT_FRAMES, MeleeLevels,
                                              walk_limit)
from melee_agent.arena.cpu.melee_frame import Memory, Out, Seen
from melee_agent.arena.env_state import CPU, EnvState
from melee_agent.arena.fight.moves import Slot, row

__all__ = ["di", "hold_grab", "ledge", "recover", "turn", "walk", "APPROACH_RAMP"]


def di(s: Seen, state: EnvState, out: Out) -> Out:
    """[D ftCo_800AC5A0]: in hitstun or hitlag, on a share L/10 of each 120 frames the stick is held perpendicular to
    the launch, on the side that points up; else neutral."""
    fs = state.fight
    ang = torch.deg2rad(mine(fs.launch_angle))
    kx, ky = torch.cos(ang) * mine(fs.launch_dir), torch.sin(ang)
    dix, diy = torch.where(kx > 0, -ky, ky), torch.where(kx > 0, kx, -kx)
    di_now = torch.remainder(s.t, 120.0) > 120.0 - 12.0 * s.L
    return out.put(s.stunned & di_now, sx=dix, sy=diy).put(s.stunned)


def hold_grab(s: Seen, state: EnvState, out: Out, mem: Memory) -> tuple[Out, Memory]:
    """[D ftCo_800B683C, the grabbing mode's handler]: pummel with probability 0.5 / (1 + pummels); else, within 30 of
    a stage end, throw toward it; else up, down, forward or back throw, a quarter each."""
    fs = state.fight
    u_kind, u_hold = s.u[1], s.u[2]
    one = torch.ones_like(s.mx)
    holding = (s.mr == row(CPU, Slot.GRAB_HOLD)) & (s.m_af >= 2) & ~out.decided
    pummel = holding & (u_hold * (1.0 + mem.count) < 0.5) & (mine(fs.a_held) == 0)
    out = out.put(pummel, a=torch.ones_like(s.ground))
    count = torch.where(pummel, mem.count + 1.0, mem.count)
    near_end = holding & (s.edge - s.mx.abs() < GRAB_EDGE)
    out = out.put(near_end, sx=torch.sign(s.mx + (s.mx == 0).float()))
    out = out.put(holding & (u_kind < 0.25), sy=one).put(holding & (u_kind < 0.5), sy=-one)
    out = out.put(holding & (u_kind < 0.75), sx=s.facing).put(holding, sx=-s.facing)
    grabbing = (s.mr == row(CPU, Slot.GRAB_HOLD)) | (s.mr == row(CPU, Slot.PUMMEL))
    return out, mem._replace(count=torch.where(grabbing, count, 0.0))  # [D ftCo_0A01.c: x94 = 0 when not grabbing]


def ledge(s: Seen, state: EnvState, out: Out) -> Out:
    """[D ftCo_800ACB44, ftCo_800A0AF4]: the agent within 30: roll (0.1 L) or ledge attack; else getup 60%, roll 20%,
    attack 10%, jump 10%. The arena has no ledge roll or ledge attack: both play as the getup."""
    hang = (s.mr == row(CPU, Slot.LEDGE_HANG)) & (s.m_af >= 2) & ~out.decided
    ledge_jump = hang & (s.dist >= LEDGE_NEAR) & (s.u[3] >= 0.9)
    return out.put(ledge_jump, jump=mine(state.players.jump_held) == 0).put(hang, sx=s.inward)


def off_stage(s: Seen) -> torch.Tensor:
    """Airborne beyond the stage's edge (not hanging on the ledge)."""
    return ~s.ground & (s.mx.abs() - s.edge > 0) & (s.mr != row(CPU, Slot.LEDGE_HANG))


def recover(s: Seen, state: EnvState, out: Out, mem: Memory) -> tuple[Out, Memory]:
    """[D ftCo_800A9CB4, ftCo_800A3234, ftCo_800A96B8 default case]: off stage, falling and below the ledge, a double
    jump toward it while it has one, else the up-B at the fixed 45 degrees (``ftCo_CpuRecoverDiagonally``), then full
    drift toward the stage. Never side-B, air dodge or wall jump [W-flaws]."""
    ps, fs = state.players, state.fight
    yes = torch.ones_like(s.ground)
    off = off_stage(s)
    helpless = mine(fs.helpless) > 0
    need = off & s.free & (mine(ps.speed_y) <= 0) & (s.my < 0.0)  # below the ledge's height (y = 0 on FD)
    jumps = mine(ps.jumps_left)
    out = out.put(need & (jumps > 0) & (mine(ps.jump_held) == 0), jump=yes, sx=s.inward)
    do_upb = need & (jumps <= 0) & ~helpless & (mine(fs.b_held) == 0) & ~out.decided
    out = out.put(do_upb, b=yes, sx=s.inward * RECOVERY_STICK, sy=torch.ones_like(s.mx) * RECOVERY_STICK)
    plan = torch.where(do_upb, UPB, mem.plan)
    timer = torch.where(do_upb, 0.0, mem.timer)
    drifting = (plan == UPB) & ~s.ground & (timer < UPB_DRIFT_FRAMES)
    out = out.put(drifting, sx=s.inward)
    plan = torch.where((plan == UPB) & ~drifting, NONE, plan)
    return out.put(off, sx=s.inward), mem._replace(plan=plan, timer=timer)


def turn(s: Seen, out: Out, mem: Memory) -> tuple[Out, Memory]:
    """[D ftCo_800AA42C, ftCo_CpuTurnAround]: with the agent more than 3 behind, the turn script: stick neutral, WaitFor
    1, 80 of 127 back, WaitFor 1, WaitFor 10 (13 frames). Its attack check still runs meanwhile (the dispatcher
    ``ftCo_800ADE48`` runs every frame): once the facing has flipped an entry's box can hold the agent, and the
    attack replaces the script (:mod:`.melee_attack`, run before this)."""
    neutral = s.ground & s.free & (mem.plan == NONE) & ~out.decided
    start = neutral & ((s.facing * s.dx) < -NEAR_TURN) & (s.dist > NEAR_TURN)
    plan = torch.where(start, TURN, mem.plan)
    timer = torch.where(start, 0.0, mem.timer)
    act = torch.where(start, s.dirx, mem.act)
    turning = (plan == TURN) & s.ground & s.free & ~out.decided
    out = out.put(turning & (timer <= 0))  # stick neutral, WaitFor 1
    out = out.put(turning, sx=act * TURN_STICK)  # LstickXForward 0xB0 (back), WaitFor 1, WaitFor 10
    plan = torch.where((plan == TURN) & (~turning | (timer >= TURN_FRAMES - 1)), NONE, plan)
    return out, mem._replace(plan=plan, timer=timer, act=act)


def walk(s: Seen, state: EnvState, levels: MeleeLevels, out: Out, mem: Memory) -> Out:
    """[D ftCo_800AA42C, ftCo_800AA320, ftCo_800B24B8]: a walk toward the agent from any distance, never a dash: the
    stick moves toward it by the level's step a frame up to the level's clamp, ramped within ``x3C`` (40) down to 80
    of 127 at ``x38``, the stop distance (``x56C`` + the agent's half width, [D ftCo_800A75DC]); within ``x38``,
    neutral. Never past the stage's edge [W-AI, W-flaws]."""
    target = s.fx.clamp(-(s.edge - 10.0), s.edge - 10.0)
    tdx = target - s.mx
    tdist = tdx.abs()
    limit = walk_limit(tdist, levels.stick[s.Li], s.near)
    go = s.ground & s.free & (mem.plan == NONE) & ~out.decided & (tdist > s.near)
    stepped = (mine(state.fight.stick_x_prev) + torch.sign(tdx) * levels.step[s.Li]).clamp(-1.0, 1.0)
    return out.put(go, sx=torch.maximum(torch.minimum(stepped, limit), -limit))
