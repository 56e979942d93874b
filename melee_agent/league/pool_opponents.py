"""Port 1 of every environment played by one of the pool's models, drawn again at the start of each game.

:class:`PoolOpponents` is an :class:`~melee_agent.arena.ports.Opponents` whose members' environments change: where a
game ends (``restart``), the environment's next opponent is drawn from the members' weights (the league's PFSP)
just before port 1's next choice, so a game is played by one member from start to end, and :attr:`assign` still
names the member of a game that has just ended when the step that ended it returns (the league's
:class:`~melee_agent.league.results_env.ResultsEnv` reads it there). Each member still chooses from one forward pass
over all the environments it plays.

Example::

    >>> import torch
    >>> from melee_agent.arena import Arena
    >>> from melee_agent.rl.policies import noop_policy
    >>> env = Arena(8, game="fight", characters=("fox", "fox"))
    >>> pool = PoolOpponents(8, seed=0)
    >>> pool.set_member("a", noop_policy("fight")); pool.set_member("b", noop_policy("fight"))
    >>> pool.set_weights({"a": 0.0, "b": 1.0}); env.set_opponents(pool)
    >>> _ = env.reset(); _ = env.step(torch.zeros(8, dtype=torch.long))
    >>> pool.names(torch.ones(8, dtype=torch.bool)) == ["b"] * 8
    True
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import Tensor

from melee_agent.arena.ports import Opponent, Opponents, Policy, PortArena


class PoolOpponents(Opponents):
    """Every environment's port 1 played by a member drawn by weight at each game's start (see the module)."""

    def __init__(self, num_envs: int, device: torch.device | str = "cpu", seed: int = 0):
        super().__init__([], num_envs, device)
        self.mask[:] = True  # a model plays port 1 everywhere (no CPU: it plays Marth only)
        self.slots: dict[str, int] = {}  # member name -> its index in self.members
        self.weights = torch.zeros(0, device=self.device)
        #: The member (index in ``members``) playing each environment's current or just-ended game (-1: none yet).
        self.assign = torch.full((num_envs,), -1, dtype=torch.long, device=self.device)
        self.pending = torch.ones(num_envs, dtype=torch.bool, device=self.device)  # draw before the next choice
        self.gen = torch.Generator(device=self.device).manual_seed(seed)

    def set_member(self, name: str, policy: Policy) -> None:
        """Add ``name`` (drawn once it has a weight), or give it a new policy."""
        if name in self.slots:
            self.members[self.slots[name]].policy = policy
            return
        self.slots[name] = len(self.members)
        self.members.append(Opponent(policy, torch.zeros(0, dtype=torch.long, device=self.device), name))
        self.weights = torch.cat((self.weights, torch.zeros(1, device=self.device)))

    def set_weights(self, weights: Mapping[str, float]) -> None:
        """Each member's relative weight for the next draws (members not named: 0, never drawn again; those
        playing a game finish it)."""
        unknown = set(weights) - set(self.slots)
        if unknown:
            raise ValueError(f"no such members in the pool: {sorted(unknown)}")
        w = torch.zeros(len(self.members), device=self.device)
        for name, x in weights.items():
            if not x >= 0:
                raise ValueError(f"member {name!r}: a weight must be 0 or more, got {x}")
            w[self.slots[name]] = float(x)
        self.weights = w

    def restart(self, where: Tensor) -> None:
        super().restart(where)
        self.pending = self.pending | where

    def controls(self, env: PortArena, active: Tensor) -> tuple[Tensor, Tensor]:
        if bool(self.pending.any()):
            self._draw(self.pending)
            self.pending = torch.zeros_like(self.pending)
        return super().controls(env, active)

    def _draw(self, where: Tensor) -> None:
        if not bool((self.weights > 0).any()):
            raise ValueError("the pool has no member with a weight to draw (PoolOpponents.set_weights)")
        idx = where.nonzero().view(-1)
        picked = torch.multinomial(self.weights, idx.numel(), replacement=True, generator=self.gen)
        self.assign[idx] = picked
        for k, m in enumerate(self.members):  # each member's environments, for its one forward pass
            m.envs = (self.assign == k).nonzero().view(-1)

    def names(self, where: Tensor) -> list[str]:
        """The member playing (or who just played) each environment where ``where`` holds."""
        return [self.members[int(k)].name if k >= 0 else "" for k in self.assign[where].tolist()]


__all__ = ["PoolOpponents"]
