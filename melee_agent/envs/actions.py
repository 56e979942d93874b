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
class Remap:
    """After the decision ``after``, decision ``i`` plays ``macros[i]`` instead of its usual macro (None: the usual).

    The Untouchable paper's post-shine scripts: what a choice means depends on whether the last one was a
    shine, which the state shows (its last float is the previous action).
    """

    after: int
    macros: tuple[Action | None, ...]


@dataclass(frozen=True)
class ActionSet:
    name: str
    actions: tuple[Action, ...]
    #: Where a decision's macro depends on the previous decision (:meth:`macro_index`); None: it never does.
    remap: Remap | None = None

    def __post_init__(self) -> None:
        r = self.remap
        if r is not None and (len(r.macros) != len(self.actions) or not 0 <= r.after < len(self.actions)):
            raise ValueError(f"action set {self.name!r}: a remap needs one entry per action and a decision "
                             f"in [0, {len(self.actions)}) after which it applies")

    @property
    def num_actions(self) -> int:
        return len(self.actions)

    @cached_property
    def macros(self) -> tuple[Action, ...]:
        """Every macro the set can play: the actions' own, then the remapped ones (in the remap's order)."""
        extra = () if self.remap is None else tuple(m for m in self.remap.macros if m is not None)
        return self.actions + extra

    @cached_property
    def remap_table(self) -> np.ndarray:
        """``[A, A]`` int64: the macro (an index into :attr:`macros`) decision ``a`` plays after decision ``p``."""
        out = np.tile(np.arange(self.num_actions, dtype=np.int64)[:, None], (1, self.num_actions))
        if self.remap is not None:
            k = self.num_actions
            for i, m in enumerate(self.remap.macros):
                if m is not None:
                    out[i, self.remap.after] = k
                    k += 1
        return out

    def macro_index(self, action: int, previous: int) -> int:
        """The macro (an index into :attr:`macros`) that decision ``action`` plays after decision ``previous``.

        A pure function of the two decisions; ``previous`` is what the state's last float shows (0 at an
        episode's start).
        """
        for name, v in (("action", action), ("previous action", previous)):
            if not 0 <= v < self.num_actions:
                raise ValueError(f"{name} {v} is outside [0, {self.num_actions}) of action set {self.name!r}")
        return int(self.remap_table[action, previous])

    def macro(self, action: int, previous: int) -> Action:
        """The macro decision ``action`` plays after decision ``previous`` (:meth:`macro_index`)."""
        return self.macros[self.macro_index(action, previous)]

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.actions]

    @cached_property
    def lengths(self) -> np.ndarray:
        """Frames in each macro's sequence, ``[M]`` int64 (:attr:`macros`: the actions' first)."""
        return np.array([len(a.frames) for a in self.macros], dtype=np.int64)

    @cached_property
    def table(self) -> np.ndarray:
        """All macros' frames as ``[M, T_max, len(TABLE_COLUMNS)]`` float32, padded with neutral frames
        (:attr:`macros`: row ``a < A`` is action ``a``'s own macro)."""
        t_max = int(self.lengths.max())
        out = np.tile(np.array(NEUTRAL.row(), np.float32), (len(self.macros), t_max, 1))
        for i, a in enumerate(self.macros):
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


#: The Untouchable paper's wavedash stick height (libmelee's [0, 1]): its code (bparr/melee-ai, smash_env.py,
#: ``_CONTROLLER``) tilts the stick to 89/255 rather than 0.5 "so can wavedash far" (0.5 exactly does not wavedash).
#: Held as its nearest float32, so that the arena's table and Dolphin's controller get the very same number.
PAPER_WAVEDASH_Y = float(np.float32(89.0 / 255.0))


