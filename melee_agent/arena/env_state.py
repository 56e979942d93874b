"""The arena's state, by name: what B games hold between frames (gymnax's ``EnvState`` pattern).

A frame is a pure function from one :class:`EnvState` to the next; nothing is indexed by column
number. Per-player fields are ``[B, 2]`` tensors (column 0 the agent, Fox; column 1 the CPU,
Marth) named as libmelee's ``PlayerState`` where libmelee has the value; per-game fields are
``[B]``. Every field is float32 (counters and flags included), so the state is one dtype that a
compiled frame fuses into one loop nest, and integer-valued fields stay exact (< 2**24).

A write never updates a tensor in place: it makes a new field and rebinds it with
``NamedTuple._replace`` (:func:`put` for one player's column), which is what lets
``torch.compile`` fuse a whole frame.

Example::

    >>> import torch
    >>> s = EnvState.zeros(3, torch.device("cpu"))
    >>> s.players.percent.shape, s.game.episode_frame.shape
    (torch.Size([3, 2]), torch.Size([3]))
    >>> p = s.players._replace(percent=put(s.players.percent, CPU, 9.0))
    >>> p.percent[:, CPU].tolist(), p.percent[:, AGENT].tolist()
    ([9.0, 9.0, 9.0], [0.0, 0.0, 0.0])
    >>> where(torch.tensor([True, False, True]), s._replace(players=p), s).players.percent[:, CPU].tolist()
    [9.0, 0.0, 9.0]
"""

from __future__ import annotations

from typing import Iterator, NamedTuple, Protocol, TypeVar

import torch
from torch import Tensor

AGENT, CPU = 0, 1
"""Column of each player in a ``[B, 2]`` field: the agent (Fox) and the CPU (Marth)."""


class PlayerState(NamedTuple):
    """Both players' fields, each ``[B, 2]`` float32 (``[:, AGENT]`` Fox, ``[:, CPU]`` Marth)."""

    position_x: Tensor
    """Horizontal position in game units (0 = the stage's centre)."""
    position_y: Tensor
    """Vertical position in game units (0 = the stage's top)."""
    speed_x: Tensor
    """The player's own horizontal speed (walking, dashing, drift), game units per frame."""
    speed_y: Tensor
    """The player's own vertical speed (jumps, gravity), game units per frame."""
    speed_x_attack: Tensor
    """Horizontal launch speed from the last hit (libmelee's ``speed_x_attack``); decays per frame."""
    speed_y_attack: Tensor
    """Vertical launch speed from the last hit (libmelee's ``speed_y_attack``)."""
    action: Tensor
    """libmelee ``Action`` id of the current action (``STANDING`` = 14)."""
    action_frame: Tensor
    """Frames into the current action, 1 on its first frame (libmelee's ``action_frame``)."""
    facing: Tensor
    """+1 facing right, -1 facing left (libmelee's ``facing`` is the boolean ``facing > 0``)."""
    on_ground: Tensor
    """1 standing on the stage, 0 in the air."""
    jumps_left: Tensor
    """Jumps left (2 on the ground: the ground jump and the double jump)."""
    shield_strength: Tensor
    """Shield health, 60 when full."""
    percent: Tensor
    """Damage percent."""
    stock: Tensor
    """Stocks left."""
    move: Tensor
    """Row of the current move in :data:`melee_agent.arena.dodge.tables.MOVES`; ``NO_MOVE`` (-1) when none,
    ``LOCKED`` (-2) in a timed action that is not a move (jump squat, landing, shield drop)."""
    hit_done: Tensor
    """1 once the current move's hitbox has connected (one hit per move)."""
    fast_falling: Tensor
    """1 while fast falling."""
    jump_held: Tensor
    """1 if a jump button was held last frame (a jump needs a fresh press)."""
    hitstun_frames_left: Tensor
    """Hitstun or shieldstun frames left (libmelee's ``hitstun_frames_left``)."""
    invulnerability_left: Tensor
    """Respawn invulnerability frames left (libmelee's ``invulnerability_left``)."""
    busy_left: Tensor
    """Frames left in a timed action (a move, a jump squat, a landing)."""


class GameState(NamedTuple):
    """Each game's own fields, ``[B]`` float32."""

    episode_frame: Tensor
    """Frames played in the current episode."""
    tick: Tensor
    """Frames played since the arena was built: the counter of the per-frame random streams."""
    episode: Tensor
    """Episodes started: the counter of the reset draws (-1 before the first reset)."""
    previous_action: Tensor
    """The agent's previous decision (an action index: the 27th state float)."""
    cpu_cooldown: Tensor
    """Frames before the CPU may start another attack."""
    env_id: Tensor
    """The environment's index: its own random stream."""
    episode_return: Tensor
    """The episode's return so far."""
    cpu_level: Tensor
    """The CPU level (1-9) of the current episode, drawn at each reset."""
    stage: Tensor
    """The current game's stage: its index in the arena's stage list (:mod:`melee_agent.arena.stage_table`), drawn at
    each reset; 0 with one stage."""


