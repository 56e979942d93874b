"""How the dodging game's ``melee`` CPU aims: the fight's Melee CPU's attack rules on the dodging game's moves.

The fight's Melee CPU (:mod:`melee_agent.arena.fight.melee_cpu`, where each rule's source is cited) looks at each
entry of Marth's ground attack list. An entry is a candidate when its reach box, scaled by the level's ``x570``
[D ftCo_800B33B0] and widened by the agent's half width, holds the agent as its speed carries it to the entry's
first active frame [D ftCo_800B4AB0], on the frames the entry's gate allows (``x80 % x1C``). Among the
candidates one is drawn by weight. Here the same rules pick among the dodging game's Marth moves (jab, forward
tilt, down tilt, forward smash, dash attack): each keeps its list entry's weight and gate
(:data:`~melee_agent.arena.fight.melee_cpu.GROUND_LIST`, guesses, as PlCo.dat is not decompiled); the dash attack
is in no list, so this CPU never uses it. The grab, up tilt and up and down smashes are not moves of the dodging
game, so the draw among the rest is what the fight's is when those do not reach.

It moves as the versus CPU does (:func:`approach`): a walk toward the agent whose stick steps up from neutral by
the level's step a frame, never a dash, standing within 5 [D ftCo_800AA42C, ftCo_800AA320, ftCo_800B24B8]. With
the agent behind him a free Marth turns round first (:data:`TURN_FRAMES`), choosing no attack meanwhile. The
designed CPU's approach (stop at 0.8 of the jab's reach) would leave it standing out of its own scaled reach at
low levels.

Example::

    >>> import torch
    >>> from melee_agent.arena.dodge.melee_aim import WEIGHTS, half_range
    >>> WEIGHTS  # jab, ftilt, dtilt, fsmash, dash attack
    (4.0, 0.6, 0.5, 0.4, 0.0)
    >>> r = half_range(torch.tensor([1.0, 9.0]), torch.zeros(2), torch.arange(2.0), 0)
    >>> bool(0.55 <= r[0] <= 0.575 and 0.75 <= r[1] <= 0.775)
    True
"""

from __future__ import annotations

import torch
from melee.enums import Action
from torch import Tensor

from melee_agent.arena import libmelee_data as d
from melee_agent.arena.draws import uniform_streams
from melee_agent.arena.env_state import AGENT, CPU, PlayerState
from melee_agent.arena.fight.melee_cpu import (APPROACH_NEAR, BODY_HALF_WIDTH, GROUND_LIST, MELEE_SEED_OFFSET,
                                               NEAR_TURN, TURN_FRAMES, walk_limit)
from melee_agent.arena.fight.moves import Slot

#: The dodging game's Marth moves (dodge/tables.MOVES' first rows) as entries of the fight's ground list.
_SLOT_OF = {"jab": Slot.JAB1, "ftilt": Slot.FTILT, "dtilt": Slot.DTILT, "fsmash": Slot.FSMASH}
_ENTRY = {slot: (weight, every) for slot, weight, _lo, _hi, every in GROUND_LIST}
#: Each dodging Marth move's weight in the draw (0: in no list, never chosen) and its frame gate.
WEIGHTS = tuple(_ENTRY[_SLOT_OF[m.name]][0] if m.name in _SLOT_OF else 0.0 for m in d.MARTH_MOVES)
GATES = tuple(_ENTRY[_SLOT_OF[m.name]][1] if m.name in _SLOT_OF else 1 for m in d.MARTH_MOVES)
LOOK_AHEAD_CAP = 20.0  # as the fight's Melee CPU: a move's first active frame, at most 20 frames ahead
# TURN_FRAMES (the fights' CPU's, ftCo_CpuTurnAround): after an attack (attack mode, ftCo_800B658C) no attack is
# chosen during it [D ftCo_800ADE48 returns while x18 == 2]; in movement (ftCo_800AA42C) the game's attack check
# could fire once the turn has flipped his facing (Marth's turn flips on its 8th frame, measured): the arena holds
# him the whole script either way (a simplification).


