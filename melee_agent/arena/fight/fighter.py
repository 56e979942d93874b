"""Controller -> actions for both fighters at once (``[B, 2]``): Melee's action state machine, simplified.

Each frame, for every player not frozen in hitlag: timed moves that ran out end (or flow into
their next part), moves that allow it are interrupted (jab chains, the shine's jump cancel, ledge
options, throws and pummels from a grab), and a free player starts what the controller asks:

* ground: B specials (down: shine / counter, up: firefox / dolphin slash, side: illusion /
  dancing blade), grab (Z, or A in shield; a dash grab while dashing), A attacks (dash attack while
  dashing; a smash when the stick reaches the rim this frame, else a tilt or the jab), jump, shield,
  spot dodge and rolls (shield with the stick down or sideways), shield drop, dash, walk, stand;
* air: specials, aerials by the stick (nair, fair, bair, uair, dair), double jump, air dodge;
  fast fall and the L-cancel press (L, R or Z) are read in the air whether free or in an aerial.

Stick thresholds (0.2 walk, 0.8 dash and smash, 0.3 tilt, "this frame" for smashes and dashes)
are guesses in the spirit of Melee's; the ``basic`` action set's sticks are all at the rim.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from melee.enums import Action
from torch import Tensor

from melee_agent.arena.env_state import PlayerState
from melee_agent.arena.fight import ground, pads
from melee_agent.arena.fight.ground import tilt_timer
from melee_agent.arena.fight.moves import NONE_ROW, FightTable, Slot
from melee_agent.arena.fight.state import FightState, Pad

STANDING, FALLING = float(Action.STANDING.value), float(Action.FALLING.value)
DEAD_FALL = float(Action.DEAD_FALL.value)  # special fall (helpless)
LANDING = float(Action.LANDING.value)
SHIELD = float(Action.SHIELD.value)
DASHING, RUNNING, WALKING = float(Action.DASHING.value), float(Action.RUNNING.value), float(Action.WALK_MIDDLE.value)
LCANCEL_WINDOW = 7  # SmashWiki L-cancel (Melee): press L, R or Z within 7 frames before landing
LEDGE_LETGO_WAIT = 30  # guess: frames before a fighter that let go of the ledge can catch it again
DASH_STICK, WALK_STICK, TILT_STICK, FRESH = 0.8, 0.2, 0.3, 0.3  # guesses (see the module docstring)
JUMP_F, JUMP_B = float(Action.JUMPING_FORWARD.value), float(Action.JUMPING_BACKWARD.value)
AIRDODGE_FORCE, AIRDODGE_DEADZONE = 3.1, 0.25  # ftCommonData x338, x32C/x330 (meleelight-decomp-edition meleeCommon.js)
FASTFALL_STICK, FASTFALL_WINDOW = 0.6625, 4  # ftCommonData x088, x08C (meleelight-decomp-edition meleeCommon.js)
#: An air dodge's last frame of decay (ftCo_EscapeAir_Phys); from the next its animation script turns normal fall physics
#: on (ft_80084DB0: fast fall, gravity, drift). Measured on slippi-js's replays (Fox n 3, Marth n 4: the vertical speed
#: gains gravity from frame 30); the script is not in the sources here.
AIRDODGE_DECAY_FRAMES = 29
TAP_JUMP, TAP_JUMP_WINDOW = 0.6625, 4  # ftCommonData x070, x074 (meleelight-decomp-edition meleeCommon.js)
TAP_JUMP_RELEASE = 0.3  # ftCommonData x07C tap_jump_release_threshold (meleelight-decomp-edition meleeCommon.js)
HOP_BUTTON, HOP_STICK, HOP_SHORT = 0.0, 1.0, 2.0  # FightState.hop
TAKEOFF_BACK = 0.3  # guess (meleelight KNEEBEND: -0.3): the game's ftCommonData x78 is not in the sources here


def agent_pad(ctrl: Tensor) -> tuple[Tensor, ...]:
    """The agent's controller state (``ctrl[column]``: ``[len(TABLE_COLUMNS), B]``) as ``[B]`` a, b, jump, z, shield, sx, sy:
    a macro's frame read as any raw controller frame is (:func:`melee_agent.arena.fight.pads.read`)."""
    raw = pads.from_table(ctrl)
    return tuple(pads.read(raw, torch.zeros_like(raw.a)))


