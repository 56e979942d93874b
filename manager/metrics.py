"""TensorBoard for the manager: scalars grouped by prefix, flushed every few seconds.

Tags: ``loss/`` (td, grad_norm), ``q/mean``, ``replay/`` (size, fill), ``ingest/rows_per_s``,
``train/steps_per_s``, ``model/version``, ``workers/`` (active, frames_per_s) and ``episode/``
(return, length, hits, untouched) from the statistics workers send with their batches.
"""

from __future__ import annotations

import time
from collections import deque
from pathlib import Path
from typing import Any


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
        self._dolphin: dict[str, tuple[int, int]] = {}

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
        """Dolphin workers report their restarts so far; the board shows the total over workers."""
        if "dolphin_restarts" not in stats:
            return
        self._dolphin[str(stats.get("worker_id", "?"))] = (int(stats["dolphin_restarts"]),
                                                           int(stats.get("dolphin_games", 0)))
        self.scalars({"workers/dolphin_restarts": sum(r for r, _ in self._dolphin.values()),
                      "workers/dolphin_games": sum(g for _, g in self._dolphin.values())}, step)

    def close(self) -> None:
        self.writer.flush()
        self.writer.close()
