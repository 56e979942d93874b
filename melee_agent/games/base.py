"""What a game declares: whether an episode is a whole game, the metric its reports lead with, the baselines its
final report plays, the config that ships it. (Its rules' defaults are :data:`melee_agent.arena.games.GAMES`'s,
its frame function the arena's: ``arena/dodge/frame.py``, ``arena/fight/frame.py``.) Importing it is cheap: no
torch, no arena, so the config and the command line can ask it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from melee_agent.report.evaluate import EvalResult


@dataclass(frozen=True)
class Game:
    name: str  # env.game in a config
    config: str  # the shipped config that plays it
    whole_games: bool  # an episode is a whole game (stocks and a clock), not dodging until hit
    headline: str  # the EvalResult share a report leads with, per level and at the worst level
    headline_word: str  # what that share counts, in a sentence ("95% untouched", "95% won")
    episodes_text: str  # what `eval` plays, in its header
    baselines: tuple[str, ...]  # the scripted policies the final report plays beside the model

    @property
    def worst_level_key(self) -> str:
        """The headline at the worst level: the field of EvalResult and of eval.json."""
        return f"{self.headline}_worst_level"

    def worst_level(self, r: EvalResult) -> float | None:
        return getattr(r, self.worst_level_key)

    def per_level(self, r: EvalResult) -> dict[str, float | None]:
        """Each level's headline share, keyed by the level as text (the reports' JSON)."""
        return {str(lv): getattr(v, self.headline) for lv, v in (r.per_level or {}).items()}
