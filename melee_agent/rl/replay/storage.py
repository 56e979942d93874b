"""The replay's storage: one ``[capacity, 57]`` float32 tensor on the device, written FIFO with a wrapping cursor."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from melee_agent.rl.rows import ROW_WIDTH


def check_rows(rows: Any, width: int = ROW_WIDTH) -> np.ndarray | torch.Tensor:
    if rows.ndim != 2 or rows.shape[1] != width:
        raise ValueError(f"rows must be [n, {width}], got {list(rows.shape)}")
    return rows

class DeviceStorage:
    """A ``[capacity, 57]`` float32 tensor on ``device`` written FIFO with a wrapping cursor."""

    def __init__(self, capacity: int, device: str | torch.device = "cpu", width: int = ROW_WIDTH):
        if capacity <= 0:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.capacity = int(capacity)
        self.device = torch.device(device)
        self.width = int(width)  # 2 x the state layout's width + 3 (melee_agent.rl.rows.columns)
        self.data = torch.zeros(self.capacity, self.width, dtype=torch.float32, device=self.device)
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
