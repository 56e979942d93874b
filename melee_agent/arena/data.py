"""Melee's own numbers for the arena, read from libmelee's data files at import.

Sources, named beside each number:

* ``characterdata.csv`` (libmelee): gravity, terminal and fast-fall speed, walk speed, double-jump
  speeds, air speed, air mobility, air friction, ground friction;
* ``framedata.csv`` (libmelee): per-frame hitboxes (offset and radius), locomotion and IASA for
  Marth's attacks, Fox's rolls, spot dodge and shine;
* ``stages.py`` (libmelee): Final Destination's edges and blast zones;
* ``enums.Action`` (libmelee): action ids;
* SmashWiki frame lists for what libmelee does not carry (intangibility windows, weights,
  damage and knockback values, jump-squat and landing lag). Values marked ``guess`` could not be
  checked against a source here.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources

import melee
import numpy as np
from melee.enums import Action, Character

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

# --- Final Destination (libmelee stages.py) ---
STAGE = melee.enums.Stage.FINAL_DESTINATION
EDGE = float(melee.stages.EDGE_GROUND_POSITION[STAGE])  # 85.5657
BLAST_LEFT, BLAST_RIGHT, BLAST_TOP, BLAST_BOTTOM = (float(v) for v in melee.stages.BLASTZONES[STAGE])

# --- numbers libmelee does not carry (SmashWiki, SSBM pages of Fox and Marth) ---
FOX_WEIGHT, MARTH_WEIGHT = 75.0, 87.0  # SmashWiki "Weight": Fox 75, Marth 87
FOX_JUMP_SPEED = 3.68  # SmashWiki Fox: full-hop initial vertical velocity 3.68
FOX_JUMPSQUAT = 3  # SmashWiki Fox: jump squat 3 frames
FOX_DASH_SPEED = 2.2  # SmashWiki Fox: dash/run speed 2.2
MARTH_RUN_SPEED = 1.8  # SmashWiki Marth: run speed 1.8
LANDING_LAG = 4  # SmashWiki: normal landing lasts 4 frames for every character
SPOT_DODGE_INTANGIBLE = (2, 15)  # docs/design.md / SmashWiki Fox spot dodge: intangible 2-15 of 22
ROLL_INTANGIBLE = (4, 15)  # SmashWiki Fox roll: intangible 4-15 (guess: not checked here)
SHINE_INTANGIBLE = (1, 1)  # SmashWiki Fox shine: intangible on frame 1 (guess: not checked here)
SHINE_JUMP_CANCEL = 4  # SmashWiki Fox shine: jump-cancellable from frame 4
SHIELD_MAX = 60.0  # SmashWiki shield: 60 HP
SHIELD_DECAY = 0.28  # SmashWiki shield: -0.28 per frame while held
SHIELD_REGEN = 0.07  # SmashWiki shield: +0.07 per frame while not held
SHIELD_RELEASE_FRAMES = 15  # SmashWiki shield drop: 15 frames
SHIELD_BREAK_FRAMES = 400  # guess: shield-break fly + dizzy simplified to one 400-frame stun
RESPAWN_INVULNERABLE = 120  # SmashWiki: 120 frames of invincibility after respawning
KNOCKBACK_DECAY = 0.051  # SmashWiki knockback: launch speed falls by 0.051 per frame
LAUNCH_SPEED = 0.03  # SmashWiki knockback: initial launch speed = 0.03 x knockback
HITSTUN_PER_KB = 0.4  # SmashWiki hitstun: floor(0.4 x knockback)
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
    """One move's frame data: hitbox circles per frame, locomotion per frame, length, hit values."""

    name: str
    action: int  # libmelee Action id
    length: int  # frames until actionable (IASA, else the animation's last frame)
    circles: np.ndarray  # [length, 4, 3]: (x forward, y up, radius); radius 0 = no hitbox
    locomotion: np.ndarray  # [length] forward movement per frame
    damage: float
    base_kb: float
    kb_growth: float
    angle: float  # degrees; 361 = Sakurai angle

    @property
    def active(self) -> tuple[int, int]:
        frames = np.flatnonzero(self.circles[:, :, 2].max(axis=1) > 0) + 1
        return int(frames.min()), int(frames.max())

    @property
    def reach(self) -> float:
        """Farthest forward point any hitbox reaches, from the attacker's position (no movement)."""
        c = self.circles
        return float(((c[:, :, 0] + c[:, :, 2]) * (c[:, :, 2] > 0)).max())


def _frames(character: Character, action: Action) -> list[dict[str, str]]:
    rows = [r for r in _FRAMEDATA if int(r["character"]) == character.value and int(r["action"]) == action.value]
    if not rows:
        raise RuntimeError(f"libmelee framedata has no rows for {character.name} {action.name}")
    return sorted(rows, key=lambda r: int(r["frame"]))


def _move(name: str, character: Character, action: Action, damage: float, base_kb: float,
          kb_growth: float, angle: float) -> Move:
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
    return Move(name, action.value, length, circles[:length], loco[:length], damage, base_kb, kb_growth, angle)


_FRAMEDATA = _csv("framedata.csv")

# Marth's attacks: hitboxes, locomotion and IASA from framedata.csv; damage (untipped) and
# knockback values from SmashWiki's Marth (SSBM) page; knockback values are guesses where noted.
MARTH_MOVES: tuple[Move, ...] = (
    _move("jab", Character.MARTH, A.NEUTRAL_ATTACK_1, 4, 0, 50, 361),  # 4%: SmashWiki; kb: guess
    _move("ftilt", Character.MARTH, A.FTILT_MID, 9, 5, 75, 361),  # 9%: SmashWiki; kb: guess
    _move("dtilt", Character.MARTH, A.DOWNTILT, 9, 10, 50, 30),  # 9%: SmashWiki; kb/angle: guess
    _move("fsmash", Character.MARTH, A.FSMASH_MID, 15, 30, 70, 361),  # 15%: SmashWiki; kb: guess
    _move("dash_attack", Character.MARTH, A.DASH_ATTACK, 10, 40, 60, 72),  # 10%: SmashWiki; kb: guess
)
#: libmelee action ids of Marth's attacks (what the CPU swings with, what a dodger watches for).
MARTH_ATTACK_ACTIONS: tuple[int, ...] = tuple(m.action for m in MARTH_MOVES)
# Fox's shine: hitbox on frame 1 (framedata.csv); 5% and knockback 80 base, 0 growth (set-like)
# at 84 degrees per SmashWiki's Reflector page (guess: not checked here).
FOX_SHINE = _move("shine", Character.FOX, A.DOWN_B_GROUND_START, 5, 80, 0, 84)
FOX_ROLL_FORWARD = _move("roll_forward", Character.FOX, A.ROLL_FORWARD, 0, 0, 0, 0)
FOX_ROLL_BACKWARD = _move("roll_backward", Character.FOX, A.ROLL_BACKWARD, 0, 0, 0, 0)
FOX_SPOT_DODGE = _move("spot_dodge", Character.FOX, A.SPOTDODGE, 0, 0, 0, 0)  # 22 frames
