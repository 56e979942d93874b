"""The arena's hit predictions beside what the game did, hit by hit, from real Slippi replays.

For every hit whose attacker is Fox or Marth (the victim's percent rises on a frame), the move and
hitbox are identified from the attacker's action and action frame at the hit, and the prediction
from the generated game data (:mod:`melee_agent.arena.gamedata`) and Melee's formulas
(:mod:`melee_agent.arena.knockback`) is put beside the replay's own values:

* damage: the hitbox's damage x the stale-move factor of the attacker's queue, rebuilt from the
  replay's own hit history (the attack id the replay records as the attacker's last attack landed,
  one entry per attack instance, cleared when the attacker loses a stock);
* hitstun: ``floor(0.4 KB)`` against libmelee's ``hitstun_frames_left`` on the hit frame (the game
  sets it when the hit lands and holds it through hitlag; replays from Slippi 2.0.0 carry it);
* launch speed: ``0.03 KB`` against the length of (``speed_x_attack``, ``speed_y_attack``) on the hit
  frame (Slippi 3.5.0 and later).

Which hitbox: the attacker's hitboxes active on that action frame that can hit the victim (grounded
or airborne, where the replay records it: Slippi 2.0.0 on); where they differ, the lowest id (the
game's precedence) whose hitbox, swept from its position one frame earlier, touches the victim's
body in the arena's model (an upright capsule), else the nearest one. A throw is predicted from its
throw command, Fox's laser from its projectile hit, and his firefox travel and illusion from the one
hitbox each makes in code (gamedata ``throws.csv``, ``projectiles.csv``, ``code_hitboxes.csv``).
Percent rises with no attack of Fox's or Marth's out (stage elements) are listed apart as
unattributed. docs/fidelity.md has the figures and every miss explained.

Bad files raise :class:`~melee_agent.io.slp.ReplayError` naming the file; a file's hits are returned
only once the whole file has been read.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, NamedTuple

import numpy as np
import torch
from melee.enums import Action, Character

from melee_agent.arena import gamedata as gd
from melee_agent.arena import knockback as kb
from melee_agent.io.slp import ReplayError, post_frame_byte_console, read_each, read_kept
from melee_agent.report.text_table import text_table

LAST_ATTACK_BYTE = 0x1E  # post-frame update: last attack landed (Slippi replay spec)

FIGHTERS = (Character.FOX, Character.MARTH)
DAMAGE_TOLERANCE = 1e-3  # percent is a float32 in the game: "exact" up to its rounding
HITSTUN_TOLERANCE = 1  # frames
LAUNCH_TOLERANCE = 0.05  # relative
# Slippi replay spec (project-slippi/slippi-wiki SPEC.md, post-frame update): misc action state
# (hitstun) from 2.0.0; attack-based speeds from 3.5.0.
HITSTUN_SINCE = (2, 0, 0)
LAUNCH_SPEED_SINCE = (3, 5, 0)
# Item updates (projectiles) are in replays from 3.0.0 on.
ITEMS_SINCE = (3, 0, 0)
# The post-frame "is airborne" byte (0x2F) is from 2.0.0 too; before it libmelee reports every player
# on the ground, so a replay that old does not say which of a move's hitboxes could hit the victim.
GROUND_SINCE = (2, 0, 0)
# Throws: the attack ids slippi-js moves.ts gives them (their damage and knockback: gamedata throws.csv).
THROWS = {Action.THROW_FORWARD.value: ("fthrow", 53), Action.THROW_BACK.value: ("bthrow", 54),
          Action.THROW_UP.value: ("uthrow", 55), Action.THROW_DOWN.value: ("dthrow", 56)}
#: slippi-js src/melee/moves.ts short names of the game's attack ids.
ATTACK_NAMES = {1: "none", 2: "jab1", 3: "jab2", 4: "jab3", 5: "rapid-jabs", 6: "dash", 7: "ftilt", 8: "utilt",
                9: "dtilt", 10: "fsmash", 11: "usmash", 12: "dsmash", 13: "nair", 14: "fair", 15: "bair", 16: "uair",
                17: "dair", 18: "neutral-b", 19: "side-b", 20: "up-b", 21: "down-b", 50: "getup", 51: "getup-slow",
                52: "pummel", 53: "fthrow", 54: "bthrow", 55: "uthrow", 56: "dthrow", 61: "edge-slow", 62: "edge"}
HELD = {Action.GRAB_PUMMELED.value, Action.GRABBED.value, Action.GRAB_PULL.value, Action.GRABBED_WAIT_HIGH.value,
        Action.PUMMELED_HIGH.value}  # the victim is held: no launch, no hitstun
BODY_RADIUS = 3.5  # the arena's body radius (melee_agent/arena/libmelee_data.py BODY_RADIUS): a guess
OFF_SCREEN_DAMAGE = 1.0  # SmashWiki "Magnifying-Glass Damage": 1% a second while off screen
DEFAULT_HEIGHT = 10.0  # body height for a character victims.csv lacks (none of Melee's 27): a guess
CROUCHING = {Action.CROUCH_START.value, Action.CROUCHING.value}  # CROUCH_START: guess (SmashWiki names crouching)


class PlayerFrame(NamedTuple):
    character: Character
    action: int
    action_frame: int
    percent: float
    stock: int
    on_ground: bool
    facing_right: bool
    x: float
    y: float
    hitstun: float
    speed_x_attack: float
    speed_y_attack: float
    last_attack_landed: int  # post-frame 0x1E, -1 where libmelee gave no bytes


class Frame(NamedTuple):
    number: int
    players: dict[int, PlayerFrame]
    projectile_owners: frozenset[int]


class Replay(NamedTuple):
    path: str
    version: tuple[int, int, int]
    frames: list[Frame]


class HitRecord(NamedTuple):
    """One hit by Fox or Marth: what the game did and what the arena predicts."""

    file: str
    frame: int
    attacker: str
    attacker_port: int
    victim: str
    victim_port: int
    move: str
    action: int
    action_frame: int
    attack_id: int  # from the replay (last attack landed); our table's where the replay has none
    hitbox_id: int | None
    percent_before: float
    stale_factor: float
    damage_observed: float
    damage_predicted: float | None
    knockback_predicted: float | None
    hitstun_observed: int | None
    hitstun_predicted: int | None
    launch_speed_observed: float | None
    launch_speed_predicted: float | None
    damage_any_hitbox: bool  # diagnostic: observed = some active hitbox's (throw's, projectile's) damage x stale
    note: str

    @property
    def damage_exact(self) -> bool:
        return self.damage_predicted is not None and abs(self.damage_observed - self.damage_predicted) <= DAMAGE_TOLERANCE

    @property
    def hitstun_ok(self) -> bool | None:
        if self.hitstun_observed is None:
            return None
        return self.hitstun_predicted is not None and abs(self.hitstun_observed - self.hitstun_predicted) <= HITSTUN_TOLERANCE

    @property
    def launch_ok(self) -> bool | None:
        if self.launch_speed_observed is None:
            return None
        if self.launch_speed_predicted is None:
            return False
        return abs(self.launch_speed_predicted - self.launch_speed_observed) <= LAUNCH_TOLERANCE * self.launch_speed_observed


class Unattributed(NamedTuple):
    """A percent rise on a Fox or Marth opponent with no attack of theirs to explain it."""

    file: str
    frame: int
    victim: str
    damage: float
    other_action: int
    other_action_frame: int
    reason: str


class FileResult(NamedTuple):
    file: str
    version: str
    hits: tuple[HitRecord, ...]
    unattributed: tuple[Unattributed, ...]


class MoveSummary(NamedTuple):
    attacker: str
    move: str
    hits: int
    damage_exact: float
    hitstun_hits: int
    hitstun_within_1: float | None
    launch_hits: int
    launch_within_5pct: float | None


class Summary(NamedTuple):
    hits: int
    damage_exact: float | None
    damage_any_hitbox: float | None  # diagnostic: share whose damage some active hitbox explains
    hitstun_hits: int
    hitstun_within_1: float | None
    launch_hits: int
    launch_within_5pct: float | None


# --- reading ------------------------------------------------------------------------------------

def read_replay(path: str | os.PathLike) -> Replay:
    """Every frame of a replay as compact per-player records, or a ReplayError naming the file."""
    def frame(gs: Any, console: Any) -> Frame:  # as each is read: "last attack landed" is this version's
        players = {}
        for port, p in gs.players.items():
            port = int(port)
            players[port] = PlayerFrame(
                p.character, int(p.action.value), int(p.action_frame), float(p.percent), int(p.stock),
                bool(p.on_ground), bool(p.facing), float(p.position.x), float(p.position.y),
                float(p.hitstun_frames_left), float(p.speed_x_attack), float(p.speed_y_attack),
                console.post_byte.get((int(gs.frame), port), -1))
        owners = frozenset(int(pr.owner) for pr in gs.projectiles if getattr(pr, "owner", -1) is not None)
        return Frame(int(gs.frame), players, owners)

    frames, console = read_kept(path, console_cls=post_frame_byte_console(LAST_ATTACK_BYTE), convert=frame)
    if not frames:
        raise ReplayError(f"{path}: replay holds no frames")
    version = tuple(int(v) for v in (console.slp_version_tuple or (0, 0, 0)))
    return Replay(str(path), version, frames)  # type: ignore[arg-type]


# --- analysis -----------------------------------------------------------------------------------

def candidate_hitboxes(attacker: PlayerFrame, victim: PlayerFrame, carries_ground: bool) -> tuple[gd.Hitbox, ...]:
    """The attacker's hitboxes active on its action frame that can hit ``victim``: grounded or airborne
    as the replay records it (Slippi 2.0.0 on); every active hitbox where the replay cannot say."""
    return tuple(h for h in gd.hitboxes_at(attacker.character, attacker.action, attacker.action_frame)
                 if not carries_ground or (h.hits_grounded if victim.on_ground else h.hits_airborne))


def _pick_hitbox(candidates: tuple[gd.Hitbox, ...], attacker: PlayerFrame, attacker_prev: PlayerFrame | None,
                 victim: PlayerFrame) -> tuple[gd.Hitbox, str]:
    """The hitbox that hit: all alike -> the first; else the lowest id touching the victim's body (the
    arena's body model), else the nearest. The game's rule (doldecomp/melee ``ftColl_80078C70``): the
    attacker's hitbox slots are tried in order 0..3 against every hurt capsule of the victim, and the
    first that connects marks the whole attack as having hit, so later slots skip the victim."""
    first = candidates[0]
    key = lambda h: (h.damage, h.angle, h.base_kb, h.kb_growth, h.set_kb)  # noqa: E731
    if all(key(h) == key(first) for h in candidates):
        return first, ""
    gaps = [(hitbox_gap(h, attacker, attacker_prev, victim), h) for h in candidates]
    touching = [h for g, h in gaps if g <= 0]
    if touching:
        return touching[0], "hitbox by geometry (touching)"
    gap, best = min(((g, h) for g, h in gaps), key=lambda gh: gh[0])
    if math.isinf(gap):
        return first, "hitbox positions unknown: lowest id taken"
    return best, f"hitbox by geometry (nearest, {gap:.1f} units off)"


def _segment_distance(p1: tuple[float, float], p2: tuple[float, float], q1: tuple[float, float],
                      q2: tuple[float, float]) -> float:
    """Shortest distance between segments p1-p2 and q1-q2 in the plane."""

    def point_seg(p: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
        dx, dy = b[0] - a[0], b[1] - a[1]
        L = dx * dx + dy * dy
        t = 0.0 if L == 0 else max(0.0, min(1.0, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / L))
        return math.hypot(p[0] - a[0] - t * dx, p[1] - a[1] - t * dy)

    def cross(o, a, b):  # noqa: ANN001, ANN202
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    d1, d2 = cross(q1, q2, p1), cross(q1, q2, p2)
    d3, d4 = cross(p1, p2, q1), cross(p1, p2, q2)
    if ((d1 > 0) != (d2 > 0)) and ((d3 > 0) != (d4 > 0)):
        return 0.0
    return min(point_seg(p1, q1, q2), point_seg(p2, q1, q2), point_seg(q1, p1, p2), point_seg(q2, p1, p2))


def hitbox_gap(h: gd.Hitbox, attacker: PlayerFrame, attacker_prev: PlayerFrame | None, victim: PlayerFrame) -> float:
    """Distance between hitbox ``h`` and the victim's body, 0 or less where they touch.

    The hitbox is a circle swept from where the same hitbox id was one frame earlier to where it is
    now (SmashWiki "Hitbox"; doldecomp/melee ``lbColl_80006E58`` tests the capsule from the hitbox's
    previous to its current position against each hurt capsule);
    the body is the arena's model, a vertical capsule from the victim's position up ``height``
    (libmelee characterdata ``size``) with radius BODY_RADIUS (the arena's guess, libmelee_data.py)."""
    if math.isnan(h.x):
        return math.inf
    now = (attacker.x + (h.x if attacker.facing_right else -h.x), attacker.y + h.y)
    then = now
    if attacker_prev is not None and attacker_prev.action == attacker.action:
        for hp in gd.hitboxes_at(attacker.character, attacker.action, attacker.action_frame - 1):
            if hp.hitbox_id == h.hitbox_id and not math.isnan(hp.x):
                then = (attacker_prev.x + (hp.x if attacker_prev.facing_right else -hp.x), attacker_prev.y + hp.y)
    vd = gd.victim(victim.character)
    height = vd.height if vd is not None else DEFAULT_HEIGHT
    body = ((victim.x, victim.y), (victim.x, victim.y + height))
    return _segment_distance(then, now, *body) - h.radius - BODY_RADIUS


def _predict(h: gd.Hitbox | gd.Throw | gd.Projectile | gd.CodeHitbox, stale: float, victim: PlayerFrame,
             victim_attrs: gd.Victim, crouching: bool, charged: bool = False) -> tuple[float, float, float, float]:
    """(damage, knockback, hitstun, launch speed) for ``h`` on ``victim`` (its frame before the hit): a
    hitbox, a throw command (knockback at weight 100, ``kb.THROW_WEIGHT``), a projectile's hit or a
    code-made hitbox (``charged``: a charged smash attack's, ``h.damage`` already charged). A hit with no knockback at all (Fox's laser: base, growth and set knockback 0)
    leaves the victim's hitstun and launch as they were: they go on counting down and decaying."""
    damage = torch.tensor(h.damage, dtype=torch.float64) * stale
    if h.base_kb == 0 and h.kb_growth == 0 and h.set_kb == 0:
        return float(damage), 0.0, *_running_on(victim)
    weight = kb.THROW_WEIGHT if isinstance(h, gd.Throw) else victim_attrs.weight
    p = kb.knockback_percent(torch.tensor(victim.percent, dtype=torch.float64), damage)
    d = math.floor(h.damage) if charged else h.damage  # a charged smash's d is its damage floored
    k = kb.knockback(p, d, weight, h.kb_growth, h.base_kb, h.set_kb)
    k = kb.crouch_cancel(k, torch.tensor(crouching))
    return float(damage), float(k), float(kb.hitstun(k)), float(kb.launch_speed(k))


def _decayed_launch(v: PlayerFrame) -> float:
    """The victim's launch speed one frame after ``v``, untouched by a hit: 0.051 less, down to 0."""
    return max(math.hypot(v.speed_x_attack, v.speed_y_attack) - kb.LAUNCH_DECAY, 0.0)


def _running_on(v: PlayerFrame) -> tuple[float, float]:
    """(hitstun, launch speed) one frame after ``v`` for a hit with no knockback: both just run on."""
    return max(v.hitstun - 1.0, 0.0), _decayed_launch(v)


def analyse(replay: Replay) -> FileResult:
    """Every Fox or Marth hit in ``replay`` with the arena's prediction beside it."""
    name = Path(replay.path).name
    carries_hitstun = replay.version >= HITSTUN_SINCE
    carries_launch = replay.version >= LAUNCH_SPEED_SINCE
    carries_ground = replay.version >= GROUND_SINCE
    carries_items = replay.version >= ITEMS_SINCE
    queues: dict[int, list[int]] = defaultdict(list)  # port -> attack ids, most recent first
    instance: dict[int, int] = defaultdict(int)  # port -> attack instance counter (new action = new instance)
    pushed: dict[int, int] = {}  # port -> instance last pushed into its queue
    held: dict[int, int] = defaultdict(int)  # port -> frames its smash attack stood on its charge frame
    held_before: dict[int, int] = defaultdict(int)  # the same up to the frame before (a trade reads that one)
    commanded: dict[int, int] = {}  # port -> instance whose throw command was dealt
    hits: list[HitRecord] = []
    unattributed: list[Unattributed] = []
    prev: Frame | None = None
    for fr in replay.frames:
        if prev is not None:
            for port, p in fr.players.items():
                q = prev.players.get(port)
                if q is None:
                    continue
                held_before[port] = held[port]
                if p.action != q.action:
                    instance[port] += 1
                if p.action != q.action or p.action_frame < q.action_frame:  # a new use of a move: no charge yet
                    held[port] = 0
                mv = gd.move(p.character, p.action)
                if mv is not None and mv.charge_frame is not None and p.action_frame == mv.charge_frame:
                    held[port] += 1  # a smash attack's animation stands on its charge frame while charged
                if p.stock < q.stock:  # SmashWiki: being KO'd resets the player's own stale queue
                    queues[port].clear()
        if prev is not None and len(fr.players) == 2:
            for vport, v in fr.players.items():
                vq = prev.players.get(vport)
                aport = next(pt for pt in fr.players if pt != vport)
                a = fr.players[aport]
                if vq is None or v.percent <= vq.percent + 1e-6 or a.character not in FIGHTERS:
                    continue
                rec = _hit(name, fr, aport, a, prev.players.get(aport), vport, v, vq, queues[aport],
                           carries_hitstun, carries_launch, carries_ground, commanded.get(aport) == instance[aport],
                           aport in prev.projectile_owners, max(held[aport] - 1, 0), carries_items,
                           max(held_before[aport] - 1, 0))
                if isinstance(rec, Unattributed):
                    unattributed.append(rec)
                    continue
                hits.append(rec)
                if a.action in THROWS and rec.move == THROWS[a.action][0]:
                    commanded[aport] = instance[aport]
                if pushed.get(aport) != instance[aport] and rec.attack_id > 1:
                    queues[aport].insert(0, rec.attack_id)
                    del queues[aport][kb.STALE_QUEUE:]
                    pushed[aport] = instance[aport]
        prev = fr
    version = ".".join(str(v) for v in replay.version)
    return FileResult(replay.path, version, tuple(hits), tuple(unattributed))


class _Rise(NamedTuple):
    """One percent rise of the victim ``v`` being read as a hit by ``a`` (``a`` may be the frame before's, in a trade)."""

    name: str
    fr: Frame
    aport: int
    a: PlayerFrame
    aprev: PlayerFrame | None
    vport: int
    v: PlayerFrame
    vq: PlayerFrame
    replay_attack: int  # the attacker's last attack landed on the rise's frame (the frame's, even in a trade)

    @property
    def damage(self) -> float:
        return self.v.percent - self.vq.percent


class _Read(NamedTuple):
    """What a rise was read as: the move and attack id, and the values every record of it carries."""

    move: str
    attack_id: int
    stale: float
    hs_obs: int | None
    ls_obs: float | None
    held: bool


def _record(r: _Rise, m: _Read, hitbox_id: int | None, dmg: float | None, k: float | None, hs: int | None,
            ls: float | None, any_hb: bool, note: str) -> HitRecord:
    a, v = r.a, r.v
    return HitRecord(r.name, r.fr.number, a.character.name, r.aport, v.character.name, r.vport, m.move, a.action,
                     a.action_frame, m.attack_id, hitbox_id, r.vq.percent, m.stale, r.damage, dmg, k, m.hs_obs, hs,
                     m.ls_obs, ls, any_hb, note)


def _hit(name: str, fr: Frame, aport: int, a: PlayerFrame, aprev: PlayerFrame | None, vport: int, v: PlayerFrame,
         vq: PlayerFrame, queue: list[int], carries_hitstun: bool, carries_launch: bool,
         carries_ground: bool = True, repeat: bool = False, had_projectile: bool = False,
         charged: int = 0, carries_items: bool = True, charged_before: int = 0) -> HitRecord | Unattributed:
    """One percent rise of ``v`` read as a hit by ``a``; ``repeat``: ``a``'s throw command was dealt in this throw;
    ``had_projectile``: ``a`` owned a projectile on the frame before (one that hits is gone on the hit's
    frame, and where the replay's last attack landed was already its id that does not change either);
    ``charged``: frames ``a``'s smash attack was charged (its charge frame held past the first);
    ``carries_items``: the replay records projectiles (3.0.0 on); ``charged_before``: ``charged`` as it
    stood on the frame before (a trade's move is that frame's)."""
    replay_attack = a.last_attack_landed
    a, note, charged = _trade(a, aprev, vq, carries_ground, charged, charged_before)
    r = _Rise(name, fr, aport, a, aprev, vport, v, vq, replay_attack)
    found = _identify(r, carries_ground, carries_items, had_projectile)
    if isinstance(found, Unattributed):
        return found
    move_name, attack_id, candidates, code = found
    if replay_attack > 0:
        if replay_attack != attack_id:
            note = f"replay's attack id {replay_attack} differs from the table's {attack_id}; "
        attack_id = replay_attack
    w = kb.STALE_WEIGHTS
    stale = 1.0 - sum(w[i] for i, aid in enumerate(queue[: kb.STALE_QUEUE]) if aid == attack_id and attack_id > 1)
    held = v.action in HELD
    hs_obs = int(v.hitstun) if carries_hitstun and not held else None
    ls_obs = math.hypot(v.speed_x_attack, v.speed_y_attack) if carries_launch and not held else None
    m = _Read(move_name, attack_id, stale, hs_obs, ls_obs, held)
    throw = gd.throw(a.character, a.action) if a.action in THROWS else None
    # A throw whose animation does not depend on the victim's weight releases on its exact frame: a rise
    # before it is not the throw command (Fox's down throw, released on 33 of 44, fires lasers first).
    before_release = throw is not None and not throw.weight_dependent and a.action_frame < throw.release_frame
    if not candidates and a.action in THROWS and (repeat or before_release):
        return _throw_laser(r, m, note)
    if not candidates:
        return _without_hitbox(r, m, throw, code, note)
    return _with_hitbox(r, m, candidates, charged, carries_ground, note)


def _trade(a: PlayerFrame, aprev: PlayerFrame | None, vq: PlayerFrame, carries_ground: bool, charged: int,
           charged_before: int) -> tuple[PlayerFrame, str, int]:
    """``(attacker, note, charged)``: in a trade, both players hit on this frame (the attacker's percent rose too), so
    the attacker already shows its own hit's action. The move that hit is the one of the frame before, one frame on,
    where it names the replay's attack (which need not change: the attacker's last hit may have been it)."""
    replay_attack = a.last_attack_landed
    if aprev is not None and replay_attack > 0 and a.action != aprev.action and a.percent > aprev.percent:
        was = aprev._replace(action_frame=aprev.action_frame + 1)
        was_move = gd.move(was.character, was.action)
        if (not candidate_hitboxes(a, vq, carries_ground) and was_move is not None
                and was_move.attack_id == replay_attack and candidate_hitboxes(was, vq, carries_ground)):
            return was, "a trade (the move of the frame before); ", charged_before
    return a, "", charged


def _identify(r: _Rise, carries_ground: bool, carries_items: bool, had_projectile: bool
              ) -> tuple[str, int, tuple[gd.Hitbox, ...], gd.CodeHitbox | None] | Unattributed:
    """``(move name, attack id, candidate hitboxes, code hitbox)`` of the rise, or why none explains it."""
    a, aprev, replay_attack = r.a, r.aprev, r.replay_attack
    new_attack = aprev is not None and replay_attack > 0 and replay_attack != aprev.last_attack_landed
    move = gd.move(a.character, a.action)
    candidates = candidate_hitboxes(a, r.vq, carries_ground)
    # Before 3.0.0 a replay has no projectiles: a rise with the attacker's last attack landed still naming
    # one of its projectiles (a second laser) is that projectile's.
    old_projectile = not carries_items and gd.projectile(a.character, replay_attack) is not None
    # Fox's firefox travel and illusion: a hitbox made in code, out on the frames libmelee recorded it,
    # unless the replay names another attack for this hit (a laser of his still flying)
    code = gd.code_hitbox(a.character, a.action)
    if code is not None and (not code.out_on(a.action_frame) or (new_attack and replay_attack != code.attack_id)):
        code = None
    if candidates and move is not None:
        return move.name, move.attack_id, candidates, code
    if a.action in THROWS:
        return (*THROWS[a.action], candidates, code)
    if code is not None:
        return code.move, code.attack_id, candidates, code
    if move is not None and new_attack and replay_attack == move.attack_id:
        return move.name, move.attack_id, candidates, code  # the move hit, but the data has no hitbox on this frame
    if new_attack or old_projectile or ((r.aport in r.fr.projectile_owners or had_projectile)
                                        and (replay_attack <= 0 or gd.projectile(a.character, replay_attack))):
        # A hit with no hitbox of the attacker out: the attack the replay names where it changed on this
        # frame (or, before 3.0.0, still names a projectile); else a projectile of the attacker's (Fox's
        # laser is an item) where the last attack landed names one or none. An unchanged id naming a
        # move (an off-screen 1% while a laser flies elsewhere) is not taken for a projectile's hit.
        attack_id = replay_attack if replay_attack > 0 else 18
        what = ATTACK_NAMES.get(attack_id, attack_id)
        move_name = (f"projectile ({what})" if gd.projectile(a.character, attack_id) is not None or not new_attack
                     else f"{what} (no hitbox of its action in the data)")
        return move_name, attack_id, candidates, code
    why = (f"{move.name} has no hitbox on action frame {a.action_frame}" if move is not None
           else "the other player has no hitbox, throw or projectile out")
    why += " and the replay's last attack landed did not change"
    if abs(r.damage - OFF_SCREEN_DAMAGE) <= DAMAGE_TOLERANCE:
        why += ("; 1%: likely the damage a fighter takes while off screen (in the magnifying glass, 1% a "
                "second, SmashWiki), which enters no stale queue")
    return Unattributed(r.name, r.fr.number, r.v.character.name, r.damage, a.action, a.action_frame, why)


def _throw_laser(r: _Rise, m: _Read, note: str) -> HitRecord | Unattributed:
    """A rise during a throw that is not its throw command (dealt once, on release). Fox's throws also fire lasers
    at the thrown victim (in the replays 2-4 rises after the release, staled as the throw, leaving its hitstun and
    launch to run on): no knockback, like his blaster's laser, and a damage no source here gives."""
    a = r.a
    if a.character != Character.FOX:
        return Unattributed(r.name, r.fr.number, r.v.character.name, r.damage, a.action, a.action_frame,
                            f"{m.move}: not its throw command (dealt once, on release)")
    hs, ls = _running_on(r.vq)
    return _record(r, m._replace(move="laser (throw)"), None, None, 0.0, int(hs), ls, False,
                   (note + "a laser of Fox's throw: no knockback (hitstun and launch run on); its damage is "
                    "in no source here (SmashWiki: the blaster deals 1%-3%)").lstrip("; "))


def _without_hitbox(r: _Rise, m: _Read, throw: gd.Throw | None, code: gd.CodeHitbox | None,
                    note: str) -> HitRecord:
    """A throw's throw command, a code-made hitbox or a projectile's hit: one set of values, none to choose."""
    a = r.a
    src: gd.Throw | gd.Projectile | gd.CodeHitbox | None = None
    if a.action in THROWS:
        src = throw
        note += "throw command" if src is not None else "throw: no throw data for this character"
    elif code is not None:
        src = code
        note += "a hitbox the game makes in code (code_hitboxes.csv: one per action, no position)"
    elif m.move.startswith("projectile"):
        src = gd.projectile(a.character, m.attack_id)
        if src is not None:
            m = m._replace(move=src.move)
            note += "projectile hit (its first damage; it weakens over its flight)"
        else:
            note += "projectile: not in the data"
    else:
        note += f"no hitbox of {m.move} on action frame {a.action_frame} in the data"
    victim_attrs = gd.victim(r.v.character)
    if src is None or victim_attrs is None:
        if src is not None:
            note += "; victim's weight not in the data"
        dmg = None if src is None else src.damage * m.stale
        return _record(r, m, None, dmg, None, None, None,
                       dmg is not None and abs(dmg - r.damage) <= DAMAGE_TOLERANCE, note.strip("; "))
    dmg, k, hs, ls = _predict(src, m.stale, r.vq, victim_attrs, False)
    if isinstance(src, gd.Throw):
        # No hitlag: on the frame a throw's damage shows, its launch has decayed once already (16 of
        # 16 throws in the public replays read, to 0.001; docs/fidelity.md).
        ls = max(ls - kb.LAUNCH_DECAY, 0.0)
    return _record(r, m, None, dmg, k, None if m.held else int(hs), None if m.held else ls,
                   abs(dmg - r.damage) <= DAMAGE_TOLERANCE, note.strip("; "))


def _with_hitbox(r: _Rise, m: _Read, candidates: tuple[gd.Hitbox, ...], charged: int, carries_ground: bool,
                 note: str) -> HitRecord:
    """A hit by one of the attacker's active hitboxes (:func:`_pick_hitbox`), charged where its smash was."""
    vq = r.vq
    h, why = _pick_hitbox(candidates, r.a, r.aprev, r.v)
    note += why
    if charged:
        mult = float(kb.smash_charge(charged))
        candidates = tuple(c._replace(damage=c.damage * mult) for c in candidates)
        h = h._replace(damage=h.damage * mult)
        note = (note + f"; charged {charged} frames (damage x{mult:.4f})").lstrip("; ")
    any_hb = any(abs(c.damage * m.stale - r.damage) <= DAMAGE_TOLERANCE for c in candidates)
    victim_attrs = gd.victim(r.v.character)
    if victim_attrs is None:
        return _record(r, m, h.hitbox_id, h.damage * m.stale, None, None, None, any_hb,
                       (note + "; victim's weight not in the data").lstrip("; "))
    dmg, k, hs, ls = _predict(h, m.stale, vq, victim_attrs, vq.action in CROUCHING, charged > 0)
    if carries_ground and vq.on_ground and 180.0 < h.angle < kb.SAKURAI_ANGLE and k < kb.TUMBLE_KB:
        # Sent down into the ground below tumble, a grounded victim stays on it: only the launch's
        # horizontal part moves it (ikneedata calculatormaths.js: a trajectory over 180 on a grounded
        # victim below 80 knockback "Stay"s; every Fox drill on a standing Peach in slippi-js's
        # FodPlatforms.slp and Whispy.slp launches at 1.247 x |cos 290| = 0.427).
        ls *= abs(math.cos(math.radians(h.angle)))
        note = (note + "; sent into the ground: the launch's horizontal part").lstrip("; ")
    if m.held:
        note = (note + "; victim held (pummel): no knockback").lstrip("; ")
    return _record(r, m, h.hitbox_id, dmg, k, None if m.held else int(hs), None if m.held else ls, any_hb,
                   note.strip("; "))


# --- summaries and output ----------------------------------------------------------------------

def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def summarize(hits: Iterable[HitRecord]) -> Summary:
    hits = list(hits)
    hs = [h.hitstun_ok for h in hits if h.hitstun_ok is not None]
    ls = [h.launch_ok for h in hits if h.launch_ok is not None]
    return Summary(len(hits), _share([h.damage_exact for h in hits]), _share([h.damage_any_hitbox for h in hits]),
                   len(hs), _share(hs), len(ls), _share(ls))


def per_move(hits: Iterable[HitRecord]) -> list[MoveSummary]:
    groups: dict[tuple[str, str], list[HitRecord]] = defaultdict(list)
    for h in hits:
        groups[(h.attacker, h.move)].append(h)
    out = []
    for (attacker, move), hs in sorted(groups.items()):
        s = summarize(hs)
        out.append(MoveSummary(attacker, move, s.hits, s.damage_exact or 0.0, s.hitstun_hits, s.hitstun_within_1,
                               s.launch_hits, s.launch_within_5pct))
    return out


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.0f}%"


