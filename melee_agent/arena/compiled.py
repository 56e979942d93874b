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
    """One compiled wrapper per function, shared by every ``Arena`` in the process.

    The compiled graph returns a flat list of tensors and the wrapper rebuilds the function's
    NamedTuples around them (their structure is read from one eager call): torch.compile 2.11
    returns a NamedTuple made by ``_replace`` inside the graph as an empty tuple.
    """
    if fn not in _CACHE:
        flat = torch.compile(lambda *args: pytree.tree_leaves(fn(*args)), dynamic=False)
        specs: dict[Any, Any] = {}  # the output's structure per input structure (a fight's state has more fields)

        def call(*args: Any) -> Any:
            key = pytree.tree_structure(args)
            spec = specs.get(key)
            if spec is None:
                spec = specs[key] = pytree.tree_structure(fn(*args))
            return pytree.tree_unflatten(flat(*args), spec)
        _CACHE[fn] = call
    return _CACHE[fn]
