"""Whole games of Melee's standard rules (4 stocks, 8:00; docs/design.md "Fights"): reports lead with the
share of games won at the worst CPU level; the final report plays ``train.final_games_per_level`` games at
each level 1-9 plus ``train.final_games_level_9`` more at level 9, with the scripted fighter and dodger beside
it (``fighter`` is scripted for the ``basic`` and ``fight`` action sets). A fight keeps
:class:`~melee_agent.arena.fight.state.FightState` beyond the shared state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from melee_agent.games.base import LEVEL_9_SEED, REPORT_LEVELS, REPORT_SEED, FinalReportRun, Game, pct

if TYPE_CHECKING:
    from melee_agent.report.run_report import RunReport


@dataclass(frozen=True)
class Fight(Game):
    def on_fight_engine(self, cpu: str) -> bool:
        return True

    def final_episodes(self, run: FinalReportRun) -> int:
        return run.final_games_per_level * len(REPORT_LEVELS) * (1 + run.baseline_runs) + run.final_games_level_9

    def final_report(self, run: FinalReportRun) -> RunReport:
        """Keep a model by win rate, play whole games at every level (and more at level 9) with the baselines
        beside it, write eval.json and the win-rate learning curve."""
        chosen, data, last = run.keep()
        n, n9 = run.final_games_per_level, run.final_games_level_9
        c = chosen.result
        games = c.fights.games if c.fights is not None else 0
        run.log(f"kept model v{chosen.model_version} (won {pct(c.win_rate)} of its {games} check "
                f"games, worst level {pct(c.win_rate_worst_level)}; the last, v{last.model_version}, won "
                f"{pct(last.result.win_rate)}); playing {n} games at each CPU level 1-9 and {n9} more at level 9...")
        per = n * len(REPORT_LEVELS)
        r = run.play(data, per, REPORT_LEVELS, seed=REPORT_SEED)
        level_9 = run.play(data, n9, (9,), seed=LEVEL_9_SEED) if n9 > 0 else None
        baselines = run.baselines(per, seed=REPORT_SEED)  # the model's games: a paired comparison
        report = run.report(r, baselines, chosen, last, level_9=level_9, action_set=run.action_set,
                            delay_frames=run.delay_frames)
        run.write(report, {f"{k} ({pct(v.result.win_rate)}, levels 1-9)": v.result.win_rate or 0.0
                           for k, v in baselines.items()},
                  f"learning curve (fights) vs {run.env_name} CPU {run.levels_text}", metric=self.headline)
        run.log(f"vs arena CPU, {n} whole games at each level (win rate):")
        run.log_table(r, baselines, self.headline)
        g9 = level_9.result.fights if level_9 is not None else None
        if g9 is not None:
            run.log(f"level 9, {g9.games} more games: won {g9.win_rate:.1%} "
                    f"({g9.wins}-{g9.losses}-{g9.draws}); KOs by {g9.ko_causes}; "
                    f"stocks lost to {g9.lost_causes}")
        run.log_paths()
        return report


FIGHT = Fight(name="fight", config="fight", whole_games=True, headline="win_rate", headline_word="won",
              episodes_text="whole games (4 stocks, {minutes})", baselines=("noop", "random", "dodger", "fighter"))