def half_range(level: Tensor, episode_frame: Tensor, env_id: Tensor, seed: int | Tensor) -> Tensor:
    """``[B]`` ``x570``: ``0.5 (0.05 (L + 1) + 0.05 u) + 0.5``, ``u`` redrawn every 30 frames [D ftCo_800B33B0]."""
    u = uniform_streams(env_id, torch.floor(episode_frame / 30.0), seed + MELEE_SEED_OFFSET + 1, (0,))[0]
    return 0.5 * (0.05 * (level + 1) + 0.05 * u) + 0.5


def reaches(ps: PlayerState, first_active: Tensor, reach: Tensor, k: int, scale: Tensor,
            episode_frame: Tensor) -> Tensor:
    """``[B]``: Marth's move ``k`` is a candidate this frame (see the module's docstring)."""
    if WEIGHTS[k] == 0.0:
        return torch.zeros_like(scale, dtype=torch.bool)
    ahead = first_active[k].clamp(max=LOOK_AHEAD_CAP)
    # The agent moved on by its speed [D ftCo_800B4AB0: the target's pos_delta]; Marth where he stands: the dodging
    # game's attacks start from a standstill (its physics drop his walking speed), so his own speed would only
    # make him swing early and miss.
    fox_vx = ps.speed_x[:, AGENT] + ps.speed_x_attack[:, AGENT]
    rel = (ps.position_x[:, AGENT] + fox_vx * ahead) - ps.position_x[:, CPU]
    ahead_of = rel * ps.facing[:, CPU]
    ok = (ahead_of >= -BODY_HALF_WIDTH) & (ahead_of <= reach[k] * scale + BODY_HALF_WIDTH)
    if GATES[k] > 1:
        ok = ok & (torch.remainder(episode_frame, float(GATES[k])) == 0)
    return ok


def approach(gap: Tensor, walk_stick: Tensor, walk_step: Tensor, walk_frames: Tensor) -> tuple[Tensor, Tensor]:
    """``[B]`` speed toward the agent and ``[B]`` libmelee action of an idle Marth ``gap`` away from where it goes.

    The versus CPU walks, it never dashes in (``xF8_b0`` is clear without a Starman or hammer to flee
    [D ftCo_800B24B8, ftCo_800AA42C]): its stick goes toward the agent by the level's ``walk_step`` a frame
    (``LstickXTowardDestinationClamped``, ftcmdscript.c; steps 2-8 of 127 [D ftCo_800AA320]) from neutral,
    where every attack and turn leaves it [D ftCo_800B4A78], up to a limit: the level's clamp ``walk_stick``
    beyond ``APPROACH_RAMP`` (40), ramped down to 80 of 127 at ``APPROACH_NEAR`` (5) within it
    (:func:`~melee_agent.arena.fight.melee_cpu.walk_limit`, as the fights' CPU); within 5, neutral (standing). ``walk_frames`` is the
    frame of the walk this is (1 on its first), so the stick is ``min(walk_step x walk_frames, limit)`` (the
    stick is not kept between frames: a walk whose limit falls and rises again resumes at the higher value at
    once, a simplification). Speed: Marth's walk speed times the stick (the dodging game has no walk
    acceleration).

    >>> import torch
    >>> speed, _ = approach(torch.tensor([60.0, 60.0, 3.0]), torch.ones(3), torch.full((3,), 8 / 127),
    ...                     torch.tensor([1.0, 16.0, 1.0]))
    >>> [round(v, 3) for v in speed.tolist()]   # level 9: 8 of 127 on the walk's first frame, full at its 16th
    [0.101, 1.6, 0.0]
    """
    walk = gap > APPROACH_NEAR
    stick = torch.minimum(walk_step * walk_frames, walk_limit(gap, walk_stick))
    speed = torch.where(walk, d.MARTH.walk * stick, 0.0)
    action = torch.where(walk, float(Action.WALK_MIDDLE.value), float(Action.STANDING.value))
    return speed, action


__all__ = ["GATES", "NEAR_TURN", "TURN_FRAMES", "WEIGHTS", "approach", "half_range", "reaches"]
