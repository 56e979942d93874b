"""The main agent's pool: who it can be drawn against (CPU levels, frozen snapshots, exploiters' frozen copies).

Each member has a name (``cpu9``, ``snap-5000``, ``exploiter0-gen1``), a kind, and what plays it: a CPU level, or
a policy (``[n, 27]`` observations from its own port -> ``[n]`` actions) with the model file it was saved to. A
member that leaves the draw (:meth:`Pool.retire`: an old snapshot) stays listed, for the report.
:meth:`Pool.weights` is the draw: PFSP (:func:`melee_agent.league.pfsp.pfsp_weights`) over the drawable members,
from the main's recent win rates against them (:class:`~melee_agent.league.payoff.Payoff`).

Example::

    >>> from melee_agent.league.payoff import Payoff
    >>> pool, payoff = Pool(), Payoff()
    >>> for lv in (1, 9): pool.add(PoolMember(f"cpu{lv}", "cpu", level=lv)); payoff.add(f"cpu{lv}")
    >>> payoff.record("cpu1", wins=10); payoff.record("cpu9", wins=5, losses=5)
    >>> {k: round(v, 2) for k, v in pool.weights(payoff).items()}   # the main beats cpu1: it draws cpu9
    {'cpu1': 0.0, 'cpu9': 1.0}
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from melee_agent.league.payoff import Payoff
from melee_agent.league.pfsp import pfsp_weights

KINDS = ("cpu", "snapshot", "exploiter")


@dataclass
class PoolMember:
    """One opponent of the main: the CPU at ``level``, or a frozen model playing ``policy`` (saved at ``path``)."""

    name: str
    kind: str
    level: int | None = None
    policy: Callable[[Any], Any] | None = None
    path: str | None = None
    train_step: int | None = None  # the main's train step when it joined
    drawable: bool = True

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"a pool member's kind is one of {KINDS}, got {self.kind!r}")
        if (self.kind == "cpu") != (self.level is not None):
            raise ValueError(f"{self.name}: a CPU member has a level and only a CPU member has one")


class Pool:
    """The members, in the order they joined (see the module's docstring)."""

    def __init__(self, power: float = 2.0):
        self.power = power
        self.members: dict[str, PoolMember] = {}

    def add(self, member: PoolMember) -> None:
        if member.name in self.members:
            raise ValueError(f"{member.name!r} is already in the pool")
        self.members[member.name] = member

    def retire(self, name: str) -> None:
        """``name`` leaves the draw (it keeps its record); its policy is let go."""
        m = self.members[name]
        m.drawable, m.policy = False, None

    def drawable(self, kind: str | None = None) -> list[PoolMember]:
        return [m for m in self.members.values() if m.drawable and (kind is None or (m.kind == "cpu") == (kind == "cpu"))]

    def weights(self, payoff: Payoff) -> dict[str, float]:
        """Each drawable member's probability of being drawn (PFSP's f_hard on the main's win rate; they sum to 1)."""
        live = self.drawable()
        w = pfsp_weights([payoff.win_rate(m.name) for m in live], "hard", self.power)
        return {m.name: x for m, x in zip(live, w)}


__all__ = ["Pool", "PoolMember", "KINDS"]
