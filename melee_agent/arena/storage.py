"""The arena's stored state between frames: fresh episodes, observations, the end of a decision.

Functions of the two storage tensors only (players ``[len(P), 2, B]``, environments
``[len(E), B]``), so that ``torch.compile`` can fuse each into one kernel; ``Arena`` calls
them eagerly or compiled (see :mod:`melee_agent.arena.compiled`).
"""

from __future__ import annotations

import torch
from melee.enums import Action

from melee_agent.arena import data as d
from melee_agent.arena.cpu_levels import LevelMix
from melee_agent.arena.draws import ResetDraws
from melee_agent.arena.layout import AGENT, CPU, E, P
from melee_agent.arena.sim import NO_MOVE, intangible
from melee_agent.arena.tables import Tables
from melee_agent.state import RAW_FIELDS, encode_raw_matrix

#: The stored column of each of the state table's raw fields (``facing`` and ``invulnerable`` are
#: derived: the sign of ``P.FACE``, and :func:`~melee_agent.arena.sim.intangible`).
RAW_COLUMNS = {"position_x": P.X, "position_y": P.Y, "speed_x": P.VX, "speed_y": P.VY, "action": P.ACT,
               "on_ground": P.GND, "shield_strength": P.SHIELD, "jumps_left": P.JUMPS,
               "hitstun_frames_left": P.STUN, "percent": P.PCT, "action_frame": P.AF}


def reset_envs(fields: torch.Tensor, env_fields: torch.Tensor, mask: torch.Tensor, seed: torch.Tensor,
               mix: LevelMix) -> None:
    """Start a new episode where ``mask`` holds: both players standing apart, 4 stocks, 0%, a CPU level from ``mix``."""
    En = env_fields
    En[E.EPISODE] = torch.where(mask, En[E.EPISODE] + 1, En[E.EPISODE])
    u = ResetDraws.draw(En[E.ENV_ID], En[E.EPISODE], seed)
    En[E.LEVEL] = torch.where(mask, mix.pick(u.level, En[E.ENV_ID]), En[E.LEVEL])
    fresh = torch.zeros_like(fields)
    ax = -60.0 + 120.0 * u.agent_x
    side = torch.where(ax > 0, -1.0, 1.0)
    cx = (ax + side * (50.0 + 40.0 * u.gap)).clamp(-80.0, 80.0)
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
    for row in (E.EP_FRAME, E.PREV_ACTION, E.CPU_CD, E.EP_RETURN):
        En[row] = torch.where(mask, 0.0, En[row])


def observe(fields: torch.Tensor, previous_action: torch.Tensor, T: Tables, num_actions: int) -> torch.Tensor:
    """``[B, 27]`` observations through the same state table as Dolphin's game states.

    The raw fields are stacked column by column into ``[B, 2, 13]`` (contiguous copies, which a
    compiled decision fuses into its loop) and encoded by :func:`~melee_agent.state.encode_raw_matrix`.
    """
    S = fields.permute(2, 1, 0)  # [B, 2, N]
    derived = {"facing": (S[..., P.FACE] > 0).float(), "invulnerable": intangible(S, T).float()}
    raw = torch.stack([derived[name] if name in derived else S[..., RAW_COLUMNS[name]] for name in RAW_FIELDS], dim=-1)
    return encode_raw_matrix(raw, previous_action, num_actions)


def finish_decision(fields: torch.Tensor, env_fields: torch.Tensor, ready: torch.Tensor, done: torch.Tensor,
                    action: torch.Tensor, reward: torch.Tensor, T: Tables, num_actions: int, seed: torch.Tensor,
                    mix: LevelMix, compiled: bool) -> dict[str, torch.Tensor]:
    """Close the decisions of the ``ready`` environments and reset the ``done`` ones.

    Returns the observation after the decision (``final``), the one the next decision sees
    (``next``: a fresh episode's where ``done``), and the episode's frame count and return
    before any reset, and the CPU level it was played against. ``compiled`` resets through masks without asking whether any
    environment is done (no host sync, which would split the graph).
    """
    En = env_fields
    En[E.PREV_ACTION] = torch.where(ready, action, En[E.PREV_ACTION])
    En[E.EP_RETURN] = En[E.EP_RETURN] + torch.where(ready, reward, 0.0)
    final = observe(fields, En[E.PREV_ACTION], T, num_actions)
    out = {"final": final, "episode_frame": En[E.EP_FRAME].clone(), "episode_return": En[E.EP_RETURN].clone(),
           "cpu_level": En[E.LEVEL].clone()}
    if compiled or bool(done.any()):
        reset_envs(fields, env_fields, done, seed, mix)
        fresh = observe(fields, En[E.PREV_ACTION], T, num_actions)
        final = torch.where(done.unsqueeze(1), fresh, final)
    out["next"] = final
    return out
