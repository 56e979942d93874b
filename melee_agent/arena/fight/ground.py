"""Free movement on the ground as the game plays it: walk, dash, run, run brake and turn (``[B, 2]`` each).

Sources: the doldecomp/melee decompilation (``ftwalkcommon.c`` ``ftWalkCommon_800E0060`` and
``ftWalkCommon_GetWalkType``; ``ftCo_Dash.c`` ``ftCo_Dash_CheckInput``, ``_Enter``, ``_IASA``, ``_Phys``;
``inlines.h`` ``getAccelAndTarget``; ``ftcommon.c`` ``ftCommon_8007C98C`` and ``ftCommon_ApplyFrictionGround``;
``ft_084E.c`` ``ft_80084F3C``; ``fighter.c`` (ground speed and position)); its global constants (PlCo.dat
``ftCommonData``) as read off the disc by meleelight-decomp-edition ``src/physics/meleeCommon.js``; the
characters' attributes from meleedb (``gamedata/characters.csv``); frame counts the dump lacks from replays
(:mod:`.measured`).

How the game moves a grounded fighter: a state's physics sets an acceleration that the frame adds to the
ground speed, and the position moves by the new speed (``self_vel = gr_vel + anim_vel``, ``anim_vel`` being
this acceleration) -- except a dash's first impulse, which goes in the second acceleration channel and
reaches the position only on the next frame (the replays: a dash from standing moves 0, then 2.02, ...).

Crouching follows ``ftCo_Squat.c``, ``ftCo_SquatWait.c`` and ``ftCo_SquatRv.c``; a normal landing past its lag follows
``ftCo_Landing.c`` ``ftCo_Landing_IASA``.

Simplifications: a run that the stick turns back brakes instead of
turning (``TURNING_RUN`` is not played); a smash turn's second frame with the stick still out the
other way dashes (the replays: always on the turn's second frame), any other turn runs its 11 frames.
"""

from __future__ import annotations

import torch
from melee.enums import Action
from torch import Tensor

from melee_agent.arena.env_state import PlayerState
from melee_agent.arena.fight.moves import FightTable, Slot
from melee_agent.arena.fight.state import FightState, Pad

WALK_STICK = 0.18  # ftCommonData x024 walk_stick_threshold
WALK_MIDDLE, WALK_FAST = 0.4, 0.8  # x028, x02C: the walk's animation by its speed over walk_max
WALK_TAPER = 0.5  # x030 walk_accel_taper_gain
RUN_TAPER = 0.4  # x05C run_accel_taper_gain
DASH_STICK = 0.8  # x03C dash_smash_stick_threshold
SMASH_DEADZONE = 0.25  # x008 horizontal_stick_smash_deadzone
DASH_WINDOW = 2  # x040 dash_smash_window
RUN_STICK = 0.625  # x058: a dash that ends with the stick this far forward runs; a run below it brakes
DASH_DECAY = 0.75  # x054: ftCo_Dash_IASA takes this share of the ground speed off a dash cut short
ABOVE_WALK_FRICTION = 2.0  # x06C friction_when_above_walk_speed (ft_80084F3C)
SQUAT_STICK = 0.6875  # x090: ftCo_Squat_CheckInput / ftCo_SquatWait_CheckInput crouch below -x090
SQUAT_RELEASE = 0.625  # x094: ftCo_SquatRv_CheckInput stands up above -x094 (a hysteresis band)
# Dropping through a platform (doldecomp/melee ftCo_Pass.c; ftCommonData as read off the disc, meleelight-decomp-edition
# meleeCommon.js): ftCo_80099F1C reads the stick at or below -x464 with its y tilt timer under x468, on a platform.
PASS_STICK = 0.66  # x464
PASS_WINDOW = 6  # x468
PASS_SPEED = -0.5  # x46C: the drop's vertical speed (ftCo_8009A228), gravity on top from its first frame
#: x470: the squat's frames from the drop's mark (ftCo_80099F9C) to the drop (ftCo_Squat_IASA counts it down). The disc's
#: value is not in the sources here; 2 makes what the replays show (measured, pyslippi_game.slp, n 8: a flick down on a
#: platform plays three CROUCH_START frames, then PLATFORM_DROP).
PASS_DELAY = 2
PASS = float(Action.PLATFORM_DROP.value)

