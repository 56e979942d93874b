"""Melee's own CPU for Marth (``cpu = "melee"``): the game's AI as the decompilation and SmashWiki describe it.

:mod:`.marth_cpu` (``cpu = "designed"``) is a design whose per-level values are guesses. This module
follows the game's CPU instead. Its sources, cited beside each rule below as ``[D fn]`` or ``[W page]``:

* **[D]** doldecomp/melee (snapshot e7844caa6): ``src/melee/ft/chara/ftCommon/ftCo_0A01.c`` (the CPU's
  behaviour dispatcher, movement, recovery, DI, ledge, defence gate), ``src/melee/ft/ftcpuattack.c``
  (attack choice, waits, shield, rolls, grabs, threat detection), ``src/melee/ft/ftcmdscript.h`` (the
  command scripts: press / release a button, set a stick, wait), ``ftCo_Guard.c`` / ``ftCo_Wait.c``
  (what a shield press does). The CPU level is ``Fighter.x1A88.level``, set from the player's
  ``cpu_level`` (``ftCo_800A101C``); versus levels 1-9 are that field (0 is unused in versus).
* **[W-AI]** SmashWiki "Artificial intelligence (SSBM)" / "Artificial intelligence":
  https://www.ssbwiki.com/Artificial_intelligence -- high-level CPUs perfect-shield almost any attack
  and counterattack the instant they can act; they never edgehog, chaingrab, L-cancel or wavedash.
* **[W-flaws]** SmashWiki "List of flaws in artificial intelligence (SSBM)":
  https://www.ssbwiki.com/List_of_flaws_in_artificial_intelligence_(SSBM) -- CPUs recover only with
  their midair jumps and up special (never side special or air dodge), never fight off edgeguarders.
* **[W-PS]** SmashWiki "Perfect shield": https://www.ssbwiki.com/Perfect_shield -- a shield that meets
  an attack on its first frames (Melee: pressed about four frames before the hit) takes no shield damage.

What the decompilation does *not* hold is the per-character data: Marth's attack lists (which moves,
their reach boxes, weights, minimum levels, frame-counter gates) and his command scripts live in the
game's ``PlCo.dat`` (``Fighter_804D64FC``, loaded at boot: ``ftCo_800B4880``, ``fighter.c``). Those
values here are **guesses** shaped by [W-flaws] ("mostly jab and dash grab, seldom tilts or smashes,
almost never aerials, never charged smashes"), and marked so.

Each frame, in the dispatcher's order of precedence ([D ftCo_0A01.c, the function that sets
``x1A88.x18``: hitstun 0x12, grabbing 9, ledge 4, grabbed 0x10, defence 7, attack 2, then moving]):

1. **hitstun / hitlag -- DI** [D ftCo_800AC5A0]: on ``(t mod 120) > 120 - 12 L`` frames (a share L/10)
   the stick is held perpendicular to the launch, on the side that points up; else neutral.
2. **holding the agent** [D ftCo_800B683C, the grabbing mode's handler (case 9)]: pummel with probability ``0.5 / (1 + pummels)``; else, within 30
   of a stage end, throw toward it; else up, down, forward or back throw, a quarter each.
3. **ledge** [D ftCo_800ACB44, ftCo_800A0AF4]: agent within 30: roll (``0.1 L``) or ledge attack; else
   getup 60%, roll 20%, attack 10%, jump 10%. The arena has no ledge roll or ledge attack: both play as
   the getup (left out of the arena's ledge options, fighter.py).
4. **recovery** [D ftCo_800A9CB4 / ftCo_800A3234 / ftCo_800A96B8]: off stage, falling and below the ledge,
   it double-jumps toward the ledge while it has a jump, else up-Bs with the stick at (88, 88)/127 toward
   the stage -- one fixed 45-degree angle (``ftCo_CpuRecoverDiagonally``, Marth takes the default case) --
   then holds full drift toward the stage. Otherwise it drifts toward the ledge. Never side-B, never
   an air dodge, never a wall jump [W-flaws].
5. **defence** [D ftCo_800A5ACC gate, ftCo_800BB9B4 / ftCo_800BB104 detection, ftCo_800BA9A0 response]:
   only on ``(t mod 120) > g(L)`` frames (g = never at level 1; 100, 80, 60, 40, 30, 20, 10 for levels 2-8;
   always at level 9). A threat is an agent hitbox (not a grab) that was already out on the last frame
   and, swept 3 frames ahead along its own motion, meets Marth's body (a sphere at half his height).
   On the ground: already shielding -> keep the shield ``(9 - L) x U{4..7}`` frames [D ftCo_800B9F90]; else
   the roll script [D ftCo_800BA160 / ftCo_800BA224]: one idle frame, then shield pressed (its first frames
   are the perfect-shield window [W-PS]) and a roll -- behind the attacker within 30, away beyond 30.
   In the air (over the stage): an air dodge [D ftCo_800BA9A0, ``ftCo_CpuRetapR``].
6. **attack** [D ftCo_800B8A9C, ftCo_800B4AB0, ftCo_800B885C, ftCo_800B63D8]: levels 1-4 may only start
   an attack on part of each cycle (level 1: 119 of 300 frames, 2: 179/300, 3: 119/240, 4: 179/240;
   levels 5-9: always). Among Marth's moves whose reach box, scaled by ``0.5 x (0.05 (L + 1) + 0.05 u) + 0.5``
   (``x570``, redrawn every 30 frames [D ftCo_800B33B0]), holds the agent as predicted at the move's
   first active frame, one is drawn by weight; against a shielding agent at levels 6-9 the anti-shield
   list (guess: grab) is used first [D ftCo_800B8A9C, ``x10`` list]. Then the CPU waits a random
   ``ftCo_800B63D8`` time (level 1: 5-39 frames ... level 8: 0-4, level 9: none) and plays the move
   whatever the agent did meanwhile (its follow-through); with no wait the press is on the decision frame
   itself (the script is run the frame it is written: ``ftCo_800B3900``). A or Z in shield is a shield grab (as in Melee),
   so an attack chosen out of shield is the counterattack out of a (perfect) shield. Aerials only when
   already airborne near the agent at level >= 4 [D ftCo_800B89CC]; never a short-hop aerial.
7. **moving** [D ftCo_800AA42C, ftCo_800AA320, ftCo_800B24B8]: with the agent more than 3 behind, the turn script
   ``ftCo_CpuTurnAround`` (stick neutral, WaitFor 1, stick 80 of 127 back, WaitFor 1, WaitFor 10): 13 frames in
   which nothing else is chosen (:data:`TURN_FRAMES`). Else a walk toward the agent from any distance, never a
   dash: ``xF8_b0``, the dash in ``ftCo_800AA42C``, is set (``ftCo_CpuSetTargetFlags`` in ``ftCo_800B24B8``) only
   when ``ftCo_800A5CE0`` finds an enemy holding a Starman or the hammer, to flee from; with none
   ``ftCo_CpuInitNoTarget`` clears it. The stick moves toward the agent by the level's step per frame (1, 2, 2, 2,
   2, 2, 4, 4, 8, 8 of 127 for levels 0-9: ``LstickXTowardDestinationClamped``, ftcmdscript.c) up to the level's
   clamp (67, 72, 77, 82, 87, 92, 97, 107, 117, 127), ramped within ``5 + 40`` (``x38 = 5``, ``x3C = 40``) from 80
   at 5 away (:func:`walk_limit`) -- the stick never flicked; within 5, neutral. Never past the stage's edge (it
   never goes out to edgeguard or edgehog [W-AI, W-flaws]). The only dash is the grab entry's own script (a dash
   grab, a guess: see :data:`GROUND_LIST`). Until 2026-11-27 this CPU dashed in from beyond 45, a misreading of
   ``ftCo_800B24B8``; the fight results made before then (docs/results) played that CPU.

Never: charged smashes (A is pressed for one frame), L-cancel, wavedash, short-hop aerials, side-B or air
dodge to recover, edgehog, chaingrab (throws are drawn as above) [W-AI, W-flaws].

Per-environment random numbers are counter draws (:mod:`melee_agent.arena.draws`); ``t`` is the game's
frame (``episode_frame``): the phase of the game's own per-CPU counters is a guess.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from melee.enums import Action
from torch import Tensor

from melee_agent.arena.draws import uniform_streams
from melee_agent.arena.env_state import CPU, EnvState
from melee_agent.arena.fight.fighter import rows_of
from melee_agent.arena.fight.marth_cpu import CpuDecision, PadOut, mine, put, theirs
from melee_agent.arena.fight.moves import H, FightTable, Slot, row

MELEE_SEED_OFFSET = 27_183  # the melee CPU's draws: a seed offset of its own
SHIELD = float(Action.SHIELD.value)
DASHING, RUNNING = float(Action.DASHING.value), float(Action.RUNNING.value)

# Plans (FightState.cpu_plan) and what cpu_act holds for each (ATTACK: the slot; DASH_GRAB, TURN, DEFEND_ROLL: a
# direction in world units).
NONE, ATTACK, DEFEND_ROLL, HOLD_SHIELD, UPB, DASH_GRAB, TURN = 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0

#: ftCo_800AA320: the approach stick's clamp per level 0-9, of 127.
STICK_CLAMP = (0x43, 0x48, 0x4D, 0x52, 0x57, 0x5C, 0x61, 0x6B, 0x75, 0x7F)
#: ftCo_800AA320: the approach stick's step per frame per level 0-9, of 127 (LstickXTowardDestinationClamped).
STICK_STEP = (1, 2, 2, 2, 2, 2, 4, 4, 8, 8)
#: ftCo_800A5ACC: defence only on frames with (t mod 120) > this (level 0-1 never: 120; level 9 always: -1).
DEFEND_AFTER = (120, 120, 100, 80, 60, 40, 30, 20, 10, -1)
#: ftCo_800B885C: levels 0-4 start attacks only when (t mod period) > after; levels 5-9 always.
ATTACK_PERIOD = (300, 300, 300, 240, 240, 1, 1, 1, 1, 1)
ATTACK_AFTER = (240, 180, 120, 120, 60, -1, -1, -1, -1, -1)
#: ftCo_800B63D8: the wait before an attack is played: int(span x u) + base frames (level 9: none).
WAIT_SPAN = (40, 35, 30, 25, 25, 20, 15, 10, 5, 0)
WAIT_BASE = (5, 5, 5, 5, 0, 0, 0, 0, 0, 0)
RECOVERY_STICK = 0x58 / 127  # ftCo_CpuRecoverDiagonally: the up-B's stick, x and y (45 degrees)
UPB_DRIFT_FRAMES = 40  # guess: frames of full drift after the up-B (the script's end; Fox's waits 40)
NEAR_TURN = 3.0  # guess: closer than this it does not turn to face the agent
APPROACH_RAMP = 40.0  # ftCo_800A101C: x3C = 40, the band beyond ``x38`` where the approach walks
APPROACH_NEAR = 5.0  # ftCo_800A101C / ftCo_800A1F3C: x38 = 5, within it the stick is neutral
DASH_WAIT = 2  # ftCo_800AA42C: LstickXTowardDestination 0, WaitFor 2, then 127 (a flick: the dash)
DASH_GRAB_RUN = 2  # guess: frames of dash before the dash grab's Z (the dash-grab script is PlCo.dat data)
#: ftCo_CpuTurnAround (ftCo_0A01.c): stick neutral, WaitFor 1, LstickXForward 0xB0 (80 of 127 back), WaitFor 1,
#: WaitFor 10: 12 frames of script, and the mode's handler runs again the frame after its Done [D ftCo_800B2790:
#: only with no script running], so 13 frames choose nothing: the stick neutral on the first, back on the rest.
TURN_FRAMES = 13
TURN_STICK = 0x50 / 127  # 0xB0 as a signed byte: -80, forward units (back)
RAMP_FLOOR = 80 / 127  # ftCo_800AA42C_inline0: the ramp starts at stick 80
THREAT_SWEEP = 3.0  # ftCo_800BB104: the hitbox's motion extended 3 frames ahead
ROLL_NEAR = 30.0  # ftCo_800BA9A0 (inline2): within 30, roll behind the attacker; beyond, away
LEDGE_NEAR = 30.0  # ftCo_800ACB44: the agent within 30 of the ledge
GRAB_EDGE = 30.0  # ftCo_800B683C: within 30 of a stage end, throw toward it
BODY_HALF_WIDTH = 4.0  # guess: the agent's half width (x55C/x560) added to a move's reach
#: Marth's ground attack list: slot, weight, lowest and highest y of the agent relative to Marth, and the entry's
#: frame gate (it is looked at only when the CPU's frame counter is a multiple of it: ``x80 % x1C`` in
#: ftCo_800B4AB0). Guesses ([W-flaws]: jab and dash grab first; tilts and smashes seldom): PlCo.dat is not
#: decompiled.
GROUND_LIST = ((Slot.JAB1, 4.0, -10.0, 14.0, 1), (Slot.GRAB, 3.0, -10.0, 12.0, 1), (Slot.FTILT, 0.6, -10.0, 16.0, 6),
               (Slot.DTILT, 0.5, -10.0, 8.0, 6), (Slot.UTILT, 0.4, 8.0, 30.0, 6), (Slot.FSMASH, 0.4, -10.0, 16.0, 40),
               (Slot.USMASH, 0.2, 6.0, 30.0, 20), (Slot.DSMASH, 0.2, -10.0, 8.0, 20))
#: The grab entry is a dash grab. Guess, shaped by [W-flaws] ("constantly approaching to then spam their neutral
#: attack and dash grabs when close"; with the player very close and still, "only spam their jabs, grabbing only if
#: the player shields"; no dash attack named): the versus CPU never dashes to approach [D ftCo_800B24B8], so the dash
#: must be the entry's own script (PlCo.dat, not decompiled). Here the entry is a candidate from a stand or a walk
#: when the agent is within a dash grab's reach (the dash's :data:`DASH_WAIT` neutral frames and
#: :data:`DASH_GRAB_RUN` dashing frames, then the grab's startup, at the dash's initial speed) but beyond a standing
#: grab's (close and still, jabs); its script is the dash (stick neutral, then 127 toward the agent) and Z while
#: dashing. Against a shielding agent (the anti-shield list, levels 6-9, guess: the grab) in a standing grab's reach,
#: Z at once (a standing grab). The list has no dash attack.
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

    @classmethod
    def build(cls, device: torch.device) -> MeleeLevels:
        t = lambda v: torch.tensor(v, dtype=torch.float32, device=device)  # noqa: E731
        return cls(t([s / 127 for s in STICK_CLAMP]), t([s / 127 for s in STICK_STEP]), t(DEFEND_AFTER), t(ATTACK_PERIOD), t(ATTACK_AFTER),
                   t(WAIT_SPAN), t(WAIT_BASE))


def walk_limit(gap: Tensor, clamp: Tensor) -> Tensor:
    """The approach stick's limit ``gap`` from the destination, of full tilt [D ftCo_800AA42C_inline0]: the level's
    ``clamp`` beyond ``APPROACH_RAMP``; within it ramped from max(80, 127 x the horizontal deadzone) of 127 at
    ``APPROACH_NEAR`` to the clamp, never above the clamp. The deadzone is PlCo.dat data; 80 as the floor assumes
    it is under 0.63 (guess: Melee's stick deadzone is commonly given as 0.2875).

    >>> import torch
    >>> [round(v * 127, 1) for v in walk_limit(torch.tensor([60.0, 22.5, 5.0]), torch.ones(3)).tolist()]
    [127.0, 103.5, 80.0]
    """
    ramp = RAMP_FLOOR + ((gap - APPROACH_NEAR) / (APPROACH_RAMP - APPROACH_NEAR)).clamp(0.0, 1.0) * (clamp - RAMP_FLOOR)
    return torch.where(gap > APPROACH_RAMP, clamp, torch.minimum(ramp, clamp))


def _threat(state: EnvState, T: FightTable) -> Tensor:
    """[D ftCo_800BB9B4 / ftCo_800BB104] ``[B]``: an agent hitbox (not a grab) that was out on the last frame (the
    CPU reads the capsules as the last frame left them, past their first update), swept 3 frames ahead along its
    motion since the frame before, meets Marth's body sphere (centre at half his height, radius half his height)."""
    ps = state.players
    fr = theirs(rows_of(ps.move))
    f_af = theirs(ps.action_frame)
    last = (f_af - 1).long().clamp(min=0, max=T.hit.shape[1] - 1)
    before = (f_af - 2).long().clamp(min=0, max=T.hit.shape[1] - 1)
    seen = (theirs(ps.move) >= 0) & (f_af >= 2)
    ax, ay, face = theirs(ps.position_x), theirs(ps.position_y), theirs(ps.facing)
    avx, avy = theirs(ps.speed_x) + theirs(ps.speed_x_attack), theirs(ps.speed_y) + theirs(ps.speed_y_attack)
    half = 0.5 * mine(T.attrs.height)
    cx, cy = mine(ps.position_x), mine(ps.position_y) + half
    hit = torch.zeros_like(seen)
    for k in range(4):
        f = lambda hh, when, k=k: T.hitf[hh, k][fr, when]  # noqa: E731
        r1 = f(H.RADIUS, last)
        had = (f(H.RADIUS, before) > 0) & (f_af >= 3)  # out the frame before too: it has a previous position
        live = (r1 > 0) & (f(H.GRAB, last) == 0)
        x1, y1 = ax + face * f(H.X, last), ay + f(H.Y, last)
        x0 = torch.where(had, ax - avx + face * f(H.X, before), x1)
        y0 = torch.where(had, ay - avy + f(H.Y, before), y1)
        ex, ey = THREAT_SWEEP * (x1 - x0), THREAT_SWEEP * (y1 - y0)
        # the distance from the body's centre to the segment (x1, y1) -> (x1 + ex, y1 + ey)
        px, py = cx - x1, cy - y1
        ll = ex * ex + ey * ey
        s = torch.where(ll > 1e-6, ((px * ex + py * ey) / ll.clamp(min=1e-6)).clamp(0.0, 1.0), 0.0)
        qx, qy = px - s * ex, py - s * ey
        near = (qx * qx + qy * qy) <= (r1 + half) ** 2
        hit = hit | (live & near)
    return seen & hit


def control(state: EnvState, T: FightTable, levels: MeleeLevels, seed: int | Tensor, edge: float) -> CpuDecision:
    """Marth's controller this frame, as Melee's CPU at each environment's level (see the module docstring)."""
    ps, fs, g = state.players, state.fight, state.game
    L = g.cpu_level
    Li = L.long()
    t = g.episode_frame
    u = uniform_streams(g.env_id, g.tick, seed + MELEE_SEED_OFFSET, range(N_DRAWS))
    u_wait, u_kind, u_hold, u_ledge, u_pick0 = u[0], u[1], u[2], u[3], 12
    # x570, redrawn every 30 frames [D ftCo_800B33B0]: its own counter draw.
    u_half = uniform_streams(g.env_id, torch.floor(t / 30.0), seed + MELEE_SEED_OFFSET + 1, (0,))[0]
    half_range = 0.5 * (0.05 * (L + 1) + 0.05 * u_half) + 0.5
    mx, my, fx, fy = mine(ps.position_x), mine(ps.position_y), theirs(ps.position_x), theirs(ps.position_y)
    dx = fx - mx
    dist = dx.abs()
    dirx = torch.where(dx >= 0, 1.0, -1.0)
    mr = mine(rows_of(ps.move))
    m_af = mine(ps.action_frame)
    cpu_row = lambda s: row(CPU, s)  # noqa: E731
    ground = mine(ps.on_ground) > 0
    stunned = (mine(ps.hitstun_frames_left) > 0) | (mine(fs.hitlag_left) > 0)
    m_action = mine(ps.action)
    free = (mine(ps.move) < 0) & ~stunned
    in_shield = (m_action == SHIELD) & free
    facing = mine(ps.facing)
    one = torch.ones_like(mx)
    yes = torch.ones_like(ground)
    zero = torch.zeros_like(mx)
    o = PadOut(zero.bool(), zero.bool(), zero.bool(), zero.bool(), zero.bool(), zero, zero)
    decided = torch.zeros_like(ground)
    plan, timer, act = fs.cpu_plan, fs.cpu_timer + 1, fs.cpu_act
    wait, count = (fs.cpu_wait - 1).clamp(min=0), fs.cpu_count
    inward = -torch.sign(mx + (mx == 0).float())
    # Plans end when the fighter is knocked out of them.
    plan = torch.where(stunned & (plan != DEFEND_ROLL) & (plan != HOLD_SHIELD), NONE, plan)

    # 1. DI [D ftCo_800AC5A0]: on a share L/10 of each 120 frames, perpendicular to the launch, the side pointing up.
    ang = torch.deg2rad(mine(fs.launch_angle))
    kx, ky = torch.cos(ang) * mine(fs.launch_dir), torch.sin(ang)
    dix, diy = torch.where(kx > 0, -ky, ky), torch.where(kx > 0, kx, -kx)
    di_now = torch.remainder(t, 120.0) > 120.0 - 12.0 * L
    o, decided = put(o, decided, stunned & di_now, sx=dix, sy=diy)
    o, decided = put(o, decided, stunned)

    # 2. Holding the agent [D ftCo_800B683C].
    holding = (mr == cpu_row(Slot.GRAB_HOLD)) & (m_af >= 2) & ~decided
    pummel = holding & (u_hold * (1.0 + count) < 0.5) & (mine(fs.a_held) == 0)
    o, decided = put(o, decided, pummel, a=yes)
    count = torch.where(pummel, count + 1.0, count)
    to_end = edge - mx.abs()
    near_end = holding & (to_end < GRAB_EDGE)
    o, decided = put(o, decided, near_end, sx=torch.sign(mx + (mx == 0).float()))
    o, decided = put(o, decided, holding & (u_kind < 0.25), sy=one)
    o, decided = put(o, decided, holding & (u_kind < 0.5), sy=-one)
    o, decided = put(o, decided, holding & (u_kind < 0.75), sx=facing)
    o, decided = put(o, decided, holding, sx=-facing)
    grabbing = (mr == cpu_row(Slot.GRAB_HOLD)) | (mr == cpu_row(Slot.PUMMEL))
    count = torch.where(grabbing, count, 0.0)  # [D ftCo_0A01.c: x94 = 0 when not grabbing]

    # 3. The ledge [D ftCo_800ACB44, ftCo_800A0AF4]; roll and ledge attack play as the getup (none in the arena).
    hang = (mr == cpu_row(Slot.LEDGE_HANG)) & (m_af >= 2) & ~decided
    ledge_jump = hang & (dist >= LEDGE_NEAR) & (u_ledge >= 0.9)
    o, decided = put(o, decided, ledge_jump, jump=mine(ps.jump_held) == 0)
    o, decided = put(o, decided, hang, sx=inward)

    # 4. Recovery [D ftCo_800A9CB4, ftCo_800A3234, ftCo_800A96B8 default case].
    gap = mx.abs() - edge
    off = ~ground & (gap > 0) & (mr != cpu_row(Slot.LEDGE_HANG))
    helpless = mine(fs.helpless) > 0
    falling = mine(ps.speed_y) <= 0
    need = off & free & falling & (my < 0.0)  # below the ledge's height (the destination, y = 0 on FD)
    jumps = mine(ps.jumps_left)
    do_jump = need & (jumps > 0) & (mine(ps.jump_held) == 0) & ~decided
    o, decided = put(o, decided, do_jump, jump=yes, sx=inward)
    do_upb = need & (jumps <= 0) & ~helpless & (mine(fs.b_held) == 0) & ~decided
    o, decided = put(o, decided, do_upb, b=yes, sx=inward * RECOVERY_STICK, sy=one * RECOVERY_STICK)
    plan = torch.where(do_upb, UPB, plan)
    timer = torch.where(do_upb, 0.0, timer)
    drifting = (plan == UPB) & ~ground & (timer < UPB_DRIFT_FRAMES)
    o, decided = put(o, decided, drifting, sx=inward)
    plan = torch.where((plan == UPB) & ~drifting, NONE, plan)
    o, decided = put(o, decided, off, sx=inward)

    # 5. Defence [D ftCo_800A5ACC, ftCo_800BB9B4, ftCo_800BA9A0, ftCo_800B9F90, ftCo_800BA160/BA224].
    gate = torch.remainder(t, 120.0) > levels.defend_after[Li]
    threat = _threat(state, T) & gate & ~decided
    on_stage = mx.abs() <= edge
    scripted = (plan == TURN) | (plan == DASH_GRAB)  # a running script: the handlers wait [D ftCo_800B2790]
    start_hold = threat & ground & in_shield & (plan != DEFEND_ROLL) & ~scripted
    start_roll = threat & ground & free & ~in_shield & (plan != DEFEND_ROLL) & ~scripted
    hold_for = (9.0 - L) * (4.0 + torch.floor(4.0 * u_kind))
    plan = torch.where(start_hold, HOLD_SHIELD, torch.where(start_roll, DEFEND_ROLL, plan))
    timer = torch.where(start_hold | start_roll, 0.0, timer)
    wait = torch.where(start_hold, hold_for, wait)
    # The roll's side: behind the attacker within 30 (toward it), away beyond (stick in world units).
    act = torch.where(start_roll, torch.where(dist > ROLL_NEAR, -dirx, dirx), act)
    air_dodge = threat & ~ground & free & on_stage & (mine(fs.shield_held) == 0)
    o, decided = put(o, decided, air_dodge, shield=yes)
    rolling = plan == DEFEND_ROLL
    o, decided = put(o, decided, rolling & (timer <= 0))  # ReleaseR; WaitFor 1
    o, decided = put(o, decided, rolling & (timer == 1), shield=yes)  # PressR: the shield's first frame
    o, decided = put(o, decided, rolling & (timer == 2), shield=yes, sx=act)  # held sideways: the roll
    o, decided = put(o, decided, rolling & (timer <= 7), sx=act)  # ReleaseR; WaitFor 5 with the stick held
    plan = torch.where(rolling & (timer > 7), NONE, plan)
    holding_shield = (plan == HOLD_SHIELD) & ground & (in_shield | stunned) & ((timer <= 0) | (wait > 0))
    o, decided = put(o, decided, holding_shield, shield=yes)
    plan = torch.where((plan == HOLD_SHIELD) & ~holding_shield, NONE, plan)

    # 6. Attacks [D ftCo_800B8A9C, ftCo_800B885C, ftCo_800B4AB0, ftCo_800B63D8].
    period = levels.attack_period[Li]
    may = torch.remainder(t, period) > levels.attack_after[Li]
    can_ground = ground & free & (plan == NONE) & ~decided
    face_ok = (facing * dx) >= -NEAR_TURN
    dashing = (m_action == DASHING) | (m_action == RUNNING)
    dy = fy - my
    shielding_agent = theirs(ps.action) == SHIELD
    anti_shield = shielding_agent & (L > 5)  # [D ftCo_800B8A9C]: the x10 list at levels 6-9 (guess: the grab)
    # The dash grab's reach (guess, see GROUND_LIST): the agent as its speed carries it to the grab's first active
    # frame after the script's dash, against the grab's reach plus the dash's travel at its initial speed.
    dg_row = cpu_row(Slot.DASH_GRAB)
    dg_startup = T.first_active[dg_row].clamp(max=20.0)
    dg_ahead = DASH_WAIT + DASH_GRAB_RUN + dg_startup
    dg_rel = (fx + theirs(ps.speed_x) * dg_ahead) - mx
    dg_travel = mine(T.attrs.dash_initial) * (DASH_GRAB_RUN + dg_startup)
    dg_reach = T.reach[dg_row] * half_range + BODY_HALF_WIDTH + dg_travel
    dash_grab_ok = (dg_rel * facing >= -BODY_HALF_WIDTH) & (dg_rel * facing <= dg_reach)
    best_w, pick = torch.zeros_like(mx), torch.full_like(mx, -1.0)
    for k, (s, w, lo, hi, every) in enumerate(GROUND_LIST):
        r = cpu_row(s)
        ahead = T.first_active[r].clamp(max=20.0)
        rel = (fx + theirs(ps.speed_x) * ahead) - (mx + mine(ps.speed_x) * ahead)
        reach = T.reach[r] * half_range + BODY_HALF_WIDTH
        ok = (rel * facing >= -BODY_HALF_WIDTH) & (rel * facing <= reach) & (dy >= lo) & (dy <= hi)
        if every > 1:
            ok = ok & (torch.remainder(t, float(every)) == 0)
        if s == Slot.GRAB:  # a standing grab against a shield; else a dash grab, beyond a standing grab's reach
            ok = torch.where(anti_shield, ok, dash_grab_ok & ~ok & (dy >= lo) & (dy <= hi))
        ok = ok & ~dashing
        if s == Slot.GRAB:
            w_eff = torch.where(anti_shield, 100.0, w)
        else:
            w_eff = torch.full_like(mx, w)
        weight = torch.where(ok, w_eff * (1e-3 + u[u_pick0 + k]), 0.0)
        heavier = weight > best_w
        pick, best_w = torch.where(heavier, float(s), pick), torch.where(heavier, weight, best_w)
    choose = can_ground & face_ok & may & (pick >= 0)
    # Airborne near the agent at level >= 4 (not recovering) [D ftCo_800B89CC]: the air list, by where the agent is.
    can_air = ~ground & free & ~off & (plan == NONE) & (L >= 4) & may & ~decided & (dist < 30.0) & ((dy).abs() < 30.0)
    behind = (dx * facing) < 0
    air_pick = torch.where(dy > 12.0, float(Slot.UAIR), torch.where(dy < -12.0, float(Slot.DAIR), torch.where(
        behind, float(Slot.BAIR), torch.where(u[u_pick0 + len(GROUND_LIST)] < 0.5, float(Slot.NAIR), float(Slot.FAIR)))))
    choose_air = can_air
    plan = torch.where(choose | choose_air, ATTACK, plan)
    act = torch.where(choose, pick, torch.where(choose_air, air_pick, act))
    timer = torch.where(choose | choose_air, 0.0, timer)
    wait = torch.where(choose | choose_air,
                       torch.floor(levels.wait_span[Li] * u_wait) + levels.wait_base[Li], wait)
    attacking = plan == ATTACK
    # The script runs on the frame it is written ([D ftCo_800B2790 then ftCo_800B3E04 in ftCo_800B3900; ftCo_800B49F4
    # sets the duration to 1, which the interpreter counts down to 0 at once]): with no wait (level 9, or a draw of
    # 0: WaitFor 0 leaves the duration 0 and the interpreter reads on) the button is pressed on the decision frame;
    # a WaitFor w presses it w frames later.
    fire = attacking & (wait <= 0) & free
    # The grab but against a shield (or out of one: a shield grab) is its dash-grab script (see GROUND_LIST); the
    # script starts on this frame. (No attack is chosen while dashing, and the wait holds the stick neutral, so an
    # attack is never pressed out of a dash.)
    start_dg = fire & (act == float(Slot.GRAB)) & ~anti_shield & ~in_shield
    plan = torch.where(start_dg, DASH_GRAB, plan)
    timer = torch.where(start_dg, 0.0, timer)
    act = torch.where(start_dg, facing, act)
    fire = fire & ~start_dg
    dash_grab = (plan == DASH_GRAB) & ground & free & ~decided
    o, decided = put(o, decided, dash_grab & (timer < DASH_WAIT))  # stick neutral, WaitFor 2 (as the dash script)
    o, decided = put(o, decided, dash_grab & (timer < DASH_WAIT + DASH_GRAB_RUN), sx=act)  # 127: the flick
    o, decided = put(o, decided, dash_grab, sx=act, z=yes)  # Z while dashing: the dash grab
    plan = torch.where((plan == DASH_GRAB) & (~dash_grab | (timer >= DASH_WAIT + DASH_GRAB_RUN)), NONE, plan)
    for s, (a, z, sx, sy) in PRESS.items():
        m = fire & (act == float(s))
        kw = {}
        if sx != 0.0:
            kw["sx"] = facing * sx
        if sy != 0.0:
            kw["sy"] = one * sy
        if a:
            kw["a"] = yes
        if z:
            kw["z"] = yes
        o, decided = put(o, decided, m, **kw)
    # The script's wait: stick neutral, no button (its follow-through: played whatever the agent does). In shield
    # the shield stays up, so the press is a shield grab: a stand-in (guess) for Melee's powershield cancel
    # (acting at once out of a perfect shield, SmashWiki "Perfect shield"), which the arena's shield drop lacks.
    o, decided = put(o, decided, attacking & ~fire & free, shield=in_shield)
    plan = torch.where(attacking & (fire | ~free), NONE, plan)

    # 7. Moving [D ftCo_800AA42C, ftCo_800AA320, ftCo_800B24B8]: turn (a 13-frame script), then walk in, never a dash.
    target = fx.clamp(-(edge - 10.0), edge - 10.0)
    tdx = target - mx
    tdist = tdx.abs()
    toward = torch.sign(tdx)
    neutral = ground & free & (plan == NONE) & ~decided
    start_turn = neutral & ~face_ok & (dist > NEAR_TURN)
    plan = torch.where(start_turn, TURN, plan)
    timer = torch.where(start_turn, 0.0, timer)
    act = torch.where(start_turn, dirx, act)
    turning = (plan == TURN) & ground & free & ~decided
    o, decided = put(o, decided, turning & (timer <= 0))  # stick neutral, WaitFor 1
    o, decided = put(o, decided, turning, sx=act * TURN_STICK)  # LstickXForward 0xB0 (back), WaitFor 1, WaitFor 10
    plan = torch.where((plan == TURN) & (~turning | (timer >= TURN_FRAMES - 1)), NONE, plan)
    clamp = levels.stick[Li]
    limit = walk_limit(tdist, clamp)
    walk = ground & free & (plan == NONE) & ~decided & (tdist > APPROACH_NEAR)
    stepped = (mine(fs.stick_x_prev) + toward * levels.step[Li]).clamp(-1.0, 1.0)
    stepped = torch.maximum(torch.minimum(stepped, limit), -limit)
    o, decided = put(o, decided, walk, sx=stepped)
    fs = fs._replace(cpu_plan=plan, cpu_timer=timer, cpu_act=act, cpu_wait=wait, cpu_count=count)
    return CpuDecision(o, fs, g.cpu_cooldown)


__all__ = ["control", "MeleeLevels", "walk_limit"]
