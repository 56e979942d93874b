"""The hardening parts alone: upload ledger, checkpoint and model-file verification, worker spool,
backoff, and the worker's check of a downloaded model."""

from __future__ import annotations

import hashlib
import json

import pytest
import torch

from melee_agent.model import DuelingDQN, model_to_bytes
from melee_agent.manager.checkpoints import list_checkpoints, load_checkpoint, newest_valid, save_checkpoint
from melee_agent.manager.ledger import UploadLedger
from melee_agent.manager.published import newest_valid_model, stored_models, write_published
from melee_agent.workers.backoff import Backoff
from melee_agent.workers.spool import Spool
from melee_agent.workers.worker import check_model


def test_ledger_remembers_batches_across_a_restart_and_a_checkpoint(tmp_path):
    led = UploadLedger(tmp_path)
    for seq in range(5):
        led.record("w0", seq, 100)
    snap = led.rotate()  # what a checkpoint stores
    led.record("w0", 7, 100)  # after the checkpoint: only in the newest log
    led.record("w1", 0, 50)
    # kill -9: no close(); a new ledger restored from the snapshot replays the newer log.
    again = UploadLedger(tmp_path)
    again.restore(snap)
    assert all(again.seen("w0", s) for s in (0, 1, 2, 3, 4, 7)) and again.seen("w1", 0)
    assert not again.seen("w0", 5) and not again.seen("w0", 6) and not again.seen("w2", 0)
    assert again.rows == 650 and again.batches == 7
    # Without a snapshot (no checkpoint yet) every log is replayed, each batch counted once.
    fresh = UploadLedger(tmp_path)
    fresh.restore(None)
    assert fresh.rows == 650 and fresh.seen("w0", 7)


def test_ledger_skips_a_line_cut_short_and_bounds_memory_per_worker(tmp_path):
    led = UploadLedger(tmp_path, window=8)
    led.record("w0", 0, 10)
    led._file.write(b'\n{"w":"w0","s":1,')  # a crash in the middle of a line: that batch was never answered
    again = UploadLedger(tmp_path, window=8)
    again.restore(None)
    assert again.seen("w0", 0) and not again.seen("w0", 1) and again.rows == 10
    # A worker that skips number 1 for ever (dropped from its spool) does not grow the set past the window.
    for seq in range(2, 40):
        again.record("w0", seq, 1)
    assert len(again.workers["w0"].above) <= 8 and again.seen("w0", 39)


def test_checkpoint_cut_short_is_never_loaded_and_the_previous_one_is_used(tmp_path, caplog):
    save_checkpoint(tmp_path, {"train_steps": 100}, 100, keep=3)
    save_checkpoint(tmp_path, {"train_steps": 200}, 200, keep=3)
    newest = list_checkpoints(tmp_path)[-1]
    data = newest.read_bytes()
    newest.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="damaged or cut short"):
        load_checkpoint(newest)
    path, state = newest_valid(tmp_path)
    assert state["train_steps"] == 100 and path.name == "ckpt-000000100.pt"
    assert "falling back to the previous checkpoint" in caplog.text
    # Set aside, so newer checkpoints with lower step numbers are not pruned in its place.
    assert [p.name for p in list_checkpoints(tmp_path)] == ["ckpt-000000100.pt"]
    assert (tmp_path / "checkpoints" / "ckpt-000000200.pt.damaged").exists()
    flipped = bytearray(data)
    flipped[-10] ^= 0xFF
    newest.write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match="sha256"):
        load_checkpoint(newest)


def test_checkpoints_keep_the_last_few(tmp_path):
    for step in (1, 2, 3, 4, 5):
        save_checkpoint(tmp_path, {"train_steps": step}, step, keep=3)
    assert [p.name for p in list_checkpoints(tmp_path)] == [f"ckpt-{s:09d}.pt" for s in (3, 4, 5)]
    assert not list(tmp_path.glob("checkpoints/.*.tmp"))


def _model_bytes(version: int, seed: int = 0) -> bytes:
    torch.manual_seed(seed)
    return model_to_bytes(DuelingDQN(), version=version, train_step=10 * version, action_set="untouchable")


