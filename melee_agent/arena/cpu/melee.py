"""Melee's own CPU for Marth (``cpu = "melee"``): the game's AI as the decompilation and SmashWiki describe it.

:mod:`.designed` (``cpu = "designed"``) is a design whose per-level values are guesses. This CPU follows the
game's instead. Its rules live in :mod:`.melee_move`, :mod:`.melee_defend` and :mod:`.melee_attack`, its numbers in
:mod:`.melee_data`; :class:`MeleeCpu` is the CPU as an object, :func:`control` the frame's pads. Its sources,
cited beside each rule below as ``[D fn]`` or ``[W page]``:

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
   always at level 9), checked every frame whatever script runs (the dispatcher ``ftCo_800ADE48``). A threat is an
   agent hitbox (not a grab, not one that has already hit Marth [D lbColl_8000ACFC], not flagged ``x43_b2``) that
   was already out on the last frame and, swept 3 frames ahead along its own motion, meets Marth's body (a sphere at
   half his height). On the ground, standing or shielding (``Guard``): the roll script [D ftCo_800BA160 /
   ftCo_800BA224]: one frame neutral with R released, then the stick and R together for 2 frames, then the stick
   alone for 5 -- behind the attacker within 30, away beyond 30. In the air (over the stage): an air dodge
   [D ftCo_800BA9A0, ``ftCo_CpuRetapR``].
6. **attack** [D ftCo_800B8A9C, ftCo_800B4AB0, ftCo_800B885C, ftCo_800B63D8]: levels 1-4 may only start an attack on
   part of a fixed cycle of the CPU's own counter ``x80`` (which counts the frames with no command script running,
   [D ftCo_800B2790]): level 1: 119 of 300, 2: 179/300, 3: 119/240, 4: 179/240; levels 5-9: always. Among Marth's
   entries whose box, scaled by ``0.5 x570 + 0.5`` (``x570 = 0.05 (L + 1) + 0.05 u``, redrawn every 30 frames
   [D ftCo_800B33B0]), overlaps the agent's box, both fighters moved on by their last frame's position change times
   the entry's lookahead (the move's first active frame: guess for ``x04``; rolls and Marth's own walk included), and
   whose gate ``x80 % x1C`` is 0, one is drawn by weight; the grab entries are left out while the agent is in a grab,
   throw, roll, spot dodge or air dodge; against a shielding agent at levels 6-9 the anti-shield list (guess: grab)
   comes first. The check runs during the turn script too: once Marth's facing has flipped, a box can hold the agent
   and the attack replaces the turn. Then the CPU waits a random ``ftCo_800B63D8`` time (level 1: 5-39 frames ...
   level 8: 0-4, level 9: none) and plays the move whatever the agent did meanwhile; with no wait the press is on
   the decision frame itself (``ftCo_800B3900``). A or Z in shield is a shield grab (as in Melee). Aerials only when
   already airborne near the agent at level >= 4 [D ftCo_800B89CC]; never a short-hop aerial.
7. **moving** [D ftCo_800AA42C, ftCo_800AA320, ftCo_800B24B8, ftCo_800A75DC]: with the agent more than 3 behind, the
   turn script ``ftCo_CpuTurnAround`` (stick neutral, WaitFor 1, stick 80 of 127 back, WaitFor 1, WaitFor 10: 13
   frames). Else a walk toward the agent from any distance, never a dash (``xF8_b0`` is set only to flee a Starman or
   hammer holder): the stick moves toward the agent by the level's step per frame up to the level's clamp, ramped
   within ``x3C`` = 40 from 80 of 127 at the stop distance ``x38`` = ``x56C`` + the agent's half width, with
   ``x56C = 4 (1 - u^3)`` drawn again every 600 frames [D ftCo_800A0CB0]; within ``x38``, neutral. Never past the
   stage's edge [W-AI, W-flaws]. The only dash is the grab entry's own script (a dash grab, a guess).

Never: charged smashes (A is pressed for one frame), L-cancel, wavedash, short-hop aerials, side-B or air
dodge to recover, edgehog, chaingrab (throws are drawn as above) [W-AI, W-flaws].

Per-environment random numbers are counter draws (:mod:`melee_agent.arena.draws`); ``t`` is the game's frame
(``episode_frame``), read as the CPU's ``x7C``; ``x80`` is a counter of its own (``FightState.cpu_x80``). Their
phase at spawn (the game: ``int(10 u)``) is a guess: 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from melee_agent.arena.cpu import melee_attack, melee_defend, melee_move, melee_platforms
from melee_agent.arena.cpu.common import CpuDecision, PadOut
from melee_agent.arena.cpu.melee_data import *  # noqa: F403 (the CPU's numbers, re-exported for its users)
from melee_agent.arena.cpu.melee_data import MeleeLevels
from melee_agent.arena.cpu.melee_frame import Out, carried, see
from melee_agent.arena.env_state import CPU, EnvState
from melee_agent.arena.fight.moves import FightTable

#: [D ftCo_800BB9B4 / ftCo_800BB104]: the threats the defence sees (:func:`.melee_defend.threat`).
_threat = melee_defend.threat


def control(state: EnvState, T: FightTable, levels: MeleeLevels, seed: int | Tensor, edge: float) -> CpuDecision:
    """Marth's controller this frame, as Melee's CPU at each environment's level (see the module docstring): each
    rule in the dispatcher's order of precedence, the first to decide a frame's pad wins."""
    mem = carried(state)
    s = see(state, seed, edge, mem.plan)
    out = Out(PadOut.neutral(s.mx), torch.zeros_like(s.ground))
    out = melee_move.di(s, state, out)
    out, mem = melee_move.hold_grab(s, state, out, mem)
    out = melee_move.ledge(s, state, out)
    out, mem = melee_move.recover(s, state, out, mem)
    out, mem = melee_defend.defend(s, state, T, levels, out, mem)
    mem = melee_attack.choose(s, state, T, levels, out, mem)
    out, mem = melee_attack.play(s, state, out, mem)
    if T.stages.num_platforms > 0:  # platforms: jumping up to the agent, dropping through toward it (melee_platforms)
        geo = T.stages.at(state.game.stage)
        out, mem = melee_platforms.platforms(s, state, levels, out, mem, geo)
        out = melee_platforms.air_jump(s, state, out, geo, T.attrs.ecb_air[..., CPU])
    out, mem = melee_move.turn(s, out, mem)
    out = melee_move.walk(s, state, levels, out, mem)
    fs = state.fight._replace(cpu_plan=mem.plan, cpu_timer=mem.timer, cpu_act=mem.act, cpu_wait=mem.wait,
                              cpu_count=mem.count, cpu_x80=s.x80)
    return CpuDecision(out.pad, fs, state.game.cpu_cooldown)


@dataclass(frozen=True)
class MeleeCpu:
    """Melee's CPU as an object: its level tables, and :meth:`control` (the pads it writes this frame)."""

    levels: MeleeLevels
    name: str = "melee"

    @classmethod
    def build(cls, device: torch.device) -> MeleeCpu:
        return cls(MeleeLevels.build(device))

    def control(self, state: EnvState, T: FightTable, seed: int | Tensor, edge: float) -> CpuDecision:
        return control(state, T, self.levels, seed, edge)


__all__ = ["control", "MeleeCpu", "MeleeLevels", "walk_limit", "_threat"]  # noqa: F405
