"""The same learner fed by other replay buffers, for `melee-agent bench replay`.

:class:`HostReplay` is the paper's in-RAM baseline: a Python list of rows, ``random.sample``,
tensors built per step.

Each adapter is a :class:`~melee_agent.rl.replay.Replay` whose ``sample`` calls the library's own
buffer and hands the learner its tensors, so a train step differs only in where the batch comes
from: TorchRL's ``ReplayBuffer(LazyTensorStorage(n, device=...))`` (its storage on the device,
its sampler drawing indices on the host), optionally with its ``PrioritizedSampler``, and
Stable-Baselines3's ``ReplayBuffer`` (numpy storage, batches copied to the device per sample).
A missing library gives a string saying so instead of an adapter.
"""

from __future__ import annotations

import random
from typing import Any, Callable, NamedTuple

import numpy as np
import torch

from melee_agent.rl.replay import ReplayBatch, check_rows
from melee_agent.rl.rows import ACTION, DISCOUNT, NEXT_OBS, OBS, REWARD
from melee_agent.envs.state import STATE_DIM

GAMMA_N = 0.99**3  # the discount of a 3-step row that did not end (SB3 stores dones, not discounts)


class FedBatch(NamedTuple):
    """The fields the learner reads, as another library's buffer produced them."""

    obs: torch.Tensor
    action: torch.Tensor
    reward: torch.Tensor
    discount: torch.Tensor
    next_obs: torch.Tensor
    idx: torch.Tensor
    weight: torch.Tensor


class FedReplay:
    """A :class:`~melee_agent.rl.replay.Replay` whose batches come from ``sample_fn``."""

    staged = 0

    def __init__(self, sample_fn: Callable[[int], FedBatch | ReplayBatch], device: torch.device, capacity: int,
                 update_fn: Callable[[torch.Tensor, torch.Tensor], None] | None = None):
        self.sample_fn, self.update_fn = sample_fn, update_fn
        self.device, self.capacity = device, capacity
        self.prioritized = update_fn is not None

    def add(self, rows: Any, priority: Any = None) -> None:
        raise TypeError("filled once by the benchmark")

    def flush(self) -> None:
        pass

    def __len__(self) -> int:
        return self.capacity

    def sample(self, batch_size: int) -> FedBatch | ReplayBatch:
        return self.sample_fn(batch_size)

    def update_priorities(self, idx: torch.Tensor, priority: torch.Tensor) -> None:
        if self.update_fn is None:
            raise TypeError("this replay keeps no priorities")
        self.update_fn(idx, priority)

    beta = 1.0

    def stats(self) -> None:
        return None


def torchrl_replay(rows: np.ndarray, device: torch.device, prioritized: bool = False) -> FedReplay | str:
    """TorchRL's buffer on a ``LazyTensorStorage`` on ``device`` (Ape-X alpha 0.6, beta 0.4 if prioritized)."""
    try:
        from tensordict import TensorDict  # noqa: PLC0415
        from torchrl.data import LazyTensorStorage, ReplayBuffer  # noqa: PLC0415
        from torchrl.data.replay_buffers.samplers import PrioritizedSampler  # noqa: PLC0415
    except ImportError as e:
        return f"skipped: torchrl not installed ({e.name}; pip install -e .[bench])"
    n = rows.shape[0]
    t = torch.from_numpy(rows)
    data = TensorDict({"obs": t[:, OBS], "action": t[:, ACTION].long(), "reward": t[:, REWARD],
                       "discount": t[:, DISCOUNT], "next_obs": t[:, NEXT_OBS]}, batch_size=[n])
    try:
        sampler = PrioritizedSampler(n, alpha=0.6, beta=0.4) if prioritized else None
        buf = ReplayBuffer(storage=LazyTensorStorage(n, device=device), sampler=sampler, batch_size=None)
        buf.extend(data)
    except Exception as e:  # noqa: BLE001 (its C++ extension may not load against this torch)
        return f"skipped: torchrl's buffer does not run here ({str(e).splitlines()[0][:120]})"
    ones: dict[int, torch.Tensor] = {}

    def sample(bs: int) -> FedBatch:
        if prioritized:
            td, info = buf.sample(bs, return_info=True)
            idx = torch.as_tensor(info["index"])
            w = info.get("priority_weight", info.get("_weight"))  # the key's name changed across versions
            weight = torch.as_tensor(w, device=device).float()
        else:
            td = buf.sample(bs)
            idx = None
            weight = ones.get(bs)
            if weight is None:
                weight = ones[bs] = torch.ones(bs, device=device)
        return FedBatch(td["obs"], td["action"], td["reward"], td["discount"], td["next_obs"], idx, weight)

    def update(idx: torch.Tensor, priority: torch.Tensor) -> None:
        buf.update_priority(idx, priority)

    return FedReplay(sample, device, n, update if prioritized else None)


