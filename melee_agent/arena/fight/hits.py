"""Hits: each fighter's hitboxes against the other's hurtbox, then knockback, hitlag, shields and grabs.

Per frame and attacker, the four hitbox slots of its move's frame are tested against the victim's
hurtbox, and the lowest slot id that touches wins (the game's rule). A move hits a victim once per
*burst* of hitboxes (``FightTable.group``): multi-hit moves (Fox's drill, his fair, the firefox's
flames, Marth's two-part dsmash and nair) hit again when a new burst starts.

A hit (formulas in :mod:`melee_agent.arena.knockback`, each with its source): damage staled by the
attacker's 9-move queue; knockback from the unstaled damage and the victim's weight (the set-knockback
branch where the hitbox has one); hitlag ``floor(d/3 + 3)`` for both, x1.5 for the victim of an
electric hit (the shine); hitstun ``floor(0.4 KB)``; tumble from 80; the Sakurai angle; the launch
(0.03 x KB, decaying 0.051 per frame) starts when hitlag ends, turned by the victim's stick at that
moment (DI). A shielding victim takes shield damage (the hit's damage plus the hitbox's shield
damage), shieldstun and pushback (meleelight's full-press formulas) and its shield breaks at 0.
Grab hitboxes grab (through shields); the holder pummels (damage only) or throws (the throw
command's damage and knockback, released on its frame from ``throws.csv``; a throw's knockback takes
the weight as 100, ``THROW_WEIGHT``, whoever is thrown).

Guesses (marked where used): the hurtbox is one vertical capsule per fighter (the game's per-bone
hurt capsules are not in the data), the grab's hold time, where the held fighter is, the shield's
value after a break, no ground bounce for downward launches of 80 or more (below 80 the victim staying
on the ground is the game's).
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from melee.enums import Action
from torch import Tensor

from melee_agent.arena.env_state import PlayerState
from melee_agent.arena.fight.fighter import STANDING, rows_of, set_free, slot_row, start
from melee_agent.arena.fight.moves import FightTable, H, Slot, THROWS, other
from melee_agent.arena.fight.state import FightState, Pad
from melee_agent.arena.knockback import (STALE_WEIGHTS, THROW_WEIGHT, di_angle, hitlag, hitstun, knockback, knockback_percent,
                                         launch_angle, launch_velocity, push_stale, tumbles)

BODY_RADIUS = 3.5  # guess (as the dodging arena): the hurt capsule's radius; its height is libmelee's body size
HOLD_OFFSET = 10.0  # guess: the held fighter's distance in front of the holder
GRAB_BASE, GRAB_PER_PERCENT = 90.0, 1.7  # guess (after SmashWiki "Grab", not checked): hold frames 90 + 1.7 x percent
RELEASE_PUSH = 10.0  # guess: how far apart a grab release puts the two fighters
SHIELD_AFTER_BREAK = 30.0  # guess (as the dodging arena: half a shield)
SHIELDSTUN_PER_DAMAGE, SHIELDSTUN_BASE = 0.45, 2.0  # meleelight hitDetection.js: floor(d) x 0.45 + 2 at full press
SHIELD_PUSH_PER_DAMAGE, SHIELD_PUSH_BASE, SHIELD_PUSH_SCALE, SHIELD_PUSH_MAX = 0.09, 0.4, 0.6, 2.0  # meleelight


class HitResult(NamedTuple):
    """The fighters after this frame's hits and the damage each took, ``[B, 2]``."""

    players: PlayerState
    fight: FightState
    damage: Tensor


def intangible(ps: PlayerState, T: FightTable) -> Tensor:
    """``[B, 2]``: inside an intangibility window of the current move, or respawn-invulnerable."""
    r = rows_of(ps.move)
    lo, hi = T.intang_lo[r], T.intang_hi[r]
    return ((lo > 0) & (ps.action_frame >= lo) & (ps.action_frame <= hi)) | (ps.invulnerability_left > 0)


def stale_factor(queue: Tensor, attack_id: Tensor) -> Tensor:
    """:func:`melee_agent.arena.knockback.stale_factor` unrolled over the 9 queue slots (no reduction: a
    compiled frame keeps one loop)."""
    f = torch.ones_like(attack_id)
    for i, w in enumerate(STALE_WEIGHTS):
        f = f - torch.where((queue[..., i] == attack_id) & (attack_id > 1), w, 0.0)
    return f


class Touch(NamedTuple):
    """The lowest-id hitbox of the attacker that touches each victim, ``[B, 2]`` each."""

    any: Tensor
    damage: Tensor
    angle: Tensor
    base_kb: Tensor
    kb_growth: Tensor
    set_kb: Tensor
    electric: Tensor
    grab: Tensor
    shield_damage: Tensor


