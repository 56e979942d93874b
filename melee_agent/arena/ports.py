"""Ports: which character stands on each port, each port's own view, and opponents other than the CPU.

DESIGN.md "Ports, opponents and the league": ``env.characters`` puts a character on each port (Fox or
Marth, either order, dittos too), and port 1 is played by a controller: the CPU (the default), or a
model (or any policy: ``[n, 27]`` observations -> ``[n]`` action indices), or raw frames (``Arena.step_pads``).

* :func:`character_table` -- the fight's move table with each port's character: every per-port constant of
  the table (the first move row, attributes, weight) is read through the character's index, so a ditto is
  two columns reading the same rows. ``("fox", "marth")`` leaves the table as built (bit-identical games).
* :func:`port_view` / :func:`observe_port` -- the 27-float state from a port's own view: its 13 values first.
  The same game read from port 1 is the one read from port 0 with the halves swapped, so one network plays
  either port.
* :class:`Opponents` -- a pool: the environments split among opponents, each played from one forward pass
  over all the environments it plays, each with its own macro in flight (a macro of the arena's action set,
  played frame by frame through the same controller table as the agent's).

Example::

    >>> import torch
    >>> from melee_agent.arena import Arena
    >>> from melee_agent.rl.policies import noop_policy
    >>> env = Arena(4, game="fight", characters=("fox", "fox"))
    >>> env.set_opponents(Opponents.split([noop_policy("fight")], 4, env))
    >>> obs = env.reset()
    >>> bool(torch.equal(observe_port(env, 1)[:, :13], obs[:, 13:26]))
    True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import torch
from melee.enums import Character
from torch import Tensor

from melee_agent.arena.env_state import PlayerState
from melee_agent.arena.fight.moves import CHARACTERS as TABLE_CHARACTERS
from melee_agent.arena.fight.moves import NUM_SLOTS, Attrs, FightTable


class PortArena(Protocol):
    """What the helpers here read of an :class:`~melee_agent.arena.env.Arena`: typed by its parts, not imported,
    since the arena imports this module."""

    num_envs: int
    num_actions: int
    device: torch.device
    state: Any  # EnvState
    opponents: Opponents | None
    T: Any  # the move table
    _consts: Any  # FrameConsts

#: Character names as configs and model files spell them, and each one's column in the move table.
CHARACTER_NAMES = {"fox": TABLE_CHARACTERS.index(Character.FOX), "marth": TABLE_CHARACTERS.index(Character.MARTH)}
#: The arena's characters unless told otherwise: the agent's Fox on port 0, the CPU's Marth on port 1.
DEFAULT_CHARACTERS = ("fox", "marth")

Policy = Callable[[Tensor], Tensor]


def check_characters(characters: Sequence[str]) -> tuple[str, str]:
    """``characters`` as a pair of known names (lower case), or a ValueError naming the problem."""
    if isinstance(characters, str) or len(characters) != 2:
        raise ValueError(f"characters must name two characters, one per port, e.g. ['fox', 'marth'], got {characters!r}")
    out = tuple(str(c).lower() for c in characters)
    for c in out:
        if c not in CHARACTER_NAMES:
            raise ValueError(f"unknown character {c!r}; known: {', '.join(CHARACTER_NAMES)}")
    return out  # type: ignore[return-value]


def character_table(T: FightTable, characters: Sequence[str]) -> FightTable:
    """``T`` with port ``p`` playing ``characters[p]``: its first move row and attributes are that character's."""
    chars = check_characters(characters)
    if chars == DEFAULT_CHARACTERS:
        return T  # the table as built: column p is character p
    idx = torch.tensor([CHARACTER_NAMES[c] for c in chars], device=T.base.device)
    # Every per-port tensor is [B, 2] (or [2] / [1, 2]) with column p holding character p's value; reading it
    # at the characters' indices gives each port its character's value.
    pick = lambda v: v.index_select(-1, idx).contiguous()  # noqa: E731
    return dataclasses.replace(T, base=(idx * NUM_SLOTS).expand_as(T.base).contiguous(), weight=pick(T.weight),
                               attrs=Attrs(*(pick(v) for v in T.attrs)))


def port_view(players: PlayerState, port: int) -> PlayerState:
    """The players' fields with ``port``'s column first (port 0: unchanged)."""
    if port not in (0, 1):
        raise ValueError(f"port must be 0 or 1, got {port!r}")
    return players if port == 0 else PlayerState(*(t.flip(1) for t in players))


