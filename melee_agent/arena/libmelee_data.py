"""Melee's own numbers for the arena, read from libmelee's data files at import.

Sources, named beside each number:

* ``characterdata.csv`` (libmelee): gravity, terminal and fast-fall speed, walk speed, double-jump
  speeds, air speed, air mobility, air friction, ground friction;
* ``framedata.csv`` (libmelee): per-frame hitboxes (offset and radius), locomotion and IASA for
  Marth's attacks, Fox's rolls, spot dodge and shine;
* ``stages.py`` (libmelee): Final Destination's edges and blast zones;
* ``enums.Action`` (libmelee): action ids;
* ``gamedata/`` (:mod:`melee_agent.arena.gamedata`: the game's own files, BroccoliRaab/meleedb's
  dump): every move's damage, angle, base and growth knockback and set knockback, per frame and
  hitbox id; the characters' weights;
* SmashWiki frame lists for what neither carries (intangibility windows, jump-squat and landing
  lag). Values marked ``guess`` could not be checked against a source here.

The hit formulas (knockback, hitstun, launch speed and its decay, the Sakurai angle) are in
:mod:`melee_agent.arena.knockback`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources

import numpy as np
from melee.enums import Action, Character

from melee_agent.arena import gamedata
from melee_agent.arena.stages import stage_named

A = Action  # short alias for tables below


def _csv(name: str) -> list[dict[str, str]]:
    with resources.files("melee").joinpath(name).open() as f:
        return list(csv.DictReader(f))


@dataclass(frozen=True)
class Physics:
    gravity: float
    terminal: float
    fast_fall: float
    walk: float
    dj_speed: float
    dj_speed_x: float
    air_speed: float
    air_mobility: float
    air_friction: float
    friction: float


def _physics(name: str) -> Physics:
    row = next(r for r in _csv("characterdata.csv") if r["Character"] == name)
    f = lambda k: float(row[k])  # noqa: E731
    return Physics(gravity=f("Gravity"), terminal=f("TerminalVelocity"), fast_fall=f("FastFallSpeed"),
                   walk=f("MaxWalkSpeed"), dj_speed=f("InitDJSpeed"), dj_speed_x=f("InitDJSpeed_x"),
                   air_speed=f("AirSpeed"), air_mobility=f("AirMobility"), air_friction=f("AirFriction"),
                   friction=f("Friction"))


FOX = _physics("Fox")  # characterdata.csv: gravity 0.23, terminal 2.8, fast fall 3.4, walk 1.6, ...
MARTH = _physics("Marth")

# --- Final Destination (libmelee stages.py, through arena/stages.py) ---
_FD = stage_named("final_destination")
STAGE = _FD.enum
EDGE = _FD.edge_x  # 85.5657
BLAST_LEFT, BLAST_RIGHT, BLAST_TOP, BLAST_BOTTOM = _FD.blast

# --- numbers libmelee does not carry (SmashWiki, SSBM pages of Fox and Marth) ---
# gamedata characters.csv (meleedb character_attributes `weight`): Fox 75, Marth 87
FOX_WEIGHT, MARTH_WEIGHT = gamedata.attributes(Character.FOX).weight, gamedata.attributes(Character.MARTH).weight
FOX_JUMP_SPEED = 3.68  # SmashWiki Fox: full-hop initial vertical velocity 3.68
FOX_JUMPSQUAT = 3  # SmashWiki Fox: jump squat 3 frames
FOX_DASH_SPEED = 2.2  # SmashWiki Fox: dash/run speed 2.2
MARTH_RUN_SPEED = 1.8  # SmashWiki Marth: run speed 1.8
LANDING_LAG = 4  # SmashWiki: normal landing lasts 4 frames for every character
SPOT_DODGE_INTANGIBLE = (2, 15)  # SmashWiki Fox spot dodge: intangible 2-15 of 22; measured the same (docs/intangibility.md)
ROLL_INTANGIBLE = (4, 19)  # measured: Fox's rolls, either way, 4-19 of 31 (docs/intangibility.md); meleelight [4, 16 frames]
SHINE_INTANGIBLE = (1, 1)  # measured: Fox's shine start, frame 1 only (docs/intangibility.md)
SHINE_JUMP_CANCEL = 4  # SmashWiki Fox shine: jump-cancellable from frame 4
SHIELD_MAX = 60.0  # SmashWiki shield: 60 HP
SHIELD_DECAY = 0.28  # SmashWiki shield: -0.28 per frame while held
SHIELD_REGEN = 0.07  # SmashWiki shield: +0.07 per frame while not held
SHIELD_RELEASE_FRAMES = 15  # SmashWiki shield drop: 15 frames
SHIELD_BREAK_FRAMES = 400  # guess: shield-break fly + dizzy simplified to one 400-frame stun
RESPAWN_INVULNERABLE = 120  # SmashWiki: 120 frames of invincibility after respawning
# Ledges, simplified: a player falling past the stage's side (not in hitstun) within this box
# below the edge catches the ledge and gets up onto the stage (hanging and getup options are
# left out). The box and the getup timing are guesses; the getup's 30 frames follow SmashWiki's
# slow-getup length for light characters, and it is intangible throughout (guess).
LEDGE_CATCH_X = 16.0  # guess: how far outside the edge the ledge grab box reaches
LEDGE_CATCH_Y = 30.0  # guess: how far below the stage's top it reaches
LEDGE_GETUP_FRAMES = 30  # guess (see above)
BODY_RADIUS = 3.5  # guess: hurtboxes are not in libmelee; a capsule of this radius
FOX_HEIGHT = 11.0  # characterdata.csv "size" for Fox, used as capsule height (guess)
MARTH_HEIGHT = 14.0  # characterdata.csv "size" for Marth, used as capsule height (guess)


@dataclass(frozen=True)
class Move:
    """One move's frame data: hitbox circles per frame, locomotion per frame, length, and what each
    hitbox does, per frame and hitbox id (the game's slot 0..3, libmelee's ``hitbox_{id+1}``)."""

    name: str
    action: int  # libmelee Action id
    length: int  # frames until actionable (IASA, else the animation's last frame)
    circles: np.ndarray  # [length, 4, 3]: (x forward, y up, radius); radius 0 = no hitbox
    locomotion: np.ndarray  # [length] forward movement per frame
    # [length, 4] each, from gamedata/hitboxes.csv (0 where no hitbox):
    damage: np.ndarray  # unstaled percent
    angle: np.ndarray  # degrees; 361 = Sakurai angle
    base_kb: np.ndarray
    kb_growth: np.ndarray
    set_kb: np.ndarray  # weight-dependent set knockback; 0 = regular knockback

    @property
    def active(self) -> tuple[int, int]:
        frames = np.flatnonzero(self.circles[:, :, 2].max(axis=1) > 0) + 1
        return int(frames.min()), int(frames.max())

    @property
    def reach(self) -> float:
        """Farthest forward point any hitbox reaches, from the attacker's position (no movement)."""
        c = self.circles
        return float(((c[:, :, 0] + c[:, :, 2]) * (c[:, :, 2] > 0)).max())

    def hitbox(self, frame: int, hitbox_id: int) -> tuple[float, float, float, float, float]:
        """(damage, angle, base_kb, kb_growth, set_kb) of hitbox ``hitbox_id`` on action frame ``frame``."""
        i = frame - 1
        return tuple(float(a[i, hitbox_id]) for a in (self.damage, self.angle, self.base_kb, self.kb_growth,
                                                      self.set_kb))  # type: ignore[return-value]