_TOUCH_FIELDS = (H.DAMAGE, H.ANGLE, H.BASE_KB, H.KB_GROWTH, H.SET_KB, H.ELECTRIC, H.GRAB, H.SHIELD_DAMAGE)


def _touching(ps: PlayerState, T: FightTable, r_att: Tensor, af_att: Tensor, held_by_att: Tensor) -> Touch:
    """Whether the attacker's hitboxes touch each victim's hurt capsule, and the values of the lowest slot that does."""
    ax, ay, face = other(ps.position_x, T), other(ps.position_y, T), other(ps.facing, T)
    vx, vy = ps.position_x, ps.position_y
    top = vy + T.attrs.height
    grounded = ps.on_ground > 0
    touch = torch.zeros_like(held_by_att)
    vals = [torch.zeros_like(vx) for _ in _TOUCH_FIELDS]
    field = lambda h, k: T.hitf[h, k][r_att, af_att]  # noqa: E731  one [B, 2] field of slot k
    for k in (3, 2, 1, 0):  # the lowest id that touches wins: it is written last
        cx = ax + face * field(H.X, k)
        cy = ay + field(H.Y, k)
        dy = cy - torch.minimum(torch.maximum(cy, vy), top)
        dx = cx - vx
        r = field(H.RADIUS, k)
        anywhere = field(H.ANYWHERE, k) > 0
        near = torch.where(anywhere, held_by_att, (dx * dx + dy * dy) <= (r + BODY_RADIUS) ** 2)
        t = (r > 0) & near & torch.where(grounded, field(H.GROUNDED, k) > 0, field(H.AIRBORNE, k) > 0)
        touch = touch | t
        vals = [torch.where(t, field(h, k), v) for h, v in zip(_TOUCH_FIELDS, vals)]
    return Touch(touch, *vals)


