"""Melee's CPU levels 1-9 as the arena models them, and their values as device tensors.

Every number here is a design choice (a guess), shaped so that a random policy's untouched share
falls level by level and level 9 is the relentless CPU the paper trained against.

An arena may mix levels: each environment holds its own level (a column of its state), drawn
again at every episode reset from a :class:`LevelMix`; :class:`LevelTable` turns the ``[B]``
levels into ``[B]`` columns of values, so every environment's CPU plays its own level.

Example::

    >>> CPU_LEVELS[9].reaction, CPU_LEVELS[1].punish
    (1, 0.0)
    >>> mix = LevelMix.of([1, 9], [3.0, 1.0], torch.device("cpu"))
    >>> mix.pick(torch.tensor([0.1, 0.74, 0.76]), torch.arange(3)).tolist()
    [1.0, 1.0, 9.0]
"""

from __future__ import annotations

from dataclasses import dataclass

from typing import Sequence

import numpy as np
import torch

from melee_agent.arena.cpu.melee_data import STICK_CLAMP, STICK_STEP


@dataclass(frozen=True)
class CpuLevel:
    """How Melee's CPU levels differ, as the arena models them (all by design: guesses)."""

    reaction: int  # frames before it reacts to the agent's new action
    aggression: float  # chance per frame to start an attack when one reaches
    accuracy: float  # chance its attack choice is one that reaches (else any attack)
    punish: float  # chance per frame to punish end lag it can reach in time
    approach: float  # fraction of run speed used to close distance
    recover: int  # frames it always waits after an attack before starting another
    rest: int  # most extra frames (random) it waits before the next neutral attack
    # ``melee`` only: its walk's stick clamp and the stick's step per frame, shares of full tilt (the designed CPU
    # walks by ``approach`` instead)
    walk_stick: float = 1.0
    walk_step: float = 1.0


CPU_LEVELS = {
    lvl: CpuLevel(
        reaction=int(round(np.interp(lvl, [1, 9], [30, 1]))),
        # Geometric from level 1 to 8 (each level ~1.4x as eager), then level 9's relentless CPU.
        aggression=float(np.exp(np.interp(lvl, [1, 8, 9], np.log([0.0003, 0.0035, 0.35])))),
        accuracy=float(np.interp(lvl, [1, 9], [0.35, 1.0])),
        # Punishing end lag: never at level 1, rare below 8, always at 9.
        punish=0.0 if lvl == 1 else float(np.exp(np.interp(lvl, [2, 8, 9], np.log([0.0001, 0.003, 1.0])))),
        approach=float(np.interp(lvl, [1, 9], [0.3, 1.0])),
        recover=int(round(np.interp(lvl, [1, 9], [30, 5]))),
        rest=int(round(np.exp(np.interp(lvl, [1, 9], np.log([600, 4]))))),
    )
    for lvl in range(1, 10)
}

#: From this level up the CPU does not throw attacks into the agent's intangibility.
SMART_FROM_LEVEL = 7

