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
from melee_agent.arena.tables import AGENT, CPU, E, P
from melee_agent.rewards import damage_reward, standing_noop_reward

_ACC = ("reward", "frames", "damage_taken", "damage_dealt", "stocks_lost", "stocks_taken")


def _init_async(env: Any) -> None:
    B, dev = env.num_envs, env.device
    env._ready = torch.ones(B, dtype=torch.bool, device=dev)
    env._cur = torch.zeros(B, dtype=torch.long, device=dev)
    env._mf = torch.zeros(B, dtype=torch.long, device=dev)
    env._acc = {k: torch.zeros(B, device=dev) for k in _ACC}
    env._acc_hit = torch.zeros(B, dtype=torch.bool, device=dev)


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
    S, En, acc = env.S, env.En, env._acc
    start = env._ready
    if bool(((actions < 0) | (actions >= env.num_actions))[start].any()):
        raise ValueError(f"actions must be in [0, {env.num_actions})")
    env._cur = torch.where(start, actions, env._cur)
    env._mf = torch.where(start, 0, env._mf)
    for k in _ACC:
        acc[k] = torch.where(start, 0.0, acc[k])
    env._acc_hit = env._acc_hit & ~start
    lens = env._lengths[env._cur]
    is_noop = env._cur == env.noop_index
    terminal = torch.zeros_like(start)
    truncated = torch.zeros_like(start)
    while True:
        ctrl = env._table[env._cur, env._mf]
        damage, ko = game_frame(S, En, ctrl, env.T, env.level, env.seed, env._spawn_x)
        env._mf += 1
        acc["frames"] += 1
        acc["damage_taken"] += damage[:, AGENT]
        acc["damage_dealt"] += damage[:, CPU]
        acc["stocks_lost"] += ko[:, AGENT].float()
        acc["stocks_taken"] += ko[:, CPU].float()
        hit_now = (damage[:, AGENT] > 0) | ko[:, AGENT]
        env._acc_hit |= hit_now
        if env.reward_kind == "untouchable":
            acc["reward"] += standing_noop_reward(S[:, AGENT, P.ACT], is_noop)
            end = hit_now
        else:
            acc["reward"] += damage_reward(damage[:, CPU], damage[:, AGENT], ko[:, CPU], ko[:, AGENT])
            end = (S[:, AGENT, P.STOCK] <= 0) | (S[:, CPU, P.STOCK] <= 0)
        cut = ~end & (En[:, E.EP_FRAME] >= env.max_frames)
        terminal, truncated = end, cut
        done = end | cut
        ready = done | (env._mf >= lens)
        if bool(ready.any()):
            break
    reward = acc["reward"].clone()
    En[:, E.PREV_ACTION] = torch.where(ready, env._cur.float(), En[:, E.PREV_ACTION])
    from melee_agent.arena.env import EP_RETURN  # noqa: PLC0415 (env imports this module)

    En[:, EP_RETURN] = En[:, EP_RETURN] + torch.where(ready, reward, 0.0)
    obs = env.observe()
    info: dict[str, Any] = {
        "ready": ready, "hit": env._acc_hit.clone(), "terminal": terminal & ready, "truncated": truncated & ready,
        "frames": acc["frames"].long(), "episode_frame": En[:, E.EP_FRAME].long(),
        "episode_return": En[:, EP_RETURN].clone(), "damage_taken": acc["damage_taken"].clone(),
        "damage_dealt": acc["damage_dealt"].clone(), "stocks_lost": acc["stocks_lost"].long(),
        "stocks_taken": acc["stocks_taken"].long(), "final_obs": obs,
    }
    if bool(done.any()):
        env._reset_envs(done)
        obs = torch.where(done.unsqueeze(1), env.observe(), obs)
    env._ready = ready
    return obs, reward, done, info