def _untouchable_paper() -> ActionSet:
    """``untouchable`` with the Untouchable paper's post-shine scripts (Dilipkumar, Liu and Parr 2017; its code,
    bparr/melee-ai ``smash_env.py``: ``_POST_SHINE_SCRIPTS``, each entry one ``_CONTROLLER`` state a frame).

    After a shine the same five indices play: noop, a multishine (``(1, 1, 0, 0, 0, 2, 2, 0)``: B with the stick
    down for 2 frames, 3 neutral, jump with the stick down for 2, 1 neutral) in place of the shine, and a wavedash
    down, left or right (``(k,) * 5 + (0,) * 8``: the shield button with the stick down, or fully left / right at
    :data:`PAPER_WAVEDASH_Y`, for 5 frames, then 8 neutral) in place of the spot dodge and the two rolls. The paper
    presses the digital L alone; here L is pressed as in every shield of this module (the button and the full
    trigger: a digital press is a full press in Melee). The other macros are ``untouchable``'s, its shine included
    (the paper's own first shine, ``(1, 1, 0, 2, 2, 0)``, holds B and the jump 2 frames each with the stick down),
    so that the two sets differ only in the remap.
    """
    base = _untouchable()
    shield = lambda stick: ControllerFrame(frozenset({"L"}), stick, 1.0)  # noqa: E731
    wavedash = lambda stick: hold(shield(stick), 5) + hold(NEUTRAL, 8)  # noqa: E731
    down_b = ControllerFrame(frozenset({"B"}), STICKS["down"])
    jump_down = ControllerFrame(frozenset({"Y"}), STICKS["down"])
    after_shine = {
        "shine": Action("multishine", hold(down_b, 2) + hold(NEUTRAL, 3) + hold(jump_down, 2) + (NEUTRAL,)),
        "spot_dodge": Action("wavedash_down", wavedash(STICKS["down"])),
        "roll_left": Action("wavedash_left", wavedash((0.0, PAPER_WAVEDASH_Y))),
        "roll_right": Action("wavedash_right", wavedash((1.0, PAPER_WAVEDASH_Y))),
    }
    remap = Remap(base.index("shine"), tuple(after_shine.get(name) for name in base.names))
    return ActionSet("untouchable-paper", base.actions, remap)


def _basic() -> ActionSet:
    actions = []
    for button in ("none", "A", "B", "Y", "Z", "L"):
        for stick in ("neutral", "left", "right", "up", "down"):
            held = frozenset() if button == "none" else frozenset({button})
            frame = ControllerFrame(held, STICKS[stick], 1.0 if button == "L" else 0.0)
            actions.append(Action(f"{button.lower()}_{stick}", hold(frame, 3)))
    return ActionSet("basic", tuple(actions))


def _press(*buttons: str, stick: tuple[float, float] = NEUTRAL_STICK, shoulder: float = 0.0) -> ControllerFrame:
    return ControllerFrame(frozenset(buttons), stick, shoulder)


#: Stick positions the ``fight`` set uses beyond :data:`STICKS` (libmelee's [0, 1], 0.5 neutral). The arena
#: reads the stick doubled around 0.5 (``[-1, 1]``): walk above 0.2, dash and smash at 0.8 or more, tilt
#: above 0.3, fast fall below -0.6 (melee_agent/arena/fight/fighter.py): 0.8125 / 0.1875 here (0.625 there)
#: walks, 0.75 / 0.25 (0.5 there) tilts and aims aerials without a fast fall. Every value is exact in
#: float32 (the arena's table holds the very same numbers).
FIGHT_STICKS = {
    "walk_left": (0.1875, 0.5), "walk_right": (0.8125, 0.5),
    "tilt_left": (0.25, 0.5), "tilt_right": (0.75, 0.5), "tilt_up": (0.5, 0.75), "tilt_down": (0.5, 0.25),
    "up_left": (0.1484375, 0.8515625), "up_right": (0.8515625, 0.8515625),  # 45 degrees, at the rim
}
#: The frame (counted from 0 at the jump's press) on which a short hop from standing lands in the arena
#: (3 frames of jump squat, 19 in the air: it lands by its collision box, whose bottom is 4 above Fox's position in
#: the air, 2 frames after the position reaches the floor; measured there, checked by
#: tests/arena/test_fight_actions.py): the L-cancel press comes ``LCANCEL_LEAD`` frames before, inside the game's
#: 7-frame window.
SH_AERIAL_LANDS = 22
LCANCEL_LEAD = 3
FIREFOX_CHARGE = 42  # frames of Fox's firefox charge in the arena (the move table's length for action 354)


def _stick(name: str) -> tuple[float, float]:
    return FIGHT_STICKS.get(name) or STICKS[name]


