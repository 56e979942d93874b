"""Movement for both fighters: speeds, gravity, moves' own motion, launches, landing, walls and ledges.

Numbers come from the game's character attributes (gamedata ``characters.csv``: gravity, terminal
and fast-fall speed, air mobility, air speed, friction), the moves' per-frame motion (libmelee
``framedata.csv`` locomotion), launch-speed decay (:func:`melee_agent.arena.knockback.decay_launch`)
and Final Destination's geometry (libmelee ``stages.py``). Landing ends an aerial in its landing lag,
halved by an L-cancel press in the 7 frames before (gamedata ``lcancel_landing_lag``), or the normal
landing inside its autocancel window.

Simplifications (guesses): Final Destination is a block whose sides are walls down to any depth (a
fighter below the stage's top is pushed out to its side); the ledge is caught in a box beside the
stage's corner; only one fighter hangs on a ledge at a time (as in Melee); no knockdowns or techs
(a fighter landing in hitstun stays in hitstun on the ground); no platform.
"""

from __future__ import annotations

from typing import Any

from melee.enums import Action
from torch import Tensor
import torch

from melee_agent.arena.env_state import PlayerState
from melee_agent.arena.fight.fighter import (AIRDODGE_DECAY_FRAMES, DEAD_FALL, FALLING, STANDING, rows_of, set_free,
                                             slot_row, start)
from melee_agent.arena.fight.ground import DRIVEN, stop_friction
from melee_agent.arena.fight.moves import AERIAL_LANDING_ACTION, AERIALS, FightTable, Slot, other
from melee_agent.arena.fight.state import FightState, Pad
from melee_agent.arena.knockback import decay_launch
from melee_agent.arena.stage_table import StageGeo

LEDGE_BOX_X = 16.0  # guess (as the dodging arena's LEDGE_CATCH_X): how far beyond the edge the ledge is caught
LEDGE_BOX_Y = 30.0  # guess (as the dodging arena's LEDGE_CATCH_Y): how far below the stage's top
LEDGE_BOX_IN = 4.0  # guess: how far inside the stage's side the box starts
LEDGE_HANG_X, LEDGE_HANG_Y = 3.0, -12.0  # guess: where a hanging fighter is, from the stage's corner
PUSH_DIST = 6.0  # guess: grounded fighters closer than this push each other apart (Melee's body collision)
PUSH_SPEED = 0.5  # guess: by this much per frame each
AIRDODGE_DECAY = 0.9  # ftCommonData x33C escapeair_decay (meleelight-decomp-edition meleeCommon.js, read off the disc)
JUMP_F, JUMP_B = float(Action.JUMPING_FORWARD.value), float(Action.JUMPING_BACKWARD.value)
PASS = float(Action.PLATFORM_DROP.value)  # dropping through a platform (ftCo_Pass)
DOUBLE_JUMP_F, DOUBLE_JUMP_B = float(Action.JUMPING_ARIAL_FORWARD.value), float(Action.JUMPING_ARIAL_BACKWARD.value)
AIR_DODGE = float(Action.AIRDODGE.value)


def _drift(ps: PlayerState, pad: Pad, T: FightTable, ok: Tensor) -> Tensor:
    """Horizontal air speed (ftCommon_8007D28C -> ftCommon_8007D174, doldecomp/melee ftcommon.c): the stick
    accelerates by air_mobility_a x stick + air_mobility_b its way toward air_speed_max x stick; a speed past that
    target (a run-off jump's) slows by air_friction, not below the target; with the stick neutral, air friction."""
    A = T.attrs
    vx, sx = ps.speed_x, pad.sx
    accel = A.air_mobility_a * sx + torch.where(sx > 0, A.air_mobility_b, -A.air_mobility_b)
    target = A.air_speed_max * sx
    same = ~(vx * accel < 0)
    over_up = same & (accel > 0) & (vx + accel > target)
    a = torch.where(over_up, -A.air_friction, accel)
    a = torch.where(over_up & (vx + a < target), target - vx, a)
    over_dn = same & ~(accel > 0) & (vx + accel < target)
    a = torch.where(over_dn, A.air_friction, a)
    a = torch.where(over_dn & (vx + a > target), target - vx, a)
    # ftCommon_ApplyFrictionAir: stops at 0 (the air variant tests >=).
    slowed = torch.where(A.air_friction >= vx.abs(), 0.0, vx - torch.sign(vx) * A.air_friction)
    return torch.where(ok, torch.where(target == 0, slowed, vx + a), vx)


