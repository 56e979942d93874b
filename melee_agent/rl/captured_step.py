"""The learner's train step captured once as a CUDA graph and replayed.

A batch-128 step of this network is a few hundred small kernels (two forward passes, a backward
pass, clipping, Adam, the sampler, and the sum tree when prioritized). On a large GPU each takes
a few microseconds to compute but about as long to launch, so an eager step waits on the Python
dispatcher, not on the GPU. Captured, the whole step is one ``cudaGraphLaunch``:

    graph:  u ~ U[0, 1)                         (device default generator, graph-safe)
            idx = sample(u, size_t)              (size_t: the replay's row count, on the device)
            batch = storage[idx]
            beta = beta0 + (1 - beta0) min(1, t / beta_steps)      (prioritized; t on the device)
            loss, backward, clip, fused Adam (capturable), priorities <- |td|, metric sums += ...
            t += 1
    sync:   a second graph, target <- online, replayed every ``target_sync`` steps

Capturing needs the optimizer's state and the autograd buffers to exist, so three steps run
first on a side stream (PyTorch's "whole network capture" recipe); the weights, the optimizer
state, the priorities and the metric sums they changed are then put back in place, so the first
replayed step starts from exactly the state an eager step would have started from.

Example (CUDA only)::

    >>> import numpy as np, torch
    >>> from melee_agent.rl.learner import Learner
    >>> from melee_agent.rl.replay import DeviceReplay, ROW_WIDTH
    >>> if torch.cuda.is_available():
    ...     replay = DeviceReplay(1000, "cuda"); replay.add(np.random.rand(1000, ROW_WIDTH).astype(np.float32))
    ...     learner = Learner(replay, num_actions=5, device="cuda", metrics_every=10)
    ...     assert learner.captured and [learner.step() for _ in range(10)][-1] is not None
"""

from __future__ import annotations

from typing import Any, Protocol

import torch

from melee_agent.rl.replay import ReplayBatch


class LearnerParts(Protocol):
    """What the captured step uses of :class:`~melee_agent.rl.learner.Learner` (which builds it): named
    here rather than imported, so that the learner depends on this module and not the other way round."""

    device: torch.device
    replay: Any
    online: torch.nn.Module
    target: torch.nn.Module
    optimizer: torch.optim.Optimizer
    train_steps: int
    batch_size: int
    beta_steps: int
    _beta0: float
    _acc: torch.Tensor

    def beta_at(self, step: int) -> float: ...

    def update(self, batch: ReplayBatch) -> None: ...

WARMUP_STEPS = 3  # side-stream steps before capture (PyTorch's recipe uses 3 to 11)


class CapturedStep:
    """The learner's step (sample + :meth:`Learner.update`) as one CUDA graph, and the target
    sync as another."""

    def __init__(self, learner: LearnerParts):
        if learner.device.type != "cuda":
            raise ValueError(f"a CUDA graph needs a CUDA device, not {learner.device}")
        if len(learner.replay) == 0:
            raise ValueError("cannot capture a train step on an empty replay (flush staged rows first)")
        self.learner = learner
        replay = learner.replay
        self.prioritized = bool(replay.prioritized)
        dev = learner.device
        # Steps taken, on the device: the graph anneals beta from it.
        self.t = torch.tensor(float(learner.train_steps), dtype=torch.float64, device=dev)
        self.beta0 = float(learner._beta0)
        self.beta = torch.tensor(learner.beta_at(learner.train_steps), dtype=torch.float64, device=dev)
        self.batch = None  # the last replayed step's batch (static tensors the graph rewrites)

        saved = self._save()
        side = torch.cuda.Stream(device=dev)
        side.wait_stream(torch.cuda.current_stream(dev))
        with torch.cuda.stream(side):
            for _ in range(WARMUP_STEPS):
                self._body()
        torch.cuda.current_stream(dev).wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        learner.optimizer.zero_grad(set_to_none=True)
        with torch.cuda.graph(self.graph):
            self.batch = self._body()
        self._restore(saved)

        self.sync_graph = torch.cuda.CUDAGraph()
        online, target = list(learner.online.parameters()), list(learner.target.parameters())
        with torch.cuda.graph(self.sync_graph, pool=self.graph.pool()), torch.no_grad():
            torch._foreach_copy_(target, online)

    def _body(self) -> Any:
        learner = self.learner
        if self.prioritized and learner.beta_steps > 0:
            frac = torch.clamp(self.t / learner.beta_steps, max=1.0)
            torch.add(frac.mul(1.0 - self.beta0), self.beta0, out=self.beta)
        batch = learner.replay.sample_graphed(learner.batch_size, self.beta)
        learner.update(batch)
        self.t.add_(1.0)
        return batch

    # --- what warm-up steps change, put back after the capture ---
    def _save(self) -> dict[str, Any]:
        learner, replay = self.learner, self.learner.replay
        saved: dict[str, Any] = {
            "params": [p.detach().clone() for p in learner.online.parameters()],
            "optim": {p: {k: (v.clone() if torch.is_tensor(v) else v) for k, v in st.items()}
                      for p, st in learner.optimizer.state.items()},
            "t": self.t.clone(), "acc": learner._acc.clone(),
        }
        if self.prioritized:
            saved["leaves"] = replay.tree.leaves.clone()
            saved["sums"] = replay.tree.sums.clone()
            saved["max_priority"] = replay._max_priority.clone()
        return saved

    @torch.no_grad()
    def _restore(self, saved: dict[str, Any]) -> None:
        learner, replay = self.learner, self.learner.replay
        for p, v in zip(learner.online.parameters(), saved["params"]):
            p.copy_(v)
        for p, st in learner.optimizer.state.items():
            before = saved["optim"].get(p)
            for k, v in st.items():
                if torch.is_tensor(v):  # in place: the graph holds these very tensors
                    v.copy_(before[k]) if before is not None else v.zero_()
        self.t.copy_(saved["t"])
        learner._acc.copy_(saved["acc"])
        if self.prioritized:
            replay.tree.leaves.copy_(saved["leaves"])
            replay.tree.sums.copy_(saved["sums"])
            replay._max_priority.copy_(saved["max_priority"])

    def replay(self) -> None:
        """One train step: a single graph launch, no host read."""
        self.graph.replay()

    def sync_target(self) -> None:
        self.sync_graph.replay()
