"""TensorBoard for the manager: scalars grouped by prefix, flushed every few seconds.

Tags: ``loss/`` (td, grad_norm), ``q/mean``, ``replay/`` (size, fill), ``ingest/rows_per_s``,
``train/steps_per_s``, ``model/version``, ``workers/`` (active, frames_per_s and the totals of
:data:`WORKER_COUNTERS`), ``uploads/`` (batches, rows, duplicates refused) and ``episode/``
(return and length; for dodging, hits, untouched, and ``untouched_level_N`` per CPU level where
workers play a level mix; for fights, per game played to its end, ``stocks_taken``, ``stocks_lost``,
``damage_dealt`` and ``win_rate`` instead) from the statistics workers send with their batches.
"""

from __future__ import annotations

import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from melee_agent.rl.learner import LearnerMetrics
    from melee_agent.io.segment_stats import SegmentStats


#: Running counters workers send in their segment statistics, shown as totals under ``workers/``.
WORKER_COUNTERS = ("dolphin_restarts", "dolphin_games", "spool_rows", "spool_dropped_rows", "models_rejected")
#: Episodes a level gathers (over segments and workers) before its untouched share is shown.
LEVEL_WINDOW = 50


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
        self._levels: dict[str, list[int]] = {}  # CPU level -> [episodes, untouched] not yet shown

    def scalars(self, values: dict[str, float], step: int) -> None:
        for tag, v in values.items():
            self.writer.add_scalar(tag, float(v), step)
        if time.monotonic() - self._last_flush > self.flush_secs:
            self.writer.flush()
            self._last_flush = time.monotonic()

    def learner(self, m: LearnerMetrics, step: int) -> None:
        self.scalars({"loss/td": m.loss, "loss/grad_norm": m.grad_norm, "q/mean": m.q_mean, "q/td_abs": m.td_abs}, step)
        if m.replay is not None:  # a prioritized replay's figures: replay/priority_mean, priority_max, weight_min, beta
            self.scalars({f"replay/{k}": v for k, v in m.replay._asdict().items()}, step)

    def episodes(self, stats: SegmentStats, step: int) -> None:
        n = stats.episodes
        if n <= 0:
            return
        self.scalars({"episode/return": stats.return_sum / n, "episode/length": stats.length_sum / n}, step)
        if stats.games == 0:  # dodging: the paper's untouched minutes (a game's hits and untouched say nothing)
            self.scalars({"episode/hits": stats.hits / n, "episode/untouched": stats.untouched / n}, step)
            self._level_episodes(stats.per_level, step)
        else:  # fights: whole games
            g = stats.games
            self.scalars({"episode/stocks_taken": stats.stocks_taken / g, "episode/stocks_lost": stats.stocks_lost / g,
                          "episode/damage_dealt": stats.damage_dealt / g, "episode/win_rate": stats.wins / g}, step)

    def _level_episodes(self, per_level: dict[str, list[int]], step: int) -> None:
        """Workers on a level mix count episodes and untouched ones per CPU level; the board shows each
        level's share (``episode/untouched_level_N``) once it has gathered ``LEVEL_WINDOW`` episodes."""
        out = {}
        for level, counts in per_level.items():  # checked when the batch was decoded
            acc = self._levels.setdefault(str(level), [0, 0])
            acc[0], acc[1] = acc[0] + counts[0], acc[1] + counts[1]
            if acc[0] >= LEVEL_WINDOW:
                out[f"episode/untouched_level_{level}"] = acc[1] / acc[0]
                self._levels[str(level)] = [0, 0]
        if out:
            self.scalars(out, step)

    def workers(self, stats: SegmentStats, step: int) -> None:
        """Workers report running counters (Dolphin restarts and games, rows waiting in or dropped
        from their spools, models rejected); the board shows each as the total over workers."""
        extra = stats.extra
        present = {k: float(extra[k]) for k in WORKER_COUNTERS if isinstance(extra.get(k), (int, float))}
        if not present:
            return
        self._counters.setdefault(str(extra.get("worker_id", "?")), {}).update(present)
        totals: dict[str, float] = {}
        for counters in self._counters.values():
            for k, v in counters.items():
                totals[f"workers/{k}"] = totals.get(f"workers/{k}", 0.0) + v
        self.scalars(totals, step)

    def close(self) -> None:
        self.writer.flush()
        self.writer.close()
