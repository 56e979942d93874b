"""The CPUs that play Marth, one object per rule set, used by every game on the fight's engine.

* ``melee`` (:class:`~.melee.MeleeCpu`, the default) -- Melee's own CPU as the decompilation (doldecomp/melee) runs
  it, each rule citing its function: :mod:`.melee` (the order of its rules), :mod:`.melee_move` (DI, grabs, ledge,
  recovery, turn, walk), :mod:`.melee_defend` (threats, the roll script), :mod:`.melee_attack` (gates, boxes, the
  draw, the wait), :mod:`.melee_data` (its numbers);
* ``designed`` (:class:`~.designed.DesignedCpu`) -- the earlier design whose per-level values are guesses, kept to
  reproduce earlier results.

Each object reads the game state and returns the CPU port's pads for the frame
(``cpu.control(state, table, seed, edge) -> CpuDecision``; :mod:`.common`). :mod:`.levels` holds the dodging
game's level tables and the level mix; :mod:`.sources` the ``cpu-report`` rows beside the sources.

    >>> import torch
    >>> build_cpu("melee", torch.device("cpu")).name
    'melee'
"""

from __future__ import annotations

from typing import Protocol

import torch
from torch import Tensor

from melee_agent.arena.cpu.common import CpuDecision
from melee_agent.arena.cpu.designed import DesignedCpu
from melee_agent.arena.cpu.melee import MeleeCpu
from melee_agent.arena.env_state import EnvState
from melee_agent.arena.fight.moves import FightTable

#: The rule sets a fight can put on Marth.
CPUS = ("designed", "melee")


class Cpu(Protocol):
    """A CPU: its name and the pads it writes this frame."""

    name: str

    def control(self, state: EnvState, T: FightTable, seed: int | Tensor, edge: float) -> CpuDecision: ...


def check_cpu(cpu: str) -> str:
    """``cpu`` if it is one of :data:`CPUS` (a clear error otherwise)."""
    if cpu not in CPUS:
        raise ValueError(f"unknown cpu {cpu!r}; known: {', '.join(CPUS)}")
    return cpu


def build_cpu(cpu: str, device: torch.device) -> Cpu:
    """The CPU object named ``cpu`` with its tables on ``device``."""
    return MeleeCpu.build(device) if check_cpu(cpu) == "melee" else DesignedCpu.build(device)


__all__ = ["CPUS", "Cpu", "CpuDecision", "DesignedCpu", "MeleeCpu", "build_cpu", "check_cpu"]
