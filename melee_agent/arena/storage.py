"""The arena's stored state between frames: fresh episodes, observations, the end of a decision.

Functions of the two storage tensors only (players ``[len(P), 2, B]``, environments
``[len(E) + 1, B]``), so that ``torch.compile`` can fuse each into one kernel; ``Arena`` calls
them eagerly or compiled (see :mod:`melee_agent.arena.compiled`).
"""

from __future__ import annotations

import torch
from melee.enums import Action

from melee_agent.arena import data as d
from melee_agent.arena.sim import NO_MOVE, intangible, rand_columns
from melee_agent.arena.tables import AGENT, CPU, E, P, Tables
from melee_agent.state import RAW_FIELDS, encode_players, encode_raw_matrix

EP_RETURN = E.N  # an extra per-environment row: the running episode return
ENV_ROWS = E.N + 1
# RAW_FIELDS order: position_x, position_y, speed_x, speed_y, action, facing, invulnerable,
# on_ground, shield_strength, jumps_left, hitstun_frames_left, percent, action_frame
RAW_COLUMNS = (P.X, P.Y, P.VX, P.VY, P.ACT, P.FACE, P.INV, P.GND, P.SHIELD, P.JUMPS, P.STUN, P.PCT, P.AF)


def reset_envs(fields: torch.Tensor, env_fields: torch.Tensor, mask: torch.Tensor, seed: torch.Tensor) -> None:
    """Start a new episode where ``mask`` holds: both players standing apart, 4 stocks, 0%."""
    En = env_fields
    En[E.EPISODE] = torch.where(mask, En[E.EPISODE] + 1, En[E.EPISODE])
    u = rand_columns(En[E.ENV_ID], En[E.EPISODE], seed + 7_777, 2)
    fresh = torch.zeros_like(fields)
    ax = -60.0 + 120.0 * u[0]
    side = torch.where(ax > 0, -1.0, 1.0)
    cx = (ax + side * (50.0 + 40.0 * u[1])).clamp(-80.0, 80.0)
    fresh[P.X, AGENT], fresh[P.X, CPU] = ax, cx
    fresh[P.FACE, AGENT], fresh[P.FACE, CPU] = side, -side
    fresh[P.ACT] = float(Action.STANDING.value)
    fresh[P.MOVE] = NO_MOVE
    fresh[P.AF] = 1.0
    fresh[P.GND] = 1.0
    fresh[P.JUMPS] = 2.0
    fresh[P.STOCK] = 4.0
    fresh[P.SHIELD] = d.SHIELD_MAX
    fields.copy_(torch.where(mask, fresh, fields))
    for row in (E.EP_FRAME, E.MACRO, E.MFRAME, E.PREV_ACTION, E.CPU_CD, EP_RETURN):
        En[row] = torch.where(mask, 0.0, En[row])


def observe(fields: torch.Tensor, previous_action: torch.Tensor, T: Tables, num_actions: int,
            by_column: bool = False) -> torch.Tensor:
    """``[B, 27]`` observations through the same state table as Dolphin's game states.

    ``by_column`` encodes field by field (26 contiguous columns, constants inlined): many small
    ops eagerly, but one vectorized loop when compiled, where the batch encoder's ``[B, 2, 13]``
    gather and transpose cost more than the whole encoding. Both agree to float rounding.
    """
    S = fields.permute(2, 1, 0)  # [B, 2, N]
    if not by_column:
        raw = S[..., list(RAW_COLUMNS)]
        raw[..., 5] = (S[..., P.FACE] > 0).float()
        raw[..., 6] = intangible(S, T).float()
        return encode_raw_matrix(raw, previous_action, num_actions)
    untouchable = intangible(S, T).float()
    players = []
    for p in (AGENT, CPU):
        raw = {name: fields[c, p] for name, c in zip(RAW_FIELDS, RAW_COLUMNS)}
        raw["facing"] = (fields[P.FACE, p] > 0).float()
        raw["invulnerable"] = untouchable[:, p]
        players.append(raw)
    return encode_players(players[0], players[1], previous_action, num_actions)


def finish_decision(fields: torch.Tensor, env_fields: torch.Tensor, ready: torch.Tensor, done: torch.Tensor,
                    action: torch.Tensor, reward: torch.Tensor, T: Tables, num_actions: int, seed: torch.Tensor,
                    compiled: bool) -> dict[str, torch.Tensor]:
    """Close the decisions of the ``ready`` environments and reset the ``done`` ones.

    Returns the observation after the decision (``final``), the one the next decision sees
    (``next``: a fresh episode's where ``done``), and the episode's frame count and return
    before any reset. ``compiled`` resets through masks without asking whether any
    environment is done (no host sync, which would split the graph) and encodes by column.
    """
    En = env_fields
    En[E.PREV_ACTION] = torch.where(ready, action, En[E.PREV_ACTION])
    En[EP_RETURN] = En[EP_RETURN] + torch.where(ready, reward, 0.0)
    final = observe(fields, En[E.PREV_ACTION], T, num_actions, by_column=compiled)
    out = {"final": final, "episode_frame": En[E.EP_FRAME].clone(), "episode_return": En[EP_RETURN].clone()}
    if compiled or bool(done.any()):
        reset_envs(fields, env_fields, done, seed)
        fresh = observe(fields, En[E.PREV_ACTION], T, num_actions, by_column=compiled)
        final = torch.where(done.unsqueeze(1), fresh, final)
    out["next"] = final
    return out
