"""An environment that tallies how each finished game came out, by who played port 1.

:class:`ResultsEnv` wraps a :class:`~melee_agent.envs.vecenv.VecEnv` unchanged (the player sees the same
observations, rewards and infos) and counts every game played to its end (``done & info.game_over``) as a win, a
loss or a draw for port 0 (:func:`melee_agent.envs.rewards.game_result`: stocks, then percent), under the key
``key(info)`` gives its environment: the CPU level it was played against (``info.cpu_level``), the pool member
that played it, a constant. :meth:`ResultsEnv.take` hands the counts over and starts new ones.

Example::

    >>> import torch
    >>> from melee_agent.arena import Arena
    >>> env = ResultsEnv(Arena(4, game="fight", cpu_level=[1, 9], max_frames=30), key=lambda info: info.cpu_level)
    >>> _ = env.reset()
    >>> for _ in range(40): _ = env.step(torch.zeros(4, dtype=torch.long))
    >>> sum(sum(r) for r in env.take().values()) >= 4    # every game decided by the 30-frame clock
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from melee_agent.envs.rewards import game_result
from melee_agent.envs.vecenv import StepInfo, StepResult

Record = tuple[int, int, int]


class ResultsEnv:
    """``env`` with every finished game's result counted by ``key(info)`` (see the module's docstring)."""

    def __init__(self, env: Any, key: Callable[[StepInfo], torch.Tensor]):
        self.env = env
        self.key = key
        self.results: dict[int, list[int]] = {}  # key -> port 0's [wins, losses, draws]

    def __getattr__(self, name: str) -> Any:  # num_envs, device, num_actions, opponents...: the arena's own
        return getattr(self.env, name)

    def reset(self) -> torch.Tensor:
        return self.env.reset()

    def close(self) -> None:
        self.env.close()

    def step(self, actions: torch.Tensor) -> StepResult:
        return self._count(self.env.step(actions))

    def step_async(self, actions: torch.Tensor) -> StepResult:
        return self._count(self.env.step_async(actions))

    def _count(self, out: StepResult) -> StepResult:
        _, _, done, info = out
        games = done & info.game_over
        if bool(games.any()):
            result = game_result(info.agent_stocks, info.opponent_stocks, info.agent_percent, info.opponent_percent)
            keys = self.key(info).long()
            # One bincount per outcome on the device, then a few numbers to the host (not one per game).
            n = int(keys[games].max()) + 1
            counts = [torch.bincount(keys[games & (result == r)], minlength=n).tolist() for r in (1, -1, 0)]
            for k in range(n):
                w, lo, d = counts[0][k], counts[1][k], counts[2][k]
                if w or lo or d:
                    acc = self.results.setdefault(k, [0, 0, 0])
                    acc[0], acc[1], acc[2] = acc[0] + w, acc[1] + lo, acc[2] + d
        return out

    def take(self) -> dict[int, Record]:
        """The counts since the last call (key -> port 0's wins, losses, draws); the tally starts again."""
        out = {k: (v[0], v[1], v[2]) for k, v in self.results.items()}
        self.results = {}
        return out


__all__ = ["ResultsEnv"]
