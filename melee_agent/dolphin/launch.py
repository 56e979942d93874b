"""Which Dolphin to start and how: paths checked, the build's options, a free spectator port.

:func:`launch_options` asks libmelee's own ``get_dolphin_version`` which build
``dolphin.dolphin_path`` is and picks what works for it (stock Slippi Ishiiruka: a real video
backend, so headless means under Xvfb; the ExiAI build: ``Null`` video, EXI inputs, fast-forward;
mainline: ``Null`` video and ``--platform headless``). :func:`free_udp_port` gives each Dolphin its
own Slippi spectator port, so two Dolphins on one host never stream into each other's worker.
"""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from melee_agent.config import DolphinConfig

log = logging.getLogger("melee_agent.dolphin")


def free_udp_port() -> int:
    """A UDP port nothing on this host is bound to now (the spectator server's, ENet over UDP)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("0.0.0.0", 0))
        return s.getsockname()[1]


class DolphinError(RuntimeError):
    """Dolphin cannot be started or kept running; the message says what to set or what happened."""


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
    from melee_agent.dolphin.iso import check_iso  # noqa: PLC0415 (iso.py imports DolphinError from here)

    warning = check_iso(cfg.iso_path)
    if warning:
        log.warning("%s", warning)


@dataclass(frozen=True)
class LaunchOptions:
    """How to start one Dolphin build: ``melee.Console`` keyword arguments and ``Console.run``'s."""

    build: str  # what libmelee detected: "ishiiruka", "exiai" or "mainline"
    console: dict[str, Any]
    run: dict[str, Any]


def launch_options(cfg: DolphinConfig, display: str | None = None) -> LaunchOptions:
    """The options for the Dolphin at ``cfg.dolphin_path``, from libmelee's own version detection.

    - stock Slippi Online (Ishiiruka): a real video backend, so headless means under Xvfb (a
      ``DISPLAY`` must be set); libmelee refuses ``Null`` for it;
    - the ExiAI Ishiiruka build: the ``Null`` backend (libmelee requires it), EXI inputs, and
      fast-forward when headless;
    - mainline Slippi Dolphin: headless is ``Null`` video and ``--platform headless``.
    """
    from melee.console import DolphinBuild, get_dolphin_version  # noqa: PLC0415

    try:
        version = get_dolphin_version(cfg.dolphin_path)
    except Exception as e:  # noqa: BLE001 (libmelee raises assertion, value and runtime errors here)
        raise DolphinError(f"dolphin.dolphin_path {cfg.dolphin_path!r}: libmelee cannot tell which Dolphin this is "
                           f"({type(e).__name__}: {e}); point it at Slippi Dolphin") from None
    common = {"disable_audio": cfg.headless}
    if version.build is DolphinBuild.EXI_AI:
        return LaunchOptions("exiai", {**common, "gfx_backend": "Null", "use_exi_inputs": True,
                                       "enable_ffw": cfg.headless}, {})
    if version.mainline:
        if cfg.headless:
            return LaunchOptions("mainline", {**common, "gfx_backend": "Null"}, {"platform": "headless"})
        return LaunchOptions("mainline", common, {})
    display = os.environ.get("DISPLAY") if display is None else display
    if cfg.headless and not display:
        raise DolphinError("stock Slippi Online (Ishiiruka) has no headless video backend: run it under Xvfb "
                           "(`Xvfb :99 & export DISPLAY=:99`), or set dolphin.dolphin_path to the ExiAI Ishiiruka "
                           "build or mainline Slippi Dolphin for true headless play")
    return LaunchOptions("ishiiruka", common, {})
