"""One running Dolphin: its process, libmelee console and the two controllers, started or cleaned up whole.

:func:`start_dolphin` launches Slippi Dolphin through ``melee.Console`` on the spectator port it
is given (under its own Xvfb where the build needs a display and none is set), connects to its
spectator stream and plugs both controllers in. Whatever fails on the way (libmelee's version
detection inside ``Console()``, an ``EOFError`` from its stream worker dying in ``connect``, the
process exiting, a pipe never opened) raises :class:`StartFailed`, after everything already
started (the display, the process, the stream's worker, the temporary user folder) is stopped,
so a failed start leaks nothing and the next try starts clean.

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
from pathlib import Path
from typing import Any, Callable

from melee_agent.config import DolphinConfig
from melee_agent.dolphin.errors import DolphinError
from melee_agent.dolphin.launch import LaunchOptions
from melee_agent.dolphin.scenes import scene_console_class

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
    display: Any = None  # this Dolphin's own Xvfb (a VirtualDisplay), stopped with it

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
        if self.display is not None:
            self.display.stop()


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


def quiet_console_log(console: Any) -> None:
    """Keep Dolphin's log out of stderr: ``Options.WriteToConsole = False`` in the ``Logger.ini`` libmelee wrote.

    Stock Slippi Dolphin (Ishiiruka) logs ``EXI SLIPPI: Invalid command byte: 0x3E`` as an error on every menu
    frame (libmelee's menu-info code starts menu frames with 0x3E, which ``EXI_DeviceSlippi.cpp`` streams and then
    reports as unknown), hundreds of lines a game into the worker's journal and the eval terminal, and
    ``dolphin.log_level`` cannot silence an error. Dolphin's logger writes to the console by default and libmelee
    passes Dolphin's stderr through; the log file in the temporary user folder keeps everything at
    ``dolphin.log_level``.
    """
    import configparser  # noqa: PLC0415

    path = Path(console._get_dolphin_config_path()) / "Logger.ini"  # libmelee 0.47's one home for it
    if not path.is_file():
        return
    ini = configparser.ConfigParser()
    ini.optionxform = str  # Dolphin's keys are case-sensitive (WriteToConsole)
    ini.read(path)
    if not ini.has_section("Options"):
        ini.add_section("Options")
    ini.set("Options", "WriteToConsole", "False")
    with open(path, "w") as f:
        ini.write(f)


def start_dolphin(cfg: DolphinConfig, launch: LaunchOptions, port: int, plug_timeout_s: float = 15.0) -> Session:
    """Start Slippi Dolphin on spectator ``port``, connect, plug both controllers; clean up on failure."""
    import melee  # noqa: PLC0415

    from melee_agent.dolphin.display import DisplayFailed, VirtualDisplay, display_env, find_xvfb  # noqa: PLC0415

    display = None
    if launch.private_display:
        display = VirtualDisplay(find_xvfb() or "Xvfb")
        try:
            display.start()
        except DisplayFailed as e:
            raise StartFailed(f"no display for Dolphin: {e}") from None
    session: Session | None = None
    try:
        try:
            # Console() runs the executable (libmelee's get_dolphin_version): under the display it will use.
            with display_env(display.display if display else None):
                console = scene_console_class()(path=cfg.dolphin_path, slippi_port=port, blocking_input=True,
                                                tmp_home_directory=True, fullscreen=False,
                                                **{"save_replays": False, **launch.console})
        except Exception as e:  # noqa: BLE001 (a transient version-detection failure must not end the worker)
            raise StartFailed(f"libmelee could not set up Dolphin ({type(e).__name__}: {e})") from None
        quiet_console_log(console)
        session = Session(console, melee.Controller(console, cfg.agent_port),
                          melee.Controller(console, cfg.opponent_port), port, display)
        env = {"DISPLAY": display.display} if display else None
        try:
            console.run(iso_path=cfg.iso_path, environment_vars=env, **launch.run)
        except OSError as e:  # exec failed (a half-copied AppImage, no FUSE): another try may do
            raise StartFailed(f"Dolphin could not be run ({e})") from None
        try:
            connected = console.connect()
        except (EOFError, OSError) as e:  # libmelee's stream worker died before answering
            raise StartFailed(f"the Slippi spectator connection on port {port} failed ({type(e).__name__}: {e})") \
                from None
        if not connected:
            code = session.exit_code()
            raise StartFailed(f"no Slippi spectator server on port {port}"
                              + (f" (Dolphin exited with code {code})" if code is not None else
                                 " (Dolphin runs; the port may be taken)"))
        for c in (session.controller, session.cpu_controller):
            plug(c, console, session.exit_code, plug_timeout_s)
    except BaseException:
        if session is not None:
            session.stop()
        elif display is not None:
            display.stop()
        raise
    return session


def replay_session(path: str, agent_port: int, opponent_port: int, controller_factory: Callable[[int], Any]) -> Session:
    """A session on libmelee's file console: a real replay's frames, controllers that only record."""
    from melee_agent.io.slp import console_class  # noqa: PLC0415

    console = console_class()(path=str(path), is_dolphin=False, allow_old_version=True)
    console.connect()
    return Session(console, controller_factory(agent_port), controller_factory(opponent_port))
