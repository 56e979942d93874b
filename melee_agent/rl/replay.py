"""Experience replays: the in-device replay (Parr 2017) and the in-RAM baseline it is measured against.

Rows are 57 float32: ``obs[0:27] | action[27] | reward[28] | discount[29] | next_obs[30:57]``;
workers send them, the replay stores them, the learner reads them, with no conversion.

The device replay is split the TorchRL way into three small parts, each testable alone:

* :class:`DeviceStorage`  - one ``[capacity, 57]`` tensor on the device, written FIFO with a
  wrapping cursor;
* :class:`StagingWriter` - a host block of ``block_size`` rows that fills one row (or many) at a
  time and is copied to the storage as one block;
* :class:`UniformSampler` - indices drawn on the device: ``idx ~ U{0, ..., size-1}``, so a sample is
  ``storage[idx]`` with no host round trip.

:class:`DeviceReplay` composes them; :class:`PrioritizedDeviceReplay` swaps the sampler for a
device-resident float64 two-level sum tree (:class:`BlockSumTree`; ``P(i) = p_i^alpha / sum_k
p_k^alpha``, importance weight ``w_i = (N P(i))^-beta / max_j w_j`` over the batch);
the paper's in-RAM baseline, ``HostReplay``, lives beside the benchmark that uses it
(:mod:`melee_agent.benchmarks.fed`).

Example::

    >>> import numpy as np
    >>> r = DeviceReplay(capacity=10, block_size=4)
    >>> r.add(np.zeros((6, ROW_WIDTH), np.float32)); len(r), r.staged
    (4, 2)
    >>> r.flush(); len(r)
    6
    >>> r.sample(3).obs.shape
    torch.Size([3, 27])
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np
import torch

from melee_agent.rl.rows import ACTION, DISCOUNT, NEXT_OBS, OBS, REWARD, ROW_WIDTH

__all__ = ["ROW_WIDTH", "Replay", "ReplayBatch", "ReplayStats", "DeviceStorage", "StagingWriter", "UniformSampler",
           "DeviceReplay", "BlockSumTree", "PrioritizedDeviceReplay", "annealed_beta"]


class ReplayBatch:
    """A sampled batch: ``rows`` ``[B, 57]`` on the replay's device, with its fields as views.

    Fields are taken from ``rows`` when first read (slicing costs a few microseconds per field,
    so a sample pays only for the gather); ``action`` is converted to int64 once.
    """

    __slots__ = ("rows", "idx", "weight", "_action")

    def __init__(self, rows: torch.Tensor, idx: torch.Tensor, weight: torch.Tensor):
        self.rows, self.idx, self.weight = rows, idx, weight  # weight: importance weights (ones if uniform)
        self._action: torch.Tensor | None = None

    @classmethod
    def from_rows(cls, rows: torch.Tensor, idx: torch.Tensor, weight: torch.Tensor) -> "ReplayBatch":
        return cls(rows, idx, weight)

    @property
    def obs(self) -> torch.Tensor:  # [B, 27]
        return self.rows[:, OBS]

    @property
    def action(self) -> torch.Tensor:  # [B] int64
        if self._action is None:
            self._action = self.rows[:, ACTION].long()
        return self._action

    @property
    def reward(self) -> torch.Tensor:  # [B]
        return self.rows[:, REWARD]

    @property
    def discount(self) -> torch.Tensor:  # [B]: gamma^k, 0 at a terminal state
        return self.rows[:, DISCOUNT]

    @property
    def next_obs(self) -> torch.Tensor:  # [B, 27]
        return self.rows[:, NEXT_OBS]


class ReplayStats(NamedTuple):
    """A prioritized replay's ``replay/`` figures (see :meth:`PrioritizedDeviceReplay.stats`)."""

    priority_mean: float
    priority_max: float
    weight_min: float
    beta: float