A = Action
STANDING, TURNING, DASHING, RUNNING, RUN_BRAKE = (float(a.value) for a in (A.STANDING, A.TURNING, A.DASHING,
                                                                              A.RUNNING, A.RUN_BRAKE))
SQUAT, SQUAT_WAIT, SQUAT_RV, LANDING = (float(a.value) for a in (A.CROUCH_START, A.CROUCHING, A.CROUCH_END,
                                                                 A.LANDING))
WALKS = tuple(float(a.value) for a in (A.WALK_SLOW, A.WALK_MIDDLE, A.WALK_FAST))
#: Actions whose ground speed this module sets (physics leaves their friction alone).
DRIVEN = WALKS + (DASHING, RUNNING, RUN_BRAKE)


def friction(v: Tensor, f: Tensor) -> Tensor:
    """ftCommon_ApplyFrictionGround: ``f`` off the speed, stopping at 0."""
    return torch.where(f > v.abs(), 0.0, v - torch.sign(v) * f)


def stop_friction(v: Tensor, T: FightTable) -> Tensor:
    """ft_80084F3C (standing, turning, jump squat, landing, grounded attacks): friction, doubled above walk_max."""
    A_ = T.attrs
    return friction(v, torch.where(v.abs() > A_.walk_max, A_.friction * ABOVE_WALK_FRICTION, A_.friction))


def accelerate(v: Tensor, accel: Tensor, target: Tensor, f: Tensor) -> Tensor:
    """ftCommon_8007C98C: ``accel`` toward ``target``; past it, friction instead (not below the target); with no
    target, friction; accelerating against the speed, the whole ``accel``."""
    same = ~(v * accel < 0)
    over_up = same & (accel > 0) & (v + accel > target)
    a = torch.where(over_up, -f, accel)
    a = torch.where(over_up & (v + a < target), target - v, a)
    over_dn = same & ~(accel > 0) & (v + accel < target)
    a = torch.where(over_dn, f, a)
    a = torch.where(over_dn & (v + a > target), target - v, a)
    return torch.where(target == 0, friction(v, f), v + a)


def _taper(accel: Tensor, v: Tensor, target: Tensor, gain: float) -> Tensor:
    ratio = v / torch.where(target == 0, 1.0, target)
    return torch.where((target != 0) & (ratio > 0) & (ratio < 1), accel * (1 - ratio) * gain, accel)


def walk_speed(v: Tensor, sx: Tensor, T: FightTable) -> Tensor:
    """ftWalkCommon_800E0060: stick x walk_accel_mul plus walk_accel_base its way, tapered, toward stick x walk_max."""
    A_ = T.attrs
    accel = sx * A_.walk_initial + torch.where(sx > 0, A_.walk_accel_base, -A_.walk_accel_base)
    target = sx * A_.walk_max
    return accelerate(v, _taper(accel, v, target, WALK_TAPER), target, A_.friction)


def dash_speed(v: Tensor, sx: Tensor, T: FightTable, taper: bool) -> Tensor:
    """ftCo_Dash_Phys / ftCo_Run_Phys: getAccelAndTarget (dash_accel_a x stick + dash_accel_b), the run tapered."""
    A_ = T.attrs
    accel = sx * A_.dash_accel_a + torch.where(sx > 0, A_.dash_accel_b, -A_.dash_accel_b)
    target = sx * A_.run_max
    if taper:
        accel = _taper(accel, v, target, RUN_TAPER)
    return accelerate(v, accel, target, A_.friction)  # run_dash_turn_friction_multiplier x060 = 1.0


