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

from typing import NamedTuple

from melee_agent.arena.cpu_levels import LevelMix, LevelTable
from melee_agent.arena.env_state import AGENT, CPU, EnvState
from melee_agent.arena.fight.frame import FightConsts, fight_frame
from melee_agent.arena.sim import game_frame
from melee_agent.arena.storage import DecisionEnd, finish_decision
from melee_agent.arena.tables import Tables
from melee_agent.rewards import frame_outcome


class Totals(NamedTuple):
    """What a macro has gathered so far, ``[B]`` float32 each."""

    reward: torch.Tensor
    frames: torch.Tensor
    damage_taken: torch.Tensor
    damage_dealt: torch.Tensor
    stocks_lost: torch.Tensor
    stocks_taken: torch.Tensor
    hit: torch.Tensor  # 1 once the agent was hit during the macro

    @classmethod
    def zeros(cls, num_envs: int, device: torch.device) -> Totals:
        return cls(*(torch.zeros(num_envs, device=device) for _ in cls._fields))


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
    untouchable: bool  # the reward: untouchable, else damage (and fight)
    max_frames: int  # the frame limit (dodging) or the game's clock (fights)
    timed: bool  # the episode is a whole game: the clock's end is terminal, not a cut
    delay: int  # frames between the agent's controller state and the game reading it
    neutral: torch.Tensor  # [C]: the controller at rest (what is in flight when a game starts)
    fight: FightConsts | None = None  # a fight's tables (game="fight": its frame is fight_frame), else None


@dataclass(frozen=True)
class MacroProgress:
    """Each environment's macro in flight: which one, how far, its totals, and who chooses next."""

    ready: torch.Tensor  # [B] bool: reads a new action at the next call
    action: torch.Tensor  # [B] int64: the macro being played
    frame: torch.Tensor  # [B] int64: frames of it played
    totals: Totals

    @classmethod
    def fresh(cls, num_envs: int, device: torch.device) -> MacroProgress:
        """Every environment chooses at the next call (after a reset)."""
        zeros = torch.zeros(num_envs, dtype=torch.long, device=device)
        return cls(torch.ones(num_envs, dtype=torch.bool, device=device), zeros, zeros.clone(),
                   Totals.zeros(num_envs, device))


class FrameStep(NamedTuple):
    """One frame of every environment's macro: the new state and what the macros have gathered."""

    state: EnvState
    totals: Totals
    action: torch.Tensor  # [B] int64: the macro being played
    frame: torch.Tensor  # [B] int64: frames of it played, this one included
    ready: torch.Tensor  # [B] bool: the macro (or the episode) ended with this frame
    done: torch.Tensor  # [B] bool: the episode ended
    terminal: torch.Tensor  # [B] bool: ... by its rules
    truncated: torch.Tensor  # [B] bool: ... cut at the frame limit


def frame_async(state: EnvState, start: torch.Tensor, actions: torch.Tensor, acc: Totals, cur: torch.Tensor,
                mf: torch.Tensor, c: FrameConsts) -> FrameStep:
    """One frame of every environment's current macro, and what it adds to the macro's totals.

    Environments where ``start`` holds begin macro ``actions`` with this frame. A pure function,
    so ``torch.compile`` can fuse it whole.
    """
    cur = torch.where(start, actions, cur)
    mf = torch.where(start, 0, mf)
    acc = Totals(*(torch.where(start, 0.0, a) for a in acc))
    ctrl = c.table[:, cur, mf]  # [C, B]: what the agent presses this frame
    if c.delay > 0:  # the game reads what was pressed `delay` frames ago
        inputs = state.inputs
        state = state._replace(inputs=torch.cat((inputs[:, 1:], ctrl.t().unsqueeze(1)), 1))
        ctrl = inputs[:, 0].t()
    if c.fight is not None:
        state, damage, ko = fight_frame(state, ctrl, c.fight, c.seed, c.spawn_x)
    else:
        state, damage, ko = game_frame(state, ctrl, c.tables, c.levels, c.seed, c.spawn_x)
    mf = mf + 1
    ps = state.players
    out = frame_outcome(c.untouchable, agent_action=ps.action[:, AGENT], is_noop=cur == c.noop_index,
                        taken=damage[:, AGENT], dealt=damage[:, CPU], lost=ko[:, AGENT], took=ko[:, CPU],
                        agent_stock=ps.stock[:, AGENT], opponent_stock=ps.stock[:, CPU],
                        episode_frame=state.game.episode_frame, max_frames=c.max_frames, timed=c.timed)
    add = (out.reward, 1.0, damage[:, AGENT], damage[:, CPU], ko[:, AGENT].float(), ko[:, CPU].float(),
           out.hit.float())
    acc = Totals(*(a + b for a, b in zip(acc, add)))
    acc = acc._replace(hit=acc.hit.clamp(max=1.0))
    done = out.terminal | out.truncated
    ready = done | (mf >= c.lengths[cur])
    return FrameStep(state, acc, cur, mf, ready, done, out.terminal, out.truncated)


class FrameAndEnd(NamedTuple):
    """One frame and, for the environments it left ready, the end of their decision."""

    step: FrameStep  # the frame, its ``state`` being ``end.state`` (the frame's own is not kept)
    end: DecisionEnd  # the state to keep (ready decisions closed, finished games reset) and what they report
    ko_cause: torch.Tensor  # [B, 2]: the move credited with each player's latest KO (FightState.ko_cause), 0 in dodging


def frame_and_end(state: EnvState, start: torch.Tensor, actions: torch.Tensor, acc: Totals, cur: torch.Tensor,
                  mf: torch.Tensor, c: FrameConsts, T: Tables, num_actions: int) -> FrameAndEnd:
    """:func:`frame_async`, then :func:`~melee_agent.arena.storage.finish_decision` for the ready environments.

    A compiled arena plays this as one graph per frame (one call, one fused loop nest) rather than a
    frame and then a decision's end. Where no environment is ready the end changes nothing (it only
    touches ready environments, and only a ready one can be done), so the caller keeps ``end.state``
    after every frame.
    """
    f = frame_async(state, start, actions, acc, cur, mf, c)
    ko_cause = ko_causes(f.state)
    end = finish_decision(f.state, f.ready, f.done, f.action.float(), f.totals.reward, T, num_actions, c.seed, c.mix,
                          c.neutral, True)
    return FrameAndEnd(f._replace(state=end.state), end, ko_cause)


def ko_causes(state: EnvState) -> torch.Tensor:
    """``[B, 2]``: the attack id credited with each player's latest KO (-1: a self-destruct), read before a
    finished game resets; zeros (unknown) in the dodging game, which keeps no credit."""
    if state.fight is None:
        return torch.zeros_like(state.players.stock)
    return state.fight.ko_cause.clone()
