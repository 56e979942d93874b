"""Melee's scenes as Slippi streams them, and a libmelee ``Console`` that keeps the one it last read.

A Slippi menu event starts with the scene as two bytes, minor then major (slippi-ssbm-asm's
``Common/Common.s``: ``SCENE_VERSUS_CSS`` 0x0002, ``_SSS`` 0x0102, ``_IN_GAME`` 0x0202,
``_SUDDEN_DEATH`` 0x0302; VS mode's results screen is its minor scene 4, 0x0402). libmelee 0.47
turns the scene into ``gamestate.menu_state`` but knows only some: the results screen and sudden
death both read as ``UNKNOWN_MENU``, and it never reports ``Menu.SUDDEN_DEATH``. The supervisor
must tell them apart (START leaves the results screen; in sudden death it pauses the game), so
:class:`SceneConsole` records the raw scene of every menu event libmelee parses.

Sudden death reaches libmelee either way: slippi-ssbm-asm records it (``ShouldRecord.asm`` accepts
0x0302 since "allows sudden death to save replays"), and libmelee's menu-extraction code
(``SendMenuFrame.asm``, hook 0x801a4fa4) sends a menu frame in every scene but 0x0202 and 0x0208,
so in sudden death each frame's batch holds a menu event too. Where that event comes first,
libmelee reads the batch as a menu (scene 0x0302); where the frame comes first, it reads an
in-game frame of a new game in which every player starts at 300% (Melee's sudden death).

It also never leaves its temporary Dolphin home behind: libmelee makes it (``libmelee_*`` in the
temp directory) early in ``Console.__init__`` and removes it only at the end of ``stop()``, so an
``__init__`` that raises after it (Null video asked of a build that cannot take it) or a ``stop()``
whose stream shutdown raises (which also skips its killing Dolphin, done here instead) would leave
one folder per Dolphin start.
"""

from __future__ import annotations

import shutil
from typing import Any

TITLE, MAIN_MENU, CSS, SSS, IN_GAME, SUDDEN_DEATH, RESULTS = 0x0000, 0x0001, 0x0002, 0x0102, 0x0202, 0x0302, 0x0402
SUDDEN_DEATH_PERCENT = 300.0  # every player's damage when sudden death starts

_scene_console: type | None = None


def scene_console_class() -> type:
    """``melee.Console`` (``slp.console_class``: 3.17 stage events readable) with a ``scene``
    attribute: the raw scene of the menu event its last ``step()`` parsed, or None where that step
    returned an in-game frame."""
    global _scene_console
    if _scene_console is None:
        from melee_agent.io.slp import console_class  # noqa: PLC0415 (libmelee, 3.17 stage events readable)

        class SceneConsole(console_class()):
            scene: int | None = None

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                try:
                    super().__init__(*args, **kwargs)
                except BaseException:
                    _remove_home(self)
                    raise

            def stop(self) -> None:
                try:
                    super().stop()
                finally:  # libmelee kills Dolphin after its stream shutdown: a shutdown that raised skipped it
                    _kill_dolphin(self)
                    _remove_home(self)

            def step(self) -> Any:
                self.scene = None
                return super().step()

            # Console.step calls its private menu parser as self.__handle_slippstream_menu_event, which
            # Python spells _Console__handle_slippstream_menu_event: this override sees every menu event.
            def _Console__handle_slippstream_menu_event(self, event_bytes: bytes, gamestate: Any) -> Any:  # noqa: N802
                self.scene = int.from_bytes(bytes(event_bytes[1:3]), "big")
                return super()._Console__handle_slippstream_menu_event(event_bytes, gamestate)

        _scene_console = SceneConsole
    return _scene_console


def _kill_dolphin(console: Any) -> None:
    """Kill and reap the Dolphin ``console`` started, if it is still there (libmelee's ``stop`` does so)."""
    process = getattr(console, "_process", None)
    if process is not None:
        process.kill()
        process.wait()
        console._process = None


def _remove_home(console: Any) -> None:
    """Remove the temporary Dolphin home libmelee made for ``console``, if it made one."""
    temp_dir = getattr(console, "temp_dir", None)
    if temp_dir:
        shutil.rmtree(temp_dir, ignore_errors=True)
        console.temp_dir = None