def test_published_models_verify_themselves_and_a_damaged_one_is_skipped(tmp_path):
    for v in (1, 2, 3, 4):
        write_published(tmp_path, _model_bytes(v, seed=v), v, keep=3)
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == [f"model-v00000{v}.safetensors" for v in (2, 3, 4)]
    assert newest_valid_model(tmp_path, "untouchable").version == 4
    # Damage the newest two copies (the numbered one and model.safetensors): v3 is the newest that verifies.
    for p in (tmp_path / "models" / "model-v000004.safetensors", tmp_path / "model.safetensors"):
        b = bytearray(p.read_bytes())
        b[-20] ^= 0x01
        p.write_bytes(bytes(b))
    found = stored_models(tmp_path, "untouchable")
    assert [m.version for m in found] == [3, 2]


def test_worker_checks_a_download_against_its_sha256_header_and_its_own_metadata():
    data = _model_bytes(5)
    headers = {"X-Model-Sha256": hashlib.sha256(data).hexdigest(), "X-Model-Version": "5"}
    model, meta = check_model(data, headers, "untouchable", "cpu")
    assert meta["version"] == 5 and isinstance(model, DuelingDQN)
    with pytest.raises(ValueError, match="X-Model-Sha256"):
        check_model(data[:-1000], headers, "untouchable", "cpu")  # cut short
    other = _model_bytes(5, seed=9)
    with pytest.raises(ValueError, match="X-Model-Sha256"):
        check_model(other, headers, "untouchable", "cpu")  # not the announced file
    with pytest.raises(ValueError, match="version"):
        check_model(data, {**headers, "X-Model-Version": "6"}, "untouchable", "cpu")
    flipped = bytearray(data)
    flipped[-3] ^= 0x10  # altered in a way the header cannot see (no header): the file's own digest does
    with pytest.raises(ValueError, match="weights_sha256"):
        check_model(bytes(flipped), {}, "untouchable", "cpu")


def test_spool_keeps_batches_in_order_across_a_restart_and_drops_the_oldest_past_its_bound(tmp_path):
    s = Spool(tmp_path, max_bytes=3_000)
    ident = s.identity("arena-0")
    assert ident.worker_id.startswith("arena-0-") and ident.next_seq == 0
    for seq in range(3):
        s.put(seq, bytes([seq]) * 1_000, rows=10)
    ident.next_seq = 3
    s.save_identity(ident)
    (tmp_path / ".batch-000000000009-10.st.abc.tmp").write_bytes(b"half")  # a write cut short
    again = Spool(tmp_path, max_bytes=3_000)
    assert again.seqs() == [0, 1, 2] and again.rows == 30
    assert not list(tmp_path.glob(".batch-*.tmp"))
    same = again.identity("arena-0")
    assert same.worker_id == ident.worker_id and same.next_seq == 3  # numbering continues
    again.put(3, b"x" * 1_000, rows=10)  # 4,000 bytes > 3,000: the oldest goes
    assert again.seqs() == [1, 2, 3] and again.dropped_batches == 1 and again.dropped_rows == 10
    seq, payload, rows = again.oldest()
    assert seq == 1 and payload == bytes([1]) * 1_000 and rows == 10
    again.remove(1)
    assert again.seqs() == [2, 3]
    # A batch spooled after the identity was last saved still moves the counter past it.
    again.put(4, b"y", rows=1)
    assert Spool(tmp_path, max_bytes=3_000).identity("arena-0").next_seq == 5
    json.loads((tmp_path / "identity.json").read_text())


def test_backoff_grows_with_jitter_honours_retry_after_and_resets():
    waits = []
    b = Backoff(base=1.0, cap=16.0, seed=1)
    for _ in range(8):
        waits.append(b.failed(now=0.0))
    assert all(0 <= w <= min(16.0, 2 ** k) for k, w in enumerate(waits))
    assert len(set(round(w, 6) for w in waits)) == len(waits)  # jittered, not a fixed ladder
    assert b.failed(now=0.0, retry_after=10.0) >= 10.0
    assert not b.ready(now=0.0)
    b.succeeded()
    assert b.ready(now=0.0) and b.failures == 0
