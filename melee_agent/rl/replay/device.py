"""The device replays: :class:`DeviceReplay` (storage, writer, uniform sampler) and :class:`PrioritizedDeviceReplay`,
with the batch they sample and the :class:`Replay` protocol both keep."""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np
import torch

from melee_agent.rl.replay.samplers import BlockSumTree, UniformSampler
from melee_agent.rl.replay.storage import DeviceStorage, check_rows
from melee_agent.rl.replay.writer import StagingWriter
from melee_agent.rl.rows import ROW_WIDTH, columns, state_dim_of

DEFAULT_COLUMNS = columns()


class ReplayBatch:
    """A sampled batch: ``rows`` ``[B, 57]`` on the replay's device, with its fields as views.

    Fields are taken from ``rows`` when first read (slicing costs a few microseconds per field,
    so a sample pays only for the gather); ``action`` is converted to int64 once.
    """

    __slots__ = ("rows", "idx", "weight", "_action", "_cols")

    def __init__(self, rows: torch.Tensor, idx: torch.Tensor, weight: torch.Tensor):
        self.rows, self.idx, self.weight = rows, idx, weight  # weight: importance weights (ones if uniform)
        self._action: torch.Tensor | None = None
        # The default layout's columns, else those the rows' width gives (melee_agent.rl.rows.columns).
        self._cols = DEFAULT_COLUMNS if rows.shape[1] == ROW_WIDTH else columns(state_dim_of(rows.shape[1]))

    @classmethod
    def from_rows(cls, rows: torch.Tensor, idx: torch.Tensor, weight: torch.Tensor) -> "ReplayBatch":
        return cls(rows, idx, weight)

    @property
    def obs(self) -> torch.Tensor:  # [B, 27]
        return self.rows[:, self._cols.obs]

    @property
    def action(self) -> torch.Tensor:  # [B] int64
        if self._action is None:
            self._action = self.rows[:, self._cols.action].long()
        return self._action

    @property
    def reward(self) -> torch.Tensor:  # [B]
        return self.rows[:, self._cols.reward]

    @property
    def discount(self) -> torch.Tensor:  # [B]: gamma^k, 0 at a terminal state
        return self.rows[:, self._cols.discount]

    @property
    def next_obs(self) -> torch.Tensor:  # [B, 27]
        return self.rows[:, self._cols.next_obs]


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

class DeviceReplay:
    """The in-device experience replay: storage, staging writer and uniform sampler in one.

    ``add`` accepts one row ``[57]`` or many ``[n, 57]`` (numpy or torch); rows reach the device a
    block at a time, so ``len`` counts rows already on the device and ``staged`` the rest.
    """

    def __init__(self, capacity: int, device: str | torch.device = "cpu", block_size: int = 2000,
                 seed: int | None = None, width: int = ROW_WIDTH):
        self.storage = DeviceStorage(capacity, device, width)
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
            if rows.shape[0] != self.storage.width:
                raise ValueError(f"a row must have {self.storage.width} values, got {rows.shape[0]}")
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
        check_rows(rows, self.storage.width)
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

class PrioritizedDeviceReplay(DeviceReplay):
    """Proportional prioritized replay (Ape-X: alpha 0.6, beta 0.4) with a device sum tree.

    New rows get the priority given to ``add`` (actors' initial priorities) or else the largest
    priority seen so far. Sampling is stratified: one draw per equal slice of the total mass.
    """

    prioritized = True

    def __init__(self, capacity: int, device: str | torch.device = "cpu", block_size: int = 2000,
                 alpha: float = 0.6, beta: float = 0.4, seed: int | None = None, eps: float = 1e-6,
                 width: int = ROW_WIDTH):
        super().__init__(capacity, device, block_size, seed, width)
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
