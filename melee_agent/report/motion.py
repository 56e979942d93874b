"""`melee-agent fidelity --motion`: does the arena move a fighter as Melee did, frame by frame, from the same inputs?

For every Fox and Marth *free-movement stretch* of a replay (defined below), the arena's fighter is put
in the replay player's state on the stretch's first frame (:meth:`Arena.place`) and then played the
replay's own controller frames (:meth:`Arena.step_pads`), one a frame, for up to 120 frames; after each
frame its position is put beside the replay's. All stretches of a character play side by side, one
environment each.

A **free-movement stretch** is a run of frames (game frame 0 on) where the player is Fox or Marth, in
an action the arena plays as movement (:data:`FREE_ACTIONS`: standing, walking, dashing, running, turning,
crouching, jump squat, jumps, falls, landing, air dodge and its landing), out of hitstun and hitlag with no launch speed, and within
the stage's horizontal edges (the real stage's and Final Destination's). Whether the fighter stands or flies is
the game's own flag (the replay's ``on_ground``, which the game sets by the collision box, the ECB): an airborne
frame counts wherever the fighter's position is, so the frames of a landing, whose position dips below the floor
before the collision box lands, count too. A grounded frame counts on a floor the arena can model: the main
floor (y = 0) or one of the stage's platforms at its height (:mod:`melee_agent.arena.stages`); not on Yoshi's
Story's slopes nor on Fountain of Dreams' side platforms away from their starting heights. A stretch with a
grounded frame on a platform is a *platform stretch*. Frames where the stage's wind may blow (Dream Land's
Whispy: :func:`_windy`) are left out. Runs longer than 120 frames are cut into stretches of 120. Each stretch is
played on its replay's stage where the arena takes one (``Arena(..., stage=...)``), else on Final Destination.

Reported per character, and per stage and character: stretches (platform stretches among them); the share
followed within 1 unit for their whole length; the
median frames in sync (frames until the first frame more than 1 unit off, the whole length when none
is); the share of frames whose action id equals the replay's; and the first misses counted by the
real player's action on the frame of the miss. The other port's fighter is held still in the air far
above the stage (re-placed every frame), so it never touches the one measured. The real opponent's body
push (the game's grounded "player nudge", below) is therefore left out of the stretches: a frame is not
free where both fighters stood on the ground closer than :data:`BODY_PUSH_GAP` on it or on the frame
before (the push of a frame is computed from where the fighters stood as it began).
"""

from __future__ import annotations

import inspect
import os
import statistics
from collections import Counter
from typing import Any, Iterable, NamedTuple

import melee
import numpy as np
import torch
from melee.enums import Action, Character
from melee.gamestate import WhispyBlowDirection

from melee_agent.arena import gamedata
from melee_agent.arena.stages import Stage, stage_of_libmelee
from melee_agent.arena.fight.ground import dash_impulse
from melee_agent.arena.fight.pads import Pads
from melee_agent.arena.fight.frame import EDGE
from melee_agent.io.slp import read_each, read_kept

MAX_STRETCH = 120  # frames, as issue 49 asks
TOLERANCE = 1.0  # game units
A = Action
FREE_ACTIONS = frozenset(a.value for a in (
    A.STANDING, A.WALK_SLOW, A.WALK_MIDDLE, A.WALK_FAST, A.TURNING, A.TURNING_RUN, A.DASHING, A.RUNNING,
    A.RUN_BRAKE, A.CROUCH_START, A.CROUCHING, A.CROUCH_END, A.KNEE_BEND, A.JUMPING_FORWARD, A.JUMPING_BACKWARD,
    A.JUMPING_ARIAL_FORWARD, A.JUMPING_ARIAL_BACKWARD, A.FALLING, A.FALLING_FORWARD, A.FALLING_BACKWARD,
    A.FALLING_AERIAL, A.FALLING_AERIAL_FORWARD, A.FALLING_AERIAL_BACKWARD, A.LANDING, A.AIRDODGE, A.LANDING_SPECIAL))
