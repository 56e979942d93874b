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
the same games. The dodging game's CPUs are in :mod:`melee_agent.arena.dodge.frame` and :mod:`melee_agent.arena.cpu_levels`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor

from melee_agent.arena.draws import uniform_streams
from melee_agent.arena.env_state import AGENT, CPU, EnvState
from melee_agent.arena.fight.fighter import rows_of
from melee_agent.arena.fight.moves import FightTable, Slot, row
from melee_agent.arena.fight.state import FightState

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


class PadOut(NamedTuple):
    """Marth's controller as the CPU writes it, ``[B]`` each."""

    a: Tensor
    b: Tensor
    jump: Tensor
    z: Tensor
    shield: Tensor
    sx: Tensor
    sy: Tensor


def put(o: PadOut, decided: Tensor, mask: Tensor, **values: Tensor) -> tuple[PadOut, Tensor]:
    """Write controller ``values`` where ``mask`` holds and nothing was decided yet (the first decision wins)."""
    m = mask & ~decided
    o = o._replace(**{k: torch.where(m, v, getattr(o, k)) for k, v in values.items()})
    return o, decided | m


class CpuDecision(NamedTuple):
    """Marth's controller this frame and the CPU's updated memory."""

    pad: PadOut
    fight: FightState
    cooldown: Tensor  # [B] frames before it may attack again


def mine(t: Tensor) -> Tensor:
    """Marth's column of a ``[B, 2]`` field; compiled, as its own contiguous ``[B]`` copy.

    A copy read many times is written once and then read in order, so the CPU's loops stay vectorized
    (inductor gives up SIMD for a loop with many strided reads of the ``[B, 2]`` fields). Op by op the
    copy would only cost time.
    """
    return t[:, CPU].contiguous() if torch.compiler.is_compiling() else t[:, CPU]


def theirs(t: Tensor) -> Tensor:
    """The agent's column of a ``[B, 2]`` field (see :func:`mine`)."""
    return t[:, AGENT].contiguous() if torch.compiler.is_compiling() else t[:, AGENT]