def step(ps: PlayerState, fs: FightState, pad: Pad, T: FightTable, edge: Tensor | float,
         frozen: Tensor, took_off: Tensor | None = None, geo: StageGeo | None = None) -> tuple[PlayerState, FightState]:
    """One frame of movement; ``took_off``: ``[B, 2]``, left the ground this frame (a jump's first airborne frame);
    ``edge``: the main floor's half width (``[B, 1]`` or one number); ``geo``: the stage's platforms (None: none)."""
    live = ~frozen
    A = T.attrs
    r = rows_of(ps.move)
    af = ps.action_frame.long().clamp(max=T.loco_x.shape[1] - 1)
    ground = ps.on_ground > 0
    in_move = ps.move >= 0
    stun = ps.hitstun_frames_left > 0
    hanging = r == slot_row(T, Slot.LEDGE_HANG)
    lx, ly = T.loco_x[r, af], T.loco_y[r, af]
    aimed = T.aimed[r] > 0
    stall = (T.stall[r] > 0) | hanging
    own_y = T.rises[r] > 0  # moves that carry their own rise (dolphin slash)
    # Ground: walking, dashing, running and braking set their own speed (:mod:`.ground`); anything else slides
    # to a stop by friction, doubled above walk_max (ft_80084F3C).
    driven = torch.zeros_like(ground)
    for a in DRIVEN:
        driven = driven | (ps.action == a)
    vx = ps.speed_x
    vx = torch.where(ground & ~(driven & ~in_move), stop_friction(vx, T), vx)
    # The first airborne frame of a jump moves by the takeoff speeds alone: ftCo_Jump_Phys skips its physics
    # (gravity, drift) on that frame (doldecomp/melee ftCo_Jump.c; the replays rise the full jump speed on it).
    takeoff = ~in_move & ~ground & (ps.action_frame == 1) & ((ps.action == JUMP_F) | (ps.action == JUMP_B))
    # A move that carries its own motion (libmelee's locomotion: the game's motion for the action) replaces it.
    vx = torch.where(in_move & (T.carries[r] > 0), 0.0, vx)
    # An air dodge past its decay drifts as a fall does (ftCo_EscapeAir_Phys -> ft_80084DB0 -> ftCommon_8007D268).
    late_dodge = (r == slot_row(T, Slot.AIRDODGE)) & (ps.action_frame > AIRDODGE_DECAY_FRAMES)
    air_ok = ~ground & ~stun & (~in_move | (T.aerial[r] > 0) | (r == slot_row(T, Slot.UP_B)) | late_dodge)
    vx = _drift(ps._replace(speed_x=vx), pad, T, air_ok & ~hanging & ~takeoff)
    vx = torch.where(hanging | aimed, 0.0, vx)
    # Vertical: gravity to terminal speed, or the fast-fall speed; none while a move stalls or rises.
    vy = torch.where(ground | stall | own_y | aimed, 0.0, torch.maximum(ps.speed_y - A.gravity, -A.terminal_velocity))
    vy = torch.where(takeoff, ps.speed_y, vy)
    # An air dodge slows by ftCommonData x33C (0.9) a frame, both ways, with no gravity (ftCo_EscapeAir_Phys), until
    # its animation script turns normal fall physics on (ft_80084DB0: fast fall, gravity, drift): from frame 30
    # (AIRDODGE_DECAY_FRAMES, measured).
    dodging = ~ground & (r == slot_row(T, Slot.AIRDODGE)) & (ps.action_frame <= AIRDODGE_DECAY_FRAMES)
    vy = torch.where(dodging, ps.speed_y * AIRDODGE_DECAY, vy)
    vx = torch.where(dodging, vx * AIRDODGE_DECAY, vx)
    ff = (ps.fast_falling > 0) & ~ground & (vy < 0)
    vy = torch.where(ff, -A.fast_fall_velocity, vy)
    # The firefox flies along its aim at the speed libmelee recorded for it (locomotion_y of the travel).
    move_x = torch.where(aimed, torch.cos(fs.aim) * ly, ps.facing * lx)
    move_y = torch.where(aimed, torch.sin(fs.aim) * ly, torch.where(own_y, ly, 0.0))
    kx, ky = ps.speed_x_attack, ps.speed_y_attack
    dkx, dky = decay_launch(kx, ky)
    # A move that rises (the firefox aimed up, the dolphin slash) lifts a grounded fighter off the stage;
    # aimed down on the ground it slides along it.
    lift = live & ground & (move_y > 0)
    ground = ground & ~lift
    # A dash's impulse reaches the position from the next frame (the game's second ground channel, :mod:`.ground`).
    dx = torch.where(live, vx - torch.where(ground, fs.gr_impulse, 0.0) + move_x + kx, 0.0)
    dy = torch.where(live & ~ground, vy + move_y + ky, 0.0)
    x0, y0 = ps.position_x, ps.position_y
    # A wavedash straight out of the jump squat (an air dodge on the jump's first airborne frame that lands on it) moves
    # only its character's measured share of the dodge's horizontal speed on that frame (fight/measured.py).
    if took_off is not None:
        squat_dodge = took_off & (r == slot_row(T, Slot.AIRDODGE)) & (dy <= 0)
        dx = torch.where(squat_dodge, dx * A.squat_dodge_share, dx)
    x, y = x0 + dx, y0 + dy
    P = 0 if geo is None else geo.plat_h.shape[-1]
    # Grounded moves and dodges stop at the ledge (on a platform, at its ends) rather than carrying off it.
    lo, hi = -edge, edge
    if P > 0:
        on0 = _on_platform(x0, y0, geo) & ground.unsqueeze(-1)
        up = on0.any(-1)
        lo = torch.where(up, (on0 * geo.plat_l.unsqueeze(1)).sum(-1), -edge)
        hi = torch.where(up, (on0 * geo.plat_r.unsqueeze(1)).sum(-1), edge)
    x = torch.where(ground & in_move, x.clamp(lo, hi), x)
    # Landing is by the collision box's bottom (ECB, :func:`ecb_bottom`), as it was on the frame before and is now.
    ecb = ecb_bottom(ps.action, fs.ecb_lock, ground, A)
    yb0, yb = y0 + fs.ecb_last, y + ecb
    # The stage's sides are walls: an airborne fighter whose box is below the top is pushed out to the side.
    inside = ~ground & (yb < -0.5) & (x.abs() < edge) & ~((yb0 >= 0) & (x0.abs() <= edge))
    x = torch.where(inside, torch.sign(x0 + (x0 == 0).float()) * edge, x)
    on_stage = x.abs() <= edge
    land = live & ~ground & (yb <= 0) & (yb0 >= -0.5) & on_stage & (dy <= 0)
    surface: Tensor | float = 0.0
    if P > 0:
        # A platform catches a fighter moving down whose box's bottom was at or above it the frame before and is at or
        # below it now (so it is passed through from below), except on the frame it drops through one.
        h = geo.plat_h.unsqueeze(1)
        cross = (_within(x, geo) & (yb0.unsqueeze(-1) >= h) & (yb.unsqueeze(-1) <= h)
                 & (dy <= 0).unsqueeze(-1))
        dropping = (ps.action == PASS) & (ps.action_frame == 1)
        caught = live & ~ground & cross.any(-1) & ~dropping
        surface = torch.where(caught, torch.where(cross, h, -1.0e9).amax(-1), 0.0)
        land = land | caught
    ps = ps._replace(speed_x=torch.where(live, vx, ps.speed_x), speed_y=torch.where(live & ~land, vy, torch.where(
        land, 0.0, ps.speed_y)), speed_x_attack=torch.where(live, dkx, kx),
        speed_y_attack=torch.where(land, 0.0, torch.where(live, dky, ky)),
        position_x=x, position_y=torch.where(land, surface, y), on_ground=torch.where(lift, 0.0, ps.on_ground))
    ps, fs = _land(ps, fs._replace(ecb_last=torch.where(land, 0.0, ecb)), T, land)
    ps = _push_apart_and_walk_off(ps, T, r, live, ground, lift, on_stage, geo)
    return _catch_ledge(ps, fs, T, edge, live, dy)