def _enter(ps: PlayerState, mask: Tensor, action: float) -> PlayerState:
    """Begin free action ``action`` on its frame 1 (again, if already in it)."""
    return ps._replace(move=torch.where(mask, -1.0, ps.move), busy_left=torch.where(mask, 0.0, ps.busy_left),
                       action=torch.where(mask, action, ps.action),
                       action_frame=torch.where(mask, 1.0, ps.action_frame))


def tilt_timer(sx: Tensor, prev: Tensor, timer: Tensor) -> Tensor:
    """The game's x670 (doldecomp/melee fighter.c): 0 on the frame the stick's x crosses the smash deadzone (0.25)
    from the other side, one more each frame it stays past it (254 at most), 254 inside it."""
    right = (sx >= SMASH_DEADZONE) & (prev < SMASH_DEADZONE)
    left = (sx <= -SMASH_DEADZONE) & (prev > -SMASH_DEADZONE)
    out = torch.where(sx.abs() >= SMASH_DEADZONE, (timer + 1).clamp(max=254.0), 254.0)
    return torch.where(right | left, 0.0, out)


def pass_check(pad: Pad, fs: FightState, on_platform: Tensor) -> Tensor:
    """ftCo_80099F1C: the stick down at or past x464 within x468 frames of crossing the deadzone, on a platform."""
    return (pad.sy <= -PASS_STICK) & (fs.tilt_y < PASS_WINDOW) & on_platform


def enter_pass(ps: PlayerState, fs: FightState, mask: Tensor, T: FightTable) -> tuple[PlayerState, FightState]:
    """ftCo_8009A228: airborne (ftCommon_8007D5D4: one jump used), the air drift clamped (ftCommon_ClampAirDrift), the
    vertical speed x46C, PLATFORM_DROP (the arena keeps it until landing: the replays never show its end, Fox's past
    19 frames), the stick's y flick taken (x671 to 254)."""
    vmax = T.attrs.air_speed_max
    ps = _enter(ps, mask, PASS)
    ps = ps._replace(on_ground=torch.where(mask, 0.0, ps.on_ground), speed_y=torch.where(mask, PASS_SPEED, ps.speed_y),
                     speed_x=torch.where(mask, ps.speed_x.clamp(-vmax, vmax), ps.speed_x),
                     jumps_left=torch.where(mask, ps.jumps_left.clamp(max=1.0), ps.jumps_left),
                     fast_falling=torch.where(mask, 0.0, ps.fast_falling))
    return ps, fs._replace(tilt_y=torch.where(mask, 254.0, fs.tilt_y), pass_left=torch.where(mask, 0.0, fs.pass_left))


def _squat_pass(ps: PlayerState, fs: FightState, pad: Pad, T: FightTable, squat: Tensor,
                on_platform: Tensor) -> tuple[PlayerState, FightState, Tensor]:
    """The squat's drop through a platform (ftCo_Squat_IASA): from its second frame ftCo_80099F9C marks it once the stick
    is read (:func:`pass_check`), the mark counts x470 frames down and the drop comes at 0 (ftCo_8009A228). Also which
    squatting fighters dropped."""
    counting = squat & (fs.pass_left > 0)
    left = fs.pass_left - counting.float()
    drop = counting & (left <= 0) & on_platform
    mark = squat & ~counting & (ps.action_frame >= 2) & pass_check(pad, fs, on_platform)
    fs = fs._replace(pass_left=torch.where(mark, float(PASS_DELAY), torch.where(squat, left, 0.0)))
    ps, fs = enter_pass(ps, fs, drop, T)
    return ps, fs, drop


