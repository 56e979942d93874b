"""The dodging game's own frame, kept for ``cpu = "designed"``: controller -> actions -> physics -> hits.

Against Melee's CPU (``cpu = "melee"``, the default) the dodging game is its rules played on the fight's
engine (:mod:`melee_agent.arena.fight.frame`: its motion, hits, intangibility and Marth); this frame, with
its own Fox, Marth and designed CPU (:data:`~melee_agent.arena.cpu.levels.CPU_LEVELS`), stays so that results
made against the designed CPU replay as they were.

A frame is a pure function of an :class:`~melee_agent.arena.env_state.EnvState`: each phase
takes the named state and returns a new one (or a NamedTuple with it). Everything is elementwise
over environments (no reductions across them), so environment i's trajectory depends only on its
own state and random stream: B = 1 and B = 1,024 agree.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from melee.enums import Action
from torch import Tensor

from melee_agent.envs.actions import COL
from melee_agent.arena import libmelee_data as d
from melee_agent.arena import knockback as kb
from melee_agent.arena.cpu.levels import LevelTable, LevelTensors
from melee_agent.arena.draws import CpuDraws
from melee_agent.arena.env_state import AGENT, CPU, EnvState, PlayerState, contiguous, put
from melee_agent.arena.dodge.tables import AIRDODGE_FRAMES, LANDING_SPECIAL_FRAMES, MOVE_INDEX, NUM_MARTH_MOVES
from melee_agent.arena.dodge.tables import SHINE_END_LAG, Tables

LOCKED = -2.0  # move value of a timed action that is not a move (jump squat, landing, shield drop...)
NO_MOVE = -1.0
STANDING, FALLING = float(Action.STANDING.value), float(Action.FALLING.value)


def intangible(ps: PlayerState, T: Tables) -> Tensor:
    """``[B, 2]``: inside an intangibility window of the current action, or respawn-invulnerable."""
    act = ps.action.long()
    af = ps.action_frame
    return ((af >= T.intang_lo[act]) & (af <= T.intang_hi[act]) & (T.intang_lo[act] > 0)) | (ps.invulnerability_left > 0)


def _start(ps: PlayerState, p: int | None, mask: Tensor, act: float | Tensor, move: float | Tensor,
           busy: float | Tensor) -> PlayerState:
    """Put player ``p`` (``[B]`` mask), or both players (``p=None``, ``[B, 2]`` mask), into a new action.

    Every write covers both players (the other one masked out), so a compiled frame keeps one
    ``[B, 2]`` iteration space instead of splitting and re-joining the players' columns.
    """
    if p is not None:
        off = torch.zeros_like(mask)
        mask = torch.stack((mask, off) if p == AGENT else (off, mask), 1)
        act, move, busy = (v.unsqueeze(1) if isinstance(v, Tensor) else v for v in (act, move, busy))
    return ps._replace(action=torch.where(mask, act, ps.action), move=torch.where(mask, move, ps.move),
                       busy_left=torch.where(mask, busy, ps.busy_left),
                       action_frame=torch.where(mask, 1.0, ps.action_frame),
                       hit_done=torch.where(mask, 0.0, ps.hit_done))


def _end_timed_actions(ps: PlayerState) -> PlayerState:
    ended = (ps.move != NO_MOVE) & (ps.busy_left <= 0)
    act = ps.action
    fwd_roll = ended & (act == Action.ROLL_FORWARD.value)
    facing = torch.where(fwd_roll, -ps.facing, ps.facing)  # a forward roll turns you around
    knee = ended & (act == Action.KNEE_BEND.value)
    shine = ended & (act == Action.DOWN_B_GROUND_START.value)
    rest = ended & ~knee & ~shine
    ground = ps.on_ground > 0
    new_act = torch.where(ground, STANDING, FALLING)
    action = torch.where(rest, new_act, torch.where(knee, float(Action.JUMPING_FORWARD.value), act))
    move = torch.where(rest | knee, NO_MOVE, ps.move)
    action_frame = torch.where(ended, 1.0, ps.action_frame)
    # Jump squat over: leave the ground with the full-hop speed (SmashWiki Fox 3.68).
    on_ground = torch.where(knee, 0.0, ps.on_ground)
    speed_y = torch.where(knee, d.FOX_JUMP_SPEED, ps.speed_y)
    jumps_left = torch.where(knee, ps.jumps_left - 1, ps.jumps_left)
    # The 3-frame shine start flows into the reflector, jump-cancellable, else its end lag.
    return ps._replace(facing=facing, action=torch.where(shine, float(Action.DOWN_B_GROUND.value), action),
                       move=torch.where(shine, LOCKED, move), action_frame=action_frame, on_ground=on_ground,
                       speed_y=speed_y, jumps_left=jumps_left,
                       busy_left=torch.where(shine, float(SHINE_END_LAG), ps.busy_left))


class Stick(NamedTuple):
    """What the agent's controller asks for this frame, read once."""

    jump_held: Tensor  # X or Y held
    jump_press: Tensor  # X or Y pressed this frame (not held from the last one)
    shield: Tensor  # L or R, digital or analog
    down: Tensor
    side: Tensor  # the stick tilted left or right
    sx: Tensor  # stick x around neutral, in [-0.5, 0.5]
    dirx: Tensor  # its sign


