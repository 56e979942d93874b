"""One game frame for B environments at once: controller -> actions -> physics -> hits.

Everything is elementwise over environments (no reductions across them), so environment i's
trajectory depends only on its own state and random stream: B = 1 and B = 1,024 agree.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import torch
from melee.enums import Action

from melee_agent.actions import COL
from melee_agent.arena import data as d
from melee_agent.arena.cpu_levels import LevelTable, LevelTensors
from melee_agent.arena.draws import CpuDraws
from melee_agent.arena.fields import Fields
from melee_agent.arena.layout import AGENT, CPU, E, P
from melee_agent.arena.tables import AIRDODGE_FRAMES, LANDING_SPECIAL_FRAMES, MOVE_INDEX, NUM_MARTH_MOVES
from melee_agent.arena.tables import SHINE_END_LAG, Tables

LOCKED = -2.0  # MOVE value of a timed action that is not a move (jump squat, landing, shield drop...)
NO_MOVE = -1.0
STANDING, FALLING = float(Action.STANDING.value), float(Action.FALLING.value)

def intangible(S: torch.Tensor, T: Tables) -> torch.Tensor:
    """``[B, 2]``: inside an intangibility window of the current action, or respawn-invulnerable."""
    act = S[..., P.ACT].long()
    af = S[..., P.AF]
    return ((af >= T.intang_lo[act]) & (af <= T.intang_hi[act]) & (T.intang_lo[act] > 0)) | (S[..., P.INV] > 0)


def _start(S: torch.Tensor, p: int | None, mask: torch.Tensor, act: float | torch.Tensor,
           move: float | torch.Tensor, busy: float | torch.Tensor) -> None:
    """Put player ``p`` (``[B]`` mask), or both players (``p=None``, ``[B, 2]`` mask), into a new action.

    Every write covers both players (the other one masked out), so a compiled frame keeps one
    ``[B, 2]`` iteration space instead of splitting and re-joining the players' columns.
    """
    if p is not None:
        off = torch.zeros_like(mask)
        mask = torch.stack((mask, off) if p == AGENT else (off, mask)).t()
        act, move, busy = (v.unsqueeze(1) if isinstance(v, torch.Tensor) else v for v in (act, move, busy))
    for col, value in ((P.ACT, act), (P.MOVE, move), (P.BUSY, busy), (P.AF, 1.0), (P.HITDONE, 0.0)):
        S[..., col] = torch.where(mask, value, S[..., col])


def _end_timed_actions(S: torch.Tensor, T: Tables) -> None:
    ended = (S[..., P.MOVE] != NO_MOVE) & (S[..., P.BUSY] <= 0)
    act = S[..., P.ACT]
    fwd_roll = ended & (act == Action.ROLL_FORWARD.value)
    S[..., P.FACE] = torch.where(fwd_roll, -S[..., P.FACE], S[..., P.FACE])  # a forward roll turns you around
    knee = ended & (act == Action.KNEE_BEND.value)
    shine = ended & (act == Action.DOWN_B_GROUND_START.value)
    rest = ended & ~knee & ~shine
    ground = S[..., P.GND] > 0
    new_act = torch.where(ground, STANDING, FALLING)
    S[..., P.ACT] = torch.where(rest, new_act, torch.where(knee, float(Action.JUMPING_FORWARD.value), act))
    S[..., P.MOVE] = torch.where(rest | knee, NO_MOVE, S[..., P.MOVE])
    S[..., P.AF] = torch.where(ended, 1.0, S[..., P.AF])
    # Jump squat over: leave the ground with the full-hop speed (SmashWiki Fox 3.68).
    S[..., P.GND] = torch.where(knee, 0.0, S[..., P.GND])
    S[..., P.VY] = torch.where(knee, d.FOX_JUMP_SPEED, S[..., P.VY])
    S[..., P.JUMPS] = torch.where(knee, S[..., P.JUMPS] - 1, S[..., P.JUMPS])
    # The 3-frame shine start flows into the reflector, jump-cancellable, else its end lag.
    S[..., P.ACT] = torch.where(shine, float(Action.DOWN_B_GROUND.value), S[..., P.ACT])
    S[..., P.MOVE] = torch.where(shine, LOCKED, S[..., P.MOVE])
    S[..., P.BUSY] = torch.where(shine, float(SHINE_END_LAG), S[..., P.BUSY])


class Stick(NamedTuple):
    """What the agent's controller asks for this frame, read once."""

    jump_press: torch.Tensor  # X or Y pressed this frame (not held from the last one)
    shield: torch.Tensor  # L or R, digital or analog
    down: torch.Tensor
    side: torch.Tensor  # the stick tilted left or right
    sx: torch.Tensor  # stick x around neutral, in [-0.5, 0.5]
    dirx: torch.Tensor  # its sign


