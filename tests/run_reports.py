"""Helpers for the tests that read training reports: an ``eval.json`` built as `train` builds it
(:class:`~melee_agent.report.run_report.RunReport`), with the figures a test chooses."""

from __future__ import annotations

from melee_agent.report.evaluate import EvalResult, GameFigures
from melee_agent.report.run_report import ModelCheck, RunReport, TrainingFigures

__all__ = ["dodge_result", "fight_result", "check", "report"]


def dodge_result(untouched: float, worst: float | None = None, per_level: dict[int, float] | None = None,
                 episodes: int = 90) -> EvalResult:
    levels = {lv: dodge_result(v, episodes=episodes // len(per_level)) for lv, v in per_level.items()} if per_level \
        else None
    return EvalResult(episodes=episodes, untouched_share=untouched, episodes_cut=0, mean_seconds_to_first_hit=40.0,
                      damage_taken=3.0, damage_dealt=0.0, stocks_lost=0.0, stocks_taken=0.0, per_level=levels,
                      untouched_share_worst_level=worst)


def fight_result(win_rate: float, worst: float | None = None, per_level: dict[int, float] | None = None,
                 games: int = 45, ko_causes: dict[str, int] | None = None, taken: float = 3.9,
                 lost: float = 2.0) -> EvalResult:
    wins = round(win_rate * games)
    figures = GameFigures(games=games, wins=wins, losses=games - wins, draws=0, win_rate=win_rate,
                          stocks_taken_per_game=taken, stocks_lost_per_game=lost, damage_dealt_per_game=150.0,
                          damage_taken_per_game=90.0, ko_causes=dict(ko_causes or {}))
    levels = {lv: fight_result(v, games=max(1, games // len(per_level))) for lv, v in per_level.items()} \
        if per_level else None
    return EvalResult(episodes=games, untouched_share=0.0, episodes_cut=0, mean_seconds_to_first_hit=5.0,
                      damage_taken=90.0, damage_dealt=150.0, stocks_lost=lost, stocks_taken=taken, fights=figures,
                      per_level=levels, win_rate_worst_level=worst)


def check(result: EvalResult, minutes: float | None = None, version: int | None = None,
          step: int | None = None, policy: str = "model") -> ModelCheck:
    return ModelCheck(policy, list(range(1, 10)), result, model_version=version, train_step=step, minutes=minutes)


def report(model: ModelCheck, curve: list[ModelCheck], training: TrainingFigures | None = None,
           level_9: ModelCheck | None = None, run_dir: str = "runs/x") -> RunReport:
    """A run's report; a fight's where ``model`` played whole games."""
    fights = model.result.fights is not None
    return RunReport(model=model, baselines={}, run_dir=run_dir, curve=curve, kept="last",
                     last_model_check=curve[-1], trained_levels=list(range(1, 10)), training=training,
                     whole_games=fights, level_9=level_9, action_set="fight" if fights else None,
                     delay_frames=0 if fights else None)