def _read_controller(held_before: Tensor, ctrl: Tensor) -> Stick:
    """Fox's controller state (``ctrl[column]``: ``[len(TABLE_COLUMNS), B]``) as Dolphin would receive it."""
    sx, sy = ctrl[COL["stick_x"]] - 0.5, ctrl[COL["stick_y"]] - 0.5
    jump_held = (ctrl[COL["X"]] + ctrl[COL["Y"]]) > 0
    jump_press = jump_held & (held_before == 0)
    shield = (ctrl[COL["L"]] > 0) | (ctrl[COL["l_shoulder"]] > 0.3)
    return Stick(jump_held, jump_press, shield, sy < -0.2, sx.abs() > 0.2, sx, torch.sign(sx))


class GroundChoice(NamedTuple):
    """The agent's state after its ground actions started, and who walks and who stands instead."""

    players: PlayerState
    walk: Tensor  # [B] bool
    stand: Tensor  # [B] bool


def _agent_ground_actions(ps: PlayerState, c: Stick, ctrl: Tensor, gfree: Tensor, in_shield: Tensor) -> GroundChoice:
    """Shine, jump, spot dodge, roll, shield and shield drop; returns who walks and who stands."""
    # Jump out of shine (from its 4th frame: the start is 3 frames) or out of shield.
    jc = (ps.action[:, AGENT] == Action.DOWN_B_GROUND.value) & c.jump_press & (ps.hitstun_frames_left[:, AGENT] <= 0)
    c_shine = gfree & (ctrl[COL["B"]] > 0) & c.down
    c_jump = (gfree & c.jump_press & ~c_shine) | jc
    busy_free = gfree & ~c_shine & ~c_jump
    c_spot = busy_free & c.shield & c.down
    c_roll = busy_free & c.shield & c.side & ~c.down
    c_shield = busy_free & c.shield & ~c.down & ~c.side
    c_drop = busy_free & in_shield & ~c.shield
    c_move = busy_free & ~c.shield & c.side & ~in_shield
    c_stand = busy_free & ~c.shield & ~c.side & ~in_shield

    face = ps.facing[:, AGENT]
    ps = ps._replace(facing=put(ps.facing, AGENT, torch.where(c_move, c.dirx, face)))
    forward = (c.dirx == face)
    roll_move = torch.where(forward, float(MOVE_INDEX["roll_forward"]), float(MOVE_INDEX["roll_backward"]))
    roll_act = torch.where(forward, float(Action.ROLL_FORWARD.value), float(Action.ROLL_BACKWARD.value))
    roll_len = torch.where(forward, float(d.FOX_ROLL_FORWARD.length), float(d.FOX_ROLL_BACKWARD.length))
    ps = _start(ps, AGENT, c_shine, float(Action.DOWN_B_GROUND_START.value), float(MOVE_INDEX["shine"]),
                float(d.FOX_SHINE.length))
    ps = _start(ps, AGENT, c_jump, float(Action.KNEE_BEND.value), LOCKED, float(d.FOX_JUMPSQUAT))
    ps = _start(ps, AGENT, c_spot, float(Action.SPOTDODGE.value), float(MOVE_INDEX["spot_dodge"]),
                float(d.FOX_SPOT_DODGE.length))
    ps = _start(ps, AGENT, c_roll, roll_act, roll_move, roll_len)
    ps = _start(ps, AGENT, c_drop, float(Action.SHIELD_RELEASE.value), LOCKED, float(d.SHIELD_RELEASE_FRAMES))
    new_shield = c_shield & ~in_shield
    ps = _start(ps, AGENT, new_shield, float(Action.SHIELD.value), NO_MOVE, 0.0)
    return GroundChoice(ps, c_move, c_stand)


