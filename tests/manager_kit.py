"""Helpers for the tests that talk to a manager: a valid upload, a token, waiting for a condition."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest

from melee_agent.rl.rows import ACTION, DISCOUNT
from melee_agent.io.segment_stats import SegmentStats
from melee_agent.io.wire import encode_experience

TOKEN = "s3cret-token-for-tests"
T = TypeVar("T")


def batch(n: int = 200, seed: int = 0, **kw) -> bytes:
    """An upload of ``n`` random rows from worker ``w0``, ``batch_seq=seed`` unless ``kw`` says otherwise."""
    r = np.random.default_rng(seed).random((n, 57), dtype=np.float32)
    r[:, ACTION] = np.arange(n) % 5
    r[:, DISCOUNT] = 0.99
    args = {"action_set": "untouchable", "worker_id": "w0", "batch_seq": seed, "model_version": 0,
            "stats": SegmentStats(episodes=2, return_sum=1.0, length_sum=300, hits=2, frames=400)}
    args.update(kw)
    return encode_experience(r, **args)


def wait_for(pred: Callable[[], T], timeout: float = 60.0) -> T:
    """``pred()``'s first truthy value, polled every 0.1 s; the test fails after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail("condition not met in time")


def model_bytes(version: int, seed: int = 0) -> bytes:
    """A published model file: an untrained network (``seed``) as version ``version``."""
    import torch  # noqa: PLC0415

    from melee_agent.rl.model import DuelingDQN, model_to_bytes  # noqa: PLC0415

    torch.manual_seed(seed)
    return model_to_bytes(DuelingDQN(), version=version, train_step=10 * version, action_set="untouchable")


def scalar_tags(run_dir: Path) -> set[str]:
    """Every TensorBoard scalar tag written into ``run_dir``'s event files."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tags: set[str] = set()
    for f in run_dir.glob("events.out.tfevents.*"):
        acc = EventAccumulator(str(f), size_guidance={"scalars": 0})
        acc.Reload()
        tags |= set(acc.Tags()["scalars"])
    return tags
