"""Moved to :mod:`melee_agent.arena.cpu.levels`; this path re-exports it."""

from melee_agent.arena.cpu.levels import *  # noqa: F403
from melee_agent.arena.cpu.levels import (CPU_LEVELS, DODGE_CPUS, MELEE_LEVELS, SMART_FROM, SMART_FROM_LEVEL,  # noqa: F401
                                          CpuLevel, LevelMix, LevelTable, LevelTensors, check_levels)