COLUMN = {Character.FOX: 0, Character.MARTH: 1}  # the arena's port for each character
#: Two grounded fighters whose bodies overlap push each other apart by 0.3 a frame (doldecomp/melee ftcommon.c
#: ``ftCommon_8007E0E4`` / ``ftCommon_8007DD7C``: both on the ground, on the same or an adjacent floor line, their
#: push boxes ``fp->x2C4`` overlapping; ftCommonData x450 = 0.3 as read off the disc in kyhavlov/melee-sim-light's
#: ``data/common/ft_common_data.json`` ``player_nudge_x``). The push boxes are per character, in the fighters' files,
#: which no source here gives: the widest gap at which the replays show a grounded Fox or Marth pushed by 0.3 is 8.63
#: (measured, n 170: Fox on Peach 8.63, Fox and Marth on each other 8.51, Marth on Falco 7.57), taken up to 10 for
#: the characters not seen pushing (a guess; a wider gap only leaves more frames out).
BODY_PUSH_GAP = 10.0
WIND_RECORDED = (3, 17, 0)  # the first Slippi version that records Whispy's blowing (its stage event)
#: A grounded position within this of a floor's height stands on it (Slippi's positions are float32; the replays'
#: platform heights equal libmelee's to 0.01, measured on ../shared/replays' Yoshi's Story games).
FLOOR_TOLERANCE = 0.01


class PlayerRow(NamedTuple):
    """One player's frame, as the harness needs it."""

    character: Any
    action: int
    action_frame: int
    x: float
    y: float
    speed_air_x: float
    speed_ground_x: float
    speed_y: float
    facing: bool
    on_ground: bool
    jumps_left: int
    percent: float
    hitlag: float
    hitstun: float
    attack_speed: float
    pad: tuple[float, ...]  # main x, y, c x, y, l, r, then a b x y z l r as 0/1


class Stretch(NamedTuple):
    file: str
    port: int
    character: str
    start: int  # the placed frame's game frame number
    rows: tuple[PlayerRow, ...]  # the placed frame, then each frame compared
    history: tuple[tuple[float, ...], ...] = ()  # the controller frames of up to 4 frames before the placed one
    stage: str = "final_destination"  # the replay's stage (a stages.py name, or libmelee's name lowercased)
    platform: bool = False  # a grounded frame on a platform


class ReplayFrames(NamedTuple):
    """A replay as the harness reads it."""

    frames: list[tuple[int, dict[int, PlayerRow]]]  # every kept frame's (game frame, {port: row})
    edge: float  # the stage's edge, at most Final Destination's
    windy: frozenset[int]  # game frames on which the stage's wind may move the fighters (:func:`_windy`)
    stage: Any  # libmelee's melee.Stage, None where the replay does not say


class StretchResult(NamedTuple):
    file: str
    character: str
    frame: int  # the placed frame's game frame number
    length: int  # frames compared
    in_sync: int  # frames until the first more than TOLERANCE off (length when none)
    action_agree: int  # frames whose action id equals the replay's
    first_miss_action: str | None  # the real player's action on the first miss frame
    stage: str = "final_destination"
    platform: bool = False


_BUTTONS = (melee.enums.Button.BUTTON_A, melee.enums.Button.BUTTON_B, melee.enums.Button.BUTTON_X,
            melee.enums.Button.BUTTON_Y, melee.enums.Button.BUTTON_Z, melee.enums.Button.BUTTON_L,
            melee.enums.Button.BUTTON_R)


def _row(p: Any) -> PlayerRow:
    cs = p.controller_state
    pad = (float(cs.main_stick[0]), float(cs.main_stick[1]), float(cs.c_stick[0]), float(cs.c_stick[1]),
           float(cs.l_shoulder), float(cs.r_shoulder)) + tuple(float(bool(cs.button[b])) for b in _BUTTONS)
    return PlayerRow(p.character, int(p.action.value), int(p.action_frame), float(p.position.x), float(p.position.y),
                     float(p.speed_air_x_self), float(p.speed_ground_x_self), float(p.speed_y_self), bool(p.facing),
                     bool(p.on_ground), int(p.jumps_left), float(p.percent), float(p.hitlag_left or 0),
                     float(p.hitstun_frames_left or 0), abs(float(p.speed_x_attack)) + abs(float(p.speed_y_attack)), pad)


