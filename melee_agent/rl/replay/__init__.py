"""Experience replays (``storage``, ``samplers``, ``writer``, and ``device`` composing them): the in-device replay (Parr 2017) and the in-RAM baseline it is measured against.

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

from melee_agent.rl.replay.device import (DeviceReplay, PrioritizedDeviceReplay, Replay, ReplayBatch, ReplayStats)
from melee_agent.rl.replay.samplers import BlockSumTree, UniformSampler, annealed_beta
from melee_agent.rl.replay.storage import DeviceStorage, check_rows
from melee_agent.rl.replay.writer import StagingWriter
from melee_agent.rl.rows import ROW_WIDTH

__all__ = ["ROW_WIDTH", "Replay", "ReplayBatch", "ReplayStats", "DeviceStorage", "StagingWriter", "UniformSampler",
           "DeviceReplay", "BlockSumTree", "PrioritizedDeviceReplay", "annealed_beta", "check_rows"]
