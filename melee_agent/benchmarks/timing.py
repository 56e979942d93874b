"""Timing for the benchmarks: per-call times on any device (synchronized on CUDA), interleaved cases, memory,
random rows. Shared by the replay and prioritized-replay benchmarks (so neither imports the other)."""

from __future__ import annotations

import resource
import time
from typing import Any, Callable

import numpy as np
import torch

from melee_agent.rl.rows import ACTION, DISCOUNT, ROW_WIDTH


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_once(fn: Callable[[], Any], calls: int, device: torch.device) -> float:
    sync(device)
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    sync(device)
    return (time.perf_counter() - t0) / calls


def time_per_call(fn: Callable[[], Any], calls: int, device: torch.device, repeats: int = 5) -> float:
    """Best over `repeats` of the mean seconds per call (as timeit: other load only ever adds time)."""
    for _ in range(max(3, calls // 10)):
        fn()
    return min(time_once(fn, calls, device) for _ in range(repeats))


def time_interleaved(fns: dict[str, Callable[[], Any]], calls: int, device: torch.device,
                      repeats: int) -> dict[str, float]:
    """Like :func:`time_per_call` for several cases, taking turns so that a burst of load from
    other processes on a shared machine hits every case alike rather than skewing one ratio."""
    for fn in fns.values():
        for _ in range(max(3, calls // 10)):
            fn()
    best = {k: float("inf") for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            best[k] = min(best[k], time_once(fn, calls, device))
    return best


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def random_rows(n: int, rng: np.random.Generator) -> np.ndarray:
    rows = rng.random((n, ROW_WIDTH), dtype=np.float32)
    rows[:, ACTION] = rng.integers(0, 5, n)
    rows[:, DISCOUNT] = 0.99**3
    return rows
