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

from melee_agent.arena.cpu.levels import LevelMix, LevelTable
from melee_agent.arena.stage_table import StageMix
from melee_agent.arena.env_state import AGENT, CPU, EnvState
from melee_agent.arena.fight.frame import FightConsts, fight_frame, fight_frame_pads
from melee_agent.arena.fight.pads import Pads
from melee_agent.arena.dodge.frame import game_frame
from melee_agent.arena.episodes import DecisionEnd, close_decision, reset_first_rows
from melee_agent.arena.dodge.tables import Tables
from melee_agent.envs.rewards import frame_outcome
from melee_agent.envs.vecenv import StepInfo, step_info


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

    table: torch.Tensor  # [button, macro, frame]: the action set's controller states (ActionSet.table)
    lengths: torch.Tensor  # [M]: frames in each macro's sequence
    noop_index: int  # the action the untouchable reward pays for standing through
    tables: Tables
    levels: LevelTable  # every level's values; each environment reads its own
    mix: LevelMix  # the levels drawn at each episode reset
    seed: torch.Tensor  # 0-d, so a compiled frame does not specialize (and recompile) on each seed
    spawn_x: torch.Tensor  # [2]: respawn spots (guess)
    untouchable: bool  # the reward: untouchable, else damage (and fight)
    max_frames: int  # the frame limit (dodging) or the game's clock (fights)
    timed: bool  # the episode is a whole game: the clock's end is the game's end
    clock_in_state: bool  # the state shows the time left: the clock's end is terminal (else a cut)
    delay: int  # frames between the agent's controller state and the game reading it
    neutral: torch.Tensor  # [C]: the controller at rest (what is in flight when a game starts)
    fight: FightConsts | None = None  # a fight's tables (game="fight": its frame is fight_frame), else None
    remap: torch.Tensor | None = None  # [A, A] int64: the macro decision a plays after decision p (None: a's own)
    stages: StageMix | None = None  # the stages drawn at each episode reset (None: the one stage, Final Destination)


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


def macro_of(action: torch.Tensor, state: EnvState, c: FrameConsts) -> torch.Tensor:
    """``[B]`` int64: the macro each environment's decision ``action`` plays, given its previous decision (the
    state's previous action, which changes only when a decision closes): the action itself, or under a set's
    remap (``untouchable-paper``) its post-shine macro (:meth:`~melee_agent.envs.actions.ActionSet.macro_index`)."""
    if c.remap is None:
        return action
    return c.remap[action, state.game.previous_action.long()]


def frame_async(state: EnvState, start: torch.Tensor, actions: torch.Tensor, acc: Totals, cur: torch.Tensor,
                mf: torch.Tensor, c: FrameConsts, opponent: tuple[torch.Tensor, torch.Tensor] | None = None
                ) -> FrameStep:
    """One frame of every environment's current macro, and what it adds to the macro's totals.

    Environments where ``start`` holds begin macro ``actions`` with this frame. A pure function,
    so ``torch.compile`` can fuse it whole. ``opponent`` (fights only): port 1's controller state ``[C, B]``
    and the ``[B]`` mask where it replaces the CPU (:mod:`melee_agent.arena.ports`).
    """
    cur = torch.where(start, actions, cur)
    mf = torch.where(start, 0, mf)
    acc = Totals(*(torch.where(start, 0.0, a) for a in acc))
    ctrl = c.table[:, macro_of(cur, state, c), mf]  # [C, B]: what the agent presses this frame
    if c.delay > 0:  # the game reads what was pressed `delay` frames ago
        inputs = state.inputs
        state = state._replace(inputs=torch.cat((inputs[:, 1:], ctrl.t().unsqueeze(1)), 1))
        ctrl = inputs[:, 0].t()
    if c.fight is not None:
        state, damage, ko = fight_frame(state, ctrl, c.fight, c.seed, c.spawn_x, opponent)
    else:
        state, damage, ko = game_frame(state, ctrl, c.tables, c.levels, c.seed, c.spawn_x)
    return outcome(state, damage, ko, acc, cur, mf, c)


def pads_frame(state: EnvState, raw: Pads, acc: Totals, cur: torch.Tensor, mf: torch.Tensor,
               c: FrameConsts) -> FrameStep:
    """One fight frame played from both ports' raw controller frames (``Arena.step_pads``): no CPU, no macro,
    no input delay (``raw`` is what the game reads on this frame); totals and ends as :func:`frame_async`."""
    state, damage, ko = fight_frame_pads(state, raw, c.fight, c.spawn_x)
    return outcome(state, damage, ko, acc, cur, mf, c)


def outcome(state: EnvState, damage: torch.Tensor, ko: torch.Tensor, acc: Totals, cur: torch.Tensor,
            mf: torch.Tensor, c: FrameConsts) -> FrameStep:
    """What one played frame adds to the macros' totals, and who is ready or done."""
    mf = mf + 1
    ps = state.players
    out = frame_outcome(c.untouchable, agent_action=ps.action[:, AGENT], is_noop=cur == c.noop_index,
                        taken=damage[:, AGENT], dealt=damage[:, CPU], lost=ko[:, AGENT], took=ko[:, CPU],
                        agent_stock=ps.stock[:, AGENT], opponent_stock=ps.stock[:, CPU],
                        episode_frame=state.game.episode_frame, max_frames=c.max_frames, timed=c.timed,
                        clock_in_state=c.clock_in_state)
    add = (out.reward, 1.0, damage[:, AGENT], damage[:, CPU], ko[:, AGENT].float(), ko[:, CPU].float(),
           out.hit.float())
    acc = Totals(*(a + b for a, b in zip(acc, add)))
    acc = acc._replace(hit=acc.hit.clamp(max=1.0))
    done = out.terminal | out.truncated
    ready = done | (mf >= c.lengths[macro_of(cur, state, c)])
    return FrameStep(state, acc, cur, mf, ready, done, out.terminal, out.truncated)