def resolve(ps: PlayerState, fs: FightState, T: FightTable, frozen: Tensor, perfect_shield_frames: int = 0) -> HitResult:
    """This frame's hits of each fighter on the other (the attacker of column p is column 1 - p).

    ``perfect_shield_frames``: a hit on a shield's first that many frames is a perfect shield (powershield):
    no shield damage (SmashWiki "Perfect shield"); shieldstun and pushback as any shield hit (guess). 0: none.
    """
    r = rows_of(ps.move)
    af = ps.action_frame.long().clamp(max=T.hit.shape[1] - 1)
    r_att, af_att = other(r, T), other(af, T)
    held = r == slot_row(T, Slot.HELD)
    holder_rows = (r == slot_row(T, Slot.GRAB_HOLD)) | (r == slot_row(T, Slot.PUMMEL))
    for s in THROWS:
        holder_rows = holder_rows | (r == slot_row(T, s))
    held_by_att = held & other(holder_rows, T)
    group = T.group[r_att, af_att]
    fresh = (group > other(ps.hit_done, T)) & (other(ps.move, T) >= 0) & ~other(frozen, T) & ~frozen
    e = _touching(ps, T, r_att, af_att, held_by_att)
    hit = e.any & fresh & ~intangible(ps, T)
    is_grab = e.grab > 0
    grab = hit & is_grab & ~held & ~holder_rows
    blow = hit & ~is_grab & (~held | held_by_att)
    shielding = (ps.action == float(Action.SHIELD.value)) & (ps.move < 0)
    on_shield = blow & shielding
    body = blow & ~shielding
    pummel = body & held_by_att
    launch = body & ~pummel
    dmg = e.damage
    att_face = other(ps.facing, T)
    # --- damage, knockback, hitlag, hitstun (a body hit) ---
    aid = T.attack_id[r_att]
    staled = dmg * stale_factor(other(fs.stale, T), aid)
    kb = knockback(knockback_percent(ps.percent, staled), dmg, T.weight, e.kb_growth,
                   e.base_kb, e.set_kb)
    grounded = ps.on_ground > 0
    angle = launch_angle(e.angle, kb, grounded)
    lag = hitlag(dmg, e.electric > 0, torch.zeros_like(body))
    attacker_lag = hitlag(dmg, torch.zeros_like(body), torch.zeros_like(body))
    stun = hitstun(kb)
    tumble = tumbles(kb)
    hurt_act = torch.where(tumble, float(Action.DAMAGE_FLY_NEUTRAL.value),
                           torch.where(grounded, float(Action.DAMAGE_HIGH_1.value), float(Action.DAMAGE_AIR_1.value)))
    face_att = torch.sign(other(ps.position_x, T) - ps.position_x)
    ps = set_free(ps, launch, hurt_act)
    ps = ps._replace(
        percent=torch.where(body, ps.percent + staled, ps.percent),
        hitstun_frames_left=torch.where(launch, stun, ps.hitstun_frames_left),
        speed_x=torch.where(launch, 0.0, ps.speed_x), speed_y=torch.where(launch, 0.0, ps.speed_y),
        speed_x_attack=torch.where(launch, 0.0, ps.speed_x_attack),
        speed_y_attack=torch.where(launch, 0.0, ps.speed_y_attack),
        fast_falling=torch.where(launch, 0.0, ps.fast_falling),
        facing=torch.where(launch & (face_att != 0), face_att, ps.facing))
    fs = fs._replace(ko_credit=torch.where(body, aid, fs.ko_credit),
                     launch_kb=torch.where(launch, kb, fs.launch_kb),
                     launch_angle=torch.where(launch, angle, fs.launch_angle),
                     launch_dir=torch.where(launch, att_face, fs.launch_dir),
                     helpless=torch.where(launch, 0.0, fs.helpless))
    # --- shield hits: shield damage, shieldstun, pushback (meleelight hitDetection.js, full press) ---
    shield_dmg = dmg + e.shield_damage
    if perfect_shield_frames > 0:
        shield_dmg = torch.where(ps.action_frame <= perfect_shield_frames, 0.0, shield_dmg)
    strength = torch.where(on_shield, ps.shield_strength - shield_dmg, ps.shield_strength)
    broke = on_shield & (strength <= 0)
    sstun = torch.floor(torch.floor(dmg) * SHIELDSTUN_PER_DAMAGE + SHIELDSTUN_BASE)
    push = torch.clamp((torch.floor(dmg) * SHIELD_PUSH_PER_DAMAGE + SHIELD_PUSH_BASE) * SHIELD_PUSH_SCALE,
                       max=SHIELD_PUSH_MAX)
    ps = ps._replace(shield_strength=torch.where(broke, SHIELD_AFTER_BREAK, strength),
                     hitstun_frames_left=torch.where(on_shield & ~broke, sstun, ps.hitstun_frames_left),
                     speed_x=torch.where(on_shield, -face_att * push, ps.speed_x))
    ps = start(ps, broke, slot_row(T, Slot.SHIELD_BREAK), T)
    # --- hitlag for both (body and shield hits) ---
    landed = body | on_shield
    new_lag = torch.maximum(torch.where(landed, lag, 0.0), torch.where(other(landed, T), other(attacker_lag, T), 0.0))
    fs = fs._replace(hitlag_left=torch.where(landed | other(landed, T), new_lag, fs.hitlag_left))
    # --- the attacker's side: this burst is spent on the victim; hits enter the stale queue ---
    spent = other(landed | grab, T)
    ps = ps._replace(hit_done=torch.where(spent, other(group, T), ps.hit_done))
    fs = fs._replace(stale=push_stale(fs.stale, other(aid, T), other(body, T)))
    # --- grabs ---
    ps = start(ps, grab, slot_row(T, Slot.HELD), T)
    ps = start(ps, other(grab, T), slot_row(T, Slot.GRAB_HOLD), T)
    hold = torch.floor(GRAB_BASE + GRAB_PER_PERCENT * ps.percent)
    fs = fs._replace(grab_left=torch.where(other(grab, T), other(hold, T), fs.grab_left))
    ps = ps._replace(hitstun_frames_left=torch.where(grab, 0.0, ps.hitstun_frames_left),
                     speed_x_attack=torch.where(grab, 0.0, ps.speed_x_attack),
                     speed_y_attack=torch.where(grab, 0.0, ps.speed_y_attack))
    fs = fs._replace(launch_kb=torch.where(grab, 0.0, fs.launch_kb))
    ps, fs, thrown = _throws(ps, fs, T)
    ps = _grab_links(ps, fs, T)
    return HitResult(ps, fs, torch.where(body, staled, 0.0) + thrown)


