"""`melee-agent bench replay --prioritized`: the prioritized replay's sampler against the usual ones.

Measures, side by side in one run, on a store of ``--capacity`` rows (default 1,000,000):

* sample (stratified indices and importance weights) and update (new priorities for the sampled
  rows) per batch size 32 to 512, for :class:`~melee_agent.rl.replay.BlockSumTree` on the device,
  a plain numpy binary sum tree of the rlpyt kind (one vectorized numpy op per tree level), and
  torchrl's ``PrioritizedSampler`` where it installs and runs (else skipped, saying why);
* the train step at batch 128 with the prioritized replay against the uniform one (the same
  learner; cases interleaved so that load from other processes hits both alike).
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

import numpy as np
import torch

from melee_agent.benchmarks.timing import random_rows, time_interleaved, time_per_call
from melee_agent.rl.learner import Learner
from melee_agent.rl.replay import DeviceReplay, PrioritizedDeviceReplay

BATCH_SIZES = (32, 64, 128, 256, 512)
# Issue 15's targets.
TRAIN_RATIO_TARGET = 0.90


class NumpySumTree:
    """A binary sum tree in one numpy float64 array, as rlpyt's ``SumTree``: leaves at the bottom,
    every update and search one vectorized op per level (``depth`` levels)."""

    def __init__(self, capacity: int, alpha: float = 0.6, beta: float = 0.4, seed: int = 0):
        self.leaves = 1 << max(0, (capacity - 1).bit_length())
        self.depth = self.leaves.bit_length() - 1
        self.tree = np.zeros(2 * self.leaves, np.float64)
        self.size, self.alpha, self.beta = capacity, alpha, beta
        self.rng = np.random.default_rng(seed)

    def update(self, idx: np.ndarray, priority: np.ndarray) -> None:
        node = idx + self.leaves
        self.tree[node] = priority ** self.alpha
        for _ in range(self.depth):
            node //= 2
            self.tree[node] = self.tree[2 * node] + self.tree[2 * node + 1]

    def sample(self, batch_size: int) -> tuple[np.ndarray, np.ndarray]:
        total = self.tree[1]
        mass = (np.arange(batch_size) + self.rng.random(batch_size)) * (total / batch_size)
        node = np.ones(batch_size, np.int64)
        for _ in range(self.depth):
            left = self.tree[2 * node]
            right = mass >= left
            mass -= left * right
            node = 2 * node + right
        idx = np.minimum(node - self.leaves, self.size - 1)
        w = (self.size * self.tree[idx + self.leaves] / total) ** -self.beta
        return idx, (w / w.max()).astype(np.float32)


def _torchrl_sampler(capacity: int, priorities: np.ndarray) -> tuple[Callable[[int], Any], Callable] | str:
    try:
        from torchrl.data import LazyTensorStorage  # noqa: PLC0415
        from torchrl.data.replay_buffers.samplers import PrioritizedSampler  # noqa: PLC0415
        from tensordict import TensorDict  # noqa: PLC0415
    except ImportError as e:
        return f"skipped: torchrl not installed ({e.name}; pip install -e .[bench])"
    try:
        storage = LazyTensorStorage(capacity)
        storage.set(torch.arange(capacity), TensorDict({"x": torch.zeros(capacity, 1)}, batch_size=[capacity]))
        sampler = PrioritizedSampler(capacity, alpha=0.6, beta=0.4)
        sampler.extend(torch.arange(capacity))
        sampler.update_priority(torch.arange(capacity), torch.from_numpy(priorities))
    except Exception as e:  # noqa: BLE001 (its C++ extension may not load against this torch)
        return f"skipped: torchrl's PrioritizedSampler does not run here ({str(e).splitlines()[0][:120]})"
    return (lambda bs: sampler.sample(storage, bs)), sampler.update_priority


def run(args: argparse.Namespace) -> dict[str, Any]:
    device = torch.device(args.device)
    capacity = 20_000 if args.quick else args.capacity
    calls = 50 if args.quick else 500
    repeats = min(2, args.repeats) if args.quick else max(1, args.repeats)
    rng = np.random.default_rng(0)
    print(f"filling a prioritized store with {capacity:,} rows ...", flush=True)
    rows = random_rows(capacity, rng)
    priorities = rng.exponential(1.0, capacity)
    ours = PrioritizedDeviceReplay(capacity, device, block_size=2_000, seed=0)
    ours.add(rows, priority=priorities)
    ours.flush()
    numpy_tree = NumpySumTree(capacity)
    numpy_tree.update(np.arange(capacity), priorities)
    torchrl = _torchrl_sampler(capacity, priorities)
    new_p = {bs: rng.exponential(1.0, bs) for bs in BATCH_SIZES}
    new_p_dev = {bs: torch.from_numpy(p).to(device) for bs, p in new_p.items()}

    def ours_step(bs: int) -> None:
        idx, w = ours.sample_indices(bs)
        ours.update_priorities(idx, new_p_dev[bs])

    def numpy_step(bs: int) -> None:
        idx, w = numpy_tree.sample(bs)
        numpy_tree.update(idx, new_p[bs])

    cases: dict[str, Callable[[int], None] | str] = {"device_block_tree": ours_step, "numpy_sum_tree": numpy_step}
    if isinstance(torchrl, str):
        cases["torchrl"] = torchrl
    else:
        t_sample, t_update = torchrl
        new_p_t = {bs: torch.from_numpy(p) for bs, p in new_p.items()}

        def torchrl_step(bs: int) -> None:
            idx, info = t_sample(bs)
            t_update(idx, new_p_t[bs])
        cases["torchrl"] = torchrl_step
    sample_update: dict[str, Any] = {}
    for name, fn in cases.items():
        if isinstance(fn, str):
            sample_update[name] = fn
            continue
        sample_update[name] = {str(bs): time_per_call(lambda fn=fn, bs=bs: fn(bs), calls, device, repeats) * 1e6
                               for bs in BATCH_SIZES}
    speedup = {k: {bs: v[bs] / sample_update["device_block_tree"][bs] for bs in v}
               for k, v in sample_update.items() if k != "device_block_tree" and isinstance(v, dict)}

    print("timing the train step, prioritized against uniform ...", flush=True)
    uniform = DeviceReplay(capacity, device, block_size=2_000, seed=0)
    uniform.add(rows)
    uniform.flush()
    torch.manual_seed(0)
    steps = {"uniform": Learner(uniform, num_actions=5, device=device, batch_size=128, metrics_every=100).step,
             "prioritized": Learner(ours, num_actions=5, device=device, batch_size=128, metrics_every=100,
                                    beta_steps=100_000).step}
    train_steps = min(30, args.train_steps) if args.quick else args.train_steps
    train = {k: v * 1e3 for k, v in time_interleaved(steps, train_steps, device, repeats).items()}
    ratio = train["uniform"] / train["prioritized"]
    slowest_vs_numpy = min(speedup["numpy_sum_tree"].values())
    results = {"device": str(device), "capacity": capacity, "torch": torch.__version__,
               "threads": torch.get_num_threads(), "block": ours.tree.block,
               "sample_update_us": sample_update, "speedup_of_device_block_tree": speedup,
               "train_step_ms_batch128": train,
               "targets": {"prioritized_vs_uniform_train128": ratio,
                           "slowest_speedup_vs_numpy_sum_tree": slowest_vs_numpy},
               "targets_met": {"prioritized_vs_uniform_train128": ratio >= TRAIN_RATIO_TARGET,
                               "faster_than_numpy_at_every_batch": slowest_vs_numpy > 1.0}}
    _print(results)
    return results


def _print(r: dict[str, Any]) -> None:
    print(f"\nbench replay --prioritized: device={r['device']} store={r['capacity']:,} rows, torch {r['torch']}, "
          f"{r['threads']} threads, block {r['block']}")
    print("\nsample + update (us per batch: stratified indices and weights, then new priorities)")
    names = list(r["sample_update_us"])
    ratios = r["speedup_of_device_block_tree"]
    print(f"{'batch':>6} " + " ".join(f"{k:>18}" for k in names) + " "
          + " ".join(f"{'x vs ' + k:>20}" for k in ratios))
    for bs in BATCH_SIZES:
        cells = [(f"{v[str(bs)]:.1f}" if isinstance(v, dict) else "skipped") for v in r["sample_update_us"].values()]
        print(f"{bs:>6} " + " ".join(f"{c:>18}" for c in cells) + " "
              + " ".join(f"{v[str(bs)]:>19.2f}x" for v in ratios.values()))
    for k, v in r["sample_update_us"].items():
        if isinstance(v, str):
            print(f"  {k}: {v}")
    t = r["train_step_ms_batch128"]
    print(f"\ntrain step at batch 128: uniform {t['uniform']:.3f} ms, prioritized {t['prioritized']:.3f} ms "
          f"-> prioritized runs at {r['targets']['prioritized_vs_uniform_train128']:.2f}x the uniform speed "
          f"(target >= {TRAIN_RATIO_TARGET})")
    print("targets (issue 15): " + ", ".join(f"{k} {'met' if v else 'MISSED'}" for k, v in r["targets_met"].items()))
