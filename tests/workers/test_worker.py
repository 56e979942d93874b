"""workers/worker.py: the check of a downloaded model (a worker keeps its model when one does not check
out) and a worker that cannot spool sending its batch directly."""

from __future__ import annotations

import errno
import hashlib

import pytest
import torch

from melee_agent.config import load_config
from melee_agent.rl.model import DuelingDQN
from melee_agent.io.segment_stats import SegmentStats
from melee_agent.workers.client import ManagerClient
from melee_agent.workers.worker import Worker, WorkerSettings, check_model
from tests.manager_kit import model_bytes


def test_worker_checks_a_download_against_its_sha256_header_and_its_own_metadata():
    data = model_bytes(5)
    headers = {"X-Model-Sha256": hashlib.sha256(data).hexdigest(), "X-Model-Version": "5"}
    model, meta = check_model(data, headers, "untouchable", "cpu")
    assert meta["version"] == 5 and isinstance(model, DuelingDQN)
    with pytest.raises(ValueError, match="X-Model-Sha256"):
        check_model(data[:-1000], headers, "untouchable", "cpu")  # cut short
    other = model_bytes(5, seed=9)
    with pytest.raises(ValueError, match="X-Model-Sha256"):
        check_model(other, headers, "untouchable", "cpu")  # not the announced file
    with pytest.raises(ValueError, match="version"):
        check_model(data, {**headers, "X-Model-Version": "6"}, "untouchable", "cpu")
    flipped = bytearray(data)
    flipped[-3] ^= 0x10  # altered in a way the header cannot see (no header): the file's own digest does
    with pytest.raises(ValueError, match="weights_sha256"):
        check_model(bytes(flipped), {}, "untouchable", "cpu")


def test_a_worker_keeps_its_model_when_a_download_does_not_check_out(tmp_path, caplog, manager):
    with manager(tmp_path / "run") as m:
        cfg = load_config("small")
        worker = Worker(cfg, WorkerSettings(manager=m.url, spool_dir=tmp_path / "spool"))
        assert worker.fetch_model() and worker.version == 0
        held = worker.model
        real = worker.client.model

        def cut(etag=None, retries=None):
            data, _, headers = real(None, retries)
            return data[: len(data) // 2], '"other"', headers  # a download cut short

        worker.client.model = cut
        assert not worker.fetch_model()
        assert worker.model is held and worker.version == 0 and worker.models_rejected == 1
        assert "keeping model v0" in caplog.text and "X-Model-Sha256" in caplog.text


def test_a_worker_that_cannot_spool_sends_the_batch_directly(tmp_path, monkeypatch, manager):


    from melee_agent.config import load_config
    from melee_agent.workers.worker import Worker, WorkerSettings

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    with manager(tmp_path / "run") as m:
        w = Worker(load_config("small"), WorkerSettings(manager=m.url, spool_dir=tmp_path / "spool"))
        monkeypatch.setattr(w.spool, "put", full)
        data = torch.rand(300, 57)
        data[:, 27] = torch.arange(300) % 5
        data[:, 29] = 0.99
        w.upload(data, SegmentStats())
        assert w.rows_sent == 300 and ManagerClient(m.url).status().rows_accepted == 300
        assert len(w.spool) == 0
    w.upload(data, SegmentStats())  # the manager is gone too: dropped and counted
    assert w.summary()["rows_dropped"] == 300 and w.rows_sent == 300


def test_a_worker_for_another_action_set_stops_at_once_and_leaves_no_temp_spool(tmp_path, manager, temp_in_tmp_path):
    """Before: 'model download rejected ... no model yet, retrying' for ever; no download can ever fit."""
    from melee_agent.workers.client import ManagerRefused

    with manager(tmp_path / "run") as m:  # the manager trains the `small` config's action set
        worker = Worker(load_config("fight"), WorkerSettings(manager=m.url))  # no --spool-dir: a temp spool
        spool = worker.spool.dir
        assert spool.parent == temp_in_tmp_path and spool.is_dir()
        with pytest.raises(ManagerRefused, match="action set .* does not match 'fight'.*start the worker with the "
                                                  "manager's --config"):
            worker.run()
    assert not spool.exists() and list(temp_in_tmp_path.iterdir()) == []


def test_a_worker_at_another_input_delay_than_the_managers_stops_at_once(tmp_path, manager, temp_in_tmp_path):
    """Before: a worker at 0 frames of delay fed a manager training at 18 (the same action set): every row
    accepted, the fleet disagreeing with the manager about what an action does."""
    from melee_agent.rl.model import ModelMismatch, model_to_bytes
    from melee_agent.workers.client import ManagerRefused

    data = model_to_bytes(DuelingDQN(), version=1, train_step=0, action_set="untouchable", delay_frames=18)
    with pytest.raises(ModelMismatch, match="trains at 18 frames of input delay, this worker plays at 0"):
        check_model(data, {}, "untouchable", "cpu", delay_frames=0)
    assert check_model(data, {}, "untouchable", "cpu", delay_frames=18)[1]["delay_frames"] == 18
    older = model_bytes(1)  # a file from before the key: nothing to compare
    assert check_model(older, {}, "untouchable", "cpu", delay_frames=0)[1]["delay_frames"] is None
    with manager(tmp_path / "run") as m:  # the manager trains the `small` config: 0 frames of delay
        worker = Worker(load_config("small", ["env.delay_frames=6"]), WorkerSettings(manager=m.url))
        with pytest.raises(ManagerRefused, match="trains at 0 frames of input delay, this worker plays at 6.*"
                                                  "start the worker with the manager's --config"):
            worker.run()
