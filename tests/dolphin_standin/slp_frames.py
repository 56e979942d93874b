"""Slippi replay files cut into the messages a Slippi Dolphin streams to spectators.

Written from Slippi's replay format (project-slippi/slippi-wiki, SPEC.md): a ``.slp`` file is
UBJSON ``{"raw": [bytes], "metadata": {...}}``; ``raw`` is a run of events, each a command byte and
a payload whose size the first event (0x35, Event Payloads) lists. A live Dolphin sends the same
events, batched about a frame per message: the game start (with the payload sizes before it), then
from each Frame Start (0x3A) to its Frame Bookend (0x3C), then the Game End (0x39).

:func:`patched` rewrites one game so it shows the setup the menus chose: the ports, the characters,
CPU levels and the stage (the recorded motion stays as it was).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

EVENT_PAYLOADS, GAME_START, PRE_FRAME, POST_FRAME, GAME_END = 0x35, 0x36, 0x37, 0x38, 0x39
FRAME_START, ITEM_UPDATE, FRAME_BOOKEND, MESSAGE_SPLITTER = 0x3A, 0x3B, 0x3C, 0x10

# Slippi's external character ids (game start block) and Melee's internal ids (frame events).
EXTERNAL_CHARACTER = {"FOX": 2, "MARTH": 9, "FALCO": 20, "MARIO": 8, "YOSHI": 17, "PICHU": 24, "PIKACHU": 13}
INTERNAL_CHARACTER = {"FOX": 1, "MARTH": 18, "FALCO": 22, "MARIO": 0, "YOSHI": 14, "PICHU": 23, "PIKACHU": 12}
# Slippi's external stage ids (game start block, offset 0x13).
EXTERNAL_STAGE = {"FOUNTAIN_OF_DREAMS": 2, "POKEMON_STADIUM": 3, "YOSHIS_STORY": 8, "DREAMLAND": 28,
                  "BATTLEFIELD": 31, "FINAL_DESTINATION": 32}


@dataclass
class Game:
    """One recorded game as spectator messages (each a bytes batch of whole events)."""

    version: tuple[int, int, int]
    sizes: dict[int, int]  # command byte -> payload size (without the command byte)
    start: bytes  # Event Payloads + Game Start (+ message splitters)
    frames: list[bytes] = field(default_factory=list)  # Frame Start .. Frame Bookend
    end: bytes = b""
    ports: tuple[int, ...] = ()  # player indices (0-3) that play


def _raw(data: bytes, path: Path) -> bytes:
    key = b"U\x03raw[$U#l"
    at = data.find(key)
    if at < 0:
        raise ValueError(f"{path}: no raw event array (not a Slippi replay)")
    (length,) = struct.unpack_from(">i", data, at + len(key))
    raw = data[at + len(key) + 4: at + len(key) + 4 + length]
    if length <= 0 or len(raw) < length:
        raw = data[at + len(key) + 4:]  # a replay still being written has length 0
    return raw


def read_game(path: str | Path) -> Game:
    """The messages of the game in ``path``; a ValueError naming the file when it cannot be streamed."""
    path = Path(path)
    raw = _raw(path.read_bytes(), path)
    if not raw or raw[0] != EVENT_PAYLOADS:
        raise ValueError(f"{path}: raw events do not open with Event Payloads")
    info_size = raw[1]
    sizes = {EVENT_PAYLOADS: info_size}
    for i in range(2, info_size + 1, 3):
        sizes[raw[i]] = struct.unpack_from(">H", raw, i + 1)[0]
    at = info_size + 1
    start = bytearray(raw[:at])
    game: Game | None = None
    frame = bytearray()
    while at < len(raw):
        cmd = raw[at]
        if cmd not in sizes:
            raise ValueError(f"{path}: unknown event 0x{cmd:02x} at byte {at}")
        event = raw[at: at + sizes[cmd] + 1]
        at += sizes[cmd] + 1
        if cmd == GAME_START:
            start += event
            game = Game(version=(event[1], event[2], event[3]), sizes=sizes, start=b"")
        elif game is None:
            raise ValueError(f"{path}: frame events before the game start")
        elif cmd == MESSAGE_SPLITTER and not game.frames and not frame:
            start += event
        elif cmd == GAME_END:
            game.end = bytes(event)
        else:
            frame += event
            if cmd == FRAME_BOOKEND:
                game.frames.append(bytes(frame))
                frame = bytearray()
    if game is None:
        raise ValueError(f"{path}: no game start")
    if game.version < (3, 0, 0):
        if frame:  # a format before frame bookends (2.2.0 brought Frame Start, 3.0.0 the bookend)
            return _streamed_as_3_0_0(game, bytes(start), bytes(frame), path)
        raise ValueError(f"{path}: replay format {game.version} holds no frame events")
    game.start = bytes(start)
    ports = set()
    for f in game.frames[:1]:
        for ev in split_events(f, sizes):
            if ev[0] == POST_FRAME:
                ports.add(ev[5])
    game.ports = tuple(sorted(ports))
    return game


# Payload sizes (without the command byte) of the events as replay format 3.0.0 has them (Slippi's
# SPEC.md: each event's last field by the version that added it): Game Start up to "frozen
# Pokemon Stadium" (2.0.0, offset 0x1A2), Pre-Frame up to its percent (1.4.0), Post-Frame up to
# the hurtbox collision state (2.1.0), Game End with the LRAS initiator (2.0.0), Frame Start with
# the random seed (2.2.0), Frame Bookend with its frame number (3.0.0).
SIZES_3_0_0 = {GAME_START: 0x1A2, PRE_FRAME: 0x3F, POST_FRAME: 0x34, GAME_END: 0x2, FRAME_START: 0x8,
               FRAME_BOOKEND: 0x4}


def _padded(event: bytes, size: int) -> bytes:
    return event + bytes(max(0, size + 1 - len(event)))


def _streamed_as_3_0_0(game: Game, start: bytes, events: bytes, path: Path) -> Game:
    """An older replay (no Frame Start or Bookend events) as a Slippi Dolphin of today streams a game.

    Every Dolphin that spectators can connect to writes format 3.0.0 or later, each frame from a
    Frame Start to a Frame Bookend; libmelee's live console refuses anything older. The recorded
    events are cut into frames by their frame number (offset 0x1 of each pre- and post-frame
    update), wrapped in a Frame Start and a Frame Bookend, and padded with zeros to their 3.0.0
    sizes (fields the recording lacks read as zero); the Game Start says 3.0.0.
    """
    old = game.sizes
    sizes = {EVENT_PAYLOADS: 1 + 3 * len(SIZES_3_0_0), **{c: max(old.get(c, 0), n) for c, n in SIZES_3_0_0.items()}}
    payloads = bytearray([EVENT_PAYLOADS, sizes[EVENT_PAYLOADS]])
    for cmd, n in SIZES_3_0_0.items():
        payloads += bytes([cmd]) + struct.pack(">H", sizes[cmd])
    head = bytearray(payloads)
    for ev in split_events(start[old[EVENT_PAYLOADS] + 1:], old):
        if ev[0] == GAME_START:
            ev = bytearray(_padded(ev, sizes[GAME_START]))
            ev[1:4] = bytes([3, 0, 0])
        head += ev
    frames: list[bytes] = []
    batch, current = bytearray(), None
    for ev in split_events(events, old):
        if ev[0] not in (PRE_FRAME, POST_FRAME):
            raise ValueError(f"{path}: event 0x{ev[0]:02x} in replay format {game.version} is not streamed here")
        (number,) = struct.unpack_from(">i", ev, 1)
        if number != current:
            if current is not None:
                frames.append(bytes(batch) + bytes([FRAME_BOOKEND]) + struct.pack(">i", current))
            current = number
            batch = bytearray([FRAME_START]) + struct.pack(">iI", number, 0)
        batch += _padded(ev, sizes[ev[0]])
    if current is not None:
        frames.append(bytes(batch) + bytes([FRAME_BOOKEND]) + struct.pack(">i", current))
    end = _padded(game.end, sizes[GAME_END]) if game.end else b""
    out = Game(version=(3, 0, 0), sizes=sizes, start=bytes(head), frames=frames, end=end)
    for ev in split_events(frames[0], sizes) if frames else ():
        if ev[0] == POST_FRAME:
            out.ports += (ev[5],)
    out.ports = tuple(sorted(set(out.ports)))
    return out


def split_events(batch: bytes, sizes: dict[int, int]):
    """The events of ``batch``, one by one (each its command byte and payload)."""
    at = 0
    while at < len(batch):
        n = sizes[batch[at]] + 1
        yield batch[at: at + n]
        at += n


@dataclass(frozen=True)
class Seat:
    """Who plays at one port, as the menus left it."""

    port: int  # 1-4
    character: str
    cpu_level: int  # 0: a human (or bot) controller


def patched(game: Game, seats: list[Seat], stage: str) -> Game:
    """``game`` replayed with the recorded players moved onto ``seats`` (in port order)."""
    if len(seats) != len(game.ports):
        raise ValueError(f"the replay has {len(game.ports)} players, the menus set up {len(seats)}")
    to_index = {old: seat.port - 1 for old, seat in zip(game.ports, seats)}
    seat_at = {seat.port - 1: seat for seat in seats}
    start = bytearray()
    for ev in split_events(game.start, game.sizes):
        ev = bytearray(ev)
        if ev[0] == GAME_START:
            blocks = [bytes(ev[0x65 + 0x24 * i: 0x65 + 0x24 * (i + 1)]) for i in range(4)]
            for i in range(4):
                at = 0x65 + 0x24 * i
                if i in seat_at:
                    seat = seat_at[i]
                    old = next(o for o, n in to_index.items() if n == i)
                    ev[at: at + 0x24] = blocks[old]
                    ev[at] = EXTERNAL_CHARACTER[seat.character]
                    ev[at + 1] = 1 if seat.cpu_level else 0  # player type: 0 human, 1 CPU
                    ev[at + 0xF] = seat.cpu_level or 0  # CPU level (offset 0x74)
                else:
                    ev[at + 1] = 3  # empty
            struct.pack_into(">H", ev, 0x13, EXTERNAL_STAGE[stage])
        start += ev
    frames = []
    for batch in game.frames:
        out = bytearray()
        for ev in split_events(batch, game.sizes):
            ev = bytearray(ev)
            if ev[0] in (PRE_FRAME, POST_FRAME):
                ev[5] = to_index.get(ev[5], ev[5])
                if ev[0] == POST_FRAME:
                    ev[7] = INTERNAL_CHARACTER[seat_at[ev[5]].character]
            elif ev[0] == ITEM_UPDATE and len(ev) > 0x2A and ev[0x2A] in to_index:
                ev[0x2A] = to_index[ev[0x2A]]
            out += ev
        frames.append(bytes(out))
    return Game(game.version, game.sizes, bytes(start), frames, game.end, tuple(s.port - 1 for s in seats))


def frame_stocks(batch: bytes, sizes: dict[int, int]) -> dict[int, int]:
    """Each player's stocks after this frame (post-frame update, byte 0x21), by player index."""
    out = {}
    for ev in split_events(batch, sizes):
        if ev[0] == POST_FRAME and ev[6] == 0:  # not a follower (Nana)
            out[ev[5]] = ev[0x21]
    return out


def sudden_death_frame(batch: bytes, sizes: dict[int, int]) -> bytes:
    """``batch`` as a sudden death frame: every player on one stock at 300% more damage (Melee's rule)."""
    out = bytearray()
    for ev in split_events(batch, sizes):
        ev = bytearray(ev)
        if ev[0] == POST_FRAME:
            percent = struct.unpack_from(">f", ev, 0x16)[0]
            struct.pack_into(">f", ev, 0x16, 300.0 + percent)
            ev[0x21] = 1
        out += ev
    return bytes(out)
