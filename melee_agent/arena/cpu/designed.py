"""The CPU that plays Marth in fights, levels 1-9: it writes Marth's controller state every frame.

Marth goes through the same action state machine as Fox (:mod:`.fighter`), so the CPU only decides
what to press. In order of precedence, each frame:

1. **DI** -- in hitlag or hitstun it holds the stick perpendicular to its launch, toward the
   stage and up (survival DI), with probability ``di`` per hit (else the stick rests);
2. **recovery** -- off stage it holds toward the stage, double-jumps when falling, then up-Bs
   (dolphin slash) once below ``upb_below`` of the ledge and within ``upb_within`` of it, or side-Bs
   (one dancing-blade stall) when far; each frame it acts with probability ``recover``;
3. **ledge** -- on the ledge, after its reaction time, it gets up or jumps;
4. **grab** -- holding the agent, it throws toward the nearer blast zone (forward or back),
   down or up;
5. **defence** -- when the agent's attack is coming (seen after ``reaction`` frames) and reaches, it
   shields or spot-dodges with probability ``defend`` per frame; out of shield it grabs (levels >= 7)
   or lets go;
6. **attack** -- in reach, with probability ``aggression`` per frame (after ``cooldown`` frames since
   its last attack), it picks among jab, ftilt, dtilt, utilt, fsmash, usmash, dsmash, dash attack and
   grab (those that reach, with probability ``accuracy``; else any), or short-hops into an aerial
   (nair, fair, bair, uair, dair by where the agent is, with probability ``aerials``), L-cancelling
   with probability ``lcancel``;
7. **approach** -- otherwise it walks (low levels) or dashes toward the agent, staying on stage.

Per level (all values are design choices, guesses shaped so that play improves level by level):

| level | reaction (frames) | aggression /frame | accuracy | defend /frame | DI | recover | up-B below / within ledge | aerials | L-cancel | dash |
|---|---|---|---|---|---|---|---|---|---|---|
| 1 | 30 | 0.010 | 0.30 | 0.00 | 0.00 | 0.60 | 0 / 200 | 0.00 | 0.0 | no |
| 2 | 27 | 0.015 | 0.39 | 0.01 | 0.11 | 0.65 | 0 / 200 | 0.02 | 0.1 | no |
| 3 | 24 | 0.022 | 0.47 | 0.02 | 0.23 | 0.70 | 5 / 160 | 0.04 | 0.2 | no |
| 4 | 20 | 0.033 | 0.56 | 0.03 | 0.34 | 0.75 | 5 / 120 | 0.06 | 0.3 | no |
| 5 | 17 | 0.049 | 0.65 | 0.04 | 0.45 | 0.80 | 10 / 80 | 0.08 | 0.4 | yes |
| 6 | 14 | 0.073 | 0.74 | 0.07 | 0.56 | 0.85 | 10 / 60 | 0.10 | 0.5 | yes |
| 7 | 10 | 0.108 | 0.82 | 0.11 | 0.68 | 0.90 | 15 / 45 | 0.12 | 0.6 | yes |
| 8 | 7 | 0.161 | 0.91 | 0.17 | 0.79 | 0.95 | 15 / 35 | 0.14 | 0.7 | yes |
| 9 | 4 | 0.240 | 1.00 | 0.28 | 0.90 | 1.00 | 20 / 30 | 0.16 | 0.8 | yes |

(:func:`level_rows` prints this table from :data:`FIGHT_LEVELS`.) Its random numbers are the arena's
per-environment counter draws (:mod:`melee_agent.arena.draws`), so one environment and 1,024 play
the same games.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor

from melee_agent.arena.draws import uniform_streams
from melee_agent.arena.cpu.common import CpuDecision, PadOut, mine, put, theirs
from melee_agent.arena.env_state import CPU, EnvState
from melee_agent.arena.fight.fighter import rows_of
from melee_agent.arena.fight.moves import FightTable, Slot, row

CPU_SEED_OFFSET = 31_337  # the fight CPU's draws: a seed offset of their own (the dodging CPU's are untouched)
PLAN_NONE, PLAN_AERIAL, PLAN_SHIELD, PLAN_SIDE_B_USED = 0.0, 1.0, 2.0, 3.0
SHIELD_HOLD = 12  # guess: frames the CPU keeps its shield up after the agent's attack
# Marth's ground attacks the CPU picks from, with base weights (design choice).
GROUND_MOVES = ((Slot.JAB1, 1.0), (Slot.FTILT, 1.5), (Slot.DTILT, 1.0), (Slot.UTILT, 0.5), (Slot.FSMASH, 1.0),
                (Slot.USMASH, 0.3), (Slot.DSMASH, 0.5), (Slot.GRAB, 1.5), (Slot.DASH_ATTACK, 0.5))


@dataclass(frozen=True)
class FightLevel:
    reaction: float
    aggression: float
    accuracy: float
    defend: float
    di: float
    recover: float
    upb_below: float
    upb_within: float
    aerials: float
    lcancel: float
    dash: float
    cooldown: float  # frames it waits after an attack before choosing the next


def _level(lv: int) -> FightLevel:
    i = lambda a, b: float(np.interp(lv, [1, 9], [a, b]))  # noqa: E731
    return FightLevel(
        reaction=float(round(i(30, 4))), aggression=float(np.exp(i(np.log(0.01), np.log(0.24)))),
        accuracy=i(0.3, 1.0), defend=0.0 if lv == 1 else float(np.exp(np.interp(lv, [2, 9], np.log([0.01, 0.28])))),
        di=i(0.0, 0.9), recover=i(0.6, 1.0), upb_below=float(5 * ((lv - 1) // 2)),
        upb_within=float(np.interp(lv, [1, 2, 3, 4, 5, 6, 7, 8, 9], [200, 200, 160, 120, 80, 60, 45, 35, 30])),
        aerials=i(0.0, 0.16), lcancel=float(round(i(0.0, 0.8), 1)), dash=float(lv >= 5), cooldown=float(round(i(40, 6))))


FIGHT_LEVELS = {lv: _level(lv) for lv in range(1, 10)}


def level_rows() -> list[str]:
    """The level table of the module docstring, one markdown row per level."""
    out = []
    for lv, v in FIGHT_LEVELS.items():
        out.append(f"| {lv} | {v.reaction:.0f} | {v.aggression:.3f} | {v.accuracy:.2f} | {v.defend:.2f} | {v.di:.2f} | "
                   f"{v.recover:.2f} | {v.upb_below:.0f} / {v.upb_within:.0f} | {v.aerials:.2f} | {v.lcancel:.1f} | "
                   f"{'yes' if v.dash else 'no'} |")
    return out


class LevelValues(NamedTuple):
    """Each environment's level values, ``[B]`` each."""

    reaction: Tensor
    aggression: Tensor
    accuracy: Tensor
    defend: Tensor
    di: Tensor
    recover: Tensor
    upb_below: Tensor
    upb_within: Tensor
    aerials: Tensor
    lcancel: Tensor
    dash: Tensor
    cooldown: Tensor


