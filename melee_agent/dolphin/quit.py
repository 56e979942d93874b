"""Quitting a VS game with the wrong setup: hold L+R+A, tap START, within a deadline.

Melee quits a paused VS game when the pausing player holds L+R+A+START ("LRAStart"; slippi-ssbm-asm
records it as game end method 7 and remembers who did it, ``Remember Who LRA Started.asm``). Pausing
takes a new press of START, and the game may refuse it: before GO, and where the rules turn pause
off (``External/PreventPauseSoftLocks/ForcePauseOn.asm``: a stock game of at most 4 stocks, as
Slippi's General Codes set, keeps the CSS's pause setting). So START is tapped (pressed every
other frame) while L+R+A stay held, until the game leaves.

Once the game pauses, Dolphin streams nothing (no frame is recorded while paused) and, with no
frame bookend to wait on, no longer blocks on the controller pipes (Ishiiruka ``Pipes.cpp`` and
``EXI_DeviceSlippi.cpp``: ``g_needInputForFrame`` is set only by a bookend or a menu frame). The
worker, waiting for a frame, can then only write: :meth:`QuitAttempt.nudge` (called by the
watchdog while the worker waits) keeps tapping START with L+R+A held, whichever of "held" or
"newly pressed" the paused game wants. Past ``dolphin.quit_timeout_s`` the attempt has failed and
Dolphin is restarted.
"""

from __future__ import annotations

import threading
from typing import Any


class QuitAttempt:
    """One wrong game being quit on ``controller``; :meth:`press` once per in-game frame."""

    def __init__(self, controller: Any, deadline: float):
        self.controller, self.deadline = controller, deadline
        self.frames = 0
        self.nudges = 0
        self._start_down = False
        self._lock = threading.Lock()

    def _hold(self, start: bool) -> None:
        import melee  # noqa: PLC0415

        B = melee.enums.Button
        for b in (B.BUTTON_L, B.BUTTON_R, B.BUTTON_A):
            self.controller.press_button(b)
        (self.controller.press_button if start else self.controller.release_button)(B.BUTTON_START)
        self._start_down = start

    def press(self) -> None:
        """This frame's input: L+R+A held, START down on every other frame (the caller flushes)."""
        with self._lock:
            self._hold(self.frames % 2 == 0)
            self.frames += 1

    def nudge(self) -> None:
        """While the paused game streams nothing: flip START (L+R+A held) and send it at once."""
        with self._lock:
            self._hold(not self._start_down)
            self.controller.flush()
            self.nudges += 1
