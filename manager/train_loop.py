"""The training thread: drain uploads into the replay, run learner steps, publish and checkpoint.

Once ``burn_in`` rows are stored it runs learner steps in chunks of :data:`TRAIN_CHUNK` (looking
at the queue between chunks), never more than ``max_train_per_row`` steps per ingested row (a slow
fleet is not overfitted). Every ``publish_every`` steps it publishes, every ``checkpoint_every``
steps it checkpoints, and every couple of seconds it logs the status to TensorBoard. An exception
stops the thread but not the server: the status shows it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import torch

from melee_agent.config import ManagerConfig
from melee_agent.rl.learner import Learner
from melee_agent.manager.ingest import Ingest
from melee_agent.manager.metrics import Board, Rate

log = logging.getLogger("melee_agent.manager")
TRAIN_CHUNK = 25  # learner steps between looks at the queue
LOG_EVERY_S = 2.0


class TrainingThread:
    def __init__(self, m: ManagerConfig, batch_size: int, learner: Learner, ingest: Ingest, board: Board,
                 publish: Callable[[], None], checkpoint: Callable[[], None], log_status: Callable[[], None]):
        self.m, self.batch_size, self.learner, self.ingest, self.board = m, batch_size, learner, ingest, board
        self.publish, self.checkpoint, self.log_status = publish, checkpoint, log_status
        self.rate = Rate()  # learner steps per second
        self.running = False
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def can_train(self) -> bool:
        return (len(self.ingest.replay) >= max(self.m.burn_in, self.batch_size)
                and self.learner.train_steps < self.m.max_train_per_row * self.ingest.rows_ingested)

    def _train_chunk(self) -> None:
        done = 0
        for _ in range(TRAIN_CHUNK):
            done += 1
            metrics = self.learner.step()
            step = self.learner.train_steps
            if metrics is not None:
                self.board.learner(metrics, step)
            if step % self.m.publish_every == 0:
                self.publish()
            if step % self.m.checkpoint_every == 0:
                self.checkpoint()
            if not self.can_train():
                break
        self.rate.add(done)

    def _run(self) -> None:
        if self.m.torch_threads > 0:
            torch.set_num_threads(self.m.torch_threads)
        last_log = 0.0
        try:
            while not self._stop.is_set():
                self.ingest.drain(0 if self.can_train() else 0.2)
                if self.can_train():
                    self._train_chunk()
                self.ingest.ledger.sync()
                now = time.monotonic()
                if now - last_log > LOG_EVERY_S:
                    self.log_status()
                    last_log = now
        except Exception as e:  # keep serving (status shows it) rather than dying silently
            self.error = f"{type(e).__name__}: {e}"
            log.exception("the training thread stopped")
        finally:
            self.running = False

    def start(self) -> None:
        self._stop.clear()
        self.running = True
        self._thread = threading.Thread(target=self._run, name="trainer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop and wait for the thread (up to a minute); the caller drains and checkpoints after."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=60)