@runtime_checkable
class Replay(Protocol):
    """What the learner and the manager need of a replay (device, prioritized or in-RAM alike).

    ``prioritized`` says whether ``add``'s initial priorities are kept and ``update_priorities``
    may be called; a uniform replay accepts and ignores priorities on ``add`` (a worker may send
    them to any manager) and refuses ``update_priorities``.
    """

    device: torch.device
    capacity: int
    prioritized: bool
    beta: float  # the importance-weight exponent (the learner anneals it; 1.0 and unused when uniform)

    def add(self, rows: np.ndarray | torch.Tensor, priority: np.ndarray | torch.Tensor | None = None) -> None: ...

    def flush(self) -> None: ...

    @property
    def staged(self) -> int: ...

    def __len__(self) -> int: ...

    def sample(self, batch_size: int) -> ReplayBatch: ...

    def update_priorities(self, idx: torch.Tensor, priority: torch.Tensor) -> None: ...

    def stats(self) -> ReplayStats | None:
        """The prioritized replay's figures; ``None`` for a uniform one."""
        ...


def _no_priorities(replay: Any) -> None:
    raise TypeError(f"{type(replay).__name__} samples uniformly and keeps no priorities "
                    "(use PrioritizedDeviceReplay: replay.prioritized = true)")


def check_rows(rows: Any) -> np.ndarray | torch.Tensor:
    if rows.ndim != 2 or rows.shape[1] != ROW_WIDTH:
        raise ValueError(f"rows must be [n, {ROW_WIDTH}], got {list(rows.shape)}")
    return rows


class DeviceStorage:
    """A ``[capacity, 57]`` float32 tensor on ``device`` written FIFO with a wrapping cursor."""

    def __init__(self, capacity: int, device: str | torch.device = "cpu"):
        if capacity <= 0:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.capacity = int(capacity)
        self.device = torch.device(device)
        self.data = torch.zeros(self.capacity, ROW_WIDTH, dtype=torch.float32, device=self.device)
        self.cursor = 0  # next row to write
        self.size = 0  # rows holding data; host ints, so nothing here waits on the device
        # The same count on the device, for a train step captured as a CUDA graph: the graph
        # reads it at each replay, where a host int would be frozen into the capture.
        self.size_t = torch.zeros((), dtype=torch.long, device=self.device)

    def write(self, rows: torch.Tensor, indices: bool = True) -> torch.Tensor | None:
        """Write rows at the cursor (wrapping); returns the storage indices written, on the device.

        With ``indices=False`` nothing is returned (saves a small kernel per block when no one
        tracks writes, which matters for tiny blocks).
        """
        total = rows.shape[0]
        start = self.cursor
        if total > self.capacity:
            # Only the newest `capacity` rows would survive; write just those, where FIFO puts them.
            start = (start + total - self.capacity) % self.capacity
            rows = rows[-self.capacity :]
        n = rows.shape[0]
        first = min(n, self.capacity - start)
        self.data[start : start + first].copy_(rows[:first], non_blocking=True)
        if first < n:
            self.data[: n - first].copy_(rows[first:], non_blocking=True)
        self.cursor = (self.cursor + total) % self.capacity
        self.size = min(self.size + total, self.capacity)
        self.size_t.fill_(self.size)
        if not indices:
            return None
        return (torch.arange(n, device=self.device) + start) % self.capacity

    def nbytes(self) -> int:
        return self.data.numel() * self.data.element_size()