def control(state: EnvState, T: FightTable, levels: FightLevels, seed: int | Tensor, edge: float) -> CpuDecision:
    ps, fs, g = state.players, state.fight, state.game
    lv = levels.at(g.cpu_level)
    u = uniform_streams(g.env_id, g.tick, seed + CPU_SEED_OFFSET, range(8 + len(GROUND_MOVES)))
    u_di, u_rec, u_def, u_kind, u_agg, u_acc, u_aer, u_misc = u[:8]
    u_pick = u[8:]
    mx, my, fx, fy = mine(ps.position_x), mine(ps.position_y), theirs(ps.position_x), theirs(ps.position_y)
    dx = fx - mx
    dist = dx.abs()
    dirx = torch.where(dx >= 0, 1.0, -1.0)
    rows = rows_of(ps.move)
    mr, fr = mine(rows), theirs(rows)
    m_af, f_af = mine(ps.action_frame), theirs(ps.action_frame)
    cpu_row = lambda s: row(CPU, s)  # noqa: E731
    ground = mine(ps.on_ground) > 0
    stunned = (mine(ps.hitstun_frames_left) > 0) | (mine(fs.hitlag_left) > 0)
    free = (mine(ps.move) < 0) & ~stunned
    m_action = mine(ps.action)
    in_shield = (m_action == 179.0) & free
    facing = mine(ps.facing)
    zero = torch.zeros_like(mx)
    o = PadOut(zero.bool(), zero.bool(), zero.bool(), zero.bool(), zero.bool(), zero, zero)
    decided = torch.zeros_like(ground)
    plan, timer = fs.cpu_plan, fs.cpu_timer + 1
    cooldown = (g.cpu_cooldown - 1).clamp(min=0)

    # 1. DI: perpendicular to the pending launch, toward the stage and up (survival DI).
    ang = torch.deg2rad(mine(fs.launch_angle))
    ldx, ldy = torch.cos(ang) * mine(fs.launch_dir), torch.sin(ang)
    p1x, p1y = -ldy, ldx
    inward = -torch.sign(mx)
    better = (p1y + 0.5 * p1x * inward) >= 0
    dix, diy = torch.where(better, p1x, -p1x), torch.where(better, p1y, -p1y)
    o, decided = put(o, decided, stunned & (u_di < lv.di), sx=dix, sy=diy)
    o, decided = put(o, decided, stunned)
    # 2. Recovery from off stage.
    gap = mx.abs() - edge
    off = ~ground & ((gap > 0) | (my < -5.0)) & (mr != cpu_row(Slot.LEDGE_HANG))
    helpless = mine(fs.helpless) > 0
    falling = mine(ps.speed_y) <= 0
    jumps = mine(ps.jumps_left)
    act = off & free & (u_rec < lv.recover)
    do_jump = act & (jumps > 0) & falling & ((my < -8.0) | (gap > 40.0)) & (mine(ps.jump_held) == 0)
    o, decided = put(o, decided, do_jump, jump=torch.ones_like(ground), sx=inward)
    do_upb = act & (jumps <= 0) & ~helpless & falling & (my < -lv.upb_below) & (gap < lv.upb_within) & (mine(fs.b_held) == 0)
    o, decided = put(o, decided, do_upb, b=torch.ones_like(ground), sy=torch.ones_like(mx), sx=inward * 0.3)
    do_side = (act & (jumps <= 0) & ~helpless & falling & (gap > 60.0) & (plan != PLAN_SIDE_B_USED)
               & (mine(fs.b_held) == 0))
    o, decided = put(o, decided, do_side, b=torch.ones_like(ground), sx=inward)
    plan = torch.where(do_side & ~do_upb, PLAN_SIDE_B_USED, plan)
    o, decided = put(o, decided, off, sx=inward)
    plan = torch.where(ground | (mr == cpu_row(Slot.LEDGE_HANG)), torch.where(plan == PLAN_SIDE_B_USED, PLAN_NONE, plan),
                       plan)
    # 3. The ledge: get up or jump once its reaction time has passed.
    hang = (mr == cpu_row(Slot.LEDGE_HANG)) & (m_af > lv.reaction)
    o, decided = put(o, decided, hang & (u_kind < 0.3), jump=mine(ps.jump_held) == 0)
    o, decided = put(o, decided, hang, sx=inward)
    # 4. Holding the agent: throw toward the nearer blast zone, or down, or up.
    holding = (mr == cpu_row(Slot.GRAB_HOLD)) & (m_af > 3)
    toward_edge = torch.sign(mx + (mx == 0).float())
    th = u_kind
    o, decided = put(o, decided, holding & (th < 0.5), sx=toward_edge)
    o, decided = put(o, decided, holding & (th < 0.75), sy=-torch.ones_like(mx))
    o, decided = put(o, decided, holding, sy=torch.ones_like(mx))
    # 5. Defence: the agent's attack is coming and reaches; shield or spot dodge.
    f_attack = (T.attack[fr] > 0) & (f_af >= lv.reaction) & (f_af <= T.first_active[fr] + 2)
    threat = f_attack & (dist <= T.reach[fr] + 20.0) & ((fy - my).abs() < 30.0)
    can_defend = ground & (free | in_shield)
    start_def = can_defend & threat & (u_def < lv.defend)
    spot = start_def & (u_kind < 0.35)
    o, decided = put(o, decided, spot, shield=torch.ones_like(ground), sy=-torch.ones_like(mx))
    plan = torch.where(start_def & ~spot, PLAN_SHIELD, plan)
    timer = torch.where(start_def & ~spot, 0.0, timer)
    keep_shield = (plan == PLAN_SHIELD) & can_defend & (timer < SHIELD_HOLD)
    o, decided = put(o, decided, keep_shield, shield=torch.ones_like(ground))
    oos = (plan == PLAN_SHIELD) & in_shield & (timer >= SHIELD_HOLD) & (dist < 20.0) & (g.cpu_level >= 7)
    o, decided = put(o, decided, oos, z=mine(fs.z_held) == 0, shield=torch.ones_like(ground))
    plan = torch.where((plan == PLAN_SHIELD) & ~keep_shield, PLAN_NONE, plan)
    # 6. Attacks in reach (facing the agent), or a short hop into an aerial.
    neutral = ground & free & ~in_shield
    face_ok = facing == dirx
    turn = neutral & ~face_ok & (dist < 40.0) & (dist > 3.0)
    o, decided = put(o, decided, turn, sx=dirx * 0.5)
    ready = neutral & face_ok & (cooldown <= 0) & (u_agg < lv.aggression)
    best_w = torch.zeros_like(mx)
    pick = torch.full_like(mx, float(Slot.JAB1))
    any_reach = torch.zeros_like(ground)
    wild = u_acc >= lv.accuracy
    dashing = (m_action == 20.0) | (m_action == 21.0)
    for k, (s, w) in enumerate(GROUND_MOVES):
        reach = T.reach[cpu_row(s)] + 3.5
        ok = (dist <= reach) & ((fy - my) < 25.0)
        if s == Slot.DASH_ATTACK:
            ok = ok & dashing
        elif s == Slot.UTILT:
            ok = ok & (fy - my > 5.0)
        weight = torch.where(ok | wild, w * (0.05 + u_pick[k]), 0.0)
        heavier = weight > best_w
        pick, best_w = torch.where(heavier, float(s), pick), torch.where(heavier, weight, best_w)
        any_reach = any_reach | ok
    go = ready & (any_reach | wild)
    one = torch.ones_like(mx)
    for s, kw in ((Slot.JAB1, {}), (Slot.FTILT, dict(sx=dirx * 0.5)), (Slot.DTILT, dict(sy=-0.5 * one)),
                  (Slot.UTILT, dict(sy=0.5 * one)), (Slot.FSMASH, dict(sx=dirx)), (Slot.USMASH, dict(sy=one)),
                  (Slot.DSMASH, dict(sy=-one)), (Slot.DASH_ATTACK, dict(sx=dirx))):
        o, decided = put(o, decided, go & (pick == float(s)), a=torch.ones_like(ground), **kw)
    o, decided = put(o, decided, go & (pick == float(Slot.GRAB)), z=torch.ones_like(ground))
    cooldown = torch.where(go, lv.cooldown, cooldown)
    # Short hop toward the agent for an aerial; then the aerial by where the agent is.
    hop = neutral & face_ok & (cooldown <= 0) & (dist < 45.0) & (dist > 10.0) & (u_aer < lv.aerials * 0.1)
    o, decided = put(o, decided, hop, jump=torch.ones_like(ground), sx=dirx * 0.5)
    plan = torch.where(hop, PLAN_AERIAL, plan)
    timer = torch.where(hop, 0.0, timer)
    airborne_free = ~ground & free & ~off & (plan == PLAN_AERIAL) & (timer > 6)
    above, below = fy - my > 12.0, my - fy > 12.0
    behind = (dx * facing) < 0
    aer = airborne_free & (dist < 35.0)
    o, decided = put(o, decided, aer & above, a=torch.ones_like(ground), sy=one)
    o, decided = put(o, decided, aer & below, a=torch.ones_like(ground), sy=-one)
    o, decided = put(o, decided, aer & behind, a=torch.ones_like(ground), sx=-facing)
    o, decided = put(o, decided, aer & (u_misc < 0.5), a=torch.ones_like(ground), sx=facing)
    o, decided = put(o, decided, aer, a=torch.ones_like(ground))
    plan = torch.where(aer | ground & (timer > 30), torch.where(plan == PLAN_AERIAL, PLAN_NONE, plan), plan)
    cooldown = torch.where(aer, lv.cooldown, cooldown)
    # L-cancel: press L just before landing from an aerial.
    in_aerial = (T.aerial[mr] > 0) & ~ground
    lc = in_aerial & (mine(ps.speed_y) < 0) & (my < 6.0) & (mine(fs.shield_held) == 0) & (u_misc < lv.lcancel)
    o, decided = put(o, decided, lc, shield=torch.ones_like(ground))
    o, decided = put(o, decided, ~ground & free & ~off, sx=dirx * 0.6)  # drift toward the agent
    # 7. Approach, staying on stage.
    target = fx.clamp(-(edge - 10.0), edge - 10.0)
    tdx = target - mx
    far = neutral & (tdx.abs() > 20.0)
    o, decided = put(o, decided, far, sx=torch.sign(tdx) * torch.where(lv.dash > 0, 1.0, 0.5))
    fs = fs._replace(cpu_plan=plan, cpu_timer=timer)
    return CpuDecision(o, fs, cooldown)
