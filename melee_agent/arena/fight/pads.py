"""Raw controller frames in (:class:`Pads`), and the game's reading of them (:func:`read`).

``Pads`` is what a controller holds on one frame, per environment and port (``[B, 2]`` each), in
libmelee's ``ControllerState`` meaning (docs/design.md "Motion: raw controller frames"): sticks in
``[0, 1]`` with 0.5 neutral, analog shoulders in ``[0, 1]``, buttons as bools. :func:`read` turns
them into the :class:`~melee_agent.arena.fight.state.Pad` a fight frame plays, as the game reads a
controller:

* sticks: ``(v - 0.5) x 2``, values inside the game's deadzone read 0 and the stick is clamped to
  the unit circle (Melee's pad layer: a raw value of 22 units of 80 or less reads 0, so the first
  value read is 23/80 = 0.2875, and the rim is 80 units; Slippi's processed stick values are
  multiples of 1/80 and none lies in (0, 0.2875));
* shield: L or R digital, or an analog shoulder past 0.30 (PlCo.dat ``ftCommonData`` x010,
  ``analog_shoulder_deadzone`` = 0.30, as read off the disc by meleelight-decomp-edition); the air dodge
  takes a new digital press of L or R only (doldecomp/melee ``ftCo_EscapeAir.c`` ``ftCo_80099A58``: the
  newly pressed buttons ``& (HSD_PAD_R | HSD_PAD_L)``; a replay's analog-only press in a jump does not dodge);
* jump: X or Y (tap jump, the stick up, is read by the fight frame from the stick and its tilt timer:
  :func:`melee_agent.arena.fight.fighter.tap_jump`);
* C-stick: pushed past 0.8 (the smash threshold, ``ftCommonData`` x03C) where A was not held on the last frame
  is an A press at the C-stick's direction (Melee: a C-stick input is a smash on the ground and an aerial in
  the air): ``Pad.c`` marks it and ``Pad.cx``, ``Pad.cy`` give the direction, the main stick reading as it is
  (its tilt timers, dashes and turns go on). A state that does not read the C-stick drops the press (a dash:
  :func:`melee_agent.arena.fight.fighter.cstick_read`).

Example::

    >>> import torch
    >>> p = Pads.neutral(1, torch.device("cpu"))._replace(main_x=torch.tensor([[0.9875, 0.6]]))
    >>> pad = read(p, torch.zeros(1, 2, dtype=torch.bool))
    >>> [round(v, 4) for v in pad.sx[0].tolist()], pad.sy[0].tolist()
    ([0.975, 0.0], [0.0, 0.0])
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from melee_agent.envs.actions import COL
from melee_agent.arena.fight.state import Pad

STICK_DEADZONE = 0.2875  # Melee's pad layer: |raw| <= 22 of 80 units reads 0 (first value read 23/80)
SHOULDER_DEADZONE = 0.30  # PlCo.dat ftCommonData x010 analog_shoulder_deadzone (0.30000001)
SMASH_STICK = 0.8  # PlCo.dat ftCommonData x03C dash/smash stick threshold (0.80000001)


class Pads(NamedTuple):
    """One frame's raw controller state for both ports, ``[B, 2]`` each (libmelee ``ControllerState``)."""

    main_x: Tensor
    main_y: Tensor
    c_x: Tensor
    c_y: Tensor
    l: Tensor  # noqa: E741 - libmelee's name: the analog L shoulder
    r: Tensor
    a: Tensor
    b: Tensor
    x: Tensor
    y: Tensor
    z: Tensor
    l_button: Tensor
    r_button: Tensor

    @classmethod
    def neutral(cls, num_envs: int, device: torch.device | str = "cpu") -> Pads:
        """Every controller at rest (sticks at 0.5, shoulders 0, buttons up)."""
        half = torch.full((num_envs, 2), 0.5, device=device)
        zero = torch.zeros(num_envs, 2, device=device)
        up = torch.zeros(num_envs, 2, dtype=torch.bool, device=device)
        return cls(half, half.clone(), half.clone(), half.clone(), zero, zero.clone(), *(up.clone() for _ in range(7)))


def stick(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """libmelee ``[0, 1]`` stick values as the game reads them: ``[-1, 1]``, deadzone 0, inside the unit circle."""
    sx, sy = (x - 0.5) * 2.0, (y - 0.5) * 2.0
    sx = torch.where(sx.abs() < STICK_DEADZONE, 0.0, sx)
    sy = torch.where(sy.abs() < STICK_DEADZONE, 0.0, sy)
    norm = torch.sqrt(sx * sx + sy * sy)
    scale = torch.where(norm > 1.0, 1.0 / norm.clamp(min=1e-6), 1.0)
    return sx * scale, sy * scale


def read(p: Pads, a_was_held: Tensor) -> Pad:
    """The :class:`Pad` a fight frame plays from raw ``p``; ``a_was_held`` (``[B, 2]`` bool): A (or the C-stick,
    which reads as A) was held last frame, so a C-stick held out is one input, not one a frame."""
    sx, sy = stick(p.main_x, p.main_y)
    cx, cy = stick(p.c_x, p.c_y)
    c_out = torch.maximum(cx.abs(), cy.abs()) >= SMASH_STICK
    c_hit = c_out & ~a_was_held & ~p.a
    shield = p.l_button | p.r_button | (torch.maximum(p.l, p.r) > SHOULDER_DEADZONE)
    return Pad(a=p.a | c_out, b=p.b, jump=p.x | p.y, z=p.z, shield=shield, sx=sx, sy=sy,
               lr=p.l_button.float() + 2.0 * p.r_button.float(), c=c_hit, cx=cx, cy=cy)


def from_table(ctrl: Tensor) -> Pads:
    """One port's raw frame from an action set's table rows (``ctrl[column]``: ``[len(TABLE_COLUMNS), B]``):
    a macro's frame is a :class:`Pads` frame (its C-stick at rest, R's analog 0), shaped ``[B]``."""
    half = torch.full_like(ctrl[COL["stick_x"]], 0.5)
    on = lambda name: ctrl[COL[name]] > 0  # noqa: E731
    return Pads(ctrl[COL["stick_x"]], ctrl[COL["stick_y"]], half, half, ctrl[COL["l_shoulder"]], torch.zeros_like(half),
                on("A"), on("B"), on("X"), on("Y"), on("Z"), on("L"), on("R"))


__all__ = ["Pads", "read", "stick", "from_table", "STICK_DEADZONE", "SHOULDER_DEADZONE", "SMASH_STICK"]
