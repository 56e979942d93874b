"""Whole games of Melee's standard rules (4 stocks, 8:00; docs/design.md "Fights"): reports lead with the
share of games won at the worst CPU level; the final report plays the scripted fighter and dodger beside it
(``fighter`` is scripted for the ``basic`` and ``fight`` action sets)."""

from __future__ import annotations

from melee_agent.games.base import Game

FIGHT = Game(name="fight", config="fight", whole_games=True, headline="win_rate", headline_word="won",
             episodes_text="whole games (4 stocks, 8:00)", baselines=("noop", "random", "dodger", "fighter"))
