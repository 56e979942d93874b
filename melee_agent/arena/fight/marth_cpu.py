"""Moved to :mod:`melee_agent.arena.cpu.designed` (the designed CPU, ``cpu = "designed"``); this path re-exports it."""

from melee_agent.arena.cpu.common import CpuDecision, PadOut, mine, put, theirs  # noqa: F401
from melee_agent.arena.cpu.designed import *  # noqa: F403
from melee_agent.arena.cpu.designed import (CPU_SEED_OFFSET, FIGHT_LEVELS, GROUND_MOVES, PLAN_AERIAL, PLAN_NONE,  # noqa: F401
                                            PLAN_SHIELD, PLAN_SIDE_B_USED, SHIELD_HOLD, DesignedCpu, FightLevel,
                                            FightLevels, LevelValues, control, level_rows)
