"""What a fight CPU does against scripted Fox policies (``melee-agent cpu-report``).

Four scenarios, each ``envs`` games of ``frames`` frames at one CPU level, Fox driven by a script:

* ``standing`` -- Fox stands still 60 units from Marth;
* ``approach`` -- Fox dashes in and, within reach, attacks every 20 frames from within 28 (jab, forward tilt, forward
  smash, down tilt, up smash in turn, and a dash attack on the way in);
* ``aerials`` -- Fox short-hops at Marth every 30 frames and, in the air within 30 of him, forward-airs
  (a hitbox that travels: what the CPU's 3-frame sweep sees coming);
* ``fox_offstage`` -- Fox starts off stage and recovers (drifts in, double-jumps, firefox): does Marth
  go out after him, hog the ledge, attack him;
* ``recovery`` -- Marth starts off stage (eight spots), Fox stands: Marth's recovery options.

Measured on Marth, frame by frame from the arena's state and the CPU's controller: every action he starts
(jab, tilts, smashes, dash attack, grab, dash grab, aerials, up/side/down-B, shield, spot dodge, rolls, air
dodge) counted and as a share of all; shield hits and perfect shields (hits on the shield's first 4
frames); his reaction time (frames from the start of Fox's attack to Marth's shield, roll, spot dodge or
air dodge while the attack lasts); his throws; in ``recovery`` his double jumps, up-Bs (the stick's
angle at each), side-Bs, air dodges and how many made it back.

The frame loop is the arena's own fight frame (:func:`~melee_agent.arena.fight.frame.fight_frame_fox`),
vectorized over environments; the per-frame bookkeeping is a few tensor ops on the whole batch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch
from melee.enums import Action

from melee_agent.arena import Arena
from melee_agent.arena.env_state import AGENT, CPU, with_player
from melee_agent.arena.fight.fighter import rows_of
from melee_agent.arena.fight.frame import EDGE, PERFECT_SHIELD_FRAMES, fight_frame_fox
from melee_agent.arena.cpu.melee_data import ATTACK, DASH_GRAB, NONE
from melee_agent.arena.fight.moves import NUM_SLOTS, Slot

if TYPE_CHECKING:
    from tqdm import tqdm

SCENARIOS = ("standing", "approach", "aerials", "fox_offstage", "recovery")
SHIELD = float(Action.SHIELD.value)
#: Marth's actions counted as choices, by move slot (jab 2 and 3 continue a jab: not counted again).
CHOICE_SLOTS = {
    "jab": (Slot.JAB1,), "ftilt": (Slot.FTILT,), "utilt": (Slot.UTILT,), "dtilt": (Slot.DTILT,),
    "fsmash": (Slot.FSMASH,), "usmash": (Slot.USMASH,), "dsmash": (Slot.DSMASH,), "dash_attack": (Slot.DASH_ATTACK,),
    "grab": (Slot.GRAB,), "dash_grab": (Slot.DASH_GRAB,), "nair": (Slot.NAIR,), "fair": (Slot.FAIR,),
    "bair": (Slot.BAIR,), "uair": (Slot.UAIR,), "dair": (Slot.DAIR,), "up_b": (Slot.UP_B,), "side_b": (Slot.SIDE_B,),
    "down_b": (Slot.DOWN_B,), "spot_dodge": (Slot.SPOT_DODGE,), "roll": (Slot.ROLL_FORWARD, Slot.ROLL_BACKWARD),
    "air_dodge": (Slot.AIRDODGE,),
}
CHOICES = tuple(CHOICE_SLOTS) + ("shield",)
THROW_SLOTS = {"fthrow": Slot.FTHROW, "bthrow": Slot.BTHROW, "uthrow": Slot.UTHROW, "dthrow": Slot.DTHROW,
               "pummel": Slot.PUMMEL}
#: The moves the melee CPU's attack lists press (a jab pressed in shield starts a grab; Z dashing, a dash grab).
ATTACK_SLOTS = (Slot.JAB1, Slot.FTILT, Slot.UTILT, Slot.DTILT, Slot.FSMASH, Slot.USMASH, Slot.DSMASH, Slot.GRAB,
                Slot.DASH_GRAB, Slot.NAIR, Slot.FAIR, Slot.BAIR, Slot.UAIR, Slot.DAIR)
DEFENSIVE = (Slot.SPOT_DODGE, Slot.ROLL_FORWARD, Slot.ROLL_BACKWARD, Slot.AIRDODGE)
FOX_ATTACKS = ((0.0, 0.0), (0.5, 0.0), (1.0, 0.0), (0.0, -0.5), (0.0, 1.0))  # jab, ftilt, fsmash, dtilt, usmash
RECOVERY_SPOTS = ((30.0, 10.0), (50.0, -30.0), (70.0, -10.0), (25.0, -55.0))


def _fox_pad(scenario: str, env: Arena, i: int) -> tuple[torch.Tensor, ...]:
    """Fox's controller this frame: ``[B]`` a, b, jump, z, shield, sx, sy."""
    ps, fs = env.state.players, env.state.fight
    B = env.num_envs
    z = torch.zeros(B, device=env.device)
    no = torch.zeros(B, dtype=torch.bool, device=env.device)
    fx, mx = ps.position_x[:, AGENT], ps.position_x[:, CPU]
    if scenario in ("standing", "recovery"):
        return no, no, no, no, no, z, z
    if scenario == "approach":
        dx = mx - fx
        toward = torch.sign(dx)
        far = dx.abs() > 28.0
        cycle = (torch.arange(B, device=env.device) + i // 20) % len(FOX_ATTACKS)
        sx_tab = torch.tensor([a[0] for a in FOX_ATTACKS], device=env.device)[cycle] * toward
        sy_tab = torch.tensor([a[1] for a in FOX_ATTACKS], device=env.device)[cycle]
        press = ~far & (i % 20 == 0)
        dash_attack = far & (dx.abs() < 45.0) & (i % 20 == 10)
        a = press | dash_attack
        sx = torch.where(far, toward, torch.where(press, sx_tab, 0.0))
        sy = torch.where(press, sy_tab, 0.0)
        return a, no, no, no, no, sx, sy
    if scenario == "aerials":
        dx = mx - fx
        toward = torch.sign(dx)
        air = ps.on_ground[:, AGENT] == 0
        busy = ps.move[:, AGENT] >= 0
        hop = ~air & ~busy & (i % 30 == 0) & (ps.jump_held[:, AGENT] == 0)
        fair = air & ~busy & (dx.abs() < 30.0) & (fs.a_held[:, AGENT] == 0)
        walk = ~air & ~busy & ~hop & (dx.abs() > 45.0)
        sx = torch.where(air | hop, toward, torch.where(walk, toward * 0.5, 0.0))
        return fair, no, hop, no, no, sx, z
    # fox_offstage: drift in, double-jump below the ledge, firefox toward the stage once out of jumps.
    fy = ps.position_y[:, AGENT]
    inward = -torch.sign(fx)
    air = ps.on_ground[:, AGENT] == 0
    jump = air & (fy < -5.0) & (ps.jumps_left[:, AGENT] > 0) & (ps.jump_held[:, AGENT] == 0)
    upb = air & (fy < -25.0) & (ps.jumps_left[:, AGENT] <= 0) & (fs.helpless[:, AGENT] == 0) & (fs.b_held[:, AGENT] == 0)
    sy = torch.where(upb, 0.7, 0.0)
    sx = torch.where(air, inward * torch.where(upb, 0.7, 1.0), 0.0)
    return no, upb, jump, no, no, sx, sy


def _place(scenario: str, env: Arena) -> None:
    B = env.num_envs
    side = torch.where(torch.arange(B) % 2 == 0, 1.0, -1.0).to(env.device)
    base = dict(on_ground=1.0, position_y=0.0, speed_x=0.0, speed_y=0.0, action=float(Action.STANDING.value),
                move=-1.0, busy_left=0.0, action_frame=1.0, jumps_left=2.0, invulnerability_left=0.0)
    if scenario in ("standing", "approach", "aerials"):
        env.state = with_player(env.state, AGENT, **{**base, "position_x": -30.0 * side, "facing": side})
        env.state = with_player(env.state, CPU, **{**base, "position_x": 30.0 * side, "facing": -side})
    elif scenario == "fox_offstage":
        air = dict(base, on_ground=0.0, action=float(Action.FALLING.value), jumps_left=1.0)
        env.state = with_player(env.state, AGENT, **{**air, "position_x": side * (EDGE + 45.0), "position_y": 20.0,
                                                     "facing": -side})
        env.state = with_player(env.state, CPU, **{**base, "position_x": side * 20.0, "facing": side})
    else:
        spot = torch.tensor(RECOVERY_SPOTS, device=env.device)[torch.arange(B, device=env.device) // 2 % len(RECOVERY_SPOTS)]
        air = dict(base, on_ground=0.0, action=float(Action.FALLING.value), jumps_left=1.0)
        env.state = with_player(env.state, AGENT, **{**base, "position_x": -20.0 * side, "facing": side})
        env.state = with_player(env.state, CPU, **{**air, "position_x": side * (EDGE + spot[:, 0]),
                                                   "position_y": spot[:, 1], "facing": -side})


def run_scenario(scenario: str, cpu: str, level: int, envs: int = 32, frames: int = 600, seed: int = 0,
                 device: str | torch.device = "cpu", bar: tqdm | None = None) -> dict[str, Any]:
    """One scenario's counts (see the module docstring); ``bar``, where given, counts its frames."""
    env = Arena(envs, cpu_level=level, seed=seed, game="fight", cpu=cpu, device=device, action_set="basic")
    env.reset()
    _place(scenario, env)
    c = env._consts
    tally = _Tally(envs, env.device, cpu == "melee", c.fight)
    stocks0 = env.state.players.stock[:, CPU].clone()
    with torch.inference_mode():
        for i in range(frames):
            if bar is not None:
                bar.update(1)
            prev = env.state.players
            prev_lag = env.state.fight.hitlag_left[:, CPU].clone()
            prev_slot = _slot_of(prev, CPU)
            prev_plan = env.state.fight.cpu_plan.clone()
            res, pad = fight_frame_fox(env.state, _fox_pad(scenario, env, i), c.fight, c.seed, c.spawn_x)
            env.state = res.state
            ps = env.state.players
            slot = _slot_of(ps, CPU)
            started = (slot >= 0) & (ps.action_frame[:, CPU] == 1) & ((slot != prev_slot) | (prev.action_frame[:, CPU] != 1))
            tally.add(_Frame(i, prev, prev_lag, prev_plan, res, pad, slot, started))
    return tally.result(scenario, env.state.players, stocks0)


def _slot_of(ps: Any, who: int) -> torch.Tensor:
    """``[B]`` the move slot player ``who`` is playing (-1: none)."""
    return torch.where(ps.move[:, who] >= 0, rows_of(ps.move)[:, who] - who * NUM_SLOTS, -1)


class _Frame(NamedTuple):
    """One frame as the tallies read it: the players before it, what it played and what Marth started."""

    i: int  # the frame's index in the scenario
    prev: Any  # the players before the frame
    prev_lag: torch.Tensor  # [B] Marth's hitlag before the frame
    prev_plan: torch.Tensor  # [B] the melee CPU's plan before the frame
    res: Any  # the frame's result (its state and the damage dealt)
    pad: Any  # both pads played
    slot: torch.Tensor  # [B] Marth's move slot after the frame (-1: none)
    started: torch.Tensor  # [B] Marth started a move this frame

    @property
    def ps(self) -> Any:
        """The players after the frame."""
        return self.res.state.players

    @property
    def fs(self) -> Any:
        """The fight's state after the frame."""
        return self.res.state.fight


class _Tally:
    """What :func:`run_scenario` counts, frame by frame, and its result."""

    def __init__(self, envs: int, device: torch.device, melee: bool, fight: Any):
        self.envs, self.melee, self.fight = envs, melee, fight
        self.counts = {k: 0 for k in CHOICES}
        self.throws = {k: 0 for k in THROW_SLOTS}
        self.shield_hits = self.perfect = self.hits_taken = 0
        self.reactions: list[float] = []
        self.attack_start = torch.full((envs,), -1.0, device=device)
        self.upb_angles: list[float] = []
        self.double_jumps = 0
        self.was_off = torch.zeros(envs, dtype=torch.bool, device=device)
        self.out_after_fox = self.hog = 0
        self.a_twice = self.ground_jumps = self.stun_frames = self.di_frames = 0
        self.a_prev = torch.zeros(envs, dtype=torch.bool, device=device)
        self.waits: list[float] = []

    def add(self, fr: _Frame) -> None:
        """Count one frame."""
        self._inputs(fr)
        if self.melee:
            self._waits(fr)
        shield_on = self._choices(fr)
        f_slot = self._reactions(fr, shield_on)
        self._hits(fr, f_slot)
        self._off_stage(fr)

    def _inputs(self, fr: _Frame) -> None:
        """Never charged, never a jump from the ground (no short hop, no wavedash), DI while stunned."""
        pad, prev = fr.pad, fr.prev
        a_now = pad.a[:, CPU]
        self.a_twice += int((a_now & self.a_prev).sum())
        self.a_prev = a_now.clone()
        self.ground_jumps += int((pad.jump[:, CPU] & (prev.on_ground[:, CPU] > 0)).sum())
        stunned = (prev.hitstun_frames_left[:, CPU] > 0) & (fr.prev_lag <= 0)
        self.stun_frames += int(stunned.sum())
        self.di_frames += int((stunned & ((pad.sx[:, CPU] != 0) | (pad.sy[:, CPU] != 0))).sum())

    def _waits(self, fr: _Frame) -> None:
        """The melee CPU's wait between choosing an attack and playing it (its cpu_wait when a plan is set)."""
        # A choice with a wait leaves its plan set (the wait in cpu_wait); one with none is pressed on the
        # decision frame itself, so the plan is already spent: an attack started with no plan before it. A
        # dash grab starts under its own script's plan, its wait already counted when it was chosen.
        planned, planned_before = ((p == ATTACK) | (p == DASH_GRAB) for p in (fr.fs.cpu_plan, fr.prev_plan))
        chose = planned & ~planned_before
        self.waits += fr.fs.cpu_wait[chose].tolist()
        at_once = fr.started & (fr.prev_plan == NONE) & sum((fr.slot == s) for s in ATTACK_SLOTS).bool()
        self.waits += [0.0] * int(at_once.sum())

    def _choices(self, fr: _Frame) -> torch.Tensor:
        """Marth's choices and throws started this frame; returns where he raised his shield."""
        started, slot, ps = fr.started, fr.slot, fr.ps
        for name, slots in CHOICE_SLOTS.items():
            self.counts[name] += int(sum(int((started & (slot == s)).sum()) for s in slots))
        for name, s in THROW_SLOTS.items():
            self.throws[name] += int((started & (slot == s)).sum())
        shield_on = (ps.action[:, CPU] == SHIELD) & (fr.prev.action[:, CPU] != SHIELD)
        self.counts["shield"] += int(shield_on.sum())
        return shield_on

    def _reactions(self, fr: _Frame, shield_on: torch.Tensor) -> torch.Tensor:
        """Frames from the start of Fox's attack to Marth's defence; returns Fox's move slot."""
        ps, prev, i = fr.ps, fr.prev, fr.i
        # Fox's attacks: when each began (for the reaction time).
        f_slot, f_prev = _slot_of(ps, AGENT), _slot_of(prev, AGENT)
        f_att = (f_slot >= 0) & (self.fight.table.attack[rows_of(ps.move)[:, AGENT]] > 0)
        f_start = f_att & (ps.action_frame[:, AGENT] == 1) & ((f_slot != f_prev) | (prev.action_frame[:, AGENT] != 1))
        self.attack_start = torch.where(f_start, float(i), torch.where(f_att, self.attack_start, -1.0))
        defend = shield_on | (fr.started & sum((fr.slot == s) for s in DEFENSIVE).bool())
        react = defend & (self.attack_start >= 0)
        self.reactions += (float(i) - self.attack_start[react]).tolist()
        self.attack_start = torch.where(react, -1.0, self.attack_start)
        return f_slot

    def _hits(self, fr: _Frame, f_slot: torch.Tensor) -> None:
        """Hits on Marth: on his shield (perfect on its first frames) or on him."""
        ps, prev, res = fr.ps, fr.prev, fr.res
        new_lag = (fr.fs.hitlag_left[:, CPU] > 0) & (fr.prev_lag <= 0)
        on_shield = new_lag & (prev.action[:, CPU] == SHIELD) & (ps.action[:, CPU] == SHIELD) & (res.damage[:, CPU] == 0) \
            & (f_slot >= 0)
        self.shield_hits += int(on_shield.sum())
        pf = self.fight.perfect_shield_frames
        self.perfect += int((on_shield & (ps.action_frame[:, CPU] <= pf)).sum()) if pf else 0
        self.hits_taken += int((res.damage[:, CPU] > 0).sum())

    def _off_stage(self, fr: _Frame) -> None:
        """Off stage: Marth's double jumps and up-B angles; Marth going out after Fox; ledge hogging."""
        ps, prev, started, slot = fr.ps, fr.prev, fr.started, fr.slot
        air = ps.on_ground[:, CPU] == 0
        self.double_jumps += int((air & (prev.on_ground[:, CPU] == 0)
                                  & (ps.jumps_left[:, CPU] < prev.jumps_left[:, CPU])).sum())
        upb = started & (slot == Slot.UP_B)
        if bool(upb.any()):
            sx, sy = fr.pad.sx[:, CPU][upb], fr.pad.sy[:, CPU][upb]
            self.upb_angles += torch.rad2deg(torch.atan2(sy, sx.abs())).tolist()
        fox_off = (ps.position_x[:, AGENT].abs() > EDGE) & (ps.on_ground[:, AGENT] == 0)
        m_off = ps.position_x[:, CPU].abs() > EDGE
        self.out_after_fox += int((fox_off & m_off & ~self.was_off).sum())
        self.was_off = m_off
        self.hog += int((fox_off & started & (slot == Slot.LEDGE_HANG)).sum())

    def result(self, scenario: str, ps: Any, stocks0: torch.Tensor) -> dict[str, Any]:
        """The scenario's counts as :func:`run_scenario` returns them (``ps``: the players at the end)."""
        counts, total = self.counts, sum(self.counts.values())
        out: dict[str, Any] = {
            "choices": counts, "shares": {k: (v / total if total else 0.0) for k, v in counts.items()},
            "throws": self.throws, "shield_hits": self.shield_hits, "perfect_shields": self.perfect,
            "perfect_shield_share": self.perfect / self.shield_hits if self.shield_hits else 0.0,
            "hits_taken": self.hits_taken, "reaction_frames": _stats(self.reactions), "a_held_two_frames": self.a_twice,
            "ground_jumps": self.ground_jumps, "hitstun_frames": self.stun_frames, "di_frames": self.di_frames,
            "attack_wait_frames": _stats(self.waits),
        }
        if scenario == "fox_offstage":
            out.update(marth_went_off_stage=self.out_after_fox, ledge_hogs=self.hog)
        if scenario == "recovery":
            back = (ps.stock[:, CPU] == stocks0) & (ps.position_x[:, CPU].abs() <= EDGE + 5.0)
            out.update(double_jumps=self.double_jumps, up_b=counts["up_b"], side_b=counts["side_b"],
                       air_dodge=counts["air_dodge"], up_b_stick_angle_deg=_stats(self.upb_angles),
                       made_it_back=int(back.sum()), of=self.envs)
        return out


def _stats(values: list[float]) -> dict[str, float | None]:
    if not values:  # None, not NaN: the JSON stays standard
        return {"count": 0, "mean": None, "median": None, "min": None, "max": None}
    v = sorted(values)
    return {"count": len(v), "mean": sum(v) / len(v), "median": v[len(v) // 2], "min": v[0], "max": v[-1]}


def report(cpu: str, level: int, envs: int = 32, frames: int = 600, seed: int = 0,
           device: str | torch.device = "cpu", scenarios: tuple[str, ...] = SCENARIOS,
           progress: bool = True) -> dict[str, Any]:
    """Every scenario, and their choices summed (``all``). ``progress``: a bar over every scenario's frames, with
    the time left, where stderr is a terminal."""
    from melee_agent.report.progress import progress_bar  # noqa: PLC0415

    doc: dict[str, Any] = {"cpu": cpu, "level": level, "envs": envs, "frames": frames, "seed": seed, "scenarios": {}}
    with progress_bar(len(scenarios) * frames, "cpu-report", unit="frame", enabled=progress) as bar:
        for s in scenarios:
            bar.set_description(f"cpu-report: {s}")
            doc["scenarios"][s] = run_scenario(s, cpu, level, envs, frames, seed, device, bar)
    total = {k: sum(doc["scenarios"][s]["choices"][k] for s in scenarios) for k in CHOICES}
    n = sum(total.values())
    doc["choices"] = total
    doc["shares"] = {k: (v / n if n else 0.0) for k, v in total.items()}
    sh = sum(doc["scenarios"][s]["shield_hits"] for s in scenarios)
    pf = sum(doc["scenarios"][s]["perfect_shields"] for s in scenarios)
    doc["perfect_shield_share"] = pf / sh if sh else 0.0
    doc["perfect_shield_frames"] = PERFECT_SHIELD_FRAMES if cpu == "melee" else 0
    for k in ("a_held_two_frames", "ground_jumps", "hitstun_frames", "di_frames"):
        doc[k] = sum(doc["scenarios"][s][k] for s in scenarios)
    doc["attack_wait_frames"] = _merge_stats([doc["scenarios"][s]["attack_wait_frames"] for s in scenarios])
    return doc


def _merge_stats(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Count, mean, min and max over several :func:`_stats` (the median is not kept: None)."""
    parts = [p for p in parts if p["count"]]
    if not parts:
        return _stats([])
    n = sum(p["count"] for p in parts)
    return {"count": n, "mean": sum(p["mean"] * p["count"] for p in parts) / n, "median": None,
            "min": min(p["min"] for p in parts), "max": max(p["max"] for p in parts)}


def format_table(doc: dict[str, Any]) -> str:
    """The report as text: a row per choice (count and share per scenario), then the other figures."""
    sc = list(doc["scenarios"])
    head = f"cpu-report: cpu={doc['cpu']} level={doc['level']} ({doc['envs']} games x {doc['frames']} frames per scenario)"
    lines = [head, "choice".ljust(12) + "".join(s.rjust(16) for s in sc) + "all".rjust(16)]
    for k in CHOICES:
        cells = [f"{doc['scenarios'][s]['choices'][k]} ({100 * doc['scenarios'][s]['shares'][k]:.0f}%)" for s in sc]
        cells.append(f"{doc['choices'][k]} ({100 * doc['shares'][k]:.1f}%)")
        lines.append(k.ljust(12) + "".join(c.rjust(16) for c in cells))
    for key, label in (("shield_hits", "shield hits"), ("perfect_shields", "perfect"), ("hits_taken", "hits taken")):
        lines.append(label.ljust(12) + "".join(str(doc["scenarios"][s][key]).rjust(16) for s in sc))
    lines.append("reaction".ljust(12) + "".join(
        (f"{r['median']:.0f}f (n={r['count']})" if r["count"] else "-").rjust(16)
        for r in (doc["scenarios"][s]["reaction_frames"] for s in sc)))
    th = {k: sum(doc["scenarios"][s]["throws"][k] for s in sc) for k in THROW_SLOTS}
    lines.append("throws: " + ", ".join(f"{k} {v}" for k, v in th.items()))
    if "fox_offstage" in doc["scenarios"]:
        f = doc["scenarios"]["fox_offstage"]
        lines.append(f"Fox off stage: Marth went off stage {f['marth_went_off_stage']} times, hogged the ledge {f['ledge_hogs']}")
    if "recovery" in doc["scenarios"]:
        r = doc["scenarios"]["recovery"]
        a = r["up_b_stick_angle_deg"]
        ang = f"{a['min']:.0f}-{a['max']:.0f} deg" if a["count"] else "-"
        lines.append(f"recovery: {r['made_it_back']}/{r['of']} back; double jumps {r['double_jumps']}, up-B {r['up_b']} "
                     f"(stick angle {ang}), side-B {r['side_b']}, air dodge {r['air_dodge']}")
    lines.append(f"perfect shields: {100 * doc['perfect_shield_share']:.0f}% of shield hits")
    return "\n".join(lines)