def _fight() -> ActionSet:
    """The ``fight`` set (docs/design.md "Fights"): 46 macros for whole games, Fox's moves as the arena reads them.

    Every macro starts from a released controller (its first press is a fresh one) and ends with a
    neutral frame, so the next macro's A, B, Z or jump is a new press and its stick a fresh flick (a
    smash), except ``shield``, which ends holding the shield (the next macro keeps it up or drops it).
    Directions are the stick's (left / right on the screen), not the fighter's facing: ``ftilt_left``
    and ``fsmash_left`` turn Fox left first (the arena turns a fighter to a forward tilt's or smash's
    stick), ``throw_left`` is a forward throw facing left and a back throw facing right, and the
    short-hop side aerials first tap the stick to face a way (one walking frame) so that ``sh_fair_right``
    is always a forward air to the right and ``sh_bair_right`` a back air to the right (Fox faces left).
    """
    n = NEUTRAL
    jump = _press("Y")
    acts: list[Action] = [Action("noop", (n,))]

    def add(name: str, *frames: ControllerFrame | tuple[ControllerFrame, ...]) -> None:
        flat: list[ControllerFrame] = []
        for f in frames:
            flat.extend(f if isinstance(f, tuple) else (f,))
        acts.append(Action(name, tuple(flat)))

    # --- movement ---
    for side in ("left", "right"):
        add(f"walk_{side}", hold(_press(stick=_stick(f"walk_{side}")), 8), n)
    for side in ("left", "right"):
        add(f"dash_{side}", hold(_press(stick=STICKS[side]), 8), n)
    add("full_hop", hold(jump, 5), n)  # the jump still held as the 3-frame jump squat ends: a full hop
    add("short_hop", hold(jump, 2), hold(n, 3))  # released before it ends: a short hop
    add("double_jump", jump, n)
    for side in ("left", "right"):
        add(f"double_jump_{side}", _press("Y", stick=STICKS[side]), _press(stick=STICKS[side]), n)
    add("fast_fall", hold(_press(stick=STICKS["down"]), 2), n)  # in the air, once past the jump's peak
    add("ledge_drop", _press(stick=STICKS["down"]), n)  # on the ledge: let go (Final Destination has no platforms)
    # --- ground attacks ---
    add("jab", _press("A"), hold(n, 2))
    for side in ("left", "right"):
        add(f"ftilt_{side}", _press("A", stick=_stick(f"tilt_{side}")), hold(n, 2))
    add("utilt", _press("A", stick=_stick("tilt_up")), hold(n, 2))
    add("dtilt", _press("A", stick=_stick("tilt_down")), hold(n, 2))
    # A smash: the stick reaches the rim on the frame A is pressed (it was neutral the frame before).
    for side in ("left", "right"):
        add(f"fsmash_{side}", _press("A", stick=STICKS[side]), hold(n, 2))
    add("usmash", _press("A", stick=STICKS["up"]), hold(n, 2))
    add("dsmash", _press("A", stick=STICKS["down"]), hold(n, 2))
    for side in ("left", "right"):
        add(f"dash_attack_{side}", _press(stick=STICKS[side]), _press("A", stick=STICKS[side]), hold(n, 2))
    # --- short-hop aerials with the L-cancel ---
    lcancel = _press("L", shoulder=1.0)
    press_at = SH_AERIAL_LANDS - LCANCEL_LEAD  # frame (from 0) of the L press

    def aerial(name: str, stick: tuple[float, float], face: tuple[float, float] | None = None) -> None:
        head = () if face is None else (_press(stick=face),)
        # The aerial on the first airborne frame (the jump squat's last frame, index 3).
        body = hold(jump, 2) + (n, _press("A", stick=stick))
        body += hold(n, press_at - len(body)) + (lcancel,) + hold(n, LCANCEL_LEAD + 1)
        add(name, head, body)

    aerial("sh_nair", NEUTRAL_STICK)
    for side, away in (("left", "right"), ("right", "left")):
        aerial(f"sh_fair_{side}", _stick(f"tilt_{side}"), face=_stick(f"walk_{side}"))
        aerial(f"sh_bair_{side}", _stick(f"tilt_{side}"), face=_stick(f"walk_{away}"))
    aerial("sh_uair", _stick("tilt_up"))
    aerial("sh_dair", _stick("tilt_down"))
    # --- specials ---
    add("shine", _press("B", stick=STICKS["down"]), hold(n, 3))
    add("shine_jc", _press("B", stick=STICKS["down"]), hold(n, 2), jump, hold(n, 2))  # jump on the shine's 4th frame
    for name, stick in (("up_b_up", STICKS["up"]), ("up_b_left", _stick("up_left")), ("up_b_right", _stick("up_right"))):
        # B with the stick up starts the charge; the stick held at the angle as the charge ends aims the flight.
        add(name, _press("B", stick=STICKS["up"]), hold(_press(stick=stick), FIREFOX_CHARGE), n)
    for side in ("left", "right"):
        add(f"side_b_{side}", _press("B", stick=STICKS[side]), hold(n, 2))
    # --- grabs, throws, defence ---
    add("grab", _press("Z"), hold(n, 2))
    for name, stick in (("throw_up", "up"), ("throw_down", "down"), ("throw_left", "left"), ("throw_right", "right")):
        add(name, _press(stick=STICKS[stick]), n)
    shield = lambda stick: _press("L", stick=STICKS[stick], shoulder=1.0)  # noqa: E731
    add("shield", hold(shield("neutral"), 8))
    add("spot_dodge", hold(shield("down"), 2), hold(n, 20))
    add("roll_left", hold(shield("left"), 2), hold(n, 30))
    add("roll_right", hold(shield("right"), 2), hold(n, 30))
    return ActionSet("fight", tuple(acts))


