"""Elo ratings on games whose outcome is known (melee_agent.league.ratings)."""

from __future__ import annotations

import math

import pytest

from melee_agent.league import ratings


def test_expected_score_follows_elos_curve():
    assert ratings.expected(1500, 1500) == 0.5
    assert ratings.expected(1900, 1500) == pytest.approx(10 / 11)  # 400 points: 10 to 1
    assert ratings.expected(1500, 1900) == pytest.approx(1 / 11)


def test_update_moves_the_winner_up_by_what_the_loser_loses():
    a, b = ratings.update(1500, 1500, wins=10, losses=0)
    assert a == pytest.approx(1500 + 16 * 5) and b == pytest.approx(1500 - 16 * 5)
    same = ratings.update(1500, 1500, wins=3, losses=3, draws=4)
    assert same == (1500, 1500)  # scored what was expected: no change
    a, b = ratings.update(1900, 1500, wins=10, losses=1)  # as expected for a 400-point favourite: no change
    assert a == pytest.approx(1900) and b == pytest.approx(1500)


def test_fit_recovers_the_gap_of_a_known_score():
    """A player scoring 75% against another is 400 log10(3) = 190.85 points above it; equal records tie."""
    r = ratings.fit({("a", "b"): (75, 25, 0)})
    assert r["a"] - r["b"] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert (r["a"] + r["b"]) / 2 == pytest.approx(1500)
    r = ratings.fit({("a", "b"): (40, 40, 20)})
    assert r["a"] == pytest.approx(r["b"])


def test_fit_orders_a_chain_and_is_consistent_with_the_curve():
    """a beats b 3:1 and b beats c 3:1: a-c is 2 x 190.85 when the three scores are consistent (a beats c 9:1)."""
    r = ratings.fit({("a", "b"): (300, 100, 0), ("b", "c"): (300, 100, 0), ("c", "a"): (100, 900, 0)})
    assert r["a"] > r["b"] > r["c"]
    assert r["a"] - r["c"] == pytest.approx(800 * math.log10(3), rel=1e-6)
    assert ratings.expected(r["a"], r["c"]) == pytest.approx(0.9, rel=1e-6)


def test_a_perfect_record_needs_a_prior_and_bad_records_are_refused():
    with pytest.raises(ValueError, match="won every game"):
        ratings.fit({("a", "b"): (5, 0, 0)})
    r = ratings.fit({("a", "b"): (5, 0, 0)}, prior_games=1)
    assert r["a"] - r["b"] == pytest.approx(400 * math.log10(5.5 / 0.5))
    with pytest.raises(ValueError, match="wins, losses, draws"):
        ratings.fit({("a", "b"): (1, -1, 0)})
    with pytest.raises(ValueError, match="cannot play itself"):
        ratings.fit({("a", "a"): (1, 1, 0)})
