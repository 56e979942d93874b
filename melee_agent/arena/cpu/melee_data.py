"""Melee's CPU (``cpu = "melee"``): its numbers, each beside its source, and its per-level tables as tensors.

Sources as in :mod:`melee_agent.arena.cpu.melee`: ``[D fn]`` doldecomp/melee (snapshot e7844caa6,
``src/melee/ft/ftcpuattack.c`` and ``src/melee/ft/chara/ftCommon/ftCo_0A01.c``), ``[W ...]`` SmashWiki. Marth's
attack lists and their command scripts live in ``PlCo.dat`` (not decompiled): what stands for them here is a
**guess**, marked so.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from melee.enums import Action
from torch import Tensor

from melee_agent.arena.fight.moves import Slot

MELEE_SEED_OFFSET = 27_183  # the melee CPU's draws: a seed offset of its own
SHIELD = float(Action.SHIELD.value)
DASHING, RUNNING = float(Action.DASHING.value), float(Action.RUNNING.value)
#: [D ftCo_800B8A9C]: the target's motion states ``ftCo_MS_Catch`` .. ``ftCo_MS_EscapeAir`` (grabs, throws, being held,
#: rolls, spot dodge, air dodge): libmelee's action ids 212 (GRAB) .. 236 (AIRDODGE), the same numbering.
CATCH, ESCAPE_AIR = float(Action.GRAB.value), float(Action.AIRDODGE.value)

# Plans (FightState.cpu_plan) and what cpu_act holds for each (ATTACK: the slot; DASH_GRAB, TURN, DEFEND_ROLL: a
# direction in world units). HOLD_SHIELD is kept as a value for old states; no rule starts it (see defend).
NONE, ATTACK, DEFEND_ROLL, HOLD_SHIELD, UPB, DASH_GRAB, TURN = 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0
#: Platforms (:mod:`.melee_platforms`): the jump script toward a destination above or beyond (cpu_act: the stick's x),
#: and the drop through a platform.
PLAT_JUMP, PLAT_DROP = 7.0, 8.0
#: ftCo_800A0148: ReleaseY, WaitFor 1, the stick toward the destination (127) if it is more than 30 away in x (else
#: neutral), PressY, WaitFor 10 (a full hop), ReleaseY, WaitFor 1, Done.
JUMP_TOWARD, JUMP_HOLD = 30.0, 10
#: ftCo_800A08F0: the stick neutral, WaitFor by level 0-9, SetLstickY -127, WaitFor 5, neutral, WaitFor 1, Done.
DROP_WAIT = (45, 30, 30, 15, 15, 10, 10, 5, 5, 1)
DROP_HOLD = 5
#: ftCo_800AB224's choice when the destination is not on the CPU's own floor: the angle up to it (atan2(dy, |dx|))
#: above 35 degrees jumps (facing it), below -45 degrees drops (on a platform), between walks on; ftCo_800AA844 at an
#: island's end (within 5, ftCo_800A28D0) jumps with the destination above or more than 40 away, else walks off.
UP_ANGLE, STEEP_ANGLE, DOWN_ANGLE = 0.6108652334660292, 1.3089969288557768, -0.7853981573134661
ISLAND_END, FAR_X = 5.0, 40.0
#: ftCo_800AB224: the destination's island is the floor found from 5 above it, 10 down (mpIsland_8005AC14).
ISLAND_ABOVE, ISLAND_BELOW = 5.0, 10.0

#: ftCo_800AA320: the approach stick's clamp per level 0-9, of 127.
STICK_CLAMP = (0x43, 0x48, 0x4D, 0x52, 0x57, 0x5C, 0x61, 0x6B, 0x75, 0x7F)
#: ftCo_800AA320: the approach stick's step per frame per level 0-9, of 127 (LstickXTowardDestinationClamped).
STICK_STEP = (1, 2, 2, 2, 2, 2, 4, 4, 8, 8)
#: ftCo_800A5ACC: defence only on frames with (x7C mod 120) > this (level 0-1 never: 120; level 9 always: -1).
DEFEND_AFTER = (120, 120, 100, 80, 60, 40, 30, 20, 10, -1)
#: ftCo_800B885C: levels 0-4 start attacks only when (x80 mod period) > after; levels 5-9 always.
ATTACK_PERIOD = (300, 300, 300, 240, 240, 1, 1, 1, 1, 1)
ATTACK_AFTER = (240, 180, 120, 120, 60, -1, -1, -1, -1, -1)
#: ftCo_800B63D8: the wait before an attack is played: int(span x u) + base frames (level 9: none).
WAIT_SPAN = (40, 35, 30, 25, 25, 20, 15, 10, 5, 0)
WAIT_BASE = (5, 5, 5, 5, 0, 0, 0, 0, 0, 0)
#: The CPU's init in ftCo_0A01.c sets x7C = x80 = int(10 u) at spawn; the arena starts x80 at 0 with the game and
#: reads x7C as the game's frame (``episode_frame``): the phase of both counters is a guess.
RECOVERY_STICK = 0x58 / 127  # ftCo_CpuRecoverDiagonally: the up-B's stick, x and y (45 degrees)
UPB_DRIFT_FRAMES = 40  # guess: frames of full drift after the up-B (the script's end; Fox's waits 40)
NEAR_TURN = 3.0  # guess: closer than this it does not turn to face the agent
APPROACH_RAMP = 40.0  # ftCo_800A101C: x3C = 40, the band beyond ``x38`` where the approach walks
APPROACH_NEAR = 5.0  # ftCo_800A101C: x38 = 5 at spawn (ftCo_800A75DC then sets it to the stop distance below)
#: ftCo_800A0CB0 (default case, Marth): x56C = 4 (1 - u^3), drawn again when x7C mod 600 == 0.
STOP_SPAN, STOP_REDRAW = 4.0, 600.0
DASH_WAIT = 2  # ftCo_800AA42C: LstickXTowardDestination 0, WaitFor 2, then 127 (a flick: the dash)
DASH_GRAB_RUN = 2  # guess: frames of dash before the dash grab's Z (the dash-grab script is PlCo.dat data)
#: ftCo_CpuTurnAround (ftCo_0A01.c): stick neutral, WaitFor 1, LstickXForward 0xB0 (80 of 127 back), WaitFor 1,
#: WaitFor 10: 12 frames of script, the mode's handler again the frame after its Done [D ftCo_800B2790], 13 in all.
TURN_FRAMES = 13
TURN_STICK = 0x50 / 127  # 0xB0 as a signed byte: -80, forward units (back)
RAMP_FLOOR = 80 / 127  # ftCo_800AA42C_inline0: the ramp starts at stick 80
THREAT_SWEEP = 3.0  # ftCo_800BB104: the hitbox's motion extended 3 frames ahead
ROLL_NEAR = 30.0  # ftCo_800BA9A0 (inline2): within 30, roll behind the attacker; beyond, away
LEDGE_NEAR = 30.0  # ftCo_800ACB44: the agent within 30 of the ledge
GRAB_EDGE = 30.0  # ftCo_800B683C: within 30 of a stage end, throw toward it
#: guess: the agent's half width, front and back (the game's x55C / x560, its hurt capsules' extent, ftCo_800A0DA4;
#: the arena's fighters have no hurt capsules of their own), and ``x564``, their mean.
BODY_HALF_WIDTH = 4.0
#: Marth's ground attack list: slot, weight, the entry's box bottom and top (x10, x14: y relative to Marth's feet,
#: scaled by ``x570`` as the reach), and its frame gate (looked at only when ``x80 % x1C == 0``, ftCo_800B4AB0).
#: The box's front is the move's farthest hitbox point (its reach), its back Marth's centre (x08 = 0). Its
#: lookahead (x04) is the move's first active frame. All guesses ([W-flaws]: jab and dash grab first; tilts and
#: smashes seldom): PlCo.dat is not decompiled. The up tilt's and up smash's boxes start above a standing Fox
#: (20 x 0.55 > his height 11 at every level's scale).
GROUND_LIST = ((Slot.JAB1, 4.0, -10.0, 14.0, 1), (Slot.GRAB, 3.0, -10.0, 12.0, 1), (Slot.FTILT, 0.6, -10.0, 16.0, 6),
               (Slot.DTILT, 0.5, -10.0, 8.0, 6), (Slot.UTILT, 0.4, 20.0, 40.0, 6), (Slot.FSMASH, 0.4, -10.0, 16.0, 40),
               (Slot.USMASH, 0.2, 20.0, 40.0, 20), (Slot.DSMASH, 0.2, -10.0, 8.0, 20))
#: The grab entry is a dash grab. Guess, shaped by [W-flaws] ("constantly approaching to then spam their neutral
#: attack and dash grabs when close"; with the player very close and still, "only spam their jabs, grabbing only if
#: the player shields"; no dash attack named): the versus CPU never dashes to approach [D ftCo_800B24B8], so the dash
#: must be the entry's own script. The entry is a candidate from a stand or a walk when the agent is within a dash
#: grab's reach (the dash's DASH_WAIT neutral frames and DASH_GRAB_RUN dashing frames, then the grab's startup, at
#: the dash's initial speed) but beyond a standing grab's; against a shielding agent (the anti-shield list, levels
#: 6-9) in a standing grab's reach, Z at once. The list has no dash attack.
#: Marth's air list (guess): by where the agent is.
AIR_LIST = ((Slot.NAIR, 1.0), (Slot.FAIR, 1.0), (Slot.UAIR, 1.0), (Slot.DAIR, 0.5), (Slot.BAIR, 0.5))
# The controller for each attack: (a, z, sx in facing units, sy).
PRESS = {Slot.JAB1: (1, 0, 0.0, 0.0), Slot.GRAB: (0, 1, 0.0, 0.0), Slot.FTILT: (1, 0, 0.5, 0.0),
         Slot.DTILT: (1, 0, 0.0, -0.5), Slot.UTILT: (1, 0, 0.0, 0.5), Slot.FSMASH: (1, 0, 1.0, 0.0),
         Slot.USMASH: (1, 0, 0.0, 1.0), Slot.DSMASH: (1, 0, 0.0, -1.0),
         Slot.NAIR: (1, 0, 0.0, 0.0), Slot.FAIR: (1, 0, 1.0, 0.0), Slot.BAIR: (1, 0, -1.0, 0.0),
         Slot.UAIR: (1, 0, 0.0, 1.0), Slot.DAIR: (1, 0, 0.0, -1.0)}
N_DRAWS = 12 + len(GROUND_LIST) + len(AIR_LIST)


@dataclass(frozen=True)
class MeleeLevels:
    """The per-level constants above as ``[10]`` tensors indexed by level (0-9)."""

    stick: Tensor
    step: Tensor
    defend_after: Tensor
    attack_period: Tensor
    attack_after: Tensor
    wait_span: Tensor
    wait_base: Tensor
    drop_wait: Tensor

    @classmethod
    def build(cls, device: torch.device) -> MeleeLevels:
        t = lambda v: torch.tensor(v, dtype=torch.float32, device=device)  # noqa: E731
        return cls(t([s / 127 for s in STICK_CLAMP]), t([s / 127 for s in STICK_STEP]), t(DEFEND_AFTER), t(ATTACK_PERIOD),
                   t(ATTACK_AFTER), t(WAIT_SPAN), t(WAIT_BASE), t(DROP_WAIT))


def walk_limit(gap: Tensor, clamp: Tensor, near: Tensor | float = APPROACH_NEAR) -> Tensor:
    """The approach stick's limit ``gap`` from the destination, of full tilt [D ftCo_800AA42C_inline0]: the level's
    ``clamp`` beyond ``APPROACH_RAMP``; within it ramped from max(80, 127 x the horizontal deadzone) of 127 at
    ``near`` (``x38``) to the clamp, never above the clamp. The deadzone is PlCo.dat data; 80 as the floor assumes
    it is under 0.63 (guess: Melee's stick deadzone is commonly given as 0.2875).

    >>> import torch
    >>> [round(v * 127, 1) for v in walk_limit(torch.tensor([60.0, 22.5, 5.0]), torch.ones(3)).tolist()]
    [127.0, 103.5, 80.0]
    """
    ramp = RAMP_FLOOR + ((gap - near) / (APPROACH_RAMP - near)).clamp(0.0, 1.0) * (clamp - RAMP_FLOOR)
    return torch.where(gap > APPROACH_RAMP, clamp, torch.minimum(ramp, clamp))
