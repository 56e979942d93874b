"""The replay's writer: a host block of rows copied to the device storage one block at a time."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from melee_agent.rl.replay.storage import DeviceStorage, check_rows


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
        self._blocks = [torch.empty(self.block_size, storage.width, dtype=torch.float32, pin_memory=pin)
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
        rows = check_rows(rows, self.storage.width)
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