class StagingWriter:
    """A host block that collects rows and hands them to a :class:`DeviceStorage` a block at a time.

    On CUDA the block is pinned and double-buffered so a copy in flight never sees its source
    overwritten; on the CPU a block copy is a plain memcpy.
    """

    def __init__(self, storage: DeviceStorage, block_size: int = 2000):
        if block_size <= 0:
            raise ValueError(f"block_size must be positive, got {block_size}")
        self.storage = storage
        self.block_size = int(block_size)
        pin = storage.device.type == "cuda"
        self._blocks = [torch.empty(self.block_size, ROW_WIDTH, dtype=torch.float32, pin_memory=pin)
                        for _ in range(2 if pin else 1)]
        self._events: list[Any] = [None] * len(self._blocks)
        self._which = 0
        self._np = self._blocks[0].numpy()
        self.staged = 0
        self.on_write = None  # callback(indices on the device, rows consumed) for samplers that track writes

    def add_one(self, row: np.ndarray | torch.Tensor) -> None:
        """Stage one ``[57]`` row: a numpy write, no torch op (the one-at-a-time fast path)."""
        if isinstance(row, torch.Tensor):
            row = row.detach().to("cpu", torch.float32).numpy()
        self._np[self.staged] = row
        self.staged += 1
        if self.staged == self.block_size:
            self.flush()

    def add(self, rows: np.ndarray | torch.Tensor) -> None:
        rows = check_rows(rows)
        n, i = rows.shape[0], 0
        if self.staged == 0 and n >= self.block_size:
            # Whole blocks skip the staging copy: one transfer straight into the storage.
            whole = n - n % self.block_size
            src = rows[:whole]
            src = torch.from_numpy(np.ascontiguousarray(src, dtype=np.float32)) if isinstance(src, np.ndarray) else src
            self._write(src.to(torch.float32))
            i = whole
        while i < n:
            take = min(self.block_size - self.staged, n - i)
            chunk = rows[i : i + take]
            if isinstance(chunk, torch.Tensor):
                chunk = chunk.detach().to("cpu", torch.float32).numpy()
            self._np[self.staged : self.staged + take] = chunk
            self.staged += take
            i += take
            if self.staged == self.block_size:
                self.flush()

    def flush(self) -> None:
        """Move the staged rows (a whole or partial block) to the storage."""
        if self.staged == 0:
            return
        block = self._blocks[self._which]
        self._write(block[: self.staged])
        if len(self._blocks) > 1:
            ev = torch.cuda.Event()
            ev.record()
            self._events[self._which] = ev
            self._which ^= 1
            if self._events[self._which] is not None:
                self._events[self._which].synchronize()
            self._np = self._blocks[self._which].numpy()
        self.staged = 0

    def _write(self, rows: torch.Tensor) -> None:
        idx = self.storage.write(rows, indices=self.on_write is not None)
        if self.on_write is not None:
            self.on_write(idx, rows.shape[0])

    def nbytes(self) -> int:
        return sum(b.numel() * b.element_size() for b in self._blocks)


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


class DeviceReplay:
    """The in-device experience replay: storage, staging writer and uniform sampler in one.

    ``add`` accepts one row ``[57]`` or many ``[n, 57]`` (numpy or torch); rows reach the device a
    block at a time, so ``len`` counts rows already on the device and ``staged`` the rest.
    """

    def __init__(self, capacity: int, device: str | torch.device = "cpu", block_size: int = 2000,
                 seed: int | None = None):
        self.storage = DeviceStorage(capacity, device)
        self.writer = StagingWriter(self.storage, block_size)
        self.sampler = UniformSampler(self.storage, seed)
        self.device = self.storage.device
        self.capacity = self.storage.capacity
        self.block_size = self.writer.block_size

    prioritized = False
    beta = 1.0  # uniform: every importance weight is 1

    def add(self, rows: np.ndarray | torch.Tensor, priority: np.ndarray | torch.Tensor | None = None) -> None:
        """Stage rows for the device (``priority`` is ignored: sampling is uniform)."""
        if rows.ndim == 1:
            if rows.shape[0] != ROW_WIDTH:
                raise ValueError(f"a row must have {ROW_WIDTH} values, got {rows.shape[0]}")
            self.writer.add_one(rows)
        else:
            self.writer.add(rows)

    def flush(self) -> None:
        self.writer.flush()

    def write(self, rows: torch.Tensor, priority: torch.Tensor | None = None) -> None:
        """Rows already on the replay's device, straight into the storage: no staging block, no host copy
        (the fused loop's path; ``add`` stages host rows a block at a time). Staged rows go first, so the
        storage keeps arrival order. ``priority`` is ignored here (sampling is uniform)."""
        self._check_device_rows(rows)
        self.writer.flush()
        self.storage.write(rows, indices=False)

    def _check_device_rows(self, rows: torch.Tensor) -> None:
        check_rows(rows)
        # "cuda" and "cuda:0" name one device: compare indices only where both are set.
        a, b = (rows.device, self.device) if isinstance(rows, torch.Tensor) else (None, self.device)
        if a is None or a.type != b.type or (a.index is not None and b.index is not None and a.index != b.index):
            where = rows.device if isinstance(rows, torch.Tensor) else "the host (numpy)"
            raise ValueError(f"write() takes rows on the replay's device {self.device}, not on {where}; use add()")

    @property
    def staged(self) -> int:
        return self.writer.staged

    def __len__(self) -> int:
        return self.storage.size

    def sample(self, batch_size: int) -> ReplayBatch:
        idx, weight = self.sampler.sample(batch_size)
        return ReplayBatch.from_rows(self.storage.data.index_select(0, idx), idx, weight)

    def sample_graphed(self, batch_size: int, beta: torch.Tensor | None = None) -> ReplayBatch:
        """A sample with no host read (see :meth:`UniformSampler.sample_graphed`); ``beta`` is for
        the prioritized replay's signature and unused here."""
        idx, weight = self.sampler.sample_graphed(batch_size)
        return ReplayBatch.from_rows(self.storage.data.index_select(0, idx), idx, weight)

    def batch_at(self, idx: torch.Tensor, weight: torch.Tensor) -> ReplayBatch:
        """The batch of the given rows and weights (to replay another learner's draw)."""
        return ReplayBatch.from_rows(self.storage.data.index_select(0, idx), idx, weight)

    def update_priorities(self, idx: torch.Tensor, priority: torch.Tensor) -> None:
        _no_priorities(self)

    def stats(self) -> ReplayStats | None:
        return None

    def nbytes(self) -> int:
        """Bytes held: the storage plus the staging block(s)."""
        return self.storage.nbytes() + self.writer.nbytes()


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


