"""The arena state as one tensor per field while a frame is computed, indexed like the stored tensor.

The simulator reads and writes hundreds of single columns per frame (``S[..., P.X] = ...``). On
one ``[B, 2, N]`` tensor every such write is an in-place update of a strided slice: eager torch
pays a dispatch per write, and ``torch.compile`` must copy the whole state for each (a
functional graph cannot update a slice in place), which made the compiled frame slower than
eager. ``Fields`` keeps each field as its own tensor and a write rebinds that field, so a frame
is a pure function of its inputs that the compiler fuses into a few loops; the stored tensor is
written once, at the end of the frame (:meth:`Fields.store`).

Indexing mirrors the stored layout, so the simulator's code reads the same either way:

- players ``[B, 2, N]``: ``S[..., c]`` or ``S[:, :, c]`` is field ``c`` for both players
  (``[B, 2]``), ``S[:, p, c]`` player ``p``'s (``[B]``), and ``S[:, p]`` a view of one player
  that indexes as ``s[:, c]``;
- environments ``[B, N]``: ``En[:, c]`` is field ``c`` (``[B]``).

Example::

    >>> import torch
    >>> stored = torch.zeros(3, 2, 4)  # field-major, player-major storage: [N, 2, B]
    >>> S = Fields.load_players(stored)
    >>> S[:, 1, 0] = torch.ones(4)      # rebinding field 0, player 1; `stored` is untouched
    >>> float(stored.sum()), float(S[..., 0].sum())
    (0.0, 4.0)
    >>> S.store_players(stored); float(stored.sum())
    4.0
"""

from __future__ import annotations

from typing import Any

import torch

_ALL = slice(None)


class Fields:
    def __init__(self, cols: list[torch.Tensor]):
        self.cols = cols

    @classmethod
    def load(cls, stored: torch.Tensor) -> Fields:
        """Fields of per-environment storage ``[N, B]`` (views; nothing is copied)."""
        return cls(list(stored.unbind(0)))

    @classmethod
    def load_players(cls, stored: torch.Tensor) -> Fields:
        """Fields of player storage ``[N, 2, B]``, each seen as ``[B, 2]`` (views; nothing is copied).

        Player-major storage keeps one player's field contiguous, so per-player updates
        vectorize; the ``[B, 2]`` view keeps the simulator's environment-first indexing.
        """
        return cls([c.t() for c in stored.unbind(0)])

    def store(self, stored: torch.Tensor) -> None:
        """Write every field back into ``stored`` (from :meth:`load`) in one copy."""
        stored.copy_(torch.stack(self.cols))

    def store_players(self, stored: torch.Tensor) -> None:
        """Write every field back into ``stored`` (from :meth:`load_players`) in one copy."""
        stored.copy_(torch.stack([c.t() for c in self.cols]))

    @property
    def shape(self) -> tuple[int, ...]:
        return (*self.cols[0].shape, len(self.cols))

    def _split(self, key: Any) -> tuple[int | None, int]:
        """``(player or None for all, column)`` for the supported keys."""
        if not isinstance(key, tuple):
            raise IndexError(f"Fields index must be a tuple ending in a column, got {key!r}")
        *lead, col = key
        if lead == [Ellipsis] or all(k == _ALL for k in lead):
            return None, col
        if len(lead) == 2 and lead[0] == _ALL and isinstance(lead[1], int):
            return lead[1], col
        raise IndexError(f"unsupported Fields index {key!r}")

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, tuple) and len(key) == 2 and key[0] == _ALL and self.cols[0].dim() == 2:
            return Player(self, key[1])  # S[:, p]
        p, c = self._split(key)
        return self.cols[c] if p is None else self.cols[c][:, p]

    def __setitem__(self, key: Any, value: Any) -> None:
        p, c = self._split(key)
        old = self.cols[c]
        if p is None:
            self.cols[c] = torch.as_tensor(value, dtype=old.dtype, device=old.device).expand_as(old)
        else:
            self.cols[c] = _put(old, p, value)


class Player:
    """One player's fields: ``s[:, c]`` reads and writes ``S[:, p, c]``."""

    def __init__(self, parent: Fields, p: int):
        self.parent, self.p = parent, p

    def __getitem__(self, key: Any) -> torch.Tensor:
        return self.parent[_ALL, self.p, _col(key)]

    def __setitem__(self, key: Any, value: Any) -> None:
        self.parent[_ALL, self.p, _col(key)] = value


def _col(key: Any) -> int:
    if isinstance(key, tuple) and len(key) == 2 and key[0] == _ALL:
        return key[1]
    raise IndexError(f"a player's fields index as [:, column], got {key!r}")


def _put(col: torch.Tensor, p: int, value: Any) -> torch.Tensor:
    """``col`` ([B, 2]) with player ``p``'s column replaced by ``value``, as a new tensor."""
    value = torch.as_tensor(value, dtype=col.dtype, device=col.device).expand(col.shape[0])
    parts = [value, col[:, 1]] if p == 0 else [col[:, 0], value]
    return torch.stack(parts, 0).t()  # player-major, like the storage
