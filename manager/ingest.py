"""Uploads into the replay: HTTP handlers :meth:`Ingest.submit`, the training thread :meth:`Ingest.drain`.

:meth:`~Ingest.submit` refuses a batch accepted before (the upload ledger remembers
``(worker_id, batch_seq)`` across restarts), records a new one in the ledger and queues it, all
under one lock; a full queue is :class:`QueueFull` (the handler answers 429), a ledger that cannot
be written is :class:`NotStored` (503). :meth:`~Ingest.drain` moves queued batches into the
device replay and their segment statistics to TensorBoard.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Callable

from melee_agent.rl.replay import Replay
from melee_agent.io.wire import Experience
from melee_agent.manager.ledger import UploadLedger
from melee_agent.manager.metrics import Board, Rate

ACTIVE_S = 60.0  # a worker that uploaded within this long counts as active


class QueueFull(RuntimeError):
    pass


class NotStored(RuntimeError):
    """The batch could not be recorded (the disk is full or failing); nothing was queued."""


class Ingest:
    def __init__(self, replay: Replay, ledger: UploadLedger, board: Board, queue_batches: int,
                 train_steps: Callable[[], int], rows_ingested: int = 0):
        self.replay, self.ledger, self.board = replay, ledger, board
        self.train_steps = train_steps  # the step TensorBoard files segment statistics under
        self.queue: queue.Queue[Experience] = queue.Queue(maxsize=queue_batches)
        self.rows_ingested = rows_ingested  # written into the replay
        self.workers: dict[str, float] = {}  # worker id -> last upload time
        self.ingest_rate, self.frame_rate = Rate(), Rate()
        self._lock = threading.Lock()

    def submit(self, exp: Experience) -> int | None:
        """Queue a validated batch; returns its row count, or None for a batch accepted before.

        Under one lock: the duplicate check, the room check, the ledger line, the queue put. The
        training thread only takes from the queue, so room seen here is still there at the put.
        """
        n = exp.rows.shape[0]
        worker = exp.meta.get("worker_id")
        seq = int(exp.meta["batch_seq"]) if worker is not None and "batch_seq" in exp.meta else -1
        now = time.monotonic()
        with self._lock:
            self.workers[worker or "?"] = now
            if seq >= 0 and self.ledger.seen(worker, seq):
                self.ledger.duplicates += 1
                return None
            if self.queue.full():
                raise QueueFull("the ingest queue is full; retry shortly")
            try:
                self.ledger.record(worker or "", seq, n)
            except OSError as e:
                raise NotStored(f"the manager cannot record the batch ({e.strerror or e}); retry later") from None
            self.queue.put_nowait(exp)
        self.ingest_rate.add(n, now)
        return n

    def active_workers(self, now: float) -> int:
        with self._lock:
            return sum(1 for t in self.workers.values() if now - t < ACTIVE_S)

    def _ingest(self, exp: Experience) -> None:
        self.replay.add(exp.rows, exp.priority)
        self.rows_ingested += exp.rows.shape[0]
        stats = exp.stats
        if not stats.empty:
            step = self.train_steps()
            self.board.episodes(stats, step)
            self.board.workers(stats, step)
            if stats.frames:
                self.frame_rate.add(float(stats.frames))

    def drain(self, wait: float) -> int:
        """Move every queued batch into the replay (waiting up to ``wait`` s for the first); how many."""
        n = 0
        try:
            exp = self.queue.get(timeout=wait) if wait > 0 else self.queue.get_nowait()
        except queue.Empty:
            return 0
        while True:
            self._ingest(exp)
            n += 1
            try:
                exp = self.queue.get_nowait()
            except queue.Empty:
                # Nothing more is waiting: move a partial block to the device now rather than
                # holding rows back from training until the next upload fills it.
                if self.replay.staged:
                    self.replay.flush()
                return n
