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
command's damage and knockback, released on its frame from ``throws.csv``).

Guesses (marked where used): the hurtbox is one vertical capsule per fighter (the game's per-bone
hurt capsules are not in the data), the grab's hold time, where the held fighter is, the shield's
value after a break, no ground bounce for downward launches.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from melee.enums import Action
from torch import Tensor

from melee_agent.arena.env_state import PlayerState
from melee_agent.arena.fight.fighter import STANDING, rows_of, set_free, slot_row, start
from melee_agent.arena.fight.moves import NUM_H, FightTable, H, Slot, THROWS
from melee_agent.arena.fight.state import FightState, Pad
from melee_agent.arena.knockback import (di_angle, hitlag, hitstun, knockback, knockback_percent, launch_angle,
                                         launch_velocity, push_stale, stale_factor, tumbles)

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


def _touching(ps: PlayerState, T: FightTable, r_att: Tensor, af_att: Tensor, held_by_att: Tensor) -> tuple[Tensor, Tensor]:
    """Whether the attacker's hitboxes touch each victim, and the entry of the lowest slot that does."""
    ax, ay, face = ps.position_x.flip(1), ps.position_y.flip(1), ps.facing.flip(1)
    vx, vy = ps.position_x, ps.position_y
    top = vy + T.attrs.height
    grounded = ps.on_ground > 0
    touch = torch.zeros_like(held_by_att)
    entry = torch.zeros(*ps.move.shape, NUM_H, device=ps.move.device)
    for k in (3, 2, 1, 0):  # the lowest id that touches wins: it is written last
        e = T.hit[r_att, af_att, k]  # [B, 2, NUM_H]
        cx = ax + face * e[..., H.X]
        cy = ay + e[..., H.Y]
        dy = cy - torch.minimum(torch.maximum(cy, vy), top)
        dx = cx - vx
        r = e[..., H.RADIUS]
        near = ((dx * dx + dy * dy) <= (r + BODY_RADIUS) ** 2) & (e[..., H.ANYWHERE] == 0)
        near = near | ((e[..., H.ANYWHERE] > 0) & held_by_att)
        t = (r > 0) & near & torch.where(grounded, e[..., H.GROUNDED] > 0, e[..., H.AIRBORNE] > 0)
        touch = touch | t
        entry = torch.where(t.unsqueeze(-1), e, entry)
    return touch, entry


