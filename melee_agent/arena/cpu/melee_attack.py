"""Melee's CPU on attack: the gates, the reach test by boxes, the draw, the wait and the press.

[D] doldecomp/melee ``ftcpuattack.c``: ``ftCo_800B8A9C`` (which lists, the grab drop), ``ftCo_800B885C`` (levels
1-4's cycle), ``ftCo_800B4AB0`` (the boxes, their lookahead and the per-entry gates), ``ftCo_800B63D8`` (the wait),
``ftCo_800B89CC`` (aerials). Marth's lists and scripts (PlCo.dat) are guesses: :data:`.melee_data.GROUND_LIST`.
"""

from __future__ import annotations

import torch
from torch import Tensor

from melee_agent.arena.cpu.common import mine, theirs
from melee_agent.arena.cpu.melee_data import (AIR_LIST, ATTACK, BODY_HALF_WIDTH, CATCH, DASH_GRAB, DASH_GRAB_RUN,
                                              DASH_WAIT, DASHING, ESCAPE_AIR, GROUND_LIST, NONE, PRESS, RUNNING,
                                              SHIELD, TURN, MeleeLevels)
from melee_agent.arena.cpu.melee_frame import Memory, Out, Seen
from melee_agent.arena.cpu.melee_move import off_stage
from melee_agent.arena.env_state import CPU, EnvState
from melee_agent.arena.fight.moves import FightTable, Slot, row

U_PICK0 = 12  # the first draw of the list's weights (Seen.u)


def _arc(y: Tensor, vy: Tensor, t: Tensor, grav: Tensor, term: Tensor, v: Tensor) -> Tensor:
    """[D ftCo_800B4AB0]: a fighter's height ``t`` frames on, as the CPU predicts it for an airborne target: straight
    on with ``v <= 0``; before ``v`` (the frame it reaches terminal speed) ``y + vy t - 0.5 g sqrt(t)``; after it
    ``y - term (t - v) + vy t - 0.5 g sqrt(v)``. The square roots are the decompiled code's (a matching build)."""
    early = y + vy * t - 0.5 * grav * torch.sqrt(t.clamp(min=0.0))
    late = y - term * (t - v) + vy * t - 0.5 * grav * torch.sqrt(v.clamp(min=0.0))
    return torch.where(v <= 0, y + vy * t, torch.where(t < v, early, late))


def predicted(s: Seen, state: EnvState, T: FightTable, ahead: Tensor) -> tuple[Tensor, Tensor]:
    """[D ftCo_800B4AB0]: the agent relative to Marth ``ahead`` frames on (the entry's lookahead ``x04``), both moved
    on by their last frame's position change (``pos_delta``, air arcs included while the agent is airborne), as
    ``(x, y)``: what the entry's box is tested against. No cap on the lookahead."""
    fs = state.fight
    mdx, mdy, fdx, fdy = mine(fs.pos_dx), mine(fs.pos_dy), theirs(fs.pos_dx), theirs(fs.pos_dy)
    rel_x = (s.fx + fdx * ahead) - (s.mx + mdx * ahead)
    air = theirs(state.players.on_ground) <= 0
    mg, mt = mine(T.attrs.gravity), mine(T.attrs.terminal_velocity)
    fg, ft = theirs(T.attrs.gravity), theirs(T.attrs.terminal_velocity)
    # the decompiled time to terminal speed: Marth's from his height, the agent's from its speed (as written)
    mv = torch.where(mg.abs() < 1e-5, 1000.0, (mt + s.my) / mg.clamp(min=1e-5))
    fv = torch.where(fg.abs() < 1e-5, 1000.0, (ft + fdy) / fg.clamp(min=1e-5))
    m_y = torch.where(air, _arc(s.my, mdy, ahead, mg, mt, mv), s.my + mdy * ahead)
    f_y = torch.where(air, _arc(s.fy, fdy, ahead, fg, ft, fv), s.fy + fdy * ahead)
    return rel_x, f_y - m_y


