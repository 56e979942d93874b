"""Moved to :mod:`melee_agent.arena.cpu.sources`; this path re-exports it."""

from melee_agent.arena.cpu.sources import *  # noqa: F403
from melee_agent.arena.cpu.sources import (PROBE_AWAY, PROBE_SHIELD_FRAMES, SOURCE_WAIT, beside_sources,  # noqa: F401
                                           di_probe, format_rows, perfect_shield_probe)
