"""The league's results: every game the main agent played against each member, its win rates and the ratings.

* the totals (the main's wins, losses and draws against each member: the report's record);
* the win rate PFSP reads (:mod:`melee_agent.league.pfsp`): the main's score against the member with older games
  counting less (each game multiplies the pair's earlier counts by ``decay``, as AlphaStar's payoff table does), and
  0.5 for a member it has not met yet (AlphaStar's prior for an empty pair);
* Elo ratings (:func:`melee_agent.league.ratings.update`, one game at a time, the batch's outcomes interleaved so the
  expectation moves with them): every member is rated from its games against the main, the main from all of its.

Scores are the main's: a win 1, a draw 1/2. Example::

    >>> p = Payoff(); p.add("cpu9"); p.record("cpu9", wins=3, losses=1)
    >>> p.win_rate("cpu9") > 0.5 and p.rating("main") > p.rating("cpu9")
    True
"""

from __future__ import annotations

from melee_agent.league import ratings


class Payoff:
    """The main's results against each member of its pool (see the module's docstring)."""

    def __init__(self, decay: float = 0.99, k: float = ratings.K, main: str = "main"):
        if not 0.0 < decay <= 1.0:
            raise ValueError(f"decay must be in (0, 1], got {decay}")
        self.decay, self.k, self.main = decay, k, main
        self.ratings: dict[str, float] = {main: ratings.ANCHOR}
        self.totals: dict[str, list[int]] = {}  # member -> the main's [wins, losses, draws]
        self._recent: dict[str, list[float]] = {}  # member -> decayed [score, games]

    def add(self, name: str, rating: float | None = None) -> None:
        """A new member, rated ``rating`` (default: the anchor; a snapshot starts at the main's rating)."""
        if name == self.main or name in self.totals:
            raise ValueError(f"{name!r} is already in the league")
        self.ratings[name] = ratings.ANCHOR if rating is None else float(rating)
        self.totals[name] = [0, 0, 0]
        self._recent[name] = [0.0, 0.0]

    def record(self, member: str, wins: int = 0, losses: int = 0, draws: int = 0) -> None:
        """The main won ``wins``, lost ``losses`` and drew ``draws`` games against ``member``."""
        if member not in self.totals:
            raise KeyError(f"{member!r} is not in the league (members: {', '.join(self.totals)})")
        ratings._check_record((wins, losses, draws))
        n = wins + losses + draws
        if n == 0:
            return
        t = self.totals[member]
        t[0], t[1], t[2] = t[0] + wins, t[1] + losses, t[2] + draws
        recent = self._recent[member]
        keep = self.decay ** n
        recent[0] = recent[0] * keep + wins + 0.5 * draws
        recent[1] = recent[1] * keep + n
        for outcome in interleave(wins, losses, draws):
            r_main, r_member = ratings.update(self.ratings[self.main], self.ratings[member], *outcome, k=self.k)
            self.ratings[self.main], self.ratings[member] = r_main, r_member

    def win_rate(self, member: str) -> float:
        """The main's recent score against ``member`` (0-1; 0.5 before they have met)."""
        score, games = self._recent[member]
        return score / games if games > 0 else 0.5

    def rating(self, name: str) -> float:
        return self.ratings[name]

    def games(self, member: str) -> int:
        return sum(self.totals[member])


def interleave(wins: int, losses: int, draws: int) -> list[tuple[int, int, int]]:
    """The batch as single games, each outcome spread evenly over it (games played side by side have no order).

    >>> interleave(2, 1, 0)
    [(1, 0, 0), (0, 1, 0), (1, 0, 0)]
    """
    n = wins + losses + draws
    counts, done = (wins, losses, draws), [0, 0, 0]
    out = []
    for i in range(n):
        # The outcome furthest behind its even share of the first i + 1 games goes next.
        k = max(range(3), key=lambda j: (counts[j] * (i + 1) / n - done[j], counts[j]))
        done[k] += 1
        out.append(tuple(int(j == k) for j in range(3)))
    return out  # type: ignore[return-value]


__all__ = ["Payoff", "interleave"]
