"""Action sets: each action is a short sequence of per-frame controller states.

The agent picks an action at the end of the previous action's sequence. Dolphin plays the frames
through a ``melee.Controller`` (:func:`apply_frame`); the arena reads the very same frames as a
tensor table (:meth:`ActionSet.table`). Stick values are libmelee's: ``[0, 1]``, 0.5 neutral.

Example::

    >>> s = ACTION_SETS["untouchable"]
    >>> [a.name for a in s.actions]
    ['noop', 'spot_dodge', 'roll_left', 'roll_right', 'shine']
    >>> len(s.actions[1].frames)
    22
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

#: Digital buttons an action may hold, in table-column order.
BUTTONS: tuple[str, ...] = ("A", "B", "X", "Y", "Z", "L", "R")
#: Columns of :meth:`ActionSet.table`: one per button, then main stick x, y, then L shoulder.
TABLE_COLUMNS: tuple[str, ...] = BUTTONS + ("stick_x", "stick_y", "l_shoulder")
COL = {name: i for i, name in enumerate(TABLE_COLUMNS)}

NEUTRAL_STICK = (0.5, 0.5)
STICKS = {
    "neutral": (0.5, 0.5),
    "left": (0.0, 0.5),
    "right": (1.0, 0.5),
    "up": (0.5, 1.0),
    "down": (0.5, 0.0),
}


@dataclass(frozen=True)
class ControllerFrame:
    """What the controller holds during one frame."""

    buttons: frozenset[str] = frozenset()
    main_stick: tuple[float, float] = NEUTRAL_STICK
    l_shoulder: float = 0.0

    def __post_init__(self) -> None:
        unknown = set(self.buttons) - set(BUTTONS)
        if unknown:
            raise ValueError(f"unknown buttons {sorted(unknown)}; known: {BUTTONS}")

    def row(self) -> list[float]:
        return [float(b in self.buttons) for b in BUTTONS] + [*self.main_stick, self.l_shoulder]


NEUTRAL = ControllerFrame()


def hold(frame: ControllerFrame, n: int) -> tuple[ControllerFrame, ...]:
    return (frame,) * n


@dataclass(frozen=True)
class Action:
    name: str
    frames: tuple[ControllerFrame, ...]


@dataclass(frozen=True)
class ActionSet:
    name: str
    actions: tuple[Action, ...]

    @property
    def num_actions(self) -> int:
        return len(self.actions)

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.actions]

    @cached_property
    def lengths(self) -> np.ndarray:
        """Frames in each action's sequence, ``[A]`` int64."""
        return np.array([len(a.frames) for a in self.actions], dtype=np.int64)

    @cached_property
    def table(self) -> np.ndarray:
        """All frames as ``[A, T_max, len(TABLE_COLUMNS)]`` float32, padded with neutral frames."""
        t_max = int(self.lengths.max())
        out = np.tile(np.array(NEUTRAL.row(), np.float32), (self.num_actions, t_max, 1))
        for i, a in enumerate(self.actions):
            out[i, : len(a.frames)] = [f.row() for f in a.frames]
        return out

    @cached_property
    def noop_index(self) -> int:
        """The action that only holds the controller neutral (``noop``; ``none_neutral`` in ``basic``).

        What the ``untouchable`` reward pays for standing through, and what the noop policy plays.
        """
        for i, a in enumerate(self.actions):
            if all(f == NEUTRAL for f in a.frames):
                return i
        raise ValueError(f"action set {self.name!r} has no all-neutral action")

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"action {name!r} is not in action set {self.name!r} ({self.names})") from None


def _untouchable() -> ActionSet:
    shield = lambda stick: ControllerFrame(frozenset({"L"}), STICKS[stick], 1.0)  # noqa: E731
    return ActionSet(
        "untouchable",
        (
            Action("noop", (NEUTRAL,)),
            Action("spot_dodge", hold(shield("down"), 10) + hold(NEUTRAL, 12)),
            Action("roll_left", hold(shield("left"), 10) + hold(NEUTRAL, 22)),
            Action("roll_right", hold(shield("right"), 10) + hold(NEUTRAL, 22)),
            Action(
                "shine",
                (ControllerFrame(frozenset({"B"}), STICKS["down"]),)
                + hold(NEUTRAL, 2)
                + (ControllerFrame(frozenset({"Y"})),)
                + hold(NEUTRAL, 2),
            ),
        ),
    )


def _basic() -> ActionSet:
    actions = []
    for button in ("none", "A", "B", "Y", "Z", "L"):
        for stick in ("neutral", "left", "right", "up", "down"):
            held = frozenset() if button == "none" else frozenset({button})
            frame = ControllerFrame(held, STICKS[stick], 1.0 if button == "L" else 0.0)
            actions.append(Action(f"{button.lower()}_{stick}", hold(frame, 3)))
    return ActionSet("basic", tuple(actions))


ACTION_SETS: dict[str, ActionSet] = {s.name: s for s in (_untouchable(), _basic())}


def get_action_set(name: str) -> ActionSet:
    try:
        return ACTION_SETS[name]
    except KeyError:
        raise KeyError(f"unknown action set {name!r}; known: {sorted(ACTION_SETS)}") from None


def apply_frame(controller: Any, frame: ControllerFrame) -> None:
    """Set a ``melee.Controller`` (or anything with its methods) to hold ``frame``.

    Every managed button is pressed or released explicitly, so no state leaks from the
    previous frame. The caller flushes (libmelee sends on ``controller.flush()``).
    """
    import melee  # noqa: PLC0415  (imported late: the arena never needs libmelee)

    for name in BUTTONS:
        button = melee.enums.Button[f"BUTTON_{name}"]
        if name in frame.buttons:
            controller.press_button(button)
        else:
            controller.release_button(button)
    controller.tilt_analog(melee.enums.Button.BUTTON_MAIN, *frame.main_stick)
    controller.tilt_analog(melee.enums.Button.BUTTON_C, *NEUTRAL_STICK)
    controller.press_shoulder(melee.enums.Button.BUTTON_L, frame.l_shoulder)
