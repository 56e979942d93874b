"""The dodging task (the Untouchable paper's), a set of rules played on the fight's engine (the same Fox, Marth and
Melee's CPU as fights): an episode lasts until the agent is hit or a minute passes;
reports lead with the share of episodes left untouched at the worst CPU level, and the final report plays
``train.eval_episodes`` episodes at each level 1-9 and ``train.final_games_level_9`` more at level 9 (the Untouchable
paper's level) with the scripted noop, random, dodger and roller beside the kept model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from melee_agent.games.base import LEVEL_9_SEED, REPORT_LEVELS, REPORT_SEED, FinalReportRun, Game, pct

if TYPE_CHECKING:
    from melee_agent.report.run_report import RunReport


@dataclass(frozen=True)
class Dodge(Game):
    def on_fight_engine(self, cpu: str) -> bool:
        # The dodging rules on the fight's engine (its motion, hits, intangibility, Marth and Melee's CPU); the
        # designed CPU keeps the dodging game's earlier frame (arena/dodge/frame.py), so its results replay.
        return cpu != "designed"

    def final_episodes(self, run: FinalReportRun) -> int:
        return run.eval_episodes * len(REPORT_LEVELS) * (1 + run.baseline_runs) + run.final_games_level_9

    def final_report(self, run: FinalReportRun) -> RunReport:
        # Like SB3's EvalCallback: the model kept is the best one the periodic evaluations saw (the
        # last one is scored the same way first); DQN's greedy policy can swing between snapshots.
        chosen, data, last = run.keep()
        n, n9 = run.eval_episodes, run.final_games_level_9
        c = chosen.result
        run.log(f"kept model v{chosen.model_version} ({c.untouched_share:.0%} in its {c.episodes}-"
                f"episode check, worst level {pct(c.untouched_share_worst_level)}; the last, "
                f"v{last.model_version}, had {last.result.untouched_share:.0%}); evaluating it over {n} new "
                f"episodes at each CPU level 1-9 and {n9} more at level 9...")
        per = n * len(REPORT_LEVELS)
        r = run.play(data, per, REPORT_LEVELS, seed=REPORT_SEED)
        level_9 = run.play(data, n9, (9,), seed=LEVEL_9_SEED) if n9 > 0 else None
        baselines = run.baselines(per, seed=REPORT_SEED)  # the model's games: a paired comparison
        report = run.report(r, baselines, chosen, last, level_9=level_9)
        run.write(report, {f"{k} ({v.result.untouched_share:.0%}, levels 1-9)": v.result.untouched_share
                           for k, v in baselines.items()},
                  f"learning curve vs {run.env_name} CPU {run.levels_text}")
        run.log(f"vs arena CPU, {n} one-minute episodes at each level (untouched for a minute; model's mean "
                f"seconds to first hit):")
        run.log_table(r, baselines, self.headline)
        if level_9 is not None:
            e9 = level_9.result
            run.log(f"level 9, {e9.episodes} more episodes: untouched in {e9.untouched_share:.1%} (mean seconds to "
                    f"the first hit {e9.mean_seconds_to_first_hit:.1f})")
        run.log_paths()
        return report


DODGE = Dodge(name="dodge", config="default", whole_games=False, headline="untouched_share",
              headline_word="untouched", episodes_text="episodes of up to {minutes}", baselines=("noop", "random", "dodger", "roller"))
