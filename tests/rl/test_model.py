import warnings

import numpy as np
import pytest
import torch

from melee_agent.rl.model import DuelingDQN, load_model, model_from_bytes, model_to_bytes, save_model


def test_dueling_combines_value_and_mean_centred_advantage():
    torch.manual_seed(0)
    net = DuelingDQN(num_actions=5)
    x = torch.rand(7, 27)
    h = net.shared(x)
    v, a = net.value(h), net.advantage(h)
    expected = v + a - a.mean(dim=1, keepdim=True)
    torch.testing.assert_close(net(x), expected)
    # Per sample: mean over actions of Q equals V for each row.
    torch.testing.assert_close(net(x).mean(dim=1), v.squeeze(1))
    assert [m.out_features for m in (net.shared[0], net.value[0], net.advantage[0])] == [128, 512, 512]


def test_save_load_roundtrip_keeps_weights_and_metadata(tmp_path):
    net = DuelingDQN(num_actions=30)
    path = tmp_path / "m.safetensors"
    sha = save_model(path, net, version=7, train_step=1234, action_set="basic")
    loaded, meta = load_model(path, action_set="basic")
    assert meta["version"] == 7 and meta["train_step"] == 1234 and meta["sha256"] == sha
    assert meta["schema"] == "melee-agent/model/1" and meta["state_layout"] == "untouchable-27"
    x = torch.rand(4, 27)
    torch.testing.assert_close(loaded(x), net.eval()(x))
    assert not list(tmp_path.glob(".*tmp"))  # the atomic write left no temp file


def test_mismatched_action_set_or_layout_fails_clearly(tmp_path):
    path = tmp_path / "m.safetensors"
    save_model(path, DuelingDQN(num_actions=5), version=1, train_step=0, action_set="untouchable")
    with pytest.raises(ValueError, match="action set 'untouchable' does not match 'basic'"):
        load_model(path, action_set="basic")
    with pytest.raises(ValueError, match="state layout"):
        load_model(path, state_layout="other-10")


def test_garbage_bytes_are_rejected_with_a_message():
    with pytest.raises(ValueError, match="not a safetensors file"):
        model_from_bytes(b"\x00" * 4)
    with pytest.raises(ValueError, match="not a safetensors file"):
        model_from_bytes(np.uint64(10).tobytes() + b"not json!!")
    data = model_to_bytes(DuelingDQN(), version=1, train_step=0, action_set="untouchable")
    _, meta = model_from_bytes(data)
    assert meta["sizes"] == {"state_dim": 27, "num_actions": 5, "shared": 128, "stream": 512}


def test_bad_metadata_corrupt_weights_and_wrong_action_count_fail_clearly(tmp_path):
    from safetensors.torch import save as st_save

    good = {"schema": "melee-agent/model/1", "version": "1", "train_step": "0",
            "state_layout": "untouchable-27", "action_set": "untouchable"}
    weights = {k: v.contiguous() for k, v in DuelingDQN().state_dict().items()}
    with pytest.raises(ValueError, match="bad model metadata"):
        model_from_bytes(st_save(weights, metadata=good))  # no "sizes"
    sizes = '{"state_dim": 27, "num_actions": 30, "shared": 128, "stream": 512}'
    with pytest.raises(ValueError, match="has 5 actions, the network has 30"):
        model_from_bytes(st_save(weights, metadata={**good, "sizes": sizes}))
    sizes5 = '{"state_dim": 27, "num_actions": 5, "shared": 64, "stream": 512}'
    with pytest.raises(ValueError, match="weights do not load"):
        model_from_bytes(st_save(weights, metadata={**good, "sizes": sizes5}))
    data = model_to_bytes(DuelingDQN(), version=1, train_step=0, action_set="untouchable")
    with pytest.raises(ValueError, match="weights do not load"):
        model_from_bytes(data[:-100])  # truncated file
    with pytest.raises(ValueError, match="has 30 actions, the network has 5"):
        save_model(tmp_path / "x.safetensors", DuelingDQN(num_actions=5), version=1, train_step=0,
                   action_set="basic")
    assert not (tmp_path / "x.safetensors").exists()


