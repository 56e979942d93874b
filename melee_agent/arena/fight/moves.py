"""The fight's move table: every timed action of Fox and Marth, per frame and hitbox slot, as tensors.

A *move row* is one timed action of one character. Both characters have the same slots
(:class:`Slot`), so the row of slot ``s`` for player column ``p`` (0 Fox, 1 Marth) is
``p * NUM_SLOTS + s`` and the last row (``NONE_ROW``) is all zeros: a frame reads any player's
move by one gather, with no branch per character.

Sources (beside each value below):

* hitboxes (position, radius, damage, angle, knockback, set knockback, element, ground/air flags,
  shield damage), attack ids, IASA, landing lag, L-cancel lag, autocancel windows: ``arena/gamedata``
  (the game's files through meleedb; positions from libmelee's ``framedata.csv``; see SOURCES.md);
* throws (damage, angle, knockback, release frame, first actionable frame): ``gamedata/throws.csv``;
* per-frame movement of moves (``locomotion_x``/``locomotion_y``) and the frame counts of actions
  the dump does not hold (rolls, spot dodge, ledge getup, Fox's illusion and firefox travel):
  libmelee ``framedata.csv``;
* intangibility windows: SmashWiki (as the dodging arena), marked guesses where not checked.

Hitbox positions libmelee did not record on a frame (``nan`` in gamedata) take the nearest recorded
frame's position of the same hitbox id; a hitbox with no recorded position at all (pummels) hits
the held opponent wherever it is (pummels only hit the one held).

Example::

    >>> t = build_table()
    >>> r = row(AGENT_COL, Slot.JAB1)
    >>> float(t.hit[r, 2, 0, H.DAMAGE]), int(t.length[r]), int(t.action[r])
    (4.0, 15, 44)
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from importlib import resources
from typing import NamedTuple

import numpy as np
import torch
from melee.enums import Action, Character

from melee_agent.arena import gamedata as gd
from melee_agent.arena.fight.measured import MEASURED
from melee_agent.arena.stage_table import StageTable
from melee_agent.arena.stages import DEFAULT_STAGE

AGENT_COL, CPU_COL = 0, 1
CHARACTERS = (Character.FOX, Character.MARTH)  # column 0 the agent (Fox), column 1 the CPU (Marth)


class Slot:
    """The timed actions every character has (a character without one leaves its row empty).

    Plain ints (not an ``IntEnum``): ``torch.compile`` traces them as constants.
    """

    JAB1 = 0
    JAB2 = 1
    JAB3 = 2
    FTILT = 3
    UTILT = 4
    DTILT = 5
    FSMASH = 6
    USMASH = 7
    DSMASH = 8
    DASH_ATTACK = 9
    NAIR = 10
    FAIR = 11
    BAIR = 12
    UAIR = 13
    DAIR = 14
    GRAB = 15
    DASH_GRAB = 16
    GRAB_HOLD = 17
    PUMMEL = 18
    FTHROW = 19
    BTHROW = 20
    UTHROW = 21
    DTHROW = 22
    HELD = 23
    DOWN_B = 24
    DOWN_B_LOOP = 25
    UP_B = 26
    UP_B_TRAVEL = 27
    SIDE_B = 28
    SIDE_B_TRAVEL = 29
    SIDE_B_END = 30
    JUMPSQUAT = 31
    LANDING = 32
    LANDING_SPECIAL = 33
    SHIELD_RELEASE = 34
    SHIELD_BREAK = 35
    SPOT_DODGE = 36
    ROLL_FORWARD = 37
    ROLL_BACKWARD = 38
    AIRDODGE = 39
    LEDGE_HANG = 40
    LEDGE_GETUP = 41


SLOT_NAMES = tuple(sorted((k for k in vars(Slot) if k.isupper()), key=lambda k: getattr(Slot, k)))
NUM_SLOTS = len(SLOT_NAMES)
NONE_ROW = 2 * NUM_SLOTS  # the all-zero row read for "no move"
AERIALS = (Slot.NAIR, Slot.FAIR, Slot.BAIR, Slot.UAIR, Slot.DAIR)
THROWS = (Slot.FTHROW, Slot.BTHROW, Slot.UTHROW, Slot.DTHROW)
ATTACKS = (Slot.JAB1, Slot.JAB2, Slot.JAB3, Slot.FTILT, Slot.UTILT, Slot.DTILT, Slot.FSMASH, Slot.USMASH,
           Slot.DSMASH, Slot.DASH_ATTACK) + AERIALS + (Slot.GRAB, Slot.DASH_GRAB, Slot.DOWN_B, Slot.UP_B, Slot.SIDE_B)
MAX_FRAMES = 64  # frames per row in the table (the longest move used, Marth's dsmash, has 64)


class H:
    """Columns of a hitbox entry in :attr:`FightTable.hit` (plain ints, as :class:`Slot`)."""

    X = 0  # centre minus the fighter's position, forward (gamedata x)
    Y = 1
    RADIUS = 2  # 0 = no hitbox in this slot on this frame
    DAMAGE = 3
    ANGLE = 4  # degrees, 361 = Sakurai angle
    BASE_KB = 5
    KB_GROWTH = 6
    SET_KB = 7
    ELECTRIC = 8  # 1 for electric hitboxes (hitlag x 1.5 on the victim)
    GRAB = 9  # 1 for grab hitboxes
    GROUNDED = 10  # hits grounded victims
    AIRBORNE = 11  # hits airborne victims
    SHIELD_DAMAGE = 12
    ANYWHERE = 13  # no recorded position: hits the held opponent (pummels)


NUM_H = 14

# Landing lag of each aerial is played under the aerial's own landing action (libmelee enums).
AERIAL_LANDING_ACTION = {Slot.NAIR: Action.NAIR_LANDING, Slot.FAIR: Action.FAIR_LANDING,
                         Slot.BAIR: Action.BAIR_LANDING, Slot.UAIR: Action.UAIR_LANDING,
                         Slot.DAIR: Action.DAIR_LANDING}

# --- numbers the game files here do not carry ---
SHINE_LOOP_FRAMES = 17  # guess (as the dodging arena's SHINE_END_LAG): the reflector held after the 3-frame start
SHINE_JUMP_CANCEL = 4  # SmashWiki Fox shine: jump-cancellable from frame 4 (frame 1 of the loop after the 3-frame start)
# Intangibility windows (first, last action frame). "measured": the hurtbox collision state Slippi records
# (2.1.0 on), voted frame by frame over every instance in slippi-js's test replays and ../shared/replays
# (`melee-agent fidelity --intangibility`, docs/intangibility.md); "meleelight": schmooblidon/meleelight's
# character files, read off the game (src/characters/<c>/…Attributes.js `intangibility`, moves/CLIFFGETUPQUICK.js).
SHINE_INTANGIBLE = (1, 1)  # measured: Fox's shine start (55 instances), frame 1 only
INTANGIBLE: dict[Character, dict[int, tuple[int, int]]] = {
    Character.FOX: {
        Slot.SPOT_DODGE: (2, 15),  # measured (3 spot dodges, 22 frames); SmashWiki spot dodge table: 2-15 of 22
        Slot.ROLL_FORWARD: (4, 19),  # measured (3 rolls, 31 frames); meleelight ESCAPEF [4, 16 frames]
        Slot.ROLL_BACKWARD: (4, 19),  # measured (13 rolls, 31 frames); meleelight ESCAPEB [4, 16 frames]
        Slot.AIRDODGE: (4, 29),  # measured (47 air dodges); SmashWiki Fox air dodge: 4-29
        Slot.LEDGE_HANG: (1, 30),  # measured (26 hangs, seen to frame 50): the first 30 frames of hanging
        Slot.LEDGE_GETUP: (1, 30),  # measured (2 quick getups, 34 frames)
    },
    Character.MARTH: {
        Slot.SPOT_DODGE: (2, 17),  # meleelight ESCAPEN [2, 16 frames] of 27 (no Marth spot dodge in replays with the state)
        Slot.ROLL_FORWARD: (4, 19),  # measured (3 rolls, 35 frames; meleelight says 4-23 for both rolls)
        Slot.ROLL_BACKWARD: (4, 23),  # measured (1 roll, 35 frames); meleelight ESCAPEB [4, 20 frames]
        Slot.AIRDODGE: (4, 29),  # measured (60 air dodges)
        Slot.LEDGE_HANG: (1, 30),  # measured (13 hangs, seen to frame 56)
        Slot.LEDGE_GETUP: (1, 30),  # meleelight CLIFFGETUPQUICK: intangibleTimer 30 of 32 (not in replays with the state)
        Slot.UP_B: (5, 5),  # measured (3 dolphin slashes, 39 frames): frame 5 only
    },
}
AIRDODGE_FRAMES = 49  # SmashWiki: air dodge lasts 49 frames (Fox; Marth's taken as the same: guess)
LANDING_SPECIAL_FRAMES = 10  # SmashWiki: landing from an air dodge, 10 frames (used for helpless landings too: guess)
SHIELD_RELEASE_FRAMES = 15  # SmashWiki shield drop: 15 frames (as the dodging arena)
SHIELD_BREAK_FRAMES = 400  # guess (as the dodging arena): shield-break flight and dizziness as one stun
LEDGE_HANG_FRAMES = 300  # guess: hanging that long lets go of the ledge
MARTH_DOWN_B_FRAMES = 30  # guess: Marth's counter as a 30-frame stance without its counterattack


class Attrs(NamedTuple):
    """Character attributes, ``[2]`` each (Fox, Marth), from gamedata ``characters.csv`` (the game's files)."""

    weight: torch.Tensor
    gravity: torch.Tensor
    terminal_velocity: torch.Tensor
    fast_fall_velocity: torch.Tensor
    jump_v: torch.Tensor
    short_hop_v: torch.Tensor
    jump_h_initial: torch.Tensor
    jump_h_max: torch.Tensor
    air_jump_multiplier: torch.Tensor
    walk_max: torch.Tensor
    dash_initial: torch.Tensor
    run_max: torch.Tensor
    friction: torch.Tensor
    air_mobility_a: torch.Tensor
    air_mobility_b: torch.Tensor
    air_speed_max: torch.Tensor
    air_friction: torch.Tensor
    walk_initial: torch.Tensor  # the decompilation's walk_accel_mul
    walk_accel_base: torch.Tensor
    dash_accel_a: torch.Tensor
    dash_accel_b: torch.Tensor
    ground_air_jump_mult: torch.Tensor
    dash_run_frame: torch.Tensor  # measured (fight/measured.py): a dash may run after this frame
    dash_frames: torch.Tensor  # measured: frames of a dash
    run_brake_frames: torch.Tensor  # measured: frames of a run brake
    turn_frames: torch.Tensor  # measured: frames of a turn
    turn_flip_frame: torch.Tensor  # measured: the turn's frame that faces the other way
    squat_frames: torch.Tensor  # measured: frames of the squat (CROUCH_START)
    squat_rv_frames: torch.Tensor  # measured: frames of the rise (CROUCH_END)
    landing_frames: torch.Tensor  # measured: a normal landing's animation, when nothing interrupts it
    squat_dodge_share: torch.Tensor  # measured: share of a wavedash out of the jump squat moved on its landing frame
    height: torch.Tensor  # libmelee's body height (characterdata "size"), the hurt capsule's height
    ecb_air: torch.Tensor  # measured: the collision box's bottom above the position in the air, once unlocked
    ecb_double_jump: torch.Tensor  # measured: the same in a double jump
    ecb_air_dodge: torch.Tensor  # measured: the same in an air dodge


@dataclass(frozen=True)
class FightTable:
    """The move table as device tensors (rows: ``2 * NUM_SLOTS + 1``; frame index = action frame)."""

    hit: torch.Tensor  # [R, L, 4, NUM_H] hitbox entries per frame and slot
    group: torch.Tensor  # [R, L] which burst of hitboxes the frame belongs to (1, 2, ...; 0 = none)
    loco_x: torch.Tensor  # [R, L] forward movement per frame (framedata locomotion_x)
    loco_y: torch.Tensor  # [R, L] upward movement per frame (framedata locomotion_y); for the firefox: its speed
    action: torch.Tensor  # [R] libmelee action id
    length: torch.Tensor  # [R] frames until actionable
    attack_id: torch.Tensor  # [R] the game's attack id (stale-move negation)
    landing_lag: torch.Tensor  # [R] aerials
    lcancel_lag: torch.Tensor  # [R]
    ac_before: torch.Tensor  # [R] autocancel: landing before this frame lands normally
    ac_after: torch.Tensor  # [R] ... or after this one
    intang_lo: torch.Tensor  # [R] first intangible frame (0 = never)
    intang_hi: torch.Tensor  # [R]
    chain_row: torch.Tensor  # [R] the row A continues into (jab1 -> jab2 -> jab3), -1 none
    chain_from: torch.Tensor  # [R] from this frame
    jc_from: torch.Tensor  # [R] a jump cancels the move from this frame (0 = never)
    end_row: torch.Tensor  # [R] the row that follows when it ends (-1: the fighter is free)
    helpless_after: torch.Tensor  # [R] 1: ends in special fall when airborne
    aerial: torch.Tensor  # [R] 1 for aerials (landing lag)
    ground_move: torch.Tensor  # [R] 1: a grounded move (no walking; stops at the ledge)
    stall: torch.Tensor  # [R] 1: no gravity while it lasts (firefox charge, shine, illusion dash)
    aimed: torch.Tensor  # [R] 1: moves along the stick angle read at its start (firefox travel)
    rises: torch.Tensor  # [R] 1: carries its own vertical motion (locomotion_y) in the air (dolphin slash)
    carries: torch.Tensor  # [R] 1: carries its own horizontal motion (locomotion_x: dash attack, rolls, illusion)
    release: torch.Tensor  # [R] throws: the frame the victim is released (0 none)
    throw: torch.Tensor  # [R, 5] throws: damage, angle, base kb, kb growth, set kb
    first_active: torch.Tensor  # [R] first frame with a hitbox (999 none)
    reach: torch.Tensor  # [R] farthest forward hitbox point
    attack: torch.Tensor  # [R] 1 for moves that can hit (what a CPU watches for)
    weight: torch.Tensor  # [B, 2] (or [2] for a table built without a batch size)
    attrs: Attrs  # character attributes (gamedata characters.csv), [B, 2] each (or [2])
    hitf: torch.Tensor  # [NUM_H, 4, R, L]: ``hit`` field-major, so a frame gathers one [B, 2] field at a time
    base: torch.Tensor  # [B, 2] int64: each column's first row (0 for Fox, NUM_SLOTS for Marth)
    swap: torch.Tensor  # [B, 2] int64: flat index of the other player's column (see :func:`other`)
    stages: StageTable  # the stages the arena plays (each environment's by ``GameState.stage``)


@functools.cache
def fight_table_cpu() -> FightTable:
    """The table on the CPU, built once (for tools that draw a fight)."""
    return build_table("cpu")


def other(x: torch.Tensor, T: FightTable) -> torch.Tensor:
    """Each player's opponent's value: ``x.flip(1)`` for ``[B, 2]`` (or ``[B, 2, K]``) fields, as a gather
    through a flat index (which keeps a compiled frame in one flat loop over ``B * 2`` elements)."""
    return x.reshape(-1)[T.swap] if x.dim() == 2 else x.reshape(-1, x.shape[-1])[T.swap]


def row(col: int, slot: int) -> int:
    return col * NUM_SLOTS + int(slot)


@functools.cache
def _framedata() -> dict[tuple[int, int], list[dict[str, str]]]:
    with resources.files("melee").joinpath("framedata.csv").open() as f:
        rows = list(csv.DictReader(f))
    out: dict[tuple[int, int], list[dict[str, str]]] = {}
    for r in rows:
        out.setdefault((int(r["character"]), int(r["action"])), []).append(r)
    return {k: sorted(v, key=lambda r: int(r["frame"])) for k, v in out.items()}


def _loco(ch: Character, action: int) -> tuple[np.ndarray, np.ndarray]:
    rows = _framedata().get((ch.value, action), [])
    fx = np.zeros(MAX_FRAMES + 1, np.float32)
    fy = np.zeros(MAX_FRAMES + 1, np.float32)
    for r in rows:
        f = int(r["frame"])
        if f <= MAX_FRAMES:
            fx[f], fy[f] = float(r["locomotion_x"] or 0.0), float(r["locomotion_y"] or 0.0)
    return fx, fy


def _framedata_length(ch: Character, action: int) -> int:
    """Frames libmelee recorded for an action: its length where the dump has none."""
    return len(_framedata().get((ch.value, action), []))


def _hitboxes(ch: Character, action: int) -> np.ndarray:
    """``[MAX_FRAMES + 1, 4, NUM_H]`` hitbox entries of one move from gamedata (positions filled in)."""
    hb = gd.load().hitboxes
    sel = np.flatnonzero((hb.character == ch.value) & (hb.action == action))
    out = np.zeros((MAX_FRAMES + 1, 4, NUM_H), np.float32)
    for k in range(4):
        ks = sel[hb.hitbox_id[sel] == k]
        known = ks[~np.isnan(hb.x[ks])]
        for i in ks:
            f = int(hb.frame[i])
            if f > MAX_FRAMES:
                continue
            e = out[f, k]
            if np.isnan(hb.x[i]) and len(known):  # nearest recorded frame of the same hitbox id
                j = known[np.argmin(np.abs(hb.frame[known].astype(int) - f))]
                e[H.X], e[H.Y] = hb.x[j], hb.y[j]
                e[H.RADIUS] = hb.radius[j]
            elif np.isnan(hb.x[i]):
                e[H.ANYWHERE] = 1.0
                e[H.RADIUS] = 1.0  # marks the slot live; position unused
            else:
                e[H.X], e[H.Y], e[H.RADIUS] = hb.x[i], hb.y[i], hb.radius[i]
            e[H.DAMAGE], e[H.ANGLE] = hb.damage[i], hb.angle[i]
            e[H.BASE_KB], e[H.KB_GROWTH], e[H.SET_KB] = hb.base_kb[i], hb.kb_growth[i], hb.set_kb[i]
            elem = hb.elements[int(hb.element[i])]
            e[H.ELECTRIC], e[H.GRAB] = float(elem == "electric"), float(elem == "grab")
            e[H.GROUNDED], e[H.AIRBORNE] = float(hb.hits_grounded[i]), float(hb.hits_airborne[i])
            e[H.SHIELD_DAMAGE] = hb.shield_damage[i]
    if not len(sel) and action in CODE_HITBOX_ACTIONS.get(ch, ()):
        _code_hitboxes(out, ch, action)
    return out


# Actions whose hitbox the game makes in code (gamedata code_hitboxes.csv) that the fight plays with it:
# Fox's firefox travel (libmelee recorded it on frames 1-29, at his body). The illusion's is left out:
# libmelee recorded it 37.44 units behind Fox (two frames of the dash) on frames 3-4 of the dash, and 21-39
# behind on frames 1-2 of the end, which hits along the path only with the game's frame-to-frame sweep of
# hitboxes, which the arena does not model; and whether the end's frames can hit a victim the dash hit is
# not known here.
CODE_HITBOX_ACTIONS = {Character.FOX: (356,)}


def _code_hitboxes(out: np.ndarray, ch: Character, action: int) -> None:
    """Fill ``out`` with the one hitbox ``action`` makes in code: its values from gamedata, on the frames and
    at the positions libmelee's framedata.csv recorded it. Hits grounded and airborne victims and deals no
    extra shield damage (guesses: the source gives neither)."""
    c = gd.code_hitbox_of(ch, action)
    for r in _framedata().get((ch.value, action), []):
        f = int(r["frame"])
        if f > MAX_FRAMES:
            continue
        for k in range(4):
            if r[f"hitbox_{k + 1}_status"] != "True":
                continue
            e = out[f, k]
            e[H.X], e[H.Y] = float(r[f"hitbox_{k + 1}_x"]), float(r[f"hitbox_{k + 1}_y"])
            e[H.RADIUS] = float(r[f"hitbox_{k + 1}_size"])
            e[H.DAMAGE], e[H.ANGLE], e[H.BASE_KB] = c.damage, c.angle, c.base_kb
            e[H.KB_GROWTH], e[H.SET_KB] = c.kb_growth, c.set_kb
            e[H.ELECTRIC], e[H.GRAB] = float(c.element == "electric"), float(c.element == "grab")
            e[H.GROUNDED] = e[H.AIRBORNE] = 1.0


# (slot, action id for Fox, action id for Marth): where each slot's data comes from (-1: none).
_SOURCES: dict[int, tuple[int, int]] = {
    Slot.JAB1: (44, 44), Slot.JAB2: (45, 45), Slot.JAB3: (48, -1), Slot.FTILT: (53, 53), Slot.UTILT: (56, 56),
    Slot.DTILT: (57, 57), Slot.FSMASH: (60, 60), Slot.USMASH: (63, 63), Slot.DSMASH: (64, 64),
    Slot.DASH_ATTACK: (50, 50), Slot.NAIR: (65, 65), Slot.FAIR: (66, 66), Slot.BAIR: (67, 67), Slot.UAIR: (68, 68),
    Slot.DAIR: (69, 69), Slot.GRAB: (212, 212), Slot.DASH_GRAB: (214, 214), Slot.GRAB_HOLD: (216, 216),
    Slot.PUMMEL: (217, 217), Slot.FTHROW: (219, 219), Slot.BTHROW: (220, 220), Slot.UTHROW: (221, 221),
    Slot.DTHROW: (222, 222), Slot.HELD: (227, 227),
    # Fox: shine start 360 (hitbox on frame 1), reflector loop 361; Marth: counter 369 (no counterattack).
    Slot.DOWN_B: (360, 369), Slot.DOWN_B_LOOP: (361, -1),
    # Fox: firefox charge (air) 354, travel 356; Marth: dolphin slash (air) 368.
    Slot.UP_B: (354, 368), Slot.UP_B_TRAVEL: (356, -1),
    # Fox: illusion start 350, dash 351, end 352 (air); Marth: dancing blade's first swing (air) 358.
    Slot.SIDE_B: (350, 358), Slot.SIDE_B_TRAVEL: (351, -1), Slot.SIDE_B_END: (352, -1),
    Slot.JUMPSQUAT: (24, 24), Slot.LANDING: (42, 42), Slot.LANDING_SPECIAL: (43, 43),
    Slot.SHIELD_RELEASE: (180, 180), Slot.SHIELD_BREAK: (209, 209), Slot.SPOT_DODGE: (235, 235),
    Slot.ROLL_FORWARD: (233, 233), Slot.ROLL_BACKWARD: (234, 234), Slot.AIRDODGE: (236, 236),
    Slot.LEDGE_HANG: (253, 253), Slot.LEDGE_GETUP: (255, 255),
}
_GAMEDATA_ACTION = {(Character.FOX, 354): 354, (Character.MARTH, 368): 368}  # (the dump's rows for these ids)


def _length(ch: Character, slot: int, action: int, attrs: gd.CharacterAttributes) -> int:
    """Frames until the fighter can act again."""
    if slot == Slot.JUMPSQUAT:
        return attrs.jumpsquat  # gamedata characters.csv
    if slot == Slot.LANDING:
        return attrs.normal_landing_lag  # gamedata characters.csv (4)
    fixed = {Slot.LANDING_SPECIAL: LANDING_SPECIAL_FRAMES, Slot.SHIELD_RELEASE: SHIELD_RELEASE_FRAMES,
             Slot.SHIELD_BREAK: SHIELD_BREAK_FRAMES, Slot.AIRDODGE: AIRDODGE_FRAMES,
             Slot.LEDGE_HANG: LEDGE_HANG_FRAMES, Slot.DOWN_B_LOOP: SHINE_LOOP_FRAMES,
             Slot.GRAB_HOLD: 9999, Slot.HELD: 9999}  # holds end by the grab timer (see hits.py)
    if slot in fixed:
        return fixed[slot]
    if ch == Character.MARTH and slot == Slot.DOWN_B:
        return MARTH_DOWN_B_FRAMES
    if slot in THROWS:
        return gd.throw(ch, action).first_actionable - 1  # throws.csv: first actionable frame
    m = gd.move(ch, action)
    if m is not None:
        # The dump's IASA (first interruptible frame) else the whole subaction.
        return (m.iasa - 1) if m.iasa else m.total_frames
    return _framedata_length(ch, action)  # rolls, spot dodge, getup, illusion, firefox travel


# The moves played standing on the ground (throws too: ``THROWS``).
_GROUND_MOVES = (Slot.JAB1, Slot.JAB2, Slot.JAB3, Slot.FTILT, Slot.UTILT, Slot.DTILT, Slot.FSMASH, Slot.USMASH,
                 Slot.DSMASH, Slot.DASH_ATTACK, Slot.GRAB, Slot.DASH_GRAB, Slot.GRAB_HOLD, Slot.PUMMEL,
                 Slot.SPOT_DODGE, Slot.ROLL_FORWARD, Slot.ROLL_BACKWARD, Slot.SHIELD_RELEASE, Slot.SHIELD_BREAK,
                 Slot.LANDING, Slot.LANDING_SPECIAL, Slot.LEDGE_GETUP)


def _fill_bursts(r: int, hit: np.ndarray, group: np.ndarray, first: np.ndarray, reach: np.ndarray) -> None:
    """Row ``r``'s hitbox bursts per frame (``group``), its first active frame and its reach, from ``hit[r]``."""
    L = hit.shape[1]
    live = hit[r, :, :, H.RADIUS].max(axis=1) > 0
    g = 0
    for f in range(1, L):  # a new burst of hitboxes after a frame without: hits again
        if live[f] and not live[f - 1]:
            g += 1
        group[r, f] = g if live[f] else 0
    if live.any():
        frames = np.flatnonzero(live)
        first[r] = frames.min()
        ext = (hit[r, :, :, H.X] + hit[r, :, :, H.RADIUS]) * (hit[r, :, :, H.RADIUS] > 0)
        reach[r] = float(ext.max())


def _chain_and_guard(col: int, ch: Character, chain: np.ndarray, chain_from: np.ndarray, il: np.ndarray,
                     ih: np.ndarray, helpless: np.ndarray) -> None:
    """One character's jab chains, intangible frames and the moves that end helpless."""
    # Jabs chain when A is pressed again from the frame libmelee saw the interruptible flag.
    for s0, s1 in ((Slot.JAB1, Slot.JAB2), (Slot.JAB2, Slot.JAB3)):
        if _SOURCES[s1][col] >= 0:
            m = gd.move(ch, _SOURCES[s0][col])
            chain[row(col, s0)] = row(col, s1)
            chain_from[row(col, s0)] = m.iasa_libmelee or m.total_frames  # gamedata iasa_libmelee
    for slot, (lo, hi) in INTANGIBLE[ch].items():
        il[row(col, slot)], ih[row(col, slot)] = lo, hi
    for s in (Slot.UP_B, Slot.SIDE_B_END):
        helpless[row(col, s)] = 1.0
    helpless[row(col, Slot.UP_B_TRAVEL)] = 1.0
    helpless[row(col, Slot.AIRDODGE)] = 1.0  # Melee: an air dodge ends in special fall


def _link_fox_specials(il: np.ndarray, ih: np.ndarray, end: np.ndarray, jc: np.ndarray, helpless: np.ndarray,
                       stall: np.ndarray, aimed: np.ndarray) -> None:
    """Fox's specials as chains of rows (shine, firefox, illusion), and both pummels back to the hold."""
    fox = lambda s: row(AGENT_COL, s)  # noqa: E731
    il[fox(Slot.DOWN_B)], ih[fox(Slot.DOWN_B)] = SHINE_INTANGIBLE
    end[fox(Slot.DOWN_B)] = fox(Slot.DOWN_B_LOOP)
    jc[fox(Slot.DOWN_B_LOOP)] = 1  # the loop's frame 1 is the shine's frame 4 (SHINE_JUMP_CANCEL)
    jc[fox(Slot.DOWN_B)] = SHINE_JUMP_CANCEL  # never reached (the start is 3 frames); kept for the record
    end[fox(Slot.UP_B)] = fox(Slot.UP_B_TRAVEL)
    helpless[fox(Slot.UP_B)] = 0.0  # the charge flows into the travel, which ends helpless
    end[fox(Slot.SIDE_B)] = fox(Slot.SIDE_B_TRAVEL)
    end[fox(Slot.SIDE_B_TRAVEL)] = fox(Slot.SIDE_B_END)
    end[fox(Slot.PUMMEL)] = fox(Slot.GRAB_HOLD)
    end[row(CPU_COL, Slot.PUMMEL)] = row(CPU_COL, Slot.GRAB_HOLD)
    for s in (Slot.UP_B, Slot.DOWN_B, Slot.DOWN_B_LOOP, Slot.SIDE_B, Slot.SIDE_B_TRAVEL):
        stall[fox(s)] = 1.0  # meleelight UPSPECIALCHARGE: vertical speed 0 while charging; shine and illusion stall (guess)
    # The firefox travel's speed per frame: libmelee recorded it straight up (locomotion_y 3.8 ... 1.3).
    aimed[fox(Slot.UP_B_TRAVEL)] = 1.0


def _player_layout(attrs_rows: list[gd.CharacterAttributes], device: torch.device | str,
                   num_envs: int | None) -> tuple[Attrs, torch.Tensor, torch.Tensor]:
    """The per-player constants on ``device``, each player's base column and the other player's row
    (``[B, 2]`` with ``num_envs``, else ``[1, 2]``)."""
    t = lambda x: torch.as_tensor(np.asarray(x), dtype=torch.float32, device=device)  # noqa: E731
    attrs = Attrs(*(t([getattr(a, f) if f in a._fields else MEASURED[a.character][f] for a in attrs_rows])
                    for f in Attrs._fields))
    col = torch.arange(2, device=device).view(1, 2)
    swap = (1 - col)
    if num_envs is not None:
        col = col.expand(num_envs, 2).contiguous()
        swap = (torch.arange(num_envs, device=device).view(-1, 1) * 2 + 1 - col).contiguous()
        attrs = Attrs(*(v[col].contiguous() for v in attrs))
    return attrs, col, swap


def build_table(device: torch.device | str = "cpu", num_envs: int | None = None) -> FightTable:
    """The table on ``device``; with ``num_envs`` the per-player constants are laid out ``[B, 2]`` (what a
    compiled frame reads fastest: one flat loop), else ``[2]`` / ``[1, 2]``."""
    R, L = 2 * NUM_SLOTS + 1, MAX_FRAMES + 1
    hit = np.zeros((R, L, 4, NUM_H), np.float32)
    group = np.zeros((R, L), np.float32)
    loco_x, loco_y = np.zeros((R, L), np.float32), np.zeros((R, L), np.float32)
    z = lambda v=0.0: np.full(R, v, np.float32)  # noqa: E731
    action, length, attack_id, landing, lcancel, ac_lo, ac_hi = z(), z(), z(), z(), z(), z(), z()
    il, ih, chain, chain_from, jc, end, helpless = z(), z(), z(-1), z(), z(), z(-1), z()
    aerial, ground, stall, aimed, release, attack = z(), z(), z(), z(), z(), z()
    throw = np.zeros((R, 5), np.float32)
    first, reach = z(999.0), z()
    attrs_rows = [gd.attributes(ch) for ch in CHARACTERS]
    for col, ch in enumerate(CHARACTERS):
        a = attrs_rows[col]
        for slot in range(NUM_SLOTS):
            r = row(col, slot)
            src = _SOURCES[slot][col]
            if src < 0:
                continue
            action[r] = src
            length[r] = _length(ch, slot, src, a)
            # A throw deals its damage by its throw command (throws.csv); Fox's forward throw's extra
            # hitbox (for bystanders) is left out.
            hit[r] = 0.0 if slot in THROWS else _hitboxes(ch, src)
            # The ledge's hang and getup are placed by hand (physics.py, fighter.py), not by their motion.
            if slot not in (Slot.LEDGE_HANG, Slot.LEDGE_GETUP):
                loco_x[r], loco_y[r] = _loco(ch, src)
            m = gd.move(ch, src)
            if m is not None:
                attack_id[r] = m.attack_id
                if slot in AERIALS:
                    landing[r], lcancel[r] = m.landing_lag, m.lcancel_landing_lag
                    ac_lo[r], ac_hi[r] = m.autocancel_before or 0, m.autocancel_after or 999
            elif src in CODE_HITBOX_ACTIONS.get(ch, ()):  # its hits stale and take KO credit under the move's id
                attack_id[r] = gd.code_hitbox_of(ch, src).attack_id
            if slot in THROWS:
                t = gd.throw(ch, src)
                attack_id[r], release[r] = t.attack_id, t.release_frame
                throw[r] = (t.damage, t.angle, t.base_kb, t.kb_growth, t.set_kb)
            _fill_bursts(r, hit, group, first, reach)
            attack[r] = float(slot in ATTACKS)
            aerial[r] = float(slot in AERIALS)
            ground[r] = float(slot in _GROUND_MOVES or slot in THROWS)
        _chain_and_guard(col, ch, chain, chain_from, il, ih, helpless)
    _link_fox_specials(il, ih, end, jc, helpless, stall, aimed)
    t = lambda x: torch.as_tensor(np.asarray(x), dtype=torch.float32, device=device)  # noqa: E731
    attrs, col, swap = _player_layout(attrs_rows, device, num_envs)
    return FightTable(
        hit=t(hit), group=t(group), loco_x=t(loco_x), loco_y=t(loco_y), action=t(action), length=t(length),
        attack_id=t(attack_id), landing_lag=t(landing), lcancel_lag=t(lcancel), ac_before=t(ac_lo),
        ac_after=t(ac_hi), intang_lo=t(il), intang_hi=t(ih), chain_row=t(chain), chain_from=t(chain_from),
        jc_from=t(jc), end_row=t(end), helpless_after=t(helpless), aerial=t(aerial), ground_move=t(ground),
        stall=t(stall), aimed=t(aimed), rises=t((np.abs(loco_y).sum(1) > 0) & (aimed == 0)),
        carries=t(np.abs(loco_x).sum(1) > 0), release=t(release), throw=t(throw), first_active=t(first), reach=t(reach),
        attack=t(attack), weight=attrs.weight, attrs=attrs,
        hitf=t(hit).permute(3, 2, 0, 1).contiguous(), base=col * NUM_SLOTS, swap=swap,
        stages=StageTable.of(DEFAULT_STAGE, device))