def rows_of(move: Tensor) -> Tensor:
    """Move rows (``[B, 2]`` long) of the ``move`` field; no move reads the all-zero row."""
    return torch.where(move >= 0, move, float(NONE_ROW)).long()


def slot_row(T: FightTable, slot: int) -> Tensor:
    """The rows of ``slot`` for each player's column (``[B, 2]``, or ``[1, 2]``)."""
    return T.base + slot


def start(ps: PlayerState, mask: Tensor, r: Tensor, T: FightTable) -> PlayerState:
    """Players where ``mask`` holds begin move row ``r`` (``[B, 2]`` or ``[1, 2]``) on its frame 1."""
    r = r.expand_as(ps.move)
    return ps._replace(move=torch.where(mask, r.float(), ps.move),
                       busy_left=torch.where(mask, T.length[r], ps.busy_left),
                       action=torch.where(mask, T.action[r], ps.action),
                       action_frame=torch.where(mask, 1.0, ps.action_frame),
                       hit_done=torch.where(mask, 0.0, ps.hit_done))


def set_free(ps: PlayerState, mask: Tensor, action: Tensor | float) -> PlayerState:
    """Players where ``mask`` holds leave any move for ``action`` (a free state)."""
    changed = mask & (ps.action != action)
    return ps._replace(move=torch.where(mask, -1.0, ps.move), busy_left=torch.where(mask, 0.0, ps.busy_left),
                       action=torch.where(mask, action, ps.action),
                       action_frame=torch.where(changed | (mask & (ps.move >= 0)), 1.0, ps.action_frame))


class Edges(NamedTuple):
    """Buttons pressed this frame (not held on the last), ``[B, 2]`` bool."""

    a: Tensor
    b: Tensor
    z: Tensor
    jump: Tensor
    shield: Tensor
    dodge: Tensor  # L or R pressed all the way (the air dodge's input)


def lr_of(pad: Pad) -> Tensor:
    """The air dodge's buttons, digital L and R held as 1 (L) + 2 (R) (a pad that does not say: its shield, as L)."""
    return pad.shield.float() if pad.lr is None else pad.lr


def _new_lr(now: Tensor, held: Tensor) -> Tensor:
    """A new press of L or of R (ftCo_80099A58: the newly pressed buttons ``& (HSD_PAD_R | HSD_PAD_L)``): L pressed
    while R stays held is a new press (the replays: a wavedash's L with R held through the squat)."""
    return ((now % 2 == 1) & (held % 2 == 0)) | ((now >= 2) & (held < 2))


def edges(ps: PlayerState, fs: FightState, pad: Pad) -> Edges:
    return Edges(pad.a & (fs.a_held == 0), pad.b & (fs.b_held == 0), pad.z & (fs.z_held == 0),
                 pad.jump & (ps.jump_held == 0), pad.shield & (fs.shield_held == 0), _new_lr(lr_of(pad), fs.lr_held))


def remember(ps: PlayerState, fs: FightState, pad: Pad) -> tuple[PlayerState, FightState]:
    """This frame's buttons and stick become "last frame's" for the next."""
    f = lambda b: b.float()  # noqa: E731
    return (ps._replace(jump_held=f(pad.jump)),
            fs._replace(a_held=f(pad.a), b_held=f(pad.b), z_held=f(pad.z), shield_held=f(pad.shield), lr_held=lr_of(pad),
                        stick_x_prev=pad.sx, stick_y_prev=pad.sy))