def observe_port(env: PortArena, port: int, previous_action: Tensor | None = None) -> Tensor:
    """``[B, 27]``: the arena's state from ``port``'s own view (its 13 values, the other's, its previous action:
    the agent's on port 0, the opponents' on port 1 where they play, else ``previous_action``)."""
    from melee_agent.arena import episodes as storage  # noqa: PLC0415  (storage imports the arena's modules)

    if previous_action is None:  # each port's own previous action: the agent's on port 0, its opponent's on port 1
        opp = env.opponents
        previous_action = opp.previous.float() if port == 1 and opp is not None else env.state.game.previous_action
    prev = previous_action
    obs = storage.observe(port_view(env.state.players, port), prev, env.T, env.num_actions)
    in_layout = getattr(env, "in_layout", None)  # the arena's layout (the fight layout adds the clock and stocks)
    return obs if in_layout is None else in_layout(obs, env.state.game.episode_frame, env.state.players.stock, port)


@dataclasses.dataclass
class Opponent:
    """One member of a pool: a policy and the environments (indices) it plays port 1 in."""

    policy: Policy
    envs: Tensor  # [n] int64
    name: str = "model"


class Opponents:
    """Port 1's controllers other than the CPU: members, each playing its own environments (the rest keep the CPU).

    Each environment a member plays has a macro in flight (which one, frames played, the previous one, for
    the state's last value); where a macro ends the member chooses again, from one forward pass over all of
    its environments. The opponent has no input delay (guess: ``env.delay_frames`` delays the agent only).
    """

    def __init__(self, members: Sequence[Opponent], num_envs: int, device: torch.device | str = "cpu"):
        self.device = torch.device(device)
        self.members = list(members)
        self.num_envs = num_envs
        self.mask = torch.zeros(num_envs, dtype=torch.bool, device=self.device)
        for m in self.members:
            m.envs = torch.as_tensor(m.envs, dtype=torch.long, device=self.device).view(-1)
            if m.envs.numel() and (int(m.envs.min()) < 0 or int(m.envs.max()) >= num_envs):
                raise ValueError(f"opponent {m.name!r} plays environments outside [0, {num_envs})")
            if bool(self.mask[m.envs].any()) or m.envs.unique().numel() != m.envs.numel():
                raise ValueError(f"opponent {m.name!r} plays an environment another opponent already plays")
            self.mask[m.envs] = True
        zeros = torch.zeros(num_envs, dtype=torch.long, device=self.device)
        self.action, self.frame, self.previous = zeros.clone(), zeros.clone(), zeros.clone()
        self.ready = torch.ones(num_envs, dtype=torch.bool, device=self.device)

    @classmethod
    def split(cls, policies: Sequence[Policy], num_envs: int, env: PortArena | None = None, share: float = 1.0,
              names: Sequence[str] | None = None) -> Opponents:
        """The first ``share`` of the environments split among ``policies`` in equal contiguous blocks (the rest
        play the CPU)."""
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"share must be in [0, 1], got {share}")
        n = int(round(num_envs * share))
        k = max(len(policies), 1)
        bounds = [i * n // k for i in range(k + 1)]
        names = list(names) if names is not None else [f"opponent{i}" for i in range(len(policies))]
        members = [Opponent(p, torch.arange(bounds[i], bounds[i + 1]), names[i]) for i, p in enumerate(policies)]
        return cls(members, num_envs, env.device if env is not None else "cpu")

    def restart(self, where: Tensor) -> None:
        """A new game where ``where`` holds: the member chooses at the next frame, from a previous action of 0."""
        self.ready = self.ready | where
        self.previous = torch.where(where, 0, self.previous)
        self.frame = torch.where(where, 0, self.frame)

    def controls(self, env: PortArena, active: Tensor) -> tuple[Tensor, Tensor]:
        """Port 1's controller state for the next frame (``[C, B]``) and where it plays (``[B]``); the macros in
        flight move on a frame where ``active`` holds."""
        c = env._consts
        choose = self.ready & self.mask & active
        if bool(choose.any()):
            obs = observe_port(env, 1, self.previous.float())
            for m in self.members:
                if m.envs.numel() == 0 or not bool(choose[m.envs].any()):
                    continue
                picked = torch.as_tensor(m.policy(obs[m.envs]), device=self.device).long().view(-1)
                if picked.shape[0] != m.envs.numel() or bool(((picked < 0) | (picked >= env.num_actions)).any()):
                    raise ValueError(f"opponent {m.name!r} chose actions outside [0, {env.num_actions}) or of the wrong "
                                     "count")
                sel = choose[m.envs]
                self.action[m.envs] = torch.where(sel, picked, self.action[m.envs])
            self.previous = torch.where(choose, self.action, self.previous)
            self.frame = torch.where(choose, 0, self.frame)
        ctrl = c.table[:, self.action, self.frame]
        frame = torch.where(active & self.mask, self.frame + 1, self.frame)
        self.frame = frame
        self.ready = frame >= c.lengths[self.action]
        return ctrl, self.mask
