"""``torch.compile`` for the arena's per-frame functions (``Arena(..., compile=True)``).

Eagerly, a frame is about 1,500 small tensor ops, each paying a dispatch (~3 ms a frame at any
batch size on this CPU). Compiled, each function (a frame with its bookkeeping, the end of a
decision) becomes one fused C++/OpenMP loop nest on CPU, or Triton kernels on CUDA. The first
call per batch size compiles (about a minute on a 2-core CPU; inductor caches the result on
disk, so later processes start in seconds). Results agree with eager execution up to float
rounding (the compiler may reorder arithmetic); discrete state follows the same rules.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch.utils import _pytree as pytree

_CACHE: dict[Callable, Callable] = {}


def compiled(fn: Callable) -> Callable:
    """A compiled ``fn`` for one caller (an ``Arena``); the compiled graph is shared by every caller.

    The compiled graph returns a flat list of tensors and the wrapper rebuilds the function's
    NamedTuples around them: torch.compile 2.11 returns a NamedTuple made by ``_replace`` inside
    the graph as an empty tuple. The structure is read from one eager call per wrapper, since an
    arena's inputs, and so its outputs, keep one structure (a fight's state has more fields than a
    dodge's, so two arenas may differ).
    """
    if fn not in _CACHE:
        _CACHE[fn] = torch.compile(lambda *args: pytree.tree_leaves(fn(*args)), dynamic=False)
    flat = _CACHE[fn]
    spec: list[Any] = []

    def call(*args: Any) -> Any:
        if not spec:
            spec.append(pytree.tree_structure(fn(*args)))
        return pytree.tree_unflatten(flat(*args), spec[0])
    return call