def free_ground(ps: PlayerState, fs: FightState, pad: Pad, T: FightTable,
                mask: Tensor, on_platform: Tensor | None = None) -> tuple[PlayerState, FightState]:
    """What a free grounded fighter (``mask``: not attacking, jumping or shielding this frame) does with the stick;
    ``on_platform``: ``[B, 2]``, standing on a platform (None: the stage has none)."""
    A_ = T.attrs
    sx, sy, act, af, v, f = pad.sx, pad.sy, ps.action, ps.action_frame, ps.speed_x, ps.facing
    fwd = sx * f
    # The game's flick (ftCo_Dash_CheckInput): past 0.8 with the stick's x tilt timer under dash_smash_window (2).
    flick = (sx.abs() >= DASH_STICK) & (fs.tilt_x < DASH_WINDOW)
    turning, dashing = mask & (act == TURNING), mask & (act == DASHING)
    running, braking = mask & (act == RUNNING), mask & (act == RUN_BRAKE)
    down = sy < -SQUAT_STICK
    # A turn: a smash turn's second frame dashes the other way if the stick is still out there; else it stands after
    # its last frame. It has faced the other way since its flip frame (fighter.ground_turn_flip, before this): the way
    # it turns to is -facing before then, facing from then on.
    # A flick the new way during a turn dashes too (the replays: a tilt turn's next frame flicked is a dash).
    turned = af >= torch.where(fs.turn_smash > 0, 2.0, A_.turn_flip_frame)
    to = sx * torch.where(turned, f, -f)
    smash_dash = turning & (((fs.turn_smash > 0) & (af == 2) & (to >= DASH_STICK)) | (flick & (to > 0)))
    turn_done = turning & ~smash_dash & (af > A_.turn_frames)
    # A dash: a flick back smash-turns (keeping a quarter of the speed); past its run frame, the stick held forward
    # runs; at its end it stands.
    dash_turn = dashing & flick & (fwd < 0)
    to_run = dashing & ~dash_turn & (af > A_.dash_run_frame) & (fwd >= RUN_STICK)
    dash_end = dashing & ~dash_turn & ~to_run & (af > A_.dash_frames)
    dash_on = dashing & ~dash_turn & ~dash_end & ~to_run
    # A run: brakes once the stick leaves forward; the brake stands after its frames, or crouches with the stick
    # down (ftCo_RunBrake IASA: ftCo_800D5FB0).
    run_brake = running & (fwd < RUN_STICK)
    run_on = (running & ~run_brake) | to_run
    brake_squat = braking & down
    brake_end = braking & ~brake_squat & (af > A_.run_brake_frames)
    brake_on = (braking & ~brake_end & ~brake_squat) | run_brake
    # Crouching (ftCo_Squat.c, ftCo_SquatWait.c, ftCo_SquatRv.c): the squat (CROUCH_START) plays its animation into
    # the wait (CROUCHING), answering no stick; the wait dashes on a forward flick (ftCo_Dash_CheckInput) and rises
    # (CROUCH_END) with the stick above -x094; the rise walks with the stick forward (ftCo_Walk_CheckInput) and
    # stands at its animation's end. Animation lengths measured (fight/measured.py).
    squat, squat_wait, squat_rv = mask & (act == SQUAT), mask & (act == SQUAT_WAIT), mask & (act == SQUAT_RV)
    if on_platform is not None:
        ps, fs, dropped = _squat_pass(ps, fs, pad, T, squat, on_platform)
        mask, squat = mask & ~dropped, squat & ~dropped
        act, af, v = ps.action, ps.action_frame, ps.speed_x
    squat_done = squat & (af > A_.squat_frames)
    rise = squat_wait & ~(flick & (fwd > 0)) & (sy > -SQUAT_RELEASE)
    rv_walk = squat_rv & ~flick & (fwd >= WALK_STICK)
    rv_done = squat_rv & ~rv_walk & (af > A_.squat_rv_frames)
    # A normal landing past its lag (ftCo_Landing_IASA): dash, crouch on its first free frame only (straight to
    # CROUCHING: ftCo_SquatWait_CheckInput while cur_anim_frame < landing_lag + rate), turn, walk; else its
    # animation plays out (measured length) and it stands (ftCo_Landing_Anim).
    landing = mask & (act == LANDING)
    lag = T.length[T.base + int(Slot.LANDING)]
    land_first = landing & (af <= lag + 1)
    land_squat = land_first & ~flick & down
    # Standing or walking (or a turn, dash, brake, rise or landing just over): dash, crouch (ftCo_Wait_IASA: after the
    # dash, before the turn and the walk), smash turn, walk, tilt turn, stand.
    idle = ((mask & ~(turning | dashing | running | braking | squat | squat_wait | squat_rv | landing)) | turn_done
            | dash_end | brake_end | rv_done | (landing & ~land_squat) | (squat_wait & flick & (fwd > 0)))
    dash_start = (idle & flick & (fwd > 0)) | smash_dash
    to_squat = (idle & ~dash_start & down & ~landing) | brake_squat
    idle = idle & ~to_squat
    smash_turn = (idle & flick & (fwd < 0) & ~squat_wait) | dash_turn
    walk = (idle & ~flick & (fwd >= WALK_STICK)) | rv_walk
    tilt_turn = idle & ~flick & (fwd < 0) & ~squat_wait
    stand = idle & ~dash_start & ~smash_turn & ~walk & ~tilt_turn
    hold_landing = stand & landing & (af <= A_.landing_frames)
    stand = stand & ~hold_landing
    # Speeds. ftCo_Dash_Enter: the dash's impulse brings the speed to dash_initial its way (from a speed the other
    # way, adds dash_initial to it); it moves the fighter from the next frame (the second channel).
    f = torch.where(smash_dash, torch.sign(sx), f)
    init = f * A_.dash_initial
    impulse = torch.where(v * f < 0, init, init - v)
    v = torch.where(dash_turn, v * (1 - DASH_DECAY), v)
    v = torch.where(dash_start, v + impulse, v)
    v = torch.where(dash_on, dash_speed(v, sx, T, taper=False), v)
    v = torch.where(run_on, dash_speed(v, sx, T, taper=True), v)
    v = torch.where(brake_on, friction(v, A_.friction), v)
    v = torch.where(walk, walk_speed(v, sx, T), v)
    ps = ps._replace(speed_x=v, facing=f)
    # ftCo_Dash_Enter (and the smash turn) take the flick: the timer goes to 254, so one flick is one dash.
    fs = fs._replace(gr_impulse=torch.where(dash_start, impulse, 0.0),
                     tilt_x=torch.where(dash_start | smash_turn, 254.0, fs.tilt_x),
                     turn_smash=torch.where(smash_turn, 1.0, torch.where(tilt_turn, 0.0, fs.turn_smash)))
    # Actions: the walk's by its speed over walk_max (ftWalkCommon_GetWalkType).
    ratio = v.abs() / A_.walk_max
    walk_act = torch.where(ratio >= WALK_FAST, WALKS[2], torch.where(ratio >= WALK_MIDDLE, WALKS[1], WALKS[0]))
    ps = _enter(ps, dash_start, DASHING)
    ps = _enter(ps, smash_turn | tilt_turn, TURNING)
    ps = _enter(ps, to_run, RUNNING)
    ps = _enter(ps, run_brake, RUN_BRAKE)
    ps = _enter(ps, to_squat, SQUAT)
    ps = _enter(ps, squat_done | rise | land_squat, 0.0)
    ps = ps._replace(action=torch.where(squat_done | land_squat, SQUAT_WAIT, torch.where(rise, SQUAT_RV, ps.action)))
    ps = _enter(ps, (walk & (act != walk_act)) | (stand & (act != STANDING)), 0.0)
    ps = ps._replace(action=torch.where(walk, walk_act, torch.where(stand, STANDING, ps.action)))
    return ps, fs


__all__ = ["free_ground", "stop_friction", "friction", "accelerate", "walk_speed", "dash_speed", "DRIVEN"]
