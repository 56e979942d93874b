"""Exponential backoff with full jitter (the AWS architecture blog's rule), for a fleet of workers
that must not all come back at the same instant after a manager restart.

After the ``k``-th failure in a row the next try waits ``uniform(0, min(cap, base * 2**k))``
seconds, but never less than a server's ``Retry-After``. A success resets it.

Example::

    >>> b = Backoff(base=1.0, cap=8.0, seed=0)
    >>> b.ready(now=0.0)
    True
    >>> wait = b.failed(now=0.0); 0.0 <= b.next_try <= 1.0, b.failures
    (True, 1)
    >>> b.failed(now=0.0, retry_after=5.0) >= 5.0
    True
"""

from __future__ import annotations

import random
import time


class Backoff:
    def __init__(self, base: float = 0.5, cap: float = 30.0, seed: int | None = None):
        self.base, self.cap = base, cap
        self.failures = 0
        self.next_try = 0.0
        self._rng = random.Random(seed)

    def ready(self, now: float | None = None) -> bool:
        return (time.monotonic() if now is None else now) >= self.next_try

    def failed(self, now: float | None = None, retry_after: float | None = None) -> float:
        """Record a failure; returns the wait before the next try."""
        now = time.monotonic() if now is None else now
        wait = self._rng.uniform(0.0, min(self.cap, self.base * 2 ** self.failures))
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.cap))
        self.failures += 1
        self.next_try = now + wait
        return wait

    def succeeded(self) -> None:
        self.failures = 0
        self.next_try = 0.0
