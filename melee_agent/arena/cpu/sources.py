"""``cpu-report``'s figures beside what the sources say (the "beside the sources" table).

Each row names a behaviour the sources give for Melee's CPU, the source's figure (a rate, a frame count, or
"never"), and the arena's measured figure from a :func:`~melee_agent.arena.cpu_report.report` document. Sources
as in :mod:`melee_agent.arena.cpu.melee`: [D] doldecomp/melee (function named), [W-AI] SmashWiki
"Artificial intelligence", [W-flaws] SmashWiki "List of flaws in artificial intelligence (SSBM)", [W-PS]
SmashWiki "Perfect shield".

One figure needs a situation the scenarios seldom make: a Fox jab meeting Marth's shield on each of its first
eight frames (:func:`perfect_shield_probe`): whether the hit is perfect-shielded, the frames from the end of
hitlag and shieldstun to Marth's counterattack (his shield grab's first frame; 0 is the frame he can act), and
whether it held Fox. The jab is one frame in, its first hitbox out short of the shield, so the CPU sees it coming;
in ``Guard`` that runs the roll script ([D] ``ftCo_800BB104``, ``ftCo_800BA9A0``), whose first frame releases R: the
jab then meets the shield's release, not the shield (a jab still in its startup is no threat the CPU
can see, and a level-9 Marth in shield with Fox within reach shield-grabs at once instead).
"""

from __future__ import annotations

from typing import Any

import torch
from melee.enums import Action

from melee_agent.arena import Arena
from melee_agent.arena.env_state import AGENT, CPU, with_game, with_player
from melee_agent.arena.fight.fighter import rows_of
from melee_agent.arena.fight.frame import fight_frame_fox
from melee_agent.arena.fight.moves import Slot, row

SHIELD = float(Action.SHIELD.value)
PROBE_SHIELD_FRAMES = 8  # the shield frames the probe's jab meets: 1..8
PROBE_AWAY = 15.0  # Fox's jab: its first hitbox (9.5 forward) falls short of a shield this far, its second reaches it
#: ftCo_800B63D8: the wait before a chosen attack per level 1-9 (min, max frames).
SOURCE_WAIT = {1: (5, 39), 2: (5, 34), 3: (5, 29), 4: (0, 24), 5: (0, 19), 6: (0, 14), 7: (0, 9), 8: (0, 4), 9: (0, 0)}


def perfect_shield_probe(cpu: str, level: int, device: str | torch.device = "cpu") -> dict[str, Any]:
    """A Fox jab (one frame in, 15 from Marth) meets Marth's shield on shield frame k = 1..8 (one game each)."""
    n = PROBE_SHIELD_FRAMES
    env = Arena(n, cpu_level=level, seed=0, game="fight", cpu=cpu, device=device, action_set="basic")
    env.reset()
    env.state = with_game(env.state, episode_frame=60.0)  # a frame the level-9 defence gate is open (any frame)
    T, c = env._consts.fight.table, env._consts
    r = row(AGENT, Slot.JAB1)
    base = dict(position_y=0.0, on_ground=1.0, speed_x=0.0, speed_y=0.0, percent=0.0, jumps_left=2.0,
                invulnerability_left=0.0)
    env.state = with_player(env.state, AGENT, **base, position_x=0.0, facing=1.0, move=float(r), action_frame=2.0,
                            action=float(T.action[r]), busy_left=float(T.length[r]) - 2.0)
    k = torch.arange(n, dtype=torch.float32, device=env.device)  # shield frame k + 1 when the jab meets it
    env.state = with_player(env.state, CPU, **base, busy_left=0.0, position_x=PROBE_AWAY, facing=-1.0, move=-1.0,
                            action=SHIELD, action_frame=k)
    z, no = torch.zeros(n, device=env.device), torch.zeros(n, dtype=torch.bool, device=env.device)
    before = env.state.players.shield_strength[:, CPU].clone()
    perfect = torch.zeros(n, dtype=torch.bool, device=env.device)
    free_at = torch.full((n,), -1.0, device=env.device)
    grab_at = torch.full((n,), -1.0, device=env.device)
    held = torch.zeros(n, dtype=torch.bool, device=env.device)
    grab, hold = row(CPU, Slot.GRAB), row(CPU, Slot.GRAB_HOLD)
    with torch.inference_mode():
        for i in range(30):
            res, _ = fight_frame_fox(env.state, (no, no, no, no, no, z, z), c.fight, c.seed, c.spawn_x)
            env.state = res.state
            ps, fs = env.state.players, env.state.fight
            if i == 0:  # the jab's first frame: a hit on the shield (hitlag, no damage, still shielding) that cost it
                # under 1 (the hold's own decay)
                on_shield = (fs.hitlag_left[:, CPU] > 0) & (res.damage[:, CPU] == 0) & (ps.action[:, CPU] == SHIELD)
                perfect = on_shield & (before - ps.shield_strength[:, CPU] < 1.0)
            stuck = (fs.hitlag_left[:, CPU] > 0) | (ps.hitstun_frames_left[:, CPU] > 0)
            free_at = torch.where((free_at < 0) & ~stuck & (i > 0), float(i), free_at)
            m = rows_of(ps.move)[:, CPU]
            grab_at = torch.where((grab_at < 0) & (m == grab), float(i), grab_at)
            held = held | (m == hold)
    ok = (free_at >= 0) & (grab_at >= 0)
    # frames from the first frame out of hitlag and shieldstun to the shield grab's first frame
    return {"perfect_by_shield_frame": {int(j) + 1: bool(perfect[j]) for j in range(n)},
            "punish_frames": [float(v) for v in (grab_at - free_at)[ok].tolist()], "punished": int((ok & held).sum()),
            "of": n}


