"""One frame of every environment's current macro, and what a macro carries between frames.

``Arena.step`` plays one whole macro in every environment, so an environment whose macro is
short (a 1-frame noop) sits frozen while another rolls for 32 frames: in lockstep, most simulated
frames are wasted. ``Arena.step_async`` instead advances all environments frame by frame (with
:func:`frame_async`) until at least one finishes its macro (or its episode), and reports which
ones are ready for a new decision. The transition an environment reports when it is ready is
exactly the one ``step`` would have produced for that macro (same frames, rewards and ends).

Example::

    >>> import torch
    >>> from melee_agent.arena import Arena
    >>> env = Arena(num_envs=2, seed=0); obs = env.reset()
    >>> obs, reward, done, info = env.step_async(torch.tensor([0, 1]))  # noop ends after 1 frame
    >>> info.ready.tolist(), info.frames.tolist()
    ([True, False], [1, 1])
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from melee_agent.arena.cpu_levels import LevelMix, LevelTable
from melee_agent.arena.layout import AGENT, CPU, E, P
from melee_agent.arena.sim import game_frame
from melee_agent.arena.tables import Tables
from melee_agent.rewards import frame_outcome

# Rows of the per-environment totals: what a macro has gathered so far.
REWARD, FRAMES, TAKEN, DEALT, LOST, TOOK, HIT = range(7)
Totals = tuple[torch.Tensor, ...]


@dataclass(frozen=True)
class FrameConsts:
    """What a frame needs besides the state, fixed for an arena's lifetime (built once per ``Arena``)."""

    table: torch.Tensor  # [button, action, frame]: the action set's controller states
    lengths: torch.Tensor  # [A]: frames in each action's sequence
    noop_index: int  # the action the untouchable reward pays for standing through
    tables: Tables
    levels: LevelTable  # every level's values; each environment reads its own
    mix: LevelMix  # the levels drawn at each episode reset
    seed: torch.Tensor  # 0-d, so a compiled frame does not specialize (and recompile) on each seed
    spawn_x: torch.Tensor  # [2]: respawn spots (guess)
    untouchable: bool  # the reward: untouchable, else damage
    max_frames: int


@dataclass(frozen=True)
class MacroProgress:
    """Each environment's macro in flight: which one, how far, its totals, and who chooses next."""

    ready: torch.Tensor  # [B] bool: reads a new action at the next call
    action: torch.Tensor  # [B] int64: the macro being played
    frame: torch.Tensor  # [B] int64: frames of it played
    totals: Totals  # [B] each, rows REWARD..HIT

    @classmethod
    def fresh(cls, num_envs: int, device: torch.device) -> MacroProgress:
        """Every environment chooses at the next call (after a reset)."""
        zeros = torch.zeros(num_envs, dtype=torch.long, device=device)
        return cls(torch.ones(num_envs, dtype=torch.bool, device=device), zeros, zeros.clone(),
                   tuple(torch.zeros(num_envs, device=device) for _ in range(HIT + 1)))


def frame_async(fields: torch.Tensor, env_fields: torch.Tensor, start: torch.Tensor, actions: torch.Tensor,
                acc: Totals, cur: torch.Tensor, mf: torch.Tensor, c: FrameConsts) -> tuple:
    """One frame of every environment's current macro, and what it adds to the macro's totals.

    Environments where ``start`` holds begin macro ``actions`` with this frame. Pure apart from
    the state it advances (``fields``, ``env_fields``), so ``torch.compile`` can fuse it whole.
    Returns ``(acc, cur, mf, ready, done, terminal, truncated)``.
    """
    cur = torch.where(start, actions, cur)
    mf = torch.where(start, 0, mf)
    acc = tuple(torch.where(start, 0.0, a) for a in acc)
    ctrl = c.table[:, cur, mf]
    damage, ko = game_frame(fields, env_fields, ctrl, c.tables, c.levels, c.seed, c.spawn_x)
    mf = mf + 1
    out = frame_outcome(c.untouchable, agent_action=fields[P.ACT, AGENT], is_noop=cur == c.noop_index,
                        taken=damage[:, AGENT], dealt=damage[:, CPU], lost=ko[:, AGENT], took=ko[:, CPU],
                        agent_stock=fields[P.STOCK, AGENT], opponent_stock=fields[P.STOCK, CPU],
                        episode_frame=env_fields[E.EP_FRAME], max_frames=c.max_frames)
    add = (out.reward, 1.0, damage[:, AGENT], damage[:, CPU], ko[:, AGENT].float(), ko[:, CPU].float(),
           out.hit.float())
    acc = tuple(a + b for a, b in zip(acc, add))
    acc = acc[:HIT] + (acc[HIT].clamp(max=1.0),)
    done = out.terminal | out.truncated
    ready = done | (mf >= c.lengths[cur])
    return acc, cur, mf, ready, done, out.terminal, out.truncated
