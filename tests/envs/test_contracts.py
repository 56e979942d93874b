"""The contracts every part relies on: one StepInfo for the arena and Dolphin alike, the Replay
protocol, one noop index, one header reader, configs that ship with the package."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from melee_agent.envs.actions import ACTION_SETS
from melee_agent.arena import Arena
from melee_agent.config import ConfigError, config_to_toml, load_config, shipped_configs
from melee_agent.rl.model import DuelingDQN, model_from_bytes, model_to_bytes
from melee_agent.benchmarks.fed import HostReplay
from melee_agent.rl.replay import DeviceReplay, PrioritizedDeviceReplay, Replay
from melee_agent.rl.rows import ROW_WIDTH
from melee_agent.envs.vecenv import StepInfo, VecEnv
from melee_agent.io.wire import WireError, decode_experience
from tests.replays_kit import replay_path
from tests.dolphin_kit import replay_env

DTYPES = {"ready": torch.bool, "hit": torch.bool, "terminal": torch.bool, "truncated": torch.bool,
          "frames": torch.long, "episode_frame": torch.long, "episode_return": torch.float32,
          "damage_taken": torch.float32, "damage_dealt": torch.float32, "stocks_lost": torch.long,
          "stocks_taken": torch.long, "final_obs": torch.float32, "cpu_level": torch.long,
          "agent_stocks": torch.long, "opponent_stocks": torch.long, "agent_percent": torch.float32,
          "opponent_percent": torch.float32, "game_over": torch.bool, "ko_move": torch.int64,
          "lost_move": torch.int64}


def _check_info(info: StepInfo, B: int) -> None:
    assert isinstance(info, StepInfo)
    assert {k: getattr(info, k).dtype for k in info._fields} == DTYPES
    assert all(getattr(info, k).shape[0] == B for k in info._fields)
    assert info["hit"] is info.hit  # docs/design.md's info["key"] spelling reads the same field
    with pytest.raises(KeyError):
        info["no_such_field"]


def test_the_arena_and_dolphin_report_the_same_step_info():
    arena = Arena(3, seed=1)
    assert isinstance(arena, VecEnv)
    arena.reset()
    for step in (arena.step, arena.step_async):
        _, _, _, info = step(torch.tensor([1, 0, 4]))
        _check_info(info, 3)
    dolphin, _ = replay_env(replay_path("libmelee_test_game_1.slp"))
    assert isinstance(dolphin, VecEnv)
    dolphin.reset()
    for step in (dolphin.step, dolphin.step_async):
        _, _, _, info = step(torch.tensor([1]))
        _check_info(info, 1)
        assert bool(info.ready[0])  # one Dolphin is always ready


def test_replays_follow_the_protocol_and_only_prioritized_ones_take_priorities():
    rows = np.zeros((8, ROW_WIDTH), np.float32)
    for replay in (DeviceReplay(16, block_size=4), PrioritizedDeviceReplay(16, block_size=4), HostReplay(16)):
        assert isinstance(replay, Replay)
        replay.add(rows, np.full(8, 2.0, np.float32))  # a uniform replay accepts and ignores priorities
        replay.flush()
        assert len(replay) == 8 and replay.staged == 0
        batch = replay.sample(4)
        if replay.prioritized:
            replay.update_priorities(batch.idx, torch.ones(4))
            assert replay.max_priority == 2.0
        else:
            with pytest.raises(TypeError, match="keeps no priorities"):
                replay.update_priorities(batch.idx, torch.ones(4))


def test_noop_is_the_all_neutral_action_of_every_set():
    assert ACTION_SETS["untouchable"].noop_index == ACTION_SETS["untouchable"].index("noop")
    assert ACTION_SETS["basic"].noop_index == ACTION_SETS["basic"].index("none_neutral")
    assert Arena(1, action_set="basic").noop_index == ACTION_SETS["basic"].noop_index


def test_model_files_and_batches_share_one_header_reader():
    data = model_to_bytes(DuelingDQN(), version=1, train_step=0, action_set="untouchable")
    broken = (10**7).to_bytes(8, "little") + data[8:]  # a header length past the end
    with pytest.raises(ValueError, match="header length") as model_error:
        model_from_bytes(broken)
    with pytest.raises(WireError, match="header length") as wire_error:
        decode_experience(broken, action_set="untouchable", num_actions=5, max_rows=10)
    # One reader, one message; the model's names where the bytes came from ("model" by default).
    assert str(model_error.value) == f"model: {wire_error.value}" and wire_error.value.status == 400


def test_shipped_configs_load_from_any_folder_and_round_trip_as_toml(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no configs/ folder here
    assert {"default", "small", "dolphin"} <= set(shipped_configs())
    cfg = load_config("small", ["learner.lr=1e-05", 'dolphin.iso_path=/isos/a "b".iso'])
    assert cfg.name == "small" and cfg.replay.capacity == 20_000
    (tmp_path / "resolved.toml").write_text(config_to_toml(cfg))
    assert load_config("resolved.toml") == cfg
    with pytest.raises(ConfigError, match="shipped configs: default, dolphin, .*gpu, .*small"):
        load_config("nosuchconfig")
    assert os.getcwd() == str(tmp_path)
