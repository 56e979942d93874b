"""Each game's final report plays exactly the episodes its progress bar counts to (``Game.final_episodes``): a
report that plays more or fewer leaves the bar short of its end or past it, and its time left wrong."""

from __future__ import annotations

import pytest

from melee_agent.games import game_of
from tests.run_reports import check, dodge_result, fight_result


class CountingRun:
    """A final report's run that plays nothing and counts the episodes asked of it."""

    eval_episodes, final_games_per_level, final_games_level_9 = 3, 2, 5
    env_name, action_set, delay_frames, levels_text = "arena", "fight", 0, "levels 1-9"

    def __init__(self, game: str, baseline_runs: int):
        self.game, self.baseline_runs, self.played = game_of(game), baseline_runs, 0
        result = fight_result(0.5, 0.5) if self.game.whole_games else dodge_result(0.5, 0.5)
        self.check = check(result, version=1, step=1)

    def log(self, line: str) -> None: ...
    def log_table(self, *args) -> None: ...
    def log_paths(self) -> None: ...
    def write(self, *args, **kwargs) -> None: ...
    def report(self, *args, **kwargs) -> None: ...

    def keep(self):
        return self.check, b"", self.check

    def play(self, data, episodes, levels, seed):
        self.played += episodes
        return self.check

    def baselines(self, episodes, seed=None):
        names = self.game.baselines[:self.baseline_runs]
        self.played += episodes * len(names)
        return {p: self.check for p in names}


@pytest.mark.parametrize("game", ["dodge", "fight"])
@pytest.mark.parametrize("with_baselines", [True, False])
def test_the_report_plays_what_its_bar_counts(game, with_baselines):
    run = CountingRun(game, len(game_of(game).baselines) if with_baselines else 0)
    run.game.final_report(run)
    assert run.played == run.game.final_episodes(run) > 0
