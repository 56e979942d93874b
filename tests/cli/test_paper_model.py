"""A model file that records ``untouchable-paper`` is played with that action set by eval, watch and umi."""

from __future__ import annotations

import pytest

from melee_agent.cli.common import config_for_policy, model_settings
from melee_agent.rl.model import DuelingDQN, save_model


@pytest.fixture
def paper_model(tmp_path):
    path = tmp_path / "paper.safetensors"
    save_model(path, DuelingDQN(num_actions=5), version=1, train_step=0, action_set="untouchable-paper")
    return str(path)


def test_eval_and_watch_read_the_paper_action_set_and_its_game_from_the_file(paper_model):
    settings = model_settings(paper_model)
    assert settings["env.action_set"] == "untouchable-paper" and settings["env.game"] == "dodge"
    cfg, _ = config_for_policy(None, [], paper_model)  # what eval and watch play the file under
    assert (cfg.env.action_set, cfg.env.game, cfg.env.reward) == ("untouchable-paper", "dodge", "untouchable")


def test_the_umi_bot_reads_the_paper_action_set_with_its_remap(paper_model):
    pytest.importorskip("umi")
    from melee_agent.umi import MeleeAgentBot  # noqa: PLC0415

    bot = MeleeAgentBot.from_file(paper_model)
    assert bot.action_set.name == "untouchable-paper" and bot.players[0].remap[1, 4] != 1  # after a shine: a wavedash
