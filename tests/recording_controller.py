"""A real ``melee.Controller`` whose Dolphin pipe is a recorder: libmelee's own code runs, and each
flushed frame's commands are kept for the test to read."""

from __future__ import annotations

import melee


class RecordingPipe:
    def __init__(self) -> None:
        self.pending: list[str] = []
        self.frames: list[list[str]] = []

    def write(self, command: str) -> None:
        for line in command.splitlines():
            if line == "FLUSH":
                self.frames.append(self.pending)
                self.pending = []
            elif line:
                self.pending.append(line)

    def flush(self) -> None:
        pass

    def close(self) -> None:  # Controller.__del__ disconnects
        pass


def recording_controller(port: int = 1) -> melee.Controller:
    """A ``melee.Controller`` built without Dolphin (its constructor needs a running console)."""
    c = object.__new__(melee.Controller)
    c.pipe = RecordingPipe()
    c.port = port
    c.prev = melee.controller.ControllerState()
    c.current = melee.controller.ControllerState()
    c.logger = None
    c._type = melee.enums.ControllerType.STANDARD
    c._fix_analog_inputs = True
    return c


def held(commands: list[str]) -> dict:
    """What a frame's commands leave held: {'buttons': set, 'main': (x, y), 'l': amount}."""
    buttons: set[str] = set()
    state = {"main": None, "l": None}
    for cmd in commands:
        parts = cmd.split()
        if parts[0] == "PRESS":
            buttons.add(parts[1])
        elif parts[0] == "RELEASE":
            buttons.discard(parts[1])
        elif parts[0] == "SET" and parts[1] == "MAIN":
            state["main"] = (float(parts[2]), float(parts[3]))
        elif parts[0] == "SET" and parts[1] == "L":
            state["l"] = float(parts[2])
    return {"buttons": buttons, **state}