# The dodging game's ``melee`` CPU (``cpu = "melee"``): the same knobs set from Melee's own CPU where the sources
# give them ([D] doldecomp/melee src/melee/ft/ftcpuattack.c, as cited in arena/cpu/melee.py):
#
# * aggression: the CPU attacks on any frame an entry of its attack list reaches the agent
#   [D ftCo_800B4AB0] -- but levels 1-4 only on part of each cycle [D ftCo_800B885C]: level 1 on 119 of 300
#   frames, 2: 179/300, 3: 119/240, 4: 179/240; 5-9 always. Here that share is a chance per frame (the game's
#   cycle is a counter: drawn per frame instead is a guess).
# * punish 0: the game has no punish rule. Its choice [D ftCo_800B4AB0] tests each entry's reach box against
#   the target's position moved on by its last frame's speed (``pos_delta``) for the entry's startup, and
#   nothing else of the target: not where a roll will end, not when its intangibility or its lag ends. The
#   dodging arena's punish rule (an attack timed to land the frame the agent turns hittable, where its roll
#   carries it) is the designed CPU's, so the ``melee`` CPU does without it: it attacks by reach alone, into
#   spot dodges and rolls too.
# * accuracy 1: the CPU draws only among entries whose reach box holds the agent [D ftCo_800B4AB0]; which entries
#   reach, their weights and frame gates, and no attack from a dash, are the fight's Melee CPU's rules
#   (arena/dodge/melee_aim.py).
# * rest and recover: the wait the CPU takes before playing a chosen attack, int(span x u) + base frames
#   [D ftCo_800B63D8]: level 1 5-39 ... level 8 0-4, level 9 none. The ``melee`` CPU chooses, stands through the
#   wait and then plays the move whatever the agent did (``GameState.cpu_pending``; arena/dodge/frame.py); the
#   designed CPU's ``rest`` comes after an attack instead.
# * reaction 1: the CPU reads the opponent's state as the last frame left it [D ftCo_800BB104 reads the hitboxes'
#   previous positions]; no wait of its own before a punish.
# * approach: the versus CPU walks at every level, it never dashes in. ftCo_800AA42C dashes only with ``xF8_b0``
#   set, and ftCo_800B24B8 sets it only with a target from ftCo_800A5CE0 (an enemy holding a Starman or the
#   hammer, to flee from); with none (ftCo_CpuInitNoTarget) it clears it, and the stick goes toward the agent by
#   ``LstickXTowardDestinationClamped`` (ftcmdscript.c). (The ``approach`` column is the designed CPU's.)
# * walk_stick and walk_step: that stick's clamp and its step per frame, of 127 (STICK_CLAMP and STICK_STEP
#   [D ftCo_800AA320]); the stick starts from neutral after every attack and turn (ftCo_800B4A78 zeroes it at
#   every mode switch), so each approach is a walk that speeds up (arena/dodge/melee_aim.py).
# * smart: none at any level. The game skips a target only while it respawns (``ftCo_800A1C44``: ``x2219_b1``,
#   set in RebirthWait by ``ftCo_800C7070``) or in a few other states of its own; no attack choice reads
#   intangibility [D ftCo_800B8A9C, ftCo_800B4AB0].
_GATE_SHARE = {1: 119 / 300, 2: 179 / 300, 3: 119 / 240, 4: 179 / 240}
_WAIT = {1: (35, 5), 2: (30, 5), 3: (25, 5), 4: (25, 0), 5: (20, 0), 6: (15, 0), 7: (10, 0), 8: (5, 0), 9: (0, 0)}
MELEE_LEVELS = {
    lvl: CpuLevel(reaction=1, aggression=_GATE_SHARE.get(lvl, 1.0), accuracy=1.0, punish=0.0,
                  approach=1.0, recover=_WAIT[lvl][1], rest=_WAIT[lvl][0], walk_stick=STICK_CLAMP[lvl] / 127,
                  walk_step=STICK_STEP[lvl] / 127)
    for lvl in range(1, 10)
}
#: Each dodging CPU's level table: ``designed`` (the guesses above) or ``melee`` (Melee's own CPU's values).
DODGE_CPUS = {"designed": CPU_LEVELS, "melee": MELEE_LEVELS}
#: From which level each dodging CPU holds its attacks while the agent is intangible (``melee``: never, above).
SMART_FROM = {"designed": SMART_FROM_LEVEL, "melee": 10}


@dataclass(frozen=True)
class LevelTensors:
    """CPU level values as ``[B]`` float32 tensors, one per environment (``smart`` is bool)."""

    reaction: torch.Tensor
    aggression: torch.Tensor
    accuracy: torch.Tensor
    punish: torch.Tensor
    approach: torch.Tensor
    recover: torch.Tensor
    rest: torch.Tensor
    walk_stick: torch.Tensor
    walk_step: torch.Tensor
    smart: torch.Tensor



