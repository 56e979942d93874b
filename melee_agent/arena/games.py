"""The games the arena plays: the dodging task and whole games (fights), with their rules' defaults.

``dodge`` is the Untouchable paper's task: an episode lasts until the agent is hit (with the
``untouchable`` reward) or one minute passes (a cut). ``fight`` is a whole game of Melee's
standard rules (docs/design.md "Fights"): 4 stocks each and an 8:00 clock; the episode is the game,
terminal when a player has no stock left or when time runs out (see
:func:`melee_agent.rewards.game_result` for who won).

Example::

    >>> GAMES["fight"].max_frames, GAMES["fight"].timed, GAMES["dodge"].reward
    (28800, True, 'untouchable')
"""

from __future__ import annotations

from dataclasses import dataclass

from melee_agent.rewards import GAME_FRAMES, MAX_FRAMES

#: The longest input delay the arena takes, in frames (the Computer Melee Championship plays 18 and 21).
MAX_DELAY = 60


@dataclass(frozen=True)
class GameRules:
    """One game's defaults and what it accepts."""

    action_set: str  # the default action set
    reward: str  # the default reward
    rewards: tuple[str, ...]  # the rewards that fit the game's episodes
    max_frames: int  # the frame limit (dodge: a cut) or the clock (fight: the game's end)
    timed: bool  # the clock's end is the episode's terminal end (a whole game), not a cut


GAMES = {
    "dodge": GameRules("untouchable", "untouchable", ("untouchable", "damage"), MAX_FRAMES, timed=False),
    # The `fight` action set comes with fight training (issue 23); until then fights play `basic`.
    "fight": GameRules("basic", "fight", ("fight", "damage"), GAME_FRAMES, timed=True),
}


def check_game(name: str) -> str:
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; known: {', '.join(GAMES)}")
    return name