@dataclass(frozen=True)
class FightLevels:
    """Every level's values as ``[10]`` tensors indexed by level (index 0 unused)."""

    table: tuple[Tensor, ...]  # in LevelValues' field order

    @classmethod
    def build(cls, device: torch.device) -> FightLevels:
        rows = [FIGHT_LEVELS[1]] + [FIGHT_LEVELS[lv] for lv in range(1, 10)]
        return cls(tuple(torch.tensor([getattr(r, f.name) for r in rows], device=device) for f in fields(FightLevel)))

    def at(self, level: Tensor) -> LevelValues:
        idx = level.long()
        return LevelValues(*(v[idx] for v in self.table))


class _Seen(NamedTuple):
    """What the designed CPU reads of this frame, ``[B]`` each."""

    lv: LevelValues
    u: Tensor  # [8 + len(GROUND_MOVES), B] this frame's draws
    mx: Tensor
    my: Tensor
    fx: Tensor
    fy: Tensor
    dx: Tensor
    dist: Tensor
    dirx: Tensor
    mr: Tensor
    fr: Tensor
    m_af: Tensor
    f_af: Tensor
    ground: Tensor
    stunned: Tensor
    free: Tensor
    in_shield: Tensor
    facing: Tensor
    inward: Tensor
    off: Tensor


