"""One controller port's FIFO, read as Slippi Dolphin reads it (Ishiiruka ``Pipes.cpp``).

libmelee writes text commands (``PRESS A``, ``RELEASE START``, ``SET MAIN 0.5 1.0``) and ends each
frame with ``FLUSH``. Dolphin's ``PipeDevice::UpdateInput`` reads everything available and applies
every complete line it has, so a state persists until changed and two frames written before
Dolphin reads collapse into their last state. With blocking pipes it waits for a ``FLUSH`` only
while ``g_needInputForFrame`` is set (by a frame bookend, a menu frame or a game start), and one
``FLUSH`` from any port clears that global flag: the frame then runs with whatever the other
ports have sent so far.
"""

from __future__ import annotations

import os
from pathlib import Path

BUTTONS = ("A", "B", "X", "Y", "Z", "L", "R", "START", "D_UP", "D_DOWN", "D_LEFT", "D_RIGHT")


class Pad:
    """One port's pipe; :meth:`update` applies what was written since the last frame."""

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None
        self.buf = b""
        self.buttons = {b: False for b in BUTTONS}
        self.prev = dict(self.buttons)
        self.main = (0.5, 0.5)
        self.prev_main = self.main
        self.writer = False

    def open(self) -> None:
        if self.fd is None and self.path.exists():
            self.fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)

    def read(self) -> None:
        self.open()
        if self.fd is None:
            return
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        self.writer = bool(data)  # b"": no writer has the pipe open (yet, or any more)
        self.buf += data

    def has_flush(self) -> bool:
        return b"FLUSH\n" in self.buf

    def update(self) -> bool:
        """One frame: apply every complete command line read so far; True if a FLUSH was among them."""
        self.prev, self.prev_main = dict(self.buttons), self.main
        if b"\n" not in self.buf:
            return False
        complete, self.buf = self.buf.rsplit(b"\n", 1)
        flushed = False
        for line in complete.decode().splitlines():
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "FLUSH":
                flushed = True
            elif parts[0] == "PRESS" and len(parts) > 1 and parts[1] in self.buttons:
                self.buttons[parts[1]] = True
            elif parts[0] == "RELEASE" and len(parts) > 1 and parts[1] in self.buttons:
                self.buttons[parts[1]] = False
            elif parts[0] == "SET" and len(parts) == 4 and parts[1] == "MAIN":
                self.main = (float(parts[2]), float(parts[3]))
        return flushed

    def pressed(self, button: str) -> bool:
        return self.buttons[button] and not self.prev[button]

    def held(self, *buttons: str) -> bool:
        return all(self.buttons[b] for b in buttons)

    def tilted(self, direction: str) -> bool:
        """The stick newly pushed ``up`` or ``down`` (a menu cursor moves once per push)."""
        y, before = self.main[1], self.prev_main[1]
        if direction == "down":
            return y < 0.3 <= before
        return y > 0.7 >= before