def read_frames(path: str | os.PathLike) -> ReplayFrames:
    """Every kept frame's (game frame, {port: row}), the stage's edge (the replay's stage, at most FD's), the game
    frames on which the stage's wind may move the fighters (:func:`_windy`) and the stage."""
    stage: list[Any] = []
    blowing: set[int] = set()

    def convert(gs: Any, _console: Any) -> tuple[int, dict[int, PlayerRow]]:
        if not stage:
            stage.append(gs.stage)
        if gs.whispy is not None and gs.whispy != WhispyBlowDirection.NONE:
            blowing.add(int(gs.frame))
        return int(gs.frame), {int(port): _row(p) for port, p in gs.players.items()}

    frames, console = read_kept(path, convert=convert)
    edge = float(melee.stages.EDGE_GROUND_POSITION.get(stage[0], EDGE)) if stage else EDGE
    windy = _windy(stage[0] if stage else None, str(getattr(console, "slp_version", "0.0.0")), blowing, frames)
    return ReplayFrames(frames, min(edge, EDGE), windy, stage[0] if stage else None)


def _version(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split(".")[:3] if x.isdigit())


def _windy(stage: Any, version: str, blowing: set[int], frames: list[tuple[int, Any]]) -> frozenset[int]:
    """Dream Land's Whispy blows the fighters sideways (doldecomp/melee fighter.c adds the stage's wind,
    ``ftColl_GetWindOffsetVec``, to the position each frame; Final Destination, the arena's stage, has none). Slippi
    records Whispy's blowing from 3.17.0 (libmelee ``GameState.whispy``): those frames are windy; before 3.17.0 it is
    not recorded, so every frame of a Dream Land game is."""
    if stage != melee.enums.Stage.DREAMLAND:
        return frozenset()
    if _version(version) < WIND_RECORDED:
        return frozenset(n for n, _ in frames)
    return frozenset(blowing)


def stage_info(stage: Any) -> tuple[str, Stage | None]:
    """The replay's stage as the harness names it, and the arena's data of it (None: not one of the six)."""
    try:
        s = stage_of_libmelee(stage)
    except ValueError:
        return (stage.name.lower() if stage is not None else "unknown"), None
    return s.name, s


def floor_of(r: PlayerRow, stage: Stage | None) -> str | None:
    """Where a grounded row stands: ``"main"`` (the main floor, y = 0), ``"platform"`` (one of the stage's
    platforms, at its height and between its ends), or None (a floor the arena does not model: a slope, a moved
    platform)."""
    if abs(r.y) < FLOOR_TOLERANCE:
        return "main"
    for p in stage.platforms if stage is not None else ():
        if abs(r.y - p.height) < FLOOR_TOLERANCE and p.left <= r.x <= p.right:
            return "platform"
    return None


def _free(r: PlayerRow, edge: float, stage: Stage | None = None) -> bool:
    """A free-movement frame (module docstring): the replay's own airborne flag (the game's collision box) decides
    whether the fighter stands; a grounded one on a floor the arena models."""
    if r.character not in COLUMN or r.action not in FREE_ACTIONS:
        return False
    if r.hitlag > 0 or r.hitstun > 0 or r.attack_speed > 0 or abs(r.x) > edge:
        return False
    return floor_of(r, stage) is not None if r.on_ground else True


def _crowded(ps: dict[int, PlayerRow], port: int) -> bool:
    """``port``'s fighter and another stand on the ground closer than BODY_PUSH_GAP: the game may push them apart."""
    r = ps.get(port)
    if r is None or not r.on_ground:
        return False
    return any(o.on_ground and abs(o.x - r.x) < BODY_PUSH_GAP for q, o in ps.items() if q != port)


