"""The 60 frames/s clock: a thread that calls ``tick`` once every 1/60 s of wall time and hands each frame it
returns to ``emit``.

Ticks are scheduled at ``start + n / fps`` (no drift from sleeping late). A tick that returns None (a game
over, waiting for a rematch) is a frame not played. Where the frames cost more than 1/60 s (a loaded
machine) the clock plays them back to back, and more than :data:`MAX_BEHIND` s late it stops catching up
(the schedule starts again from now): game time then runs slower than wall time, and :attr:`fps` says so.

Example::

    >>> import time, torch  # torch loaded first: the clock's thread sets its threads
    >>> out = []
    >>> c = FrameClock(lambda: {"n": len(out)}, out.append, fps=200); c.start(); time.sleep(0.2); c.stop()
    >>> 0 < len(out) <= 41  # at most the 40 ticks 0.2 s holds (and one at the start); fewer on a loaded machine
    True
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any, Callable

MAX_BEHIND = 0.1  # seconds: past this the clock drops the frames it owes rather than play them in a burst


class FrameClock:
    def __init__(self, tick: Callable[[], Any], emit: Callable[[Any], None], fps: float = 60.0):
        self.tick, self.emit, self.period = tick, emit, 1.0 / fps
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.played = 0
        self._times: deque[float] = deque(maxlen=121)  # wall times of the last frames played
        self._costs: deque[float] = deque(maxlen=120)  # seconds each of the last frames took to play

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="play-clock", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    @property
    def fps(self) -> float | None:
        """Frames played per second of wall time over the last two seconds (None before two frames)."""
        t = list(self._times)
        if len(t) < 2 or t[-1] <= t[0]:
            return None
        return (len(t) - 1) / (t[-1] - t[0])

    @property
    def frame_cost(self) -> float | None:
        """The median seconds a frame took to play (and draw) over the last two seconds: above 1/60 s the
        machine cannot keep 60 frames/s."""
        c = sorted(self._costs)
        return c[len(c) // 2] if c else None

    def _run(self) -> None:
        import torch  # noqa: PLC0415

        torch.set_num_threads(1)  # one game: small ops gain nothing from more threads
        n, t0 = 0, time.monotonic()
        while not self._stop.is_set():
            due = t0 + n * self.period
            now = time.monotonic()
            if due > now and self._stop.wait(due - now):
                break  # stopped while waiting: no frame after stop()
            elif now - due > MAX_BEHIND:
                n, t0 = 0, now
            began = time.monotonic()
            frame = self.tick()
            n += 1
            if frame is not None:
                self._costs.append(time.monotonic() - began)
                self.played += 1
                self._times.append(time.monotonic())
                self.emit(frame)


__all__ = ["FrameClock", "MAX_BEHIND"]