def _end_moves(ps: PlayerState, fs: FightState, pad: Pad, T: FightTable, live: Tensor) -> tuple[PlayerState, FightState]:
    """Timed moves that ran out end, or flow into their next part (jump squat -> the jump)."""
    r = rows_of(ps.move)
    ended = live & (ps.move >= 0) & (ps.busy_left <= 0)
    nxt = T.end_row[r]
    cont = ended & (nxt >= 0)
    ground = ps.on_ground > 0
    A = T.attrs
    squat = ended & (r == slot_row(T, Slot.JUMPSQUAT))
    hang = ended & (r == slot_row(T, Slot.LEDGE_HANG))
    to_travel = cont & (nxt == slot_row(T, Slot.UP_B_TRAVEL).float())
    helpless = ended & ~cont & (T.helpless_after[r] > 0) & ~ground
    # The firefox flies along the stick's angle read as its charge ends (meleelight UPSPECIALCHARGE:
    # straight up with the stick neutral); it faces the way it flies.
    neutral = (pad.sx.abs() < WALK_STICK) & (pad.sy.abs() < WALK_STICK)
    aim = torch.where(neutral, math.pi / 2, torch.atan2(pad.sy, pad.sx))
    fs = fs._replace(aim=torch.where(to_travel, aim, fs.aim),
                     helpless=torch.where(helpless, 1.0, fs.helpless),
                     ledge_wait=torch.where(hang, float(LEDGE_LETGO_WAIT), fs.ledge_wait))
    cosa = torch.cos(aim)
    ps = ps._replace(facing=torch.where(to_travel & (cosa.abs() > 0.01), torch.sign(cosa), ps.facing))
    ps = start(ps, cont, nxt.long().clamp(min=0), T)
    free_act = torch.where(ground, STANDING, torch.where(helpless, DEAD_FALL, FALLING))
    # A normal landing's lag over, its animation goes on (ftCo_Landing_IASA lets it be interrupted from here; :mod:`.ground`
    # plays the rest): free, still LANDING, its frames counting on.
    landed = ended & ground & (r == slot_row(T, Slot.LANDING)) & (ps.action == LANDING)
    af = ps.action_frame
    ps = set_free(ps, ended & ~cont & ~squat, torch.where(landed, LANDING, free_act))
    ps = ps._replace(action_frame=torch.where(landed, af, ps.action_frame))
    # Jump squat over (ftCo_KneeBend_Anim -> ftCo_Jump_Enter, ftCo_800CB110): leave the ground, a short hop if the
    # squat marked one (:func:`tap_jump`), else a full hop (short_hop_v / jump_v); sideways the ground
    # speed x ground_to_air_jump_momentum_multiplier plus that frame's stick x jump_h_initial, at most jump_h_max.
    # The game reads both on the last squat frame (the replays: the takeoff follows the stick a frame earlier).
    # Backward (JUMPING_BACKWARD) with that stick more than TAKEOFF_BACK against the facing.
    vy = torch.where(fs.hop == HOP_SHORT, A.short_hop_v, A.jump_v)
    sx = fs.stick_x_prev
    vx = (ps.speed_x * A.ground_air_jump_mult + sx * A.jump_h_initial).clamp(-A.jump_h_max, A.jump_h_max)
    back = sx * ps.facing <= -TAKEOFF_BACK
    ps = set_free(ps, squat, torch.where(back, JUMP_B, JUMP_F))
    ps = ps._replace(on_ground=torch.where(squat, 0.0, ps.on_ground), speed_y=torch.where(squat, vy, ps.speed_y),
                     speed_x=torch.where(squat, vx, ps.speed_x),
                     jumps_left=torch.where(squat, ps.jumps_left - 1, ps.jumps_left))
    # The takeoff takes the stick's y flick (ftCo_800CB110: x671 to 254): a tap jump held up does not double jump.
    fs = fs._replace(tilt_y=torch.where(squat, 254.0, fs.tilt_y))
    return ps, fs


def _ledge_options(ps: PlayerState, fs: FightState, pad: Pad, e: Edges, T: FightTable, edge: Tensor | float,
                   live: Tensor) -> tuple[PlayerState, FightState]:
    """On the ledge: get up (stick toward the stage or up, or A), jump, or let go (down or away)."""
    hanging = live & (rows_of(ps.move) == slot_row(T, Slot.LEDGE_HANG)) & (ps.action_frame >= 2)
    side = torch.sign(ps.position_x)
    toward = -pad.sx * side
    getup = hanging & ((toward > 0.5) | (pad.sy > 0.5) | e.a)
    jump = hanging & ~getup & e.jump
    drop = hanging & ~getup & ~jump & ((toward < -0.5) | (pad.sy < -0.5))
    # Getting up puts the fighter on the stage beside the ledge (guess: 10 units in) for the getup's frames.
    ps = start(ps, getup, slot_row(T, Slot.LEDGE_GETUP), T)
    ps = ps._replace(position_x=torch.where(getup, side * (edge - 10.0), ps.position_x),
                     position_y=torch.where(getup, 0.0, ps.position_y),
                     on_ground=torch.where(getup, 1.0, ps.on_ground),
                     jumps_left=torch.where(getup, 2.0, ps.jumps_left))
    # A ledge jump: the full jump's speed up and a little toward the stage (guess: 1 unit per frame).
    ps = set_free(ps, jump, float(Action.JUMPING_FORWARD.value))
    ps = ps._replace(speed_y=torch.where(jump, T.attrs.jump_v, ps.speed_y),
                     speed_x=torch.where(jump, -side, ps.speed_x))
    ps = set_free(ps, drop, FALLING)
    fs = fs._replace(ledge_wait=torch.where(jump | drop, float(LEDGE_LETGO_WAIT), fs.ledge_wait))
    return ps, fs