def stretches(path: str | os.PathLike) -> list[Stretch]:
    """Every free-movement stretch of a replay (module docstring), cut at MAX_STRETCH compared frames."""
    frames, edge, windy, stage = read_frames(path)
    stage_name, arena_stage = stage_info(stage)
    out: list[Stretch] = []
    # Replays before Slippi 3.5.0 record no self speeds (libmelee reads 0): the placed frame's speeds are then
    # its position's change from the frame before (on the ground and in the air alike, what the game moved it by).
    has_speeds = any(r.speed_air_x or r.speed_ground_x or r.speed_y for _, ps in frames for r in ps.values())
    ports = sorted({port for _, ps in frames for port in ps})
    for port in ports:
        run: list[int] = []
        for i, (number, ps) in enumerate(frames + [(-1, {})]):  # a last non-frame ends the last run
            r = ps.get(port)
            free = (number >= 0 and r is not None and _free(r, edge, arena_stage) and number not in windy
                    and not _crowded(ps, port) and not (i > 0 and _crowded(frames[i - 1][1], port)))
            if free:
                run.append(i)
            if (not free or len(run) == MAX_STRETCH + 1) and len(run) >= 2:
                rows = tuple(frames[j][1][port] for j in run)
                before = frames[run[0] - 1][1].get(port) if run[0] > 0 else None
                if not has_speeds and before is not None:
                    rows = (unrecorded_speeds(rows[0], before),) + rows[1:]
                hist = tuple(frames[j][1][port].pad for j in range(max(0, run[0] - 4), run[0]) if port in frames[j][1])
                on_platform = any(q.on_ground and floor_of(q, arena_stage) == "platform" for q in rows)
                out.append(Stretch(str(path), port, rows[0].character.name.lower(), frames[run[0]][0], rows, hist,
                                   stage_name, on_platform))
            if not free:
                run = []
            elif len(run) == MAX_STRETCH + 1:  # full: its last frame is the next stretch's placed frame
                run = [i]
    return out


def unrecorded_speeds(row: PlayerRow, before: PlayerRow) -> PlayerRow:
    """``row`` with the self speeds a replay before Slippi 3.5.0 does not record: its position's change from the frame
    before (what the game moved it by), except on a dash's first frame, whose speed already holds the dash's impulse
    (doldecomp/melee ``ftCo_Dash_Enter``: to dash_initial the facing way, :func:`~melee_agent.arena.fight.ground.dash_impulse`)
    that moves the fighter only from the next frame."""
    dx, dy = row.x - before.x, row.y - before.y
    vx = dx
    if row.action == A.DASHING.value and row.action_frame == 1 and row.on_ground:
        initial = gamedata.attributes(row.character).dash_initial
        t = lambda v: torch.tensor(float(v))  # noqa: E731
        vx = dx + float(dash_impulse(t(dx), t(1.0 if row.facing else -1.0), t(initial)))
    return row._replace(speed_air_x=vx, speed_ground_x=vx, speed_y=dy)


def _pads(rows: list[PlayerRow | None], col: int, device: torch.device) -> Pads:
    """``[B, 2]`` raw frames: each stretch's row (neutral where it has ended) on ``col``, neutral on the other."""
    neutral = (0.5, 0.5, 0.5, 0.5, 0.0, 0.0) + (0.0,) * 7
    vals = torch.tensor([r.pad if r is not None else neutral for r in rows], dtype=torch.float32, device=device)
    base = Pads.neutral(len(rows), device)
    fields = []
    for k in range(len(Pads._fields)):
        v = base[k].clone()
        v[:, col] = vals[:, k]
        fields.append(v.bool() if k >= 6 else v)
    return Pads(*fields)


