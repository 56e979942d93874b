"""The replay's samplers: uniform indices drawn on the device, and the prioritized replay's two-level sum tree."""

from __future__ import annotations

import torch

from melee_agent.rl.replay.storage import DeviceStorage


class UniformSampler:
    """Uniform indices over the filled part of a storage, drawn on its device."""

    def __init__(self, storage: DeviceStorage, seed: int | None = None):
        self.storage = storage
        self.generator = None
        if seed is not None:
            self.generator = torch.Generator(device=storage.device)
            self.generator.manual_seed(seed)
        self._ones: dict[int, torch.Tensor] = {}

    def sample(self, batch_size: int) -> tuple[torch.Tensor, torch.Tensor]:
        size = self.storage.size
        if size == 0:
            raise ValueError("cannot sample from an empty replay (flush staged rows first)")
        idx = torch.randint(0, size, (batch_size,), device=self.storage.device, generator=self.generator)
        weight = self._ones.get(batch_size)
        if weight is None:
            weight = self._ones[batch_size] = torch.ones(batch_size, device=self.storage.device)
        return idx, weight

    def sample_graphed(self, batch_size: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The same draw with nothing read from the host, for a step captured as a CUDA graph::

            idx = min(floor(u * size), size - 1),   u ~ U[0, 1) in float64

        ``size`` is the storage's device count (read at each graph replay) and ``u`` comes from
        the device's default generator (graph-safe; a seeded ``generator`` is not used here).
        """
        size = self.storage.size_t
        u = torch.rand(batch_size, dtype=torch.float64, device=self.storage.device)
        idx = torch.minimum(u.mul_(size).long(), size - 1)
        weight = self._ones.get(batch_size)
        if weight is None:
            weight = self._ones[batch_size] = torch.ones(batch_size, device=self.storage.device)
        return idx, weight

class BlockSumTree:
    """Priorities in two levels on a device, float64: leaves ``[K, S]`` and their block sums ``[K]``.

    A sum tree of depth two. Sampling mass ``m`` (``0 <= m < total``) finds its block with one
    ``searchsorted`` over the cumulative block sums, then its leaf with one ``searchsorted`` over
    the cumulative sums inside that block::

        c_k   = sum_{k' <= k} s_k'            (s_k = sum_j p_{k, j}: the block sums)
        k(m)  = min{k : c_k > m},   r = m - (c_k - s_k)
        j(m)  = min{j : sum_{j' <= j} p_{k, j'} > r},   leaf = k S + j

    so a batch costs the same dozen tensor ops whatever the capacity (a binary tree pays one op per
    level, 20 at a million rows); the work is ``O(K + B S)`` elements, which ``S = 128`` keeps small
    at a million rows. ``set`` writes leaves and recomputes the sums of the blocks it touched from
    the leaves (not by adding differences), so repeated indices in one update and float rounding
    never make a block sum disagree with its leaves. Leaves of zero are never found.

    Example::

        >>> t = BlockSumTree(6, torch.device("cpu"), block=4)
        >>> t.set(torch.arange(6), torch.tensor([1.0, 0.0, 2.0, 3.0, 4.0, 0.0]))
        >>> float(t.total()), t.find(torch.tensor([0.5, 1.0, 5.99, 6.0, 9.99], dtype=torch.float64)).tolist()
        (10.0, [0, 2, 3, 4, 4])
    """

    def __init__(self, capacity: int, device: torch.device, block: int = 128):
        self.block = int(block)
        self.num_blocks = max(1, -(-int(capacity) // self.block))
        self.leaves = torch.zeros(self.num_blocks, self.block, dtype=torch.float64, device=device)
        self.sums = torch.zeros(self.num_blocks, dtype=torch.float64, device=device)
        self._flat = self.leaves.view(-1)

    def set(self, idx: torch.Tensor, value: torch.Tensor, compact: bool = False) -> None:
        """Leaves ``idx`` get ``value``; ``compact`` (for long sorted runs such as FIFO writes) sums
        each touched block once, at the cost of a host sync on CUDA (never used in a train step)."""
        # index_select / index_copy_ rather than x[i]: on CPU, advanced indexing costs ~10x more.
        self._flat.index_copy_(0, idx, value.to(torch.float64))
        blocks = torch.div(idx, self.block, rounding_mode="floor")
        if compact:
            blocks = torch.unique_consecutive(blocks)
        self.sums.index_copy_(0, blocks, self.leaves.index_select(0, blocks).sum(1))

    def total(self) -> torch.Tensor:
        return self.sums.sum()

    def find(self, mass: torch.Tensor, cumulative: torch.Tensor | None = None, limit: int | None = None) -> torch.Tensor:
        """Leaf indices where the running sum first exceeds ``mass`` (``[B]`` float64, below the total).

        ``cumulative``: the block sums' cumsum, where the caller has it already. A mass that float
        rounding puts past its block's last leaf lands on the next leaf, clamped to ``limit``
        (default: the last leaf).
        """
        c = self.sums.cumsum(0) if cumulative is None else cumulative
        k = torch.searchsorted(c, mass, right=True).clamp_(max=self.num_blocks - 1)
        r = mass - (c - self.sums).index_select(0, k)  # the mass left inside block k
        inside = self.leaves.index_select(0, k).cumsum(1)  # [B, S]
        j = torch.searchsorted(inside, r.unsqueeze(1), right=True).squeeze(1)
        return j.add_(k, alpha=self.block).clamp_(max=self._flat.shape[0] - 1 if limit is None else limit)

    def get(self, idx: torch.Tensor) -> torch.Tensor:
        return self._flat.index_select(0, idx)


def annealed_beta(beta: float, steps: int, step: int) -> float:
    """The importance-weight exponent after ``step`` train steps (Schaul et al. 2016): linear from
    ``beta`` to 1 over ``steps`` steps, 1 after that; ``steps <= 0`` keeps ``beta``.

    >>> annealed_beta(0.4, 100, 0), annealed_beta(0.4, 100, 50), annealed_beta(0.4, 100, 500)
    (0.4, 0.7, 1.0)
    """
    if steps <= 0:
        return beta
    return beta + (1.0 - beta) * min(1.0, step / steps)
