"""The arena's random numbers, drawn by name from a counter hash: no shared generator stream.

Every draw is a uniform ``[B]`` column, a pure function of ``(seed, environment, counter,
stream)``: environment i's numbers do not depend on how many environments run beside it (so B = 1
and B = 1,024 play the same games), and a compiled frame needs no generator state.

Example::

    >>> import torch
    >>> u = uniform_streams(torch.arange(3.0), torch.zeros(3), 0, (0, 4))
    >>> len(u), u[0].shape, bool(((u[1] >= 0) & (u[1] < 1)).all())
    (2, torch.Size([3]), True)
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np
import torch


def uniform_streams(env_id: torch.Tensor, counter: torch.Tensor, seed: int | torch.Tensor,
                    streams: Sequence[int]) -> list[torch.Tensor]:
    """One uniform ``[B]`` column in ``[0, 1)`` per stream number, for this counter value.

    Separate columns rather than one ``[B, n]`` tensor, which is what a compiled frame fuses best.
    """
    base = (env_id.long() * 1_000_003 + counter.long() * 7_919 + seed * 104_729) * 16
    out = []
    for k in streams:
        x = base + k
        for _ in range(2):  # a 32-bit integer mixer (degski's hash), masked to stay exact in int64
            x = ((x >> 16) ^ x) * 0x45D9F3B & 0xFFFFFFFF
        x = (x >> 16) ^ x
        out.append(x.to(torch.float32) * (1.0 / 4294967296.0))
    return out



def weights_cdf(weights: Sequence[float] | None, items: Sequence[object], label: str, noun: str,
                device: torch.device | str) -> torch.Tensor:
    """``[K]`` float32 cumulative normalized weights of ``items`` (None or empty: equal), the last exactly 1; a
    ValueError naming ``label`` for a count that differs from the items' or a weight that is negative or not finite.

    >>> weights_cdf([1, 3], (5, 9), "level weights", "levels", "cpu").tolist()
    [0.25, 1.0]
    """
    w = [1.0] * len(items) if not weights else [float(x) for x in weights]
    if len(w) != len(items):
        raise ValueError(f"{label}: {len(w)} weights for {len(items)} {noun} {list(items)}")
    if any(not np.isfinite(x) or x < 0 for x in w) or sum(w) <= 0:
        raise ValueError(f"{label} must be non-negative with a positive sum, got {w}")
    cdf = np.cumsum(np.asarray(w, np.float64) / sum(w))
    cdf[-1] = 1.0
    return torch.tensor(cdf, dtype=torch.float32, device=device)


def pick_index(cdf: torch.Tensor, u: torch.Tensor, env_id: torch.Tensor, spread: bool) -> torch.Tensor:
    """``[B]`` long indices into the ``K`` items of ``cdf``: item ``k`` where ``cdf[k-1] <= u < cdf[k]``, or
    (``spread``) environment ``i`` keeping ``i % K`` (equal counts per item, for evaluations)."""
    K = cdf.shape[0]
    if spread:
        return env_id.long() % K
    return torch.searchsorted(cdf, u.contiguous(), right=True).clamp(max=K - 1)

class CpuDraws(NamedTuple):
    """The CPU's random numbers for one frame (stream numbers fixed: they define the games)."""

    punish: torch.Tensor  # stream 0: does it punish end lag it can reach (vs level.punish)
    wild: torch.Tensor  # stream 2: which attack when its choice is not accurate
    accurate: torch.Tensor  # stream 3: is its choice one that reaches (vs level.accuracy)
    eager: torch.Tensor  # stream 4: does it start an attack in neutral (vs level.aggression)
    rest: torch.Tensor  # stream 5: extra rest after an attack (times level.rest)
    pick: tuple[torch.Tensor, ...]  # streams 6 + k: attack k's weight among those that reach

    @classmethod
    def draw(cls, env_id: torch.Tensor, tick: torch.Tensor, seed: int | torch.Tensor, num_attacks: int) -> CpuDraws:
        # Stream 1 is unused: it was never read, and leaving it out keeps every other stream's values.
        u = uniform_streams(env_id, tick, seed, (0, 2, 3, 4, 5, *range(6, 6 + num_attacks)))
        return cls(u[0], u[1], u[2], u[3], u[4], tuple(u[5:]))


#: Reset draws use their own seed offset, counted by episode rather than by frame.
RESET_SEED_OFFSET = 7_777


class ResetDraws(NamedTuple):
    """Where a new episode starts: the agent's spot, the CPU's distance from it, its level and the stage."""

    agent_x: torch.Tensor  # stream 0: the agent in [-60, 60)
    gap: torch.Tensor  # stream 1: the CPU 50 to 90 away, on the other side of the agent from centre
    level: torch.Tensor  # stream 2: the CPU level, from the arena's level mix (a stream of its own, so
    # the positions of a one-level arena are what they were before levels could mix)
    stage: torch.Tensor  # stream 3: the stage, from the arena's stage mix (its own stream, for the same reason)

    @classmethod
    def draw(cls, env_id: torch.Tensor, episode: torch.Tensor, seed: int | torch.Tensor) -> ResetDraws:
        return cls(*uniform_streams(env_id, episode, seed + RESET_SEED_OFFSET, (0, 1, 2, 3)))