def _agent_walk(ps: PlayerState, c: Stick, c_move: Tensor, c_stand: Tensor, ground: Tensor) -> PlayerState:
    """Walking and dashing: speed from the stick's tilt (walk 1.6 from characterdata; dash 2.2 SmashWiki)."""
    dash = c.sx.abs() > 0.35
    speed = torch.where(dash, d.FOX_DASH_SPEED, d.FOX.walk * (c.sx.abs() / 0.35).clamp(max=1.0))
    walk_act = torch.where(dash, float(Action.DASHING.value), float(Action.WALK_MIDDLE.value))
    moving_act = torch.where(c_move, walk_act, STANDING)
    act = ps.action[:, AGENT]
    changed = (c_move | c_stand) & (moving_act != act)
    vx = ps.speed_x[:, AGENT]
    friction = torch.sign(vx) * torch.clamp(vx.abs(), max=d.FOX.friction)
    return ps._replace(
        action=put(ps.action, AGENT, torch.where(c_move | c_stand, moving_act, act)),
        action_frame=put(ps.action_frame, AGENT, torch.where(changed, 1.0, ps.action_frame[:, AGENT])),
        speed_x=put(ps.speed_x, AGENT, torch.where(c_move, c.dirx * speed, torch.where(ground, vx - friction, vx))))


def _agent_air(ps: PlayerState, c: Stick, afree: Tensor) -> PlayerState:
    """In the air: double jump, air dodge, drift, fast fall (characterdata.csv values)."""
    jumps = ps.jumps_left[:, AGENT]
    c_dj = afree & c.jump_press & (jumps > 0)
    ps = ps._replace(speed_y=put(ps.speed_y, AGENT, torch.where(c_dj, d.FOX.dj_speed, ps.speed_y[:, AGENT])),
                     speed_x=put(ps.speed_x, AGENT, torch.where(c_dj, c.dirx * d.FOX.dj_speed_x, ps.speed_x[:, AGENT])),
                     jumps_left=put(ps.jumps_left, AGENT, torch.where(c_dj, jumps - 1, jumps)),
                     fast_falling=put(ps.fast_falling, AGENT, torch.where(c_dj, 0.0, ps.fast_falling[:, AGENT])))
    ps = _start(ps, AGENT, c_dj, float(Action.JUMPING_ARIAL_FORWARD.value), NO_MOVE, 0.0)
    c_ad = afree & c.shield & ~c_dj
    ps = _start(ps, AGENT, c_ad, float(Action.AIRDODGE.value), LOCKED, float(AIRDODGE_FRAMES))
    drift = afree & c.side
    vx = ps.speed_x[:, AGENT]
    air_fric = torch.sign(vx) * torch.clamp(vx.abs(), max=d.FOX.air_friction)
    drifted = (vx + c.dirx * d.FOX.air_mobility).clamp(-d.FOX.air_speed, d.FOX.air_speed)
    c_ff = afree & c.down & (ps.speed_y[:, AGENT] < 0)
    return ps._replace(
        speed_x=put(ps.speed_x, AGENT, torch.where(drift, drifted, torch.where(afree, vx - air_fric, vx))),
        fast_falling=put(ps.fast_falling, AGENT, torch.where(c_ff, 1.0, ps.fast_falling[:, AGENT])))


