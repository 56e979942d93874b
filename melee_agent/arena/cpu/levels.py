"""The designed CPU's levels 1-9 on the dodging game's earlier frame, their values as device tensors, and the level mix.

``CPU_LEVELS`` is what ``cpu = "designed"`` plays in the dodging game (:mod:`melee_agent.arena.dodge.frame`,
kept so that earlier results replay); Melee's own CPU (``cpu = "melee"``) takes its per-level numbers from
:mod:`.melee_data` on the fight's engine, in both games. Every number of ``CPU_LEVELS`` is a design choice
(a guess), shaped so that a random policy's untouched share falls level by level and level 9 is the
relentless CPU the paper trained against.

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

from melee_agent.arena.draws import pick_index, weights_cdf


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

    @classmethod
    def build(cls, device: torch.device) -> LevelTable:
        """Every level's values of the designed CPU (:data:`CPU_LEVELS`) on ``device``."""
        rows = [CPU_LEVELS[1]] + [CPU_LEVELS[lv] for lv in range(1, 10)]
        cols = {k: torch.tensor([float(getattr(r, k)) for r in rows], device=device) for k in vars(rows[0])}
        cols["smart"] = torch.tensor([False] + [lv >= SMART_FROM_LEVEL for lv in range(1, 10)], device=device)
        return cls(cols)

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
        return cls(torch.tensor(lv, dtype=torch.float32, device=device),
                   weights_cdf(weights, lv, "level weights", "levels", device), spread)

    def pick(self, u: torch.Tensor, env_id: torch.Tensor) -> torch.Tensor:
        return self.levels[pick_index(self.cdf, u, env_id, self.spread)]
