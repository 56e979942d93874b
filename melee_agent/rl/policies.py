"""Policies that map a batch of 27-float states to actions: scripted baselines and trained models.

``make_policy(spec, action_set, device)`` with ``spec`` one of ``"noop"``, ``"random"``,
``"dodger"``, ``"roller"``, ``"fighter"`` or a path to a model ``.safetensors`` file. Every policy reads only the state vector,
so the same one plays the arena and real Melee.

``dodger`` shows the task can be solved: when the opponent's action turns into one of Marth's
attacks or grabs (its action_frame is in the first few frames) and it is close enough to reach, spot
dodge; otherwise stand still. ``roller`` rolls through Marth (toward him, out behind him) whenever he is near,
whatever he is doing: against Melee's versus CPU, which turns for 13 frames when its target gets behind it, that
alone stays untouched through many level-9 minutes (docs/cpu.md).

Example::

    >>> import torch
    >>> pi = make_policy("noop", "untouchable")
    >>> pi(torch.zeros(3, 27)).tolist()
    [0, 0, 0]
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Callable

import torch

from melee.enums import Action

from melee_agent.envs.actions import base_name, get_action_set
from melee_agent.arena.libmelee_data import MARTH_ATTACK_ACTIONS, MARTH_GRAB_ACTIONS
from melee_agent.envs.state import STATE_FIELDS, STATE_NAMES

Policy = Callable[[torch.Tensor], torch.Tensor]
_COL = {name: i for i, name in enumerate(STATE_NAMES)}
_SCALE = {f.name: (f.offset, f.scale) for f in STATE_FIELDS}


def _raw(obs: torch.Tensor, name: str) -> torch.Tensor:
    field = name.split("_", 1)[1]
    offset, scale = _SCALE[field]
    return obs[:, _COL[name]] * scale - offset


def noop_policy(action_set: str) -> Policy:
    noop = get_action_set(action_set).noop_index
    return lambda obs: torch.full((obs.shape[0],), noop, dtype=torch.long, device=obs.device)


def random_policy(action_set: str, seed: int = 0) -> Policy:
    n = get_action_set(action_set).num_actions
    gen: dict[str, torch.Generator] = {}

    def act(obs: torch.Tensor) -> torch.Tensor:
        g = gen.get(str(obs.device))
        if g is None:
            g = gen[str(obs.device)] = torch.Generator(device=obs.device).manual_seed(seed)
        return torch.randint(0, n, (obs.shape[0],), device=obs.device, generator=g)

    return act


#: Marth's threats out of a dash, which slide in farther than a standing one (the dodger's ``dash_reach``).
_DASH_THREATS = (Action.DASH_ATTACK.value, Action.GRAB_RUNNING.value)


def dodger_policy(action_set: str, reach: float = 45.0, dash_reach: float = 70.0, react_frames: int = 3) -> Policy:
    """Spot dodge when Marth starts an attack or a grab within ``reach`` (``dash_reach`` for one out of a dash)
    and at most ``react_frames`` into it, else stand: a spot dodge's intangibility beats hitboxes and grab boxes
    alike."""
    aset = get_action_set(action_set)
    noop = aset.noop_index
    dodge = aset.index("spot_dodge" if "spot_dodge" in aset.names else "l_down")

    def act(obs: torch.Tensor) -> torch.Tensor:
        opp_action = torch.round(_raw(obs, "opponent_action"))
        opp_frame = torch.round(_raw(obs, "opponent_action_frame"))
        dist = (_raw(obs, "agent_x") - _raw(obs, "opponent_x")).abs()
        attacking = torch.zeros_like(dist, dtype=torch.bool)
        for a in MARTH_ATTACK_ACTIONS + MARTH_GRAB_ACTIONS:
            attacking |= opp_action == a
        dash = torch.zeros_like(attacking)
        for a in _DASH_THREATS:
            dash |= opp_action == a
        close = dist <= torch.where(dash, torch.full_like(dist, dash_reach), torch.full_like(dist, reach))
        go = attacking & (opp_frame <= react_frames) & close
        return torch.where(go, dodge, noop).long()

    return act


def roller_policy(action_set: str, near: float = 30.0) -> Policy:
    """Roll toward Marth, through him, whenever he is within ``near`` (x distance; 30 is a round figure, not
    fitted: docs/cpu.md gives 30 and 40 side by side); otherwise stand. Needs the rolls (``untouchable``, ``fight``)."""
    aset = get_action_set(action_set)
    if "roll_left" not in aset.names or "roll_right" not in aset.names:
        raise ValueError(f"the roller policy needs roll_left and roll_right, which action set {action_set!r} lacks "
                         "(use untouchable or fight)")
    noop, left, right = aset.noop_index, aset.index("roll_left"), aset.index("roll_right")

    def act(obs: torch.Tensor) -> torch.Tensor:
        dx = _raw(obs, "opponent_x") - _raw(obs, "agent_x")
        roll = torch.where(dx > 0, right, left)
        return torch.where(dx.abs() < near, roll, noop).long()

    return act


def fighter_policy(action_set: str) -> Policy:
    """A scripted Fox for fights: it approaches, hits and recovers (``basic`` or ``fight`` actions).

    Off stage it double-jumps toward the stage, then up-Bs (the firefox: aimed up from below the
    ledge, sideways from beside it) and drifts in. On stage it dashes at Marth; in reach it shines,
    dash-attacks (``basic``; jabs with ``fight``), grabs (then throws forward, up from 100%) or
    down-smashes below 80% and up-smashes from 80% (out of a dash it stops first: A from a
    dash is a dash attack). It turns to face Marth first and never dashes off the stage. Both sets
    play the same plan; ``fight``'s macros are longer (a dash is 9 frames, a firefox its whole charge).
    """
    plan = _FIGHTERS.get(base_name(action_set))  # a padded set plays the same plan, each decision held longer
    if plan is not None:
        return plan(action_set)
    raise ValueError(f"the fighter policy plays the {' or '.join(repr(a) for a in FIGHTER_SETS)} action set, "
                     f"not {action_set!r} (a padded one, NAME:N, plays as NAME does)")


class _Read:
    """The fighter's reading of a state batch (raw game units, libmelee's names)."""

    def __init__(self, obs: torch.Tensor):
        from melee_agent.arena.fight.frame import EDGE  # noqa: PLC0415

        self.ax, self.ay = _raw(obs, "agent_x"), _raw(obs, "agent_y")
        self.ox, self.oy = _raw(obs, "opponent_x"), _raw(obs, "opponent_y")
        self.action = torch.round(_raw(obs, "agent_action"))
        self.jumps = torch.round(_raw(obs, "agent_jumps_left"))
        self.facing = torch.where(_raw(obs, "agent_facing") > 0.5, 1.0, -1.0)
        self.opp_pct = _raw(obs, "opponent_percent")
        self.frame = torch.round(_raw(obs, "agent_action_frame")).long()
        self.hitstun = _raw(obs, "agent_hitstun") > 0
        self.dx = self.ox - self.ax
        self.dirx = torch.where(self.dx > 0, 1.0, -1.0)
        self.off = (self.ax.abs() > EDGE) | (self.ay < -5.0)
        self.helpless = (self.action == Action.DEAD_FALL.value) | (self.action == 355) | (self.action == 356)
        self.charging = (self.action == Action.SWORD_DANCE_3_MID.value) | (self.action == Action.SWORD_DANCE_3_LOW.value)
        self.in_reach = (self.dx.abs() < 22.0) & ((self.oy - self.ay).abs() < 20.0)
        self.near_edge = (self.ax * self.dirx > 0) & (self.ax.abs() > EDGE - 12.0)
        self.facing_ok = self.facing == self.dirx
        self.holding = self.action == Action.GRAB_WAIT.value
        self.dashing = (self.action == Action.DASHING.value) | (self.action == Action.RUNNING.value)
        self.mix = (self.frame + self.opp_pct.long()) % 4  # varies the close-range attack

    def left_right(self, cond: torch.Tensor, left: int, right: int) -> torch.Tensor:
        return torch.where(cond, left, right)


def _basic_fighter(action_set: str) -> Policy:
    aset = get_action_set(action_set)
    idx = {name: aset.index(name) for name in aset.names}

    def act(obs: torch.Tensor) -> torch.Tensor:
        r = _Read(obs)
        toward_stage = r.left_right(r.ax > 0, idx["none_left"], idx["none_right"])
        jump_in = r.left_right(r.ax > 0, idx["y_left"], idx["y_right"])
        to_opp = r.left_right(r.dx <= 0, idx["none_left"], idx["none_right"])
        # --- off stage: jump, firefox (aimed while it charges), drift in ---
        aim = torch.where(r.ay < -20.0, idx["none_up"], toward_stage)
        recover = torch.where(r.charging, aim, torch.where(
            r.jumps > 0, jump_in, torch.where(r.helpless, toward_stage, idx["b_up"])))
        recover = torch.where(~r.charging & (r.jumps > 0) & (r.ay > 20.0), toward_stage, recover)
        # In hitstun it only DIs toward the stage (holding Y through it would leave no fresh press for the jump).
        recover = torch.where(r.hitstun, toward_stage, recover)
        # --- on stage ---
        throw = r.left_right(r.facing < 0, idx["none_left"], idx["none_right"])
        throw = torch.where(r.opp_pct > 100, idx["none_up"], throw)
        close = torch.where(r.mix == 0, idx["b_down"], torch.where(r.mix == 1, idx["z_neutral"], torch.where(
            r.mix == 2, idx["a_neutral"], idx["a_down"])))
        close = torch.where(r.opp_pct >= 80.0, idx["a_up"], close)
        ground = torch.where(r.in_reach & r.facing_ok, close, torch.where(
            r.in_reach, to_opp, torch.where(r.near_edge, idx["a_down"], to_opp)))
        # A from a dash is a dash attack: to smash, it stops first (one neutral macro).
        ground = torch.where(r.in_reach & r.facing_ok & r.dashing & (r.opp_pct >= 80.0), idx["none_neutral"], ground)
        ground = torch.where(r.holding, throw, ground)
        return torch.where(r.off, recover, ground).long()

    return act


def _fight_fighter(action_set: str) -> Policy:
    aset = get_action_set(action_set)
    idx = {name: aset.index(name) for name in aset.names}

    def act(obs: torch.Tensor) -> torch.Tensor:
        r = _Read(obs)
        drift_in = r.left_right(r.ax > 0, idx["dash_left"], idx["dash_right"])  # full stick: full drift
        jump_in = r.left_right(r.ax > 0, idx["double_jump_left"], idx["double_jump_right"])
        to_opp = r.left_right(r.dx <= 0, idx["dash_left"], idx["dash_right"])
        turn_and_tilt = r.left_right(r.dx <= 0, idx["ftilt_left"], idx["ftilt_right"])  # turns Fox first
        # --- off stage: jump, firefox (the macro holds its aim through the charge), drift in ---
        up_b = torch.where(r.ay < -20.0, idx["up_b_up"], r.left_right(r.ax > 0, idx["up_b_left"], idx["up_b_right"]))
        recover = torch.where(r.jumps > 0, jump_in, torch.where(r.helpless, drift_in, up_b))
        recover = torch.where((r.jumps > 0) & (r.ay > 20.0), drift_in, recover)
        recover = torch.where(r.hitstun, drift_in, recover)  # DI toward the stage
        # --- on stage ---
        throw = r.left_right(r.facing < 0, idx["throw_left"], idx["throw_right"])  # a forward throw
        throw = torch.where(r.opp_pct > 100, idx["throw_up"], throw)
        close = torch.where(r.mix == 0, idx["shine"], torch.where(r.mix == 1, idx["grab"], torch.where(
            r.mix == 2, idx["jab"], idx["dsmash"])))
        close = torch.where(r.opp_pct >= 80.0, idx["usmash"], close)
        ground = torch.where(r.in_reach & r.facing_ok, close, torch.where(
            r.in_reach, turn_and_tilt, torch.where(r.near_edge, idx["dsmash"], to_opp)))
        ground = torch.where(r.in_reach & r.facing_ok & r.dashing & (r.opp_pct >= 80.0), idx["noop"], ground)
        ground = torch.where(r.holding, throw, ground)
        return torch.where(r.off, recover, ground).long()

    return act


_FIGHTERS: dict[str, Callable[[str], Policy]] = {"basic": _basic_fighter, "fight": _fight_fighter}
#: The action sets (by base name) the scripted fighter has a plan for.
FIGHTER_SETS = tuple(_FIGHTERS)


def model_policy(path: str | Path, action_set: str, device: str | torch.device = "cpu",
                 delay_frames: int | None = None) -> Policy:
    """The model file's greedy policy; a warning where the file trained under another ``delay_frames``."""
    from melee_agent.rl.model import load_model  # noqa: PLC0415

    # Any state layout: the environment is built in the file's (cli.common.config_for_policy reads it).
    model, meta = load_model(path, action_set=action_set, state_layout=None, device=device)
    trained = meta.get("delay_frames")
    if delay_frames is not None and trained is not None and trained != delay_frames:
        warnings.warn(f"{path}: the model trained with {trained} frames of input delay and plays here with "
                      f"{delay_frames} (env.delay_frames); it reads the game as if its inputs arrived {trained} frames "
                      "late", stacklevel=2)

    @torch.inference_mode()
    def act(obs: torch.Tensor) -> torch.Tensor:
        return model(obs.to(device)).argmax(dim=1).to(obs.device)

    return act


#: The policies named rather than loaded from a file.
SCRIPTED = ("noop", "random", "dodger", "roller", "fighter")


def make_policy(spec: str, action_set: str, device: str | torch.device = "cpu", seed: int = 0,
                delay_frames: int | None = None) -> Policy:
    """The named baseline, or a model file's policy (``delay_frames``: the delay it will play at, checked
    against the one the file trained under)."""
    if spec == "noop":
        return noop_policy(action_set)
    if spec == "random":
        return random_policy(action_set, seed)
    if spec == "dodger":
        return dodger_policy(action_set)
    if spec == "roller":
        return roller_policy(action_set)
    if spec == "fighter":
        return fighter_policy(action_set)
    path = Path(spec)
    if path.suffix == ".safetensors" or path.exists():
        if not path.exists():
            raise FileNotFoundError(f"model file not found: {path}")
        return model_policy(path, action_set, device, delay_frames=delay_frames)
    raise ValueError(f"unknown policy {spec!r}: use noop, random, dodger, roller, fighter or a .safetensors model file")
