"""The manager against what a cloud fleet meets, over real HTTP on loopback: retried uploads,
`kill -9` before the first checkpoint, bodies too large while they stream in, a public address
without a token, the bearer check."""

from __future__ import annotations

import doctest
import hmac
import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from melee_agent.segment_stats import SegmentStats

from melee_agent.manager import checkpoints, ledger, published
from melee_agent.manager.process import ManagerProcess, ManagerProcessError
from melee_agent.workers import backoff, spool
from melee_agent.workers.client import ManagerClient
from tests.test_manager import TOKEN, batch, serving, wait_for


@pytest.mark.parametrize("module", [ledger, checkpoints, published, spool, backoff], ids=lambda m: m.__name__)
def test_module_examples_run(module):
    assert doctest.testmod(module).failed == 0


def test_a_retried_upload_is_answered_as_a_duplicate_and_stored_once_even_after_a_restart(tmp_path):
    with serving(tmp_path, manager__burn_in=200) as url:
        c = ManagerClient(url)
        for seq in range(3):
            assert c.upload(batch(100, seed=seq, batch_seq=seq))["accepted"] == 100
        again = c.upload(batch(100, seed=1, batch_seq=1))
        assert again["accepted"] == 0 and again["duplicate"] is True
        assert c.upload(batch(100, seed=1, batch_seq=1, worker_id="w1"))["accepted"] == 100  # another worker
        st = c.status()
        assert st.rows_accepted == 400 and st.duplicates_refused == 1
        wait_for(lambda: c.status().replay_size == 400)
        wait_for(lambda: c.status().train_steps > 0)
    with serving(tmp_path, resume=True) as url:
        c = ManagerClient(url)
        assert c.upload(batch(100, seed=2, batch_seq=2))["duplicate"] is True
        assert c.upload(batch(100, seed=3, batch_seq=3))["accepted"] == 100
        st = c.status()
        assert st.rows_accepted == 500 and st.duplicates_refused == 2
        assert st.replay_size <= 100  # the replay is not saved: only the new batch is in it


def _manager(run_dir, log, *extra):
    flags = ["--config", "small", "--set", "manager.burn_in=300", "--set", "manager.publish_every=20",
             "--set", "manager.checkpoint_every=1000000", "--set", "manager.max_train_per_row=1", *extra]
    return ManagerProcess(flags, run_dir, log)


@pytest.mark.slow
def test_kill_9_before_the_first_checkpoint_resumes_from_the_published_model(tmp_path):
    run_dir, log = tmp_path / "run", tmp_path / "manager.log"
    first = _manager(run_dir, log).start()
    try:
        c = ManagerClient(first.url)
        for seq in range(6):
            c.upload(batch(200, seed=seq, batch_seq=seq))
        before = wait_for(lambda: (s := c.status()).model_version >= 2 and s)
        assert not checkpoints.list_checkpoints(run_dir)
    finally:
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(30)
    published_before = published.newest_valid_model(run_dir, "untouchable").version
    assert published_before >= before.model_version
    with pytest.raises(ManagerProcessError, match="already holds a run"):
        _manager(run_dir, log).start()  # a fresh start would write over the run
    second = _manager(run_dir, log, "--resume").start()
    try:
        c = ManagerClient(second.url)
        st = c.status()
        assert st.resumed_from.startswith("model")
        assert st.model_version > published_before  # versions never go back
        assert st.rows_accepted == 1200 and st.train_steps >= published.newest_valid_model(
            run_dir, "untouchable").train_step - 1
        assert c.upload(batch(200, seed=5, batch_seq=5))["duplicate"] is True
        assert st.replay_size == 0 and not st.training  # waits for burn-in again
        assert "fresh optimizer" in log.read_text()
    finally:
        second.stop()


def test_resume_of_an_empty_folder_says_there_is_nothing_to_resume(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "melee_agent.cli.main", "manager", "--config", "small", "--resume",
                           "--run-dir", str(tmp_path / "none")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "nothing to resume" in proc.stderr and "Traceback" not in proc.stderr


def test_manager_refuses_a_public_address_without_a_token(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "melee_agent.cli.main", "manager", "--config", "small",
                           "--host", "0.0.0.0", "--run-dir", str(tmp_path / "run")],
                          capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k != "MELEE_AGENT_TOKEN"})
    assert proc.returncode == 2 and "no token" in proc.stderr and "0.0.0.0" in proc.stderr
    assert not (tmp_path / "run").exists()


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


