"""Melee's CPU on defence: the threats it sees and the roll script (or air dodge) it answers them with.

[D] doldecomp/melee ``ftcpuattack.c``: ``ftCo_800A5ACC`` (the gate), ``ftCo_800BB9B4`` / ``ftCo_800BB104`` (the
threat), ``ftCo_800BA9A0`` (the answer), ``ftCo_800BA160`` / ``ftCo_800BA224`` (the roll scripts).
"""

from __future__ import annotations

import torch
from torch import Tensor

from melee_agent.arena.cpu.common import mine, theirs
from melee_agent.arena.cpu.melee_data import DEFEND_ROLL, NONE, ROLL_NEAR, THREAT_SWEEP, MeleeLevels
from melee_agent.arena.cpu.melee_frame import Memory, Out, Seen
from melee_agent.arena.env_state import EnvState
from melee_agent.arena.fight.fighter import rows_of
from melee_agent.arena.fight.moves import H, FightTable

#: ftCo_800BA160 / ftCo_800BA224, frame by frame from the decision frame (0): SetLstick 0 and ReleaseR, WaitFor 1
#: (frame 0: neutral); SetLstickX +-0x7F and PressR together, WaitFor 2 (frames 1-2: stick and R); ReleaseR, WaitFor 5
#: (frames 3-7: the stick alone); SetLstickX 0, Done.
ROLL_PRESS, ROLL_HOLD, ROLL_END = 1, 2, 7


def threat(state: EnvState, T: FightTable) -> Tensor:
    """``[B]``: an agent hitbox that Marth's CPU sees coming [D ftCo_800BB9B4 / ftCo_800BB104].

    A hitbox counts when it was out on the last frame (the CPU reads the capsules as the last frame left them, past
    their first update: state neither Disabled nor Enabled), is not a grab (``HitElement_Catch``), has not already hit
    Marth (``lbColl_8000ACFC``: the arena's one hit per burst, the agent's ``hit_done``) and is not flagged ``x43_b2``
    (set only by Jigglypuff's up-B, ``ftPr_SpecialHi.c``: no Fox hitbox has it); swept 3 frames ahead along its motion
    since the frame before, it meets Marth's body sphere (centre at half his height, radius half his height)."""
    ps = state.players
    fr = theirs(rows_of(ps.move))
    f_af = theirs(ps.action_frame)
    last = (f_af - 1).long().clamp(min=0, max=T.hit.shape[1] - 1)
    before = (f_af - 2).long().clamp(min=0, max=T.hit.shape[1] - 1)
    burst = T.group[fr, last]
    spent = (burst > 0) & (burst <= theirs(ps.hit_done))  # this burst has hit Marth already [D lbColl_8000ACFC]
    seen = (theirs(ps.move) >= 0) & (f_af >= 2) & ~spent
    ax, ay, face = theirs(ps.position_x), theirs(ps.position_y), theirs(ps.facing)
    avx, avy = theirs(ps.speed_x) + theirs(ps.speed_x_attack), theirs(ps.speed_y) + theirs(ps.speed_y_attack)
    half = 0.5 * mine(T.attrs.height)
    cx, cy = mine(ps.position_x), mine(ps.position_y) + half
    hit = torch.zeros_like(seen)
    for k in range(4):
        f = lambda hh, when, k=k: T.hitf[hh, k][fr, when]  # noqa: E731
        r1 = f(H.RADIUS, last)
        had = (f(H.RADIUS, before) > 0) & (f_af >= 3)  # out the frame before too: it has a previous position
        live = (r1 > 0) & (f(H.GRAB, last) == 0)
        x1, y1 = ax + face * f(H.X, last), ay + f(H.Y, last)
        x0 = torch.where(had, ax - avx + face * f(H.X, before), x1)
        y0 = torch.where(had, ay - avy + f(H.Y, before), y1)
        ex, ey = THREAT_SWEEP * (x1 - x0), THREAT_SWEEP * (y1 - y0)
        # the distance from the body's centre to the segment (x1, y1) -> (x1 + ex, y1 + ey)
        px, py = cx - x1, cy - y1
        ll = ex * ex + ey * ey
        s = torch.where(ll > 1e-6, ((px * ex + py * ey) / ll.clamp(min=1e-6)).clamp(0.0, 1.0), 0.0)
        qx, qy = px - s * ex, py - s * ey
        hit = hit | (live & ((qx * qx + qy * qy) <= (r1 + half) ** 2))
    return seen & hit


def defend(s: Seen, state: EnvState, T: FightTable, levels: MeleeLevels, out: Out, mem: Memory) -> tuple[Out, Memory]:
    """The defence mode [D ftCo_800A5ACC gate, ftCo_800BA9A0 answer].

    Only on ``(x7C mod 120) > g(L)`` frames (never at level 1, always at 9). The check runs every frame, whatever
    script is running (the dispatcher ``ftCo_800ADE48`` tests it whenever the mode is not already defence). On the
    ground, standing or in ``Guard`` (the arena's shield), a Fox hitbox runs the roll script (``inline2``): behind the
    attacker within 30, away beyond. (Holding the shield, ``ftCo_800B9F90``, is the game's answer only to an item's
    hitbox or in ``GuardOn``: the arena has neither.) In the air over the stage: an air dodge (``ftCo_CpuRetapR``).
    """
    fs = state.fight
    yes = torch.ones_like(s.ground)
    gate = torch.remainder(s.t, 120.0) > levels.defend_after[s.Li]
    seen = threat(state, T) & gate & ~out.decided
    start = seen & s.ground & s.free & (mem.plan != DEFEND_ROLL)
    plan = torch.where(start, DEFEND_ROLL, mem.plan)
    timer = torch.where(start, 0.0, mem.timer)
    act = torch.where(start, torch.where(s.dist > ROLL_NEAR, -s.dirx, s.dirx), mem.act)  # the roll's side (world)
    air_dodge = seen & ~s.ground & s.free & (s.mx.abs() <= s.edge) & (mine(fs.shield_held) == 0)
    out = out.put(air_dodge, shield=yes)
    rolling = plan == DEFEND_ROLL
    out = out.put(rolling & (timer < ROLL_PRESS))  # SetLstick 0, ReleaseR; WaitFor 1
    out = out.put(rolling & (timer <= ROLL_HOLD), shield=yes, sx=act)  # SetLstickX, PressR; WaitFor 2
    out = out.put(rolling & (timer <= ROLL_END), sx=act)  # ReleaseR; WaitFor 5 with the stick held
    plan = torch.where(rolling & (timer > ROLL_END), NONE, plan)
    return out, mem._replace(plan=plan, timer=timer, act=act)