def _history(group: list[Stretch], col: int, device: torch.device) -> list[Pads]:
    """Each stretch's controller frames up to its placed one (``col``'s, ``[B]`` each), the oldest first: the stick's
    tilt timers at the placed frame (how many frames ago it crossed the smash deadzone) are counted from them."""
    depth = max(len(s.history) for s in group) + 1
    out = []
    for k in range(depth):
        rows = []
        for s in group:
            pads = s.history + (s.rows[0].pad,)
            pads = (pads[0],) * (depth - len(pads)) + pads  # a short history repeats its oldest frame
            rows.append(PlayerRow(*s.rows[0][:-1], pads[k]))
        out.append(Pads(*(f[:, col] for f in _pads(rows, col, device))))
    return out


def play(group: list[Stretch], col: int, device: str = "cpu") -> list[StretchResult]:
    """Re-play one character's stretches (``col``: the character's column), those of a stage side by side in one
    arena on that stage (:func:`_arena`); results in ``group``'s order."""
    out: dict[int, StretchResult] = {}
    for stage in dict.fromkeys(s.stage for s in group):
        idx = [i for i, s in enumerate(group) if s.stage == stage]
        out.update(zip(idx, _play_stage([group[i] for i in idx], col, device, stage)))
    return [out[i] for i in range(len(group))]


def _arena(num_envs: int, device: str, stage: str) -> Any:
    """A fight arena on ``stage`` where the arena takes a stage (``Arena(..., stage=...)``) and has it, else on Final
    Destination, the arena's own stage."""
    from melee_agent.arena import Arena  # noqa: PLC0415 (the arena imports torch.compile machinery)
    from melee_agent.arena.stages import STAGES  # noqa: PLC0415

    kw = {"stage": stage} if "stage" in inspect.signature(Arena).parameters and stage in STAGES else {}
    return Arena(num_envs, game="fight", device=device, seed=0, **kw)


def _play_stage(group: list[Stretch], col: int, device: str, stage: str) -> list[StretchResult]:
    """Re-play stretches of one character and one stage side by side in one arena."""
    B = len(group)
    arena = _arena(B, device, stage)
    arena.reset()
    first = [s.rows[0] for s in group]
    t = lambda vals: torch.tensor(vals, dtype=torch.float32, device=arena.device)  # noqa: E731
    arena.place(col, position_x=t([r.x for r in first]), position_y=t([r.y for r in first]),
                speed_air_x_self=t([r.speed_air_x for r in first]),
                speed_ground_x_self=t([r.speed_ground_x for r in first]), speed_y_self=t([r.speed_y for r in first]),
                action=t([r.action for r in first]), action_frame=t([r.action_frame for r in first]),
                facing=t([float(r.facing) for r in first]), on_ground=t([float(r.on_ground) for r in first]),
                jumps_left=t([r.jumps_left for r in first]), percent=t([r.percent for r in first]),
                controller_state=_history(group, col, arena.device))
    other = 1 - col
    longest = max(len(s.rows) for s in group) - 1
    dist = np.full((B, longest), np.inf)
    act = np.zeros((B, longest), dtype=bool)
    for k in range(1, longest + 1):
        arena.place(other, position_x=0.0, position_y=150.0, on_ground=0.0, speed_air_x_self=0.0, speed_y_self=0.0,
                    action=float(Action.FALLING.value), action_frame=1.0)
        rows = [s.rows[k] if k < len(s.rows) else None for s in group]
        arena.step_pads(_pads(rows, col, arena.device))
        ps = arena.state.players
        x, y, a = (v[:, col].cpu().numpy() for v in (ps.position_x, ps.position_y, ps.action))
        for i, r in enumerate(rows):
            if r is not None:
                dist[i, k - 1] = float(np.hypot(x[i] - r.x, y[i] - r.y))
                act[i, k - 1] = int(a[i]) == r.action
    out = []
    for i, s in enumerate(group):
        n = len(s.rows) - 1
        miss = np.nonzero(dist[i, :n] > TOLERANCE)[0]
        sync = int(miss[0]) if miss.size else n
        first_miss = None if not miss.size else Action(s.rows[sync + 1].action).name
        out.append(StretchResult(s.file, s.character, s.start, n, sync, int(act[i, :n].sum()), first_miss, s.stage,
                                 s.platform))
    return out