def _see(state: EnvState, T: FightTable, levels: FightLevels, seed: int | Tensor, edge: float) -> _Seen:
    ps, fs, g = state.players, state.fight, state.game
    u = uniform_streams(g.env_id, g.tick, seed + CPU_SEED_OFFSET, range(8 + len(GROUND_MOVES)))
    mx, my, fx, fy = mine(ps.position_x), mine(ps.position_y), theirs(ps.position_x), theirs(ps.position_y)
    dx = fx - mx
    rows = rows_of(ps.move)
    mr = mine(rows)
    ground = mine(ps.on_ground) > 0
    stunned = (mine(ps.hitstun_frames_left) > 0) | (mine(fs.hitlag_left) > 0)
    free = (mine(ps.move) < 0) & ~stunned
    off = ~ground & ((mx.abs() - edge > 0) | (my < -5.0)) & (mr != row(CPU, Slot.LEDGE_HANG))
    return _Seen(levels.at(g.cpu_level), u, mx, my, fx, fy, dx, dx.abs(), torch.where(dx >= 0, 1.0, -1.0), mr,
                 theirs(rows), mine(ps.action_frame), theirs(ps.action_frame), ground, stunned, free,
                 (mine(ps.action) == 179.0) & free, mine(ps.facing), -torch.sign(mx), off)


def _survive(s: _Seen, state: EnvState, o: PadOut, decided: Tensor, plan: Tensor, edge: float
             ) -> tuple[PadOut, Tensor, Tensor]:
    """1. DI, 2. recovery from off stage, 3. the ledge, 4. throws from a grab."""
    ps, fs = state.players, state.fight
    lv, u_di, u_rec, u_kind = s.lv, s.u[0], s.u[1], s.u[3]
    one = torch.ones_like(s.mx)
    yes = torch.ones_like(s.ground)
    # 1. DI: perpendicular to the pending launch, toward the stage and up (survival DI).
    ang = torch.deg2rad(mine(fs.launch_angle))
    ldx, ldy = torch.cos(ang) * mine(fs.launch_dir), torch.sin(ang)
    p1x, p1y = -ldy, ldx
    better = (p1y + 0.5 * p1x * s.inward) >= 0
    dix, diy = torch.where(better, p1x, -p1x), torch.where(better, p1y, -p1y)
    o, decided = put(o, decided, s.stunned & (u_di < lv.di), sx=dix, sy=diy)
    o, decided = put(o, decided, s.stunned)
    # 2. Recovery from off stage.
    gap = s.mx.abs() - edge
    helpless = mine(fs.helpless) > 0
    falling = mine(ps.speed_y) <= 0
    jumps = mine(ps.jumps_left)
    act = s.off & s.free & (u_rec < lv.recover)
    do_jump = act & (jumps > 0) & falling & ((s.my < -8.0) | (gap > 40.0)) & (mine(ps.jump_held) == 0)
    o, decided = put(o, decided, do_jump, jump=yes, sx=s.inward)
    do_upb = act & (jumps <= 0) & ~helpless & falling & (s.my < -lv.upb_below) & (gap < lv.upb_within) & (mine(fs.b_held) == 0)
    o, decided = put(o, decided, do_upb, b=yes, sy=one, sx=s.inward * 0.3)
    do_side = (act & (jumps <= 0) & ~helpless & falling & (gap > 60.0) & (plan != PLAN_SIDE_B_USED)
               & (mine(fs.b_held) == 0))
    o, decided = put(o, decided, do_side, b=yes, sx=s.inward)
    plan = torch.where(do_side & ~do_upb, PLAN_SIDE_B_USED, plan)
    o, decided = put(o, decided, s.off, sx=s.inward)
    hang_row = row(CPU, Slot.LEDGE_HANG)
    plan = torch.where(s.ground | (s.mr == hang_row), torch.where(plan == PLAN_SIDE_B_USED, PLAN_NONE, plan), plan)
    # 3. The ledge: get up or jump once its reaction time has passed.
    hang = (s.mr == hang_row) & (s.m_af > lv.reaction)
    o, decided = put(o, decided, hang & (u_kind < 0.3), jump=mine(ps.jump_held) == 0)
    o, decided = put(o, decided, hang, sx=s.inward)
    # 4. Holding the agent: throw toward the nearer blast zone, or down, or up.
    holding = (s.mr == row(CPU, Slot.GRAB_HOLD)) & (s.m_af > 3)
    toward_edge = torch.sign(s.mx + (s.mx == 0).float())
    o, decided = put(o, decided, holding & (u_kind < 0.5), sx=toward_edge)
    o, decided = put(o, decided, holding & (u_kind < 0.75), sy=-one)
    o, decided = put(o, decided, holding, sy=one)
    return o, decided, plan


