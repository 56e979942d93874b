"""What every CPU shares: the controller it writes (:class:`PadOut`), the first-decision-wins writer
(:func:`put`), its result (:class:`CpuDecision`) and the two ports' columns (:func:`mine`, :func:`theirs`)."""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from melee_agent.arena.env_state import AGENT, CPU
from melee_agent.arena.fight.state import FightState


class PadOut(NamedTuple):
    """Marth's controller as the CPU writes it, ``[B]`` each."""

    a: Tensor
    b: Tensor
    jump: Tensor
    z: Tensor
    shield: Tensor
    sx: Tensor
    sy: Tensor

    @classmethod
    def neutral(cls, like: Tensor) -> PadOut:
        """No button, the stick at rest, shaped as ``like`` (``[B]`` float)."""
        zero = torch.zeros_like(like)
        return cls(zero.bool(), zero.bool(), zero.bool(), zero.bool(), zero.bool(), zero, zero)


def put(o: PadOut, decided: Tensor, mask: Tensor, **values: Tensor) -> tuple[PadOut, Tensor]:
    """Write controller ``values`` where ``mask`` holds and nothing was decided yet (the first decision wins)."""
    m = mask & ~decided
    o = o._replace(**{k: torch.where(m, v, getattr(o, k)) for k, v in values.items()})
    return o, decided | m


class CpuDecision(NamedTuple):
    """Marth's controller this frame and the CPU's updated memory."""

    pad: PadOut
    fight: FightState
    cooldown: Tensor  # [B] frames before it may attack again


def mine(t: Tensor) -> Tensor:
    """Marth's column of a ``[B, 2]`` field; compiled, as its own contiguous ``[B]`` copy.

    A copy read many times is written once and then read in order, so the CPU's loops stay vectorized
    (inductor gives up SIMD for a loop with many strided reads of the ``[B, 2]`` fields). Op by op the
    copy would only cost time.
    """
    return t[:, CPU].contiguous() if torch.compiler.is_compiling() else t[:, CPU]


def theirs(t: Tensor) -> Tensor:
    """The agent's column of a ``[B, 2]`` field (see :func:`mine`)."""
    return t[:, AGENT].contiguous() if torch.compiler.is_compiling() else t[:, AGENT]


__all__ = ["PadOut", "put", "CpuDecision", "mine", "theirs"]
