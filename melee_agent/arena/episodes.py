"""The arena's state between frames: fresh episodes, observations, the end of a decision.

Pure functions of an :class:`~melee_agent.arena.env_state.EnvState`, so that ``torch.compile``
can fuse each into one kernel; ``Arena`` calls them eagerly or compiled (see
:mod:`melee_agent.arena.compiled`).
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from melee.enums import Action
from torch import Tensor
from torch.utils import _pytree as pytree

from melee_agent.arena import libmelee_data as d
from melee_agent.arena.cpu.levels import LevelMix
from melee_agent.arena.draws import ResetDraws
from melee_agent.arena.env_state import EnvState, PlayerState, where
from melee_agent.arena.stage_table import StageMix
from melee_agent.arena.stages import stage_named
from melee_agent.arena.dodge.frame import NO_MOVE, intangible
from melee_agent.arena.dodge.tables import Tables
from melee_agent.envs.state import RAW_FIELDS, encode_raw_matrix

FD_EDGE = stage_named("final_destination").edge_x  # the spread below is Final Destination's


def reset_envs(state: EnvState, mask: Tensor, seed: Tensor, mix: LevelMix, neutral: Tensor,
               stages: StageMix | None = None) -> EnvState:
    """Start a new episode where ``mask`` holds: both players standing apart, 4 stocks, 0%, a CPU level from ``mix``
    and a stage from ``stages`` (None: the one stage, index 0).

    The controller states in flight (input delay) are all ``neutral`` (``[C]``): nothing pressed yet.
    """
    g = state.game
    g = g._replace(episode=torch.where(mask, g.episode + 1, g.episode))
    u = ResetDraws.draw(g.env_id, g.episode, seed)
    g = g._replace(cpu_level=torch.where(mask, mix.pick(u.level, g.env_id), g.cpu_level),
                   **{name: torch.where(mask, 0.0, getattr(g, name))
                      for name in ("episode_frame", "previous_action", "cpu_cooldown", "episode_return")})
    # Final Destination's spread (guess: agent in [-60, 60), the CPU 50-90 away, within 80 of the centre), scaled by
    # the stage's edge to Final Destination's (exactly 1 there).
    scale: Tensor | float = 1.0
    if stages is not None and stages.cdf.shape[0] > 1:
        g = g._replace(stage=torch.where(mask, stages.pick(u.stage, g.env_id), g.stage))
        scale = stages.edge[g.stage.long()] / FD_EDGE
    elif stages is not None:
        scale = stages.edges[0] / FD_EDGE
    ax = (-60.0 + 120.0 * u.agent_x) * scale
    side = torch.where(ax > 0, -1.0, 1.0)
    lim = 80.0 * scale
    cx = (ax + side * (50.0 + 40.0 * u.gap) * scale).clamp(-lim, lim)
    zero = torch.zeros_like(state.players.percent)
    both = lambda v: zero + v  # noqa: E731  the same value for both players
    fresh = PlayerState(*(zero for _ in PlayerState._fields))._replace(
        position_x=torch.stack((ax, cx), 1), facing=torch.stack((side, -side), 1),
        action=both(float(Action.STANDING.value)), move=both(NO_MOVE), action_frame=both(1.0),
        on_ground=both(1.0), jumps_left=both(2.0), stock=both(4.0), shield_strength=both(d.SHIELD_MAX))
    fight = None if state.fight is None else where(mask, state.fight.fresh(), state.fight)
    return EnvState(where(mask, fresh, state.players), g, torch.where(mask.view(-1, 1, 1), neutral, state.inputs),
                    fight)


def observe(players: PlayerState, previous_action: Tensor, T: Tables, num_actions: int) -> Tensor:
    """``[B, 27]`` observations through the same state table as Dolphin's game states.

    The raw fields are stacked by name into ``[B, 2, 13]`` (contiguous copies, which a compiled
    decision fuses into its loop) and encoded by :func:`~melee_agent.envs.state.encode_raw_matrix`.
    ``facing`` and ``invulnerable`` are derived: the sign of ``facing``, and :func:`~melee_agent.arena.dodge.frame.intangible`.
    """
    derived = {"facing": (players.facing > 0).float(), "invulnerable": intangible(players, T).float()}
    raw = torch.stack([derived[name] if name in derived else getattr(players, name) for name in RAW_FIELDS], dim=-1)
    return encode_raw_matrix(raw, previous_action, num_actions)


class DecisionEnd(NamedTuple):
    """The end of a decision: the state after it (fresh episodes where one ended) and what it reports."""

    state: EnvState
    final: Tensor  # [B, 27]: the observation after the decision, before any reset
    next: Tensor  # [B, 27]: the one the next decision sees (a fresh episode's where done)
    episode_frame: Tensor  # [B]: the episode's frames, before any reset
    episode_return: Tensor  # [B]: its return
    cpu_level: Tensor  # [B]: the CPU level it was played against
    stock: Tensor  # [B, 2]: both players' stocks, before any reset
    percent: Tensor  # [B, 2]: both players' percent, before any reset


def close_decision(state: EnvState, ready: Tensor, action: Tensor, reward: Tensor, T: Tables,
                   num_actions: int) -> DecisionEnd:
    """Close the decisions of the ``ready`` environments, resetting nothing: ``next`` is ``final``.

    The first half of :func:`finish_decision`. A compiled arena plays it in the frame's graph every
    frame and resets (:func:`reset_finished`) only on the frames where a game ended, rare for a few
    environments (each ends a game once in thousands of frames): a reset inside the frame's graph would
    cost every frame a whole fresh state and a second observation.
    """
    g = state.game
    g = g._replace(previous_action=torch.where(ready, action, g.previous_action),
                   episode_return=g.episode_return + torch.where(ready, reward, 0.0))
    state = state._replace(game=g)
    ended = state.players
    final = observe(ended, g.previous_action, T, num_actions)
    return DecisionEnd(state, final, final, g.episode_frame, g.episode_return, g.cpu_level, ended.stock, ended.percent)


def reset_finished(end: DecisionEnd, done: Tensor, seed: Tensor, mix: LevelMix, neutral: Tensor, T: Tables,
                   num_actions: int, stages: StageMix | None = None) -> DecisionEnd:
    """``end`` with fresh episodes where ``done`` holds, and ``next`` the observation each environment sees
    next (``final`` where its episode goes on): the second half of :func:`finish_decision`. What the
    decision reports (``final``, stocks, percent...) stays as it was before the reset."""
    state = reset_envs(end.state, done, seed, mix, neutral, stages)
    fresh = observe(state.players, state.game.previous_action, T, num_actions)
    return end._replace(state=state, next=torch.where(done.unsqueeze(1), fresh, end.final))


def reset_rows(end: DecisionEnd, rows: Tensor, seed: Tensor, mix: LevelMix, neutral: Tensor, T: Tables,
               num_actions: int, stages: StageMix | None = None) -> Tensor:
    """Fresh episodes in the environments ``rows`` (``[K]`` indices, repeats allowed), written into ``end.state``'s
    tensors in place; returns ``next``: ``end.final`` with the fresh observation in those rows.

    What :func:`reset_finished` does for ``done = isin(arange(B), rows)``, touching ``K`` rows instead of all ``B``:
    the rows are gathered, reset by the same :func:`reset_envs` and written back. A fresh episode is a function of
    its environment's id, episode count and the seed (:class:`~melee_agent.arena.draws.ResetDraws`), so a repeated
    row writes the same values twice. ``end.state``'s tensors must not alias each other (the caller checks:
    :func:`distinct_leaves`).
    """
    everyone = torch.ones(rows.shape[0], dtype=torch.bool, device=rows.device)
    leaves, fresh = _fresh_rows(end.state, rows, everyone, seed, mix, neutral, stages)
    for x, y in zip(leaves, pytree.tree_leaves(fresh)):
        if isinstance(x, Tensor):
            x.index_copy_(0, rows, y)
    return end.final.index_copy(0, rows, observe(fresh.players, fresh.game.previous_action, T, num_actions))


def _fresh_rows(state: EnvState, rows: Tensor, reset: Tensor, seed: Tensor, mix: LevelMix, neutral: Tensor,
                stages: StageMix | None) -> tuple[list, EnvState]:
    """``state``'s leaves, and the rows ``rows`` of it gathered, with fresh episodes where ``reset`` (``[K]``) holds."""
    leaves, spec = pytree.tree_flatten(state)
    rows_state = pytree.tree_unflatten([x.index_select(0, rows) if isinstance(x, Tensor) else x for x in leaves], spec)
    return leaves, reset_envs(rows_state, reset, seed, mix, neutral, stages)


