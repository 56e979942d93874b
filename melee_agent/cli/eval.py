"""`melee-agent eval`: play N one-minute episodes against a CPU level and report the paper's metric.

With ``--cpu-level all`` it runs levels 1-9 and draws the untouched share per level as a PNG.
For fights (``env.game = "fight"``: ``--config fight`` on the arena, ``--config dolphin-fight`` in
Dolphin) episodes are whole games: the table shows games won, lost and drawn and stocks and damage
per game, and ``--json`` adds the game figures (docs/design.md "Fights":
``games``, ``win_rate``, ``ko_causes``, ``per_level``...; across levels, ``win_rate_worst_level``).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from melee_agent.config import Config, default_run_dir, env_levels, env_stages
from melee_agent.games import game_of
from melee_agent.io.files import atomic_write_json
from melee_agent.envs.make import ENVS, eval_config, make_env, make_eval_env
from melee_agent.envs.rewards import GAME_FRAMES
from melee_agent.report.evaluate import EvalResult, GameFigures, evaluate, merge_games
from melee_agent.report.plots import per_level_bars
from melee_agent.rl.policies import make_policy
from melee_agent.cli.common import add_common, add_stage_flag, config_for_policy, require_png, stage_override
from melee_agent.cli import flags

METRICS = ("untouched_share", "mean_seconds_to_first_hit", "damage_taken", "damage_dealt", "stocks_lost",
           "stocks_taken")


@dataclass(frozen=True)
class LevelRow:
    """One level's evaluation: a row of the table and of ``--json``'s ``levels``."""

    policy: str
    """The policy evaluated (``--policy``)."""
    env: str
    """The environment (``arena``, ``dolphin``)."""
    cpu_level: int
    """The CPU level played."""
    result: EvalResult
    """The figures."""
    seconds: float
    """Wall seconds the evaluation took (shared by levels played side by side)."""

    def to_json(self) -> dict[str, Any]:
        return {"policy": self.policy, "env": self.env, "cpu_level": self.cpu_level, **self.result.to_json(),
                "seconds": self.seconds}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="evaluate a policy against the built-in CPU (arena or Dolphin)")
    add_common(p, config_default=None,
               config_help="default: for a model file, the shipped config of its own game, action set and delay; "
                           "else default")
    p.add_argument("--env", choices=ENVS, default=None, help="environment (default: the config's, arena)")
    p.add_argument("--cpu-level", default=None,
                   help="CPU level 1-9, a comma list, or 'all' (default: the config's env.cpu_levels, else env.cpu_level)")
    add_stage_flag(p)
    p.add_argument("--episodes", type=flags.positive_int, default=100, help="episodes per level (default: %(default)s)")
    p.add_argument("--policy", default="random",
                   help="MODEL.safetensors, pretrained:NAME (a model shipped with melee-agent, e.g. "
                        "pretrained:fight), or a scripted policy: noop, random, dodger, roller, fighter (default: %(default)s)")
    p.add_argument("--envs", type=flags.positive_int, default=None,
                   help="arena environments stepped together (default: min(episodes, 2048), since an eager arena's frame "
                        "costs about the same at 90 and 1,800; never more than --episodes)")
    p.add_argument("--seed", type=flags.seed, default=1, help="environment seed (default: %(default)s)")
    p.add_argument("--plot", default=None, metavar="PNG",
                   help="with --cpu-level all: where to draw the per-level plot (default: beside --json, "
                        "else eval-levels.png)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-replays", action="store_true",
                   help="with --env dolphin: do not save each game as a Slippi replay (.slp) under the run folder")
    p.set_defaults(func=run)


def parse_levels(text: str | None, default: tuple[int, ...]) -> list[int]:
    """``--cpu-level``: one level, a comma list, or 'all'; none: the config's level(s). Repeats are dropped."""
    if text is None:
        return list(default)
    if text == "all":
        return list(range(1, 10))
    try:
        levels = [int(x) for x in text.split(",")]
    except ValueError:
        raise ValueError(f"--cpu-level must be 1-9, a comma list, or 'all'; got {text!r}") from None
    bad = [lv for lv in levels if not 1 <= lv <= 9]
    if bad:
        raise ValueError(f"--cpu-level must be between 1 and 9; got {bad[0]}")
    return list(dict.fromkeys(levels))


