"""The games the arena plays: the dodging task and whole games (fights), with their rules' defaults.

``dodge`` is the Untouchable paper's task: an episode lasts until the agent is hit (with the
``untouchable`` reward) or one minute passes (a cut). ``fight`` is a whole game of Melee's
standard rules (docs/design.md "Fights"): 4 stocks each and an 8:00 clock; the episode is the game,
over when a player has no stock left (terminal) or when time runs out (terminal where the state
shows the time left, else a cut: :func:`melee_agent.envs.rewards.frame_outcome`; see
:func:`melee_agent.envs.rewards.game_result` for who won).

Example::

    >>> GAMES["fight"].max_frames, GAMES["fight"].timed, GAMES["fight"].action_set, GAMES["dodge"].reward
    (28800, True, 'fight', 'untouchable')
"""

from __future__ import annotations

from dataclasses import dataclass

from melee_agent.envs.rewards import GAME_FRAMES, MAX_FRAMES, check_reward

#: The longest input delay the arena takes, in frames (the Computer Melee Championship plays 18 and 21).
MAX_DELAY = 60


@dataclass(frozen=True)
class GameRules:
    """One game's defaults and what it accepts."""

    action_set: str  # the default action set
    reward: str  # the default reward
    rewards: tuple[str, ...]  # the rewards that fit the game's episodes
    max_frames: int  # the frame limit (dodge: a cut) or the clock (fight: the game's end)
    timed: bool  # the clock's end is the game's end (a whole game; terminal where the state shows the clock)


GAMES = {
    "dodge": GameRules("untouchable", "untouchable", ("untouchable", "damage"), MAX_FRAMES, timed=False),
    "fight": GameRules("fight", "fight", ("fight", "damage"), GAME_FRAMES, timed=True),
}


def check_game(name: str) -> str:
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; known: {', '.join(GAMES)}")
    return name


@dataclass(frozen=True)
class GameSetup:
    """A game's settings as an environment plays them: the defaults filled in, each one checked."""

    game: str
    rules: GameRules
    action_set: str
    reward: str
    max_frames: int


def resolve(game: str, action_set: str | None = None, reward: str | None = None,
            max_frames: int | None = None) -> GameSetup:
    """``game``'s setup, ``None`` meaning the game's default; the arena and Dolphin both start from it.

    Raises ``ValueError`` naming an unknown game or reward, a reward that does not fit the game's
    episodes and a frame limit that is not positive (an unknown action set is refused where it is read).

    >>> resolve("fight").action_set, resolve("dodge", max_frames=600).max_frames
    ('fight', 600)
    """
    rules = GAMES[check_game(game)]
    reward = check_reward(rules.reward if reward is None else reward)
    if reward not in rules.rewards:
        raise ValueError(f"reward {reward!r} does not fit game {game!r}; it takes {', '.join(rules.rewards)}")
    max_frames = rules.max_frames if max_frames is None else int(max_frames)
    if max_frames <= 0:
        raise ValueError(f"max_frames must be positive, got {max_frames}")
    return GameSetup(game, rules, rules.action_set if action_set is None else action_set, reward, max_frames)