def ecb_bottom(action: Tensor, ecb_lock: Tensor, ground: Tensor, A: Any) -> Tensor:
    """How far the collision box's bottom lies above the position: 0 on the ground and while its lock after leaving
    the ground lasts (FightState.ecb_lock); in the air, the character's measured value for a double jump, an air dodge
    or anything else (fight/measured.py).

    Example::

        >>> import types, torch
        >>> A = types.SimpleNamespace(ecb_air=torch.tensor(4.4), ecb_double_jump=torch.tensor(6.55),
        ...                           ecb_air_dodge=torch.tensor(4.85))
        >>> act = torch.tensor([float(Action.FALLING.value), float(Action.JUMPING_ARIAL_FORWARD.value),
        ...                     float(Action.AIRDODGE.value), float(Action.AIRDODGE.value)])
        >>> [round(v, 2) for v in ecb_bottom(act, torch.tensor([0.0, 0.0, 0.0, 3.0]), torch.tensor([False] * 4), A).tolist()]
        [4.4, 6.55, 4.85, 0.0]
    """
    double = (action == DOUBLE_JUMP_F) | (action == DOUBLE_JUMP_B)
    air = torch.where(double, A.ecb_double_jump, torch.where(action == AIR_DODGE, A.ecb_air_dodge, A.ecb_air))
    return torch.where((ecb_lock > 0) | ground, 0.0, air)