def in_box(s: Seen, state: EnvState, T: FightTable, slot: int, lo: float, hi: float) -> tuple[Tensor, Tensor]:
    """[D ftCo_800B4AB0]: does the entry's box (front: the move's reach; back: Marth's centre; bottom and top ``lo``,
    ``hi``; all scaled by ``0.5 x570 + 0.5``, in Marth's facing) overlap the agent's box (its half width each side,
    its height up from its feet) as predicted at the lookahead (the move's first active frame: guess for ``x04``)?
    ``(across, up)``: the horizontal and the vertical overlap; the box holds the agent where both do."""
    r = row(CPU, slot)
    rel_x, rel_y = predicted(s, state, T, T.first_active[r].expand_as(s.mx))
    ahead_of = rel_x * s.facing
    h = s.half_range
    across = (ahead_of + BODY_HALF_WIDTH > 0.0) & (ahead_of - BODY_HALF_WIDTH < T.reach[r] * h)
    return across, (hi * h > rel_y) & (lo * h < rel_y + theirs(T.attrs.height))


def _dash_grab_reach(s: Seen, state: EnvState, T: FightTable) -> Tensor:
    """The dash grab's reach (guess, see GROUND_LIST): the agent as its position change carries it to the grab's first
    active frame after the script's dash, against the grab's reach plus the dash's travel at its initial speed."""
    r = row(CPU, Slot.DASH_GRAB)
    startup = T.first_active[r]
    rel = (s.fx + theirs(state.fight.pos_dx) * (DASH_WAIT + DASH_GRAB_RUN + startup)) - s.mx
    travel = mine(T.attrs.dash_initial) * (DASH_GRAB_RUN + startup)
    reach = T.reach[r] * s.half_range + BODY_HALF_WIDTH + travel
    return (rel * s.facing >= -BODY_HALF_WIDTH) & (rel * s.facing <= reach)


def pick_ground(s: Seen, state: EnvState, T: FightTable) -> Tensor:
    """[D ftCo_800B4AB0] over Marth's ground list: the entries whose box holds the agent and whose gate ``x80 % x1C``
    is 0, one drawn by weight (-1: none). [D ftCo_800B8A9C]: against a shielding agent at levels 6-9 the anti-shield
    list (``x10``; guess: the standing grab) comes first; while the agent is anywhere in Catch..EscapeAir (grabs,
    throws, rolls, spot dodge, air dodge) the grab entries (0x28, 0x29) are dropped."""
    ps = state.players
    m_action = mine(ps.action)
    dashing = (m_action == DASHING) | (m_action == RUNNING)
    anti_shield = (theirs(ps.action) == SHIELD) & (s.L > 5)
    f_action = theirs(ps.action)
    no_grab = (f_action >= CATCH) & (f_action <= ESCAPE_AIR)
    best_w, pick = torch.zeros_like(s.mx), torch.full_like(s.mx, -1.0)
    for k, (slot, w, lo, hi, every) in enumerate(GROUND_LIST):
        across, up = in_box(s, state, T, slot, lo, hi)
        ok = across & up
        if every > 1:
            ok = ok & (torch.remainder(s.x80, float(every)) == 0)
        w_eff = torch.full_like(s.mx, w)
        if slot == Slot.GRAB:  # a standing grab against a shield; else a dash grab, beyond a standing grab's reach
            ok = torch.where(anti_shield, ok, _dash_grab_reach(s, state, T) & ~ok & up) & ~no_grab
            w_eff = torch.where(anti_shield, 100.0, w)
        weight = torch.where(ok & ~dashing, w_eff * (1e-3 + s.u[U_PICK0 + k]), 0.0)
        heavier = weight > best_w
        pick, best_w = torch.where(heavier, float(slot), pick), torch.where(heavier, weight, best_w)
    return pick


