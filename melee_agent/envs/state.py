"""The 27-float state ("untouchable-27"): one table, and the encoders that all go through it.

The fight layout ("fight-30", :data:`LAYOUTS`) is those 27 floats and then the time left and both
players' stocks (:func:`encode_clock`), which a fight's value depends on and the 27 floats lack.

Layout: 13 values for the agent, the same 13 for the opponent, then the previous action.
Each value is ``clip((min(raw, cap) + offset) / scale, 0, 1)`` of a libmelee ``PlayerState``
field (``in_air`` is ``1 - on_ground``; ``speed_x`` is the ground or air self-speed, whichever
applies; ``percent`` is floored first, the whole percent the game shows and UMI frames carry).
Non-finite raw values (seen on pre-game frames) encode as 0.

The same table serves a live libmelee ``GameState`` (:func:`encode_gamestate`), arrays read from
a replay, the arena's device tensors (:func:`encode_players`, numpy or torch) and UMI frames
(:func:`melee_agent.umi.encode_frames`): each builds the per-player values named in
:data:`RAW_FIELDS` and hands them to :func:`encode_players` or :func:`encode_raw_matrix`.

Example::

    >>> import numpy as np
    >>> p = {f.source: np.zeros(2, np.float32) for f in STATE_FIELDS}
    >>> encode_players(p, p, previous_action=np.zeros(2), num_actions=5).shape
    (2, 27)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import torch

STATE_LAYOUT = "untouchable-27"
PLAYER_DIM = 13
STATE_DIM = 2 * PLAYER_DIM + 1
PREVIOUS_ACTION_INDEX = STATE_DIM - 1


@dataclass(frozen=True)
class StateLayout:
    """A state layout: its name (what model files and experience batches record), its width, and
    whether it shows the time left (then a clock's end is terminal, else a cut)."""

    name: str
    dim: int
    shows_clock: bool


#: The fight layout: the 27 floats, then the time left and both players' stocks (:func:`encode_clock`).
FIGHT_LAYOUT = "fight-30"
#: The three values the fight layout adds, in order.
CLOCK_NAMES = ("time_left", "agent_stocks", "opponent_stocks")
CLOCK_SCALE = 28_800.0  # frames: Melee's standard 8:00 clock at 60 frames a second (DESIGN.md "Fights")
STOCK_SCALE = 4.0  # stocks: Melee's standard 4 each (DESIGN.md "Fights")

#: The layouts by name; ``untouchable-27`` is the default and the dodging game's.
LAYOUTS: dict[str, StateLayout] = {
    STATE_LAYOUT: StateLayout(STATE_LAYOUT, STATE_DIM, shows_clock=False),
    FIGHT_LAYOUT: StateLayout(FIGHT_LAYOUT, STATE_DIM + len(CLOCK_NAMES), shows_clock=True),
}


def get_layout(name: str) -> StateLayout:
    """The layout called ``name``; a ``ValueError`` naming ``env.state_layout`` for an unknown one."""
    if name not in LAYOUTS:
        raise ValueError(f"unknown env.state_layout {name!r}; known: {', '.join(LAYOUTS)}")
    return LAYOUTS[name]


@dataclass(frozen=True)
class StateField:
    name: str
    source: str  # key in a player's raw-field mapping (libmelee PlayerState names, flattened)
    offset: float = 0.0
    scale: float = 1.0
    cap: float = math.inf  # raw values are capped here before scaling
    invert: bool = False  # value = 1 - raw (in_air from on_ground)
    floor: bool = False  # raw values are floored first (percent: the whole percent the game shows)


STATE_FIELDS: tuple[StateField, ...] = (
    StateField("x", "position_x", offset=300.0, scale=600.0),
    StateField("y", "position_y", offset=200.0, scale=500.0),
    StateField("speed_x", "speed_x", offset=20.0, scale=40.0),
    StateField("speed_y", "speed_y", offset=20.0, scale=40.0),
    StateField("action", "action", scale=400.0),
    StateField("facing", "facing"),
    StateField("invulnerable", "invulnerable"),
    StateField("in_air", "on_ground", invert=True),
    StateField("shield", "shield_strength", scale=60.0),
    StateField("jumps_left", "jumps_left", scale=2.0, cap=2.0),
    StateField("hitstun", "hitstun_frames_left", scale=60.0, cap=60.0),
    StateField("percent", "percent", scale=999.0, cap=999.0, floor=True),
    StateField("action_frame", "action_frame", scale=120.0, cap=120.0),
)
assert len(STATE_FIELDS) == PLAYER_DIM

#: Column names of the full 27-float vector, in order.
STATE_NAMES: tuple[str, ...] = (
    tuple(f"agent_{f.name}" for f in STATE_FIELDS)
    + tuple(f"opponent_{f.name}" for f in STATE_FIELDS)
    + ("previous_action",)
)
RAW_FIELDS: tuple[str, ...] = tuple(f.source for f in STATE_FIELDS)


def encode_clock(frames_left: Any, agent_stock: Any, opponent_stock: Any) -> Any:
    """The fight layout's three values (``[..., 3]``, torch in, torch out; else numpy): the time left
    ``frames_left / 28,800`` (Melee's 8:00, so a value is the same time whatever the game's clock) and each
    player's stocks ``/ 4``, each clipped to [0, 1].

    >>> encode_clock(np.array([28_800.0, 3_600.0]), np.array([4, 1]), np.array([2, 0])).tolist()
    [[1.0, 1.0, 0.5], [0.125, 0.25, 0.0]]
    """
    if _is_torch(frames_left) or _is_torch(agent_stock):
        device = (frames_left if _is_torch(frames_left) else agent_stock).device
        t, a, o = torch.broadcast_tensors(*(torch.as_tensor(v, device=device).to(torch.float32)
                                            for v in (frames_left, agent_stock, opponent_stock)))
        return torch.stack((t / CLOCK_SCALE, a / STOCK_SCALE, o / STOCK_SCALE), -1).clamp(0.0, 1.0)
    t, a, o = np.broadcast_arrays(*(np.asarray(v, np.float32) for v in (frames_left, agent_stock, opponent_stock)))
    return np.clip(np.stack((t / np.float32(CLOCK_SCALE), a / np.float32(STOCK_SCALE), o / np.float32(STOCK_SCALE)),
                            -1), 0.0, 1.0).astype(np.float32)


def with_clock(obs: Any, layout: StateLayout, frames_left: Any, agent_stock: Any, opponent_stock: Any) -> Any:
    """``obs`` (the 27 floats, ``[..., 27]``) in ``layout``: as it is, or with :func:`encode_clock`'s values after it."""
    if not layout.shows_clock:
        return obs
    extra = encode_clock(frames_left, agent_stock, opponent_stock)
    if _is_torch(obs):
        return torch.cat((obs, torch.as_tensor(extra, device=obs.device)), -1)
    return np.concatenate((obs, np.asarray(extra, np.float32)), -1)


def _is_torch(x: Any) -> bool:
    return isinstance(x, torch.Tensor)


def encode_players(
    agent: Mapping[str, Any],
    opponent: Mapping[str, Any],
    previous_action: Any,
    num_actions: int,
) -> Any:
    """Encode batches of raw player fields into ``[B, 27]`` (torch in, torch out; else numpy).

    ``agent`` and ``opponent`` map each name in :data:`RAW_FIELDS` to a ``[B]`` array (or a
    scalar); booleans are fine. ``previous_action`` is ``[B]`` action indices in
    ``[0, num_actions)``. The fields are stacked into ``[B, 2, 13]`` and encoded by
    :func:`encode_raw_matrix`, the one implementation of the table.
    """
    cols = []
    for side in (agent, opponent):
        missing = [f.source for f in STATE_FIELDS if f.source not in side]
        if missing:
            raise KeyError(f"player fields missing: {', '.join(missing)}")
        cols.extend(side[f.source] for f in STATE_FIELDS)
    if _is_torch(previous_action) or _is_torch(cols[0]):
        device = (previous_action if _is_torch(previous_action) else cols[0]).device
        *fields, prev = torch.broadcast_tensors(
            *(torch.as_tensor(c, device=device).to(torch.float32) for c in (*cols, previous_action)))
        return encode_raw_matrix(torch.stack(fields, dim=-1).unflatten(-1, (2, PLAYER_DIM)), prev, num_actions)
    *fields, prev = np.broadcast_arrays(*(np.asarray(c, dtype=np.float32) for c in (*cols, previous_action)))
    raw = torch.from_numpy(np.stack(fields, axis=-1)).unflatten(-1, (2, PLAYER_DIM))
    return encode_raw_matrix(raw, torch.from_numpy(np.array(prev)), num_actions).numpy()


def player_fields(player: Any) -> dict[str, float]:
    """Raw fields of one libmelee ``PlayerState``, flattened to the names in :data:`RAW_FIELDS`."""
    on_ground = bool(player.on_ground)
    speed_x = player.speed_ground_x_self if on_ground else player.speed_air_x_self
    action = player.action
    return {
        "position_x": float(player.position.x),
        "position_y": float(player.position.y),
        "speed_x": float(speed_x),
        "speed_y": float(player.speed_y_self),
        "action": float(getattr(action, "value", action)),
        "facing": float(bool(player.facing)),
        "invulnerable": float(bool(player.invulnerable)),
        "on_ground": float(on_ground),
        "shield_strength": float(player.shield_strength),
        "jumps_left": float(player.jumps_left),
        "hitstun_frames_left": float(player.hitstun_frames_left),
        "percent": float(player.percent),
        "action_frame": float(player.action_frame),
    }


def encode_gamestate(
    gamestate: Any,
    agent_port: int,
    opponent_port: int,
    previous_action: int = 0,
    num_actions: int = 5,
    layout: str = STATE_LAYOUT,
    clock_frames: int = int(CLOCK_SCALE),
) -> np.ndarray:
    """Encode one libmelee ``GameState`` as a float32 ``[27]`` vector for the agent's port (``[30]`` in the fight
    layout: the time left is ``clock_frames - gamestate.frame``, the timer counting from GO, libmelee's frame 0,
    and showing the whole clock during the countdown before it; the stocks are ``PlayerState.stock``)."""
    players = gamestate.players
    for role, port in (("agent", agent_port), ("opponent", opponent_port)):
        if port not in players:
            raise KeyError(
                f"{role} port {port} is not in this game (ports present: {sorted(players)})"
            )
    agent = player_fields(players[agent_port])
    opponent = player_fields(players[opponent_port])
    obs = encode_players(agent, opponent, previous_action, num_actions)
    # The countdown before GO (frames -123..-1) is not on the clock: the timer shows all of it.
    return with_clock(obs, get_layout(layout), clock_frames - max(float(gamestate.frame), 0.0), float(players[agent_port].stock),
                      float(players[opponent_port].stock))


_TABLE_CACHE: dict[Any, tuple[torch.Tensor, ...]] = {}


def _table(dtype: torch.dtype, device: torch.device) -> tuple[torch.Tensor, ...]:
    """The table's constants as tensors (offset, scale, cap, invert, floor), built once per device."""
    key = (device, dtype)
    if key not in _TABLE_CACHE:
        t = lambda vals: torch.tensor(vals, dtype=dtype, device=device)  # noqa: E731
        _TABLE_CACHE[key] = (
            t([f.offset for f in STATE_FIELDS]), t([f.scale for f in STATE_FIELDS]),
            t([f.cap if f.cap != math.inf else 3.0e38 for f in STATE_FIELDS]),
            torch.tensor([f.invert for f in STATE_FIELDS], device=device),
            torch.tensor([f.floor for f in STATE_FIELDS], device=device),
        )
    return _TABLE_CACHE[key]


def encode_raw_matrix(raw: torch.Tensor, previous_action: torch.Tensor, num_actions: int) -> torch.Tensor:
    """The table applied to a torch ``[..., 2, 13]`` tensor of the :data:`RAW_FIELDS` in order (agent
    then opponent) and ``[...]`` previous actions; returns ``[..., 27]``.

    Per value: ``clip((min(raw, cap) + offset) / scale, 0, 1)`` (``1 - raw`` first where the field
    inverts, ``floor(raw)`` where it floors); non-finite raw values count as 0. Every encoder (live game state, replay file,
    arena tensors) ends here.
    """
    offset, scale, cap, invert, floor = _table(raw.dtype, raw.device)
    v = torch.nan_to_num(raw, nan=0.0, posinf=0.0, neginf=0.0)
    v = torch.where(invert, 1.0 - v, torch.where(floor, torch.floor(v), v))
    v = ((torch.minimum(v, cap) + offset) / scale).clamp(0.0, 1.0)
    prev = (previous_action.to(raw.dtype) / float(max(num_actions - 1, 1))).clamp(0.0, 1.0)
    return torch.cat((v.flatten(-2), prev.unsqueeze(-1)), dim=-1)
