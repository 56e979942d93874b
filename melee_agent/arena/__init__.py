"""The embedded arena: a vectorized Fox-vs-Marth simulator built from Melee's own frame data."""

from melee_agent.arena.env import Arena
from melee_agent.arena.fight.pads import Pads

__all__ = ["Arena", "Pads"]