ACTION_SETS: dict[str, ActionSet] = {s.name: s for s in (_untouchable(), _untouchable_paper(), _basic(), _fight())}


#: ``"NAME:N"`` names set NAME with each macro padded to at least N frames (:func:`padded`).
PAD_SEP = ":"
#: The longest padding a name may ask for: two seconds of game (a sanity bound, not the game's).
MAX_PAD = 120


def padded(aset: ActionSet, min_frames: int) -> ActionSet:
    """``aset`` with every macro shorter than ``min_frames`` followed by neutral frames up to that length.

    Why: with ``env.delay_frames = d`` the frames of the macros decided in the last ``d`` frames are
    still queued when the agent decides again, and the state shows only the latest decision (its
    previous action). With every macro at least ``d`` frames long, the queue only ever holds the tail
    of that one macro, so the previous action says what Fox will do until the new decision reaches
    the game. The names, their order and every frame before the padding stay as they were.

    Example::

        >>> s = padded(ACTION_SETS["untouchable"], 18)
        >>> s.name, s.names == ACTION_SETS["untouchable"].names, s.lengths.tolist()
        ('untouchable:18', True, [18, 22, 32, 32, 18])
    """
    if isinstance(min_frames, bool) or not isinstance(min_frames, int) or not 1 <= min_frames <= MAX_PAD:
        raise ValueError(f"macro padding must be an int in [1, {MAX_PAD}] frames, got {min_frames!r}")
    pad = lambda a: Action(a.name, a.frames + hold(NEUTRAL, max(0, min_frames - len(a.frames))))  # noqa: E731
    remap = aset.remap
    if remap is not None:  # the remapped macros are padded alike
        remap = Remap(remap.after, tuple(None if m is None else pad(m) for m in remap.macros))
    return ActionSet(f"{aset.name}{PAD_SEP}{min_frames}", tuple(pad(a) for a in aset.actions), remap)


def base_name(name: str) -> str:
    """The set a (possibly padded) action set name plays: ``"fight:18"`` -> ``"fight"``."""
    return name.partition(PAD_SEP)[0]


def get_action_set(name: str) -> ActionSet:
    """The action set ``name``: one of :data:`ACTION_SETS`, or ``"NAME:N"`` for NAME padded to N frames."""
    base, sep, pad = name.partition(PAD_SEP)
    known = f"known: {sorted(ACTION_SETS)}, each also as NAME{PAD_SEP}N (macros padded to N frames)"
    if base not in ACTION_SETS:
        raise KeyError(f"unknown action set {name!r}; {known}")
    if not sep:
        return ACTION_SETS[base]
    if not pad.isdigit():
        raise KeyError(f"action set {name!r}: the padding after {PAD_SEP!r} must be a whole number of frames; {known}")
    try:
        out = padded(ACTION_SETS[base], int(pad))
    except ValueError as e:
        raise KeyError(f"action set {name!r}: {e}") from None
    # One name per set: model files, batches and the manager compare names as written.
    if out.name != name:
        raise KeyError(f"action set {name!r}: write it as {out.name!r}")
    if (out.lengths == ACTION_SETS[base].lengths).all():
        raise KeyError(f"action set {name!r}: every {base!r} macro is already {pad} frames or longer, so the "
                       f"padding changes nothing; use {base!r}")
    return out


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
