"""The games, one object each: the dodging task (:data:`~melee_agent.games.dodge.DODGE`) and whole games
(:data:`~melee_agent.games.fight.FIGHT`). What differs between them is asked of the object, never of the
game's name: its rules, whether an episode is a whole game, its headline metric, its baselines, its config.

    >>> game_of("fight").whole_games, game_of("dodge").worst_level_key
    (True, 'untouched_share_worst_level')
"""

from __future__ import annotations

from melee_agent.games.base import Game
from melee_agent.games.dodge import DODGE
from melee_agent.games.fight import FIGHT

GAMES: dict[str, Game] = {g.name: g for g in (DODGE, FIGHT)}


def game_of(name: str) -> Game:
    """The game called ``name``; a ``ValueError`` naming the known ones otherwise."""
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; known: {', '.join(GAMES)}")
    return GAMES[name]


def game_playing(whole_games: bool) -> Game:
    """The game whose episodes are whole games (or not): what a report that says only that played
    (eval.json's :attr:`~melee_agent.report.run_report.RunReport.whole_games`).

    >>> game_playing(True).headline, game_playing(False).headline
    ('win_rate', 'untouched_share')
    """
    return next(g for g in GAMES.values() if g.whole_games is whole_games)


__all__ = ["DODGE", "FIGHT", "GAMES", "Game", "game_of", "game_playing"]
