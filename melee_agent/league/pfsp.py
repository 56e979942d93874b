"""Prioritized fictitious self-play (PFSP): how often the main agent meets each member of its pool.

AlphaStar (Vinyals et al., "Grandmaster level in StarCraft II using multi-agent reinforcement learning",
Nature 2019, Methods "Prioritized fictitious self-play"): opponent ``B`` is drawn with probability
``f(P[A beats B]) / sum_C f(P[A beats C])``. ``f_hard(x) = (1 - x)^p`` puts the games on the members the main
still loses to (a member it always beats is never drawn); AlphaStar's main agents use ``p = 2`` (its
pseudocode's ``"squared"`` weighting). ``f_var(x) = x (1 - x)`` is its other weighting (members of about equal
strength). Where every weight is 0 (the main beats everyone), the draw is uniform, as AlphaStar's pseudocode
does.

Example::

    >>> [round(w, 3) for w in pfsp_weights([0.0, 0.5, 1.0])]    # never won, half, always won
    [0.8, 0.2, 0.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

WEIGHTINGS = ("hard", "var")


def f_hard(x: float, p: float = 2.0) -> float:
    """AlphaStar's ``f_hard``: ``(1 - x)^p`` for the main's win rate ``x``."""
    return (1.0 - x) ** p


def f_var(x: float) -> float:
    """AlphaStar's ``f_var``: ``x (1 - x)``, most weight on even matches."""
    return x * (1.0 - x)


def pfsp_weights(win_rates: Sequence[float], weighting: str = "hard", p: float = 2.0) -> list[float]:
    """The probability of drawing each member, from the main's win rate against each (0-1)."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")
    if not p > 0 or not math.isfinite(p):
        raise ValueError(f"the power p must be a positive number, got {p!r}")
    for x in win_rates:
        if not 0.0 <= x <= 1.0:
            raise ValueError(f"win rates must be in [0, 1], got {list(win_rates)}")
    if not win_rates:
        return []
    raw = [f_hard(x, p) if weighting == "hard" else f_var(x) for x in win_rates]
    total = sum(raw)
    if total < 1e-10:  # the main beats everyone (or, f_var, loses or wins every game): draw evenly
        return [1.0 / len(raw)] * len(raw)
    return [w / total for w in raw]


__all__ = ["f_hard", "f_var", "pfsp_weights", "WEIGHTINGS"]
