"""One seed per run (``train.seed``, ``--seed``), and the seed of each of its parts derived from it.

A run's arena plays from the run's seed itself; every other generator takes :func:`derive` of it and the
part's name (and index): the replay's sampler, the networks' first weights, each worker, the league's draws,
its models' arena and each exploiter. A hash rather than ``seed + i``: two parts of one run, or the same
part of two runs with neighbouring seeds, never share a stream.

Example::

    >>> derive(7, "replay") == derive(7, "replay"), derive(7, "replay") == derive(7, "network")
    (True, False)
    >>> 0 <= derive(7, "worker", 3) < MAX_SEED
    True
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator

import torch

#: Seeds are whole numbers from 0 to 2^62: the arena adds offsets to a seed as an int64 (torch), and 2^62
#: leaves them room.
MAX_SEED = 2**62


def check_seed(seed: int, name: str = "seed") -> int:
    """``seed`` when it is a whole number from 0 to :data:`MAX_SEED`; else a ValueError naming ``name``."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"{name} must be an integer from 0 to 2^62 ({MAX_SEED}), got {seed!r}")
    return seed


def derive(seed: int, part: str, *index: int) -> int:
    """The seed of one ``part`` of a run (``index``: which of several, e.g. a worker's index)."""
    key = "/".join([str(int(seed)), part, *map(str, index)]).encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "little") % MAX_SEED


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Torch's global generators seeded with ``seed`` inside the block and restored after it: a network built
    inside starts from the same weights every time (``nn.Linear`` draws its first weights from the global
    generator and takes no generator of its own)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield
