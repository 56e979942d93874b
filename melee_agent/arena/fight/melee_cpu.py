"""Moved to :mod:`melee_agent.arena.cpu.melee` (Melee's CPU, ``cpu = "melee"``); this path re-exports it."""

from melee_agent.arena.cpu.common import CpuDecision, PadOut, mine, put, theirs  # noqa: F401
from melee_agent.arena.cpu.melee import MeleeCpu, _threat, control  # noqa: F401
from melee_agent.arena.cpu.melee_data import *  # noqa: F403