def format_table(hits: list[HitRecord]) -> str:
    rows = [("attacker", "move", "hits", "damage exact", "hitstun ±1", "launch ±5%")]
    for m in per_move(hits):
        rows.append((m.attacker, m.move, str(m.hits), _pct(m.damage_exact),
                     f"{_pct(m.hitstun_within_1)} of {m.hitstun_hits}", f"{_pct(m.launch_within_5pct)} of {m.launch_hits}"))
    s = summarize(hits)
    rows.append(("all", "", str(s.hits), _pct(s.damage_exact), f"{_pct(s.hitstun_within_1)} of {s.hitstun_hits}",
                 f"{_pct(s.launch_within_5pct)} of {s.launch_hits}"))
    return text_table(rows)


def _clean(v: Any) -> Any:
    if isinstance(v, float):
        return None if not math.isfinite(v) else round(v, 6)
    if isinstance(v, (np.integer,)):
        return int(v)
    return v


def report(results: list[FileResult], errors: list[str]) -> dict[str, Any]:
    """The ``--json`` document: files, errors, hits, unattributed percent rises, per-move and summary."""
    hits = [h for r in results for h in r.hits]
    s = summarize(hits)
    return {
        "files": [{"file": r.file, "slippi_version": r.version, "hits": len(r.hits)} for r in results],
        "errors": errors,
        "hits": [{**{k: _clean(v) for k, v in h._asdict().items()}, "damage_exact": h.damage_exact,
                  "hitstun_within_1": h.hitstun_ok, "launch_speed_within_5pct": h.launch_ok} for h in hits],
        "unattributed": [{k: _clean(v) for k, v in u._asdict().items()} for r in results for u in r.unattributed],
        "per_move": [{k: _clean(v) for k, v in m._asdict().items()} for m in per_move(hits)],
        "summary": {k: _clean(v) for k, v in s._asdict().items()},
    }


def run(paths: Iterable[str | os.PathLike]) -> tuple[list[FileResult], list[str]]:
    """Analyse each file; a bad one adds its one-line error and is skipped whole."""
    results, errors = read_each(paths, lambda p: analyse(read_replay(p)))
    return results, errors