def _agent_control(ps: PlayerState, ctrl: Tensor) -> PlayerState:
    """Fox reads the frame's controller state: ground actions, then walking, then air control."""
    c = _read_controller(ps.jump_held[:, AGENT], ctrl)
    ps = ps._replace(jump_held=put(ps.jump_held, AGENT, c.jump_held.float()))
    ground = ps.on_ground[:, AGENT] > 0
    free = ((ps.busy_left[:, AGENT] <= 0) & (ps.hitstun_frames_left[:, AGENT] <= 0)
            & (ps.move[:, AGENT] == NO_MOVE))
    in_shield = ps.action[:, AGENT] == Action.SHIELD.value
    ps, c_move, c_stand = _agent_ground_actions(ps, c, ctrl, free & ground, in_shield)
    ps = _agent_walk(ps, c, c_move, c_stand, ground)
    return _agent_air(ps, c, free & ~ground)


class Forecast(NamedTuple):
    """What the CPU reads of the agent: when it can be hit, how long it stays busy, where it will be."""

    intang_left: Tensor  # frames until its current intangibility window is over (0 if none)
    starts_in: Tensor  # frames until an intangibility window still to come starts (999 if none)
    busy_left: Tensor  # frames before it can act again
    rolling: Tensor
    future_x: Tensor  # where a roll carries it (else where it is)
    future_dist: Tensor
    low_enough: Tensor  # near enough the ground for Marth's grounded attacks
    action_frame: Tensor


def _forecast_agent(ps: PlayerState, T: Tables) -> Forecast:
    marth_x = ps.position_x[:, CPU]
    fox_act = ps.action[:, AGENT].long()
    fox_af = ps.action_frame[:, AGENT]
    fox_move, fox_face, fox_x = ps.move[:, AGENT], ps.facing[:, AGENT], ps.position_x[:, AGENT]
    lo, hi = T.intang_lo[fox_act], T.intang_hi[fox_act]
    has_window = lo > 0
    intang_left = torch.where(has_window, (hi - fox_af + 1).clamp(min=0), 0.0)
    intang_left = torch.maximum(intang_left, ps.invulnerability_left[:, AGENT])
    starts_in = torch.where(has_window & (fox_af < lo), lo - fox_af, 999.0)
    busy_left = torch.where(fox_move != NO_MOVE, ps.busy_left[:, AGENT], 0.0) + ps.hitstun_frames_left[:, AGENT]
    # A roll carries the agent to the end of its locomotion.
    fmove = fox_move.long().clamp(min=0)
    rolling = (fox_move == MOVE_INDEX["roll_forward"]) | (fox_move == MOVE_INDEX["roll_backward"])
    roll_dir = torch.where(fox_move == MOVE_INDEX["roll_forward"], fox_face, -fox_face)
    remaining = T.cumloco[fmove, -1] - T.cumloco[fmove, fox_af.long().clamp(max=T.cumloco.shape[1] - 1)]
    future_x = torch.where(rolling, (fox_x + roll_dir * remaining).clamp(-d.EDGE, d.EDGE), fox_x)
    future_dist = (future_x - marth_x).abs()
    return Forecast(intang_left, starts_in, busy_left, rolling, future_x, future_dist,
                    ps.position_y[:, AGENT] < 20.0, fox_af)


class AttackChoice(NamedTuple):
    """Which environments' CPU starts an attack this frame, and which one."""

    attack: Tensor  # [B] bool
    move: Tensor  # [B] float: a row of MOVES (one of Marth's)


def _cpu_choose_attack(dist: Tensor, fc: Forecast, T: Tables, level: LevelTensors, u: CpuDraws,
                       free: Tensor, recovered: Tensor) -> AttackChoice:
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
        value = torch.where(punish_k, fk, 999.0)
        ok_k = (dist <= rk) & fc.low_enough & (lands_clear | ~smart)
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
    return AttackChoice(attack, move)


