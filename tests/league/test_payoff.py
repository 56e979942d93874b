"""The league's results (melee_agent.league.payoff): totals, PFSP's decayed win rates, Elo on known outcomes."""

from __future__ import annotations

import pytest

from melee_agent.league import ratings
from melee_agent.league.payoff import Payoff, interleave


def test_ratings_follow_games_with_a_known_outcome():
    p = Payoff(decay=1.0)
    for name in ("weak", "even", "strong"):
        p.add(name)
    p.record("weak", wins=30)
    p.record("even", wins=15, losses=15)
    p.record("strong", losses=30)
    assert p.rating("strong") > p.rating("even") > p.rating("weak")
    assert p.totals == {"weak": [30, 0, 0], "even": [15, 15, 0], "strong": [0, 30, 0]}
    # Zero-sum: what the members gained the main lost (Elo moves both sides of each game by the same step).
    assert sum(p.ratings.values()) == pytest.approx(4 * ratings.ANCHOR)


def test_one_game_moves_both_by_k_over_two_from_equal_ratings():
    p = Payoff(k=16.0)
    p.add("a")
    p.record("a", wins=1)
    assert p.rating("main") == pytest.approx(1508.0) and p.rating("a") == pytest.approx(1492.0)


def test_the_win_rate_pfsp_reads_favours_recent_games():
    p = Payoff(decay=0.9)
    p.add("snap")
    assert p.win_rate("snap") == 0.5  # not met yet
    p.record("snap", losses=20)
    p.record("snap", wins=20)
    # The 20 losses count 0.9^20 = 0.12 each by now: 20 / (20 + 20 * 0.9^20).
    assert p.win_rate("snap") == pytest.approx(20 / (20 + 20 * 0.9 ** 20))
    assert Payoff(decay=1.0).decay == 1.0
    with pytest.raises(ValueError, match="decay"):
        Payoff(decay=0.0)


def test_a_batch_is_rated_game_by_game_interleaved_and_bad_records_refused():
    assert interleave(3, 3, 0) == [(1, 0, 0), (0, 1, 0)] * 3
    assert sorted(interleave(2, 1, 3)) == sorted([(1, 0, 0)] * 2 + [(0, 1, 0)] + [(0, 0, 1)] * 3)
    p = Payoff()
    p.add("a")
    p.record("a", wins=5, losses=5)
    assert abs(p.rating("main") - ratings.ANCHOR) < 16  # even record, interleaved: the ratings end near where they began
    with pytest.raises(KeyError, match="not in the league"):
        p.record("b", wins=1)
    with pytest.raises(ValueError, match="already"):
        p.add("a")
    with pytest.raises(ValueError, match="wins, losses, draws"):
        p.record("a", wins=-1)
