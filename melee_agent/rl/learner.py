"""The train step: double DQN on a Dueling network, entirely on the replay's device.

For a sampled row ``(s, a, r, d, s')`` where ``d`` is the discount column (``gamma^k`` for a
k-step return, 0 at a terminal state)::

    a*   = argmax_a' Q_online(s', a')
    y    = c * r + d * Q_target(s', a*)          # c: reward_scale, 1 by default
    loss = mean_i  w_i * huber(Q_online(s, a) - y)

Adam, gradient-norm clipping, the target network copied from the online one every
``target_sync`` steps. Nothing is read back to the host during a step: metrics accumulate in a
device tensor and are read every ``metrics_every`` steps.

On CUDA (``cuda_graph=True``, the default) the whole step (indices drawn on the device, gather,
both forward passes, loss, backward, clipping, fused Adam, priorities and beta when prioritized)
is captured once as a CUDA graph and replayed: a batch-128 step of this network is a few hundred
small kernels, and launching them one by one, not computing them, is what an eager step waits
for. See :mod:`melee_agent.rl.captured_step`.

Example::

    >>> import numpy as np
    >>> from melee_agent.rl.replay import DeviceReplay, ROW_WIDTH
    >>> replay = DeviceReplay(1000, block_size=100)
    >>> rows = np.zeros((200, ROW_WIDTH), np.float32); rows[:, :27] = np.random.rand(200, 27)
    >>> replay.add(rows)
    >>> learner = Learner(replay, num_actions=5, batch_size=32, metrics_every=1)
    >>> learner.step()._fields
    ('loss', 'q_mean', 'td_abs', 'grad_norm', 'train_steps', 'replay')
"""

from __future__ import annotations

import contextlib
import copy
from typing import TYPE_CHECKING, Any, NamedTuple

import torch
import torch.nn.functional as F

from melee_agent.config import LearnerConfig
from melee_agent.rl.model import DuelingDQN
from melee_agent.rl.replay import Replay, ReplayBatch, ReplayStats, annealed_beta
from melee_agent.rl.seeds import seeded
from melee_agent.envs.state import STATE_DIM

if TYPE_CHECKING:
    from melee_agent.rl.captured_step import CapturedStep

METRIC_NAMES = ("loss", "q_mean", "td_abs", "grad_norm")


class LearnerMetrics(NamedTuple):
    """Averages over the steps since the last read (TensorBoard ``loss/``, ``q/``, ``replay/``)."""

    loss: float  # the weighted Huber loss
    q_mean: float  # mean Q(s, a) of the sampled actions
    td_abs: float  # mean |Q(s, a) - y|
    grad_norm: float  # the gradient norm before clipping
    train_steps: int  # steps taken so far
    replay: ReplayStats | None = None  # a prioritized replay's figures


def _adam(params: Any, lr: float, capturable: bool = False) -> torch.optim.Adam:
    # The fused kernel does the whole update in one pass (on CPU ~25% of a batch-128 step here);
    # older torch builds lack it on some devices. `capturable` keeps its step count on the device,
    # which a CUDA graph needs.
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, fused=True, capturable=capturable)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.Adam(params, lr=lr, capturable=capturable)


def _same_device(a: torch.device, b: torch.device) -> bool:
    # "cuda" and "cuda:0" name the same device when the current one is 0; compare indices only when both are set.
    return a.type == b.type and (a.index is None or b.index is None or a.index == b.index)