def _cpu_start_attack(state: EnvState, T: Tables, level: LevelTensors, u: CpuDraws, choice: AttackChoice) -> EnvState:
    attack, move = choice
    ps = _start(state.players, CPU, attack, T.action[move.long()], move, T.length[move.long()])
    # After an attack it always waits `recover` frames, plus a random rest, before the next one.
    cooldown = T.length[move.long()] + level.recover + (u.rest * level.rest).floor()
    game = state.game._replace(cpu_cooldown=torch.where(attack, cooldown, state.game.cpu_cooldown))
    return state._replace(players=ps, game=game)


def _cpu_approach(ps: PlayerState, fc: Forecast, T: Tables, level: LevelTensors, idle: Tensor) -> PlayerState:
    """An idle CPU walks or runs toward where the agent is (or will be), else stands."""
    target = torch.where(fc.rolling, fc.future_x, ps.position_x[:, AGENT]) - ps.position_x[:, CPU]
    far = target.abs() > (T.reach[0] * 0.8)
    run = idle & far
    speed = d.MARTH_RUN_SPEED * level.approach
    moving_act = torch.where(run, torch.where(level.approach > 0.6, float(Action.DASHING.value),
                                              float(Action.WALK_MIDDLE.value)), STANDING)
    act = ps.action[:, CPU]
    changed = idle & (moving_act != act)
    return ps._replace(
        speed_x=put(ps.speed_x, CPU, torch.where(run, torch.sign(target) * speed,
                                                 torch.where(idle, 0.0, ps.speed_x[:, CPU]))),
        facing=put(ps.facing, CPU, torch.where(run, torch.sign(target), ps.facing[:, CPU])),
        action=put(ps.action, CPU, torch.where(idle, moving_act, act)),
        action_frame=put(ps.action_frame, CPU, torch.where(changed, 1.0, ps.action_frame[:, CPU])))


def _cpu_control(state: EnvState, T: Tables, level: LevelTensors, u: CpuDraws) -> EnvState:
    """The designed CPU's Marth: face the agent, forecast it, choose and start an attack (by level), else approach.

    Melee's own CPU is not played here: the dodging game against it runs on the fight's engine (its Marth and
    :mod:`melee_agent.arena.cpu.melee`); this frame stays for ``cpu = "designed"``, to replay earlier results.
    """
    ps = state.players
    dx = ps.position_x[:, AGENT] - ps.position_x[:, CPU]
    free = ((ps.busy_left[:, CPU] <= 0) & (ps.hitstun_frames_left[:, CPU] <= 0) & (ps.move[:, CPU] == NO_MOVE)
            & (ps.on_ground[:, CPU] > 0))
    ps = ps._replace(facing=put(ps.facing, CPU, torch.where(free, torch.where(dx >= 0, 1.0, -1.0),
                                                             ps.facing[:, CPU])))
    fc = _forecast_agent(ps, T)
    choice = _cpu_choose_attack(dx.abs(), fc, T, level, u, free, state.game.cpu_cooldown <= 0)
    state = _cpu_start_attack(state._replace(players=ps), T, level, u, choice)
    return state._replace(players=_cpu_approach(state.players, fc, T, level, free & ~choice.attack))


