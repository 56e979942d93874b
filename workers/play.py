"""Play one segment with a fixed model: epsilon-greedy actions, n-step rows, episode statistics.

This is the part of a worker that touches the environment; it knows nothing about HTTP, so the
same code feeds the manager, an in-process learner, or a test.

Ape-X exploration: worker ``i`` of ``N`` uses ``epsilon_i = base^(1 + alpha * i / (N - 1))``
(``base`` 0.4, ``alpha`` 7), so a fleet spans 0.4 down to 0.4^8 ~ 0.00066; one worker uses 0.4.

Example::

    >>> round(ape_x_epsilon(0, 8), 3), round(ape_x_epsilon(7, 8), 5)
    (0.4, 0.00066)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from melee_agent.model import DuelingDQN
from workers.nstep import nstep_rows


def ape_x_epsilon(index: int, count: int, base: float = 0.4, alpha: float = 7.0) -> float:
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"worker index must be in [0, {count}), got {index}")
    if count == 1:
        return base
    return base ** (1 + alpha * index / (count - 1))


@dataclass
class SegmentStats:
    """Episode statistics of one segment, in the wire format's ``stats`` keys."""

    episodes: int = 0
    return_sum: float = 0.0
    length_sum: float = 0.0
    hits: int = 0
    untouched: int = 0
    frames: int = 0
    steps: int = 0
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in vars(self).items() if k != "extra"}
        d.update(self.extra)
        return d


class SegmentPlayer:
    """Keeps an environment running across segments; ``play`` returns rows and stats for one."""

    def __init__(self, env: Any, epsilon: float, n_step: int, gamma: float, seed: int = 0):
        self.env = env
        self.epsilon = float(epsilon)
        self.n_step = n_step
        self.gamma = gamma
        self.obs = env.reset()
        self.gen = torch.Generator(device=env.device).manual_seed(seed)

    @torch.inference_mode()
    def act(self, model: DuelingDQN, obs: torch.Tensor) -> torch.Tensor:
        greedy = model(obs).argmax(1)
        B = obs.shape[0]
        explore = torch.rand(B, generator=self.gen, device=obs.device) < self.epsilon
        rand = torch.randint(0, self.env.num_actions, (B,), generator=self.gen, device=obs.device)
        return torch.where(explore, rand, greedy)

    @torch.inference_mode()
    def play(self, model: DuelingDQN, frames_per_env: int, max_steps: int | None = None) -> tuple[torch.Tensor, SegmentStats]:
        """Play until every environment has played ``frames_per_env`` frames (or ``max_steps``)."""
        import time

        t0 = time.perf_counter()
        env, stats = self.env, SegmentStats()
        obs_l, act_l, rew_l, nxt_l, done_l, term_l = [], [], [], [], [], []
        played = torch.zeros(env.num_envs, device=env.device)
        obs = self.obs
        while True:
            action = self.act(model, obs)
            nxt, reward, done, info = env.step(action)
            obs_l.append(obs)
            act_l.append(action)
            rew_l.append(reward)
            nxt_l.append(info["final_obs"])
            done_l.append(done)
            term_l.append(info["terminal"])
            played += info["frames"]
            if bool(done.any()):
                stats.episodes += int(done.sum())
                stats.return_sum += float(info["episode_return"][done].sum())
                stats.length_sum += float(info["episode_frame"][done].sum())
                stats.untouched += int((done & ~info["hit"]).sum())
            stats.hits += int(info["hit"].sum())
            obs = nxt
            stats.steps += 1
            if bool((played >= frames_per_env).all()) or (max_steps is not None and stats.steps >= max_steps):
                break
        self.obs = obs
        stats.frames = int(played.sum())
        rows = nstep_rows(torch.stack(obs_l), torch.stack(act_l), torch.stack(rew_l), torch.stack(nxt_l),
                          torch.stack(done_l), torch.stack(term_l), self.n_step, self.gamma)
        stats.seconds = time.perf_counter() - t0
        return rows, stats
