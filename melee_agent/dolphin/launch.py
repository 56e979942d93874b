"""Which Dolphin to start and how: paths checked, the build's options, a free spectator port.

:func:`launch_options` asks libmelee's own ``get_dolphin_version`` which build
``dolphin.dolphin_path`` is, and mainline's ``--help`` whether it is the no-GUI build, and picks
what works for it: stock Slippi Ishiiruka and mainline's Qt build need a display (a private Xvfb
per Dolphin where ``DISPLAY`` is unset); the ExiAI build runs ``Null`` video, EXI inputs,
fast-forward; mainline's no-GUI build runs ``Null`` video with ``--platform headless``.
:func:`free_udp_port` gives each Dolphin its own Slippi spectator port, so two Dolphins on one
host never stream into each other's worker."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from melee_agent.config import DolphinConfig
from melee_agent.dolphin.errors import DolphinError
from melee_agent.dolphin.iso import check_iso

log = logging.getLogger("melee_agent.dolphin")


def free_udp_port() -> int:
    """A UDP port nothing on this host is bound to now (the spectator server's, ENet over UDP)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("0.0.0.0", 0))
        return s.getsockname()[1]


def check_paths(cfg: DolphinConfig) -> None:
    """One clear line naming what to set when the Dolphin or ISO path is missing or wrong, or the ISO
    is not Melee NTSC 1.02 (:mod:`~melee_agent.dolphin.iso`; a format it cannot read is only logged)."""
    if not cfg.dolphin_path:
        raise DolphinError("dolphin.dolphin_path is not set: point it at Slippi Dolphin (its AppImage, executable or "
                           "folder), e.g. --set dolphin.dolphin_path=/opt/slippi/Slippi_Online-x86_64.AppImage")
    if not Path(cfg.dolphin_path).exists():
        raise DolphinError(f"dolphin.dolphin_path {cfg.dolphin_path!r} does not exist: set it to your Slippi Dolphin")
    if not cfg.iso_path:
        raise DolphinError("dolphin.iso_path is not set: point it at your NTSC 1.02 Melee ISO "
                           "(--set dolphin.iso_path=/path/melee.iso); it is never shipped or downloaded")
    if not Path(cfg.iso_path).is_file():
        raise DolphinError(f"dolphin.iso_path {cfg.iso_path!r} is not a file: set it to your NTSC 1.02 Melee ISO")
    if Path(cfg.dolphin_path).is_dir():
        from melee.console import get_exe_path  # noqa: PLC0415

        try:  # libmelee finds the executable in a folder only by its install layout
            get_exe_path(cfg.dolphin_path)
        except (ValueError, FileNotFoundError, NotImplementedError) as e:
            raise DolphinError(f"dolphin.dolphin_path {cfg.dolphin_path!r} is a folder libmelee cannot use ({e}): "
                               "set it to the Dolphin executable or AppImage itself") from None

    warning = check_iso(cfg.iso_path)
    if warning:
        log.warning("%s", warning)


@dataclass(frozen=True)
class LaunchOptions:
    """How to start one Dolphin build: ``melee.Console`` keyword arguments and ``Console.run``'s."""

    build: str  # "ishiiruka", "exiai", "mainline-nogui" or "mainline-qt"
    console: dict[str, Any]
    run: dict[str, Any]
    private_display: bool = False  # each start gets its own Xvfb (the build needs a display, DISPLAY is unset)


def launch_options(cfg: DolphinConfig, display: str | None = None, xvfb: str | None = None) -> LaunchOptions:
    """The options for the Dolphin at ``cfg.dolphin_path``, from libmelee's own version detection.

    - stock Slippi Online (Ishiiruka): a real video backend (libmelee refuses ``Null`` for it), so it
      needs a display;
    - the ExiAI Ishiiruka build: the ``Null`` backend (libmelee requires it), EXI inputs, and
      fast-forward when headless;
    - mainline Slippi Dolphin: ``--platform headless`` exists only in the no-GUI build's parser
      (``DolphinNoGUI/MainNoGUI.cpp`` adds it; the shared ``UICommon/CommandLineParse.cpp`` and the
      Qt build Slippi ships as an AppImage do not know it), so ``--help`` is asked: the no-GUI build
      runs headless with ``Null`` video; the Qt build needs a display (with ``Null`` video).

    A build that needs a display uses ``DISPLAY`` where it is set. Where it is not and
    ``dolphin.headless`` is true, every start gets a private Xvfb (:mod:`.display`); without Xvfb
    one line says what to install or set. ``display``/``xvfb`` stand in for ``$DISPLAY`` and the
    ``Xvfb`` on ``PATH`` ("" = none).
    """
    from melee.console import DolphinBuild  # noqa: PLC0415

    from melee_agent.dolphin.display import find_xvfb  # noqa: PLC0415

    display = os.environ.get("DISPLAY", "") if display is None else display
    xvfb = (find_xvfb() or "") if xvfb is None else xvfb
    version = _version(cfg.dolphin_path, display, xvfb)
    common = {"disable_audio": cfg.headless, "log_level": cfg.log_level}
    if cfg.save_replays:
        common.update(save_replays=True, replay_dir=str(Path(cfg.replay_dir or "replays").resolve()))
    if version.build is DolphinBuild.EXI_AI:
        return LaunchOptions("exiai", {**common, "gfx_backend": "Null", "use_exi_inputs": True,
                                       "enable_ffw": cfg.headless}, {})
    if version.mainline and lists_platform_option(cfg.dolphin_path):
        if cfg.headless:
            return LaunchOptions("mainline-nogui", {**common, "gfx_backend": "Null"}, {"platform": "headless"})
        return LaunchOptions("mainline-nogui", common, {})
    build = "mainline-qt" if version.mainline else "ishiiruka"
    console = {**common, "gfx_backend": "Null"} if version.mainline and cfg.headless else common
    if display:
        return LaunchOptions(build, console, {})
    name = "mainline Slippi Dolphin's Qt build" if version.mainline else "stock Slippi Online (Ishiiruka)"
    if not cfg.headless:
        raise DolphinError(f"dolphin.headless is false but DISPLAY is unset: {name} opens a window; set DISPLAY, or "
                           "set dolphin.headless = true")
    if not xvfb:
        raise DolphinError(f"{name} needs a display and DISPLAY is unset: install Xvfb (apt-get install xvfb) and the "
                           "worker starts its own, or set DISPLAY, or use the ExiAI build or mainline's no-GUI build")
    return LaunchOptions(build, console, {}, private_display=True)


def _version(path: str, display: str, xvfb: str) -> Any:
    """libmelee's ``get_dolphin_version``; where it fails with no display, again under a throwaway Xvfb
    (the Qt build opens the display before it reads ``--version``)."""
    from melee.console import get_dolphin_version  # noqa: PLC0415

    from melee_agent.dolphin.display import VirtualDisplay, display_env  # noqa: PLC0415

    try:
        with display_env(display or None):
            return get_dolphin_version(path)
    except Exception as e:  # noqa: BLE001 (libmelee raises assertion, value and runtime errors here)
        first = e
    if not display and xvfb:
        probe = VirtualDisplay(xvfb)
        try:
            with display_env(probe.start()):
                return get_dolphin_version(path)
        except Exception as e:  # noqa: BLE001 (DisplayFailed, or libmelee's errors again)
            first = e
        finally:
            probe.stop()
    hint = "" if display or xvfb else (" (mainline's Qt build cannot even print its version without a display: "
                                         "install Xvfb, apt-get install xvfb, or set DISPLAY)")
    raise DolphinError(f"dolphin.dolphin_path {path!r}: libmelee cannot tell which Dolphin this is "
                       f"({type(first).__name__}: {first}); point it at Slippi Dolphin{hint}") from None


def lists_platform_option(path: str, timeout_s: float = 30.0) -> bool:
    """Whether the executable's ``--help`` lists ``--platform`` (mainline's no-GUI build does; Qt's does not,
    and without a display it aborts before printing anything)."""
    from melee.console import get_exe_path  # noqa: PLC0415

    try:
        out = subprocess.run([get_exe_path(path), "--help"], capture_output=True, text=True, timeout=timeout_s,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--platform" in out.stdout + out.stderr
