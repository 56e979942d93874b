"""When Fox and Marth cannot be hit, read off real replays and set beside the arena's tables.

Slippi records each fighter's hurtbox collision state in every post-frame update from replay format
2.1.0 (byte ``0x34``: 0 vulnerable, 1 invulnerable, 2 intangible; project-slippi's replay spec). This
reads that byte for every Fox and Marth action, one *instance* per uninterrupted run of the action
(the action changes or its frame counter goes back), and keeps the frames on which the fighter was
intangible; the instances then vote frame by frame for the action's window (:func:`compare`).

The arena keeps one window per move (``intang_lo``, ``intang_hi`` in
:class:`~melee_agent.arena.fight.moves.FightTable`; 0 = never): :func:`compare` sets each (character,
action) the replays show beside it. Frames in state 1 (invulnerable: respawning, mostly) are not
counted as intangible; the arena keeps respawn invulnerability apart (``invulnerability_left``).

Example::

    >>> from melee_agent.report import intangibility
    >>> found, errors = intangibility.run(["../shared/replays/libmelee_test_game_1.slp"])  # doctest: +SKIP
    >>> intangibility.compare(found)[0]  # doctest: +SKIP
    Row(character='FOX', action='DOWN_B_GROUND_START', instances=..., measured=(1, 1), arena=(1, 1), ...)
"""

from __future__ import annotations

import collections
import os
from collections.abc import Iterable
from typing import Any, NamedTuple

from melee_agent.io.slp import ReplayError, post_frame_byte_console, read_each, read_kept

HURTBOX_BYTE = 0x34  # post-frame update: hurtbox collision state (Slippi replay spec, 2.1.0)
HURTBOX_SINCE = (2, 1, 0)
INTANGIBLE_STATE = 2
CHARACTERS = ("FOX", "MARTH")


class Instance(NamedTuple):
    """One uninterrupted run of an action by one fighter."""

    replay: str
    character: str
    action: int
    last_frame: int  # the highest action frame seen
    intangible: tuple[int, ...]  # action frames in hurtbox state 2


class Row(NamedTuple):
    """One (character, action): what the replays show and what the arena does."""

    character: str
    action: str
    instances: int
    seen_to: int  # the highest action frame any instance reached
    measured: tuple[int, int] | None  # first and last frame on which most instances that got there were intangible
    agree: float  # share of (instance, frame) observations that agree with ``measured``
    arena: tuple[int, int] | None  # the fight arena's window (None: never intangible)
    arena_length: int | None  # the arena's frames until actionable; None: the arena has no such move
    match: bool | None  # the arena's intangible frames up to ``seen_to`` are the measured ones (None: no such move)


def instances(path: str | os.PathLike) -> list[Instance]:
    """Every Fox and Marth action instance of a replay, or a ReplayError naming the file (also for a replay
    older than 2.1.0, which records no hurtbox state)."""
    def frame(gs: Any, console: Any) -> list[tuple[int, str, int, int, int]]:
        out = []
        for port, p in gs.players.items():
            name = p.character.name
            if name in CHARACTERS:
                state = console.post_byte.get((int(gs.frame), int(port)), -1)
                out.append((int(port), name, int(p.action.value), int(p.action_frame), state))
        return out

    frames, console = read_kept(path, console_cls=post_frame_byte_console(HURTBOX_BYTE), convert=frame)
    version = tuple(int(v) for v in (console.slp_version_tuple or (0, 0, 0)))
    if version < HURTBOX_SINCE:
        raise ReplayError(f"{path}: replay format {'.'.join(map(str, version))} records no hurtbox state "
                          f"(from {'.'.join(map(str, HURTBOX_SINCE))})")
    found: list[Instance] = []
    open_: dict[int, tuple[str, int, int, list[int]]] = {}  # port -> (character, action, last frame, intangible)

    def close(port: int) -> None:
        ch, act, last, intang = open_.pop(port)
        found.append(Instance(str(path), ch, act, last, tuple(intang)))

    for players in frames:
        seen = set()
        for port, ch, act, af, state in players:
            seen.add(port)
            cur = open_.get(port)
            if cur is not None and (cur[1] != act or af < cur[2]):  # another action, or the same one again
                close(port)
                cur = None
            if cur is None:
                open_[port] = cur = (ch, act, af, [])
            if state == INTANGIBLE_STATE:
                cur[3].append(af)
            open_[port] = (ch, act, max(cur[2], af), cur[3])
        for port in [p for p in open_ if p not in seen]:
            close(port)
    for port in list(open_):
        close(port)
    return found