def run(paths: Iterable[str | os.PathLike], device: str = "cpu") -> tuple[list[StretchResult], list[str]]:
    """Every stretch of every readable replay, played; and one error line per replay passed over
    (:func:`.read_each`: a file given twice is read once)."""
    per_file, errors = read_each(paths, stretches)
    found = [s for got in per_file for s in got]
    results: list[StretchResult] = []
    for ch, col in COLUMN.items():
        group = [s for s in found if s.character == ch.name.lower()]
        if group:
            results += play(group, col, device)
    return results, errors


def _figures(rs: list[StretchResult]) -> dict[str, Any]:
    """Stretches (platform ones among them), frames, followed share, median frames in sync, action agreement, first
    misses of ``rs`` (not empty)."""
    frames = sum(r.length for r in rs)
    return {
        "stretches": len(rs), "platform_stretches": sum(r.platform for r in rs), "frames": frames,
        "followed_share": sum(r.in_sync == r.length for r in rs) / len(rs),
        "median_in_sync": statistics.median(r.in_sync for r in rs),
        "median_length": statistics.median(r.length for r in rs),
        # The median stretch's share followed (1.0: the median stretch is followed whole, issue 49's "median =
        # the whole stretch"); the two medians above are of different stretches once lengths differ.
        "median_share_in_sync": statistics.median(r.in_sync / r.length for r in rs),
        "action_agreement": sum(r.action_agree for r in rs) / frames if frames else None,
        "first_misses": dict(Counter(r.first_miss_action for r in rs if r.first_miss_action).most_common()),
    }


def summarize(results: list[StretchResult]) -> dict[str, Any]:
    """Per character: :func:`_figures`, with the same per stage (``stages``) and over its platform stretches
    (``platform``, None where it has none)."""
    out: dict[str, Any] = {}
    for ch in sorted({r.character for r in results}):
        rs = [r for r in results if r.character == ch]
        on_platform = [r for r in rs if r.platform]
        out[ch] = _figures(rs) | {
            "stages": {st: _figures([r for r in rs if r.stage == st]) for st in sorted({r.stage for r in rs})},
            "platform": _figures(on_platform) if on_platform else None}
    return out


def _line(name: str, s: dict[str, Any]) -> str:
    return (f"{name:<30} {s['stretches']:>9} {s['platform_stretches']:>8} {s['frames']:>7} "
            f"{100 * s['followed_share']:>8.1f}% {s['median_in_sync']:>15} ({s['median_length']})"
            f" {100 * s['median_share_in_sync']:>12.0f}% {100 * (s['action_agreement'] or 0):>16.1f}%")


def format_table(summary: dict[str, Any]) -> str:
    """The summary as text: per character, then per stage and character, then the first misses."""
    head = (f"{'character':<30} stretches platform  frames  followed  median in sync (of median length)"
            "  median share  action agreement")
    lines = [head] + [_line(ch, s) for ch, s in summary.items()]
    lines += ["", head.replace("character", "stage / character", 1)]
    stages = sorted({st for s in summary.values() for st in s.get("stages", {})})
    for st in stages:
        lines += [_line(f"{st} / {ch}", s["stages"][st]) for ch, s in summary.items() if st in s.get("stages", {})]
    for ch, s in summary.items():
        top = ", ".join(f"{k} {v}" for k, v in list(s["first_misses"].items())[:10])
        lines.append(f"{ch} first misses by the real action: {top or 'none'}")
    return "\n".join(lines)


def report(results: list[StretchResult], errors: list[str]) -> dict[str, Any]:
    return {"summary": summarize(results), "stretches": [r._asdict() for r in results], "errors": errors,
            "tolerance": TOLERANCE, "max_stretch": MAX_STRETCH}


__all__ = ["run", "summarize", "format_table", "report", "stretches", "play", "unrecorded_speeds", "floor_of",
           "stage_info", "read_frames", "FREE_ACTIONS", "BODY_PUSH_GAP"]