def _physics(ps: PlayerState, T: Tables) -> PlayerState:
    ground = ps.on_ground > 0
    move = ps.move
    in_move = move >= 0
    midx = move.long().clamp(min=0)
    af = ps.action_frame.long().clamp(max=T.loco.shape[1] - 1)
    loco = torch.where(in_move, T.loco[midx, af], 0.0)
    back = move == MOVE_INDEX["roll_backward"]
    mdir = torch.where(back, -ps.facing, ps.facing)
    # Moves carry their own movement (framedata locomotion); otherwise ground friction applies.
    vx = torch.where(in_move & ground, 0.0, ps.speed_x)
    grav, term = T.gravity, T.terminal
    falling_fast = (ps.fast_falling > 0) & ~ground
    # Position moves with this frame's speed, then gravity acts (libmelee's dj_height integrates
    # the same way: distance += speed; speed -= gravity).
    vy_now = torch.where(ground, 0.0, ps.speed_y)
    vy_now = torch.where(falling_fast, -d.FOX.fast_fall, vy_now)
    vy = torch.where(ground, 0.0, torch.maximum(vy_now - grav, -term))
    vy = torch.where(falling_fast, -d.FOX.fast_fall, vy)
    kx, ky = ps.speed_x_attack, ps.speed_y_attack
    x = ps.position_x + vx + mdir * loco + kx
    y = ps.position_y + vy_now + ky
    # Rolls and dodges stop at the ledge rather than carrying off stage.
    x = torch.where(in_move & ground, x.clamp(-d.EDGE, d.EDGE), x)
    # Launch speed falls by 0.051 per frame along its direction (knockback.decay_launch).
    kx_next, ky_next = kb.decay_launch(kx, ky)
    on_stage = x.abs() <= d.EDGE
    # Landing reads the launch speed this frame moved by, before its decay.
    land = ~ground & (y <= 0) & on_stage & ((vy + ky) <= 0) & (ps.position_y >= 0)
    walk_off = ground & ~on_stage
    ps = ps._replace(
        speed_x=vx, speed_y=torch.where(land, 0.0, vy), speed_x_attack=kx_next,
        speed_y_attack=torch.where(land, 0.0, ky_next),
        position_x=x, position_y=torch.where(land, 0.0, y),
        on_ground=torch.where(land, 1.0, torch.where(walk_off, 0.0, ps.on_ground)),
        fast_falling=torch.where(land, 0.0, ps.fast_falling), jumps_left=torch.where(land, 2.0, ps.jumps_left))
    airdodge = ps.action == Action.AIRDODGE.value
    free_land = land & (ps.hitstun_frames_left <= 0)
    ps = _start(ps, None, free_land & ~airdodge, float(Action.LANDING.value), LOCKED, float(d.LANDING_LAG))
    ps = _start(ps, None, free_land & airdodge, float(Action.LANDING_SPECIAL.value), LOCKED,
                float(LANDING_SPECIAL_FRAMES))
    return _start(ps, None, walk_off & (ps.move == NO_MOVE), FALLING, NO_MOVE, 0.0)


def _ledge_catch(ps: PlayerState) -> PlayerState:
    """A player falling just past the side of the stage catches the ledge and gets up (simplified)."""
    x, y = ps.position_x, ps.position_y
    out = x.abs() - d.EDGE
    catch = ((ps.on_ground == 0) & (ps.hitstun_frames_left <= 0) & (y < 0) & (y > -d.LEDGE_CATCH_Y)
             & (out > 0) & (out < d.LEDGE_CATCH_X))
    ps = ps._replace(position_x=torch.where(catch, torch.sign(x) * (d.EDGE - 4.0), x),
                     **{name: torch.where(catch, value, getattr(ps, name)) for name, value in (
                         ("position_y", 0.0), ("speed_x", 0.0), ("speed_y", 0.0), ("speed_x_attack", 0.0),
                         ("speed_y_attack", 0.0), ("fast_falling", 0.0), ("on_ground", 1.0), ("jumps_left", 2.0))})
    return _start(ps, None, catch, float(Action.EDGE_GETUP_SLOW.value), LOCKED, float(d.LEDGE_GETUP_FRAMES))


class HitOutcome(NamedTuple):
    """The players after this frame's hitboxes, the damage each took, and the shield hits on the agent."""

    players: PlayerState
    damage: Tensor  # [B, 2]: damage taken by the agent and the CPU
    agent_shield_hit: Tensor  # [B] bool


