"""workers/backoff.py: retry waits with jitter."""

from __future__ import annotations

from melee_agent.workers import backoff
from melee_agent.workers.backoff import Backoff
from tests.examples_kit import examples_failed


def test_module_examples_run():
    assert examples_failed(backoff) == 0

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