def di_probe(cpu: str, level: int, device: str | torch.device = "cpu") -> dict[str, Any]:
    """Marth in hitstun (launched at 45 degrees) on each phase of the 120-frame cycle ``t mod 120`` = 0..119, one game
    each: on how many phases the CPU holds the stick (DI). [D] ``ftCo_800AC5A0`` gates DI on ``t mod 120``, so the
    scenarios' hitstun frames, which fall on the cycle unevenly, sample that share with a bias this probe has not."""
    n = 120
    env = Arena(n, cpu_level=level, seed=0, game="fight", cpu=cpu, device=device, action_set="basic")
    env.reset()
    # The frame function counts the frame up before the CPU reads it: env i plays phase i.
    env.state = with_game(env.state, episode_frame=torch.arange(n, device=env.device, dtype=torch.float32) - 1.0)
    env.state = with_player(env.state, CPU, position_x=0.0, position_y=30.0, on_ground=0.0, move=-1.0,
                            hitstun_frames_left=20.0, invulnerability_left=0.0)
    env.state = with_player(env.state, AGENT, position_x=-40.0, position_y=0.0, on_ground=1.0, move=-1.0)
    fs = env.state.fight
    env.state = env.state._replace(fight=fs._replace(launch_angle=torch.full_like(fs.launch_angle, 45.0),
                                                     launch_dir=torch.ones_like(fs.launch_dir),
                                                     hitlag_left=torch.zeros_like(fs.hitlag_left)))
    z, no = torch.zeros(n, device=env.device), torch.zeros(n, dtype=torch.bool, device=env.device)
    c = env._consts
    with torch.inference_mode():
        _, pad = fight_frame_fox(env.state, (no, no, no, no, no, z, z), c.fight, c.seed, c.spawn_x)
    held = (pad.sx[:, CPU] != 0) | (pad.sy[:, CPU] != 0)
    return {"phases_with_di": int(held.sum()), "of": n}


