"""A private X display for a Dolphin build that needs one: an Xvfb started and stopped with its Dolphin.

Stock Slippi Online (Ishiiruka, wx) renders with a real video backend, and mainline Slippi's
AppImage is the Qt build, which creates its ``QApplication`` (and so opens the display) before it
even parses ``--version`` (project-slippi/dolphin, ``DolphinQt/Main.cpp``). Where ``DISPLAY`` is
unset and ``dolphin.headless`` is true, each Dolphin gets its own Xvfb: ``-displayfd`` lets Xvfb
pick a free display number and report it once it accepts clients, so workers on one host (or in
systemd units with ``PrivateTmp``) never share or race for one.

:func:`display_env` puts a display into this process's environment while libmelee runs the
executable itself (``Console()`` calls ``get_dolphin_version``, a plain ``subprocess.run``).

Example (needs Xvfb)::

    d = VirtualDisplay(find_xvfb())
    print(d.start())      # ":0", ":1", ... whichever was free
    d.stop()
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import tempfile
import threading
import time
from typing import Iterator

XVFB_ARGS = ("-screen", "0", "640x480x24", "-nolisten", "tcp")
_env_lock = threading.Lock()


class DisplayFailed(RuntimeError):
    """Xvfb did not start; the message holds what it said."""


def find_xvfb() -> str | None:
    return shutil.which("Xvfb")


class VirtualDisplay:
    """One Xvfb process; :meth:`start` returns its display (``":N"``)."""

    def __init__(self, xvfb: str, timeout_s: float = 10.0):
        self.xvfb, self.timeout_s = xvfb, timeout_s
        self.process: subprocess.Popen | None = None
        self.display: str | None = None

    def start(self) -> str:
        read_fd, write_fd = os.pipe()
        err = tempfile.TemporaryFile()  # noqa: SIM115 (kept open for the child process's stderr)
        try:
            self.process = subprocess.Popen([self.xvfb, "-displayfd", str(write_fd), *XVFB_ARGS], pass_fds=(write_fd,),
                                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        except OSError as e:
            os.close(read_fd)
            os.close(write_fd)
            err.close()
            raise DisplayFailed(f"cannot run {self.xvfb}: {e}") from None
        os.close(write_fd)
        number = b""
        deadline = time.monotonic() + self.timeout_s
        try:
            while not number.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([read_fd], [], [], left)[0]:
                    self.stop()
                    raise DisplayFailed(f"Xvfb reported no display in {self.timeout_s:g} s")
                chunk = os.read(read_fd, 16)
                if not chunk:  # it exited before reporting one
                    self.stop()
                    err.seek(0)
                    said = err.read().decode(errors="replace").strip().splitlines()
                    raise DisplayFailed(f"Xvfb exited at start: {said[-1] if said else 'no message'}")
                number += chunk
        finally:
            os.close(read_fd)
            err.close()
        self.display = f":{int(number)}"
        return self.display

    def stop(self) -> None:
        p, self.process = self.process, None
        if p is None:
            return
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@contextlib.contextmanager
def display_env(display: str | None) -> Iterator[None]:
    """``DISPLAY`` set to ``display`` in this process while the block runs (nothing where it is None)."""
    if display is None:
        yield
        return
    with _env_lock:
        before = os.environ.get("DISPLAY")
        os.environ["DISPLAY"] = display
        try:
            yield
        finally:
            if before is None:
                os.environ.pop("DISPLAY", None)
            else:
                os.environ["DISPLAY"] = before