def run(paths: Iterable[str | os.PathLike]) -> tuple[list[Instance], list[str]]:
    """Every instance of every readable replay, and one error line per replay passed over (:func:`.read_each`)."""
    per_file, errors = read_each(paths, instances)
    return [i for found in per_file for i in found], errors


def arena_windows() -> dict[tuple[str, int], tuple[tuple[int, int] | None, int]]:
    """The fight arena's (window or None, frames until actionable) for each (character, libmelee action) it plays."""
    from melee_agent.arena.fight.moves import NUM_SLOTS, fight_table_cpu  # noqa: PLC0415

    T = fight_table_cpu()
    out: dict[tuple[str, int], tuple[tuple[int, int] | None, int]] = {}
    for base, ch in ((0, "FOX"), (NUM_SLOTS, "MARTH")):
        for r in range(base, base + NUM_SLOTS):
            lo, hi, act = int(T.intang_lo[r]), int(T.intang_hi[r]), int(T.action[r])
            if act <= 0:
                continue
            window = (lo, hi) if lo > 0 else None
            out.setdefault((ch, act), (window, int(T.length[r])))  # the first row of an action is its start
    return out


def compare(found: list[Instance]) -> list[Row]:
    """One row per (character, action) seen in the replays, sorted.

    Per action frame f, the instances that reached f vote: intangible on f or not. The measured window runs from
    the first to the last frame most of them call intangible (an instance cut short, a wavedash's air dodge for
    one, votes only on the frames it played). The arena matches when its window, cut at the last frame any
    instance reached, holds exactly the frames the vote calls intangible.
    """
    from melee.enums import Action  # noqa: PLC0415

    by_key: dict[tuple[str, int], list[Instance]] = collections.defaultdict(list)
    for i in found:
        by_key[(i.character, i.action)].append(i)
    arena = arena_windows()
    rows = []
    for (ch, act), group in sorted(by_key.items()):
        seen_to = max(i.last_frame for i in group)
        votes = {f: [f in i.intangible for i in group if i.last_frame >= f] for f in range(1, seen_to + 1)}
        yes = [f for f, v in votes.items() if v and 2 * sum(v) > len(v)]
        measured = (min(yes), max(yes)) if yes else None
        inside = lambda f, w: w is not None and w[0] <= f <= w[1]  # noqa: E731
        agree = sum(x == inside(f, measured) for f, v in votes.items() for x in v) / max(1, sum(map(len, votes.values())))
        a = arena.get((ch, act))
        match = None
        if a is not None:
            match = [f for f in range(1, seen_to + 1) if inside(f, a[0])] == [f for f in range(1, seen_to + 1)
                                                                              if inside(f, measured)]
        name = Action(act).name if act in Action._value2member_map_ else str(act)
        rows.append(Row(ch, name, len(group), seen_to, measured, agree, a[0] if a else None, a[1] if a else None,
                        match))
    return rows


def format_table(rows: list[Row], only_intangible: bool = True) -> str:
    """A text table; by default only the actions intangible in the replays or in the arena."""
    from melee_agent.report.text_table import text_table  # noqa: PLC0415

    shown = [r for r in rows if not only_intangible or r.measured is not None or r.arena is not None]
    fmt = lambda w: "never" if w is None else f"{w[0]}-{w[1]}"  # noqa: E731
    head = ["character", "action", "instances", "seen to frame", "replays: intangible", "agree", "arena",
            "arena frames", "same"]
    return text_table([head] + [[r.character, r.action, str(r.instances), str(r.seen_to), fmt(r.measured),
                                 f"{100 * r.agree:.0f}%", "-" if r.arena_length is None else fmt(r.arena),
                                 "-" if r.arena_length is None else str(r.arena_length),
                                 {True: "yes", False: "NO", None: "-"}[r.match]] for r in shown])


def report(rows: list[Row], errors: list[str]) -> dict[str, Any]:
    """Everything for ``--json``."""
    return {"rows": [r._asdict() for r in rows], "skipped": errors,
            "mismatches": [f"{r.character} {r.action}" for r in rows if r.match is False]}