def _defend(s: _Seen, state: EnvState, T: FightTable, o: PadOut, decided: Tensor, plan: Tensor, timer: Tensor
            ) -> tuple[PadOut, Tensor, Tensor, Tensor]:
    """5. Defence: the agent's attack is coming and reaches; shield or spot dodge (then a grab out of shield)."""
    fs, g, lv = state.fight, state.game, s.lv
    u_def, u_kind = s.u[2], s.u[3]
    yes = torch.ones_like(s.ground)
    f_attack = (T.attack[s.fr] > 0) & (s.f_af >= lv.reaction) & (s.f_af <= T.first_active[s.fr] + 2)
    threat = f_attack & (s.dist <= T.reach[s.fr] + 20.0) & ((s.fy - s.my).abs() < 30.0)
    can_defend = s.ground & (s.free | s.in_shield)
    start_def = can_defend & threat & (u_def < lv.defend)
    spot = start_def & (u_kind < 0.35)
    o, decided = put(o, decided, spot, shield=yes, sy=-torch.ones_like(s.mx))
    plan = torch.where(start_def & ~spot, PLAN_SHIELD, plan)
    timer = torch.where(start_def & ~spot, 0.0, timer)
    keep_shield = (plan == PLAN_SHIELD) & can_defend & (timer < SHIELD_HOLD)
    o, decided = put(o, decided, keep_shield, shield=yes)
    oos = (plan == PLAN_SHIELD) & s.in_shield & (timer >= SHIELD_HOLD) & (s.dist < 20.0) & (g.cpu_level >= 7)
    o, decided = put(o, decided, oos, z=mine(fs.z_held) == 0, shield=yes)
    plan = torch.where((plan == PLAN_SHIELD) & ~keep_shield, PLAN_NONE, plan)
    return o, decided, plan, timer


def _ground_attack(s: _Seen, state: EnvState, T: FightTable, o: PadOut, decided: Tensor, cooldown: Tensor
                   ) -> tuple[PadOut, Tensor, Tensor]:
    """6. Attacks in reach (facing the agent): one of Marth's ground moves, weighted."""
    lv, u_agg, u_acc, u_pick = s.lv, s.u[4], s.u[5], s.u[8:]
    neutral = s.ground & s.free & ~s.in_shield
    face_ok = s.facing == s.dirx
    o, decided = put(o, decided, neutral & ~face_ok & (s.dist < 40.0) & (s.dist > 3.0), sx=s.dirx * 0.5)  # turn
    ready = neutral & face_ok & (cooldown <= 0) & (u_agg < lv.aggression)
    best_w = torch.zeros_like(s.mx)
    pick = torch.full_like(s.mx, float(Slot.JAB1))
    any_reach = torch.zeros_like(s.ground)
    wild = u_acc >= lv.accuracy
    m_action = mine(state.players.action)
    dashing = (m_action == 20.0) | (m_action == 21.0)
    for k, (slot, w) in enumerate(GROUND_MOVES):
        reach = T.reach[row(CPU, slot)] + 3.5
        ok = (s.dist <= reach) & ((s.fy - s.my) < 25.0)
        if slot == Slot.DASH_ATTACK:
            ok = ok & dashing
        elif slot == Slot.UTILT:
            ok = ok & (s.fy - s.my > 5.0)
        weight = torch.where(ok | wild, w * (0.05 + u_pick[k]), 0.0)
        heavier = weight > best_w
        pick, best_w = torch.where(heavier, float(slot), pick), torch.where(heavier, weight, best_w)
        any_reach = any_reach | ok
    go = ready & (any_reach | wild)
    one = torch.ones_like(s.mx)
    yes = torch.ones_like(s.ground)
    for slot, kw in ((Slot.JAB1, {}), (Slot.FTILT, dict(sx=s.dirx * 0.5)), (Slot.DTILT, dict(sy=-0.5 * one)),
                     (Slot.UTILT, dict(sy=0.5 * one)), (Slot.FSMASH, dict(sx=s.dirx)), (Slot.USMASH, dict(sy=one)),
                     (Slot.DSMASH, dict(sy=-one)), (Slot.DASH_ATTACK, dict(sx=s.dirx))):
        o, decided = put(o, decided, go & (pick == float(slot)), a=yes, **kw)
    o, decided = put(o, decided, go & (pick == float(Slot.GRAB)), z=yes)
    return o, decided, torch.where(go, lv.cooldown, cooldown)


