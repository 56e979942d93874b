"""workers/spool.py: the worker's on-disk queue of batches not yet accepted."""

from __future__ import annotations

import json


from melee_agent.workers import spool
from melee_agent.workers.spool import Spool
from tests.examples_kit import examples_failed


def test_module_examples_run():
    assert examples_failed(spool) == 0

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