def _throws(ps: PlayerState, fs: FightState, T: FightTable) -> tuple[PlayerState, FightState, Tensor]:
    """A throw releases the held fighter on its release frame with the throw command's damage and knockback."""
    r = rows_of(ps.move)
    r_att = other(r, T)
    held = r == slot_row(T, Slot.HELD)
    rel = T.release[r_att]
    go = held & (rel > 0) & (other(ps.action_frame, T) == rel)
    dmg, ang, bkb, kbg, skb = (T.throw[:, i][r_att] for i in range(5))  # throws.csv columns
    aid = T.attack_id[r_att]
    staled = dmg * stale_factor(other(fs.stale, T), aid)
    kb = knockback(knockback_percent(ps.percent, staled), dmg, THROW_WEIGHT, kbg, bkb, skb)
    angle = launch_angle(ang, kb, ps.on_ground > 0)
    act = torch.where(tumbles(kb), float(Action.DAMAGE_FLY_NEUTRAL.value), float(Action.DAMAGE_AIR_1.value))
    ps = set_free(ps, go, act)
    ps = ps._replace(percent=torch.where(go, ps.percent + staled, ps.percent),
                     hitstun_frames_left=torch.where(go, hitstun(kb), ps.hitstun_frames_left))
    # The launch starts at once, with the victim's DI: a throw has no hitlag (real replays: on the frame a
    # throw's damage shows, its launch has already decayed one frame; 16 of 16 throws, docs/fidelity.md).
    fs = fs._replace(launch_kb=torch.where(go, kb, fs.launch_kb), launch_angle=torch.where(go, angle, fs.launch_angle),
                     launch_dir=torch.where(go, other(ps.facing, T), fs.launch_dir),
                     ko_credit=torch.where(go, aid, fs.ko_credit),
                     stale=push_stale(fs.stale, other(aid, T), other(go, T)))
    # The thrown fighter shows its thrown action meanwhile (libmelee THROWN_FORWARD ... THROWN_DOWN).
    base = other(slot_row(T, 0), T)
    thrown_act = ps.action
    for i, s in enumerate(THROWS):
        thrown_act = torch.where(held & (r_att == base + int(s)), float(Action.THROWN_FORWARD.value + i), thrown_act)
    ps = ps._replace(action=thrown_act)
    return ps, fs, torch.where(go, staled, 0.0)


def _grab_links(ps: PlayerState, fs: FightState, T: FightTable) -> PlayerState:
    """Keep the held fighter in front of the holder; end holds whose time ran out or whose holder let go."""
    r = rows_of(ps.move)
    held = r == slot_row(T, Slot.HELD)
    holder = (r == slot_row(T, Slot.GRAB_HOLD)) | (r == slot_row(T, Slot.PUMMEL))
    for s in THROWS:
        holder = holder | (r == slot_row(T, s))
    expired = (r == slot_row(T, Slot.GRAB_HOLD)) & (fs.grab_left <= 0)
    orphan = held & ~other(holder, T)
    release = expired | other(expired, T) & held
    ps = set_free(ps, release | orphan, STANDING)
    # Released: apart by RELEASE_PUSH (guess), the held one moved away from the holder.
    away = torch.sign(ps.position_x - other(ps.position_x, T))
    ps = ps._replace(position_x=torch.where(other(expired, T) & held, ps.position_x + away * RELEASE_PUSH,
                                            ps.position_x))
    still = held & ~orphan & ~other(expired, T)
    hx = other(ps.position_x, T) + other(ps.facing, T) * HOLD_OFFSET
    return ps._replace(position_x=torch.where(still, hx, ps.position_x),
                       position_y=torch.where(still, other(ps.position_y, T), ps.position_y),
                       on_ground=torch.where(still, other(ps.on_ground, T), ps.on_ground),
                       facing=torch.where(still, -other(ps.facing, T), ps.facing),
                       speed_x=torch.where(still, 0.0, ps.speed_x), speed_y=torch.where(still, 0.0, ps.speed_y))


def apply_launch(ps: PlayerState, fs: FightState, pad: Pad) -> tuple[PlayerState, FightState]:
    """Launches whose hitlag is over start now, turned by the victim's stick (DI, SmashWiki)."""
    go = (fs.launch_kb > 0) & (fs.hitlag_left <= 0)
    angle = di_angle(fs.launch_angle, pad.sx * fs.launch_dir, pad.sy)
    vx, vy = launch_velocity(fs.launch_kb, angle, fs.launch_dir)
    ground = ps.on_ground > 0
    # A grounded victim sent down slides along the ground: the game's below tumble (80) (ikneedata
    # calculatormaths.js "Stay"; replays: Fox's drill on a standing Peach keeps its horizontal 0.427 of
    # 1.247); from 80 the game bounces it off the ground ("Fly"), which is not modelled (guess).
    vy = torch.where(ground & (vy < 0), 0.0, vy)
    up = go & (vy > 0)
    ps = ps._replace(speed_x_attack=torch.where(go, vx, ps.speed_x_attack),
                     speed_y_attack=torch.where(go, vy, ps.speed_y_attack),
                     on_ground=torch.where(up, 0.0, ps.on_ground),
                     # Leaving the ground other than by jumping leaves only the double jump (Melee).
                     jumps_left=torch.where(up & ground, ps.jumps_left.clamp(max=1.0), ps.jumps_left),
                     position_y=torch.where(up & ground, ps.position_y + 0.01, ps.position_y))
    return ps, fs._replace(launch_kb=torch.where(go, 0.0, fs.launch_kb))