def evaluate_levels(cfg: Config, policy_spec: str, levels: list[int], episodes: int, envs: int | None = None,
                    device: str = "cpu", seed: int = 1, progress: bool = True) -> list[LevelRow]:
    """Evaluate one policy at each level; returns one row per level (its ``to_json``: docs/design.md keys).

    On the arena, several levels play side by side in one spread arena (environment ``i`` plays
    ``levels[i % K]``, one episode each; ``envs`` is ignored); Dolphin plays them one after another.
    """
    if episodes <= 0:
        raise ValueError(f"--episodes must be positive, got {episodes}")
    policy = make_policy(policy_spec, cfg.env.action_set, device=device, seed=seed, delay_frames=cfg.env.delay_frames)
    cfg = eval_config(cfg)
    if cfg.env.env == "arena" and len(levels) > 1:
        env, n = make_eval_env(cfg, episodes * len(levels), tuple(levels), device=device, seed=seed)
        t0 = time.perf_counter()
        r = evaluate(env, policy, n, progress=progress, desc=f"levels {levels[0]}-{levels[-1]}")
        seconds = round(time.perf_counter() - t0, 2)
        per = r.per_level or {levels[0]: r}
        return [LevelRow(policy_spec, cfg.env.env, lv, per[lv], seconds) for lv in levels]
    # More environments than episodes would only play games that are not counted.
    n_envs = 1 if cfg.env.env == "dolphin" else min(envs or 2048, episodes)
    results = []
    for level in levels:
        env = make_env(cfg, num_envs=n_envs, device=device, seed=seed, cpu_level=level)
        t0 = time.perf_counter()
        try:
            r = evaluate(env, policy, episodes, progress=progress, desc=f"level {level}")
        finally:
            env.close()
        results.append(LevelRow(policy_spec, cfg.env.env, level, r, round(time.perf_counter() - t0, 2)))
    return results


def format_table(rows: list[LevelRow]) -> str:
    if rows and all(r.result.fights is not None for r in rows):
        return format_games(rows)
    head = f"{'level':>5}  {'episodes':>8}  {'untouched':>9}  {'s to hit':>8}  {'dmg taken':>9}  " \
           f"{'dmg dealt':>9}  {'stocks lost':>11}  {'stocks taken':>12}"
    lines = [head, "-" * len(head)]
    for row in rows:
        r = row.result
        lines.append(f"{row.cpu_level:>5}  {r.episodes:>8}  {r.untouched_share:>8.1%}  "
                     f"{r.mean_seconds_to_first_hit:>8.2f}  {r.damage_taken:>9.1f}  {r.damage_dealt:>9.1f}  "
                     f"{r.stocks_lost:>11.2f}  {r.stocks_taken:>12.2f}")
    return "\n".join(lines)


def format_games(rows: list[LevelRow]) -> str:
    """A fight's table: one row per level, its games, win rate and stocks and damage per game."""
    head = f"{'level':>5}  {'games':>6}  {'win rate':>8}  {'W-L-D':>11}  {'stocks taken':>12}  {'stocks lost':>11}  " \
           f"{'dmg dealt':>9}  {'dmg taken':>9}"
    lines = [head, "-" * len(head)]
    for row in rows:
        g = row.result.fights
        assert g is not None  # format_table sends only fights here
        wld = f"{g.wins}-{g.losses}-{g.draws}"
        lines.append(f"{row.cpu_level:>5}  {g.games:>6}  {g.win_rate:>7.1%}  {wld:>11}  "
                     f"{g.stocks_taken_per_game:>12.2f}  {g.stocks_lost_per_game:>11.2f}  "
                     f"{g.damage_dealt_per_game:>9.1f}  {g.damage_taken_per_game:>9.1f}")
    return "\n".join(lines)


