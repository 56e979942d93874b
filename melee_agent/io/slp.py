"""Reading Slippi replays (``.slp``) through libmelee's file console, the path a live Dolphin uses.

Broken or too-old files raise :class:`ReplayError` naming the file and what went wrong, never a
traceback from inside libmelee, and never a partial result: :func:`read_gamestates` and
:func:`encode_replay` return every frame or raise.

Example::

    >>> states = read_gamestates("../shared/replays/libmelee_test_game_1.slp")  # doctest: +SKIP
    >>> encode_replay("../shared/replays/libmelee_test_game_1.slp").shape       # doctest: +SKIP
    (1038, 27)
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TypeVar

import numpy as np

from melee_agent.envs.state import STATE_DIM, encode_gamestate


class ReplayError(ValueError):
    """A replay file that libmelee cannot read; the message names the file."""


@functools.cache
def console_class() -> type:
    """libmelee's ``Console`` with its stage events readable from Slippi 3.17.0 (replay files and live
    Dolphin alike: ``dolphin/scenes.py`` builds on it), and, reading a file, events it does not know
    passed over (live, libmelee's own event loop passes them over already).

    Slippi writes Fountain of Dreams' platform, Dreamland's Whispy and Pokemon Stadium's transformation
    events from 3.17.0, but libmelee 0.47 sets up the state they update only for 3.18.0 on and raises
    ("Fountain of Dreams platforms not initialized") at the first such event of a 3.17 replay, so every
    3.17 game on those three stages was unreadable (slippi-js's ``FodPlatforms.slp`` and ``Whispy.slp``).
    This sets the state up afresh at every game start on those stages, whatever the version.
    """
    import melee  # noqa: PLC0415
    from melee import gamestate as gamestate_lib  # noqa: PLC0415
    from melee.slippstream import EventType  # noqa: PLC0415
    from melee.slpfilestreamer import SLPFileStreamer  # noqa: PLC0415

    known = frozenset(e.value for e in EventType)

    class TolerantFileStreamer(SLPFileStreamer):
        """libmelee's file reader, passing over events it does not know (a newer Slippi's; the replay's
        own payload table, its first event, gives every event's size). libmelee 0.47's reader raises on
        them ("255 is not a valid EventType": peppi's ``unknown_event.slp``)."""

        def dispatch(self, *args: Any, **kwargs: Any) -> Any:
            c = self._contents
            while c is not None and self._index < len(c) and c[self._index] not in known:
                size = self.eventsize[c[self._index]]
                if size <= 0:  # not in the payload table: the rest of the file cannot be framed
                    raise ValueError(f"event {c[self._index]:#x} has no size in the replay's payload table")
                self._index += size
            return super().dispatch(*args, **kwargs)

    class StageEventsConsole(melee.Console):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if type(self._slippstream) is SLPFileStreamer:  # a file, as libmelee opens it (console.py)
                # nothing has read it yet (connect() opens the file): the tolerant reader takes its place
                self._slippstream = TolerantFileStreamer(self.path)

        def _Console__game_start(self, gamestate: Any, event_bytes: bytes) -> None:  # noqa: N802
            super()._Console__game_start(gamestate, event_bytes)
            stage = self._current_stage  # fresh state every game, as libmelee does from 3.18.0
            if stage is melee.Stage.FOUNTAIN_OF_DREAMS:
                self._fod_platforms = gamestate_lib.FoDPlatforms()
            elif stage is melee.Stage.DREAMLAND:
                self._whispy = gamestate_lib.WhispyBlowDirection.NONE
            elif stage is melee.Stage.POKEMON_STADIUM:
                self._stadium_transformation = gamestate_lib.StadiumTransformation()

    return StageEventsConsole


def read_kept(path: str | os.PathLike, live: bool = False, console_cls: type | None = None,
              convert: Callable[[Any, Any], Any] | None = None) -> tuple[list[Any], Any]:
    """Every kept ``GameState`` of a replay file (or ``convert(gamestate, console)``, taken as each is
    read, so a reader that needs a few fields holds no GameStates), in order, and the console that
    read them; or a :class:`ReplayError` naming the file (never a partial list).

    A netplay replay sends a frame again each time the game rolls back; the game that was played is
    each frame's *last* version (a rollback throws the first, a prediction, away), so a re-sent frame
    replaces the one kept. ``live=True`` keeps what a live console saw as the game ran instead: each
    frame's first version (libmelee's default). ``console_cls`` (a subclass of :func:`console_class`)
    lets a reader keep more of each frame's bytes than libmelee does (``fidelity`` keeps "last attack
    landed"); a per-frame dict it fills is overwritten by each re-sent frame, the last version winning
    there too.
    """
    path = Path(path)
    if path.is_dir():
        raise ReplayError(f"{path}: a folder, not a replay file (give its .slp files: {path}/*.slp)")
    if not path.is_file():
        raise ReplayError(f"{path}: no such replay file")
    if path.stat().st_size == 0:  # libmelee's own message would be a decoder's "Insufficient input ... at byte 0"
        raise ReplayError(f"{path}: an empty file (0 bytes), not a Slippi replay")
    try:
        console = (console_cls or console_class())(path=str(path), is_dolphin=False, allow_old_version=True,
                                                   skip_rollback_frames=live)
        console.connect()
    except Exception as e:  # noqa: BLE001 (libmelee raises TypeError, DecoderException, ... on bad files)
        raise ReplayError(f"{path}: not a readable Slippi replay ({type(e).__name__}: {e})") from None
    kept: list[tuple[int, Any]] = []  # (frame number, the state or what convert made of it)
    while True:
        try:
            gamestate = console.step()
        except Exception as e:  # noqa: BLE001 (as above: any decoder error)
            ver = console.slp_version_tuple
            fmt = f"format {'.'.join(str(int(v)) for v in ver)}" if ver else "replay"
            old = " (too old a format for libmelee)" if ver and tuple(ver) < (1, 0, 0) else ""
            raise ReplayError(f"{path}: {fmt} unreadable at frame {len(kept)}, libmelee says "
                              f"{type(e).__name__}: {e}{old}") from None
        if gamestate is None:
            break
        while kept and kept[-1][0] >= gamestate.frame:  # a rollback: this frame's later version wins
            kept.pop()
        kept.append((int(gamestate.frame), convert(gamestate, console) if convert else gamestate))
    return [item for _, item in kept], console


@functools.cache
def post_frame_byte_console(offset: int) -> type:
    """:func:`console_class` that also keeps one byte of each post-frame update libmelee leaves out or folds,
    at ``offset`` in the event (Slippi's replay spec), as ``console.post_byte[(frame, port)]`` (port 1-4; Nana's
    updates passed over). A re-sent (rolled-back) frame overwrites the byte, as :func:`read_kept` keeps the
    frame's last version; a ``convert`` reads the byte of the version it is given."""

    class PostFrameByteConsole(console_class()):
        def __init__(self, *a: Any, **k: Any) -> None:
            super().__init__(*a, **k)
            self.post_byte: dict[tuple[int, int], int] = {}

        def _Console__post_frame(self, gamestate: Any, event_bytes: bytes) -> None:  # noqa: N802
            super()._Console__post_frame(gamestate, event_bytes)
            if len(event_bytes) > offset and event_bytes[0x6] == 0:  # not a follower (Nana)
                self.post_byte[(int(gamestate.frame), int(event_bytes[0x5]) + 1)] = int(event_bytes[offset])

    return PostFrameByteConsole


T = TypeVar("T")


def read_each(paths: Iterable[str | os.PathLike], read: Callable[[str | os.PathLike], T]) -> tuple[list[T], list[str]]:
    """``read`` of each replay, and one error line per replay passed over: a :class:`ReplayError`'s, or a path
    naming a file already given (read once: what it holds would count twice)."""
    out: list[T] = []
    errors: list[str] = []
    seen: dict[str, str] = {}
    for p in paths:
        key = os.path.realpath(p)
        if key in seen:
            errors.append(f"{p}: the same file as {seen[key]}, read once")
            continue
        seen[key] = str(p)
        try:
            out.append(read(p))
        except ReplayError as e:
            errors.append(str(e))
    return out, errors


def iter_gamestates(path: str | os.PathLike, live: bool = False) -> Iterator[Any]:
    """Each frame's libmelee ``GameState`` from a replay file, in order (the whole file is read first;
    ``live`` and the rollback rule: :func:`read_kept`). Stage-event fields (FoD's platforms, ...) are one
    object libmelee shares between frames: every state shows its last value.
    """
    yield from read_kept(path, live)[0]


def read_gamestates(path: str | os.PathLike, live: bool = False) -> list[Any]:
    """Every ``GameState`` of a replay (``live``: as :func:`iter_gamestates`), or a :class:`ReplayError`
    (never a partial list)."""
    states = list(iter_gamestates(path, live))
    if not states:
        raise ReplayError(f"{path}: replay holds no frames")
    return states


def game_ports(gamestate: Any) -> list[int]:
    return sorted(int(p) for p in gamestate.players)


def encode_replay(
    path: str | os.PathLike,
    agent_port: int | None = None,
    opponent_port: int | None = None,
    num_actions: int = 5,
) -> np.ndarray:
    """Encode every frame of a replay as ``[frames, 27]`` (ports default to the first two in it)."""
    states = read_gamestates(path)
    ports = game_ports(states[-1])
    if agent_port is None or opponent_port is None:
        if len(ports) < 2:
            raise ReplayError(f"{path}: needs two players, found ports {ports}")
        agent_port, opponent_port = ports[0], ports[1]
    for port in (agent_port, opponent_port):
        if port not in ports:
            raise ReplayError(f"{path}: port {port} is not in this game (ports: {ports})")
    out = np.empty((len(states), STATE_DIM), np.float32)
    for i, gs in enumerate(states):
        out[i] = encode_gamestate(gs, agent_port, opponent_port, 0, num_actions)
    return out