def sb3_replay(rows: np.ndarray, device: torch.device) -> FedReplay | str:
    """Stable-Baselines3's ``ReplayBuffer`` (numpy arrays in RAM; each sample copied to ``device``)."""
    try:
        from gymnasium import spaces  # noqa: PLC0415
        from stable_baselines3.common.buffers import ReplayBuffer  # noqa: PLC0415
    except ImportError as e:
        return f"skipped: stable-baselines3 not installed ({e.name}; pip install -e .[bench])"
    n = rows.shape[0]
    buf = ReplayBuffer(n, spaces.Box(0, 1, (STATE_DIM,), np.float32), spaces.Discrete(5), device=device,
                       n_envs=1, optimize_memory_usage=False, handle_timeout_termination=False)
    # Fill its arrays directly: calling add() a million times would only time the fill.
    buf.observations[:, 0] = rows[:, OBS]
    buf.next_observations[:, 0] = rows[:, NEXT_OBS]
    buf.actions[:, 0, 0] = rows[:, ACTION]
    buf.rewards[:, 0] = rows[:, REWARD]
    buf.dones[:, 0] = rows[:, DISCOUNT] == 0
    buf.full, buf.pos = True, 0
    ones: dict[int, torch.Tensor] = {}

    def sample(bs: int) -> FedBatch:
        s = buf.sample(bs)
        weight = ones.get(bs)
        if weight is None:
            weight = ones[bs] = torch.ones(bs, device=device)
        done = s.dones.view(-1)
        return FedBatch(s.observations, s.actions.view(-1).long(), s.rewards.view(-1), GAMMA_N * (1.0 - done),
                        s.next_observations, None, weight)

    return FedReplay(sample, device, n)


class HostReplay:
    """The paper's in-RAM baseline: a Python list of rows, ``random.sample``, tensors built per step."""

    def __init__(self, capacity: int, device: str | torch.device = "cpu", seed: int | None = None):
        self.capacity = int(capacity)
        self.device = torch.device(device)
        self.rows: list[np.ndarray] = []
        self.cursor = 0
        self.rng = random.Random(seed)

    prioritized = False
    beta = 1.0
    staged = 0  # rows go straight into the list

    def add(self, rows: np.ndarray | torch.Tensor, priority: np.ndarray | torch.Tensor | None = None) -> None:
        """Append rows (``priority`` is ignored: sampling is uniform)."""
        if isinstance(rows, torch.Tensor):
            rows = rows.detach().cpu().numpy()
        if rows.ndim == 1:
            rows = rows[None]
        check_rows(rows)
        for row in rows:
            if len(self.rows) < self.capacity:
                self.rows.append(row.copy())
            else:
                self.rows[self.cursor] = row.copy()
            self.cursor = (self.cursor + 1) % self.capacity

    def flush(self) -> None:
        pass

    def __len__(self) -> int:
        return len(self.rows)

    def sample(self, batch_size: int) -> ReplayBatch:
        picked = self.rng.sample(self.rows, batch_size)
        rows = torch.from_numpy(np.stack(picked)).to(self.device)
        idx = torch.full((batch_size,), -1, dtype=torch.long, device=self.device)
        return ReplayBatch.from_rows(rows, idx, torch.ones(batch_size, device=self.device))

    def update_priorities(self, idx: torch.Tensor, priority: torch.Tensor) -> None:
        raise TypeError("HostReplay samples uniformly and keeps no priorities")

    def stats(self) -> None:
        return None