def resolve(ps: PlayerState, fs: FightState, T: FightTable, frozen: Tensor) -> HitResult:
    """This frame's hits of each fighter on the other (the attacker of column p is column 1 - p)."""
    r = rows_of(ps.move)
    af = ps.action_frame.long().clamp(max=T.hit.shape[1] - 1)
    r_att, af_att = r.flip(1), af.flip(1)
    held = r == slot_row(ps, Slot.HELD)
    holder_rows = (r == slot_row(ps, Slot.GRAB_HOLD)) | (r == slot_row(ps, Slot.PUMMEL))
    for s in THROWS:
        holder_rows = holder_rows | (r == slot_row(ps, s))
    held_by_att = held & holder_rows.flip(1)
    group = T.group[r_att, af_att]
    fresh = (group > ps.hit_done.flip(1)) & (ps.move.flip(1) >= 0) & ~frozen.flip(1) & ~frozen
    touch, e = _touching(ps, T, r_att, af_att, held_by_att)
    hit = touch & fresh & ~intangible(ps, T)
    is_grab = e[..., H.GRAB] > 0
    grab = hit & is_grab & ~held & ~holder_rows
    blow = hit & ~is_grab & (~held | held_by_att)
    shielding = (ps.action == float(Action.SHIELD.value)) & (ps.move < 0)
    on_shield = blow & shielding
    body = blow & ~shielding
    pummel = body & held_by_att
    launch = body & ~pummel
    dmg = e[..., H.DAMAGE]
    att_face = ps.facing.flip(1)
    # --- damage, knockback, hitlag, hitstun (a body hit) ---
    aid = T.attack_id[r_att]
    staled = dmg * stale_factor(fs.stale.flip(1), aid)
    kb = knockback(knockback_percent(ps.percent, staled), dmg, T.weight.view(1, 2), e[..., H.KB_GROWTH],
                   e[..., H.BASE_KB], e[..., H.SET_KB])
    grounded = ps.on_ground > 0
    angle = launch_angle(e[..., H.ANGLE], kb, grounded)
    lag = hitlag(dmg, e[..., H.ELECTRIC] > 0, torch.zeros_like(body))
    attacker_lag = hitlag(dmg, torch.zeros_like(body), torch.zeros_like(body))
    stun = hitstun(kb)
    tumble = tumbles(kb)
    hurt_act = torch.where(tumble, float(Action.DAMAGE_FLY_NEUTRAL.value),
                           torch.where(grounded, float(Action.DAMAGE_HIGH_1.value), float(Action.DAMAGE_AIR_1.value)))
    face_att = torch.sign(ps.position_x.flip(1) - ps.position_x)
    ps = set_free(ps, launch, hurt_act)
    ps = ps._replace(
        percent=torch.where(body, ps.percent + staled, ps.percent),
        hitstun_frames_left=torch.where(launch, stun, ps.hitstun_frames_left),
        speed_x=torch.where(launch, 0.0, ps.speed_x), speed_y=torch.where(launch, 0.0, ps.speed_y),
        speed_x_attack=torch.where(launch, 0.0, ps.speed_x_attack),
        speed_y_attack=torch.where(launch, 0.0, ps.speed_y_attack),
        fast_falling=torch.where(launch, 0.0, ps.fast_falling),
        facing=torch.where(launch & (face_att != 0), face_att, ps.facing))
    fs = fs._replace(launch_kb=torch.where(launch, kb, fs.launch_kb),
                     launch_angle=torch.where(launch, angle, fs.launch_angle),
                     launch_dir=torch.where(launch, att_face, fs.launch_dir),
                     helpless=torch.where(launch, 0.0, fs.helpless))
    # --- shield hits: shield damage, shieldstun, pushback (meleelight hitDetection.js, full press) ---
    shield_dmg = dmg + e[..., H.SHIELD_DAMAGE]
    strength = torch.where(on_shield, ps.shield_strength - shield_dmg, ps.shield_strength)
    broke = on_shield & (strength <= 0)
    sstun = torch.floor(torch.floor(dmg) * SHIELDSTUN_PER_DAMAGE + SHIELDSTUN_BASE)
    push = torch.clamp((torch.floor(dmg) * SHIELD_PUSH_PER_DAMAGE + SHIELD_PUSH_BASE) * SHIELD_PUSH_SCALE,
                       max=SHIELD_PUSH_MAX)
    ps = ps._replace(shield_strength=torch.where(broke, SHIELD_AFTER_BREAK, strength),
                     hitstun_frames_left=torch.where(on_shield & ~broke, sstun, ps.hitstun_frames_left),
                     speed_x=torch.where(on_shield, -face_att * push, ps.speed_x))
    ps = start(ps, broke, slot_row(ps, Slot.SHIELD_BREAK), T)
    # --- hitlag for both (body and shield hits) ---
    landed = body | on_shield
    new_lag = torch.maximum(torch.where(landed, lag, 0.0), torch.where(landed.flip(1), attacker_lag.flip(1), 0.0))
    fs = fs._replace(hitlag_left=torch.where(landed | landed.flip(1), new_lag, fs.hitlag_left))
    # --- the attacker's side: this burst is spent on the victim; hits enter the stale queue ---
    spent = (landed | grab).flip(1)
    ps = ps._replace(hit_done=torch.where(spent, group.flip(1), ps.hit_done))
    fs = fs._replace(stale=push_stale(fs.stale, aid.flip(1), body.flip(1)))
    # --- grabs ---
    ps = start(ps, grab, slot_row(ps, Slot.HELD), T)
    ps = start(ps, grab.flip(1), slot_row(ps, Slot.GRAB_HOLD), T)
    hold = torch.floor(GRAB_BASE + GRAB_PER_PERCENT * ps.percent)
    fs = fs._replace(grab_left=torch.where(grab.flip(1), hold.flip(1), fs.grab_left))
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
    r_att = r.flip(1)
    held = r == slot_row(ps, Slot.HELD)
    rel = T.release[r_att]
    go = held & (rel > 0) & (ps.action_frame.flip(1) == rel)
    th = T.throw[r_att]  # [B, 2, 5]: damage, angle, base kb, kb growth, set kb
    aid = T.attack_id[r_att]
    staled = th[..., 0] * stale_factor(fs.stale.flip(1), aid)
    kb = knockback(knockback_percent(ps.percent, staled), th[..., 0], T.weight.view(1, 2), th[..., 3], th[..., 2],
                   th[..., 4])
    angle = launch_angle(th[..., 1], kb, ps.on_ground > 0)
    act = torch.where(tumbles(kb), float(Action.DAMAGE_FLY_NEUTRAL.value), float(Action.DAMAGE_AIR_1.value))
    ps = set_free(ps, go, act)
    ps = ps._replace(percent=torch.where(go, ps.percent + staled, ps.percent),
                     hitstun_frames_left=torch.where(go, hitstun(kb), ps.hitstun_frames_left))
    # The launch starts at once (no hitlag for a throw: guess), with the victim's DI.
    fs = fs._replace(launch_kb=torch.where(go, kb, fs.launch_kb), launch_angle=torch.where(go, angle, fs.launch_angle),
                     launch_dir=torch.where(go, ps.facing.flip(1), fs.launch_dir),
                     stale=push_stale(fs.stale, aid.flip(1), go.flip(1)))
    # The thrown fighter shows its thrown action meanwhile (libmelee THROWN_FORWARD ... THROWN_DOWN).
    base = slot_row(ps, 0).flip(1)
    thrown_act = ps.action
    for i, s in enumerate(THROWS):
        thrown_act = torch.where(held & (r_att == base + int(s)), float(Action.THROWN_FORWARD.value + i), thrown_act)
    ps = ps._replace(action=thrown_act)
    return ps, fs, torch.where(go, staled, 0.0)


