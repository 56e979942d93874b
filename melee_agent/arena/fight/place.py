"""``Arena.place``: set one fighter from a replay frame's ``PlayerState`` fields, so a stretch of a real game
can be re-played from its own controller frames (docs/design.md "Motion: raw controller frames").

Fields take libmelee's names: ``position_x``, ``position_y``, ``speed_air_x_self``, ``speed_ground_x_self``,
``speed_y_self``, ``action``, ``action_frame``, ``facing`` (bool: right), ``on_ground``, ``jumps_left``,
``percent``, and ``controller_state`` (this port's :class:`~.pads.Pads` of the placed frame: what the
game remembers of it, the buttons held and the stick, for the next frame's presses and flicks; or a list
of the frames up to it, oldest first, from which the stick's tilt timers are counted as the game does). The
arena keeps one horizontal self speed, so a grounded fighter takes ``speed_ground_x_self`` and an
airborne one ``speed_air_x_self``. A placed fighter is out of hitstun, hitlag and any launch; an action
the arena times (jump squat, landing, air dodge, special landing) resumes at its ``action_frame``, any other is a free state.
A fighter placed in a jump or a platform drop keeps what is left of its collision box's lock after leaving the ground
(the box's bottom at its feet for 10 frames); in any other action the box is unlocked.
"""

from __future__ import annotations

from typing import Any

import torch
from melee.enums import Action
from torch import Tensor

from melee_agent.arena.env_state import EnvState
from melee_agent.arena.fight.fighter import HOP_BUTTON, HOP_SHORT, HOP_STICK, TAP_JUMP_RELEASE
from melee_agent.arena.fight.moves import FightTable, Slot
from melee_agent.arena.fight.ground import tilt_timer
from melee_agent.arena.fight.pads import Pads, read
from melee_agent.arena.fight.physics import ecb_bottom
from melee_agent.arena.fight.state import ECB_LOCK

FIELDS = ("position_x", "position_y", "speed_air_x_self", "speed_ground_x_self", "speed_y_self", "action",
          "action_frame", "facing", "on_ground", "jumps_left", "percent", "controller_state")
#: Actions the arena plays as timed moves, by the slot that plays them.
TIMED = {Action.KNEE_BEND.value: Slot.JUMPSQUAT, Action.LANDING.value: Slot.LANDING, Action.AIRDODGE.value: Slot.AIRDODGE,
         Action.LANDING_SPECIAL.value: Slot.LANDING_SPECIAL}


def _column(field: Tensor, port: int, idx: Tensor, value: Any) -> Tensor:
    out = field.clone()
    out[idx, port] = torch.as_tensor(value, dtype=field.dtype, device=field.device).expand(idx.shape[0])
    return out


def _placed_ecb(T: FightTable, port: int, action: Tensor, lock: Tensor, on_ground: Tensor) -> Tensor:
    """The collision box's offset a placed fighter had on the frame before: taken as the placed frame's own."""
    attrs = T.attrs._replace(**{f: getattr(T.attrs, f).view(-1, 2)[0, port]
                                for f in ("ecb_air", "ecb_double_jump", "ecb_air_dodge")})
    return ecb_bottom(action, lock, on_ground > 0, attrs)