def _aerial(s: _Seen, state: EnvState, T: FightTable, o: PadOut, decided: Tensor, plan: Tensor, timer: Tensor,
            cooldown: Tensor) -> tuple[PadOut, Tensor, Tensor, Tensor, Tensor]:
    """A short hop toward the agent for an aerial, the aerial by where the agent is, and the L-cancel."""
    ps, fs, lv = state.players, state.fight, s.lv
    u_aer, u_misc = s.u[6], s.u[7]
    one = torch.ones_like(s.mx)
    yes = torch.ones_like(s.ground)
    neutral = s.ground & s.free & ~s.in_shield
    face_ok = s.facing == s.dirx
    hop = neutral & face_ok & (cooldown <= 0) & (s.dist < 45.0) & (s.dist > 10.0) & (u_aer < lv.aerials * 0.1)
    o, decided = put(o, decided, hop, jump=yes, sx=s.dirx * 0.5)
    plan = torch.where(hop, PLAN_AERIAL, plan)
    timer = torch.where(hop, 0.0, timer)
    airborne_free = ~s.ground & s.free & ~s.off & (plan == PLAN_AERIAL) & (timer > 6)
    above, below = s.fy - s.my > 12.0, s.my - s.fy > 12.0
    behind = (s.dx * s.facing) < 0
    aer = airborne_free & (s.dist < 35.0)
    o, decided = put(o, decided, aer & above, a=yes, sy=one)
    o, decided = put(o, decided, aer & below, a=yes, sy=-one)
    o, decided = put(o, decided, aer & behind, a=yes, sx=-s.facing)
    o, decided = put(o, decided, aer & (u_misc < 0.5), a=yes, sx=s.facing)
    o, decided = put(o, decided, aer, a=yes)
    plan = torch.where(aer | s.ground & (timer > 30), torch.where(plan == PLAN_AERIAL, PLAN_NONE, plan), plan)
    cooldown = torch.where(aer, lv.cooldown, cooldown)
    # L-cancel: press L just before landing from an aerial.
    in_aerial = (T.aerial[s.mr] > 0) & ~s.ground
    lc = in_aerial & (mine(ps.speed_y) < 0) & (s.my < 6.0) & (mine(fs.shield_held) == 0) & (u_misc < lv.lcancel)
    o, decided = put(o, decided, lc, shield=yes)
    o, decided = put(o, decided, ~s.ground & s.free & ~s.off, sx=s.dirx * 0.6)  # drift toward the agent
    return o, decided, plan, timer, cooldown


def control(state: EnvState, T: FightTable, levels: FightLevels, seed: int | Tensor, edge: float) -> CpuDecision:
    """Marth's controller this frame, as the designed CPU at each environment's level (the module docstring)."""
    fs, g = state.fight, state.game
    s = _see(state, T, levels, seed, edge)
    o, decided = PadOut.neutral(s.mx), torch.zeros_like(s.ground)
    plan, timer = fs.cpu_plan, fs.cpu_timer + 1
    cooldown = (g.cpu_cooldown - 1).clamp(min=0)
    o, decided, plan = _survive(s, state, o, decided, plan, edge)
    o, decided, plan, timer = _defend(s, state, T, o, decided, plan, timer)
    o, decided, cooldown = _ground_attack(s, state, T, o, decided, cooldown)
    o, decided, plan, timer, cooldown = _aerial(s, state, T, o, decided, plan, timer, cooldown)
    # 7. Approach, staying on stage.
    target = s.fx.clamp(-(edge - 10.0), edge - 10.0)
    tdx = target - s.mx
    far = s.ground & s.free & ~s.in_shield & (tdx.abs() > 20.0)
    o, decided = put(o, decided, far, sx=torch.sign(tdx) * torch.where(s.lv.dash > 0, 1.0, 0.5))
    return CpuDecision(o, fs._replace(cpu_plan=plan, cpu_timer=timer), cooldown)


@dataclass(frozen=True)
class DesignedCpu:
    """The designed CPU as an object: its level table, and :meth:`control` (the pads it writes this frame)."""

    levels: FightLevels
    name: str = "designed"

    @classmethod
    def build(cls, device: torch.device) -> DesignedCpu:
        return cls(FightLevels.build(device))

    def control(self, state: EnvState, T: FightTable, seed: int | Tensor, edge: float) -> CpuDecision:
        return control(state, T, self.levels, seed, edge)


__all__ = ["control", "DesignedCpu", "FightLevels", "FIGHT_LEVELS", "level_rows", "CPU_SEED_OFFSET", "PadOut", "put",
           "CpuDecision", "mine", "theirs"]