def _interrupts(ps: PlayerState, fs: FightState, pad: Pad, e: Edges, T: FightTable, live: Tensor) -> PlayerState:
    """Moves that the controller may cut short: jab chains, the shine's jump cancel, grabs' pummel and throws."""
    r = rows_of(ps.move)
    in_move = live & (ps.move >= 0)
    chain = in_move & e.a & (T.chain_row[r] >= 0) & (ps.action_frame >= T.chain_from[r])
    ps = start(ps, chain, T.chain_row[r].long().clamp(min=0), T)
    jc = in_move & e.jump & (T.jc_from[r] > 0) & (ps.action_frame >= T.jc_from[r]) & (ps.on_ground > 0)
    ps = start(ps, jc, slot_row(T, Slot.JUMPSQUAT), T)
    # Out of an aerial shine a jump is a double jump (handled as a free air action below).
    air_jc = in_move & e.jump & (T.jc_from[r] > 0) & (ps.action_frame >= T.jc_from[r]) & (ps.on_ground == 0)
    ps = set_free(ps, air_jc, FALLING)
    holding = in_move & (r == slot_row(T, Slot.GRAB_HOLD))
    pummel = holding & e.a
    fwd = pad.sx * ps.facing
    up, down = pad.sy > 0.5, pad.sy < -0.5
    side = (pad.sx.abs() > 0.5) & ~up & ~down
    throw = holding & ~pummel & (up | down | side)
    throw_slot = torch.where(up, float(Slot.UTHROW), torch.where(down, float(Slot.DTHROW), torch.where(
        fwd > 0, float(Slot.FTHROW), float(Slot.BTHROW))))
    base = slot_row(T, 0)
    ps = start(ps, pummel, slot_row(T, Slot.PUMMEL), T)
    return start(ps, throw, (base + throw_slot).long(), T)