def _push_apart_and_walk_off(ps: PlayerState, T: FightTable, r: Tensor, live: Tensor, ground: Tensor, lift: Tensor,
                             on_stage: Tensor, geo: StageGeo | None) -> PlayerState:
    """After the frame's movement: two grounded fighters that overlap push apart, and a fighter grounded before it
    (``ground``) with no floor under it now (off the main floor's edge, or a platform's end) starts to fall."""
    P = 0 if geo is None else geo.plat_h.shape[-1]
    # Two grounded fighters that overlap push apart (a tie puts port 0 to the left); not in a grab.
    both = (ps.on_ground > 0) & (other(ps.on_ground, T) > 0)
    gap = ps.position_x - other(ps.position_x, T)
    held = (r == slot_row(T, Slot.HELD)) | (other(r, T) == slot_row(T, Slot.HELD))
    # Port 1 is the one whose other-column index (``T.swap``) is even: a tie puts port 0 to the left, whichever
    # characters play (with Fox on port 0 and Marth on port 1 this is the same rule as before).
    apart = torch.where(gap == 0, torch.where(T.swap % 2 == 0, 1.0, -1.0), torch.sign(gap))
    push = both & ~held & (gap.abs() < PUSH_DIST) & live
    if P > 0:  # on the same floor only (one on a platform, the other below, do not push)
        push = push & ((ps.position_y - other(ps.position_y, T)).abs() < 0.5)
    ps = ps._replace(position_x=torch.where(push, ps.position_x + apart * PUSH_SPEED, ps.position_x))
    supported = on_stage
    if P > 0:  # above the main floor, only a platform under the fighter holds it up
        supported = torch.where(ps.position_y > 0.01, _on_platform(ps.position_x, ps.position_y, geo).any(-1), on_stage)
    walk_off = live & ground & ~supported
    ps = ps._replace(on_ground=torch.where(walk_off, 0.0, ps.on_ground),
                     jumps_left=torch.where(walk_off | lift, ps.jumps_left.clamp(max=1.0), ps.jumps_left))
    ps = set_free(ps, walk_off & (ps.move < 0) & (ps.hitstun_frames_left <= 0), FALLING)
    return ps


def _within(x: Tensor, geo: StageGeo) -> Tensor:
    """``[B, 2, P]``: each fighter's x over each platform (its ends included)."""
    xe = x.unsqueeze(-1)
    return (xe >= geo.plat_l.unsqueeze(1)) & (xe <= geo.plat_r.unsqueeze(1))


def _on_platform(x: Tensor, y: Tensor, geo: StageGeo) -> Tensor:
    """``[B, 2, P]``: at platform p's height (within 0.01) and over it."""
    return _within(x, geo) & ((y.unsqueeze(-1) - geo.plat_h.unsqueeze(1)).abs() < 0.01)


