"""What a fight keeps beyond the dodging game's fields, and the controller state both fighters read.

:class:`FightState` rides in :class:`~melee_agent.arena.env_state.EnvState` (its ``fight`` field,
``None`` in the dodging game). Per-player fields are ``[B, 2]`` float32 like
:class:`~melee_agent.arena.env_state.PlayerState`'s; ``stale`` is ``[B, 2, 9]``; the CPU's own
fields are ``[B]``.

Example::

    >>> import torch
    >>> f = FightState.zeros(3, torch.device("cpu"))
    >>> f.stale.shape, f.hitlag_left.shape, f.cpu_plan.shape
    (torch.Size([3, 2, 9]), torch.Size([3, 2]), torch.Size([3]))
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from melee_agent.arena.knockback import STALE_QUEUE


#: Frames the collision box's bottom stays at the feet after leaving the ground (doldecomp/melee ftCommon_8007D5D4:
#: ``ecb_lock = 10``; fighter.c counts it down and unlocks at 0).
ECB_LOCK = 10


class FightState(NamedTuple):
    hitlag_left: Tensor
    """Hitlag frames left: the player is frozen (both attacker and victim), [B, 2]."""
    launch_kb: Tensor
    """Knockback of a hit whose launch waits for the end of hitlag (0: none pending)."""
    launch_angle: Tensor
    """Its angle in degrees (Sakurai angle resolved), as for a launch to the right."""
    launch_dir: Tensor
    """+1 / -1: the attacker's facing (mirrors the launch)."""
    stale: Tensor
    """[B, 2, 9]: the attack ids of each player's last 9 moves that connected, most recent first."""
    grab_left: Tensor
    """The holder's frames left before the held opponent breaks free."""
    lcancel_left: Tensor
    """Frames left of an L-cancel press (L, R or Z within 7 frames before landing)."""
    a_held: Tensor
    """1 if A was held last frame (an attack needs a fresh press); likewise B, Z and shield."""
    b_held: Tensor
    z_held: Tensor
    shield_held: Tensor
    stick_x_prev: Tensor
    """The main stick last frame, in [-1, 1] (a smash needs the stick to move this frame)."""
    stick_y_prev: Tensor
    helpless: Tensor
    """1 in special fall (after an up-B, illusion or air dodge) until landing or the ledge."""
    ledge_wait: Tensor
    """Frames before the ledge can be caught again (after letting go)."""
    aim: Tensor
    """The firefox's angle in radians, read from the stick when its charge ends."""
    ko_credit: Tensor
    """The game's attack id of the opponent's latest hit on this player since it last stood on the ground,
    free (-1: none). A KO credits that move; with none it is a self-destruct (SmashWiki "Self-destruct": in
    Melee the credit resets once the character touches the ground)."""
    ko_cause: Tensor
    """``ko_credit`` at this player's latest KO (-1: a self-destruct; before any KO, -1 too)."""
    lr_held: Tensor
    """The digital L and R held last frame, as 1 (L) + 2 (R): an air dodge needs a new press of either."""
    tilt_x: Tensor
    """The game's x670 timer: frames since the main stick's x crossed the smash deadzone (254 at most, and after a
    dash or smash turn took the flick), :func:`.ground.tilt_timer`."""
    tilt_y: Tensor
    """The game's x671: the same timer for the stick's y (fast falls)."""
    turn_smash: Tensor
    """1 in a turn a stick flick started (a smash turn: its next frame dashes if the stick stays out); in a dash, 1 if
    it came out of a turn (the game's ``mv.co.dash.x4`` 0: no first branch in ``ftCo_Dash_IASA``, :mod:`.ground`)."""
    gr_impulse: Tensor
    """This frame's dash impulse: ground speed that reaches the position only from the next frame (the game's
    second ground acceleration channel, :mod:`.ground`); 0 on any other frame."""
    hop: Tensor
    """The jump squat's input and hop (doldecomp/melee ``ftCo_KneeBend.c``): 0 the jump button, 1 the main stick (tap
    jump), 2 a short hop (the input let go on a squat frame: ``ftCo_KneeBend_Check_ShortHop``)."""
    cpu_plan: Tensor
    """[B] the CPU's current plan (see :mod:`melee_agent.arena.cpu`)."""
    cpu_timer: Tensor
    """[B] frames the CPU has followed it."""
    cpu_act: Tensor
    """[B] the melee CPU's pending choice (an attack slot, a roll's side; see :mod:`melee_agent.arena.cpu.melee`)."""
    cpu_wait: Tensor
    """[B] the melee CPU's frames left to wait before it plays that choice (or keeps its shield)."""
    cpu_count: Tensor
    """[B] the melee CPU's pummels in the current grab."""
    pos_dx: Tensor
    """Each fighter's position change over the last frame (the game's ``pos_delta.x``, what Melee's CPU predicts
    with: doldecomp/melee ``ftCo_800B4AB0``); 0 on a KO."""
    pos_dy: Tensor
    """The same for y."""
    ecb_lock: Tensor
    """Frames left that the collision box's bottom stays at the fighter's feet after leaving the ground
    (doldecomp/melee ``ftCommon_8007D5D4``: ``ecb_lock = 10``; ``fighter.c`` counts it down and unlocks at 0)."""
    ecb_last: Tensor
    """How far the collision box's bottom lay above the position on the frame before (0 on the ground): a landing is
    the box's bottom crossing a floor from that frame to this one, so a box that moves up as its lock ends, or as the
    action changes, does not land the fighter on a platform it was below."""
    pass_left: Tensor
    """A squat's platform drop under way: frames left before the drop (0: none; doldecomp/melee ``ftCo_80099F9C`` sets
    the squat's ``mv.co.pass`` countdown, ``ftCo_Squat_IASA`` counts it down and drops at 0)."""
    cpu_x80: Tensor
    """[B] the melee CPU's own counter ``x80``: one up on each frame its handler runs, i.e. with no command script
    running (doldecomp/melee ``ftCo_800B2790``); its attack gates read it (``ftCo_800B885C``, ``ftCo_800B4AB0``)."""

    @classmethod
    def zeros(cls, num_envs: int, device: torch.device) -> FightState:
        fields = {}
        for name in cls._fields:
            shape = (num_envs, 2, STALE_QUEUE) if name == "stale" else (
                (num_envs,) if name.startswith("cpu_") else (num_envs, 2))
            fields[name] = torch.zeros(shape, device=device)
        for name, value in _START.items():
            fields[name] = fields[name] + value
        return cls(**fields)

    def fresh(self) -> FightState:
        """A new game's values, shaped as this state."""
        return FightState(*(torch.zeros_like(v) + _START.get(name, 0.0) for name, v in zip(self._fields, self)))


#: Fields that do not start at 0.
_START = {"launch_dir": 1.0, "ko_credit": -1.0, "ko_cause": -1.0, "tilt_x": 254.0, "tilt_y": 254.0}


class Pad(NamedTuple):
    """One frame's controller state of both fighters, ``[B, 2]`` each (column 0 Fox, 1 Marth)."""

    a: Tensor  # bool
    b: Tensor
    jump: Tensor  # X or Y
    z: Tensor
    shield: Tensor  # L or R, digital or analog
    sx: Tensor  # main stick x in [-1, 1] (libmelee's [0, 1] around 0.5, doubled)
    sy: Tensor
    lr: Tensor | None = None  # digital L and R held, as 1 (L) + 2 (R) (float): the air dodge's buttons; None: as shield
    # The C-stick (:func:`melee_agent.arena.fight.pads.read`): ``c`` (bool) a new push past 0.8 with A up, which ``a``
    # also holds (an A press at the C-stick's direction, ``cx``, ``cy`` in [-1, 1]); None: no C-stick (a macro's frame,
    # the CPU's).
    c: Tensor | None = None
    cx: Tensor | None = None
    cy: Tensor | None = None