def _ground_actions(ps: PlayerState, fs: FightState, pad: Pad, e: Edges, T: FightTable,
                    fg: Tensor, on_platform: Tensor | None = None) -> tuple[PlayerState, FightState]:
    """What a free grounded fighter starts this frame (see the module docstring); ``on_platform``: standing on a
    platform (None: the stage has none)."""
    base = slot_row(T, 0)
    in_shield = ps.action == SHIELD
    dashing = (ps.action == DASHING) | (ps.action == RUNNING)
    grab = fg & (e.z | (e.a & in_shield))
    att = fg & e.a & ~grab
    vertical = pad.sy.abs() >= pad.sx.abs()
    fresh_y = (fs.stick_y_prev.abs() < FRESH)
    fresh_x = (fs.stick_x_prev.abs() < FRESH)
    dash_att = att & dashing
    rest = att & ~dash_att
    usmash = rest & vertical & (pad.sy >= DASH_STICK) & fresh_y
    dsmash = rest & vertical & (pad.sy <= -DASH_STICK) & fresh_y
    fsmash = rest & ~vertical & (pad.sx.abs() >= DASH_STICK) & fresh_x
    tilt = rest & ~usmash & ~dsmash & ~fsmash
    utilt = tilt & vertical & (pad.sy > TILT_STICK)
    dtilt = tilt & vertical & (pad.sy < -TILT_STICK)
    ftilt = tilt & ~vertical & (pad.sx.abs() > TILT_STICK)
    slot = torch.full_like(ps.move, float(Slot.JAB1))
    for m, s in ((dash_att, Slot.DASH_ATTACK), (usmash, Slot.USMASH), (dsmash, Slot.DSMASH),
                 (fsmash, Slot.FSMASH), (utilt, Slot.UTILT), (dtilt, Slot.DTILT), (ftilt, Slot.FTILT),
                 (grab & dashing, Slot.DASH_GRAB), (grab & ~dashing, Slot.GRAB)):
        slot = torch.where(m, float(s), slot)
    turn = (fsmash | ftilt) & (pad.sx.abs() > TILT_STICK)
    ps = ps._replace(facing=torch.where(turn, torch.sign(pad.sx), ps.facing))
    ps = start(ps, att | grab, (base + slot).long(), T)
    rest = fg & ~att & ~grab
    # ftCo_Jump_GetInput: the stick up (tap jump) first, then a new X or Y press; the squat remembers which.
    tap = tap_jump(pad, fs)
    jump = rest & (e.jump | tap)
    ps = start(ps, jump, slot_row(T, Slot.JUMPSQUAT), T)
    fs = fs._replace(hop=torch.where(jump, torch.where(tap, HOP_STICK, HOP_BUTTON), fs.hop))
    rest = rest & ~jump
    sh = rest & pad.shield
    spot = sh & (pad.sy < -0.5) & (e.shield | (fs.stick_y_prev > -0.5))
    roll = sh & ~spot & (pad.sx.abs() > 0.5) & (e.shield | (fs.stick_x_prev.abs() <= 0.5))
    forward = torch.sign(pad.sx) == ps.facing
    ps = start(ps, spot, slot_row(T, Slot.SPOT_DODGE), T)
    ps = start(ps, roll, torch.where(forward, slot_row(T, Slot.ROLL_FORWARD), slot_row(T, Slot.ROLL_BACKWARD)), T)
    # A forward roll ends facing the other way (as the dodging arena).
    ps = ps._replace(facing=torch.where(roll & forward, -ps.facing, ps.facing))
    hold = sh & ~spot & ~roll
    if on_platform is not None:
        # ftCo_Guard_IASA's last check, ftCo_8009A080: L or R held and the drop's stick (ground.pass_check) drops
        # through the platform (what escapes, grabs and jumps leave).
        through = hold & (lr_of(pad) > 0) & ground.pass_check(pad, fs, on_platform)
        ps, fs = ground.enter_pass(ps, fs, through, T)
        hold = hold & ~through
    ps = set_free(ps, hold, SHIELD)
    drop = rest & ~pad.shield & in_shield
    ps = start(ps, drop, slot_row(T, Slot.SHIELD_RELEASE), T)
    move = rest & ~pad.shield & ~in_shield
    return ground.free_ground(ps, fs, pad, T, move, on_platform)


def tap_jump(pad: Pad, fs: FightState) -> Tensor:
    """ftCo_Jump_GetInput / ft_did_jump: the stick at or past tap_jump_threshold up within tap_jump_window frames of its
    y crossing the smash deadzone (the x671 tilt timer)."""
    return (pad.sy >= TAP_JUMP) & (fs.tilt_y < TAP_JUMP_WINDOW)


def short_hop(ps: PlayerState, fs: FightState, pad: Pad, T: FightTable, live: Tensor) -> FightState:
    """ftCo_KneeBend_Check_ShortHop, every squat frame: the button let go (a button jump) or the stick below
    tap_jump_release_threshold (a tap jump) marks a short hop for good."""
    squat = rows_of(ps.move) == slot_row(T, Slot.JUMPSQUAT)
    let_go = ((fs.hop == HOP_BUTTON) & ~pad.jump) | ((fs.hop == HOP_STICK) & (pad.sy < TAP_JUMP_RELEASE))
    hop = torch.where(live & squat & let_go, HOP_SHORT, fs.hop)
    # Out of the squat the flag rests at "button" (a squat that starts elsewhere, the shine's jump cancel, is a press).
    return fs._replace(hop=torch.where(squat, hop, HOP_BUTTON))