def _grab_links(ps: PlayerState, fs: FightState, T: FightTable) -> PlayerState:
    """Keep the held fighter in front of the holder; end holds whose time ran out or whose holder let go."""
    r = rows_of(ps.move)
    held = r == slot_row(ps, Slot.HELD)
    holder = (r == slot_row(ps, Slot.GRAB_HOLD)) | (r == slot_row(ps, Slot.PUMMEL))
    for s in THROWS:
        holder = holder | (r == slot_row(ps, s))
    expired = (r == slot_row(ps, Slot.GRAB_HOLD)) & (fs.grab_left <= 0)
    orphan = held & ~holder.flip(1)
    release = expired | expired.flip(1) & held
    ps = set_free(ps, release | orphan, STANDING)
    # Released: apart by RELEASE_PUSH (guess), the held one moved away from the holder.
    away = torch.sign(ps.position_x - ps.position_x.flip(1))
    ps = ps._replace(position_x=torch.where(expired.flip(1) & held, ps.position_x + away * RELEASE_PUSH,
                                            ps.position_x))
    still = held & ~orphan & ~expired.flip(1)
    hx = ps.position_x.flip(1) + ps.facing.flip(1) * HOLD_OFFSET
    return ps._replace(position_x=torch.where(still, hx, ps.position_x),
                       position_y=torch.where(still, ps.position_y.flip(1), ps.position_y),
                       on_ground=torch.where(still, ps.on_ground.flip(1), ps.on_ground),
                       facing=torch.where(still, -ps.facing.flip(1), ps.facing),
                       speed_x=torch.where(still, 0.0, ps.speed_x), speed_y=torch.where(still, 0.0, ps.speed_y))


def apply_launch(ps: PlayerState, fs: FightState, pad: Pad) -> tuple[PlayerState, FightState]:
    """Launches whose hitlag is over start now, turned by the victim's stick (DI, SmashWiki)."""
    go = (fs.launch_kb > 0) & (fs.hitlag_left <= 0)
    angle = di_angle(fs.launch_angle, pad.sx * fs.launch_dir, pad.sy)
    vx, vy = launch_velocity(fs.launch_kb, angle, fs.launch_dir)
    ground = ps.on_ground > 0
    vy = torch.where(ground & (vy < 0), 0.0, vy)  # guess: no ground bounce; a downward launch slides
    up = go & (vy > 0)
    ps = ps._replace(speed_x_attack=torch.where(go, vx, ps.speed_x_attack),
                     speed_y_attack=torch.where(go, vy, ps.speed_y_attack),
                     on_ground=torch.where(up, 0.0, ps.on_ground),
                     position_y=torch.where(up & ground, ps.position_y + 0.01, ps.position_y))
    return ps, fs._replace(launch_kb=torch.where(go, 0.0, fs.launch_kb))
