"""manager/app.py over real HTTP (the manager under uvicorn on a loopback port): ingest, training,
publishing, auth and the bearer check, upload size limits (also while a body streams in), a full disk."""

from __future__ import annotations

import errno
import hmac
import socket
import time

import httpx
import pytest

from melee_agent.config import load_config
from melee_agent.rl.model import model_from_bytes
from melee_agent.manager import checkpoint_files as checkpoints
from melee_agent.manager.checkpoint_files import list_checkpoints
from melee_agent.manager.ledger import UploadLedger
from melee_agent.workers.client import ManagerClient, ManagerError
from melee_agent.workers.worker import Worker, WorkerSettings
from tests.manager_kit import TOKEN, batch, wait_for


def test_ingest_train_publish_and_bad_input_changes_nothing(tmp_path, manager):
    with manager(tmp_path) as m:
        client = ManagerClient(m.url)
        assert httpx.get(f"{m.url}/healthz").json() == {"status": "ok"}
        assert httpx.get(f"{m.url}/readyz").status_code == 200
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
        codes = [httpx.post(f"{m.url}/v1/experience", content=b).status_code for b in bad]
        assert codes[0] == 400 and codes[1] == 409 and codes[2] == 400
        r = httpx.post(f"{m.url}/v1/experience", content=b"junk")
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


def test_training_waits_for_burn_in_and_is_capped_per_row(tmp_path, manager):
    with manager(tmp_path, manager__burn_in=1000, manager__max_train_per_row=0.05) as m:
        client = ManagerClient(m.url)
        client.upload(batch(500))
        # Below burn-in once the rows are in the replay (not merely still queued): the thread does not train, and
        # says so. The ingest that stored them is the training thread's: it has looked by the next drain.
        wait_for(lambda: client.status().replay_size == 500)
        time.sleep(0.5)
        st = client.status()
        assert st.rows_ingested == 500 and st.train_steps == 0 and not st.training
        client.upload(batch(500, seed=1))
        client.upload(batch(500, seed=2))
        wait_for(lambda: client.status().train_steps >= 70)
        time.sleep(1.0)
        assert client.status().train_steps <= 0.05 * 1500 + 25  # capped (checked once per chunk of 25)


