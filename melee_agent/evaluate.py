"""Play N episodes with a policy and report the paper's metric and damage figures.

Works on any :class:`~melee_agent.vecenv.VecEnv` (the arena, Dolphin). Each of ``min(num_envs, N)`` environments contributes its first
episodes only, so short episodes are not over-counted.

Reported: ``untouched_share`` (episodes that reach the frame limit without a hit: the paper's
"untouched for a minute"; an episode cut short by a game's end or a Dolphin restart is counted,
but never as untouched), ``episodes_cut`` (how many were cut so), ``mean_seconds_to_first_hit``
(an episode never hit counts its full length), and per-episode means of damage taken and dealt,
stocks lost and taken. Where the
episodes were played against more than one CPU level (an arena with a level mix), ``per_level``
holds the same figures for each level and ``untouched_share_worst_level`` the lowest share.

Where episodes are whole games (fights: ``info.game_over``), the report adds docs/design.md's game
figures: ``games``, ``wins``, ``losses``, ``draws``, ``win_rate`` and stocks and damage per game
(a game's result by :func:`melee_agent.rewards.game_result`).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import torch

from melee_agent.rewards import game_result, reached_limit
from melee_agent.vecenv import VecEnv

FPS = 60.0


def evaluate(env: VecEnv, policy: Callable[[torch.Tensor], torch.Tensor], episodes: int, progress: bool = True,
             desc: str = "eval") -> dict[str, Any]:
    if episodes <= 0:
        raise ValueError(f"episodes must be positive, got {episodes}")
    B = env.num_envs
    per_env = math.ceil(episodes / B)
    quota = torch.full((B,), per_env, dtype=torch.long, device=env.device)
    # Spread the remainder so exactly `episodes` are counted.
    extra = per_env * B - episodes
    if extra:
        quota[B - extra:] -= 1
    done_count = torch.zeros(B, dtype=torch.long, device=env.device)
    first_hit = torch.zeros(B, device=env.device)  # per running episode: frame of first hit (0 = none)
    acc = {k: torch.zeros(B, device=env.device) for k in ("damage_taken", "damage_dealt", "stocks_lost", "stocks_taken")}
    rows: list[dict[str, float]] = []
    running = {k: torch.zeros(B, device=env.device) for k in acc}
    bar = None
    if progress:
        from tqdm import tqdm  # noqa: PLC0415
        bar = tqdm(total=episodes, desc=desc, unit="ep", leave=False)
    obs = env.reset()
    # step_async lets every environment decide on its own clock (no waiting on another's
    # macro); its per-macro values count where info.ready says the macro ended.
    while True:
        counting = done_count < quota
        if not bool(counting.any()):
            break
        obs, _, done, info = env.step_async(policy(obs))
        ready = info.ready
        for k in running:
            running[k] += torch.where(ready, info[k].float(), 0.0)
        new_hit = info.hit & ready & (first_hit == 0)
        first_hit = torch.where(new_hit, info.episode_frame.float(), first_hit)
        finished = done & counting
        if bool(finished.any()):
            idx = finished.nonzero().view(-1).tolist()
            ep_frames = info.episode_frame.tolist()
            levels = info.cpu_level.tolist()
            fh = first_hit.tolist()
            at_limit = reached_limit(info.truncated, info.episode_frame, env.max_frames).tolist()
            cut = (info.truncated & ~reached_limit(info.truncated, info.episode_frame, env.max_frames)).tolist()
            vals = {k: v.tolist() for k, v in running.items()}
            over = info.game_over.tolist()
            result = game_result(info.agent_stocks, info.opponent_stocks, info.agent_percent,
                                 info.opponent_percent).tolist()
            for i in idx:
                hit_frame = fh[i]
                rows.append({"cpu_level": int(levels[i]), "untouched": float(hit_frame == 0 and at_limit[i]),
                             "cut": float(cut[i]),
                             "seconds_to_first_hit": (hit_frame if hit_frame else ep_frames[i]) / FPS,
                             "game_over": float(over[i]), "result": float(result[i]) if over[i] else 0.0,
                             **{k: vals[k][i] for k in running}})
            if bar is not None:
                bar.update(len(idx))
        done_count += done.long()
        for k in running:
            running[k] = torch.where(done, 0.0, running[k])
        first_hit = torch.where(done, 0.0, first_hit)
    if bar is not None:
        bar.close()
    out = summarize(rows)
    levels = sorted({r["cpu_level"] for r in rows})
    if len(levels) > 1:
        out["per_level"] = {str(lv): summarize([r for r in rows if r["cpu_level"] == lv]) for lv in levels}
        out["untouched_share_worst_level"] = min(v["untouched_share"] for v in out["per_level"].values())
    return out


def summarize(rows: list[dict[str, float]]) -> dict[str, Any]:
    """The reported means over per-episode rows (one row per counted episode)."""
    n = len(rows)
    mean = lambda k: sum(r[k] for r in rows) / n  # noqa: E731
    out: dict[str, Any] = {
        "episodes": n,
        "untouched_share": mean("untouched"),
        "episodes_cut": int(sum(r.get("cut", 0.0) for r in rows)),
        "mean_seconds_to_first_hit": mean("seconds_to_first_hit"),
        "damage_taken": mean("damage_taken"),
        "damage_dealt": mean("damage_dealt"),
        "stocks_lost": mean("stocks_lost"),
        "stocks_taken": mean("stocks_taken"),
    }
    games = [r for r in rows if r.get("game_over")]
    if games:
        g = len(games)
        per_game = lambda k: sum(r[k] for r in games) / g  # noqa: E731
        wins, losses = sum(r["result"] > 0 for r in games), sum(r["result"] < 0 for r in games)
        out.update(games=g, wins=wins, losses=losses, draws=g - wins - losses, win_rate=wins / g,
                   stocks_taken_per_game=per_game("stocks_taken"), stocks_lost_per_game=per_game("stocks_lost"),
                   damage_dealt_per_game=per_game("damage_dealt"), damage_taken_per_game=per_game("damage_taken"))
    return out
