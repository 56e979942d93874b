"""The Dolphin worker starts the configured stage: ``env.stage`` from the config through ``make_env`` to libmelee's
menu helper, against the Slippi Dolphin stand-in (its stage select screen starts the game on the icon chosen, and
the game's first frame says the stage, as Melee's does); a list of stages draws one per game."""

from __future__ import annotations

import re

import pytest

from melee_agent.config import load_config
from melee_agent.envs.make import make_env
from tests.dolphin.test_standin import play_until, standin
from tests.dolphin_standin.install import events

pytestmark = pytest.mark.usefixtures("temp_in_tmp_path")


def dolphin_config(exe, overrides):
    return load_config("dolphin", [f"dolphin.dolphin_path={exe}", f"dolphin.iso_path={exe.parent / 'melee.iso'}",
                                   "dolphin.timeout_s=3", "dolphin.menu_timeout_s=60", *overrides])


def started_stages(folder) -> list[str]:
    return [re.search(r"starts: stage (\w+)", e).group(1) for e in events(folder) if "starts: stage" in e]


def test_the_worker_starts_env_stage_and_checks_it_on_the_first_frame(tmp_path):
    exe, _ = standin(tmp_path, frames_limit=90)
    env = make_env(dolphin_config(exe, ["env.stage=yoshis_story"]))
    try:
        env.reset()
        assert env.gamestate.stage.name == "YOSHIS_STORY"  # what libmelee read off the game's start
        play_until(env, lambda: env.supervisor.games >= 2)
        assert started_stages(exe.parent)[:2] == ["YOSHIS_STORY", "YOSHIS_STORY"]
        assert env.supervisor.setup_mismatches == [] and env.restarts == 0
    finally:
        env.close()


@pytest.mark.slow
def test_a_list_of_stages_draws_one_per_game_by_its_weights(tmp_path):
    exe, _ = standin(tmp_path, frames_limit=60)
    env = make_env(dolphin_config(exe, ["env.stage=[battlefield, dreamland]"]))
    try:
        env.reset()
        play_until(env, lambda: env.supervisor.games >= 5, limit_s=120)
        seen = started_stages(exe.parent)
        # The draws of seed 0 (random.Random): dreamland, dreamland, battlefield, battlefield, dreamland.
        assert seen[:5] == ["DREAMLAND", "DREAMLAND", "BATTLEFIELD", "BATTLEFIELD", "DREAMLAND"], seen
        assert env.supervisor.setup_mismatches == [] and env.restarts == 0
    finally:
        env.close()
    exe, _ = standin(tmp_path / "weighted", frames_limit=60)
    env = make_env(dolphin_config(exe, ["env.stage=[battlefield, dreamland]", "env.stage_weights=[0, 1]"]))
    try:
        env.reset()
        play_until(env, lambda: env.supervisor.games >= 3, limit_s=120)
        assert set(started_stages(exe.parent)) == {"DREAMLAND"}
    finally:
        env.close()


def test_the_menus_pick_env_stage_else_the_older_dolphin_stage():
    from melee.enums import Stage

    from melee_agent.config import DolphinConfig
    from melee_agent.dolphin.supervisor import StageDraw, menu_stages

    assert menu_stages(DolphinConfig(), None) == [Stage.FINAL_DESTINATION]
    assert menu_stages(DolphinConfig(stage="BATTLEFIELD"), None) == [Stage.BATTLEFIELD]
    assert menu_stages(DolphinConfig(), ["yoshis_story", "dreamland"]) == [Stage.YOSHIS_STORY, Stage.DREAMLAND]
    assert menu_stages(DolphinConfig(stage="RANDOM_STAGE"), ["dreamland"]) == [Stage.RANDOM_STAGE]
    draws = StageDraw(["a", "b"], [0, 1], seed=3)
    assert {draws.next() for _ in range(20)} == {"b"}
    equal = StageDraw(["a", "b"], None, seed=3)
    assert {equal.next() for _ in range(50)} == {"a", "b"}
