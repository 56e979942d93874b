"""Melee's CPU levels 1-9 as the arena models them, and their values as device tensors.

Every number here is a design choice (a guess), shaped so that a random policy's untouched share
falls level by level and level 9 is the relentless CPU the paper trained against.

Example::

    >>> CPU_LEVELS[9].reaction, CPU_LEVELS[1].punish
    (1, 0.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


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
    """One CPU level's values as 0-d float32 tensors on the arena's device (``smart`` is bool)."""

    reaction: torch.Tensor
    aggression: torch.Tensor
    accuracy: torch.Tensor
    punish: torch.Tensor
    approach: torch.Tensor
    recover: torch.Tensor
    rest: torch.Tensor
    smart: torch.Tensor

    @classmethod
    def of(cls, level: int, device: torch.device) -> LevelTensors:
        if level not in CPU_LEVELS:
            raise ValueError(f"cpu_level must be 1-9, got {level}")
        values = {k: torch.tensor(float(v), device=device) for k, v in vars(CPU_LEVELS[level]).items()}
        return cls(**values, smart=torch.tensor(level >= SMART_FROM_LEVEL, device=device))