def _framedata(characters: tuple[Character, ...]) -> dict[tuple[int, int], list[dict[str, str]]]:
    """framedata.csv's rows of ``characters`` by (character, action) id. The file holds every character (66k
    rows); its lines are picked by their first field before the CSV is parsed, which keeps this import about
    1.5 s quicker than parsing and scanning the whole file per move."""
    wanted = tuple(f"{c.value}," for c in characters)
    with resources.files("melee").joinpath("framedata.csv").open() as f:
        header = f.readline()
        lines = [line for line in f if line.startswith(wanted)]
    out: dict[tuple[int, int], list[dict[str, str]]] = {}
    for r in csv.DictReader([header, *lines]):
        out.setdefault((int(r["character"]), int(r["action"])), []).append(r)
    return out


def _frames(character: Character, action: Action) -> list[dict[str, str]]:
    rows = _FRAMEDATA.get((character.value, action.value), [])
    if not rows:
        raise RuntimeError(f"libmelee framedata has no rows for {character.name} {action.name}")
    return sorted(rows, key=lambda r: int(r["frame"]))


def _move(name: str, character: Character, action: Action) -> Move:
    """The move's circles, locomotion and IASA from libmelee's framedata.csv, and every hitbox's
    damage and knockback from the game's files (gamedata/hitboxes.csv), matched by frame and id.

    The arena models each hitbox: where several of a move's hitboxes touch the victim on one frame,
    the lowest id hits (the game's rule; e.g. Marth's tipper, id 3, lands only where ids 0-2 miss).
    A circle with no game-data row, or a game-data hitbox with no circle, stops the import: the two
    sources must agree on every active frame and slot (SOURCES.md's mapping checks)."""
    rows = _frames(character, action)
    iasa = [int(r["frame"]) for r in rows if r["iasa"] == "True"]
    length = iasa[0] - 1 if iasa else len(rows)
    circles = np.zeros((len(rows), 4, 3), np.float32)
    loco = np.zeros(len(rows), np.float32)
    for i, r in enumerate(rows):
        for k in range(4):
            if r[f"hitbox_{k + 1}_status"] == "True":
                circles[i, k] = [float(r[f"hitbox_{k + 1}_x"]), float(r[f"hitbox_{k + 1}_y"]),
                                 float(r[f"hitbox_{k + 1}_size"])]
        loco[i] = float(r["locomotion_x"] or 0.0)
    values = np.zeros((5, length, 4), np.float32)  # damage, angle, base_kb, kb_growth, set_kb
    for i in range(length):
        game = {h.hitbox_id: h for h in gamedata.hitboxes_at(character, action, i + 1)}
        drawn = {k for k in range(4) if circles[i, k, 2] > 0}
        if set(game) != drawn:
            raise RuntimeError(f"{character.name} {action.name} frame {i + 1}: libmelee has hitbox ids "
                               f"{sorted(drawn)}, the game data {sorted(game)}")
        for k, h in game.items():
            values[:, i, k] = (h.damage, h.angle, h.base_kb, h.kb_growth, h.set_kb)
    return Move(name, action.value, length, circles[:length], loco[:length], *values)


