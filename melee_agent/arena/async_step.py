"""Asynchronous decisions for the arena: every environment advances every frame, none waits.

``Arena.step`` plays one whole macro in every environment, so an environment whose macro is
short (a 1-frame noop) sits frozen while another rolls for 32 frames: in lockstep, most simulated
frames are wasted. ``step_async`` instead advances all environments frame by frame until at least
one finishes its macro (or its episode), and reports which ones are ready for a new decision.
A worker or an evaluation feeds it actions for all environments every call; only the ready
environments' actions are read. The transition an environment reports when it is ready is
exactly the one ``step`` would have produced for that macro (same frames, rewards and ends).

Example::

    >>> import torch
    >>> from melee_agent.arena import Arena
    >>> env = Arena(num_envs=2, seed=0); obs = env.reset()
    >>> obs, reward, done, info = env.step_async(torch.tensor([0, 1]))  # noop ends after 1 frame
    >>> info["ready"].tolist(), info["frames"].tolist()
    ([True, False], [1, 1])
"""

from __future__ import annotations

from typing import Any

import torch

from melee_agent.arena.sim import game_frame
from melee_agent.arena.tables import AGENT, CPU, E, P, Tables
from melee_agent.rewards import damage_reward, standing_noop_reward

# Rows of the per-environment accumulator: what a macro has gathered so far.
REWARD, FRAMES, TAKEN, DEALT, LOST, TOOK, HIT = range(7)


def frame_async(fields: torch.Tensor, env_fields: torch.Tensor, start: torch.Tensor, actions: torch.Tensor,
                acc: tuple[torch.Tensor, ...], cur: torch.Tensor, mf: torch.Tensor, table: torch.Tensor,
                lengths: torch.Tensor, noop_index: int, T: Tables, level: dict[str, torch.Tensor], seed: torch.Tensor,
                spawn_x: torch.Tensor, untouchable: bool, max_frames: int) -> tuple[Any, ...]:
    """One frame of every environment's current macro, and what it adds to the macro's totals.

    Environments where ``start`` holds begin macro ``actions`` with this frame. Pure apart from
    the state it advances (``fields``, ``env_fields``), so ``torch.compile`` can fuse it whole.
    Returns ``(acc, cur, mf, ready, done, terminal, truncated)``.
    """
    cur = torch.where(start, actions, cur)
    mf = torch.where(start, 0, mf)
    acc = tuple(torch.where(start, 0.0, a) for a in acc)
    ctrl = table[:, cur, mf]
    damage, ko = game_frame(fields, env_fields, ctrl, T, level, seed, spawn_x)
    mf = mf + 1
    hit_now = (damage[:, AGENT] > 0) | ko[:, AGENT]
    agent_act = fields[P.ACT, AGENT]
    if untouchable:
        r = standing_noop_reward(agent_act, cur == noop_index)
        end = hit_now
    else:
        r = damage_reward(damage[:, CPU], damage[:, AGENT], ko[:, CPU], ko[:, AGENT])
        end = (fields[P.STOCK, AGENT] <= 0) | (fields[P.STOCK, CPU] <= 0)
    add = (r, 1.0, damage[:, AGENT], damage[:, CPU], ko[:, AGENT].float(), ko[:, CPU].float(), hit_now.float())
    acc = tuple(a + b for a, b in zip(acc, add))
    acc = acc[:HIT] + (acc[HIT].clamp(max=1.0),)
    cut = ~end & (env_fields[E.EP_FRAME] >= max_frames)
    done = end | cut
    ready = done | (mf >= lengths[cur])
    return acc, cur, mf, ready, done, end, cut


def _init_async(env: Any) -> None:
    B, dev = env.num_envs, env.device
    env._ready = torch.ones(B, dtype=torch.bool, device=dev)
    env._cur = torch.zeros(B, dtype=torch.long, device=dev)
    env._mf = torch.zeros(B, dtype=torch.long, device=dev)
    env._acc = tuple(torch.zeros(B, device=dev) for _ in range(HIT + 1))


@torch.inference_mode()
def step_async(env: Any, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
    """Advance until some environment is ready; returns ``(obs, reward, done, info)``.

    ``info["ready"]`` marks the environments whose macro (or episode) ended: for them ``reward``,
    ``done`` and the other info values describe the whole macro, as ``step`` would. For the
    others they are partial and must be ignored. Actions are read only where the previous call
    (or ``reset``) left an environment ready.
    """
    if getattr(env, "_ready", None) is None:
        _init_async(env)
    actions = torch.as_tensor(actions, device=env.device).long().view(-1)
    if actions.shape[0] != env.num_envs:
        raise ValueError(f"expected {env.num_envs} actions, got {actions.shape[0]}")
    start = env._ready
    if bool((((actions < 0) | (actions >= env.num_actions)) & start).any()):
        raise ValueError(f"actions must be in [0, {env.num_actions})")
    acc, cur, mf = env._acc, env._cur, env._mf
    while True:
        acc, cur, mf, ready, done, terminal, truncated = env._frame_async(
            env._fields, env._env_fields, start, actions, acc, cur, mf, *env._frame_args)
        if bool(ready.any()):
            break
        start = torch.zeros_like(start)  # later frames continue the macros
    env._cur, env._mf, env._acc = cur, mf, acc
    obs = env._finish_decision(env._fields, env._env_fields, ready, done, cur.float(), acc[REWARD], env.T,
                               env.num_actions, env._seed, env.compiled)
    info: dict[str, Any] = {
        "ready": ready, "hit": acc[HIT] > 0, "terminal": terminal, "truncated": truncated,  # both imply ready
        "frames": acc[FRAMES].long(), "episode_frame": obs["episode_frame"].long(),
        "episode_return": obs["episode_return"], "damage_taken": acc[TAKEN], "damage_dealt": acc[DEALT],
        "stocks_lost": acc[LOST].long(), "stocks_taken": acc[TOOK].long(), "final_obs": obs["final"],
    }
    env._ready = ready
    return obs["next"], acc[REWARD], done, info
