"""The arena as Gymnasium environments: ``import melee_agent.envs.gym`` registers them.

* ``MeleeAgent/Untouchable-v0``: the dodging task (Fox against Marth's CPU at levels 1-9, each
  episode drawing its level; reward ``untouchable``; terminal when hit, truncated after a minute).
* ``MeleeAgent/Fight-v0``: whole 4-stock games (reward ``fight``; terminal at the game's end).

``gymnasium.make(id)`` gives one environment (:class:`ArenaEnv`, an arena of B = 1);
``gymnasium.make_vec(id, num_envs=N)`` gives N environments stepped together by ONE arena
(:class:`ArenaVectorEnv`, B = N), which resets finished episodes in the same step (Gymnasium's
``AutoresetMode.SAME_STEP``: the episode's last observation is in ``info["final_obs"]``).
Observations are the 27-float state, ``Box(0, 1, (27,), float32)``; actions are the action
set's macros, ``Discrete(n)``; one step plays one whole macro (1 to 32 frames). ``info`` carries
the arena's per-step fields (``hit``, ``frames``, ``episode_frame``, ``damage_taken``, ...).
An action is an integer in ``[0, n)`` (a float or a string is refused, as ``Discrete.contains`` would);
once an episode ends, :class:`ArenaEnv` wants ``reset()`` before the next ``step`` (a RuntimeError says so).
Keyword arguments of ``make`` go to the arena: ``cpu_level`` (an int or a list), ``delay_frames``,
``action_set``, ``reward``, ``max_frames``, ``device``.

Example::

    >>> import gymnasium, melee_agent.envs.gym
    >>> env = gymnasium.make("MeleeAgent/Untouchable-v0", cpu_level=9)
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, env.action_space
    ((27,), Discrete(5))
    >>> obs, reward, terminated, truncated, info = env.step(0)
    >>> int(info["frames"])
    1
"""

from __future__ import annotations

from typing import Any, Sequence

import gymnasium
import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from melee_agent.envs.state import STATE_DIM
from melee_agent.envs.vecenv import StepInfo

ALL_LEVELS = (1, 2, 3, 4, 5, 6, 7, 8, 9)
#: Per registered id: the arena's game.
IDS = {"MeleeAgent/Untouchable-v0": "dodge", "MeleeAgent/Fight-v0": "fight"}


def _arena(num_envs: int, game: str, seed: int, cpu_level: int | Sequence[int], **kwargs: Any) -> Any:
    from melee_agent.arena import Arena  # noqa: PLC0415

    levels = cpu_level if isinstance(cpu_level, int) else list(cpu_level)
    return Arena(num_envs, cpu_level=levels, seed=seed, game=game, **kwargs)


def _info(info: StepInfo, i: int | None = None) -> dict[str, Any]:
    """The step's fields as numpy (``i``: one environment's, as Python scalars)."""
    out: dict[str, Any] = {}
    for k, v in info._asdict().items():
        if v is None or k in ("final_obs", "ready"):
            continue
        a = v.detach().cpu().numpy()
        out[k] = a[i].item() if i is not None else a
    return out


def _fresh_seed() -> int:
    # A seed for an unseeded first reset, drawn without touching the env's np_random (Gymnasium's
    # checker requires reset(seed=None) to leave it as the last seeded reset left it).
    return int(np.random.SeedSequence().entropy % 2**31)


class ArenaEnv(gymnasium.Env[np.ndarray, np.int64]):
    """One arena game as a Gymnasium environment (see the module docstring)."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, game: str = "dodge", cpu_level: int | Sequence[int] = ALL_LEVELS, **arena_kwargs: Any):
        self.game, self.cpu_level, self.arena_kwargs = game, cpu_level, arena_kwargs
        probe = _arena(1, game, 0, cpu_level, **arena_kwargs)  # validates every argument now
        self.observation_space = spaces.Box(0.0, 1.0, (STATE_DIM,), np.float32)
        self.action_space = spaces.Discrete(probe.num_actions)
        self._arena: Any = None
        self._next: np.ndarray | None = None  # the next episode's first observation, once one ended

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is not None or self._arena is None:
            self._arena = _arena(1, self.game, _fresh_seed() if seed is None else seed, self.cpu_level,
                                 **self.arena_kwargs)
            obs = self._arena.reset()[0].cpu().numpy()
        elif self._next is not None:  # the arena started the next episode when the last one ended
            obs = self._next
        else:  # mid-episode: start a new one
            obs = self._arena.reset()[0].cpu().numpy()
        self._next = None
        return obs.astype(np.float32), {"cpu_level": int(self._arena.cpu_levels[0])}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._arena is None:
            raise RuntimeError("call reset() before step()")
        if self._next is not None:
            # The arena has begun the next episode; stepping on would play it without its first observation.
            raise RuntimeError("the episode has ended: call reset() before step()")
        a = np.asarray(action)
        if a.shape != () or not np.issubdtype(a.dtype, np.integer) or not 0 <= int(a) < self.action_space.n:
            raise ValueError(f"action must be an int in [0, {self.action_space.n}), got {action!r}")
        obs, reward, done, info = self._arena.step(torch.tensor([int(a)]))
        terminated, truncated = bool(info.terminal[0]), bool(info.truncated[0])
        out = info.final_obs[0].cpu().numpy().astype(np.float32)
        self._next = obs[0].cpu().numpy() if bool(done[0]) else None
        return out, float(reward[0]), terminated, truncated and not terminated, _info(info, 0)


class ArenaVectorEnv(VectorEnv):
    """``num_envs`` arena games stepped together by one arena (see the module docstring)."""

    metadata: dict[str, Any] = {"render_modes": [], "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int, game: str = "dodge", cpu_level: int | Sequence[int] = ALL_LEVELS,
                 **arena_kwargs: Any):
        self.num_envs, self.game, self.cpu_level, self.arena_kwargs = num_envs, game, cpu_level, arena_kwargs
        self._arena = _arena(num_envs, game, 0, cpu_level, **arena_kwargs)
        self.single_observation_space = spaces.Box(0.0, 1.0, (STATE_DIM,), np.float32)
        self.single_action_space = spaces.Discrete(self._arena.num_actions)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)  # seeds self._np_random
        if seed is not None:
            self._arena = _arena(self.num_envs, self.game, seed, self.cpu_level, **self.arena_kwargs)
        obs = self._arena.reset().cpu().numpy().astype(np.float32)
        return obs, {"cpu_level": self._arena.cpu_levels.cpu().numpy()}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        actions = np.asarray(actions)
        if (actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer)
                or not self.action_space.contains(actions.astype(np.int64))):
            raise ValueError(f"actions must be {self.num_envs} ints in [0, {self.single_action_space.n}), "
                             f"got shape {actions.shape}")
        obs, reward, done, info = self._arena.step(torch.as_tensor(actions, dtype=torch.long))
        terminated = info.terminal.cpu().numpy()
        truncated = info.truncated.cpu().numpy() & ~terminated
        infos = _info(info)
        ended = done.cpu().numpy()
        infos["final_obs"] = info.final_obs.cpu().numpy().astype(np.float32)
        infos["_final_obs"] = ended
        return (obs.cpu().numpy().astype(np.float32), reward.cpu().numpy().astype(np.float64), terminated,
                truncated, infos)


def _register() -> None:
    for env_id, game in IDS.items():
        if env_id in gymnasium.registry:
            continue
        gymnasium.register(env_id, entry_point=ArenaEnv, vector_entry_point=ArenaVectorEnv,
                           kwargs={"game": game}, disable_env_checker=False)


_register()
