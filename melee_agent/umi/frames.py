"""UMI frames to the 27-float state, through the project's one state table.

A UMI frame holds both fighters' game-memory values (``umi.frame.FRAME``; ``players[0]`` is the
bot). :func:`fighter_fields` names each fighter's values as libmelee's ``PlayerState`` does
(:data:`melee_agent.envs.state.RAW_FIELDS`) and :func:`encode_frames` hands them to
:func:`melee_agent.envs.state.encode_players`, the function the libmelee path (``encode_gamestate``)
and the arena feed too. The one value that needs more than a rename is ``action_frame``: game
memory counts some actions' frames from 0 and others from 1; libmelee adds 1 to the
zero-indexed ones (its own ``actiondata.csv``, per character and action), so this does the same.

Example::

    >>> import numpy as np
    >>> from umi.frame import FRAME
    >>> encode_frames(np.zeros(3, FRAME), previous_action=[0, 2, 4], num_actions=5).shape
    (3, 27)
"""

from __future__ import annotations

import csv
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from umi.frame import FRAME

from melee_agent.envs.state import CLOCK_SCALE, STATE_LAYOUT, encode_players, get_layout, with_clock


@lru_cache(maxsize=1)
def zero_indexed_actions() -> np.ndarray:
    """``[character, action]`` bool: game memory counts this action's frames from 0 (libmelee's table).

    Read from libmelee's ``actiondata.csv`` without importing libmelee (which a bot never needs).
    """
    spec = importlib.util.find_spec("melee")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("libmelee (PyPI `melee`) is needed for its action table (actiondata.csv)")
    path = Path(next(iter(spec.submodule_search_locations))) / "actiondata.csv"
    with open(path, newline="") as f:
        pairs = [(int(r["character"]), int(r["action"])) for r in csv.DictReader(f) if r["zeroindex"] == "True"]
    table = np.zeros((256, 1 + max(a for _, a in pairs)), bool)
    for character, action in pairs:
        table[character, action] = True
    return table


def _zero_indexed(character: np.ndarray, action: np.ndarray) -> np.ndarray:
    table = zero_indexed_actions()
    known = action < table.shape[1]
    return known & table[character, np.where(known, action, 0)]


def fighter_fields(fighters: np.ndarray) -> dict[str, np.ndarray]:
    """One seat's fighters (``frames["players"][:, k]``, ``[N]``) as the raw fields the state table reads."""
    on_ground = fighters["on_ground"] != 0
    character = fighters["character"].astype(np.int64)
    action = fighters["action"].astype(np.int64)
    action_frame = fighters["action_frame"].astype(np.float32) + _zero_indexed(character, action)
    return {
        "position_x": fighters["x"],
        "position_y": fighters["y"],
        "speed_x": np.where(on_ground, fighters["speed_ground_x_self"], fighters["speed_air_x_self"]),
        "speed_y": fighters["speed_y_self"],
        "action": action,
        "facing": fighters["facing"] != 0,
        "invulnerable": fighters["invulnerable"] != 0,
        "on_ground": on_ground,
        "shield_strength": fighters["shield_strength"],
        "jumps_left": fighters["jumps_left"],
        "hitstun_frames_left": fighters["hitstun_left"],
        "percent": fighters["percent"],
        "action_frame": action_frame,
    }


def encode_frames(frames: np.ndarray, previous_action: Any, num_actions: int, layout: str = STATE_LAYOUT,
                  clock_frames: int = int(CLOCK_SCALE)) -> np.ndarray:
    """Encode UMI frames ``[N]`` (``umi.frame.FRAME``, seat 0 = the agent) as float32 ``[N, 27]``.

    ``previous_action`` is ``[N]`` (or one) action index in ``[0, num_actions)``. The values are
    those :func:`melee_agent.envs.state.encode_gamestate` gives the same game state read by libmelee.
    In the fight layout (``[N, 30]``) the time left is ``clock_frames - frame`` (UMI's ``frame`` counts as
    libmelee's: -123 on the first frame, 0 at GO) and the stocks are each seat's ``stocks``.
    """
    frames = np.asarray(frames)
    if frames.dtype != FRAME:
        raise ValueError(f"encode_frames takes umi.frame.FRAME records, not an array of dtype {frames.dtype}")
    frames = frames.reshape(-1)
    players = frames["players"]
    prev = np.broadcast_to(np.asarray(previous_action), (len(frames),))
    obs = encode_players(fighter_fields(players[:, 0]), fighter_fields(players[:, 1]), prev, num_actions)
    return with_clock(obs, get_layout(layout), clock_frames - np.maximum(frames["frame"], 0).astype(np.float32),
                      players[:, 0]["stocks"], players[:, 1]["stocks"])