class FrameAndEnd(NamedTuple):
    """One frame and, for the environments it left ready, the end of their decision (games not yet reset)."""

    step: FrameStep  # the frame, its ``state`` being ``end.state`` (the frame's own is not kept)
    end: DecisionEnd  # the state to keep (ready decisions closed) and what they report; ``next`` is ``final``
    info: StepInfo  # what the step reports (:func:`decision_info`)


def decision_info(end: DecisionEnd, ready: torch.Tensor, done: torch.Tensor, acc: Totals, terminal: torch.Tensor,
                  truncated: torch.Tensor, ko_cause: torch.Tensor, c: FrameConsts) -> StepInfo:
    """The :class:`~melee_agent.envs.vecenv.StepInfo` of a decision's end, from the values before any reset.

    A pure function: a compiled arena computes it (with its dtype casts) inside the frame's graph.
    """
    stock, percent = end.stock, end.percent
    game_over = done & ((stock <= 0).any(1) | (c.timed & (end.episode_frame >= c.max_frames)))
    return step_info(ready=ready, hit=acc.hit > 0, terminal=terminal, truncated=truncated, frames=acc.frames,
                     episode_frame=end.episode_frame, episode_return=end.episode_return,
                     damage_taken=acc.damage_taken, damage_dealt=acc.damage_dealt, stocks_lost=acc.stocks_lost,
                     stocks_taken=acc.stocks_taken, final_obs=end.final, cpu_level=end.cpu_level,
                     agent_stocks=stock[:, AGENT], opponent_stocks=stock[:, CPU], agent_percent=percent[:, AGENT],
                     opponent_percent=percent[:, CPU], game_over=game_over,
                     ko_move=ko_cause[:, CPU], lost_move=ko_cause[:, AGENT])


def frame_and_end(state: EnvState, start: torch.Tensor, actions: torch.Tensor, acc: Totals, cur: torch.Tensor,
                  mf: torch.Tensor, c: FrameConsts, T: Tables, num_actions: int) -> FrameAndEnd:
    """:func:`frame_async`, then :func:`~melee_agent.arena.episodes.close_decision` and :func:`decision_info`
    for the ready environments.

    A compiled arena plays this as one graph per frame (one call, one fused loop nest) rather than a
    frame and then a decision's end. Where no environment is ready the end changes nothing (it only
    touches ready environments), so the caller keeps ``end.state`` after every frame. Finished games
    are not reset here: the caller resets them (:func:`~melee_agent.arena.episodes.reset_finished`)
    on the frames where ``step.done`` holds somewhere (each environment ends a game once in thousands of
    frames; B of them out of step end one on about 1 - e^(-B/L) of the frames, for games L frames long).
    """
    f = frame_async(state, start, actions, acc, cur, mf, c)
    ko_cause = ko_causes(f.state)
    end = close_decision(f.state, f.ready, f.action.float(), f.totals.reward, T, num_actions)
    info = decision_info(end, f.ready, f.done, f.totals, f.terminal, f.truncated, ko_cause, c)
    return FrameAndEnd(f._replace(state=end.state), end, info)


class FrameEndReset(NamedTuple):
    """:class:`FrameAndEnd` with the first finished games already reset, and the ones left."""

    frame: FrameAndEnd  # ``end.state`` and ``end.next`` after the reset; ``info`` and ``end.final`` before it
    left: torch.Tensor  # [B]: games that ended and were not reset (more than the graph's rows ended at once)


def frame_end_and_reset(state: EnvState, start: torch.Tensor, actions: torch.Tensor, acc: Totals, cur: torch.Tensor,
                        mf: torch.Tensor, c: FrameConsts, T: Tables, num_actions: int, rows: int) -> FrameEndReset:
    """:func:`frame_and_end`, then fresh games in the first ``rows`` environments whose game ended
    (:func:`~melee_agent.arena.episodes.reset_first_rows`), all in one graph.

    For games that end on most frames (dodging: each episode ends at the first hit, so at B = 4,096 against a
    level-9 CPU about 55 end on every frame): a separate reset graph after the frame cost a dodging frame about
    12% of its time (measured at B = 4,096), its ``rows`` in the frame's graph far less.
    """
    fe = frame_and_end(state, start, actions, acc, cur, mf, c, T, num_actions)
    end, left = reset_first_rows(fe.end, fe.step.done, rows, c.seed, c.mix, c.neutral, T, num_actions, c.stages)
    return FrameEndReset(FrameAndEnd(fe.step._replace(state=end.state), end, fe.info), left)


def ko_causes(state: EnvState) -> torch.Tensor:
    """``[B, 2]``: the attack id credited with each player's latest KO (-1: a self-destruct), read before a
    finished game resets; zeros (unknown) in the dodging game, which keeps no credit."""
    if state.fight is None:
        return torch.zeros_like(state.players.stock)
    return state.fight.ko_cause.clone()
