"""The environment contract: what the arena and Dolphin both are, and what one step reports.

Every environment steps ``B`` games at once (``num_envs``; 1 for Dolphin) and reports one
:class:`StepInfo`, built by :func:`step_info` so that every environment's values have the same
dtypes. ``step`` plays one whole decision (macro) in every environment; ``step_async`` advances
until some environment's macro ends and marks those in ``info.ready`` (an environment that cannot
run ahead, such as one Dolphin, is always ready). Callers use ``step_async`` and read values where
``ready`` holds, whatever the environment.

Example::

    >>> import torch
    >>> from melee_agent.arena import Arena
    >>> env: VecEnv = Arena(num_envs=2, seed=0)
    >>> obs = env.reset()
    >>> obs, reward, done, info = env.step_async(torch.tensor([0, 1]))
    >>> info.ready.tolist(), info["frames"].tolist()   # by name, or as docs/design.md's info["key"]
    ([True, False], [1, 1])
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, runtime_checkable

import torch


class StepInfo(NamedTuple):
    """What one step reports per environment (``[B]`` each, ``final_obs`` ``[B, 27]``).

    Where ``ready`` is false (``step_async`` only) the values are partial and must be ignored.
    Fields also read as ``info["hit"]`` (docs/design.md's spelling).
    """

    ready: torch.Tensor  # bool: the macro (or episode) ended; the values below describe all of it
    hit: torch.Tensor  # bool: the agent was hit during the macro
    terminal: torch.Tensor  # bool: the episode ended by its rules
    truncated: torch.Tensor  # bool: the episode was cut (frame limit, game over, restart)
    frames: torch.Tensor  # int64: frames played in the macro
    episode_frame: torch.Tensor  # int64: frames played in the episode (before any reset)
    episode_return: torch.Tensor  # float32: the episode's return so far (before any reset)
    damage_taken: torch.Tensor  # float32, during the macro
    damage_dealt: torch.Tensor  # float32
    stocks_lost: torch.Tensor  # int64
    stocks_taken: torch.Tensor  # int64
    final_obs: torch.Tensor  # float32 [B, 27]: the state the macro ended in (the episode's last where done)
    cpu_level: torch.Tensor  # int64: the CPU level the episode is played against (before any reset)
    # As of the macro's last frame, before any reset (what a fight's result is read from):
    agent_stocks: torch.Tensor | None = None  # int64
    opponent_stocks: torch.Tensor | None = None  # int64
    agent_percent: torch.Tensor | None = None  # float32
    opponent_percent: torch.Tensor | None = None  # float32
    game_over: torch.Tensor | None = None  # bool: the game itself ended (no stocks left, or the clock)
    # int64, fights: the game's attack id credited with the opponent's latest KO (the agent's move that hit
    # it last since it last stood on the ground; -1: it self-destructed; 0: unknown, an environment that
    # does not track it), what :func:`melee_agent.report.evaluate.evaluate` names ``ko_causes`` by
    ko_move: torch.Tensor | None = None
    # int64, fights: the same for the agent's latest lost stock (the opponent's move), ``lost_causes``
    lost_move: torch.Tensor | None = None

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        if isinstance(key, str):
            try:
                return getattr(self, key)
            except AttributeError:
                raise KeyError(key) from None
        return tuple.__getitem__(self, key)


def step_info(*, ready: Any, hit: Any, terminal: Any, truncated: Any, frames: Any, episode_frame: Any,
              episode_return: Any, damage_taken: Any, damage_dealt: Any, stocks_lost: Any, stocks_taken: Any,
              final_obs: torch.Tensor, cpu_level: Any, agent_stocks: Any = 0, opponent_stocks: Any = 0,
              agent_percent: Any = 0.0, opponent_percent: Any = 0.0, game_over: Any = False,
              ko_move: Any = 0, lost_move: Any = 0) -> StepInfo:
    """The one constructor of :class:`StepInfo`: tensors (or numbers, for B = 1) in, fixed dtypes out.

    An environment that does not track the game's stocks and percent leaves them 0 (and
    ``game_over`` false).
    """
    device = final_obs.device

    def as_(value: Any, dtype: torch.dtype) -> torch.Tensor:
        t = torch.as_tensor(value, device=device)
        return (t.view(1) if t.dim() == 0 else t).to(dtype)

    b, i, f = torch.bool, torch.long, torch.float32
    n = final_obs.shape[0]
    return StepInfo(as_(ready, b), as_(hit, b), as_(terminal, b), as_(truncated, b), as_(frames, i),
                    as_(episode_frame, i), as_(episode_return, f), as_(damage_taken, f), as_(damage_dealt, f),
                    as_(stocks_lost, i), as_(stocks_taken, i), final_obs, as_(cpu_level, i).expand(n),
                    as_(agent_stocks, i).expand(n), as_(opponent_stocks, i).expand(n),
                    as_(agent_percent, f).expand(n), as_(opponent_percent, f).expand(n), as_(game_over, b).expand(n),
                    as_(ko_move, i).expand(n), as_(lost_move, i).expand(n))


StepResult = tuple[torch.Tensor, torch.Tensor, torch.Tensor, StepInfo]  # (obs, reward, done, info)


@runtime_checkable
class VecEnv(Protocol):
    """B games stepped together: the arena, or Melee in Dolphin (B = 1)."""

    num_envs: int
    num_actions: int
    device: torch.device
    max_frames: int  # the frame limit that cuts an episode (reaching it unhit is "untouched")

    def reset(self) -> torch.Tensor:
        """Start every environment afresh; returns ``obs`` ``[B, 27]``."""

    def step(self, actions: torch.Tensor) -> StepResult:
        """Play one whole decision everywhere; every environment is ready afterwards."""

    def step_async(self, actions: torch.Tensor) -> StepResult:
        """Advance until some environment's decision ends; only ready environments' actions are read."""

    def close(self) -> None:
        """Release what the environment holds (processes, sockets); the arena holds only tensors."""
