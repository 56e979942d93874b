"""``torch.compile`` for the arena's per-frame functions (``Arena(..., compile=True)``).

Eagerly, a frame is about 1,500 small tensor ops, each paying a dispatch (~3 ms a frame at any
batch size on this CPU). Compiled, each function (a frame with its bookkeeping, the end of a
decision) becomes one fused C++/OpenMP loop nest on CPU, or Triton kernels on CUDA. The first
call per batch size compiles (about a minute on a 2-core CPU; inductor caches the result on
disk, so later processes start in seconds). Results agree with eager execution up to float
rounding (the compiler may reorder arithmetic); discrete state follows the same rules.

On CPU the graph is called through inductor's C++ wrapper (``cpp_wrapper``): a frame's graph
allocates about 200 output and scratch tensors per call, which the default Python wrapper pays for
one by one (measured side by side at B = 4,096, fights: about 3% more frames per second). Inductor's
fusion limit is raised on CPU (:data:`CPU_OPTIONS`); on CUDA its defaults stand (not measured there).
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any, Callable, Iterator

import torch
from torch.utils import _pytree as pytree

_CACHE: dict[tuple[Callable, bool], Callable] = {}

CPU_OPTIONS = {
    "cpp_wrapper": True,
    # Inductor fuses at most ``max_fusion_size`` (64) nodes into one loop. A fight frame's loops hold more, so
    # at 64 the Marth CPU's per-environment loop was cut in two (each half reloading the same fields, each
    # ending at an OpenMP barrier), and so was the largest [B, 2] loop. At 1,024 each is one loop (30 parallel
    # loops a frame instead of 32): 1.09x noop frames/s at B = 4,096, measured side by side (README, "Speed of
    # a fight"; 4,096 was no faster).
    "max_fusion_size": 1024,
}


def compiled(fn: Callable, device: torch.device | str = "cpu", mutates: bool = False) -> Callable:
    """A compiled ``fn`` for one caller (an ``Arena`` on ``device``); the compiled graph is shared by every caller.

    The compiled graph returns a flat list of tensors and the wrapper rebuilds the function's
    NamedTuples around them: torch.compile 2.11 returns a NamedTuple made by ``_replace`` inside
    the graph as an empty tuple. The structure is read from one eager call per wrapper, since an
    arena's inputs, and so its outputs, keep one structure (a fight's state has more fields than a
    dodge's, so two arenas may differ). ``mutates``: ``fn`` writes into its inputs, so that eager call plays on
    copies of them.
    """
    cpu = torch.device(device).type == "cpu"
    if (fn, cpu) not in _CACHE:
        # Not fullgraph=True: with it, dynamo's recompile limit (8 graphs a function: batch sizes, games) becomes a
        # hard error. Graph breaks, which would split a frame and cost its fusion silently, are kept out by
        # tests/arena/test_compiled.py (each function traces as one graph).
        _CACHE[fn, cpu] = torch.compile(_flattened(fn), dynamic=False, options=CPU_OPTIONS if cpu else None)
    flat = _CACHE[fn, cpu]
    build: list[Callable[[Iterator[Any]], Any]] = []

    def call(*args: Any) -> Any:
        if not build:
            probe = cloned(args) if mutates else args
            build.append(builder(pytree.tree_structure(fn(*probe))))
        return build[0](iter(flat(*args)))
    return call


def cloned(tree: Any) -> Any:
    """``tree`` (NamedTuples, tuples, lists) with every tensor copied: what a function that writes into its inputs
    may play on without touching the originals."""
    return pytree.tree_map(lambda x: x.clone() if isinstance(x, torch.Tensor) else x, tree)


def _flattened(fn: Callable) -> Callable:
    """``fn`` returning the flat list of its output's leaves, as a function with a code object of its own.

    Dynamo keeps its compiled graphs, and counts them against ``recompile_limit`` (8), per code object:
    one shared wrapper would pool every function's graphs (a frame, a reset, each batch size of each)
    and fall back to op by op past the eighth, as a training run's final report did.
    """
    def flat(*args: Any) -> list[Any]:
        return pytree.tree_leaves(fn(*args))
    flat.__code__ = flat.__code__.replace(co_name=f"flat_{getattr(fn, '__name__', 'fn')}")
    return flat


def builder(spec: pytree.TreeSpec) -> Callable[[Iterator[Any]], Any]:
    """A function that rebuilds ``spec``'s structure from an iterator over its leaves.

    What ``pytree.tree_unflatten`` does, minus its generic per-node checks: an arena's step rebuilds
    about 130 leaves into NamedTuples every frame. Handles what the arena returns (NamedTuples,
    tuples, lists, None); anything else goes through pytree.

    >>> from typing import NamedTuple
    >>> class Pair(NamedTuple):
    ...     left: Any
    ...     right: Any
    >>> spec = pytree.tree_structure(Pair(1, [2, Pair(3, 4)]))
    >>> builder(spec)(iter("abcd"))
    Pair(left='a', right=['b', Pair(left='c', right='d')])
    """
    if spec.is_leaf():
        return next
    kids = [builder(c) for c in (spec.children() if hasattr(spec, "children") else spec.children_specs)]
    t = spec.type
    if t is type(None):  # a node of its own in older torch (a leaf in newer ones)
        return lambda it: None
    if t is tuple:
        return lambda it: tuple([k(it) for k in kids])
    if t is list:
        return lambda it: [k(it) for k in kids]
    # A NamedTuple node: torch 2.13's spec gives ``collections.namedtuple`` as its type and the class as its
    # context (older versions give the class as the type).
    cls = spec.context if t is namedtuple else t
    if isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return lambda it: cls(*[k(it) for k in kids])
    n = spec.num_leaves
    return lambda it: pytree.tree_unflatten([next(it) for _ in range(n)], spec)