def test_the_body_limit_holds_while_the_body_streams_in(tmp_path):
    with serving(tmp_path, manager__max_upload_rows=100) as url:
        before = httpx.get(f"{url}/v1/status").json()
        limit = 100 * 57 * 4 + 64 * 1024
        # Chunked, no Content-Length: the answer comes after the limit is passed, while the body
        # is still unfinished (no terminating chunk is ever sent).
        piece = b"x" * 16384
        chunk = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
        head = ("POST /v1/experience HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                "Transfer-Encoding: chunked\r\n\r\n")
        status, data = _raw_post(url, head, [chunk] * (limit // len(piece) + 2), pause=0.5)
        assert status == 413 and b"stopped reading" in data
        # A Content-Length above the limit is refused before a byte of the body is sent.
        head = f"POST /v1/experience HTTP/1.1\r\nHost: x\r\nContent-Length: {10**10}\r\n\r\n"
        status, data = _raw_post(url, head, [])
        assert status == 413 and str(10**10).encode() in data
        # httpx streaming a generator body (chunked) gets the 413 too, or a closed connection.
        def gen():
            for _ in range(limit // 8192 + 10):
                yield b"y" * 8192
        try:
            r = httpx.post(f"{url}/v1/experience", content=gen(), timeout=20)
            assert r.status_code == 413
        except httpx.TransportError:
            pass
        after = httpx.get(f"{url}/v1/status").json()
        assert after["rows_accepted"] == before["rows_accepted"] == 0 and after["replay_size"] == 0
        assert httpx.post(f"{url}/v1/experience", content=batch(100)).status_code == 202  # still serving


def test_bearer_token_is_compared_in_constant_time(tmp_path, monkeypatch):
    calls = []
    real = hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr("melee_agent.manager.app.hmac.compare_digest", spy)
    with serving(tmp_path, token=TOKEN) as url:
        near = TOKEN[:-1] + ("x" if TOKEN[-1] != "x" else "y")  # same length, last character wrong
        for given in (f"Bearer {near}", f"Bearer {TOKEN[:5]}", "", f"bearer {TOKEN}"):
            assert httpx.get(f"{url}/v1/status", headers={"Authorization": given}).status_code == 401
        assert httpx.get(f"{url}/v1/status", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert len(calls) == 5 and all(b == f"Bearer {TOKEN}".encode() for _, b in calls)


def test_a_full_disk_keeps_training_serving_the_last_good_model_and_refuses_uploads_with_503(tmp_path, monkeypatch):
    import errno

    from melee_agent.manager.ledger import UploadLedger

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    with serving(tmp_path, manager__burn_in=300, manager__publish_every=20, manager__checkpoint_every=40) as url:
        c = ManagerClient(url)
        for seq in range(4):
            c.upload(batch(200, seed=seq, batch_seq=seq))
        wait_for(lambda: c.status().model_version >= 1)
        with monkeypatch.context() as m:
            m.setattr("melee_agent.manager.published.atomic_write_bytes", full)
            m.setattr("melee_agent.manager.checkpoints.atomic_write_bytes", full)
            m.setattr(UploadLedger, "record", full)
            held = c.status()
            r = httpx.post(f"{url}/v1/experience", content=batch(200, seed=9, batch_seq=9))
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


def test_a_worker_that_cannot_spool_sends_the_batch_directly(tmp_path, monkeypatch):
    import errno

    import torch

    from melee_agent.config import load_config
    from melee_agent.workers.worker import Worker, WorkerSettings

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    with serving(tmp_path / "run") as url:
        w = Worker(load_config("small"), WorkerSettings(manager=url, spool_dir=tmp_path / "spool"))
        monkeypatch.setattr(w.spool, "put", full)
        data = torch.rand(300, 57)
        data[:, 27] = torch.arange(300) % 5
        data[:, 29] = 0.99
        w.upload(data, SegmentStats())
        assert w.rows_sent == 300 and ManagerClient(url).status().rows_accepted == 300
        assert len(w.spool) == 0
    w.upload(data, SegmentStats())  # the manager is gone too: dropped and counted
    assert w.summary()["rows_dropped"] == 300 and w.rows_sent == 300
