"""One way to build an environment from a config: the arena (default) or real Melee in Dolphin.

Both are a :class:`~melee_agent.envs.vecenv.VecEnv`: ``reset``, ``step``, ``step_async`` reporting one
:class:`~melee_agent.envs.vecenv.StepInfo`, and ``close``.
"""

from __future__ import annotations

import dataclasses

import torch

from melee_agent.config import Config, env_stages
from melee_agent.envs.vecenv import VecEnv
from melee_agent.games import game_of

ENVS = ("arena", "dolphin")


def make_env(cfg: Config, num_envs: int = 1, device: str | torch.device = "cpu", seed: int = 0,
             cpu_level: int | None = None) -> VecEnv:
    """The config's environment; ``cpu_level`` plays that one level instead of the config's level(s)."""
    kind = cfg.env.env
    if cpu_level is not None:
        level, weights = cpu_level, None
    elif cfg.env.cpu_levels:
        level, weights = list(cfg.env.cpu_levels), (cfg.env.level_weights or None)
    else:
        level, weights = cfg.env.cpu_level, None
    if kind == "arena":
        return _arena(cfg, num_envs, level, device, seed, weights=weights)
    if kind == "dolphin":
        from melee_agent.dolphin import DolphinEnv  # noqa: PLC0415

        if not isinstance(level, int):
            if len(set(level)) > 1:
                raise ValueError(f"env.cpu_levels={list(level)}: a Dolphin game plays one CPU level; give each "
                                 "worker its own env.cpu_level instead (the level mix is the arena's)")
            level = level[0]
        if num_envs != 1:
            raise ValueError(f"a Dolphin worker plays one game at a time; got envs={num_envs}")
        dodge = not game_of(cfg.env.game).whole_games
        return DolphinEnv(cfg.dolphin, cpu_level=level, action_set=cfg.env.action_set, reward=cfg.env.reward,
                          max_frames=cfg.env.max_frames if dodge else None, device=device, game=cfg.env.game,
                          delay_frames=cfg.env.delay_frames, state_layout=cfg.env.state_layout,
                          **stage_kwargs(cfg), seed=seed)
    raise ValueError(f"unknown env {kind!r}; known: {', '.join(ENVS)}")


def eval_config(cfg: Config) -> Config:
    """The config evaluations play: ``env.compile`` on where ``env.compile_eval`` asks for it."""
    if cfg.env.compile_eval and not cfg.env.compile:
        return dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, compile=True))
    return cfg


def eval_episodes(episodes: int, levels: tuple[int, ...]) -> int:
    """The episodes :func:`make_eval_env` plays for ``episodes`` asked over ``levels``: the same at each level.

    >>> eval_episodes(100, (1, 2, 3)), eval_episodes(100, (9,))
    (102, 100)
    """
    k = len(levels)
    return episodes if k == 1 else k * -(-episodes // k)


def make_eval_env(cfg: Config, episodes: int, levels: tuple[int, ...], device: str | torch.device = "cpu",
                  seed: int = 0, max_envs: int = 256) -> tuple[VecEnv, int]:
    """An arena to evaluate ``episodes`` against ``levels``, and the episode count to ask of it.

    One level: ``min(episodes, max_envs)`` environments. Several: a spread arena (environment ``i``
    plays ``levels[i % K]``) with one episode per environment, ``episodes`` rounded up to a
    multiple of ``K``, so every level gets the same count.
    """
    if cfg.env.env != "arena":
        raise ValueError("make_eval_env builds arena evaluations; Dolphin plays one level per game")
    episodes = eval_episodes(episodes, levels)
    if len(levels) == 1:
        n, level = min(episodes, max_envs), levels[0]
    else:
        n, level = episodes, list(levels)
    return _arena(cfg, n, level, device, seed, spread=len(levels) > 1), episodes


def _arena(cfg: Config, num_envs: int, level: int | list[int], device: str | torch.device, seed: int,
           weights: list[float] | None = None, spread: bool = False) -> VecEnv:
    """An arena with the config's action set, reward, frame limit and compile setting."""
    from melee_agent.arena import Arena  # noqa: PLC0415

    dodge = not game_of(cfg.env.game).whole_games
    if cfg.env.clock_frames < 0:
        raise ValueError(f"env.clock_frames must be 0 (Melee's 8:00) or positive, got {cfg.env.clock_frames}")
    return Arena(num_envs, cpu_level=level, device=device, seed=seed, action_set=cfg.env.action_set,
                 reward=cfg.env.reward, max_frames=cfg.env.max_frames if dodge else (cfg.env.clock_frames or None), compile=cfg.env.compile,
                 level_weights=weights, spread_levels=spread, game=cfg.env.game, delay_frames=cfg.env.delay_frames,
                 cpu=cfg.env.cpu, characters=cfg.env.characters, state_layout=cfg.env.state_layout,
                 **arena_stage(**stage_kwargs(cfg)))


def stage_kwargs(cfg: Config) -> dict:
    """``stage`` and ``stage_weights`` as the arena and Dolphin take them: ``env.stage`` (one name or a list) and its
    weights (None: equal)."""
    stages = env_stages(cfg)
    return {"stage": stages[0] if isinstance(cfg.env.stage, str) else list(stages),
            "stage_weights": list(cfg.env.stage_weights) or None}


def arena_stage(stage: str | list[str], stage_weights: list[float] | None = None) -> dict:
    """The arena's stage arguments: none for Final Destination alone (the arena's own default, so such an arena is
    built exactly as before stages), else ``stage`` and ``stage_weights``."""
    if stage in ("final_destination", ["final_destination"]) and not stage_weights:
        return {}
    return {"stage": stage, "stage_weights": stage_weights}