def test_the_input_delay_a_model_trained_at_travels_in_its_file(tmp_path):
    from safetensors.torch import save as st_save

    from melee_agent.rl.policies import make_policy

    path = tmp_path / "d18.safetensors"
    save_model(path, DuelingDQN(num_actions=5), version=1, train_step=0, action_set="untouchable", delay_frames=18)
    assert load_model(path)[1]["delay_frames"] == 18
    older = model_to_bytes(DuelingDQN(), version=1, train_step=0, action_set="untouchable")
    assert model_from_bytes(older)[1]["delay_frames"] is None  # files from before the key: unknown, not 0
    with pytest.raises(ValueError, match="delay_frames must be 0 or more"):
        model_to_bytes(DuelingDQN(), version=1, train_step=0, action_set="untouchable", delay_frames=-1)
    weights = {k: v.contiguous() for k, v in DuelingDQN().state_dict().items()}
    meta = {"schema": "melee-agent/model/1", "version": "1", "train_step": "0", "state_layout": "untouchable-27",
            "action_set": "untouchable", "delay_frames": "soon",
            "sizes": '{"state_dim": 27, "num_actions": 5, "shared": 128, "stream": 512}'}
    with pytest.raises(ValueError, match="delay_frames 'soon'"):
        model_from_bytes(st_save(weights, metadata=meta))
    # Playing it at another delay is allowed but said; at its own delay nothing is said.
    with pytest.warns(UserWarning, match="trained with 18 frames of input delay and plays here with 0"):
        make_policy(str(path), "untouchable", delay_frames=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_policy(str(path), "untouchable", delay_frames=18)
        make_policy(str(path), "untouchable")


def test_the_manager_publishes_its_configs_input_delay_in_every_model(tmp_path):
    import dataclasses

    from melee_agent.config import load_config
    from melee_agent.manager.trainer import Trainer

    cfg = load_config("small")
    cfg = dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, delay_frames=18))
    trainer = Trainer(cfg, tmp_path / "run")
    assert model_from_bytes(trainer.model.data)[1]["delay_frames"] == 18
    assert load_model(tmp_path / "run" / "model.safetensors")[1]["delay_frames"] == 18


def test_an_action_embedding_reads_each_fighters_action_id_from_the_state():
    """``action_embed``: the shared layer reads the state and a learned vector for each fighter's action id (ids
    read back from id / 400 exactly, for every id), and the file rebuilds the same network."""
    from melee_agent.envs.state import STATE_NAMES
    from melee_agent.rl.model import ACTION_COLUMNS, sizes_of_weights

    assert [STATE_NAMES[c] for c in ACTION_COLUMNS] == ["agent_action", "opponent_action"]
    torch.manual_seed(0)
    net = DuelingDQN(num_actions=5, action_embed=4)
    ids = torch.arange(400)
    obs = torch.zeros(400, 27)
    obs[:, ACTION_COLUMNS[0]] = (ids.float() / 400.0).to(torch.float32)
    obs[:, ACTION_COLUMNS[1]] = ((399 - ids).float() / 400.0).to(torch.float32)
    x = net.features(obs)
    assert x.shape == (400, 35) and torch.equal(x[:, :27], obs)
    assert torch.equal(x[:, 27:31], net.action_embed.weight[ids]) and torch.equal(x[:, 31:], net.action_embed.weight[399 - ids])
    # Neighbouring ids (Marth's up tilt 56, down tilt 57) get unrelated vectors, not points on a line.
    assert not torch.allclose(x[56, 27:31], x[57, 27:31])
    assert sizes_of_weights(net.state_dict()) == net.sizes() == {"state_dim": 27, "num_actions": 5, "shared": 128,
                                                               "stream": 512, "action_embed": 4}
    assert "action_embed" not in DuelingDQN().sizes()  # files without it read as before
    loaded, meta = model_from_bytes(model_to_bytes(net, version=1, train_step=0, action_set="untouchable"))
    assert meta["sizes"]["action_embed"] == 4
    torch.testing.assert_close(loaded(obs), net.eval()(obs))
    with pytest.raises(ValueError, match="action_embed"):
        DuelingDQN(action_embed=-1)
