"""The manager app under uvicorn on a loopback port, over real HTTP: ingest, auth, models, resume."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import numpy as np
import pytest
import uvicorn

from melee_agent.config import load_config
from melee_agent.model import model_from_bytes
from melee_agent.rows import ACTION, DISCOUNT
from melee_agent.segment_stats import SegmentStats
from melee_agent.wire import encode_experience
from melee_agent.manager.app import create_app
from melee_agent.manager.checkpoints import list_checkpoints
from melee_agent.workers.client import ManagerClient, ManagerError

TOKEN = "s3cret-token-for-tests"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(run_dir: Path, token: str | None = None, resume: bool = False, **overrides):
    sets = [f"{k.replace('__', '.')}={v}" for k, v in overrides.items()]
    cfg = load_config("small", ["manager.burn_in=300", "manager.publish_every=20", "manager.checkpoint_every=40",
                                "learner.metrics_every=5", *sets])
    port = _port()
    server = uvicorn.Server(uvicorn.Config(create_app(cfg, run_dir, token=token, resume=resume), host="127.0.0.1",
                                           port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "server did not start"
        time.sleep(0.05)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(30)


def batch(n: int = 200, seed: int = 0, **kw) -> bytes:
    r = np.random.default_rng(seed).random((n, 57), dtype=np.float32)
    r[:, ACTION] = np.arange(n) % 5
    r[:, DISCOUNT] = 0.99
    args = {"action_set": "untouchable", "worker_id": "w0", "batch_seq": seed, "model_version": 0,
            "stats": SegmentStats(episodes=2, return_sum=1.0, length_sum=300, hits=2, frames=400)}
    args.update(kw)
    return encode_experience(r, **args)


def wait_for(pred, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail("condition not met in time")


def test_ingest_train_publish_and_bad_input_changes_nothing(tmp_path):
    with serving(tmp_path) as url:
        client = ManagerClient(url)
        assert httpx.get(f"{url}/healthz").json() == {"status": "ok"}
        assert httpx.get(f"{url}/readyz").status_code == 200
        data, etag, headers = client.model()
        model, meta = model_from_bytes(data, action_set="untouchable")
        assert meta["version"] == 0 and etag and headers["x-model-version"] == "0"
        assert client.model(etag)[0] is None  # 304: nothing new
        sent = 0
        for i in range(5):
            r = client.upload(batch(200, seed=i))
            assert r["accepted"] == 200
            sent += 200
        before = client.status()
        bad = [b"junk", batch(200, action_set="basic"), batch(10)[:-7]]
        codes = [httpx.post(f"{url}/v1/experience", content=b).status_code for b in bad]
        assert codes[0] == 400 and codes[1] == 409 and codes[2] == 400
        r = httpx.post(f"{url}/v1/experience", content=b"junk")
        assert "not a safetensors file" in r.json()["detail"]
        after = client.status()
        assert after.rows_accepted == before.rows_accepted == sent
        st = wait_for(lambda: (s := client.status()).model_version >= 2 and s)
        assert st.train_steps >= 40 and st.replay_size == sent
        assert st.train_steps <= 8.0 * sent  # the train/ingest ratio cap holds
        new, new_etag, _ = client.model(etag)
        assert new is not None and new_etag != etag
        assert model_from_bytes(new)[1]["version"] >= 2
        meta = client.meta()
        assert meta["action_set"] == "untouchable" and meta["state_layout"] == "untouchable-27"
        assert set(st.to_json()) >= {"replay_size", "rows_accepted", "train_steps", "model_version"}
    assert list_checkpoints(tmp_path)
    assert (tmp_path / "model.safetensors").exists() and (tmp_path / "config.json").exists()


def test_training_waits_for_burn_in_and_is_capped_per_row(tmp_path):
    with serving(tmp_path, manager__burn_in=1000, manager__max_train_per_row=0.05) as url:
        client = ManagerClient(url)
        client.upload(batch(500))
        time.sleep(1.0)
        assert client.status().train_steps == 0  # below burn-in
        client.upload(batch(500, seed=1))
        client.upload(batch(500, seed=2))
        wait_for(lambda: client.status().train_steps >= 70)
        time.sleep(1.0)
        assert client.status().train_steps <= 0.05 * 1500 + 25  # capped (checked once per chunk of 25)


def test_token_is_required_on_v1_but_not_on_healthz(tmp_path):
    with serving(tmp_path, token=TOKEN) as url:
        assert httpx.get(f"{url}/healthz").status_code == 200
        for path in ("/v1/model", "/v1/model/meta", "/v1/status"):
            assert httpx.get(f"{url}{path}").status_code == 401
            assert httpx.get(f"{url}{path}", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert httpx.post(f"{url}/v1/experience", content=batch(10)).status_code == 401
        with pytest.raises(ManagerError, match="401"):
            ManagerClient(url, token="nope").status()
        good = ManagerClient(url, token=TOKEN)
        assert good.upload(batch(10))["accepted"] == 10
        assert good.status().rows_accepted == 10


def test_oversized_upload_is_413_and_resume_continues_counters(tmp_path):
    with serving(tmp_path, manager__max_upload_rows=100) as url:
        r = httpx.post(f"{url}/v1/experience", content=batch(200))
        assert r.status_code == 413 and "limit" in r.json()["detail"]
        client = ManagerClient(url)
        for i in range(4):
            client.upload(batch(100, seed=i))
        wait_for(lambda: client.status().train_steps >= 60)
    ckpts = list_checkpoints(tmp_path)
    assert ckpts
    with serving(tmp_path, resume=True) as url:
        st = ManagerClient(url).status()
        assert st.resumed_from == ckpts[-1].name
        assert st.train_steps >= 60 and st.model_version >= 1
        assert st.rows_accepted == 400


def test_resume_without_checkpoint_fails_clearly(tmp_path):
    from melee_agent.manager.trainer import Trainer

    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        Trainer(load_config("small"), tmp_path, resume=True)


@pytest.mark.parametrize("prioritized", [True, False])
def test_the_manager_tells_workers_whether_to_send_priorities(tmp_path, prioritized):
    # A worker started with the opposite replay setting follows what the manager's replay takes.
    from melee_agent.workers.worker import Worker, WorkerSettings

    with serving(tmp_path / "run", replay__prioritized=str(prioritized).lower()) as url:
        meta = ManagerClient(url).meta()
        assert meta["send_priorities"] is prioritized
        cfg = load_config("small", [f"replay.prioritized={str(not prioritized).lower()}"])
        worker = Worker(cfg, WorkerSettings(manager=url, spool_dir=tmp_path / "spool"))
        assert worker.send_priorities is (not prioritized)
        assert worker.fetch_model()
        assert worker.send_priorities is prioritized
