"""Slippi's spectator server as Ishiiruka runs it (``Core/Slippi/SlippiSpectate.cpp``), minus ENet.

What the emulated game writes to the Slippi device reaches the server as a queue of events:
``start_game`` and ``end_game`` (meta events), and raw writes. :meth:`SpectateServer.pop_events`
handles them as ``popEvents`` does:

- outside a game, every write is a menu event, and only the **latest** one is kept (a spectator
  that is behind gets the newest, never a backlog); ``end_game`` resets the menu cursor;
- in a game, writes are concatenated and sent as one ``game_event`` when a game start (0x36), a
  frame bookend (0x3C), a game end (0x39) or a message splitter (0x10) arrives, so a menu frame
  written during a game (sudden death's) rides inside the next frame's batch;
- ``start_game``/``end_game`` are sent to spectators too, as JSON messages of those types.

:meth:`SpectateServer.messages_for` is ``writeEvents`` for one spectator.
"""

from __future__ import annotations

import base64
import json

SEND_ON = {0x36, 0x3C, 0x39, 0x10}


class Spectator:
    def __init__(self) -> None:
        self.cursor = 0
        self.menu_cursor = 0


class SpectateServer:
    def __init__(self) -> None:
        self.queue: list[tuple[str, bytes]] = []
        self.buffer: list[str] = []
        self.cursor_offset = 0
        self.in_game = False
        self.menu_event = ""
        self.menu_cursor = 0
        self.concat = b""

    def start_game(self) -> None:
        self.queue.append(("start_game", b""))

    def end_game(self) -> None:
        self.queue.append(("end_game", b""))

    def write(self, payload: bytes) -> None:
        self.queue.append(("write", payload))

    def pop_events(self) -> None:
        for kind, event in self.queue:
            if kind == "end_game":
                cursor = len(self.buffer) + self.cursor_offset
                self.menu_cursor = 0
                self.buffer.append(json.dumps({"type": "end_game", "dolphin_closed": False, "cursor": cursor,
                                               "next_cursor": cursor + 1}))
                self.cursor_offset += len(self.buffer)
                self.menu_event = ""
                self.in_game = False
            elif kind == "start_game":
                self.buffer.clear()
                cursor = len(self.buffer) + self.cursor_offset
                self.in_game = True
                self.buffer.append(json.dumps({"type": "start_game", "cursor": cursor, "next_cursor": cursor + 1}))
            elif not self.in_game:
                self.menu_cursor += 1
                self.menu_event = json.dumps({"payload": base64.b64encode(event).decode(), "type": "menu_event"})
            else:
                self.concat += event
                if event[0] in SEND_ON:
                    cursor = len(self.buffer) + self.cursor_offset
                    self.buffer.append(json.dumps({"cursor": cursor, "next_cursor": cursor + 1,
                                                   "payload": base64.b64encode(self.concat).decode(),
                                                   "type": "game_event"}))
                    self.concat = b""
        self.queue.clear()

    def connect(self, spectator: Spectator, requested: int = 0) -> dict:
        """``handleMessage`` for a ``connect_request``: place the spectator's cursor, build the reply."""
        if requested >= self.cursor_offset and requested <= len(self.buffer) + self.cursor_offset:
            spectator.cursor = requested - self.cursor_offset
        else:
            spectator.cursor = 0
        sent = spectator.cursor + self.cursor_offset
        if not self.in_game:  # joining at the menus: no catching up on the last game
            spectator.cursor = len(self.buffer)
        return {"type": "connect_reply", "nick": "Slippi Online", "version": "3.4.0", "cursor": sent}

    def messages_for(self, spectator: Spectator) -> list[str]:
        out = []
        if not self.in_game and spectator.menu_cursor != self.menu_cursor:
            out.append(self.menu_event)  # empty right after a game's end: libmelee's worker skips it
            spectator.menu_cursor = self.menu_cursor
        if spectator.cursor > len(self.buffer):  # left from an older game
            spectator.cursor = 0
        out += self.buffer[spectator.cursor:]
        spectator.cursor = len(self.buffer)
        return out
