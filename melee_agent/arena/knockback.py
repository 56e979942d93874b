"""Melee's hit formulas as pure, elementwise torch functions (any shape, any device, no host syncs).

Every function takes tensors (Python numbers broadcast as usual) and returns tensors, so a compiled
step can fuse them and a one-element float tensor works as well as a [B, 2] one. Every constant has
its source beside it; a value marked *guess* could not be checked against a source.

Sources:

* SmashWiki "Knockback", Melee section (Achilles' reading of the game's code): knockback =
  ``(0.01 g) (1.4 ((0.05 u (s + floor(v))) + (s + floor(v)) 0.1) (2 - 2 W / (1 + W)) + 18) + b`` with
  u the unstaled damage, s the staled damage, v the victim's percent before the hit, W = weight/100;
  since 2 - 2W/(1+W) = 200/(w+100) this is the familiar ``((p/10 + p d/20) 200/(w+100) 1.4 + 18)
  g/100 + b`` with p = floor(v) + s (the percent after the hit) and d = u (unstaled). Capped at 2500.
  Set knockback: "d is set to that value, and p is always 10". Launch speed 0.03 x knockback,
  decaying by 0.051 per frame.
* SmashWiki "Stale-move negation": Melee's queue of the last 9 moves that connected (not shield
  hits), reductions 0.09, 0.08, ..., 0.01 by queue position, knockback in Melee uses the unstaled
  damage for non-projectiles; later hits of one multi-hit move see the staleness their own first hit
  added.
* SmashWiki "Sakurai angle": Melee 0 degrees on grounded victims below 32 knockback, 44 from 32.1
  up (linear in between), 45 on airborne victims.
* SmashWiki "Hitstun": floor(0.4 x knockback); "Tumble": knockback >= 80 tumbles (SmashWiki
  "Sakurai angle": "attacks will begin to induce tumble when the knockback is 80 or higher").
* Throws: I KneeData's knockback calculator (schmooblidon/ikneedata ``calculatormaths.js``,
  ``getKnockback``: ``if (isThrow){ weight = 100; }``) computes a throw's knockback as if the thrown
  fighter weighed 100, whatever its weight (the weight only sets a weight-dependent throw's animation
  speed). Real replays agree: in slippi-js's ``rollbackFrameTest.slp`` and ``throwGrab.slp`` and
  peppi's ``v3.16.slp``, 16 throws by Fox and Marth on Fox, Falco and Marth launch at 0.03 x the
  weight-100 knockback less one frame's decay, every one to 0.001; with the thrown fighter's own
  weight, Marth's up throws on Fox (75) would be 1.5-6% too fast.
* Smash attack charge (Melee): a fully charged smash attack deals 1.3671x damage (KuroganeHammer,
  Smashboards "Smash Attack Charge Multiplier"), rising linearly over the 60 frames of charge; the
  knockback's d is the charged damage floored (reddit "Melee mechanics of charging smash attacks").
  Replays agree: Fox's up smash (18%) held 3 and 6 frames dealt 18.33 and 18.66.
* SmashWiki "Directional influence" (Melee): up to about 18 degrees for a stick perpendicular to the
  launch, none parallel to it.
* SmashWiki "Crouch cancel" (Melee): knockback x 2/3 while crouching.
* Hitlag: floor(floor(3 + d/3) x e) x c with e = 1.5 for electric hitboxes on the victim and c = 2/3
  when crouch cancelling, as pfirsich's melee-framedata ``generateWebsite.py`` computes it (after a
  reddit thread, "formula for hitlag in Melee").

Example::

    >>> import torch
    >>> kb = knockback(torch.tensor(18.0), torch.tensor(18.0), 75.0, 112.0, 30.0, 0.0)  # Fox usmash, Fox at 0%
    >>> round(float(kb), 3), int(hitstun(kb)), round(float(launch_speed(kb)), 4)
    (82.416, 32, 2.4725)
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

# --- constants (sources in the module docstring) ---
LAUNCH_SPEED_PER_KB = 0.03  # SmashWiki Knockback: launch speed = 0.03 x knockback
LAUNCH_DECAY = 0.051  # SmashWiki Knockback: launch speed falls by 0.051 per frame
HITSTUN_PER_KB = 0.4  # SmashWiki Hitstun: floor(0.4 x knockback)
KNOCKBACK_CAP = 2500.0  # SmashWiki Knockback (Melee): "If Knockback > 2500, then Knockback = 2500"
SMASH_CHARGE_MAX = 1.3671  # Smashboards (KuroganeHammer): a full charge's damage multiplier in Melee
SMASH_CHARGE_FRAMES = 60  # frames to a full charge (the multiplier rises linearly over them)
THROW_WEIGHT = 100.0  # ikneedata calculatormaths.js getKnockback: a throw's knockback uses weight 100
SET_KB_PERCENT = 10.0  # SmashWiki Knockback: with set knockback "p is always 10"
TUMBLE_KB = 80.0  # SmashWiki Sakurai angle: tumble from 80 knockback
SAKURAI_ANGLE = 361.0  # SmashWiki Sakurai angle: stored as 361 in the game data
SAKURAI_LOW_KB, SAKURAI_HIGH_KB = 32.0, 32.1  # SmashWiki Sakurai angle (Melee)
SAKURAI_GROUND_HIGH_DEG, SAKURAI_AIR_DEG = 44.0, 45.0  # SmashWiki Sakurai angle (Melee)
DI_MAX_DEG = 18.0  # SmashWiki Directional influence (Melee): about 18 degrees at most
CROUCH_CANCEL_KB = 2.0 / 3.0  # SmashWiki Crouch cancel (Melee): knockback x 2/3
CROUCH_CANCEL_HITLAG = 2.0 / 3.0  # pfirsich melee-framedata hitlag(): c = 2/3 when crouch cancelling
ELECTRIC_HITLAG = 1.5  # pfirsich melee-framedata hitlag(): e = 1.5 for electric hits on the victim
#: SmashWiki Stale-move negation (Melee): reduction by queue position, most recent first.
STALE_WEIGHTS = (0.09, 0.08, 0.07, 0.06, 0.05, 0.04, 0.03, 0.02, 0.01)
STALE_QUEUE = len(STALE_WEIGHTS)  # 9 moves


def smash_charge(charge_frames: Tensor | float) -> Tensor:
    """A smash attack's damage multiplier after ``charge_frames`` of charge (0 to 60 counted).

    >>> round(float(smash_charge(torch.tensor(6.0))) * 18, 2)  # Fox's up smash held 6 frames
    18.66
    """
    f = torch.clamp(torch.as_tensor(charge_frames, dtype=torch.float64), 0, SMASH_CHARGE_FRAMES)
    return 1.0 + (SMASH_CHARGE_MAX - 1.0) * f / SMASH_CHARGE_FRAMES


def knockback_percent(percent_before: Tensor, staled_damage: Tensor) -> Tensor:
    """The p of the knockback formula: ``floor(percent before the hit) + staled damage``.

    >>> round(float(knockback_percent(torch.tensor(18.5), torch.tensor(16.38))), 4)
    34.38
    """
    return torch.floor(percent_before) + staled_damage


def knockback(percent_after: Tensor, damage: Tensor | float, weight: Tensor | float, kb_growth: Tensor | float,
              base_kb: Tensor | float, set_kb: Tensor | float = 0.0) -> Tensor:
    """Melee's knockback, with the set-knockback branch where ``set_kb > 0``.

    regular: ``((p/10 + p*d/20) * 200/(w+100) * 1.4 + 18) * g/100 + b``, p = ``percent_after`` (use
    :func:`knockback_percent`), d = the hitbox's *unstaled* damage (Melee, non-projectiles);
    set: the same with p = 10 and d = ``set_kb``. Capped at 2500.

    >>> round(float(knockback(torch.tensor(17.0), 5.0, 75.0, 100.0, 0.0, 80.0)), 3)  # Fox shine, set 80
    83.6
    >>> round(float(knockback(torch.tensor(9.0), 9.0, 87.0, 70.0, 30.0)), 4)  # Marth ftilt on Marth at 0%
    47.7882
    """
    p = torch.as_tensor(percent_after)
    d = torch.as_tensor(damage, dtype=p.dtype, device=p.device)
    s = torch.as_tensor(set_kb, dtype=p.dtype, device=p.device)
    is_set = s > 0
    p = torch.where(is_set, torch.full_like(p, SET_KB_PERCENT), p)
    d = torch.where(is_set, s, d)
    kb = ((p / 10 + p * d / 20) * 200 / (weight + 100) * 1.4 + 18) * kb_growth / 100 + base_kb
    return torch.clamp(kb, max=KNOCKBACK_CAP)


def crouch_cancel(kb: Tensor, crouching: Tensor) -> Tensor:
    """Knockback x 2/3 where the victim crouches (SmashWiki Crouch cancel, Melee).

    >>> float(crouch_cancel(torch.tensor([60.0, 60.0]), torch.tensor([True, False]))[0])
    40.0
    """
    return torch.where(crouching, kb * CROUCH_CANCEL_KB, kb)


def hitstun(kb: Tensor) -> Tensor:
    """Hitstun frames: ``floor(0.4 * kb)``.

    >>> hitstun(torch.tensor([83.6, 41.44])).tolist()
    [33.0, 16.0]
    """
    return torch.floor(kb * HITSTUN_PER_KB)


def tumbles(kb: Tensor) -> Tensor:
    """True where the knockback sends the victim into tumble (>= 80).

    >>> tumbles(torch.tensor([79.9, 80.0])).tolist()
    [False, True]
    """
    return kb >= TUMBLE_KB


def launch_speed(kb: Tensor) -> Tensor:
    """Initial launch speed: ``0.03 * kb`` (units per frame).

    >>> round(float(launch_speed(torch.tensor(83.6))), 4)
    2.508
    """
    return kb * LAUNCH_SPEED_PER_KB


def launch_speed_after(speed0: Tensor, frames: Tensor | int) -> Tensor:
    """Launch speed ``frames`` frames after the launch: ``max(speed0 - 0.051 * frames, 0)``.

    >>> round(float(launch_speed_after(torch.tensor(2.508), 1)), 4)
    2.457
    """
    return torch.clamp(speed0 - LAUNCH_DECAY * frames, min=0.0)


def decay_launch(vx: Tensor, vy: Tensor) -> tuple[Tensor, Tensor]:
    """One frame of launch-speed decay: the speed falls by 0.051 along its own direction, to 0.

    >>> vx, vy = decay_launch(torch.tensor(-2.508), torch.tensor(0.0))
    >>> round(float(vx), 3), float(vy)
    (-2.457, 0.0)
    """
    speed = torch.sqrt(vx * vx + vy * vy)
    scale = torch.where(speed > 0, torch.clamp(speed - LAUNCH_DECAY, min=0.0) / torch.clamp(speed, min=1e-12), 0.0)
    return vx * scale, vy * scale


def launch_angle(angle_deg: Tensor, kb: Tensor, grounded: Tensor) -> Tensor:
    """The launch angle in degrees, with the Sakurai angle (361) resolved.

    Sakurai angle, Melee: airborne 45; grounded 0 below 32 knockback, 44 from 32.1, linear between.

    >>> launch_angle(torch.tensor([361.0, 361.0, 361.0, 80.0]), torch.tensor([20.0, 41.4, 41.4, 10.0]),
    ...              torch.tensor([True, True, False, True])).tolist()
    [0.0, 44.0, 45.0, 80.0]
    """
    ramp = torch.clamp((kb - SAKURAI_LOW_KB) / (SAKURAI_HIGH_KB - SAKURAI_LOW_KB), 0.0, 1.0) * SAKURAI_GROUND_HIGH_DEG
    sakurai = torch.where(grounded, ramp, torch.full_like(ramp, SAKURAI_AIR_DEG))
    return torch.where(angle_deg == SAKURAI_ANGLE, sakurai, angle_deg + torch.zeros_like(ramp))


def launch_velocity(kb: Tensor, angle_deg: Tensor, facing: Tensor) -> tuple[Tensor, Tensor]:
    """(vx, vy) of the launch: speed 0.03 x kb at ``angle_deg`` (resolved), mirrored by the attacker's
    ``facing`` (+1 right, -1 left).

    >>> vx, vy = launch_velocity(torch.tensor(83.6), torch.tensor(0.0), torch.tensor(-1.0))
    >>> round(float(vx), 3), round(float(vy), 3)
    (-2.508, 0.0)
    """
    rad = angle_deg * (math.pi / 180.0)
    speed = launch_speed(kb)
    return torch.cos(rad) * speed * facing, torch.sin(rad) * speed


def di_angle(angle_deg: Tensor, stick_x: Tensor, stick_y: Tensor) -> Tensor:
    """The launch angle after trajectory DI (degrees, angle measured for a launch to the right).

    The stick's component perpendicular to the launch direction, c in [-1, 1], turns the launch
    toward the stick by ``18 * c^2`` degrees (the 18-degree maximum for a perpendicular stick and no
    change for a parallel one are SmashWiki's; the squared falloff in between is a *guess*).

    >>> [round(v, 3) for v in di_angle(torch.tensor([0.0, 0.0, 90.0]), torch.tensor([0.0, 1.0, 1.0]),
    ...                                torch.tensor([1.0, 0.0, 0.0])).tolist()]
    [18.0, 0.0, 72.0]
    """
    rad = angle_deg * (math.pi / 180.0)
    # Perpendicular (counter-clockwise) unit vector to the launch is (-sin, cos).
    c = -stick_x * torch.sin(rad) + stick_y * torch.cos(rad)
    return angle_deg + DI_MAX_DEG * c * c.abs()


def stale_factor(queue: Tensor, attack_id: Tensor) -> Tensor:
    """Damage multiplier from stale-move negation: ``1 - sum(weights where queue == attack_id)``.

    ``queue`` [..., 9] holds the attacker's last 9 attack ids that connected, most recent first
    (0 = empty slot); ``attack_id`` [...] is the id of the move now hitting. Id 1 never stales.

    >>> q = torch.tensor([11, 11, 13, 0, 0, 11, 0, 0, 0])
    >>> round(float(stale_factor(q, torch.tensor(11))), 4)   # positions 1, 2 and 6: 0.09 + 0.08 + 0.04
    0.79
    """
    w = torch.tensor(STALE_WEIGHTS, dtype=torch.float32, device=queue.device)
    a = torch.as_tensor(attack_id, device=queue.device).unsqueeze(-1)
    hit = (queue == a) & (a > 1)
    return 1.0 - (hit.to(w.dtype) * w).sum(-1)


def push_stale(queue: Tensor, attack_id: Tensor, push: Tensor) -> Tensor:
    """The queue after a hit: ``attack_id`` enters at the front where ``push`` is true.

    >>> push_stale(torch.tensor([[5, 4, 3, 2, 1, 9, 8, 7, 6]]), torch.tensor([11]), torch.tensor([True])).tolist()
    [[11, 5, 4, 3, 2, 1, 9, 8, 7]]
    """
    shifted = torch.cat([torch.as_tensor(attack_id, dtype=queue.dtype, device=queue.device).unsqueeze(-1),
                         queue[..., :-1]], dim=-1)
    return torch.where(push.unsqueeze(-1), shifted, queue)


def hitlag(damage: Tensor, electric: Tensor, crouching: Tensor) -> Tensor:
    """The victim's hitlag frames: ``floor(floor(floor(3 + d/3) * e) * c)``.

    e = 1.5 for electric hitboxes, c = 2/3 when crouch cancelling. (Which damage, staled or not,
    enters is not settled by the sources here: *guess*, pass the damage dealt.)

    >>> hitlag(torch.tensor([5.0, 18.0]), torch.tensor([True, False]), torch.tensor([False, False])).tolist()
    [6.0, 9.0]
    """
    base = torch.floor(3.0 + damage / 3.0)
    e = torch.where(electric, ELECTRIC_HITLAG, 1.0)
    c = torch.where(crouching, CROUCH_CANCEL_HITLAG, 1.0)
    return torch.floor(torch.floor(base * e) * c)