def format_causes(g: GameFigures) -> str:
    """Two lines: the stocks taken by the move credited (``ko_causes``) and the stocks lost (``lost_causes``)."""
    def line(counts: dict[str, int]) -> str:
        total = sum(counts.values())
        return ", ".join(f"{k} {v} ({v / total:.0%})" for k, v in counts.items()) if total else "none"

    return f"KOs by: {line(g.ko_causes)}\nstocks lost to: {line(g.lost_causes)}"


def run(args: argparse.Namespace) -> int:
    cfg, _ = config_for_policy(args.config, [*args.set, *stage_override(args.stage)], args.policy, env=args.env)
    levels = parse_levels(args.cpu_level, env_levels(cfg))
    if args.plot is not None:
        require_png(args.plot)
        if len(levels) == 1:
            print("melee-agent eval: note: --plot draws one bar per level; with one level there is none to draw",
                  file=sys.stderr)
    replays = None
    if cfg.env.env == "dolphin" and not args.no_replays and not cfg.dolphin.save_replays:
        # Every evaluated game as a Slippi replay, to watch what the agent did in Slippi Launcher.
        replays = Path(args.run_dir or default_run_dir(cfg)) / "replays"
        cfg.dolphin.save_replays, cfg.dolphin.replay_dir = True, str(replays)
    rows = evaluate_levels(cfg, args.policy, levels, args.episodes, args.envs, args.device, args.seed,
                           progress=not args.no_progress and sys.stderr.isatty())
    game = game_of(cfg.env.game)
    what = game.episodes_words((cfg.env.clock_frames or GAME_FRAMES) if game.whole_games else cfg.env.max_frames)
    stages = env_stages(cfg)
    print(f"policy {args.policy} vs {cfg.env.env} CPU (Marth) on {', '.join(stages)}, {args.episodes} {what} per level")
    print(format_table(rows))
    results = [r.result for r in rows]
    games, worst_win_rate = merge_games(results)
    if games is not None and (games.ko_causes or games.lost_causes):
        print(format_causes(games))
    docs = [r.to_json() for r in rows]
    if len(rows) == 1:
        out: dict[str, Any] = docs[0]
        if games is not None:  # docs/design.md: a fight's eval JSON has per_level, one level or several
            out = {**out, "per_level": {str(rows[0].cpu_level): dict(docs[0])}}
    else:
        n = sum(r.episodes for r in results)
        out = {"policy": args.policy, "env": cfg.env.env, "cpu_level": levels, "episodes": n,
               **{k: sum(getattr(r, k) * r.episodes for r in results) / n for k in METRICS},
               "episodes_cut": sum(r.episodes_cut for r in results), "levels": docs,
               "per_level": {str(row.cpu_level): d for row, d in zip(rows, docs)},
               "untouched_share_worst_level": min(r.untouched_share for r in results),
               **(games.to_json() if games is not None else {}),
               **({"win_rate_worst_level": worst_win_rate} if worst_win_rate is not None else {})}
    if len(rows) > 1:
        plot = args.plot or (str(Path(args.json).with_suffix(".png")) if args.json else
                             str(Path(args.run_dir) / "eval-levels.png") if args.run_dir else "eval-levels.png")
        Path(plot).parent.mkdir(parents=True, exist_ok=True)
        fights = all("win_rate" in d for d in docs)
        key, label = ("win_rate", "games won") if fights else ("untouched_share", "untouched share")
        per_level_bars(docs, f"{args.policy} vs {cfg.env.env} CPU: {label} per level", plot, key=key)
        out["plot"] = plot
        print(f"plot written to {plot}")
    out["seed"] = args.seed  # the arenas' and the policy's: the same seed plays the same games
    out["stage"] = stages[0] if len(stages) == 1 else list(stages)
    if replays is not None:
        out["replays"] = str(replays)
        print(f"Slippi replays of the games in {replays} (open them in Slippi Launcher)")
    if args.run_dir:  # the run's folder holds its results as train's does (DIR/eval.json)
        atomic_write_json(Path(args.run_dir) / "eval.json", out)
        print(f"results written to {Path(args.run_dir) / 'eval.json'}", file=sys.stderr)
    if args.json:
        atomic_write_json(args.json, out)
        print(f"results written to {args.json}", file=sys.stderr)
    return 0