class ExtraState(Protocol):
    """What a game keeps beyond the shared fields (the fight's :class:`~melee_agent.arena.fight.state.FightState`;
    the game object's :meth:`~melee_agent.games.base.Game.extra_state` makes it): a NamedTuple of ``[B, ...]``
    tensors, so :func:`where` blends it field by field and a compiled frame sees plain tensors."""

    def __iter__(self) -> Iterator[Tensor]: ...

    def fresh(self) -> ExtraState:
        """The state a new episode starts with (the episode resets write it where a game ended)."""
        ...


class EnvState(NamedTuple):
    """Everything B games hold between frames."""

    players: PlayerState
    game: GameState
    inputs: Tensor
    """``[B, delay, C]``: the agent's controller states on their way to the game (input delay), the
    oldest first; ``[B, 0, C]`` without delay."""
    fight: ExtraState | None = None
    """What the game keeps beyond these fields (a fight's :class:`~melee_agent.arena.fight.state.FightState`);
    None in the dodging game. This module names no game: the game object makes it
    (:meth:`~melee_agent.games.base.Game.extra_state`)."""

    @classmethod
    def zeros(cls, num_envs: int, device: torch.device, delay: int = 0, buttons: int = 1,
              extra: ExtraState | None = None) -> EnvState:
        """All fields 0 (an arena then resets it into real games); ``delay`` frames of ``buttons`` columns in flight;
        ``extra`` the game's own state (:meth:`~melee_agent.games.base.Game.extra_state`), where it keeps one."""
        z2 = lambda: torch.zeros(num_envs, 2, device=device)  # noqa: E731
        z1 = lambda: torch.zeros(num_envs, device=device)  # noqa: E731
        return cls(PlayerState(*(z2() for _ in PlayerState._fields)), GameState(*(z1() for _ in GameState._fields)),
                   torch.zeros(num_envs, delay, buttons, device=device), extra)


def put(field: Tensor, p: int, value: Tensor | float) -> Tensor:
    """``field`` (``[B, 2]``) with player ``p``'s column replaced by ``value`` (``[B]`` or a number), as a new tensor.

    Built by stacking the two columns into a contiguous ``[B, 2]`` (the layout of every field), so
    a compiled frame keeps one ``[B, 2]`` iteration space.
    """
    value = torch.as_tensor(value, dtype=field.dtype, device=field.device).expand(field.shape[0])
    parts = [value, field[:, 1]] if p == AGENT else [field[:, 0], value]
    return torch.stack(parts, 1)


_T = TypeVar("_T", bound=tuple)  # a NamedTuple of tensors: EnvState, its parts, a game's extra state


def where(mask: Tensor, new: _T, old: _T) -> _T:
    """Per environment (``mask`` ``[B]`` bool): ``new``'s fields where it holds, ``old``'s elsewhere."""
    if isinstance(new, EnvState):
        fight = None if new.fight is None else where(mask, new.fight, old.fight)  # type: ignore[type-var]
        return EnvState(contiguous(where(mask, new.players, old.players)), where(mask, new.game, old.game),
                        torch.where(mask.view(-1, 1, 1), new.inputs, old.inputs), fight)
    return type(new)(*(torch.where(mask.view(-1, *([1] * (n.dim() - 1))), n, o) for n, o in zip(new, old)))


def contiguous(players: PlayerState) -> PlayerState:
    """Every ``[B, 2]`` field contiguous, copying only those that are not.

    One layout for every state a frame returns: ``torch.compile`` specializes a frame on its
    inputs' strides, so states whose fields differ in layout (by the op that last wrote each)
    would each compile the frame again. Contiguous is the layout compiled frames return.
    """
    return PlayerState(*(t.contiguous() for t in players))


def with_player(state: EnvState, p: int, **fields: Tensor | float) -> EnvState:
    """``state`` with player ``p``'s named fields set (each a ``[B]`` tensor or a number): for tests and tools.

    >>> s = with_player(EnvState.zeros(2, torch.device("cpu")), AGENT, percent=30.0, stock=3.0)
    >>> s.players.percent.tolist()
    [[30.0, 0.0], [30.0, 0.0]]
    """
    return state._replace(players=state.players._replace(
        **{name: put(getattr(state.players, name), p, value) for name, value in fields.items()}))


def with_game(state: EnvState, **fields: Tensor | float) -> EnvState:
    """``state`` with the named per-game fields set (each a ``[B]`` tensor or a number)."""
    g = state.game
    return state._replace(game=g._replace(
        **{name: torch.as_tensor(value, dtype=getattr(g, name).dtype).expand_as(getattr(g, name)).clone()
           for name, value in fields.items()}))
