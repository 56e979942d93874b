"""The stages an arena plays, as device tensors: each environment's geometry by its stage index, and the draw.

An arena holds a list of stages (:mod:`melee_agent.arena.stages`); each environment's state carries the index
of the one its game is on (``GameState.stage``, drawn at every reset like the CPU's level). A frame reads that
environment's floor, ledges, platforms, blast zones and respawn spots from :class:`StageTable` by the index,
so one batch can mix stages and a compiled frame sees plain tensors.

Example::

    >>> import torch
    >>> t = StageTable.of(("final_destination", "battlefield"), torch.device("cpu"))
    >>> g = t.at(torch.tensor([0.0, 1.0, 1.0]))
    >>> [round(v, 2) for v in g.edge[:, 0].tolist()], g.plat_h.shape
    ([85.57, 68.4, 68.4], torch.Size([3, 3]))
    >>> StageTable.of("final_destination").at(torch.zeros(4)).edge  # one stage: plain numbers
    85.5656967163
    >>> StageMix.of(("battlefield", "dreamland"), [3, 1], torch.device("cpu")).cdf.tolist()
    [0.75, 1.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Sequence

import numpy as np
import torch
from torch import Tensor

from melee_agent.arena.draws import pick_index, weights_cdf
from melee_agent.arena.stages import DEFAULT_STAGE, STAGES, stage_named

#: Columns of a stage's row: edge, blast left / right / top / bottom, respawn x of ports 0 and 1, then per platform
#: its left end, right end and height.
_FIXED = 7
#: A missing platform (a stage with fewer than the table's most): an empty span, far below any blast zone.
_NO_PLATFORM = (1.0, -1.0, -1.0e4)


def check_stages(stage: str | Sequence[str]) -> tuple[str, ...]:
    """``stage`` (one name or several) as a tuple of stage names; a ValueError naming the field and the six."""
    names = (stage,) if isinstance(stage, str) else tuple(stage)
    if not names:
        raise ValueError(f"stage: at least one stage, one of {', '.join(STAGES)}")
    for n in names:
        if not isinstance(n, str) or n not in STAGES:
            raise ValueError(f"stage: unknown stage {n!r}: one of {', '.join(STAGES)}")
    if len(set(names)) != len(names):
        raise ValueError(f"stage: {list(names)} names a stage twice")
    return names


class StageGeo(NamedTuple):
    """Each environment's stage: ``[B, 1]`` numbers (they broadcast over a ``[B, 2]`` field; Python floats when the
    arena has one stage), ``[B, 2]`` respawn spots (``[2]`` with one stage), ``[B, P]`` platforms (``[1, P]`` with one
    stage; P = 0 when no stage of the arena has any)."""

    edge: Tensor | float
    blast_l: Tensor | float
    blast_r: Tensor | float
    blast_t: Tensor | float
    blast_b: Tensor | float
    respawn: Tensor
    plat_l: Tensor
    plat_r: Tensor
    plat_h: Tensor

    def edge_b(self) -> Tensor | float:
        """The edge as a ``[B]`` column (or the one float): what the CPU's ``[B]`` fields read."""
        return self.edge[:, 0] if isinstance(self.edge, Tensor) else self.edge


@dataclass(frozen=True)
class StageTable:
    """The arena's stages, one row each (see ``_FIXED``); ``num_platforms`` is the most any of them has."""

    names: tuple[str, ...]
    rows: Tensor  # [S, _FIXED + 3 P] float32
    num_platforms: int

    @classmethod
    def of(cls, names: str | Sequence[str] = DEFAULT_STAGE, device: torch.device | str = "cpu") -> StageTable:
        names = check_stages(names)
        stages = [stage_named(n) for n in names]
        P = max(len(s.platforms) for s in stages)
        rows = np.zeros((len(stages), _FIXED + 3 * P), np.float32)
        for i, s in enumerate(stages):
            rows[i, :_FIXED] = (s.edge_x, *s.blast, *s.respawn_x)
            for k in range(P):
                p = s.platforms[k] if k < len(s.platforms) else None
                rows[i, _FIXED + 3 * k:_FIXED + 3 * k + 3] = (p.left, p.right, p.height) if p else _NO_PLATFORM
        return cls(names, torch.as_tensor(rows, device=torch.device(device)), P)

    def at(self, stage: Tensor) -> StageGeo:
        """``stage`` (``[B]``, the environments' indices into :attr:`names`) as each environment's geometry.

        With one stage every environment has the same: its numbers are Python floats and its respawn spots and
        platforms one row that broadcasts (no gather, and a one-stage arena computes exactly what it did before
        stages were data)."""
        P = self.num_platforms
        if self.rows.shape[0] == 1:
            r = self.rows[0]
            edge, bl, br, bt, bb = self.fixed[0][:5]
            plats = r[_FIXED:].reshape(1, P, 3)
            return StageGeo(edge, bl, br, bt, bb, r[5:7], plats[..., 0], plats[..., 1], plats[..., 2])
        B = stage.shape[0]
        g = self.rows[stage.long()]
        plats = g[:, _FIXED:].reshape(B, P, 3)
        return StageGeo(g[:, 0:1], g[:, 1:2], g[:, 2:3], g[:, 3:4], g[:, 4:5], g[:, 5:7], plats[..., 0], plats[..., 1],
                        plats[..., 2])

    @property
    def fixed(self) -> tuple[tuple[float, ...], ...]:
        """Each stage's fixed columns as Python floats (edge, blast left / right / top / bottom, respawn x)."""
        return tuple((s.edge_x, *s.blast, *s.respawn_x) for s in map(stage_named, self.names))


@dataclass(frozen=True)
class StageMix:
    """How each game's stage is drawn at a reset: by cumulative weights, or (``spread``) environment ``i`` keeping
    ``i % K`` (equal games per stage, for evaluations). Also each stage's edge (how far apart a game starts)."""

    cdf: Tensor  # [K]
    edge: Tensor  # [K]
    edges: tuple[float, ...]  # the same as Python floats
    spread: bool = False

    @classmethod
    def of(cls, names: str | Sequence[str], weights: Sequence[float] | None, device: torch.device | str,
           spread: bool = False) -> StageMix:
        names = check_stages(names)
        edges = tuple(stage_named(n).edge_x for n in names)
        return cls(weights_cdf(weights, names, "stage_weights", "stages", device),
                   torch.tensor(edges, dtype=torch.float32, device=device), edges, spread)

    def pick(self, u: Tensor, env_id: Tensor) -> Tensor:
        """``[B]`` float stage indices for uniform draws ``u``."""
        if self.cdf.shape[0] == 1:
            return torch.zeros_like(u)
        return pick_index(self.cdf, u, env_id, self.spread).float()


__all__ = ["StageTable", "StageGeo", "StageMix", "check_stages"]
