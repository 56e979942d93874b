"""``torch.compile`` for the arena's per-frame functions (``Arena(..., compile=True)``).

Eagerly, a frame is about 1,500 small tensor ops, each paying a dispatch (~3 ms a frame at any
batch size on this CPU). Compiled, each function (a frame with its bookkeeping, the end of a
decision) becomes one fused C++/OpenMP loop nest on CPU, or Triton kernels on CUDA. The first
call per batch size compiles (about a minute on a 2-core CPU; inductor caches the result on
disk, so later processes start in seconds). Results agree with eager execution up to float
rounding (the compiler may reorder arithmetic); discrete state follows the same rules.
"""

from __future__ import annotations

from typing import Callable

import torch

_CACHE: dict[Callable, Callable] = {}


def compiled(fn: Callable) -> Callable:
    """One compiled wrapper per function, shared by every ``Arena`` in the process."""
    if fn not in _CACHE:
        _CACHE[fn] = torch.compile(fn, dynamic=False)
    return _CACHE[fn]