def _hits(ps: PlayerState, T: Tables, untouchable: Tensor) -> HitOutcome:
    """Resolve this frame's hitboxes: the attacker of player p is player 1 - p (``.flip(1)``)."""
    move = ps.move.flip(1)
    midx = move.long().clamp(min=0)
    af = ps.action_frame.flip(1).long().clamp(max=T.circles.shape[1] - 1)
    live = move >= 0
    ax, ay, face = ps.position_x.flip(1), ps.position_y.flip(1), ps.facing.flip(1)
    vx, vy = ps.position_x, ps.position_y
    top = vy + T.height
    # One hitbox circle at a time, each a [B, 2] computation (a compiled frame keeps one loop).
    # Every hitbox carries its own values (game data per frame and id); where several touch, the
    # lowest id hits, as in the game: going from the highest id down, a touching one overwrites.
    touch = torch.zeros_like(live)
    zero = torch.zeros_like(vx)
    dmg, angle, base, growth, set_kb = zero, zero, zero, zero, zero
    for k in reversed(range(T.circles.shape[2])):
        ox, oy, r = (torch.where(live, T.circles[midx, af, k, j], 0.0) for j in range(3))
        cx = ax + face * ox
        cy = ay + oy
        dy = cy - torch.minimum(torch.maximum(cy, vy), top)
        dxx = cx - vx
        touch_k = ((dxx * dxx + dy * dy) <= (r + d.BODY_RADIUS) ** 2) & (r > 0)
        touch = touch | touch_k
        dmg = torch.where(touch_k, T.damage[midx, af, k], dmg)
        angle = torch.where(touch_k, T.angle[midx, af, k], angle)
        base = torch.where(touch_k, T.base_kb[midx, af, k], base)
        growth = torch.where(touch_k, T.kb_growth[midx, af, k], growth)
        set_kb = torch.where(touch_k, T.set_kb[midx, af, k], set_kb)
    hit = touch & (ps.hit_done.flip(1) == 0) & ~untouchable  # [B, 2]
    shielding = (ps.action == Action.SHIELD.value)
    shield_hit = hit & shielding
    hit = hit & ~shielding
    # Shield takes the damage; shieldstun floor((d + 4.45) / 2.235) (SmashWiki).
    shield = torch.where(shield_hit, ps.shield_strength - dmg, ps.shield_strength)
    stun = torch.where(shield_hit, torch.floor((dmg + 4.45) / 2.235), ps.hitstun_frames_left)
    # Melee's formulas (arena/knockback.py), set-knockback branch included. The dodging arena keeps
    # no stale-move queue: every hit deals its unstaled damage.
    kbv = kb.knockback(kb.knockback_percent(ps.percent, dmg), dmg, T.weight.view(1, 2), growth, base, set_kb)
    grounded = ps.on_ground > 0
    lx, ly = kb.launch_velocity(kbv, kb.launch_angle(angle, kbv, grounded), face)
    up = hit & (ly > 0)
    ps = ps._replace(
        shield_strength=shield, percent=torch.where(hit, ps.percent + dmg, ps.percent),
        speed_x_attack=torch.where(hit, lx, ps.speed_x_attack), speed_y_attack=torch.where(hit, ly, ps.speed_y_attack),
        hitstun_frames_left=torch.where(hit, kb.hitstun(kbv), stun),
        on_ground=torch.where(up, 0.0, ps.on_ground), position_y=torch.where(up, ps.position_y + 0.01, ps.position_y),
        speed_x=torch.where(hit, 0.0, ps.speed_x), speed_y=torch.where(hit, 0.0, ps.speed_y),
        fast_falling=torch.where(hit, 0.0, ps.fast_falling))
    hurt_act = torch.where(kb.tumbles(kbv), float(Action.DAMAGE_FLY_NEUTRAL.value), float(Action.DAMAGE_HIGH_1.value))
    ps = _start(ps, None, hit, hurt_act, NO_MOVE, 0.0)
    # The attacker's hitbox is spent on this victim (one hit per attack).
    ps = ps._replace(hit_done=torch.where((hit | shield_hit).flip(1), 1.0, ps.hit_done))
    return HitOutcome(ps, torch.where(hit, dmg, 0.0), shield_hit[:, AGENT])