def choose(s: Seen, state: EnvState, T: FightTable, levels: MeleeLevels, out: Out, mem: Memory) -> Memory:
    """[D ftCo_800B8A9C]: a ground entry (from a stand, a walk or the turn script: the check runs every frame), or an
    aerial when already airborne near the agent at level >= 4 [D ftCo_800B89CC]; then the wait ``ftCo_800B63D8``.
    Levels 1-4 choose only on part of a fixed cycle of ``x80`` [D ftCo_800B885C]."""
    may = torch.remainder(s.x80, levels.attack_period[s.Li]) > levels.attack_after[s.Li]
    idle = (mem.plan == NONE) | (mem.plan == TURN)
    pick = pick_ground(s, state, T)
    start = s.ground & s.free & idle & ~out.decided & may & (pick >= 0)
    dy = s.fy - s.my
    air = (~s.ground & s.free & ~off_stage(s) & (mem.plan == NONE) & (s.L >= 4) & may & ~out.decided
           & (s.dist < 30.0) & (dy.abs() < 30.0))
    behind = (s.dx * s.facing) < 0
    air_pick = torch.where(dy > 12.0, float(Slot.UAIR), torch.where(dy < -12.0, float(Slot.DAIR), torch.where(
        behind, float(Slot.BAIR), torch.where(s.u[U_PICK0 + len(GROUND_LIST)] < 0.5, float(Slot.NAIR),
                                              float(Slot.FAIR)))))
    chosen = start | air
    wait = torch.floor(levels.wait_span[s.Li] * s.u[0]) + levels.wait_base[s.Li]
    return mem._replace(plan=torch.where(chosen, ATTACK, mem.plan),
                        act=torch.where(start, pick, torch.where(air, air_pick, mem.act)),
                        timer=torch.where(chosen, 0.0, mem.timer), wait=torch.where(chosen, wait, mem.wait))


def play(s: Seen, state: EnvState, out: Out, mem: Memory) -> tuple[Out, Memory]:
    """The chosen attack's script: the wait (stick neutral; in shield the shield stays up), then the press. The script
    runs the frame it is written [D ftCo_800B2790, ftCo_800B3E04 in ftCo_800B3900], so with no wait the button goes
    down on the decision frame. The grab but against a shield (or out of one: a shield grab) is the dash-grab script
    (guess, GROUND_LIST): stick neutral 2 frames, 127 toward the agent, then Z while dashing."""
    yes = torch.ones_like(s.ground)
    one = torch.ones_like(s.mx)
    anti_shield = (theirs(state.players.action) == SHIELD) & (s.L > 5)
    attacking = mem.plan == ATTACK
    fire = attacking & (mem.wait <= 0) & s.free
    start_dg = fire & (mem.act == float(Slot.GRAB)) & ~anti_shield & ~s.in_shield
    plan = torch.where(start_dg, DASH_GRAB, mem.plan)
    timer = torch.where(start_dg, 0.0, mem.timer)
    act = torch.where(start_dg, s.facing, mem.act)
    fire = fire & ~start_dg
    dash_grab = (plan == DASH_GRAB) & s.ground & s.free & ~out.decided
    out = out.put(dash_grab & (timer < DASH_WAIT))  # stick neutral, WaitFor 2 (as the dash script)
    out = out.put(dash_grab & (timer < DASH_WAIT + DASH_GRAB_RUN), sx=act)  # 127: the flick
    out = out.put(dash_grab, sx=act, z=yes)  # Z while dashing: the dash grab
    plan = torch.where((plan == DASH_GRAB) & (~dash_grab | (timer >= DASH_WAIT + DASH_GRAB_RUN)), NONE, plan)
    for slot, (a, z, sx, sy) in PRESS.items():
        kw = {}
        if sx != 0.0:
            kw["sx"] = s.facing * sx
        if sy != 0.0:
            kw["sy"] = one * sy
        if a:
            kw["a"] = yes
        if z:
            kw["z"] = yes
        out = out.put(fire & (act == float(slot)), **kw)
    # The wait: stick neutral, no button (its follow-through). In shield the shield stays up, so the press is a shield
    # grab: a stand-in (guess) for Melee's powershield cancel, which the arena's shield drop lacks.
    out = out.put(attacking & ~fire & s.free, shield=s.in_shield)
    plan = torch.where(attacking & (fire | ~s.free), NONE, plan)
    return out, mem._replace(plan=plan, timer=timer, act=act)


__all__ = ["choose", "play", "pick_ground", "in_box", "predicted", "AIR_LIST"]
