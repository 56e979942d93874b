"""Policies that map a batch of 27-float states to actions: scripted baselines and trained models.

``make_policy(spec, action_set, device)`` with ``spec`` one of ``"noop"``, ``"random"``,
``"dodger"``, ``"fighter"`` or a path to a model ``.safetensors`` file. Every policy reads only the state vector,
so the same one plays the arena and real Melee.

``dodger`` shows the task can be solved: when the opponent's action turns into one of Marth's
attacks (its action_frame is in the first few frames) and it is close enough to reach, spot
dodge; otherwise stand still.

Example::

    >>> import torch
    >>> pi = make_policy("noop", "untouchable")
    >>> pi(torch.zeros(3, 27)).tolist()
    [0, 0, 0]
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import torch

from melee.enums import Action

from melee_agent.actions import get_action_set
from melee_agent.arena.data import MARTH_ATTACK_ACTIONS
from melee_agent.state import STATE_FIELDS, STATE_NAMES

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


def dodger_policy(action_set: str, reach: float = 45.0, dash_reach: float = 70.0, react_frames: int = 3) -> Policy:
    aset = get_action_set(action_set)
    noop = aset.noop_index
    dodge = aset.index("spot_dodge" if "spot_dodge" in aset.names else "l_down")

    def act(obs: torch.Tensor) -> torch.Tensor:
        opp_action = torch.round(_raw(obs, "opponent_action"))
        opp_frame = torch.round(_raw(obs, "opponent_action_frame"))
        dist = (_raw(obs, "agent_x") - _raw(obs, "opponent_x")).abs()
        attacking = torch.zeros_like(dist, dtype=torch.bool)
        for a in MARTH_ATTACK_ACTIONS:
            attacking |= opp_action == a
        dash = opp_action == Action.DASH_ATTACK.value
        close = dist <= torch.where(dash, torch.full_like(dist, dash_reach), torch.full_like(dist, reach))
        go = attacking & (opp_frame <= react_frames) & close
        return torch.where(go, dodge, noop).long()

    return act


def fighter_policy(action_set: str) -> Policy:
    """A scripted Fox for fights (``basic`` actions): it approaches, hits and recovers.

    Off stage it double-jumps toward the stage, then up-Bs (the firefox: aimed up from below the
    ledge, sideways from beside it) and drifts in. On stage it dashes at Marth; in reach it shines,
    dash-attacks, dash-grabs (then throws toward the nearer edge) or down-smashes below 80% and
    up-smashes from 80% (the ``a_up`` macro after a dash is a smash: the stick moved this frame).
    It turns to face Marth first and never dashes off the stage.
    """
    from melee_agent.arena.fight.frame import EDGE  # noqa: PLC0415

    aset = get_action_set(action_set)
    if action_set != "basic":
        raise ValueError(f"the fighter policy plays the 'basic' action set, not {action_set!r}")
    idx = {name: aset.index(name) for name in aset.names}

    def act(obs: torch.Tensor) -> torch.Tensor:
        ax, ay = _raw(obs, "agent_x"), _raw(obs, "agent_y")
        ox, oy = _raw(obs, "opponent_x"), _raw(obs, "opponent_y")
        action = torch.round(_raw(obs, "agent_action"))
        jumps = torch.round(_raw(obs, "agent_jumps_left"))
        facing = torch.where(_raw(obs, "agent_facing") > 0.5, 1.0, -1.0)
        opp_pct = _raw(obs, "opponent_percent")
        frame = torch.round(_raw(obs, "agent_action_frame")).long()
        toward_stage = torch.where(ax > 0, idx["none_left"], idx["none_right"])
        jump_in = torch.where(ax > 0, idx["y_left"], idx["y_right"])
        dx = ox - ax
        to_opp = torch.where(dx > 0, idx["none_right"], idx["none_left"])
        dirx = torch.where(dx > 0, 1.0, -1.0)
        # --- off stage: jump, firefox, drift in ---
        off = (ax.abs() > EDGE) | (ay < -5.0)
        charging = (action == Action.SWORD_DANCE_3_MID.value) | (action == Action.SWORD_DANCE_3_LOW.value)  # 353/354
        helpless = (action == Action.DEAD_FALL.value) | (action == 355) | (action == 356)
        aim = torch.where(ay < -20.0, idx["none_up"], toward_stage)
        recover = torch.where(charging, aim, torch.where(
            jumps > 0, jump_in, torch.where(helpless, toward_stage, idx["b_up"])))
        recover = torch.where(~charging & (jumps > 0) & (ay > 20.0), toward_stage, recover)
        # In hitstun it only DIs toward the stage (holding Y through it would leave no fresh press for the jump).
        recover = torch.where(_raw(obs, "agent_hitstun") > 0, toward_stage, recover)
        # --- on stage ---
        dist = dx.abs()
        near_edge = (ax * dirx > 0) & (ax.abs() > EDGE - 12.0)
        holding = action == Action.GRAB_WAIT.value
        throw = torch.where(ax > 0, torch.where(facing > 0, idx["none_right"], idx["none_left"]),
                            torch.where(facing > 0, idx["none_right"], idx["none_left"]))
        throw = torch.where(opp_pct > 100, idx["none_up"], throw)
        mix = (frame + opp_pct.long()) % 4
        close = torch.where(mix == 0, idx["b_down"], torch.where(mix == 1, idx["z_neutral"], torch.where(
            mix == 2, idx["a_neutral"], idx["a_down"])))
        close = torch.where(opp_pct >= 80.0, idx["a_up"], close)
        facing_ok = facing == dirx
        in_reach = (dist < 22.0) & ((oy - ay).abs() < 20.0)
        ground = torch.where(in_reach & facing_ok, close, torch.where(
            in_reach, to_opp, torch.where(near_edge, idx["a_down"], to_opp)))
        # A from a dash is a dash attack: to smash, it stops first (one neutral macro).
        dashing = (action == Action.DASHING.value) | (action == Action.RUNNING.value)
        ground = torch.where(in_reach & facing_ok & dashing & (opp_pct >= 80.0), idx["none_neutral"], ground)
        ground = torch.where(holding, throw, ground)
        return torch.where(off, recover, ground).long()

    return act


def model_policy(path: str | Path, action_set: str, device: str | torch.device = "cpu") -> Policy:
    from melee_agent.model import load_model  # noqa: PLC0415

    model, _ = load_model(path, action_set=action_set, device=device)

    @torch.inference_mode()
    def act(obs: torch.Tensor) -> torch.Tensor:
        return model(obs.to(device)).argmax(dim=1).to(obs.device)

    return act


def make_policy(spec: str, action_set: str, device: str | torch.device = "cpu", seed: int = 0) -> Policy:
    if spec == "noop":
        return noop_policy(action_set)
    if spec == "random":
        return random_policy(action_set, seed)
    if spec == "dodger":
        return dodger_policy(action_set)
    if spec == "fighter":
        return fighter_policy(action_set)
    path = Path(spec)
    if path.suffix == ".safetensors" or path.exists():
        if not path.exists():
            raise FileNotFoundError(f"model file not found: {path}")
        return model_policy(path, action_set, device)
    raise ValueError(f"unknown policy {spec!r}: use noop, random, dodger, fighter or a .safetensors model file")