def _read_controller(S: Fields, ctrl: torch.Tensor) -> Stick:
    """Fox's controller state (``ctrl[column]``: ``[len(TABLE_COLUMNS), B]``) as Dolphin would receive it."""
    s = S[:, AGENT]
    sx, sy = ctrl[COL["stick_x"]] - 0.5, ctrl[COL["stick_y"]] - 0.5
    jump_held = (ctrl[COL["X"]] + ctrl[COL["Y"]]) > 0
    jump_press = jump_held & (s[:, P.JHELD] == 0)
    s[:, P.JHELD] = jump_held.float()
    shield = (ctrl[COL["L"]] > 0) | (ctrl[COL["l_shoulder"]] > 0.3)
    return Stick(jump_press, shield, sy < -0.2, sx.abs() > 0.2, sx, torch.sign(sx))


def _agent_ground_actions(S: Fields, c: Stick, ctrl: torch.Tensor, gfree: torch.Tensor,
                          in_shield: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Shine, jump, spot dodge, roll, shield and shield drop; returns who walks and who stands."""
    s = S[:, AGENT]
    # Jump out of shine (from its 4th frame: the start is 3 frames) or out of shield.
    jc = (s[:, P.ACT] == Action.DOWN_B_GROUND.value) & c.jump_press & (s[:, P.STUN] <= 0)
    c_shine = gfree & (ctrl[COL["B"]] > 0) & c.down
    c_jump = (gfree & c.jump_press & ~c_shine) | jc
    busy_free = gfree & ~c_shine & ~c_jump
    c_spot = busy_free & c.shield & c.down
    c_roll = busy_free & c.shield & c.side & ~c.down
    c_shield = busy_free & c.shield & ~c.down & ~c.side
    c_drop = busy_free & in_shield & ~c.shield
    c_move = busy_free & ~c.shield & c.side & ~in_shield
    c_stand = busy_free & ~c.shield & ~c.side & ~in_shield

    face = s[:, P.FACE]
    s[:, P.FACE] = torch.where(c_move, c.dirx, face)
    forward = (c.dirx == face)
    roll_move = torch.where(forward, float(MOVE_INDEX["roll_forward"]), float(MOVE_INDEX["roll_backward"]))
    roll_act = torch.where(forward, float(Action.ROLL_FORWARD.value), float(Action.ROLL_BACKWARD.value))
    roll_len = torch.where(forward, float(d.FOX_ROLL_FORWARD.length), float(d.FOX_ROLL_BACKWARD.length))
    _start(S, AGENT, c_shine, float(Action.DOWN_B_GROUND_START.value), float(MOVE_INDEX["shine"]),
           float(d.FOX_SHINE.length))
    _start(S, AGENT, c_jump, float(Action.KNEE_BEND.value), LOCKED, float(d.FOX_JUMPSQUAT))
    _start(S, AGENT, c_spot, float(Action.SPOTDODGE.value), float(MOVE_INDEX["spot_dodge"]),
           float(d.FOX_SPOT_DODGE.length))
    _start(S, AGENT, c_roll, roll_act, roll_move, roll_len)
    _start(S, AGENT, c_drop, float(Action.SHIELD_RELEASE.value), LOCKED, float(d.SHIELD_RELEASE_FRAMES))
    new_shield = c_shield & ~in_shield
    _start(S, AGENT, new_shield, float(Action.SHIELD.value), NO_MOVE, 0.0)
    return c_move, c_stand


def _agent_walk(S: Fields, c: Stick, c_move: torch.Tensor, c_stand: torch.Tensor, ground: torch.Tensor) -> None:
    """Walking and dashing: speed from the stick's tilt (walk 1.6 from characterdata; dash 2.2 SmashWiki)."""
    s = S[:, AGENT]
    dash = c.sx.abs() > 0.35
    speed = torch.where(dash, d.FOX_DASH_SPEED, d.FOX.walk * (c.sx.abs() / 0.35).clamp(max=1.0))
    walk_act = torch.where(dash, float(Action.DASHING.value), float(Action.WALK_MIDDLE.value))
    moving_act = torch.where(c_move, walk_act, STANDING)
    changed = (c_move | c_stand) & (moving_act != s[:, P.ACT])
    s[:, P.ACT] = torch.where(c_move | c_stand, moving_act, s[:, P.ACT])
    s[:, P.AF] = torch.where(changed, 1.0, s[:, P.AF])
    vx = s[:, P.VX]
    friction = torch.sign(vx) * torch.clamp(vx.abs(), max=d.FOX.friction)
    s[:, P.VX] = torch.where(c_move, c.dirx * speed, torch.where(ground, vx - friction, vx))


def _agent_air(S: Fields, c: Stick, afree: torch.Tensor) -> None:
    """In the air: double jump, air dodge, drift, fast fall (characterdata.csv values)."""
    s = S[:, AGENT]
    c_dj = afree & c.jump_press & (s[:, P.JUMPS] > 0)
    s[:, P.VY] = torch.where(c_dj, d.FOX.dj_speed, s[:, P.VY])
    s[:, P.VX] = torch.where(c_dj, c.dirx * d.FOX.dj_speed_x, s[:, P.VX])
    s[:, P.JUMPS] = torch.where(c_dj, s[:, P.JUMPS] - 1, s[:, P.JUMPS])
    s[:, P.FF] = torch.where(c_dj, 0.0, s[:, P.FF])
    _start(S, AGENT, c_dj, float(Action.JUMPING_ARIAL_FORWARD.value), NO_MOVE, 0.0)
    c_ad = afree & c.shield & ~c_dj
    _start(S, AGENT, c_ad, float(Action.AIRDODGE.value), LOCKED, float(AIRDODGE_FRAMES))
    drift = afree & c.side
    vx = s[:, P.VX]
    air_fric = torch.sign(vx) * torch.clamp(vx.abs(), max=d.FOX.air_friction)
    drifted = (vx + c.dirx * d.FOX.air_mobility).clamp(-d.FOX.air_speed, d.FOX.air_speed)
    s[:, P.VX] = torch.where(drift, drifted, torch.where(afree, vx - air_fric, s[:, P.VX]))
    c_ff = afree & c.down & (s[:, P.VY] < 0)
    s[:, P.FF] = torch.where(c_ff, 1.0, s[:, P.FF])


def _agent_control(S: Fields, ctrl: torch.Tensor) -> None:
    """Fox reads the frame's controller state: ground actions, then walking, then air control."""
    c = _read_controller(S, ctrl)
    s = S[:, AGENT]
    ground = s[:, P.GND] > 0
    free = (s[:, P.BUSY] <= 0) & (s[:, P.STUN] <= 0) & (s[:, P.MOVE] == NO_MOVE)
    in_shield = s[:, P.ACT] == Action.SHIELD.value
    c_move, c_stand = _agent_ground_actions(S, c, ctrl, free & ground, in_shield)
    _agent_walk(S, c, c_move, c_stand, ground)
    _agent_air(S, c, free & ~ground)


class Forecast(NamedTuple):
    """What the CPU reads of the agent: when it can be hit, how long it stays busy, where it will be."""

    intang_left: torch.Tensor  # frames until its current intangibility window is over (0 if none)
    starts_in: torch.Tensor  # frames until an intangibility window still to come starts (999 if none)
    busy_left: torch.Tensor  # frames before it can act again
    rolling: torch.Tensor
    future_x: torch.Tensor  # where a roll carries it (else where it is)
    future_dist: torch.Tensor
    low_enough: torch.Tensor  # near enough the ground for Marth's grounded attacks
    action_frame: torch.Tensor


def _forecast_agent(f: Any, marth_x: torch.Tensor, T: Tables) -> Forecast:
    fox_act = f[:, P.ACT].long()
    fox_af = f[:, P.AF]
    lo, hi = T.intang_lo[fox_act], T.intang_hi[fox_act]
    has_window = lo > 0
    intang_left = torch.where(has_window, (hi - fox_af + 1).clamp(min=0), 0.0)
    intang_left = torch.maximum(intang_left, f[:, P.INV])
    starts_in = torch.where(has_window & (fox_af < lo), lo - fox_af, 999.0)
    busy_left = torch.where(f[:, P.MOVE] != NO_MOVE, f[:, P.BUSY], 0.0) + f[:, P.STUN]
    # A roll carries the agent to the end of its locomotion.
    fmove = f[:, P.MOVE].long().clamp(min=0)
    rolling = (f[:, P.MOVE] == MOVE_INDEX["roll_forward"]) | (f[:, P.MOVE] == MOVE_INDEX["roll_backward"])
    roll_dir = torch.where(f[:, P.MOVE] == MOVE_INDEX["roll_forward"], f[:, P.FACE], -f[:, P.FACE])
    remaining = T.cumloco[fmove, -1] - T.cumloco[fmove, fox_af.long().clamp(max=T.cumloco.shape[1] - 1)]
    future_x = torch.where(rolling, (f[:, P.X] + roll_dir * remaining).clamp(-d.EDGE, d.EDGE), f[:, P.X])
    future_dist = (future_x - marth_x).abs()
    return Forecast(intang_left, starts_in, busy_left, rolling, future_x, future_dist, f[:, P.Y] < 20.0, fox_af)


def _cpu_choose_attack(dist: torch.Tensor, fc: Forecast, T: Tables, level: LevelTensors, u: CpuDraws,
                       free: torch.Tensor, recovered: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Which environments' CPU starts an attack this frame, and which one (``[B]`` mask, ``[B]`` move)."""
    first = T.first_active[:NUM_MARTH_MOVES]  # [K]
    reach = T.reach[:NUM_MARTH_MOVES] + d.BODY_RADIUS
    smart = level.smart > 0  # high levels do not throw attacks into intangibility
    # Per attack k (one [B] computation each, so a compiled frame keeps one loop): can it
    # punish (hit once the agent is hittable, before it can act, where it will be), and does it
    # reach now? Keep the fastest punish and, in neutral, the reaching attack with the largest
    # random weight (first index on ties, as argmin/argmax would).
    for k in range(NUM_MARTH_MOVES):
        fk, rk = first[k], reach[k]
        lands_clear = (fk > fc.intang_left) & (fk < fc.starts_in)
        punish_k = lands_clear & (fk <= fc.busy_left + 1) & (fc.future_dist <= rk) & fc.low_enough
        ok_k = (dist <= rk) & fc.low_enough & (lands_clear | ~smart)
        value = torch.where(punish_k, fk, 999.0)
        weight = ok_k.float() * (0.01 + u.pick[k])
        if k == 0:
            none = torch.zeros_like(dist, dtype=torch.long)
            punishable, fastest, best_value = punish_k, none, value
            ok_now, neutral_pick, best_weight = ok_k, none, weight
            continue
        punishable, ok_now = punishable | punish_k, ok_now | ok_k
        faster, heavier = value < best_value, weight > best_weight
        fastest, best_value = torch.where(faster, k, fastest), torch.where(faster, value, best_value)
        neutral_pick, best_weight = torch.where(heavier, k, neutral_pick), torch.where(heavier, weight, best_weight)
    can_punish = punishable & (fc.action_frame >= level.reaction) & (u.punish < level.punish) & recovered
    wild = (u.wild * NUM_MARTH_MOVES).long().clamp(max=NUM_MARTH_MOVES - 1)
    accurate = u.accurate < level.accuracy
    neutral_pick = torch.where(accurate, neutral_pick, wild)
    want_neutral = (ok_now | ~accurate) & (u.eager < level.aggression) & recovered
    attack = free & (can_punish | want_neutral)
    move = torch.where(can_punish, fastest, neutral_pick).float()
    return attack, move


def _cpu_start_attack(S: Fields, En: Fields, T: Tables, level: LevelTensors, u: CpuDraws, attack: torch.Tensor,
                      move: torch.Tensor) -> None:
    _start(S, CPU, attack, T.action[move.long()], move, T.length[move.long()])
    # After an attack it always waits `recover` frames, plus a random rest, before the next one.
    cooldown = T.length[move.long()] + level.recover + (u.rest * level.rest).floor()
    En[:, E.CPU_CD] = torch.where(attack, cooldown, En[:, E.CPU_CD])


def _cpu_approach(S: Fields, fc: Forecast, T: Tables, level: LevelTensors, idle: torch.Tensor) -> None:
    """An idle CPU walks or runs toward where the agent is (or will be), else stands."""
    m, f = S[:, CPU], S[:, AGENT]
    target = torch.where(fc.rolling, fc.future_x, f[:, P.X]) - m[:, P.X]
    far = target.abs() > (T.reach[0] * 0.8)
    run = idle & far
    speed = d.MARTH_RUN_SPEED * level.approach
    m[:, P.VX] = torch.where(run, torch.sign(target) * speed, torch.where(idle, 0.0, m[:, P.VX]))
    m[:, P.FACE] = torch.where(run, torch.sign(target), m[:, P.FACE])
    moving_act = torch.where(run, torch.where(level.approach > 0.6, float(Action.DASHING.value),
                                              float(Action.WALK_MIDDLE.value)), STANDING)
    changed = idle & (moving_act != m[:, P.ACT])
    m[:, P.ACT] = torch.where(idle, moving_act, m[:, P.ACT])
    m[:, P.AF] = torch.where(changed, 1.0, m[:, P.AF])


def _cpu_control(S: Fields, En: Fields, T: Tables, level: LevelTensors, u: CpuDraws) -> None:
    """Marth's CPU: face the agent, forecast it, choose and start an attack (by level), else approach."""
    m, f = S[:, CPU], S[:, AGENT]
    dx = f[:, P.X] - m[:, P.X]
    free = (m[:, P.BUSY] <= 0) & (m[:, P.STUN] <= 0) & (m[:, P.MOVE] == NO_MOVE) & (m[:, P.GND] > 0)
    m[:, P.FACE] = torch.where(free, torch.where(dx >= 0, 1.0, -1.0), m[:, P.FACE])
    fc = _forecast_agent(f, m[:, P.X], T)
    attack, move = _cpu_choose_attack(dx.abs(), fc, T, level, u, free, En[:, E.CPU_CD] <= 0)
    _cpu_start_attack(S, En, T, level, u, attack, move)
    _cpu_approach(S, fc, T, level, free & ~attack)


def _physics(S: torch.Tensor, T: Tables) -> None:
    ground = S[..., P.GND] > 0
    move = S[..., P.MOVE]
    in_move = move >= 0
    midx = move.long().clamp(min=0)
    af = S[..., P.AF].long().clamp(max=T.loco.shape[1] - 1)
    loco = torch.where(in_move, T.loco[midx, af], 0.0)
    back = move == MOVE_INDEX["roll_backward"]
    mdir = torch.where(back, -S[..., P.FACE], S[..., P.FACE])
    # Moves carry their own movement (framedata locomotion); otherwise ground friction applies.
    vx = torch.where(in_move & ground, 0.0, S[..., P.VX])
    grav, term = T.gravity, T.terminal
    # Position moves with this frame's speed, then gravity acts (libmelee's dj_height integrates
    # the same way: distance += speed; speed -= gravity).
    vy_now = torch.where(ground, 0.0, S[..., P.VY])
    vy_now = torch.where((S[..., P.FF] > 0) & ~ground, -d.FOX.fast_fall, vy_now)
    vy = torch.where(ground, 0.0, torch.maximum(vy_now - grav, -term))
    vy = torch.where((S[..., P.FF] > 0) & ~ground, -d.FOX.fast_fall, vy)
    S[..., P.VX], S[..., P.VY] = vx, vy
    kx, ky = S[..., P.KX], S[..., P.KY]
    x = S[..., P.X] + vx + mdir * loco + kx
    y = S[..., P.Y] + vy_now + ky
    # Rolls and dodges stop at the ledge rather than carrying off stage.
    x = torch.where(in_move & ground, x.clamp(-d.EDGE, d.EDGE), x)
    # Launch speed falls by 0.051 per frame along its direction (SmashWiki).
    kb = torch.sqrt(kx * kx + ky * ky)
    scale = torch.where(kb > 0, (kb - d.KNOCKBACK_DECAY).clamp(min=0) / kb.clamp(min=1e-6), 0.0)
    S[..., P.KX], S[..., P.KY] = kx * scale, ky * scale
    on_stage = x.abs() <= d.EDGE
    land = ~ground & (y <= 0) & on_stage & ((vy + ky) <= 0) & (S[..., P.Y] >= 0)
    walk_off = ground & ~on_stage
    S[..., P.X] = x
    S[..., P.Y] = torch.where(land, 0.0, y)
    S[..., P.GND] = torch.where(land, 1.0, torch.where(walk_off, 0.0, S[..., P.GND]))
    S[..., P.VY] = torch.where(land, 0.0, S[..., P.VY])
    S[..., P.KY] = torch.where(land, 0.0, S[..., P.KY])
    S[..., P.FF] = torch.where(land, 0.0, S[..., P.FF])
    S[..., P.JUMPS] = torch.where(land, 2.0, S[..., P.JUMPS])
    airdodge = S[..., P.ACT] == Action.AIRDODGE.value
    free_land = land & (S[..., P.STUN] <= 0)
    _start(S, None, free_land & ~airdodge, float(Action.LANDING.value), LOCKED, float(d.LANDING_LAG))
    _start(S, None, free_land & airdodge, float(Action.LANDING_SPECIAL.value), LOCKED, float(LANDING_SPECIAL_FRAMES))
    _start(S, None, walk_off & (S[..., P.MOVE] == NO_MOVE), FALLING, NO_MOVE, 0.0)


def _ledge_catch(S: torch.Tensor) -> None:
    """A player falling just past the side of the stage catches the ledge and gets up (simplified)."""
    x, y = S[..., P.X], S[..., P.Y]
    out = x.abs() - d.EDGE
    catch = ((S[..., P.GND] == 0) & (S[..., P.STUN] <= 0) & (y < 0) & (y > -d.LEDGE_CATCH_Y)
             & (out > 0) & (out < d.LEDGE_CATCH_X))
    S[..., P.X] = torch.where(catch, torch.sign(x) * (d.EDGE - 4.0), x)
    for col, value in ((P.Y, 0.0), (P.VX, 0.0), (P.VY, 0.0), (P.KX, 0.0), (P.KY, 0.0), (P.FF, 0.0),
                       (P.GND, 1.0), (P.JUMPS, 2.0)):
        S[..., col] = torch.where(catch, value, S[..., col])
    _start(S, None, catch, float(Action.EDGE_GETUP_SLOW.value), LOCKED, float(d.LEDGE_GETUP_FRAMES))


def _knockback(percent_after: torch.Tensor, damage: torch.Tensor, weight: torch.Tensor, growth: torch.Tensor,
               base: torch.Tensor) -> torch.Tensor:
    """Melee's knockback (SmashWiki): ((p/10 + p*d/20) * 200/(w+100) * 1.4 + 18) * g/100 + b."""
    return ((percent_after / 10 + percent_after * damage / 20) * 200 / (weight + 100) * 1.4 + 18) * growth / 100 + base


def _hits(S: torch.Tensor, T: Tables, untouchable: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Resolve this frame's hitboxes; returns damage dealt to [agent, cpu] and the shield hits on the agent."""

    def attacker(col: int) -> torch.Tensor:  # the attacker of player p is player 1 - p
        return S[..., col].flip(1)

    move = attacker(P.MOVE)
    midx = move.long().clamp(min=0)
    af = attacker(P.AF).long().clamp(max=T.circles.shape[1] - 1)
    live = move >= 0
    ax, ay, face = attacker(P.X), attacker(P.Y), attacker(P.FACE)
    vx, vy = S[..., P.X], S[..., P.Y]
    top = vy + T.height
    # One hitbox circle at a time, each a [B, 2] computation (a compiled frame keeps one loop).
    touch = torch.zeros_like(live)
    for k in range(T.circles.shape[2]):
        ox, oy, r = (torch.where(live, T.circles[midx, af, k, j], 0.0) for j in range(3))
        cx = ax + face * ox
        cy = ay + oy
        dy = cy - torch.minimum(torch.maximum(cy, vy), top)
        dxx = cx - vx
        touch = touch | (((dxx * dxx + dy * dy) <= (r + d.BODY_RADIUS) ** 2) & (r > 0))
    hit = touch & (attacker(P.HITDONE) == 0) & ~untouchable  # [B, 2]
    shielding = (S[..., P.ACT] == Action.SHIELD.value)
    shield_hit = hit & shielding
    hit = hit & ~shielding
    dmg = T.damage[midx]
    # Shield takes the damage; shieldstun floor((d + 4.45) / 2.235) (SmashWiki).
    S[..., P.SHIELD] = torch.where(shield_hit, S[..., P.SHIELD] - dmg, S[..., P.SHIELD])
    S[..., P.STUN] = torch.where(shield_hit, torch.floor((dmg + 4.45) / 2.235), S[..., P.STUN])
    pct = S[..., P.PCT] + dmg
    kb = _knockback(pct, dmg, T.weight.view(1, 2), T.kb_growth[midx], T.base_kb[midx])
    angle_deg = T.angle[midx]
    sakurai = angle_deg == 361
    grounded = S[..., P.GND] > 0
    # Sakurai angle: 0 degrees for weak hits on grounded targets, else 44 (SmashWiki).
    angle_deg = torch.where(sakurai, torch.where(grounded & (kb < 32), 0.0, 44.0), angle_deg)
    ang = angle_deg * (math.pi / 180)
    speed = kb * d.LAUNCH_SPEED
    lx = torch.cos(ang) * speed * attacker(P.FACE)
    ly = torch.sin(ang) * speed
    S[..., P.PCT] = torch.where(hit, pct, S[..., P.PCT])
    S[..., P.KX] = torch.where(hit, lx, S[..., P.KX])
    S[..., P.KY] = torch.where(hit, ly, S[..., P.KY])
    S[..., P.STUN] = torch.where(hit, torch.floor(kb * d.HITSTUN_PER_KB), S[..., P.STUN])
    S[..., P.GND] = torch.where(hit & (ly > 0), 0.0, S[..., P.GND])
    S[..., P.Y] = torch.where(hit & (ly > 0), S[..., P.Y] + 0.01, S[..., P.Y])
    S[..., P.VX] = torch.where(hit, 0.0, S[..., P.VX])
    S[..., P.VY] = torch.where(hit, 0.0, S[..., P.VY])
    S[..., P.FF] = torch.where(hit, 0.0, S[..., P.FF])
    hurt_act = torch.where(kb >= 80, float(Action.DAMAGE_FLY_NEUTRAL.value), float(Action.DAMAGE_HIGH_1.value))
    _start(S, None, hit, hurt_act, NO_MOVE, 0.0)
    # The attacker's hitbox is spent on this victim (one hit per attack).
    S[:, :, P.HITDONE] = torch.where((hit | shield_hit).flip(1), 1.0, S[:, :, P.HITDONE])
    return torch.where(hit, dmg, 0.0), shield_hit[:, AGENT]


def _shield(S: torch.Tensor) -> None:
    s = S[:, AGENT]
    holding = s[:, P.ACT] == Action.SHIELD.value
    value = torch.where(holding, s[:, P.SHIELD] - d.SHIELD_DECAY, (s[:, P.SHIELD] + d.SHIELD_REGEN).clamp(max=d.SHIELD_MAX))
    broken = value <= 0
    s[:, P.SHIELD] = torch.where(broken, d.SHIELD_MAX / 2, value)  # guess: half a shield after a break
    _start(S, AGENT, broken, float(Action.SHIELD_BREAK_STAND_U.value), LOCKED, float(d.SHIELD_BREAK_FRAMES))


def _blast_zones(S: torch.Tensor, spawn_x: torch.Tensor) -> torch.Tensor:
    x, y = S[..., P.X], S[..., P.Y]
    ko = (x < d.BLAST_LEFT) | (x > d.BLAST_RIGHT) | (y > d.BLAST_TOP) | (y < d.BLAST_BOTTOM)
    S[..., P.STOCK] = S[..., P.STOCK] - ko.float()
    # Respawn on stage with 120 frames of invulnerability (the revival platform is left out).
    for col, value in ((P.Y, 0.0), (P.VX, 0.0), (P.VY, 0.0), (P.KX, 0.0), (P.KY, 0.0), (P.PCT, 0.0),
                       (P.GND, 1.0), (P.JUMPS, 2.0), (P.STUN, 0.0), (P.FF, 0.0), (P.INV, float(d.RESPAWN_INVULNERABLE))):
        S[..., col] = torch.where(ko, value, S[..., col])
    S[..., P.X] = torch.where(ko, spawn_x, S[..., P.X])
    _start(S, None, ko, STANDING, NO_MOVE, 0.0)
    return ko


def game_frame(fields: torch.Tensor, env_fields: torch.Tensor, ctrl: torch.Tensor, T: Tables,
               levels: LevelTable, seed: int | torch.Tensor, spawn_x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Advance every environment one frame. Returns (damage [B, 2] taken by agent/cpu, KOs [B, 2]).

    ``fields`` is the player storage ``[len(P), 2, B]`` and ``env_fields`` the
    per-environment storage ``[>= len(E), B]``; both are updated in place, once, at the end.
    Each environment's CPU plays the level in its ``E.LEVEL`` column (values from ``levels``).
    """
    S, En = Fields.load_players(fields), Fields.load(env_fields)
    S[..., P.AF] = S[..., P.AF] + 1
    for col in (P.STUN, P.INV, P.BUSY):  # frame countdowns
        S[..., col] = (S[..., col] - 1).clamp(min=0)
    En[:, E.CPU_CD] = (En[:, E.CPU_CD] - 1).clamp(min=0)
    En[:, E.TICK] = En[:, E.TICK] + 1
    En[:, E.EP_FRAME] = En[:, E.EP_FRAME] + 1
    _end_timed_actions(S, T)
    _agent_control(S, ctrl)
    level = levels.at(En[:, E.LEVEL])
    _cpu_control(S, En, T, level, CpuDraws.draw(En[:, E.ENV_ID], En[:, E.TICK], seed, NUM_MARTH_MOVES))
    _physics(S, T)
    _ledge_catch(S)
    damage, _ = _hits(S, T, intangible(S, T))
    _shield(S)
    ko = _blast_zones(S, spawn_x)
    S.store_players(fields)
    En.store(env_fields)
    return damage, ko
