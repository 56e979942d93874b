"""The manager's device replay, built from ``[replay]`` in the config: prioritized or uniform."""

from __future__ import annotations

import torch

from melee_agent.config import ReplayConfig
from melee_agent.rl.replay import DeviceReplay, PrioritizedDeviceReplay, Replay


def make_replay(rc: ReplayConfig, device: torch.device) -> Replay:
    """A :class:`~melee_agent.rl.replay.PrioritizedDeviceReplay` when ``rc.prioritized``, else a uniform
    :class:`~melee_agent.rl.replay.DeviceReplay`; both hold ``rc.capacity`` rows on ``device``."""
    if rc.prioritized:
        return PrioritizedDeviceReplay(rc.capacity, device, rc.block_size, alpha=rc.alpha, beta=rc.beta)
    return DeviceReplay(rc.capacity, device, rc.block_size)
