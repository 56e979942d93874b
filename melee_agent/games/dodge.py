"""The dodging task (the Untouchable paper's): an episode lasts until the agent is hit or a minute passes;
reports lead with the share of episodes left untouched at the worst CPU level."""

from __future__ import annotations

from melee_agent.games.base import Game

DODGE = Game(name="dodge", config="default", whole_games=False, headline="untouched_share",
             headline_word="untouched", episodes_text="one-minute episodes", baselines=("noop", "random"))
