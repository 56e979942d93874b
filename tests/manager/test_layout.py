"""The manager under the fight layout (env.state_layout = "fight-30"): rows 63 wide, a network that reads 30
floats, model files that say so, and the config refusing a layout by name."""

from __future__ import annotations

import numpy as np
import pytest

from melee_agent.config import ConfigError, load_config
from melee_agent.io.wire import decode_experience, encode_experience
from melee_agent.manager.trainer import Trainer
from melee_agent.rl.model import ModelMismatch, model_from_bytes
from melee_agent.rl.rows import columns


def test_a_fight_layout_trainer_stores_63_wide_rows_and_publishes_a_30_float_network(tmp_path):
    cfg = load_config("fight", ["env.state_layout=fight-30", "replay.capacity=1000", "env.compile=false"])
    t = Trainer(cfg, tmp_path)
    c = columns(30)
    assert t.replay.storage.width == c.width == 63 and t.learner.online.state_dim == 30
    model, meta = model_from_bytes(t.model.data, action_set="fight", state_layout="fight-30")
    assert meta["state_layout"] == "fight-30" and meta["sizes"]["state_dim"] == 30
    with pytest.raises(ModelMismatch, match="state layout 'fight-30' does not match 'untouchable-27'"):
        model_from_bytes(t.model.data)
    rows = np.random.default_rng(0).random((300, c.width), dtype=np.float32)
    rows[:, c.action], rows[:, c.discount] = 3, 0.99
    exp = decode_experience(encode_experience(rows, action_set="fight", worker_id="w", batch_seq=0, model_version=0,
                                              state_layout="fight-30"),
                            action_set="fight", num_actions=t.num_actions, max_rows=1000, state_layout="fight-30")
    t.replay.add(exp.rows)
    t.replay.flush()
    batch = t.replay.sample(16)
    assert batch.obs.shape == batch.next_obs.shape == (16, 30) and (batch.action == 3).all()
    assert t.learner.step() is not None or t.learner.train_steps == 1


def test_the_config_refuses_an_unknown_layout_and_the_fight_layout_in_the_dodging_game():
    with pytest.raises(ConfigError, match="env.state_layout must be one of untouchable-27, fight-30, got 'fight-31'"):
        load_config("fight", ["env.state_layout=fight-31"])
    with pytest.raises(ConfigError, match="env.state_layout='fight-30' shows a fight's clock and stocks"):
        load_config("default", ["env.state_layout=fight-30"])
    assert load_config("default").env.state_layout == "untouchable-27"
