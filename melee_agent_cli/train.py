"""`melee-agent train`: a manager and local arena workers on this machine, for a time budget.

Starts the manager (its own process: it owns the device replay and the trainer), waits until it
is ready, starts ``train.workers`` worker processes, shows a progress line, evaluates the newest
model against CPU level ``env.cpu_level`` every ``train.eval_every_minutes`` (``eval/`` in
TensorBoard), and at the end stops everything cleanly and leaves in the run folder:
``model.safetensors``, ``eval.json`` (final evaluation, with noop and random beside it),
``learning_curve.png``, ``checkpoints/``, the TensorBoard run and the logs.
"""

from __future__ import annotations

import argparse
import io
import os
import time
from pathlib import Path
from typing import Any

from melee_agent.config import Config, atomic_write_bytes, atomic_write_json
from melee_agent_cli.common import add_common, config_from_args
from melee_agent_cli.manager_process import ManagerProcess


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="train on this machine: manager + local arena workers, then evaluate")
    add_common(p)
    p.add_argument("--minutes", type=float, default=None, help="training time budget (default: config, 15)")
    p.add_argument("--workers", type=int, default=None, help="local worker processes (default: config)")
    p.add_argument("--port", type=int, default=0, help="manager port on 127.0.0.1 (default: a free one)")
    p.add_argument("--no-progress", action="store_true", help="no progress line")
    p.set_defaults(func=run)


def default_run_dir(cfg: Config) -> Path:
    return Path("runs") / f"{cfg.name}-{time.strftime('%Y%m%d-%H%M%S')}"


def _sets(args: argparse.Namespace) -> list[str]:
    out = ["--config", args.config, "--device", args.device]
    for s in args.set:
        out += ["--set", s]
    return out


class Evaluations:
    """Periodic evaluations of the published model: TensorBoard ``eval/`` tags and a curve."""

    def __init__(self, cfg: Config, run_dir: Path, device: str):
        from torch.utils.tensorboard import SummaryWriter  # noqa: PLC0415

        self.cfg, self.run_dir, self.device = cfg, run_dir, device
        self.writer = SummaryWriter(str(run_dir), filename_suffix=".eval")
        self.points: list[dict[str, Any]] = []

    def run(self, model_bytes: bytes, episodes: int, minutes: float, step: int, policy: str = "model",
            seed: int = 12_345, record: bool = True) -> dict[str, Any]:
        import torch  # noqa: PLC0415

        from melee_agent.envs import make_env  # noqa: PLC0415
        from melee_agent.evaluate import evaluate  # noqa: PLC0415
        from melee_agent.model import model_from_bytes  # noqa: PLC0415
        from melee_agent.policies import make_policy  # noqa: PLC0415

        cfg = self.cfg
        env = make_env(cfg, num_envs=min(episodes, 200), device=self.device, seed=seed)
        if policy == "model":
            model, meta = model_from_bytes(model_bytes, action_set=cfg.env.action_set, device=self.device)

            @torch.inference_mode()
            def pi(obs: torch.Tensor) -> torch.Tensor:
                return model(obs).argmax(1)
        else:
            pi, meta = make_policy(policy, cfg.env.action_set, self.device), {}
        r = evaluate(env, pi, episodes, progress=False)
        r = {"policy": policy, "cpu_level": cfg.env.cpu_level, **r}
        if policy == "model":
            r.update(model_version=int(meta["version"]), train_step=int(meta["train_step"]), minutes=round(minutes, 2))
        if policy == "model" and record:
            for k in ("untouched_share", "mean_seconds_to_first_hit", "damage_taken", "stocks_lost"):
                self.writer.add_scalar(f"eval/{k}", r[k], step)
            self.writer.flush()
            self.points.append(r)
        return r

    def plot(self, path: Path, baselines: dict[str, float]) -> None:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415

        fig, ax = plt.subplots(figsize=(6.5, 3.8), dpi=120)
        xs = [p["minutes"] for p in self.points]
        ax.plot(xs, [100 * p["untouched_share"] for p in self.points], "o-", color="#3b7dd8",
                label="Dueling DQN (greedy)")
        for i, (name, share) in enumerate(baselines.items()):
            ax.axhline(100 * share, ls="--", lw=1, color=("#999999", "#d86b3b", "#4caf50")[i % 3], label=name)
        ax.axhline(74.6, ls=":", lw=1, color="black", label="paper, real Melee (74.6%)")
        ax.set_xlabel("training time (minutes)")
        ax.set_ylabel("untouched for a minute (%)")
        ax.set_ylim(-2, 102)
        ax.set_title(f"learning curve vs {self.cfg.env.env} CPU level {self.cfg.env.cpu_level}", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="center right")
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
        atomic_write_bytes(path, buf.getvalue())

    def close(self) -> None:
        self.writer.close()