def _air_actions(ps: PlayerState, fs: FightState, pad: Pad, e: Edges, T: FightTable, fa: Tensor) -> PlayerState:
    """What a free airborne fighter starts this frame: an aerial, a double jump or an air dodge."""
    base = slot_row(T, 0)
    aer = fa & e.a
    vertical = pad.sy.abs() >= pad.sx.abs()
    fwd = pad.sx * ps.facing
    slot = torch.where(vertical & (pad.sy > TILT_STICK), float(Slot.UAIR), torch.where(
        vertical & (pad.sy < -TILT_STICK), float(Slot.DAIR), torch.where(
            ~vertical & (fwd > TILT_STICK), float(Slot.FAIR), torch.where(
                ~vertical & (fwd < -TILT_STICK), float(Slot.BAIR), float(Slot.NAIR)))))
    ps = start(ps, aer, (base + slot).long(), T)
    A = T.attrs
    dj = fa & ~aer & (e.jump | tap_jump(pad, fs)) & (ps.jumps_left > 0)  # ft_did_jump: tap jump too
    # Double jump: jump_v x air_jump_multiplier up (gamedata); sideways from the stick (jump_h_initial). Backward
    # (JUMPING_ARIAL_BACKWARD) with the stick more than x78 against the facing (ftCo_JumpAerial_Enter_Basic: the same
    # ftCommonData x78 as the takeoff's, TAKEOFF_BACK).
    back = pad.sx * ps.facing <= -TAKEOFF_BACK
    ps = set_free(ps, dj, torch.where(back, float(Action.JUMPING_ARIAL_BACKWARD.value),
                                      float(Action.JUMPING_ARIAL_FORWARD.value)))
    ps = ps._replace(speed_y=torch.where(dj, A.jump_v * A.air_jump_multiplier, ps.speed_y),
                     speed_x=torch.where(dj, pad.sx * A.jump_h_initial, ps.speed_x),
                     jumps_left=torch.where(dj, ps.jumps_left - 1, ps.jumps_left),
                     fast_falling=torch.where(dj, 0.0, ps.fast_falling))
    # Also on a jump's first airborne frame: a dodge down there lands on that frame (the wavedash; the replays go from
    # KNEE_BEND straight to LANDING_SPECIAL).
    ad = fa & ~aer & ~dj & e.dodge
    ps = start(ps, ad, slot_row(T, Slot.AIRDODGE), T)
    # ftCo_EscapeAir.c inlineA0: escapeair_force (3.1, ftCommonData x338) along the stick, none with the stick inside
    # escapeair_deadzone (0.25 on both axes, x32C / x330); physics decays it (x33C 0.9 a frame).
    still = (pad.sx.abs() < AIRDODGE_DEADZONE) & (pad.sy.abs() < AIRDODGE_DEADZONE)
    angle = torch.atan2(pad.sy, pad.sx)
    vx = torch.where(still, 0.0, AIRDODGE_FORCE * torch.cos(angle))
    vy = torch.where(still, 0.0, AIRDODGE_FORCE * torch.sin(angle))
    return ps._replace(speed_y=torch.where(ad, vy, ps.speed_y), speed_x=torch.where(ad, vx, ps.speed_x),
                       fast_falling=torch.where(ad, 0.0, ps.fast_falling))


def _specials(ps: PlayerState, pad: Pad, e: Edges, T: FightTable, free: Tensor) -> tuple[PlayerState, Tensor]:
    """B with the stick: down (shine / counter), up (firefox / dolphin slash), side (illusion / dancing blade)."""
    fb = free & e.b
    down = fb & (pad.sy < -0.5)
    up = fb & ~down & (pad.sy > 0.5)
    side = fb & ~down & ~up & (pad.sx.abs() > 0.5)
    ps = ps._replace(facing=torch.where(side, torch.sign(pad.sx), ps.facing))
    ps = start(ps, down, slot_row(T, Slot.DOWN_B), T)
    ps = start(ps, up, slot_row(T, Slot.UP_B), T)
    ps = start(ps, side, slot_row(T, Slot.SIDE_B), T)
    # meleelight UPSPECIALCHARGE: horizontal speed x 0.8 and vertical speed 0 as the charge starts.
    ps = ps._replace(speed_x=torch.where(up, ps.speed_x * 0.8, ps.speed_x),
                     speed_y=torch.where(up | down | side, 0.0, ps.speed_y),
                     fast_falling=torch.where(up | down | side, 0.0, ps.fast_falling))
    return ps, down | up | side


