"""`melee-agent bench learn`: this project's `train` raced against Stable-Baselines3's DQN.

The race a user would run before picking this project, on the dodging task (levels 1-9 mixed),
``--runs`` runs of each, one after the other on the same machine (never side by side, which would
split its cores):

* **melee-agent**: ``melee-agent train`` with the shipped ``default`` config for ``--minutes``
  (its own periodic checks, every ``train.eval_every_minutes``).
* **SB3 DQN**: ``stable_baselines3.DQN`` with its documented defaults (learning rate 1e-4, a
  1,000,000-transition buffer, batch 32, train every 4 steps, target every 10,000, epsilon from
  1 to 0.05 over the first 10% of training) and a network of the same size (27 -> 128 -> 512 ->
  actions, plain rather than dueling), on the Gymnasium arena vectorized as SB3 expects
  (:class:`Sb3ArenaVecEnv`: one arena of ``--sb3-envs`` games), with the same torch threads.
  Its clock is paused while it is evaluated, so both sides train for the same wall time.

Both are checked on the same evaluation (10 episodes at each level, every ``--eval-every``
minutes) and their last models scored at the end over ``--final-episodes`` per level. Reported:
minutes until a check reached 95% untouched at every level (None: never), every check, the final
per-level table, and the ratio of the times.

``--fused`` races ``train`` against ``train --fused`` instead (the same config, minutes and checks, runs
one after the other): dodging, or whole games with ``--game fight`` (the target is then 95% of games
won at every level), with each run's rows/s into the replay and train steps/s.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from melee_agent.cli import flags
from melee_agent.games import DODGE, game_of
from melee_agent.report.evaluate import EvalResult

TARGET = 0.95
LEVELS = tuple(range(1, 10))
NEVER = 10**10  # SB3 steps no run reaches: its clock ends it
SB3_EXPLORATION_FRACTION = 0.1  # SB3 DQN's documented default: epsilon 1 -> 0.05 over the first 10% of the steps


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--minutes", type=flags.positive_float, default=15.0, help="training time per run (default: %(default)s)")
    p.add_argument("--runs", type=flags.positive_int, default=2, help="runs of each (default: %(default)s)")
    p.add_argument("--eval-every", type=flags.positive_float, default=2.5,
                   help="minutes between periodic checks (default: %(default)s)")
    p.add_argument("--final-episodes", type=flags.positive_int, default=100,
                   help="episodes per level in the final score (default: %(default)s)")
    p.add_argument("--sb3-envs", type=flags.positive_int, default=16,
                   help="arena games SB3's DQN steps together (default: %(default)s)")
    p.add_argument("--sb3-minutes", type=flags.positive_float, default=None,
                   help="SB3's training time per run (default: 3x the slowest time our runs took to reach the "
                        "target, so SB3 not reaching it in that time shows ours at least 3x sooner; --minutes "
                        "where ours did not reach it or did not run)")
    p.add_argument("--only", choices=("melee-agent", "sb3"), default=None, help="race one side only")
    p.add_argument("--quick", action="store_true", help="tiny runs (smoke test): 0.3 minutes, 1 run, few episodes")
    p.add_argument("--fused", action="store_true",
                   help="race `train` against `train --fused` (same config and minutes) instead of SB3")
    p.add_argument("--game", choices=("dodge", "fight"), default="dodge",
                   help="with --fused: the game raced (dodge: the default config; fight: the fight config; "
                        "--set overrides apply to both sides)")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="with --fused: override one config value on both sides (repeatable)")


def sb3_minutes(ours: list[dict[str, Any]] | None, minutes: float) -> float:
    """SB3's time budget: 3x ours' slowest time to the target (enough to tell "at least 3x sooner"
    from "not"), else ``minutes``.

    >>> sb3_minutes([{"minutes_to_target": 5.0}, {"minutes_to_target": 7.5}], 15.0)
    22.5
    >>> sb3_minutes([{"minutes_to_target": None}], 15.0)
    15.0
    """
    times = [r["minutes_to_target"] for r in ours or []]
    if not times or any(t is None for t in times):
        return minutes
    return 3.0 * max(times)


def speedup(ours: list[dict[str, Any]], theirs: list[dict[str, Any]], sb3_budget: float) -> dict[str, Any]:
    """How much sooner ours reached the target than SB3, run against run: the slowest of ours
    against the fastest of SB3's; where an SB3 run never reached it, its budget is a lower bound.

    >>> speedup([{"minutes_to_target": 5.0}], [{"minutes_to_target": None}], 22.5)
    {'ratio': 4.5, 'lower_bound': True}
    >>> speedup([{"minutes_to_target": 5.0}], [{"minutes_to_target": 10.0}], 22.5)
    {'ratio': 2.0, 'lower_bound': False}
    """
    t_ours = [r["minutes_to_target"] for r in ours]
    if not t_ours or any(t is None for t in t_ours):
        return {"ratio": None, "lower_bound": False}
    t_sb3 = [r["minutes_to_target"] for r in theirs]
    fastest = min(sb3_budget if t is None else t for t in t_sb3)
    return {"ratio": round(fastest / max(t_ours), 3), "lower_bound": all(t is None for t in t_sb3)}


def first_at_target(curve: list[dict[str, Any]], key: str = "untouched_share_worst_level") -> float | None:
    """Minutes of the first check whose worst level reached the target (None: none did).

    >>> first_at_target([{"minutes": 2.5, "untouched_share_worst_level": 0.9},
    ...                  {"minutes": 5.0, "untouched_share_worst_level": 1.0}])
    5.0
    """
    for point in curve:
        if (point.get(key) or 0.0) >= TARGET:
            return float(point["minutes"])
    return None


class Sb3ArenaVecEnv:
    """The arena as an SB3 ``VecEnv`` (one arena of ``num_envs`` games, SB3's reset conventions:
    ``dones`` and ``infos[i]["terminal_observation"]``, ``TimeLimit.truncated`` for a cut)."""

    def __init__(self, num_envs: int, seed: int, cpu_level: Any = LEVELS):
        from stable_baselines3.common.vec_env import VecEnv  # noqa: PLC0415

        from melee_agent.envs.gym import ArenaVectorEnv  # noqa: PLC0415

        class _Env(VecEnv):
            def __init__(self) -> None:
                self.venv = ArenaVectorEnv(num_envs, cpu_level=cpu_level)
                self.seed_value = seed
                super().__init__(num_envs, self.venv.single_observation_space, self.venv.single_action_space)
                self._actions: np.ndarray | None = None

            def reset(self) -> np.ndarray:
                obs, _ = self.venv.reset(seed=self.seed_value)
                return obs

            def step_async(self, actions: np.ndarray) -> None:
                self._actions = np.asarray(actions).reshape(-1)

            def step_wait(self) -> Any:
                obs, reward, terminated, truncated, info = self.venv.step(self._actions)
                done = terminated | truncated
                infos = [{} for _ in range(num_envs)]
                for i in np.flatnonzero(done):
                    infos[i] = {"terminal_observation": info["final_obs"][i], "TimeLimit.truncated": bool(truncated[i])}
                return obs, reward.astype(np.float32), done, infos

            def close(self) -> None:
                pass

            def get_attr(self, name: str, indices: Any = None) -> list[Any]:
                return [getattr(self.venv, name)] * len(self._idx(indices))

            def set_attr(self, name: str, value: Any, indices: Any = None) -> None:
                setattr(self.venv, name, value)

            def env_method(self, name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
                return [getattr(self.venv, name)(*args, **kwargs)] * len(self._idx(indices))

            def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
                return [False] * len(self._idx(indices))

            def _idx(self, indices: Any) -> list[int]:
                return list(range(num_envs)) if indices is None else list(np.atleast_1d(indices))

        self.env = _Env()


def quiet_dqn(env: Any, **kwargs: Any) -> Any:
    """SB3's DQN (``"MlpPolicy"`` on ``env``, a Gymnasium env or an SB3 VecEnv) with a logger that writes nothing.

    Left to itself, every ``learn`` sets up a logger in a new ``SB3-<time>`` folder under the
    system's temp directory, which it leaves behind even when it writes nothing there.
    """
    from stable_baselines3 import DQN  # noqa: PLC0415
    from stable_baselines3.common.logger import Logger  # noqa: PLC0415

    model = DQN("MlpPolicy", env, **kwargs)
    model.set_logger(Logger(folder=None, output_formats=[]))
    return model


def _deadline(when: float) -> Any:
    from stable_baselines3.common.callbacks import BaseCallback  # noqa: PLC0415

    class Deadline(BaseCallback):
        def _on_step(self) -> bool:
            return time.monotonic() < when
    return Deadline()


def _evaluate_q(q_net: Any, episodes_per_level: int, seed: int) -> EvalResult:
    from melee_agent.config import load_config  # noqa: PLC0415
    from melee_agent.envs.make import make_eval_env  # noqa: PLC0415
    from melee_agent.report.evaluate import evaluate  # noqa: PLC0415

    cfg = load_config("default")
    env, episodes = make_eval_env(cfg, episodes_per_level * len(LEVELS), LEVELS, seed=seed, max_envs=200)

    @torch.inference_mode()
    def pi(obs: torch.Tensor) -> torch.Tensor:
        return q_net(obs).argmax(1)
    return evaluate(env, pi, episodes, progress=False).with_worst_levels()


def _shares(r: EvalResult) -> dict[str, float]:
    """Each level's untouched share, keyed by the level as text (the report's JSON)."""
    return {str(lv): v.untouched_share for lv, v in (r.per_level or {}).items()}


def race_sb3(minutes: float, eval_every: float, envs: int, final_episodes: int, seed: int,
             check_episodes: int = 10) -> dict[str, Any]:
    """SB3's DQN for ``minutes`` of training wall time (its checks not counted)."""
    from stable_baselines3.common.callbacks import BaseCallback  # noqa: PLC0415

    venv = Sb3ArenaVecEnv(envs, seed).env
    kwargs = {"policy_kwargs": {"net_arch": [128, 512]}, "seed": seed, "device": "cpu", "verbose": 0}
    # SB3's exploration schedule runs over the first 10% of `total_timesteps`: it is sized to the
    # steps this machine makes in `minutes` (measured on a throwaway model first), as a user sizing a
    # run would; the clock, not that estimate, ends the run (an estimate taken under a load that later
    # lifts must not end it early), so `learn` gets a step count it never reaches and the schedule's
    # fraction is scaled to match.
    probe = quiet_dqn(venv, **kwargs)
    t0, calib = time.monotonic(), max(5.0, min(30.0, minutes * 6))
    probe.learn(total_timesteps=NEVER, callback=_deadline(t0 + calib))
    total = max(1_000, int(probe.num_timesteps / (time.monotonic() - t0) * minutes * 60))
    del probe
    model = quiet_dqn(venv, exploration_fraction=SB3_EXPLORATION_FRACTION * total / NEVER, **kwargs)
    curve: list[dict[str, Any]] = []

    class Clock(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.trained = 0.0  # seconds of training so far
            self.mark = time.monotonic()
            self.next_check = eval_every * 60

        def _on_step(self) -> bool:
            now = time.monotonic()
            self.trained += now - self.mark
            self.mark = now
            if self.trained >= self.next_check or self.trained >= minutes * 60:
                r = _evaluate_q(model.q_net, check_episodes, seed=12_345)
                curve.append({"minutes": round(self.trained / 60, 2), "steps": int(self.num_timesteps),
                              "untouched_share": r.untouched_share,
                              "untouched_share_worst_level": r.untouched_share_worst_level,
                              "per_level": _shares(r)})
                self.next_check += eval_every * 60
                self.mark = time.monotonic()  # the check's time is not training time
            return self.trained < minutes * 60

    model.learn(total_timesteps=NEVER, callback=Clock())
    final = _evaluate_q(model.q_net, final_episodes, seed=777)
    return {"curve": curve, "minutes_to_target": first_at_target(curve), "steps": int(model.num_timesteps),
            "total_timesteps_planned": total,
            "final_per_level": _shares(final), "final_worst_level": final.untouched_share_worst_level}


def race_ours(minutes: float, eval_every: float, final_episodes: int, run_dir: Path, fused: bool = False,
              game: str = "dodge", sets: list[str] | None = None, device: str = "cpu") -> dict[str, Any]:
    """One `train` run (``fused``: `train --fused`) on the ``game``'s shipped config, on ``device``."""
    from melee_agent.config import load_config  # noqa: PLC0415
    from melee_agent.run.training import TrainingRun  # noqa: PLC0415

    g = game_of(game)
    final = [f"train.final_games_per_level={final_episodes}", "train.final_games_level_9=0"] if g.whole_games \
        else [f"train.eval_episodes={final_episodes}"]
    cfg = load_config(g.config, [f"train.eval_every_minutes={eval_every}", *final, f"train.fused={str(fused).lower()}",
                               *(sets or [])])
    report = TrainingRun(cfg, run_dir=run_dir, minutes=minutes, device=device, progress=False).run()  # eval.json's report
    key = g.worst_level_key
    curve = [{"minutes": p.minutes, "steps": p.train_step, "untouched_share": e.untouched_share,
              "untouched_share_worst_level": e.untouched_share_worst_level, "per_level": _shares(e),
              **({"win_rate": e.win_rate, "win_rate_worst_level": e.win_rate_worst_level} if g.whole_games else {})}
             for p, e in ((p, p.result) for p in report.curve)]
    r, t = report.model.result, report.training
    if t is None:  # a run of this version always writes it
        raise RuntimeError(f"{run_dir / 'eval.json'}: no training figures")
    return {"curve": curve, "minutes_to_target": first_at_target(curve[1:], key),  # the first point: the untrained net
            "final_per_level": g.per_level(r), "final_worst_level": g.worst_level(r),
            "run_dir": str(run_dir), "rows": t.rows, "train_steps": t.train_steps,
            "rows_per_s": t.rows_per_s, "train_steps_per_s": t.train_steps_per_s}


def run(args: argparse.Namespace) -> dict[str, Any]:
    minutes, runs, eval_every, final = args.minutes, args.runs, args.eval_every, args.final_episodes
    if args.quick:
        minutes, runs, eval_every, final = 0.3, 1, 0.15, 2
    torch.set_num_threads(max(1, torch.get_num_threads()))
    if args.fused:
        return _race_fused(args, minutes, runs, eval_every, final)
    if args.set or game_of(args.game) is not DODGE:  # the SB3 race plays the default dodging config as shipped
        raise ValueError("--set and --game apply to the --fused race only")
    sides = [args.only] if args.only else ["melee-agent", "sb3"]
    results: dict[str, Any] = {"minutes": minutes, "runs": runs, "eval_every_minutes": eval_every,
                               "target": TARGET, "threads": torch.get_num_threads(), "torch": torch.__version__}
    # melee-agent's runs keep their folders (models, TensorBoard); SB3's side writes nothing.
    root = Path(args.run_dir) if args.run_dir else None
    if root is None and "melee-agent" in sides:
        root = Path(tempfile.mkdtemp(prefix="bench-learn-"))
    for side in sides:
        out = []
        budget = minutes
        if side == "sb3":
            budget = args.sb3_minutes or (minutes if args.quick else sb3_minutes(results.get("melee-agent"), minutes))
            results["sb3_minutes"] = budget
        for i in range(runs):
            print(f"bench learn: {side} run {i + 1} of {runs} ({budget:g} minutes) ...", flush=True)
            if side == "sb3":
                out.append(race_sb3(budget, eval_every, args.sb3_envs, final, seed=i))
            else:
                assert root is not None  # made above whenever this side runs
                out.append(race_ours(minutes, eval_every, final, root / f"melee-agent-{i}"))
        results[side] = out
    if len(sides) == 2:
        results["speedup"] = speedup(results["melee-agent"], results["sb3"], results["sb3_minutes"])
    _print(results, sides)
    return results


def _race_fused(args: argparse.Namespace, minutes: float, runs: int, eval_every: float, final: int) -> dict[str, Any]:
    """`train` against `train --fused`: the same config, minutes and checks, run after run, on ``--device``."""
    from melee_agent.run.training import device_name  # noqa: PLC0415
    results: dict[str, Any] = {"minutes": minutes, "runs": runs, "eval_every_minutes": eval_every, "target": TARGET,
                               "game": args.game, "sets": args.set, "torch": torch.__version__,
                               "device": device_name(args.device)}
    root = Path(args.run_dir) if args.run_dir else Path(tempfile.mkdtemp(prefix="bench-learn-fused-"))
    for side in ("melee-agent", "fused"):
        out = []
        for i in range(runs):
            print(f"bench learn --fused: {side} run {i + 1} of {runs} ({minutes:g} minutes, {args.game}) ...", flush=True)
            out.append(race_ours(minutes, eval_every, final, root / f"{side}-{args.game}-{i}", fused=side == "fused",
                                 game=args.game, sets=args.set, device=args.device))
        results[side] = out
    results["speedup"] = speedup(results["fused"], results["melee-agent"], minutes)
    what = game_of(args.game).headline_word
    print(f"\nbench learn --fused ({args.game}): minutes until a periodic check reached {TARGET:.0%} {what} at every "
          f"level 1-9 ({minutes} minutes per run)")
    print(f"  {'side':<12} {'run':>3} {'to target':>10} {'final worst':>11} {'rows/s':>9} {'steps/s':>8}  checks (min: worst level)")
    for side in ("melee-agent", "fused"):
        for i, run in enumerate(results[side]):
            t = run["minutes_to_target"]
            key = game_of(args.game).worst_level_key
            checks = "; ".join(f"{p['minutes']:.1f}: {p.get(key) or 0:.0%}" for p in run["curve"])
            print(f"  {side:<12} {i + 1:>3} {'never' if t is None else f'{t:.1f} min':>10} "
                  f"{run['final_worst_level'] or 0:>11.0%} {run['rows_per_s']:>9,.0f} {run['train_steps_per_s']:>8,.1f}  {checks}")
    s = results["speedup"]
    if s["ratio"] is not None:
        print(f"  train --fused reached the target {'at least ' if s['lower_bound'] else ''}{s['ratio']:.1f}x sooner "
              "(its slowest run against train's fastest)")
    return results


def _print(r: dict[str, Any], sides: list[str]) -> None:
    print(f"\nbench learn: minutes until a periodic check reached {TARGET:.0%} untouched at every level 1-9 "
          f"({r['minutes']} minutes per run, {r['threads']} threads)")
    for side in sides:
        for i, run in enumerate(r[side]):
            t = run["minutes_to_target"]
            checks = "; ".join(f"{p['minutes']:.1f}: {p['untouched_share']:.0%}/{p['untouched_share_worst_level']:.0%}"
                               for p in run["curve"])
            print(f"  {side} run {i + 1}: {'never' if t is None else f'{t:.1f} min'}   final worst level "
                  f"{run['final_worst_level']:.0%}   checks (min: mix/worst) {checks}")
    if len(sides) == 2:
        ours = [x["minutes_to_target"] for x in r["melee-agent"]]
        theirs = [x["minutes_to_target"] for x in r["sb3"]]
        print(f"  melee-agent {ours} vs SB3 {theirs} minutes (None: not within {r['minutes']} minutes for ours, "
              f"{r['sb3_minutes']:g} for SB3)")
        s = r["speedup"]
        if s["ratio"] is not None:
            print(f"  melee-agent reached the target {'at least ' if s['lower_bound'] else ''}{s['ratio']:.1f}x sooner "
                  "(its slowest run against SB3's fastest)")