def first_rows(done: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """The first ``k`` environments where ``done`` holds, as ``[k]`` indices (padded by repeating the first of them),
    and ``done`` without them (the ones beyond the first ``k``).

    Static shapes, so a compiled graph can hold it: the ``j``-th done environment is where the running count of
    ``done`` first reaches ``j`` (a binary search of the count). Where nothing is done every index is the last row.

    >>> rows, left = first_rows(torch.tensor([False, True, False, True, True]), 2)
    >>> rows.tolist(), left.tolist()
    ([1, 3], [False, False, False, False, True])
    """
    count = done.long().cumsum(0)
    wanted = torch.arange(1, k + 1, device=done.device, dtype=count.dtype)
    rows = torch.searchsorted(count, wanted).clamp(max=done.shape[0] - 1)
    rows = torch.where(wanted <= count[-1], rows, rows[0])
    return rows, done & (count > k)


def reset_first_rows(end: DecisionEnd, done: Tensor, k: int, seed: Tensor, mix: LevelMix, neutral: Tensor,
                     T: Tables, num_actions: int, stages: StageMix | None = None) -> tuple[DecisionEnd, Tensor]:
    """``end`` with fresh episodes in the first ``k`` environments where ``done`` holds, and ``next`` seeing them;
    and the finished games left (``[B]``: those beyond the first ``k``, which the caller resets).

    :func:`reset_rows` as a pure function, for a compiled frame's own graph: gathering, resetting and writing back
    ``k`` rows costs a graph little, where a second graph called after the frame costs its call, its guards and a
    check that the state shares no memory with what the frame reports. Where nothing is done the rows are written
    back unchanged.
    """
    rows, left = first_rows(done, k)
    reset = done.any().expand(k)
    leaves, fresh = _fresh_rows(end.state, rows, reset, seed, mix, neutral, stages)
    spec = pytree.tree_structure(end.state)
    state = pytree.tree_unflatten([x.index_copy(0, rows, y) if isinstance(x, Tensor) else x
                                   for x, y in zip(leaves, pytree.tree_leaves(fresh))], spec)
    fresh_obs = observe(fresh.players, fresh.game.previous_action, T, num_actions)
    return end._replace(state=state, next=end.final.index_copy(0, rows, fresh_obs)), left


def _storages(tree: object, into: set[int]) -> set[int]:
    """The storage address of every tensor in ``tree`` (NamedTuples, tuples, lists, None), added to ``into``."""
    if isinstance(tree, Tensor):
        into.add(tree.untyped_storage().data_ptr())
    elif isinstance(tree, (tuple, list)):
        for x in tree:
            _storages(x, into)
    elif tree is not None:
        into.update(t.untyped_storage().data_ptr() for t in pytree.tree_leaves(tree) if isinstance(t, Tensor))
    return into


def _own(tree: object, seen: set[int]) -> object:
    """``tree`` with a copy of each tensor whose storage is in ``seen`` (then adding its own), NamedTuples rebuilt."""
    if isinstance(tree, Tensor):
        ptr = tree.untyped_storage().data_ptr()
        if ptr in seen:
            return tree.clone()
        seen.add(ptr)
        return tree
    if isinstance(tree, tuple):
        kids = [_own(x, seen) for x in tree]
        return type(tree)(*kids) if hasattr(tree, "_fields") else tuple(kids)
    if isinstance(tree, list):
        return [_own(x, seen) for x in tree]
    return tree


def distinct_leaves(state: EnvState, *others: object) -> EnvState:
    """``state`` with every tensor its own (a copy where two fields share memory, or where one shares memory with a
    tensor of ``others``, which an in-place reset would change too): what :func:`reset_rows` writes into.

    Walked by hand rather than with ``pytree`` (flatten, then unflatten): a dodging arena calls this on nearly every
    frame at B = 4,096 (some game ends on most frames), and pytree's generic walk of the state and the frame's
    report, about 170 tensors, cost about as much as the reset itself."""
    return _own(state, _storages(others, set()))


def finish_decision(state: EnvState, ready: Tensor, done: Tensor, action: Tensor, reward: Tensor, T: Tables,
                    num_actions: int, seed: Tensor, mix: LevelMix, neutral: Tensor, compiled: bool,
                    stages: StageMix | None = None) -> DecisionEnd:
    """Close the decisions of the ``ready`` environments and reset the ``done`` ones.

    ``compiled`` resets through masks without asking whether any environment is done (no host
    sync, which would split the graph).
    """
    end = close_decision(state, ready, action, reward, T, num_actions)
    if compiled or bool(done.any()):
        end = reset_finished(end, done, seed, mix, neutral, T, num_actions, stages)
    return end
