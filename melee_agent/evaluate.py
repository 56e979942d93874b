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
(a game's result by :func:`melee_agent.rewards.game_result`), ``ko_causes`` and, over a level mix,
``win_rate_worst_level``.

``ko_causes`` counts the stocks the agent took by the move that launched: the agent's latest move that
hit the opponent before the KO (``info.agent_last_hit``, the front of the arena's stale-move queue),
named by Fox's move (``fsmash``, ``uair``, ``bthrow``, ``shine``...; see :func:`ko_cause_names`).
``unknown`` counts KOs with no move on record: the firefox's flight and the illusion carry no attack
id in the arena's move table, and an environment that does not report the field (Dolphin so far)
counts every KO there.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import torch

from melee_agent.rewards import game_result, reached_limit
from melee_agent.vecenv import VecEnv

FPS = 60.0
UNKNOWN_CAUSE = "unknown"


def ko_cause_names() -> dict[int, str]:
    """Fox's attack ids (the game's, from the arena's move table) -> the names ``ko_causes`` counts by."""
    from melee_agent.arena.fight.moves import AGENT_COL, SLOT_NAMES, fight_table_cpu, row  # noqa: PLC0415

    rename = {"down_b": "shine", "up_b": "firefox", "dash_grab": "grab", "jab1": "jab", "jab2": "jab", "jab3": "jab"}
    t = fight_table_cpu()
    out: dict[int, str] = {}
    for slot, name in enumerate(SLOT_NAMES):
        aid = int(t.attack_id[row(AGENT_COL, slot)])
        if aid and aid not in out:
            out[aid] = rename.get(name.lower(), name.lower())
    return out


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
    causes: list[dict[str, int]] = [{} for _ in range(B)]  # per running episode: its KOs by cause
    cause_names: dict[int, str] | None = None
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
        took = ready & (info.stocks_taken > 0)
        if bool(took.any()):
            cause_names = ko_cause_names() if cause_names is None else cause_names
            last = info.agent_last_hit if info.agent_last_hit is not None else torch.zeros_like(info.stocks_taken)
            for i, aid, n in zip(took.nonzero().view(-1).tolist(), last[took].tolist(), info.stocks_taken[took].tolist()):
                name = cause_names.get(int(aid), UNKNOWN_CAUSE)
                causes[i][name] = causes[i].get(name, 0) + int(n)
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
                             "ko_causes": causes[i], **{k: vals[k][i] for k in running}})
            if bar is not None:
                bar.update(len(idx))
        done_count += done.long()
        for k in running:
            running[k] = torch.where(done, 0.0, running[k])
        first_hit = torch.where(done, 0.0, first_hit)
        for i in done.nonzero().view(-1).tolist():
            causes[i] = {}
    if bar is not None:
        bar.close()
    out = summarize(rows)
    levels = sorted({r["cpu_level"] for r in rows})
    if len(levels) > 1:
        out["per_level"] = {str(lv): summarize([r for r in rows if r["cpu_level"] == lv]) for lv in levels}
        out["untouched_share_worst_level"] = min(v["untouched_share"] for v in out["per_level"].values())
        if all("win_rate" in v for v in out["per_level"].values()):
            out["win_rate_worst_level"] = min(v["win_rate"] for v in out["per_level"].values())
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
                   damage_dealt_per_game=per_game("damage_dealt"), damage_taken_per_game=per_game("damage_taken"),
                   ko_causes=sum_causes(r.get("ko_causes", {}) for r in games))
    return out


def sum_causes(counts: Any) -> dict[str, int]:
    """Several ``ko_causes`` dicts added up, most KOs first."""
    total: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            total[k] = total.get(k, 0) + int(v)
    return dict(sorted(total.items(), key=lambda kv: (-kv[1], kv[0])))


#: A fight report's per-game figures (means over games), merged by :func:`merge_games`.
GAME_MEANS = ("stocks_taken_per_game", "stocks_lost_per_game", "damage_dealt_per_game", "damage_taken_per_game")


def merge_games(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The fight figures of several reports (one per CPU level) as one: counts added, per-game means
    weighted by games, ``ko_causes`` added, ``win_rate_worst_level`` the lowest. Empty where none has games."""
    rs = [r for r in results if r.get("games")]
    if not rs:
        return {}
    g = sum(r["games"] for r in rs)
    wins, losses, draws = (sum(r[k] for r in rs) for k in ("wins", "losses", "draws"))
    return {"games": g, "wins": wins, "losses": losses, "draws": draws, "win_rate": wins / g,
            **{k: sum(r[k] * r["games"] for r in rs) / g for k in GAME_MEANS},
            "ko_causes": sum_causes(r["ko_causes"] for r in rs),
            "win_rate_worst_level": min(r["win_rate"] for r in rs)}