def place(state: EnvState, T: FightTable, port: int, idx: Tensor, fields: dict[str, Any]) -> EnvState:
    """``state`` with player ``port``'s fighter set in environments ``idx`` (``[n]`` int64) from ``fields``."""
    unknown = set(fields) - set(FIELDS)
    if unknown:
        raise ValueError(f"unknown fields {sorted(unknown)}; place takes {', '.join(FIELDS)}")
    ps, fs = state.players, state.fight
    dev = ps.position_x.device
    get = lambda name, now: torch.as_tensor(fields[name], dtype=torch.float32, device=dev).expand(idx.shape[0]) \
        if name in fields else now[idx, port]  # noqa: E731
    on_ground = get("on_ground", ps.on_ground)
    speed_x = torch.where(on_ground > 0, get("speed_ground_x_self", ps.speed_x), get("speed_air_x_self", ps.speed_x))
    speed_y = get("speed_y_self", ps.speed_y)
    action = get("action", ps.action)
    af = get("action_frame", ps.action_frame)
    move = torch.full_like(action, -1.0)
    busy = torch.zeros_like(action)
    for act, slot in TIMED.items():
        r = T.base[0, port] + slot if T.base.dim() == 2 else T.base[port] + slot
        hit = action == float(act)
        move = torch.where(hit, r.float(), move)
        busy = torch.where(hit, (T.length[r] - af + 1).clamp(min=0), busy)
    facing = torch.where(get("facing", (ps.facing > 0).float()) > 0, 1.0, -1.0)
    # Fast falling is not a PlayerState field: a fighter falling at its fast-fall speed is fast falling.
    ff = (on_ground <= 0) & (speed_y <= -T.attrs.fast_fall_velocity.view(-1, 2)[0, port] + 1e-3)
    new = dict(position_x=get("position_x", ps.position_x), position_y=get("position_y", ps.position_y),
               speed_x=speed_x, speed_y=torch.where(on_ground > 0, 0.0, speed_y), action=action, action_frame=af,
               facing=facing, on_ground=on_ground, jumps_left=get("jumps_left", ps.jumps_left),
               percent=get("percent", ps.percent), move=move, busy_left=busy, fast_falling=ff.float(),
               speed_x_attack=0.0, speed_y_attack=0.0, hitstun_frames_left=0.0, hit_done=0.0)
    # The collision box's bottom stays at the feet for ECB_LOCK frames after leaving the ground: a fighter placed in a
    # jump or a drop through a platform (which start as it leaves) has the rest of that lock; any other has none.
    leaving = (on_ground <= 0) & ((action == float(Action.JUMPING_FORWARD.value))
                                  | (action == float(Action.JUMPING_BACKWARD.value))
                                  | (action == float(Action.PLATFORM_DROP.value)))
    lock = torch.where(leaving, (ECB_LOCK + 1 - af).clamp(min=0.0), 0.0)
    fnew: dict[str, Any] = dict(hitlag_left=0.0, launch_kb=0.0, helpless=0.0, lcancel_left=0.0, ledge_wait=0.0,
                                ecb_lock=lock, pass_left=0.0, ecb_last=_placed_ecb(T, port, action, lock, on_ground))
    if "controller_state" in fields:
        given = fields["controller_state"]
        frames = [given] if isinstance(given, Pads) else list(given)  # one frame, or the frames up to it
        no = torch.zeros(idx.shape[0], dtype=torch.bool, device=dev)
        reads = [read(Pads(*(torch.as_tensor(v, device=dev).expand(idx.shape[0]) for v in raw)), no) for raw in frames]
        pad = reads[-1]
        # The stick's tilt timers (how many frames ago it crossed the smash deadzone) from the frames given: with the
        # placed frame alone, no fresh flick.
        tx = ty = torch.full_like(pad.sx, 254.0)
        for before, now in zip(reads, reads[1:]):
            tx, ty = tilt_timer(now.sx, before.sx, tx), tilt_timer(now.sy, before.sy, ty)
        new["jump_held"] = pad.jump.float()
        fnew.update(a_held=pad.a.float(), b_held=pad.b.float(), z_held=pad.z.float(), shield_held=pad.shield.float(),
                    stick_x_prev=pad.sx, stick_y_prev=pad.sy, lr_held=pad.lr,
                    # A turn placed on the frame of a flick is a smash turn (the game keeps the flag).
                    turn_smash=((action == float(Action.TURNING.value)) & (pad.sx.abs() >= 0.8) & (tx < 2)).float(),
                    tilt_x=tx, tilt_y=ty,
                    # A jump squat placed: by the button if held, else by the stick if up (a tap jump), else already
                    # a short hop (fighter.short_hop: the squat frames before the placed one are not known).
                    hop=torch.where(pad.jump, HOP_BUTTON, torch.where(pad.sy >= TAP_JUMP_RELEASE, HOP_STICK, HOP_SHORT)))
    ps = ps._replace(**{k: _column(getattr(ps, k), port, idx, v) for k, v in new.items()})
    fs = fs._replace(**{k: _column(getattr(fs, k), port, idx, v) for k, v in fnew.items()})
    return state._replace(players=ps, fight=fs)


__all__ = ["place", "FIELDS", "TIMED"]
