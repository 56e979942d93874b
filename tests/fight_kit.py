"""Helpers for the fight tests: an arena in a chosen position, frames driven with both controllers by hand."""

from __future__ import annotations

import torch
from melee.enums import Action

from melee_agent.arena import Arena
from melee_agent.arena.env_state import AGENT, CPU, with_player
from melee_agent.arena.fight.fighter import rows_of
from melee_agent.arena.fight.frame import EDGE, count_down, play
from melee_agent.arena.fight.moves import NUM_SLOTS
from melee_agent.arena.fight.state import Pad

STANDING = float(Action.STANDING.value)
__all__ = ["AGENT", "CPU", "EDGE", "fight", "place", "pad", "frames", "slot_of"]


def fight(n: int = 1, level: int = 9, **kw) -> Arena:
    """A fight arena, reset; with the ``basic`` action set unless ``action_set`` says otherwise."""
    kw.setdefault("action_set", "basic")
    env = Arena(n, cpu_level=level, seed=0, game="fight", **kw)
    env.reset()
    return env


def place(env: Arena, who: int, **fields) -> None:
    """Put player ``who`` in a state (defaults: standing on the stage, free)."""
    base = dict(position_y=0.0, on_ground=1.0, speed_x=0.0, speed_y=0.0, action=STANDING, move=-1.0, busy_left=0.0,
                action_frame=1.0, percent=0.0, jumps_left=2.0, invulnerability_left=0.0)
    base.update(fields)
    env.state = with_player(env.state, who, **base)


def pad(n: int, fox: dict | None = None, marth: dict | None = None) -> Pad:
    """Both controllers for one frame: dicts of a, b, jump, z, shield (bool) and sx, sy (-1..1)."""
    cols = []
    for d in (fox or {}, marth or {}):
        cols.append({k: torch.full((n,), float(d.get(k, 0.0))) for k in ("a", "b", "jump", "z", "shield", "sx", "sy")})
    return Pad(*(torch.stack((cols[0][k], cols[1][k]), 1) if k in ("sx", "sy") else
                 torch.stack((cols[0][k], cols[1][k]), 1) > 0 for k in Pad._fields[:7]))  # lr: as shield; no C-stick


def frames(env: Arena, n: int, fox: dict | None = None, marth: dict | None = None,
           fox_first: dict | None = None) -> torch.Tensor:
    """Play ``n`` frames with these controllers (``fox_first`` on the first frame only); the damage taken ``[B, 2]``."""
    B = env.num_envs
    total = torch.zeros(B, 2)
    for i in range(n):
        state, frozen = count_down(env.state)
        p = pad(B, fox_first if (i == 0 and fox_first is not None) else fox, marth)
        res = play(state, p, frozen, env._consts.fight.table, env._consts.spawn_x)
        env.state = res.state
        total += res.damage
    return total


def slot_of(env: Arena, who: int) -> torch.Tensor:
    """Each environment's current move slot for player ``who`` (-1 none)."""
    r = rows_of(env.state.players.move)[:, who]
    return torch.where(env.state.players.move[:, who] >= 0, r - who * NUM_SLOTS, -1)
