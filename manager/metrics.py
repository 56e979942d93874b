"""TensorBoard for the manager: scalars grouped by prefix, flushed every few seconds.

Tags: ``loss/`` (td, grad_norm), ``q/mean``, ``replay/`` (size, fill), ``ingest/rows_per_s``,
``train/steps_per_s``, ``model/version``, ``workers/`` (active, frames_per_s and the totals of
:data:`WORKER_COUNTERS`), ``uploads/`` (batches, rows, duplicates refused) and ``episode/``
(return, length, hits, untouched) from the statistics workers send with their batches.
"""

from __future__ import annotations

import time
from collections import deque
from pathlib import Path
from typing import Any


#: Running counters workers send in their segment statistics, shown as totals under ``workers/``.
WORKER_COUNTERS = ("dolphin_restarts", "dolphin_games", "spool_rows", "spool_dropped_rows", "models_rejected")


class Rate:
    """Events per second over a sliding window (thread-safe enough for counters read by one thread)."""

    def __init__(self, window: float = 10.0):
        self.window = window
        self.events: deque[tuple[float, float]] = deque()

    def add(self, n: float, now: float | None = None) -> None:
        self.events.append((time.monotonic() if now is None else now, n))

    def per_second(self, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        while self.events and now - self.events[0][0] > self.window:
            self.events.popleft()
        if not self.events:
            return 0.0
        span = max(now - self.events[0][0], 1.0)
        return sum(n for _, n in self.events) / span


class Board:
    def __init__(self, run_dir: str | Path, flush_secs: float = 5.0):
        from torch.utils.tensorboard import SummaryWriter  # noqa: PLC0415

        self.writer = SummaryWriter(str(run_dir), flush_secs=int(flush_secs))
        self._last_flush = time.monotonic()
        self.flush_secs = flush_secs
        self._counters: dict[str, dict[str, float]] = {}  # worker id -> its latest counters

    def scalars(self, values: dict[str, float], step: int) -> None:
        for tag, v in values.items():
            self.writer.add_scalar(tag, float(v), step)
        if time.monotonic() - self._last_flush > self.flush_secs:
            self.writer.flush()
            self._last_flush = time.monotonic()

    def learner(self, m: dict[str, Any], step: int) -> None:
        self.scalars({"loss/td": m["loss"], "loss/grad_norm": m["grad_norm"], "q/mean": m["q_mean"],
                      "q/td_abs": m["td_abs"]}, step)

    def episodes(self, stats: dict[str, Any], step: int) -> None:
        n = int(stats.get("episodes", 0) or 0)
        if n <= 0:
            return
        self.scalars({"episode/return": stats.get("return_sum", 0.0) / n,
                      "episode/length": stats.get("length_sum", 0.0) / n,
                      "episode/hits": stats.get("hits", 0) / n,
                      "episode/untouched": stats.get("untouched", 0) / n}, step)

    def workers(self, stats: dict[str, Any], step: int) -> None:
        """Workers report running counters (Dolphin restarts and games, rows waiting in or dropped
        from their spools, models rejected); the board shows each as the total over workers."""
        present = {k: float(stats[k]) for k in WORKER_COUNTERS if isinstance(stats.get(k), (int, float))}
        if not present:
            return
        self._counters.setdefault(str(stats.get("worker_id", "?")), {}).update(present)
        totals: dict[str, float] = {}
        for counters in self._counters.values():
            for k, v in counters.items():
                totals[f"workers/{k}"] = totals.get(f"workers/{k}", 0.0) + v
        self.scalars(totals, step)

    def close(self) -> None:
        self.writer.flush()
        self.writer.close()