def run(args: argparse.Namespace) -> int:
    from workers.client import ManagerClient  # noqa: PLC0415
    from workers.launch_local import LocalFleet  # noqa: PLC0415

    cfg = config_from_args(args)
    minutes = cfg.train.minutes if args.minutes is None else args.minutes
    n_workers = cfg.train.workers if args.workers is None else args.workers
    if minutes <= 0 or n_workers < 1:
        raise ValueError(f"--minutes must be positive and --workers at least 1 (got {minutes}, {n_workers})")
    if cfg.env.env != "arena":
        raise ValueError("train runs the embedded arena; for Dolphin start `melee-agent manager` and workers")
    run_dir = Path(args.run_dir) if args.run_dir else default_run_dir(cfg)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "logs").mkdir(exist_ok=True)
    token = os.environ.get("MELEE_AGENT_TOKEN")
    manager = ManagerProcess(_sets(args), run_dir, run_dir / "logs" / "manager.log", port=args.port)
    url = manager.url
    print(f"run folder: {run_dir}   watch: tensorboard --logdir {run_dir.parent}")
    client = ManagerClient(url, token=token)
    fleet = LocalFleet(url, n_workers, _sets(args), log_dir=run_dir / "logs")
    evals = Evaluations(cfg, run_dir, args.device)
    try:
        manager.start()
        # The untrained network's score starts the learning curve (it is hit within a second).
        data, _, _ = client.model(None)
        evals.run(data, cfg.train.progress_eval_episodes, 0.0, 0)
        fleet.start()
        t0 = time.monotonic()
        end = t0 + minutes * 60
        next_eval = t0 + cfg.train.eval_every_minutes * 60
        last_eval = "-"
        best: tuple[dict[str, Any], bytes] | None = None
        bar = None
        if not args.no_progress:
            from tqdm import tqdm  # noqa: PLC0415

            bar = tqdm(total=int(minutes * 60), unit="s", desc="train", dynamic_ncols=True,
                       bar_format="{desc} {bar} {elapsed}<{remaining} {postfix}")
        while time.monotonic() < end:
            time.sleep(min(2.0, max(0.0, end - time.monotonic())))
            manager.check()
            fleet.poll()
            now = time.monotonic()
            if now >= next_eval and now + 30 < end:
                data, _, _ = client.model(None)
                r = evals.run(data, cfg.train.progress_eval_episodes, (now - t0) / 60, _status_steps(client))
                best = _better(best, r, data)
                last_eval = f"{r['untouched_share']:.0%} (v{r['model_version']})"
                if args.no_progress:
                    print(f"[{(now - t0) / 60:4.1f} min] model v{r['model_version']} (step {r['train_step']:,}): "
                          f"untouched {r['untouched_share']:.0%} of {r['episodes']} episodes vs level "
                          f"{cfg.env.cpu_level}", flush=True)
                next_eval = now + cfg.train.eval_every_minutes * 60
            if bar is not None:
                st = client.status()
                bar.n = int(min(now - t0, minutes * 60))
                bar.set_postfix_str(f"steps {st.get('train_steps', 0):,}  rows {st.get('rows_accepted', 0):,}  "
                                    f"model v{st.get('model_version', 0)}  eval {last_eval}", refresh=True)
        if bar is not None:
            bar.close()
        fleet.stop()
        data, _, _ = client.model(None)
        atomic_write_bytes(run_dir / "model-last.safetensors", data)
        status = client.status()
        print(f"training done: {status.get('train_steps', 0):,} steps, {status.get('rows_accepted', 0):,} rows, "
              f"model v{status.get('model_version', 0)}")
    finally:
        fleet.stop()
        manager.stop()
    minutes_done = minutes
    # Like SB3's EvalCallback: the model kept is the best one the periodic evaluations saw (the
    # last one is scored the same way first); DQN's greedy policy can swing between snapshots.
    last = evals.run(data, cfg.train.progress_eval_episodes, minutes_done, int(status.get("train_steps", 0)))
    chosen, chosen_data = last, data
    if cfg.train.keep_best:
        chosen, chosen_data = _better(best, last, data)
    atomic_write_bytes(run_dir / "model.safetensors", chosen_data)
    print(f"kept model v{chosen['model_version']} ({chosen['untouched_share']:.0%} in its {chosen['episodes']}-episode "
          f"check; the last, v{last['model_version']}, had {last['untouched_share']:.0%}); "
          f"evaluating it over {cfg.train.eval_episodes} new episodes...")
    r = evals.run(chosen_data, cfg.train.eval_episodes, minutes_done, int(status.get("train_steps", 0)), seed=777,
                  record=False)
    baselines = {p: evals.run(b"", cfg.train.eval_episodes, minutes_done, 0, policy=p) for p in ("noop", "random")}
    evals.close()
    final = {**r, "baselines": baselines, "run_dir": str(run_dir), "curve": evals.points,
             "kept": "last" if chosen is last else "best", "last_model_check": last}
    atomic_write_json(run_dir / "eval.json", final)
    evals.plot(run_dir / "learning_curve.png", {f"{k} ({v['untouched_share']:.0%})": v["untouched_share"]
                                                 for k, v in baselines.items()})
    print(f"vs arena CPU level {cfg.env.cpu_level}, {cfg.train.eval_episodes} one-minute episodes each:")
    for name, row in (("model", r), *baselines.items()):
        print(f"  {name:6s} untouched {row['untouched_share']:6.1%}   mean seconds to first hit "
              f"{row['mean_seconds_to_first_hit']:5.1f}   damage taken {row['damage_taken']:5.1f}")
    print(f"model: {run_dir / 'model.safetensors'}   results: {run_dir / 'eval.json'}   "
          f"curve: {run_dir / 'learning_curve.png'}")
    if args.json:
        atomic_write_json(args.json, final)
    return 0


def _better(best: tuple[dict[str, Any], bytes] | None, r: dict[str, Any], data: bytes) -> tuple[dict[str, Any], bytes]:
    """The better of two evaluated models: more untouched episodes, then a later first hit."""
    if best is None:
        return r, data
    key = lambda x: (x["untouched_share"], x["mean_seconds_to_first_hit"])  # noqa: E731
    return (r, data) if key(r) >= key(best[0]) else best


def _status_steps(client: Any) -> int:
    try:
        return int(client.status().get("train_steps", 0))
    except Exception:  # noqa: BLE001
        return 0