class Learner:
    """Double DQN on the replay's device: ``y = c * r + d * Q_target(s', argmax_a' Q_online(s', a'))`` (``c``: ``reward_scale``).

    ``d`` is the row's discount column, so 1-step and n-step rows train unchanged. ``step()``
    samples ``batch_size`` rows, takes one Adam step on the weighted Huber loss with the
    gradient norm clipped to ``grad_clip``, copies online to target every ``target_sync`` steps,
    and returns averaged metrics every ``metrics_every`` steps (``None`` otherwise). With a
    :class:`~melee_agent.rl.replay.PrioritizedDeviceReplay` it writes ``|TD error|`` back as priorities,
    anneals the replay's importance exponent from its ``beta`` to 1 over ``beta_steps`` train
    steps, and adds the replay's ``stats()`` (``priority_mean``, ``priority_max``, ``weight_min``,
    ``beta``) to the metrics.

    Example::

        >>> import numpy as np
        >>> from melee_agent.rl.replay import DeviceReplay, ROW_WIDTH
        >>> replay = DeviceReplay(100, block_size=50); replay.add(np.zeros((100, ROW_WIDTH), np.float32))
        >>> learner = Learner(replay, num_actions=5, batch_size=16, metrics_every=2)
        >>> learner.step() is None, learner.step().train_steps, learner.train_steps
        (True, 2, 2)
    """

    def __init__(
        self,
        replay: Replay,
        num_actions: int,
        device: str | torch.device = "cpu",
        batch_size: int = 128,
        gamma: float = 0.99,
        lr: float = 1e-4,
        grad_clip: float = 10.0,
        target_sync: int = 10_000,
        metrics_every: int = 100,
        huber_delta: float = 1.0,
        reward_scale: float = 1.0,
        model: DuelingDQN | None = None,
        beta_steps: int = 0,
        cuda_graph: bool = True,
    ):
        self.replay = replay
        self.device = torch.device(device)
        if not _same_device(torch.device(replay.device), self.device):
            raise ValueError(f"the replay is on {replay.device} but the learner on {self.device}: "
                             "a train step must not copy batches between devices")
        self.num_actions = num_actions
        self.batch_size = batch_size
        self.gamma = gamma  # kept for reference; targets use each row's own discount column
        self.grad_clip = grad_clip
        self.target_sync = target_sync
        self.metrics_every = metrics_every
        self.huber_delta = huber_delta
        if not reward_scale > 0:
            raise ValueError(f"reward_scale must be > 0, got {reward_scale}")
        self.reward_scale = float(reward_scale)
        self.online = (model or DuelingDQN(STATE_DIM, num_actions)).to(self.device)
        self.target = copy.deepcopy(self.online).requires_grad_(False)
        #: the step is captured as a CUDA graph (on CUDA, when asked; never on the CPU)
        self.captured = bool(cuda_graph) and self.device.type == "cuda" and hasattr(replay, "sample_graphed")
        self.optimizer = _adam(self.online.parameters(), lr, capturable=self.captured)
        self._graph: CapturedStep | None = None  # made at the first step (it needs rows to sample)
        self.train_steps = 0
        self.beta_steps = beta_steps
        self._beta0 = float(replay.beta)
        self._acc = torch.zeros(len(METRIC_NAMES), device=self.device)
        self._acc_steps = 0

    @classmethod
    def from_config(cls, replay: Replay, num_actions: int, device: str | torch.device, cfg: LearnerConfig,
                    model: DuelingDQN | None = None, beta_steps: int = 0, seed: int | None = None,
                    state_dim: int = STATE_DIM) -> "Learner":
        """A learner with ``cfg``'s settings; its network ``cfg.shared`` / ``cfg.stream`` wide (reading ``state_dim``
        floats: the state layout's width) unless ``model``, its first weights drawn from ``seed`` where given (else
        from torch's global generator)."""
        if model is None:
            with seeded(seed) if seed is not None else contextlib.nullcontext():
                model = DuelingDQN(state_dim, num_actions, shared=cfg.shared, stream=cfg.stream,
                                   action_embed=cfg.action_embed)
        return cls(replay, num_actions, device, batch_size=cfg.batch_size, gamma=cfg.gamma, lr=cfg.lr,
                   grad_clip=cfg.grad_clip, target_sync=cfg.target_sync, metrics_every=cfg.metrics_every,
                   huber_delta=cfg.huber_delta, reward_scale=cfg.reward_scale, model=model, beta_steps=beta_steps,
                   cuda_graph=cfg.cuda_graph)

    def beta_at(self, step: int) -> float:
        """The prioritized replay's importance exponent for train step ``step`` (annealed)."""
        return annealed_beta(self._beta0, self.beta_steps, step) if self.beta_steps > 0 else self._beta0

    def step(self, batch: ReplayBatch | None = None) -> LearnerMetrics | None:
        """One train step on a sampled batch; returns averaged metrics every ``metrics_every`` steps.

        A batch given here is always trained eagerly (a captured graph samples for itself).
        """
        if batch is None and self.captured:
            if self._graph is None:
                from melee_agent.rl.captured_step import CapturedStep  # noqa: PLC0415

                self._graph = CapturedStep(self)
            self._graph.replay()
            return self._after_update()
        if batch is None:
            if self.replay.prioritized and self.beta_steps > 0:
                self.replay.beta = annealed_beta(self._beta0, self.beta_steps, self.train_steps)
            batch = self.replay.sample(self.batch_size)
        self.update(batch)
        return self._after_update()

    def update(self, batch: ReplayBatch) -> None:
        """The step's device work on one batch: loss, backward, clipping, Adam, priorities and the
        metric sums; no host read (a CUDA graph records exactly this)."""
        q = self.online(batch.obs).gather(1, batch.action.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            best = self.online(batch.next_obs).argmax(dim=1, keepdim=True)
            y = self.reward_scale * batch.reward + batch.discount * self.target(batch.next_obs).gather(1, best).squeeze(1)
        td = q - y
        loss = (batch.weight * F.huber_loss(q, y, reduction="none", delta=self.huber_delta)).mean()

        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.online.parameters(), self.grad_clip)
        self.optimizer.step()

        if self.replay.prioritized:
            self.replay.update_priorities(batch.idx, td.detach().abs())
        with torch.no_grad():
            self._acc += torch.stack((loss.detach(), q.detach().mean(), td.detach().abs().mean(), grad_norm))

    def _after_update(self) -> LearnerMetrics | None:
        self.train_steps += 1
        if self.train_steps % self.target_sync == 0:
            self.sync_target()
        self._acc_steps += 1
        if self._acc_steps >= self.metrics_every:
            return self.read_metrics()
        return None

    def read_metrics(self) -> LearnerMetrics:
        """Average the accumulated metrics (one host read) and reset the accumulator."""
        n = max(self._acc_steps, 1)
        loss, q_mean, td_abs, grad_norm = (self._acc / n).tolist()
        self._acc.zero_()
        self._acc_steps = 0
        stats = None
        if self.replay.prioritized:
            if self.captured:  # the graph anneals beta on the device; the host value is for stats()
                self.replay.beta = self.beta_at(max(self.train_steps - 1, 0))
            stats = self.replay.stats()
        return LearnerMetrics(loss, q_mean, td_abs, grad_norm, self.train_steps, stats)

    def sync_target(self) -> None:
        if self._graph is not None:
            self._graph.sync_target()
            return
        with torch.no_grad():  # in place, so a captured graph's target weights stay where it reads them
            torch._foreach_copy_(list(self.target.parameters()), list(self.online.parameters()))

    @torch.no_grad()
    def act(self, obs: torch.Tensor) -> torch.Tensor:
        return self.online(obs.to(self.device)).argmax(dim=1)

    def state_dict(self) -> dict[str, Any]:
        return {
            "online": self.online.state_dict(),
            "target": self.target.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "train_steps": self.train_steps,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self._graph is not None:
            raise RuntimeError("load a checkpoint before the first train step: the captured graph "
                               "holds the optimizer's state tensors")
        self.online.load_state_dict(state["online"])
        self.target.load_state_dict(state["target"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.train_steps = int(state["train_steps"])