def test_token_is_required_on_v1_but_not_on_healthz(tmp_path, manager):
    with manager(tmp_path, token=TOKEN) as m:
        assert httpx.get(f"{m.url}/healthz").status_code == 200
        for path in ("/v1/model", "/v1/model/meta", "/v1/status"):
            assert httpx.get(f"{m.url}{path}").status_code == 401
            assert httpx.get(f"{m.url}{path}", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert httpx.post(f"{m.url}/v1/experience", content=batch(10)).status_code == 401
        with pytest.raises(ManagerError, match="401"):
            ManagerClient(m.url, token="nope").status()
        good = ManagerClient(m.url, token=TOKEN)
        assert good.upload(batch(10))["accepted"] == 10
        assert good.status().rows_accepted == 10


def test_oversized_upload_is_413_and_resume_continues_counters(tmp_path, manager):
    with manager(tmp_path, manager__max_upload_rows=100) as m:
        r = httpx.post(f"{m.url}/v1/experience", content=batch(200))
        assert r.status_code == 413 and "limit" in r.json()["detail"]
        client = ManagerClient(m.url)
        for i in range(4):
            client.upload(batch(100, seed=i))
        wait_for(lambda: client.status().train_steps >= 60)
    ckpts = list_checkpoints(tmp_path)
    assert ckpts
    with manager(tmp_path, resume=True) as m:
        st = ManagerClient(m.url).status()
        assert st.resumed_from == ckpts[-1].name
        assert st.train_steps >= 60 and st.model_version >= 1
        assert st.rows_accepted == 400


@pytest.mark.parametrize("prioritized", [True, False])
def test_the_manager_tells_workers_whether_to_send_priorities(tmp_path, prioritized, manager):
    # A worker started with the opposite replay setting follows what the manager's replay takes.

    with manager(tmp_path / "run", replay__prioritized=str(prioritized).lower()) as m:
        meta = ManagerClient(m.url).meta()
        assert meta["send_priorities"] is prioritized
        cfg = load_config("small", [f"replay.prioritized={str(not prioritized).lower()}"])
        worker = Worker(cfg, WorkerSettings(manager=m.url, spool_dir=tmp_path / "spool"))
        assert worker.send_priorities is (not prioritized)
        assert worker.fetch_model()
        assert worker.send_priorities is prioritized


def _raw_post(url: str, head: str, chunks, pause: float = 0.0) -> tuple[int, bytes]:
    """Send a request by hand and read the answer without finishing the body."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=20) as s:
        s.sendall(head.encode())
        sent = 0
        for chunk in chunks:
            try:
                s.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
        time.sleep(pause)
        data = b""
        s.settimeout(5)
        try:
            while True:  # the answer says "connection: close": read to the end
                part = s.recv(65536)
                if not part:
                    break
                data += part
        except (ConnectionResetError, socket.timeout):
            pass
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
    return status, data


def test_the_body_limit_holds_while_the_body_streams_in(tmp_path, manager):
    with manager(tmp_path, manager__max_upload_rows=100) as m:
        before = httpx.get(f"{m.url}/v1/status").json()
        limit = 100 * 57 * 4 + 64 * 1024
        # Chunked, no Content-Length: the answer comes after the limit is passed, while the body
        # is still unfinished (no terminating chunk is ever sent).
        piece = b"x" * 16384
        chunk = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
        head = ("POST /v1/experience HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                "Transfer-Encoding: chunked\r\n\r\n")
        status, data = _raw_post(m.url, head, [chunk] * (limit // len(piece) + 2), pause=0.5)
        assert status == 413 and b"stopped reading" in data
        # A Content-Length above the limit is refused before a byte of the body is sent.
        head = f"POST /v1/experience HTTP/1.1\r\nHost: x\r\nContent-Length: {10**10}\r\n\r\n"
        status, data = _raw_post(m.url, head, [])
        assert status == 413 and str(10**10).encode() in data
        # httpx streaming a generator body (chunked) gets the 413 too, or a closed connection.
        def gen():
            for _ in range(limit // 8192 + 10):
                yield b"y" * 8192
        try:
            r = httpx.post(f"{m.url}/v1/experience", content=gen(), timeout=20)
            assert r.status_code == 413
        except httpx.TransportError:
            pass
        after = httpx.get(f"{m.url}/v1/status").json()
        assert after["rows_accepted"] == before["rows_accepted"] == 0 and after["replay_size"] == 0
        assert httpx.post(f"{m.url}/v1/experience", content=batch(100)).status_code == 202  # still serving


def test_bearer_token_is_compared_in_constant_time(tmp_path, monkeypatch, manager):
    calls = []
    real = hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr("melee_agent.manager.app.hmac.compare_digest", spy)
    with manager(tmp_path, token=TOKEN) as m:
        near = TOKEN[:-1] + ("x" if TOKEN[-1] != "x" else "y")  # same length, last character wrong
        for given in (f"Bearer {near}", f"Bearer {TOKEN[:5]}", "", f"bearer {TOKEN}"):
            assert httpx.get(f"{m.url}/v1/status", headers={"Authorization": given}).status_code == 401
        assert httpx.get(f"{m.url}/v1/status", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert len(calls) == 5 and all(b == f"Bearer {TOKEN}".encode() for _, b in calls)


def test_a_full_disk_keeps_training_serving_the_last_good_model_and_refuses_uploads_with_503(tmp_path, monkeypatch, manager):


    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    with manager(tmp_path, manager__burn_in=300, manager__publish_every=20, manager__checkpoint_every=40) as m:
        c = ManagerClient(m.url)
        for seq in range(4):
            c.upload(batch(200, seed=seq, batch_seq=seq))
        wait_for(lambda: c.status().model_version >= 1)
        with monkeypatch.context() as patch:
            patch.setattr("melee_agent.manager.model_files.atomic_write_bytes", full)
            patch.setattr("melee_agent.manager.checkpoint_files.atomic_write_bytes", full)
            patch.setattr(UploadLedger, "record", full)
            held = c.status()
            r = httpx.post(f"{m.url}/v1/experience", content=batch(200, seed=9, batch_seq=9))
            assert r.status_code == 503 and r.headers["retry-after"] and "cannot record" in r.json()["detail"]
            steps = held.train_steps
            st = wait_for(lambda: (s := c.status()).train_steps >= steps + 60 and s)
            assert st.error is None and st.rows_accepted == held.rows_accepted
            stuck = st.model_version
            assert stuck <= held.model_version + 1  # at most one publish raced the patch
            ckpts = [p.name for p in checkpoints.list_checkpoints(tmp_path)]
        # Space again: the next publish takes the next number (none was skipped or seen twice).
        wait_for(lambda: c.status().model_version > stuck)
        assert c.upload(batch(200, seed=9, batch_seq=9))["accepted"] == 200  # the refused batch, retried
        wait_for(lambda: [p.name for p in checkpoints.list_checkpoints(tmp_path)] != ckpts)
    versions = sorted(int(p.name[7:13]) for p in (tmp_path / "models").iterdir())
    assert versions == list(range(versions[0], versions[-1] + 1))  # numbered without gaps
