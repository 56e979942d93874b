"""One running Dolphin: its process, libmelee console and the two controllers, started or cleaned up whole.

:func:`start_dolphin` launches Slippi Dolphin through ``melee.Console`` on the spectator port it
is given, connects to its spectator stream and plugs both controllers in. If any of that fails,
everything already started (the process, the stream's worker, the temporary user folder) is
stopped before :class:`StartFailed` is raised, so a failed start leaks nothing.

A :class:`Session` is what the supervisor drives; tests build one on libmelee's file console
(a real replay) with :func:`replay_session`.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import time
from dataclasses import dataclass
from typing import Any, Callable

from melee_agent.config import DolphinConfig
from melee_agent.dolphin.launch import DolphinError, LaunchOptions

log = logging.getLogger("melee_agent.dolphin")


class StartFailed(DolphinError):
    """This start of Dolphin failed (and was cleaned up); another try on a new port may work."""


@dataclass
class Session:
    """A console to step and the agent's and the CPU port's controllers."""

    console: Any
    controller: Any
    cpu_controller: Any
    port: int | None = None  # the spectator port (None: not a live Dolphin)

    @property
    def process(self) -> Any:
        return getattr(self.console, "_process", None)

    def exit_code(self) -> int | None:
        p = self.process
        return None if p is None else p.poll()

    def flush_unregistered(self) -> None:
        """A live console flushes its plugged controllers in ``step()``; others are flushed here."""
        registered = getattr(self.console, "controllers", [])
        for c in (self.controller, self.cpu_controller):
            if c not in registered:
                c.flush()

    def stop(self) -> None:
        for c in (self.controller, self.cpu_controller):
            try:
                c.disconnect()
            except Exception:  # noqa: BLE001 (a pipe whose reader is gone)
                pass
        try:
            if hasattr(self.console, "stop"):
                self.console.stop()
        except Exception as e:  # noqa: BLE001 (it is already dead; the temp folder is what matters)
            log.debug("console.stop: %s", e)


def plug(controller: Any, console: Any, exit_code: Callable[[], int | None], timeout_s: float) -> None:
    """``Controller.connect`` with a deadline: open the FIFO once Dolphin reads it, never block forever.

    libmelee opens the pipe with a plain ``open(path, "w")``, which blocks until a reader opens it
    and so hangs for good if Dolphin died before it did.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fd = os.open(controller.pipe_path, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as e:
            if e.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise StartFailed(f"controller pipe {controller.pipe_path}: {e}") from None
        code = exit_code()
        if code is not None:
            raise StartFailed(f"Dolphin exited with code {code} before reading controller port {controller.port}")
        if time.monotonic() > deadline:
            raise StartFailed(f"Dolphin did not open controller port {controller.port}'s pipe in {timeout_s:.0f} s")
        time.sleep(0.05)
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
    controller.pipe = os.fdopen(fd, "w")
    console.controllers.append(controller)


def start_dolphin(cfg: DolphinConfig, launch: LaunchOptions, port: int, plug_timeout_s: float = 15.0) -> Session:
    """Start Slippi Dolphin on spectator ``port``, connect, plug both controllers; clean up on failure."""
    import melee  # noqa: PLC0415

    console = melee.Console(path=cfg.dolphin_path, slippi_port=port, blocking_input=True, tmp_home_directory=True,
                            fullscreen=False, save_replays=False, **launch.console)
    session = Session(console, melee.Controller(console, cfg.agent_port),
                      melee.Controller(console, cfg.opponent_port), port)
    try:
        console.run(iso_path=cfg.iso_path, **launch.run)
        if not console.connect():
            code = session.exit_code()
            raise StartFailed(f"no Slippi spectator server on port {port}"
                              + (f" (Dolphin exited with code {code})" if code is not None else
                                 " (Dolphin runs; the port may be taken)"))
        for c in (session.controller, session.cpu_controller):
            plug(c, console, session.exit_code, plug_timeout_s)
    except BaseException:
        session.stop()
        raise
    return session


def replay_session(path: str, agent_port: int, opponent_port: int, controller_factory: Callable[[int], Any]) -> Session:
    """A session on libmelee's file console: a real replay's frames, controllers that only record."""
    import melee  # noqa: PLC0415

    console = melee.Console(path=str(path), is_dolphin=False, allow_old_version=True)
    console.connect()
    return Session(console, controller_factory(agent_port), controller_factory(opponent_port))