def ground_turn_flip(ps: PlayerState, fs: FightState, T: FightTable, mask: Tensor) -> PlayerState:
    """A turn faces the other way in its animation step, before the frame's inputs are read (doldecomp/melee
    ``ftCo_Turn.c``: ``ftCo_Turn_Anim_Inner`` flips ``facing_dir`` once ``frames_to_turn`` has counted down, and
    ``ftCo_Turn_IASA`` runs after it): a smash turn (``ftCo_Turn_Enter_Smash``, no frames to turn) on its second
    frame, a tilt turn on its measured flip frame (standing_turn_frames + 2). So a jump, dash or attack out of the
    turn from that frame on takes the new facing (the replays: a jump on a smash turn's second frame faces the new
    way)."""
    at = torch.where(fs.turn_smash > 0, 2.0, T.attrs.turn_flip_frame)
    flip = mask & (ps.action == ground.TURNING) & (ps.action_frame == at)
    return ps._replace(facing=torch.where(flip, -ps.facing, ps.facing))


def advance(ps: PlayerState, fs: FightState, pad: Pad, T: FightTable, edge: Tensor | float,
            frozen: Tensor, platforms: bool = False) -> tuple[PlayerState, FightState]:
    """One frame of both fighters' action state machines (``frozen``: in hitlag, nothing happens); ``edge``: the main
    floor's half width; ``platforms``: the stage has platforms (a grounded fighter above the floor stands on one)."""
    live = ~frozen
    e = edges(ps, fs, pad)
    fs = fs._replace(tilt_x=tilt_timer(pad.sx, fs.stick_x_prev, fs.tilt_x),
                     tilt_y=tilt_timer(pad.sy, fs.stick_y_prev, fs.tilt_y))
    ps, fs = _end_moves(ps, fs, pad, T, live)
    ps, fs = _ledge_options(ps, fs, pad, e, T, edge, live)
    ps = _interrupts(ps, fs, pad, e, T, live)
    r = rows_of(ps.move)
    air = ps.on_ground == 0
    # L-cancel: a press of L, R or Z in the air opens the 7-frame window.
    fs = fs._replace(lcancel_left=torch.where(live & air & (e.shield | e.z), float(LCANCEL_WINDOW), fs.lcancel_left))
    free = live & (ps.move < 0) & (ps.hitstun_frames_left <= 0)
    ground = ps.on_ground > 0
    ps = ground_turn_flip(ps, fs, T, free & ground)
    ps, special = _specials(ps, pad, e, T, free & (ground | (fs.helpless == 0)))
    on_platform = ground & (ps.position_y > 0.01) if platforms else None
    ps, fs = _ground_actions(ps, fs, pad, e, T, free & ground & ~special, on_platform)
    jumps = ps.jumps_left
    ps = _air_actions(ps, fs, pad, e, T, free & ~ground & ~special & (fs.helpless == 0))
    # A double jump takes the stick's flick (ftCo_800CBAC4: x671 to 254), so a tap jump is one jump.
    fs = fs._replace(tilt_y=torch.where(ps.jumps_left < jumps, 254.0, fs.tilt_y))
    fs = short_hop(ps, fs, pad, T, live)
    # Fast fall: the stick down once the jump's rise is over, free or in an aerial.
    r = rows_of(ps.move)
    # An air dodge past its decay falls by ft_80084DB0, which checks the fast fall too (ftCommon_CheckFallFast).
    late_dodge = (r == slot_row(T, Slot.AIRDODGE)) & (ps.action_frame > AIRDODGE_DECAY_FRAMES)
    can_ff = (live & air & (ps.hitstun_frames_left <= 0) & ((ps.move < 0) | (T.aerial[r] > 0) | late_dodge)
              & (ps.speed_y < 0))
    # ftCommon_CheckFallFast: the stick down past 0.6625 (ftCommonData x088) with its y tilt timer under 4 (x08C), once
    # per flick (the timer goes to 254).
    ff = can_ff & (ps.fast_falling == 0) & (pad.sy <= -FASTFALL_STICK) & (fs.tilt_y < FASTFALL_WINDOW)
    ps = ps._replace(fast_falling=torch.where(ff, 1.0, ps.fast_falling))
    fs = fs._replace(tilt_y=torch.where(ff, 254.0, fs.tilt_y))
    return remember(ps, fs, pad)
