"""manager/ledger.py: which uploads were accepted, remembered across restarts and checkpoints; alone and
behind the manager's HTTP API (a retried upload is a duplicate, even after a restart)."""

from __future__ import annotations

from melee_agent.manager import ledger
from melee_agent.manager.ledger import UploadLedger
from melee_agent.workers.client import ManagerClient
from tests.manager_kit import batch, wait_for
from tests.examples_kit import examples_failed


def test_module_examples_run():
    assert examples_failed(ledger) == 0

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


def test_a_retried_upload_is_answered_as_a_duplicate_and_stored_once_even_after_a_restart(tmp_path, manager):
    with manager(tmp_path, manager__burn_in=200) as m:
        c = ManagerClient(m.url)
        for seq in range(3):
            assert c.upload(batch(100, seed=seq, batch_seq=seq))["accepted"] == 100
        again = c.upload(batch(100, seed=1, batch_seq=1))
        assert again["accepted"] == 0 and again["duplicate"] is True
        assert c.upload(batch(100, seed=1, batch_seq=1, worker_id="w1"))["accepted"] == 100  # another worker
        st = c.status()
        assert st.rows_accepted == 400 and st.duplicates_refused == 1
        wait_for(lambda: c.status().replay_size == 400)
        wait_for(lambda: c.status().train_steps > 0)
    with manager(tmp_path, resume=True) as m:
        c = ManagerClient(m.url)
        assert c.upload(batch(100, seed=2, batch_seq=2))["duplicate"] is True
        assert c.upload(batch(100, seed=3, batch_seq=3))["accepted"] == 100
        st = c.status()
        assert st.rows_accepted == 500 and st.duplicates_refused == 2
        assert st.replay_size <= 100  # the replay is not saved: only the new batch is in it