def _shield(ps: PlayerState) -> PlayerState:
    strength = ps.shield_strength[:, AGENT]
    holding = ps.action[:, AGENT] == Action.SHIELD.value
    value = torch.where(holding, strength - d.SHIELD_DECAY, (strength + d.SHIELD_REGEN).clamp(max=d.SHIELD_MAX))
    broken = value <= 0
    # guess: half a shield after a break
    ps = ps._replace(shield_strength=put(ps.shield_strength, AGENT, torch.where(broken, d.SHIELD_MAX / 2, value)))
    return _start(ps, AGENT, broken, float(Action.SHIELD_BREAK_STAND_U.value), LOCKED, float(d.SHIELD_BREAK_FRAMES))


class KoOutcome(NamedTuple):
    """The players after blast-zone KOs and respawns, and who was KO'd (``[B, 2]`` bool)."""

    players: PlayerState
    ko: Tensor


def _blast_zones(ps: PlayerState, spawn_x: Tensor) -> KoOutcome:
    x, y = ps.position_x, ps.position_y
    ko = (x < d.BLAST_LEFT) | (x > d.BLAST_RIGHT) | (y > d.BLAST_TOP) | (y < d.BLAST_BOTTOM)
    # Respawn on stage with 120 frames of invulnerability (the revival platform is left out).
    respawn = (("position_y", 0.0), ("speed_x", 0.0), ("speed_y", 0.0), ("speed_x_attack", 0.0),
               ("speed_y_attack", 0.0), ("percent", 0.0), ("on_ground", 1.0), ("jumps_left", 2.0),
               ("hitstun_frames_left", 0.0), ("fast_falling", 0.0),
               ("invulnerability_left", float(d.RESPAWN_INVULNERABLE)))
    ps = ps._replace(stock=ps.stock - ko.float(), position_x=torch.where(ko, spawn_x, x),
                     **{name: torch.where(ko, value, getattr(ps, name)) for name, value in respawn})
    return KoOutcome(_start(ps, None, ko, STANDING, NO_MOVE, 0.0), ko)


class FrameResult(NamedTuple):
    """The state after one frame, and what the frame did: damage taken and KOs, ``[B, 2]`` (agent, CPU)."""

    state: EnvState
    damage: Tensor
    ko: Tensor


def _count_down(state: EnvState) -> EnvState:
    """A new frame: action frames count up; stun, invulnerability, timers and the CPU's cooldown count down."""
    ps, g = state.players, state.game
    ps = ps._replace(action_frame=ps.action_frame + 1,
                     **{name: (getattr(ps, name) - 1).clamp(min=0)
                        for name in ("hitstun_frames_left", "invulnerability_left", "busy_left")})
    g = g._replace(cpu_cooldown=(g.cpu_cooldown - 1).clamp(min=0), tick=g.tick + 1, episode_frame=g.episode_frame + 1)
    return state._replace(players=ps, game=g)


def game_frame(state: EnvState, ctrl: Tensor, T: Tables, levels: LevelTable, seed: int | Tensor,
               spawn_x: Tensor) -> FrameResult:
    """Advance every environment one frame; ``ctrl`` is the agent's controller state ``[len(TABLE_COLUMNS), B]``.

    Each environment's CPU plays the level in its ``game.cpu_level`` (values from ``levels``, the designed CPU's).
    """
    state = _count_down(state)
    ps = _end_timed_actions(state.players)
    ps = _agent_control(ps, ctrl)
    g = state.game
    level = levels.at(g.cpu_level)
    state = _cpu_control(state._replace(players=ps), T, level, CpuDraws.draw(g.env_id, g.tick, seed, NUM_MARTH_MOVES))
    ps = _ledge_catch(_physics(state.players, T))
    ps, damage, _ = _hits(ps, T, intangible(ps, T))
    ps, ko = _blast_zones(_shield(ps), spawn_x)
    return FrameResult(state._replace(players=contiguous(ps)), damage, ko)