def _land(ps: PlayerState, fs: FightState, T: FightTable, land: Tensor) -> tuple[PlayerState, FightState]:
    """Touching down: an aerial's landing lag (L-cancelled or autocancelled), a helpless fighter's special
    landing, the normal landing from a jump or a fall; a fighter in hitstun stays in it."""
    r = rows_of(ps.move)
    af = ps.action_frame
    aerial = land & (T.aerial[r] > 0)
    autocancel = (af < T.ac_before[r]) | (af > T.ac_after[r])
    lag = torch.where(autocancel, T.length[slot_row(T, Slot.LANDING)],
                      torch.where(fs.lcancel_left > 0, T.lcancel_lag[r], T.landing_lag[r]))
    landing_act = torch.full_like(af, float(Action.LANDING.value))
    base = slot_row(T, 0)
    for s in AERIALS:
        landing_act = torch.where(r == base + int(s), float(AERIAL_LANDING_ACTION[s].value), landing_act)
    helpless_rows = ((r == slot_row(T, Slot.AIRDODGE)) | (T.aimed[r] > 0) | (r == slot_row(T, Slot.UP_B))
                     | (r == slot_row(T, Slot.SIDE_B_END)))
    special = land & ~aerial & ((fs.helpless > 0) | helpless_rows)
    stun = ps.hitstun_frames_left > 0
    normal = land & ~aerial & ~special & (ps.move < 0) & ~stun
    ps = start(ps, aerial | normal, slot_row(T, Slot.LANDING), T)
    ps = ps._replace(busy_left=torch.where(aerial, lag, ps.busy_left),
                     action=torch.where(aerial, torch.where(autocancel, float(Action.LANDING.value), landing_act),
                                        ps.action))
    ps = start(ps, special, slot_row(T, Slot.LANDING_SPECIAL), T)
    ps = ps._replace(on_ground=torch.where(land, 1.0, ps.on_ground), jumps_left=torch.where(land, 2.0, ps.jumps_left),
                     fast_falling=torch.where(land, 0.0, ps.fast_falling))
    fs = fs._replace(helpless=torch.where(land, 0.0, fs.helpless), lcancel_left=torch.where(land, 0.0, fs.lcancel_left))
    return ps, fs


def _catch_ledge(ps: PlayerState, fs: FightState, T: FightTable, edge: float, live: Tensor,
                 dy: Tensor) -> tuple[PlayerState, FightState]:
    """An airborne fighter falling (or flying an up-B) into the box beside a corner hangs on that ledge."""
    r = rows_of(ps.move)
    x, y = ps.position_x, ps.position_y
    out = x.abs() - edge
    rising_ok = (T.aimed[r] > 0) | (r == slot_row(T, Slot.UP_B))
    state_ok = ((ps.move < 0) | rising_ok | (r == slot_row(T, Slot.SIDE_B_END)) | (r == slot_row(T, Slot.AIRDODGE)))
    hanging = r == slot_row(T, Slot.LEDGE_HANG)
    side = torch.sign(x)
    # Melee lets one fighter hang on a ledge: the other's hold on this side blocks the catch.
    taken = other(hanging & (side != 0), T) & (other(side, T) == side)
    catch = (live & (ps.on_ground == 0) & (ps.hitstun_frames_left <= 0) & state_ok & ((dy <= 0) | rising_ok)
             & (fs.ledge_wait <= 0) & (out > -LEDGE_BOX_IN) & (out < LEDGE_BOX_X) & (y < 0) & (y > -LEDGE_BOX_Y) & ~taken)
    ps = start(ps, catch, slot_row(T, Slot.LEDGE_HANG), T)
    zero = lambda v: torch.where(catch, 0.0, v)  # noqa: E731
    ps = ps._replace(position_x=torch.where(catch, side * (edge + LEDGE_HANG_X), x),
                     position_y=torch.where(catch, LEDGE_HANG_Y, y), speed_x=zero(ps.speed_x),
                     speed_y=zero(ps.speed_y), speed_x_attack=zero(ps.speed_x_attack),
                     speed_y_attack=zero(ps.speed_y_attack), fast_falling=zero(ps.fast_falling),
                     facing=torch.where(catch, -side, ps.facing),
                     jumps_left=torch.where(catch, 1.0, ps.jumps_left))  # Melee: the ledge gives back the double jump
    fs = fs._replace(helpless=zero(fs.helpless))
    return ps, fs


def free_after_stun(ps: PlayerState, ended: Tensor) -> PlayerState:
    """Hitstun (not shieldstun) over: standing on the ground, falling in the air."""
    done = ended & (ps.move < 0) & (ps.action != float(Action.SHIELD.value))
    return set_free(ps, done, torch.where(ps.on_ground > 0, STANDING, FALLING))


__all__ = ["step", "free_after_stun", "DEAD_FALL"]