_FRAMEDATA = _framedata((Character.FOX, Character.MARTH))

# Marth's attacks: hitboxes, locomotion and IASA from framedata.csv; every hitbox's damage, angle
# and knockback from the game's files (gamedata/hitboxes.csv; for which hitbox hits see _move).
# What the game data gives, ids 0-2 (sword and arm) / id 3 (tipper):
#   jab 4% / 6%, Sakurai angle, base 20 / 30, growth 50 / 60;
#   ftilt 9% / 13%, Sakurai angle, base 30 / 60, growth 70;
#   dtilt 9, 8, 8% / 10%, 30 degrees, base 40, 25, 20 / 50, growth 40;
#   fsmash 14% / 20%, Sakurai angle, base 60 / 80, growth 70;
#   dash attack 11% at 110 degrees, base 70, growth 55 (ids 0 and 3: 11% / 12%), 9% at the Sakurai
#   angle, base 35, growth 60 (ids 1 and 2, the arm).
MARTH_MOVES: tuple[Move, ...] = (
    _move("jab", Character.MARTH, A.NEUTRAL_ATTACK_1),
    _move("ftilt", Character.MARTH, A.FTILT_MID),
    _move("dtilt", Character.MARTH, A.DOWNTILT),
    _move("fsmash", Character.MARTH, A.FSMASH_MID),
    _move("dash_attack", Character.MARTH, A.DASH_ATTACK),
)
#: libmelee action ids of Marth's attacks (what the CPU swings with, what a dodger watches for).
MARTH_ATTACK_ACTIONS: tuple[int, ...] = tuple(m.action for m in MARTH_MOVES)
#: libmelee action ids of Marth's grabs, standing and out of a dash (enums.Action GRAB 212, GRAB_RUNNING 214; the
#: fight engine's Slot.GRAB and Slot.DASH_GRAB play them): Melee's CPU grabs from its attack lists, and a grab
#: ends a dodging episode as a hit does.
MARTH_GRAB_ACTIONS: tuple[int, ...] = (A.GRAB.value, A.GRAB_RUNNING.value)
# Fox's shine: hitbox on frame 1 (framedata.csv); from the game data: 5%, 0 degrees, set knockback
# 80 (growth 100, base 0), electric (the element matters only for hitlag, which the arena leaves out).
FOX_SHINE = _move("shine", Character.FOX, A.DOWN_B_GROUND_START)
FOX_ROLL_FORWARD = _move("roll_forward", Character.FOX, A.ROLL_FORWARD)  # no hitboxes
FOX_ROLL_BACKWARD = _move("roll_backward", Character.FOX, A.ROLL_BACKWARD)
FOX_SPOT_DODGE = _move("spot_dodge", Character.FOX, A.SPOTDODGE)  # 22 frames
