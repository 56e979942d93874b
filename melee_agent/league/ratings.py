"""Elo ratings from games: the online update a league applies after each batch of games, and the fit a ladder makes.

Elo's model (Elo, "The Rating of Chessplayers", 1978; the logistic form FIDE and FightLadder use): a player
rated ``r_a`` scores ``E = 1 / (1 + 10 ** ((r_b - r_a) / 400))`` against ``r_b`` on expectation (a win 1, a
draw 1/2, a loss 0).

* :func:`expected` -- that expectation;
* :func:`update` -- the online rule ``r_a += K (S - E)`` for a batch of games between two players (a league's
  ratings move as its games come in);
* :func:`fit` -- the ratings that make every pair's expected score match its observed one best (the maximum
  likelihood of the logistic model, i.e. Bradley-Terry, by Zermelo's iteration), order-independent: what a
  round robin reports. The mean rating is ``anchor`` (1500 unless told), as ratings are only relative.

Example::

    >>> r = fit({("a", "b"): (3, 1, 0)}); round(r["a"] - r["b"], 1)  # a 75% score: 400 log10 3 points
    190.8
"""

from __future__ import annotations

import math
from collections.abc import Mapping

#: The spread of the logistic curve: a 400-point gap expects a 10:1 score (Elo's scale).
SCALE = 400.0
#: The mean rating of a fit (its zero is arbitrary).
ANCHOR = 1500.0
#: The online rule's step per game (FIDE's K for established players is 10-20; 16 is a guess in that range).
K = 16.0

Record = tuple[int, int, int]  # wins, losses, draws of the first player of a pair against the second


def expected(r_a: float, r_b: float) -> float:
    """The score ``a`` expects against ``b`` (0-1)."""
    return 1.0 / (1.0 + 10.0 ** ((r_b - r_a) / SCALE))


def update(r_a: float, r_b: float, wins: int, losses: int, draws: int = 0, k: float = K) -> tuple[float, float]:
    """Both ratings after ``a`` won ``wins``, lost ``losses`` and drew ``draws`` games against ``b`` (one step of
    ``K`` per game, the expectation taken before the batch)."""
    _check_record((wins, losses, draws))
    n = wins + losses + draws
    delta = k * ((wins + 0.5 * draws) - n * expected(r_a, r_b))
    return r_a + delta, r_b - delta


def _check_record(rec: Record) -> None:
    if len(rec) != 3 or any(int(v) != v or v < 0 for v in rec):
        raise ValueError(f"a record is (wins, losses, draws), whole numbers >= 0, got {rec!r}")


def fit(results: Mapping[tuple[str, str], Record], anchor: float = ANCHOR, iterations: int = 2000,
        prior_games: float = 0.0) -> dict[str, float]:
    """Ratings for every player in ``results`` (``(a, b) -> (wins, losses, draws)`` of ``a`` against ``b``).

    Zermelo's iteration for the Bradley-Terry strengths ``g`` (rating ``SCALE * log10 g``): ``g_i = W_i /
    sum_j n_ij / (g_i + g_j)``, a draw half a win for each side. A player who won or lost every game has no
    finite maximum (a ValueError says so): ``prior_games`` virtual draws added to every pair that met keep it
    finite, shrinking every gap toward 0 (a ladder's choice; how many is a guess)."""
    players: list[str] = sorted({p for pair in results for p in pair})
    if not players:
        return {}
    idx = {p: i for i, p in enumerate(players)}
    n = len(players)
    games = [[0.0] * n for _ in range(n)]
    score = [0.0] * n
    for (a, b), rec in results.items():
        _check_record(rec)
        if a == b:
            raise ValueError(f"{a!r} cannot play itself in a rating")
        w, lost, d = rec
        i, j = idx[a], idx[b]
        total = w + lost + d + prior_games
        games[i][j] += total
        games[j][i] += total
        score[i] += w + 0.5 * d + 0.5 * prior_games
        score[j] += lost + 0.5 * d + 0.5 * prior_games
    for p in players:
        i = idx[p]
        if score[i] <= 0 or score[i] >= sum(games[i]):
            raise ValueError(f"{p!r} {'lost' if score[i] <= 0 else 'won'} every game: its rating is unbounded; "
                             "give prior_games > 0")
    g = [1.0] * n
    for _ in range(iterations):
        new = []
        for i in range(n):
            denom = sum(games[i][j] / (g[i] + g[j]) for j in range(n) if games[i][j] > 0)
            new.append(score[i] / denom if denom > 0 else g[i])
        mean_log = sum(math.log(v) for v in new) / n
        new = [v / math.exp(mean_log) for v in new]  # keep the scale fixed (the model sees only ratios)
        if max(abs(a - b) for a, b in zip(new, g)) < 1e-12:
            g = new
            break
        g = new
    return {p: anchor + SCALE * math.log10(g[idx[p]]) for p in players}


__all__ = ["expected", "update", "fit", "SCALE", "ANCHOR", "K"]