def beside_sources(doc: dict[str, Any], probe: dict[str, Any], di: dict[str, Any] | None = None) -> list[dict[str, str]]:
    """Rows of (behaviour, source, the source's figure, the arena's figure) for one report and its probe."""
    sh, L = doc["shares"], int(doc["level"])
    pct = lambda keys: f"{100 * sum(sh[k] for k in keys):.1f}% of starts"  # noqa: E731
    pf = [f for f, p in probe["perfect_by_shield_frame"].items() if p]
    window = f"frames {min(pf)}-{max(pf)}" if pf else "none"
    pun = probe["punish_frames"]
    punish = (f"shield grab {min(pun):.0f}-{max(pun):.0f} frames after the first frame he can act, Fox held in "
              f"{probe['punished']}/{probe['of']}"
              if pun else f"none ({probe['of']} tries)")
    w = doc.get("attack_wait_frames", {"count": 0})
    wait = f"{w['min']:.0f}-{w['max']:.0f} frames (n={w['count']})" if w["count"] else "- (not recorded)"
    lo, hi = SOURCE_WAIT.get(L, (0, 0))
    rec = doc["scenarios"].get("recovery")
    ang = rec["up_b_stick_angle_deg"] if rec else {"count": 0}
    angle = f"{ang['min']:.1f}-{ang['max']:.1f} deg (n={ang['count']})" if ang["count"] else "- (no up-B)"
    off = doc["scenarios"].get("fox_offstage")
    di_share = doc["di_frames"] / doc["hitstun_frames"] if doc["hitstun_frames"] else None
    di_play = f"{di_share:.0%} of {doc['hitstun_frames']} hitstun frames in play" if di_share is not None else "-"
    if di is not None:
        di_play = f"{di['phases_with_di']}/{di['of']} phases = {di['phases_with_di'] / di['of']:.1%} (probe); {di_play}"
    ranked = sorted(((v, k) for k, v in sh.items() if v > 0), reverse=True)[:4]
    first = ", ".join(f"{k} {100 * v:.1f}%" for v, k in ranked) or "-"
    hits, pfs = doc.get("shield_hits", 0), doc.get("perfect_shields", 0)
    if "shield_hits" not in doc:  # a report document sums them over its scenarios
        hits = sum(sc["shield_hits"] for sc in doc["scenarios"].values())
        pfs = sum(sc["perfect_shields"] for sc in doc["scenarios"].values())
    rows = [
        ("perfect shield (a hit on the shield's first frames)", "[W-PS]", "about 4 frames", window),
        ("perfect shields in play (the scenarios' hits on Marth's shield)", "[W-PS], [W-AI]",
         "no Melee rate (level 9's perfect shields on almost any attack: said of Brawl)",
         f"{pfs} of {hits} shield hits"),
        ("counterattack out of shield", "[W-AI]", "the frame it can act", punish),
        ("the most frequent choices", "[W-flaws]", "jab and dash grab first", first),
        ("jab, grab, dash grab", "[W-flaws]", "mostly", pct(("jab", "grab", "dash_grab"))),
        ("tilts", "[W-flaws]", "seldom", pct(("ftilt", "utilt", "dtilt"))),
        ("smashes", "[W-flaws]", "seldom", pct(("fsmash", "usmash", "dsmash"))),
        ("aerials", "[W-flaws]", "almost never", pct(("nair", "fair", "bair", "uair", "dair"))),
        ("charged smash (A held 2+ frames)", "[W-flaws]", "never", f"{doc['a_held_two_frames']} frames"),
        ("jumps from the ground (short hop, wavedash)", "[W-AI], [W-flaws]", "never wavedashes",
         f"{doc['ground_jumps']} jumps"),
        ("wait from choosing an attack to playing it", "[D] ftCo_800B63D8", f"{lo}-{hi} frames", wait),
        ("DI in hitstun (stick held)", "[D] ftCo_800AC5A0", f"(12 L - 1)/120 of frames = {(12 * L - 1) / 120:.0%}"
         if L > 0 else "none", di_play),
        ("up-B angle", "[D] ftCo_CpuRecoverDiagonally", "45 deg (stick 88, 88)", angle),
        ("recovery by side-B or air dodge", "[W-flaws]", "never",
         f"{rec['side_b'] + rec['air_dodge']}" if rec else "-"),
        ("goes out after Fox off stage / edgehogs", "[W-AI], [W-flaws]", "never",
         f"{off['marth_went_off_stage']} / {off['ledge_hogs']}" if off else "-"),
    ]
    return [dict(behaviour=b, source=s, source_figure=f, arena=a) for b, s, f, a in rows]


def format_rows(rows: list[dict[str, str]]) -> str:
    """The rows as a Markdown table."""
    out = ["| behaviour | source | the source says | the arena |", "|---|---|---|---|"]
    out += [f"| {r['behaviour']} | {r['source']} | {r['source_figure']} | {r['arena']} |" for r in rows]
    return "\n".join(out)
