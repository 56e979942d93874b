"""One way to build an environment from a config: the arena (default) or real Melee in Dolphin.

Both are a :class:`~melee_agent.vecenv.VecEnv`: ``reset``, ``step``, ``step_async`` reporting one
:class:`~melee_agent.vecenv.StepInfo`, and ``close``.
"""

from __future__ import annotations

import torch

from melee_agent.config import Config
from melee_agent.vecenv import VecEnv

ENVS = ("arena", "dolphin")


def make_env(cfg: Config, num_envs: int = 1, device: str | torch.device = "cpu", seed: int = 0,
             cpu_level: int | None = None) -> VecEnv:
    kind = cfg.env.env
    level = cfg.env.cpu_level if cpu_level is None else cpu_level
    if kind == "arena":
        from melee_agent.arena import Arena  # noqa: PLC0415

        return Arena(num_envs, cpu_level=level, device=device, seed=seed, action_set=cfg.env.action_set,
                     reward=cfg.env.reward, max_frames=cfg.env.max_frames, compile=cfg.env.compile)
    if kind == "dolphin":
        from melee_agent.dolphin import DolphinEnv  # noqa: PLC0415

        if num_envs != 1:
            raise ValueError(f"a Dolphin worker plays one game at a time; got envs={num_envs}")
        return DolphinEnv(cfg.dolphin, cpu_level=level, action_set=cfg.env.action_set, reward=cfg.env.reward,
                          max_frames=cfg.env.max_frames, device=device)
    raise ValueError(f"unknown env {kind!r}; known: {', '.join(ENVS)}")