class PrioritizedDeviceReplay(DeviceReplay):
    """Proportional prioritized replay (Ape-X: alpha 0.6, beta 0.4) with a device sum tree.

    New rows get the priority given to ``add`` (actors' initial priorities) or else the largest
    priority seen so far. Sampling is stratified: one draw per equal slice of the total mass.
    """

    prioritized = True

    def __init__(self, capacity: int, device: str | torch.device = "cpu", block_size: int = 2000,
                 alpha: float = 0.6, beta: float = 0.4, seed: int | None = None, eps: float = 1e-6):
        super().__init__(capacity, device, block_size, seed)
        self.alpha, self.beta, self.eps = alpha, beta, eps  # beta may be changed between samples (annealing)
        self.tree = BlockSumTree(self.capacity, self.device)
        self._last_weight: torch.Tensor | None = None  # the last batch's importance weights
        self._strata_cache: dict[int, torch.Tensor] = {}
        # The largest priority seen, kept on the device so update_priorities never reads back.
        self._max_priority = torch.ones((), dtype=torch.float64, device=self.device)
        self._pending: list[np.ndarray] = []  # initial priorities of staged rows, in order (NaN: use the max)
        self.writer.on_write = self._on_write

    @property
    def max_priority(self) -> float:
        return float(self._max_priority)

    def add(self, rows: np.ndarray | torch.Tensor, priority: np.ndarray | torch.Tensor | None = None) -> None:
        n = 1 if rows.ndim == 1 else rows.shape[0]
        if priority is None:
            p = np.full(n, np.nan, np.float64)
        else:
            p = np.asarray(priority.detach().cpu() if isinstance(priority, torch.Tensor) else priority,
                           dtype=np.float64).reshape(-1)
            if p.shape[0] != n or not np.all(np.isfinite(p)) or np.any(p < 0):
                raise ValueError(f"priority must be {n} finite values >= 0, got shape {list(p.shape)}")
            if n:
                self._max_priority.clamp_(min=float(p.max()))
        self._pending.append(p)
        try:
            super().add(rows)
        except ValueError:
            self._pending.pop()  # bad rows change nothing
            raise

    def write(self, rows: torch.Tensor, priority: torch.Tensor | None = None) -> None:
        """Device rows straight into the storage (see :meth:`DeviceReplay.write`), each with its initial
        ``priority`` (a device tensor ``[n]``; none: the largest priority seen), set in the sum tree on the
        device. Nothing is read back to the host."""
        self._check_device_rows(rows)
        n = rows.shape[0]
        if priority is not None and tuple(priority.shape) != (n,):
            raise ValueError(f"priority must be [{n}], got {list(priority.shape)}")
        self.writer.flush()
        idx = self.storage.write(rows)
        if priority is None:
            p = self._max_priority.expand(idx.shape[0])
        else:
            p = priority.detach().to(self.device, torch.float64)[n - idx.shape[0]:]
            torch.maximum(self._max_priority, p.max(), out=self._max_priority)
        self.tree.set(idx, (p + self.eps) ** self.alpha, compact=True)

    def _on_write(self, idx: torch.Tensor, consumed: int) -> None:
        # `consumed` rows left the staging side; only the newest len(idx) of them survived a wrap.
        pending = np.concatenate(self._pending) if self._pending else np.zeros(0)
        p, rest = pending[:consumed], pending[consumed:]
        self._pending = [rest] if rest.size else []
        p = torch.from_numpy(np.ascontiguousarray(p[consumed - idx.shape[0]:])).to(self.device)
        p = torch.where(torch.isnan(p), self._max_priority, p)
        self.tree.set(idx, (p + self.eps) ** self.alpha, compact=True)

    def sample(self, batch_size: int) -> ReplayBatch:
        """Stratified proportional sampling: draw ``i`` falls in slice ``[i, i + 1) * total / B`` of the mass."""
        idx, weight = self.sample_indices(batch_size)
        return ReplayBatch.from_rows(self.storage.data.index_select(0, idx), idx, weight)

    def sample_indices(self, batch_size: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The sampler alone: ``(idx, weight)`` on the device, no rows gathered.

        ``w_i = (N P(i))^-beta / max_j w_j`` reduces to ``(p_i / min_j p_j)^-beta`` over the batch,
        so neither ``N`` nor the total is needed. A few tensor ops, whatever the capacity.
        """
        if len(self) == 0:
            raise ValueError("cannot sample from an empty replay (flush staged rows first)")
        c = self.tree.sums.cumsum(0)
        u = torch.rand(batch_size, dtype=torch.float64, device=self.device, generator=self.sampler.generator)
        # mass_i = (i + u_i (1 - 1e-9)) / B * total: one draw in each of B equal slices, kept below the total.
        mass = torch.add(self._strata(batch_size), u, alpha=(1.0 - 1e-9) / batch_size).mul_(c[-1])
        idx = self.tree.find(mass, cumulative=c, limit=len(self) - 1)
        p = self.tree.get(idx).clamp_min_(1e-300)
        weight = (p / p.min()).pow_(-self.beta).float()
        self._last_weight = weight  # read by stats(), so a step pays nothing for the figure
        return idx, weight

    def sample_graphed(self, batch_size: int, beta: torch.Tensor | None = None) -> ReplayBatch:
        """:meth:`sample` with nothing read from the host, for a step captured as a CUDA graph:
        the filled size is the storage's device count, ``beta`` a device scalar (default: a
        tensor of ``self.beta`` made now), the uniforms from the device's default generator."""
        c = self.tree.sums.cumsum(0)
        u = torch.rand(batch_size, dtype=torch.float64, device=self.device)
        mass = torch.add(self._strata(batch_size), u, alpha=(1.0 - 1e-9) / batch_size).mul_(c[-1])
        idx = torch.minimum(self.tree.find(mass, cumulative=c), self.storage.size_t - 1)
        p = self.tree.get(idx).clamp_min_(1e-300)
        if beta is None:
            beta = torch.tensor(self.beta, dtype=torch.float64, device=self.device)
        weight = (p / p.min()).pow_(-beta).float()
        self._last_weight = weight
        return ReplayBatch.from_rows(self.storage.data.index_select(0, idx), idx, weight)

    def _strata(self, batch_size: int) -> torch.Tensor:
        s = self._strata_cache.get(batch_size)
        if s is None:
            s = self._strata_cache[batch_size] = torch.arange(batch_size, device=self.device,
                                                              dtype=torch.float64) / batch_size
        return s

    def stats(self) -> ReplayStats:
        """``replay/`` figures for TensorBoard (one host read each): ``priority_mean``, the stored
        priorities' power mean ``(sum_i p_i^alpha / N)^(1/alpha)`` (what the tree holds, so it costs
        nothing to read), the largest priority seen, the smallest importance weight of the last
        batch sampled, and beta."""
        n = max(len(self), 1)
        w = self._last_weight
        return ReplayStats(priority_mean=float((self.tree.total() / n) ** (1.0 / self.alpha)),
                           priority_max=self.max_priority, weight_min=1.0 if w is None else float(w.min()),
                           beta=float(self.beta))

    def update_priorities(self, idx: torch.Tensor, priority: torch.Tensor) -> None:
        """Set new priorities (e.g. ``|TD error|``) for sampled rows; stays on the device."""
        p = priority.detach().to(self.device, torch.float64)
        self.tree.set(idx.to(self.device), (p + self.eps) ** self.alpha)
        torch.maximum(self._max_priority, p.max(), out=self._max_priority)