def check_levels(levels: int | Sequence[int]) -> tuple[int, ...]:
    """Levels as a tuple, each 1-9 (a clear error otherwise); one int is one level."""
    out = (levels,) if isinstance(levels, (int, np.integer)) else tuple(levels)
    if not out:
        raise ValueError("cpu levels: the set of levels is empty")
    for lv in out:
        if isinstance(lv, bool) or not isinstance(lv, (int, np.integer)) or lv not in CPU_LEVELS:
            raise ValueError(f"cpu_level must be 1-9, got {lv!r}")
    return tuple(int(lv) for lv in out)


@dataclass(frozen=True)
class LevelTable:
    """Every level's values as ``[10]`` tensors indexed by level (index 0 unused), on one device."""

    columns: dict[str, torch.Tensor]
    #: Which dodging CPU (a key of :data:`DODGE_CPUS`): ``melee`` also aims its attacks as the fight's Melee CPU
    #: does (arena/dodge/melee_aim.py); a plain string, so a compiled frame branches on it once.
    cpu: str = "designed"

    @classmethod
    def build(cls, device: torch.device, cpu: str = "designed") -> LevelTable:
        """Every level's values of the dodging CPU ``cpu`` (a key of :data:`DODGE_CPUS`)."""
        table = DODGE_CPUS[cpu]
        rows = [table[1]] + [table[lv] for lv in range(1, 10)]
        cols = {k: torch.tensor([float(getattr(r, k)) for r in rows], device=device) for k in vars(rows[0])}
        cols["smart"] = torch.tensor([False] + [lv >= SMART_FROM[cpu] for lv in range(1, 10)], device=device)
        return cls(cols, cpu)

    def at(self, level: torch.Tensor) -> LevelTensors:
        """Each environment's level values, ``[B]`` each, from its level column (float 1-9)."""
        idx = level.long()
        return LevelTensors(**{k: v[idx] for k, v in self.columns.items()})


@dataclass(frozen=True)
class LevelMix:
    """The levels an arena draws from at each episode reset, with their cumulative weights.

    ``pick(u, env_id)`` maps a uniform draw ``u`` in ``[0, 1)`` to a level: level ``k`` where
    ``cdf[k-1] <= u < cdf[k]``. One level always picks itself, whatever ``u``. A ``spread`` mix
    ignores ``u``: environment ``i`` always plays ``levels[i % K]`` (equal episode counts per
    level, for evaluation).
    """

    levels: torch.Tensor  # [K] float32
    cdf: torch.Tensor  # [K] float32, cumulative normalized weights (the last is 1)
    spread: bool = False

    @classmethod
    def of(cls, levels: int | Sequence[int], weights: Sequence[float] | None, device: torch.device,
           spread: bool = False) -> LevelMix:
        lv = check_levels(levels)
        w = [1.0] * len(lv) if not weights else [float(x) for x in weights]
        if len(w) != len(lv):
            raise ValueError(f"level weights: {len(w)} weights for {len(lv)} levels {list(lv)}")
        if any(not np.isfinite(x) or x < 0 for x in w) or sum(w) <= 0:
            raise ValueError(f"level weights must be non-negative with a positive sum, got {w}")
        cdf = np.cumsum(np.asarray(w, np.float64) / sum(w))
        cdf[-1] = 1.0
        return cls(torch.tensor(lv, dtype=torch.float32, device=device),
                   torch.tensor(cdf, dtype=torch.float32, device=device), spread)

    def pick(self, u: torch.Tensor, env_id: torch.Tensor) -> torch.Tensor:
        if self.spread:
            return self.levels[env_id.long() % self.levels.shape[0]]
        k = torch.searchsorted(self.cdf, u.contiguous(), right=True).clamp(max=self.levels.shape[0] - 1)
        return self.levels[k]
