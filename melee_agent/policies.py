"""Policies that map a batch of 27-float states to actions: scripted baselines and trained models.

``make_policy(spec, action_set, device)`` with ``spec`` one of ``"noop"``, ``"random"``,
``"dodger"`` or a path to a model ``.safetensors`` file. Every policy reads only the state vector,
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
    dodge = aset.index("spot_dodge" if action_set == "untouchable" else "l_down")

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
    path = Path(spec)
    if path.suffix == ".safetensors" or path.exists():
        if not path.exists():
            raise FileNotFoundError(f"model file not found: {path}")
        return model_policy(path, action_set, device)
    raise ValueError(f"unknown policy {spec!r}: use noop, random, dodger or a .safetensors model file")
