"""What a game declares: whether an episode is a whole game, the metric its reports lead with, the baselines its
final report plays, the config that ships it, the engine it plays on (its frame function), the state it keeps beyond the shared
:class:`~melee_agent.arena.env_state.EnvState` fields, and its final report (:meth:`Game.final_report`). (Its
rules' defaults are :data:`melee_agent.arena.games.GAMES`'s.) Importing it is cheap: no torch, no arena, so the
config and the command line can ask it; the frame function, the extra state and the report import what they
need when asked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Protocol

if TYPE_CHECKING:
    import torch

    from melee_agent.arena.env_state import ExtraState
    from melee_agent.report.evaluate import EvalResult
    from melee_agent.report.run_report import ModelCheck, RunReport

#: The final report plays every level, whatever the run trained against.
REPORT_LEVELS = tuple(range(1, 10))
#: The seeds of the final report's games: fixed, whatever ``train.seed`` is, so every run's report plays the same
#: games, and the model and each baseline play the same games too (paired comparisons).
REPORT_SEED = 777
CHECK_SEED = 12_345  # the periodic checks (the learning curve) and the last model's check
LEVEL_9_SEED = 999  # the model's extra games at level 9 (fights)


class FinalReportRun(Protocol):
    """What a game's final report plays and writes with (`train`'s :class:`melee_agent.run.training.FinalReportRun`):
    the settings it reads, the kept model, plays, baselines, ``eval.json``, the learning curve and the log."""

    eval_episodes: int  # train.eval_episodes: episodes per level of the dodging game's report
    final_games_per_level: int  # train.final_games_per_level
    final_games_level_9: int  # train.final_games_level_9
    env_name: str  # env.env, in the curve's title
    action_set: str  # env.action_set
    delay_frames: int  # env.delay_frames
    levels_text: str  # the levels the run trained against, in words
    baseline_runs: int  # how many scripted baselines baselines() plays (none with train.final_baselines = false)

    def log(self, line: str) -> None: ...

    def keep(self) -> tuple[ModelCheck, bytes, ModelCheck]:
        """``(kept model's check, its file, the last model's check)``; writes ``model.safetensors``."""
        ...

    def play(self, data: bytes, episodes: int, levels: tuple[int, ...], seed: int) -> ModelCheck: ...

    def baselines(self, episodes: int, seed: int) -> dict[str, ModelCheck]: ...

    def report(self, model: ModelCheck, baselines: dict[str, ModelCheck], chosen: ModelCheck, last: ModelCheck,
               level_9: ModelCheck | None = None, action_set: str | None = None,
               delay_frames: int | None = None) -> RunReport: ...

    def write(self, report: RunReport, baselines: dict[str, float], title: str,
              metric: str = "untouched_share") -> None: ...

    def log_table(self, model: ModelCheck, baselines: dict[str, ModelCheck], key: str) -> None: ...

    def log_paths(self) -> None: ...


@dataclass(frozen=True)
class Game:
    name: str  # env.game in a config
    config: str  # the shipped config that plays it
    whole_games: bool  # an episode is a whole game (stocks and a clock), not dodging until hit
    headline: str  # the EvalResult share a report leads with, per level and at the worst level
    headline_word: str  # what that share counts, in a sentence ("95% untouched", "95% won")
    episodes_text: str  # what `eval` plays, in its header; {minutes} is the game's clock or cut, m:ss
    baselines: tuple[str, ...]  # the scripted policies the final report plays beside the model

    def episodes_words(self, frames: int) -> str:
        """What one episode is, for `eval`'s header, with its clock or cut of ``frames`` (60 a second).

        >>> from melee_agent.games import game_of
        >>> game_of("fight").episodes_words(28_800), game_of("dodge").episodes_words(1_800)
        ('whole games (4 stocks, 8:00)', 'episodes of up to 0:30')
        """
        seconds = frames // 60
        return self.episodes_text.format(minutes=f"{seconds // 60}:{seconds % 60:02d}")

    @property
    def worst_level_key(self) -> str:
        """The headline at the worst level: the field of EvalResult and of eval.json."""
        return f"{self.headline}_worst_level"

    def worst_level(self, r: EvalResult) -> float | None:
        return getattr(r, self.worst_level_key)

    def per_level(self, r: EvalResult) -> dict[str, float | None]:
        """Each level's headline share, keyed by the level as text (the reports' JSON)."""
        return {str(lv): getattr(v, self.headline) for lv, v in (r.per_level or {}).items()}

    def on_fight_engine(self, cpu: str) -> bool:
        """The game is played on the fight's engine against the CPU ``cpu`` ("melee" or "designed"); False only
        where an earlier frame of its own is kept to replay results made against that CPU."""
        raise NotImplementedError

    def frame(self, cpu: str = "melee") -> Callable[..., object]:
        """The arena's frame function of this game against the CPU ``cpu`` (one frame of B games: ``(state,
        controls, ...) -> (state, damage, ko)``)."""
        if self.on_fight_engine(cpu):
            from melee_agent.arena.fight.frame import fight_frame  # noqa: PLC0415

            return fight_frame
        from melee_agent.arena.dodge.frame import game_frame  # noqa: PLC0415

        return game_frame

    def extra_state(self, num_envs: int, device: torch.device, cpu: str = "melee") -> ExtraState | None:
        """What the game keeps beyond the shared state's fields against the CPU ``cpu``, all zeros (None:
        nothing): the fight engine's :class:`~melee_agent.arena.fight.state.FightState`, wherever it plays."""
        if not self.on_fight_engine(cpu):
            return None
        from melee_agent.arena.fight.state import FightState  # noqa: PLC0415

        return FightState.zeros(num_envs, device)

    def final_episodes(self, run: FinalReportRun) -> int:
        """The episodes :meth:`final_report` plays after ``run.keep()``: the model's and the baselines' (the
        total its progress bar counts to; a test holds them equal)."""
        raise NotImplementedError

    def final_report(self, run: FinalReportRun) -> RunReport:
        """Keep a model, score it and the baselines at every level, write eval.json and the learning curve."""
        raise NotImplementedError


def pct(x: float | None) -> str:
    """A share as a whole percent; ``-`` where there is none (no games)."""
    return f"{x:.0%}" if x is not None else "-"
