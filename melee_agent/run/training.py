"""A whole training run on one machine, as an object a script can drive: the embedded default.

:class:`TrainingRun` starts a manager (its own process: it owns the device replay and the
trainer), waits until it is ready, starts local worker processes, evaluates the newest model
every ``train.eval_every_minutes`` against the levels it trains on (``env.cpu_levels``, else
``env.cpu_level``; the same number of episodes at each; ``eval/`` in TensorBoard, with the worst
level's share), keeps the best periodically evaluated model (``train.keep_best``: the best worst
level, then the best mix), scores it over ``train.eval_episodes`` fresh episodes at every CPU
level 1-9 with noop and random beside it, and leaves in the run
folder ``model.safetensors``, ``model-last.safetensors``, ``eval.json``, ``learning_curve.png``,
``checkpoints/``, ``config.toml`` and ``config.json``, the TensorBoard run and the logs.

Fights (``env.game = "fight"``, ``--config fight``): the periodic checks play whole games and report
the win rate (``eval/win_rate``, ``eval/win_rate_worst_level``, ``eval/win_rate_level_N``); the kept
model is the one with the best worst level's win rate, then the best win rate over the mix; the final
report plays ``train.final_games_per_level`` games at each level 1-9 plus ``train.final_games_level_9``
more at level 9 (``level_9`` in eval.json), with the baselines noop, random, dodger and fighter beside
it at each level (fighter is scripted for the ``basic`` and ``fight`` action sets; with another set
it plays ``basic`` and the report says so), and the learning curve plots the win rate.

The child processes read the resolved config from ``RUN_DIR/config.toml``, so a config built
in Python trains exactly as written.

This is the one module of the library that composes the roles (``melee_agent.manager`` and
``melee_agent.workers``) into a run; the core modules never import them.

Example::

    from melee_agent.config import load_config
    from melee_agent.run.training import TrainingRun
    cfg = load_config("small", ["learner.lr=5e-4"])
    report = TrainingRun(cfg, minutes=1).run()  # eval.json's report (melee_agent.report.run_report.RunReport)
    print(report.model.result.untouched_share, report.run_dir)
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from melee_agent.config import Config, config_to_toml, default_run_dir, env_levels, env_stages
from melee_agent.games import game_of
from melee_agent.games.base import CHECK_SEED, REPORT_LEVELS
from melee_agent.io.files import atomic_write_bytes, atomic_write_json
from melee_agent.report.progress import on_terminal
from melee_agent.report.run_report import ModelCheck, RunReport, TrainingFigures
from melee_agent.run.fused import fused_envs
from melee_agent.run.schedule import CountedBudget, ProgressLine, WallBudget, check_due

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    from tqdm import tqdm

    from melee_agent.league.trainer import LeagueTrainer
    from melee_agent.report.evaluate import EvalResult
    from melee_agent.run.fused import FusedTrainer

__all__ = ["REPORT_LEVELS", "Backend", "Evaluations", "FinalReportRun", "ModelCheck", "PeriodicChecks", "RunReport",
           "TrainingRun", "better", "check_due", "level_table", "play_check", "scripted_action_set"]


class Evaluations:
    """Evaluations of published models: TensorBoard ``eval/`` tags and the learning curve's points.

    The model's checks that make the curve (``record``) play on ``check_device`` (default ``device``);
    the final report and the scripted baselines on ``device``.
    """

    def __init__(self, cfg: Config, run_dir: Path, device: str, check_device: str | None = None):
        from torch.utils.tensorboard import SummaryWriter  # noqa: PLC0415

        self.cfg, self.run_dir, self.device, self.check_device = cfg, run_dir, device, check_device or device
        self.writer = SummaryWriter(str(run_dir), filename_suffix=".eval")
        self.points: list[ModelCheck] = []
        self._pool: ProcessPoolExecutor | None = None  # the check process (submit), started at the first check it plays

    def run(self, model_bytes: bytes, episodes: int, minutes: float, step: int, policy: str = "model",
            seed: int = CHECK_SEED, record: bool = True, levels: tuple[int, ...] | None = None,
            action_set: str | None = None, bar: tqdm | None = None) -> ModelCheck:
        """Evaluate the model in ``model_bytes`` (or a scripted ``policy``, on ``action_set`` where given)
        against ``levels`` (default: the run's), ``episodes`` spread evenly over them; ``record`` adds it
        to the curve; ``bar``, where given, counts the episodes."""
        is_model = policy == "model"
        device = self.check_device if record and is_model else self.device
        res, version, train_step = play_check(self.cfg, model_bytes, episodes, device, policy, seed, levels, action_set,
                                              bar)
        return self._checked(res, version, train_step, minutes, step, policy, levels, action_set, record)

    def submit(self, model_bytes: bytes, episodes: int, minutes: float, step: int) -> PendingCheck:
        """A periodic check of ``model_bytes`` played in a process of its own while training goes on (the
        fused loop: its process trains, and a check in it would pause the learner); :meth:`collect` it."""
        if self._pool is None:
            import multiprocessing  # noqa: PLC0415
            from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415

            # spawn: a fork would copy this process's CUDA context and threads.
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_check_process_init)
        future = self._pool.submit(play_check, self.cfg, model_bytes, episodes, self.check_device)
        return PendingCheck(future, time.monotonic(), minutes, step, model_bytes)

    def collect(self, pending: PendingCheck) -> ModelCheck:
        """The finished check's :class:`ModelCheck`, recorded at the minute and step it was submitted."""
        res, version, train_step = pending.future.result()
        return self._checked(res, version, train_step, pending.minutes, pending.step, "model", None, None, True)

    def _checked(self, res: EvalResult, version: int | None, train_step: int | None, minutes: float, step: int,
                 policy: str, levels: tuple[int, ...] | None, action_set: str | None, record: bool) -> ModelCheck:
        cfg = self.cfg
        levels = levels or env_levels(cfg)
        is_model = policy == "model"
        r = ModelCheck(policy=policy, cpu_level=levels[0] if len(levels) == 1 else list(levels), result=res,
                       action_set=action_set,
                       model_version=version if is_model else None, train_step=train_step if is_model else None,
                       minutes=round(minutes, 2) if is_model else None)
        if is_model and record:
            self._record(r, step)
        return r

    def _record(self, r: ModelCheck, step: int) -> None:
        res = r.result
        scalars = {"untouched_share": res.untouched_share,
                   "untouched_share_worst_level": res.untouched_share_worst_level,
                   "mean_seconds_to_first_hit": res.mean_seconds_to_first_hit, "damage_taken": res.damage_taken,
                   "stocks_lost": res.stocks_lost}
        for k, x in scalars.items():
            self.writer.add_scalar(f"eval/{k}", x, step)
        for lv, v in (res.per_level or {}).items():
            self.writer.add_scalar(f"eval/untouched_share_level_{lv}", v.untouched_share, step)
        if res.fights is not None:  # fights: whole games
            g = res.fights
            for k, x in {"win_rate": g.win_rate, "win_rate_worst_level": res.win_rate_worst_level,
                         "stocks_taken_per_game": g.stocks_taken_per_game,
                         "stocks_lost_per_game": g.stocks_lost_per_game,
                         "damage_dealt_per_game": g.damage_dealt_per_game}.items():
                self.writer.add_scalar(f"eval/{k}", x, step)
            for lv, v in (res.per_level or {}).items():
                self.writer.add_scalar(f"eval/win_rate_level_{lv}", v.win_rate or 0.0, step)
        self.writer.flush()
        self.points.append(r)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        self.writer.close()


@dataclass(frozen=True)
class PendingCheck:
    """A periodic check playing in the check process (:meth:`Evaluations.submit`)."""

    future: Future[tuple[EvalResult, int | None, int | None]]
    started: float  # monotonic seconds when it was submitted
    minutes: float  # training minutes of the model it checks
    step: int  # the TensorBoard step it is recorded at
    model_bytes: bytes


def _check_process_init() -> None:
    import torch  # noqa: PLC0415

    # One thread, as `train` plays its checks beside the learner: the cores belong to the training process.
    torch.set_num_threads(1)


def play_check(cfg: Config, model_bytes: bytes, episodes: int, device: str, policy: str = "model",
               seed: int = CHECK_SEED, levels: tuple[int, ...] | None = None,
               action_set: str | None = None, bar: tqdm | None = None) -> tuple[EvalResult, int | None, int | None]:
    """Play one evaluation: ``(result with its worst levels, model version, model train step)`` (the last two
    None for a scripted ``policy``); ``bar``, where given, counts its episodes. A top-level function, so a check
    process can run it."""
    import torch  # noqa: PLC0415

    from melee_agent.envs.make import eval_config, make_eval_env  # noqa: PLC0415
    from melee_agent.report.evaluate import evaluate  # noqa: PLC0415
    from melee_agent.rl.model import model_from_bytes  # noqa: PLC0415
    from melee_agent.rl.policies import make_policy  # noqa: PLC0415

    if action_set is not None and action_set != cfg.env.action_set:
        cfg = dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, action_set=action_set))
    levels = levels or env_levels(cfg)
    cfg = eval_config(cfg)
    env, episodes = make_eval_env(cfg, episodes, levels, device=device, seed=seed, max_envs=cfg.train.eval_envs)
    if policy == "model":
        model, meta = model_from_bytes(model_bytes, action_set=cfg.env.action_set, state_layout=cfg.env.state_layout,
                                       device=device)

        @torch.inference_mode()
        def pi(obs: torch.Tensor) -> torch.Tensor:
            return model(obs).argmax(1)
    else:
        pi, meta = make_policy(policy, cfg.env.action_set, device), {}
    res = evaluate(env, pi, episodes, progress=False, bar=bar).with_worst_levels()
    if policy != "model":
        return res, None, None
    return res, int(meta["version"]), int(meta["train_step"])


def scripted_action_set(policy: str, action_set: str) -> str | None:
    """The action set a scripted baseline plays instead of the run's ``action_set`` (``None``: the run's)."""
    from melee_agent.envs.actions import base_name  # noqa: PLC0415
    from melee_agent.rl.policies import FIGHTER_SETS  # noqa: PLC0415

    if policy == "fighter" and base_name(action_set) not in FIGHTER_SETS:
        return "basic"
    return None


def better(best: tuple[ModelCheck, bytes] | None, r: ModelCheck, data: bytes) -> tuple[ModelCheck, bytes]:
    """The better of two evaluated models: a better worst level, then more untouched episodes over the
    mix, then a later first hit (ties: the newer). Fights: the worst level's win rate, then the win rate,
    then stocks taken minus stocks lost per game."""
    if best is None:
        return r, data

    def key(x: ModelCheck) -> tuple[float, float, float]:
        e = x.result
        if e.fights is not None and fights:
            # Fights: the worst level's win rate, then the win rate over the mix, then the stock difference.
            return (e.win_rate_worst_level if e.win_rate_worst_level is not None else e.fights.win_rate,
                    e.fights.win_rate, e.fights.stocks_taken_per_game - e.fights.stocks_lost_per_game)
        worst = e.untouched_share_worst_level
        return (worst if worst is not None else e.untouched_share, e.untouched_share, e.mean_seconds_to_first_hit)

    fights = r.result.fights is not None and best[0].result.fights is not None
    return (r, data) if key(r) >= key(best[0]) else best


class PeriodicChecks:
    """A run's periodic checks and the best model they found (``train.keep_best``).

    A check of the manager's path plays here and now (its learner trains in its own process meanwhile); a fused
    backend trains in this process, so its checks play in the check process while training goes on
    (:meth:`Evaluations.submit`) and are recorded at the minute they were asked for. ``seconds`` is how long the
    last one took; ``last`` the progress line's words for it.
    """

    def __init__(self, cfg: Config, evals: Evaluations, backend: Backend, log: Callable[[str], None] | None):
        self.cfg, self.evals, self.backend, self.log = cfg, evals, backend, log
        self.best: tuple[ModelCheck, bytes] | None = None
        self.pending: PendingCheck | None = None
        self.seconds = 0.0
        self.last = "-"

    def ask(self, minute: float) -> None:
        """Check the backend's newest model (one still playing is waited for first: at most one plays at a time)."""
        self.collect(wait=True)
        data, step, episodes = self.backend.model_bytes(), _progress_steps(self.backend), self.cfg.train.progress_eval_episodes
        if self.backend.trains_here:
            self.pending = self.evals.submit(data, episodes, minute, step)
            return
        t0 = time.monotonic()
        r = self.evals.run(data, episodes, minute, step)
        self.seconds = time.monotonic() - t0
        self._checked(r, data, minute)

    def collect(self, wait: bool = False) -> None:
        """Record the check playing in the check process once it has finished (``wait``: wait for it)."""
        p = self.pending
        if p is None or not (wait or p.future.done()):
            return
        p.future.result()
        self.seconds = time.monotonic() - p.started
        self.pending = None
        self._checked(self.evals.collect(p), p.model_bytes, p.minutes)

    def _checked(self, r: ModelCheck, data: bytes, minute: float) -> None:
        self.best = better(self.best, r, data)
        e, g = r.result, r.result.fights
        self.last = f"{e.untouched_share:.0%}, worst level {_pct(e.untouched_share_worst_level)} (v{r.model_version})"
        if g is not None:
            self.last = f"won {g.win_rate:.0%}, worst level {_pct(e.win_rate_worst_level)} (v{r.model_version})"
        if self.log is not None:
            self.log(f"[{minute:4.1f} min] model v{r.model_version} (step {r.train_step:,}): {_check_text(self.cfg, r)}; "
                     f"check {self.seconds:.0f} s")


def _check_text(cfg: Config, r: ModelCheck) -> str:
    """A periodic check's result, as the log says it."""
    e, g = r.result, r.result.fights
    if g is not None:
        return (f"won {g.win_rate:.0%} of {g.games} games vs {_levels_text(env_levels(cfg))} (stocks taken "
                f"{g.stocks_taken_per_game:.2f}, lost {g.stocks_lost_per_game:.2f} per game){_per_level_text(e, 'win_rate')}")
    return f"untouched {e.untouched_share:.0%} of {e.episodes} episodes vs {_levels_text(env_levels(cfg))}{_per_level_text(e)}"


class Backend(Protocol):
    """What trains during a run (:class:`FleetBackend`, :class:`FusedBackend`). ``trains_here``: training runs in
    this process (its checks then play in the check process)."""

    trains_here: bool

    def start(self) -> None: ...
    def begin(self) -> None: ...
    def work(self, seconds: float, chunks: int | None = None) -> None: ...
    def model_bytes(self) -> bytes: ...
    def progress(self) -> tuple[int, int, int]: ...
    def end_training(self) -> None: ...
    def close(self) -> None: ...


class FleetBackend:
    """`train`'s default: a manager process (the replay and the learner) and local worker processes,
    which play and upload over loopback HTTP."""

    trains_here = False

    def __init__(self, run: TrainingRun):
        from melee_agent.manager.spawn import ManagerProcess  # noqa: PLC0415
        from melee_agent.workers.client import ManagerClient  # noqa: PLC0415
        from melee_agent.workers.launch_local import LocalFleet  # noqa: PLC0415

        run_dir = run.run_dir
        flags = run.child_flags()
        self.manager = ManagerProcess(flags + (["--resume"] if run.resume else []), run_dir,
                                      run_dir / "logs" / "manager.log", port=run.port)
        self.client = ManagerClient(self.manager.url, token=run.token)
        self.fleet = LocalFleet(self.manager.url, run.workers, flags, log_dir=run_dir / "logs",
                                spool_root=run_dir / "spool")
        self.threads = torch_threads()

    def start(self) -> None:
        self.manager.start()
        # While the learner and the workers run, the periodic checks play on one thread: they share
        # the cores, and a compiled arena's parallel loops wait on threads that keep being descheduled.
        # Measured on this 2-core machine beside a busy process: the same 8 fight games took 18 s on
        # one thread and 78-203 s on two.
        set_torch_threads(1)

    def begin(self) -> None:
        self.fleet.start()

    def model_bytes(self) -> bytes:
        data, _, _ = self.client.model(None)
        return data

    def progress(self) -> tuple[int, int, int]:
        st = self.client.status()
        return st.train_steps, st.rows_accepted, st.model_version

    def work(self, seconds: float, chunks: int | None = None) -> None:
        if chunks is not None:
            raise ValueError("train.chunks counts the fused loop's chunks: it needs train.fused (--fused)")
        time.sleep(max(0.0, seconds))
        self.manager.check()
        self.fleet.poll()

    def end_training(self) -> None:
        self.fleet.stop()

    def close(self) -> None:
        self.fleet.stop()
        self.manager.stop()
        set_torch_threads(self.threads)  # the final report has the machine to itself


class FusedBackend:
    """``train.fused``: arena, acting, rows, replay and learner in this process (:mod:`melee_agent.run.fused`), or
    with ``league.enabled`` the league's loop around them (:mod:`melee_agent.league.trainer`)."""

    trains_here = True

    def __init__(self, run: TrainingRun):
        self.run = run
        self.fused: FusedTrainer | LeagueTrainer | None = None
        self.league: LeagueTrainer | None = None  # the same object as ``fused`` in a league run

    def start(self) -> None:
        from melee_agent.run.fused import FusedTrainer  # noqa: PLC0415

        run = self.run
        run.child_flags()  # config.toml beside the run, as `train` leaves it
        if run.cfg.league.enabled:  # configs/league.toml: the main against its pool (melee_agent/league/trainer.py)
            from melee_agent.league.trainer import LeagueTrainer  # noqa: PLC0415

            self.fused = self.league = LeagueTrainer(run.cfg, run.run_dir, run.device, resume=run.resume)
            return
        self.fused = FusedTrainer(run.cfg, run.run_dir, run.device, resume=run.resume)

    def _f(self) -> FusedTrainer | LeagueTrainer:
        if self.fused is None:
            raise RuntimeError("the fused trainer has not started")
        return self.fused

    def begin(self) -> None:
        pass

    def model_bytes(self) -> bytes:
        return self._f().model_bytes()

    def progress(self) -> tuple[int, int, int]:
        return self._f().progress()

    def work(self, seconds: float, chunks: int | None = None) -> None:
        self._f().work(seconds, chunks)

    def end_training(self) -> None:
        f = self._f()
        f.trainer.publisher.publish_next(f.learner)  # model-last is the network as training stopped

    def close(self) -> None:
        if self.fused is not None:
            self.fused.stop()
            if self.league is not None:  # a league: eval.json's "league"
                self.run.league = self.league.report()
            self.fused = self.league = None


def tensorboard_command() -> str:
    """The tensorboard installed beside this Python (``.venv/bin/tensorboard``): the venv's bin is often not on PATH."""
    exe = Path(sys.executable).parent / "tensorboard"
    try:
        return str(exe.relative_to(Path.cwd()))
    except ValueError:
        return str(exe)


def device_name(device: str) -> str:
    """``device`` and, on CUDA, the card's name (results carry the GPU they were measured on)."""
    import torch  # noqa: PLC0415

    d = torch.device(device)
    if d.type == "cuda" and torch.cuda.is_available():
        return f"{device} ({torch.cuda.get_device_name(d)})"
    return device


def torch_threads() -> int:
    import torch  # noqa: PLC0415

    return torch.get_num_threads()


def set_torch_threads(n: int) -> None:
    import torch  # noqa: PLC0415

    torch.set_num_threads(n)


class TrainingRun:
    """Trains for ``minutes`` (a manager and ``workers`` local arena workers, or with ``train.fused`` one
    fused process), then the final evaluation."""

    def __init__(self, cfg: Config, run_dir: str | Path | None = None, minutes: float | None = None,
                 workers: int | None = None, device: str = "cpu", port: int = 0, progress: bool = True,
                 token: str | None = None, log: Callable[[str], None] = print, resume: bool = False):
        self.cfg = cfg
        self.minutes = cfg.train.minutes if minutes is None else minutes
        self.workers = cfg.train.workers if workers is None else workers
        if self.minutes <= 0 or self.workers < 1:
            raise ValueError(f"minutes must be positive and workers at least 1 (got {self.minutes}, {self.workers})")
        if cfg.env.env != "arena":
            raise ValueError("train runs the embedded arena; for Dolphin start `melee-agent manager` and workers")
        if cfg.train.chunks and not cfg.train.fused:
            raise ValueError("train.chunks counts the fused loop's chunks: it needs train.fused (--fused)")
        if game_of(cfg.env.game).whole_games and (cfg.train.final_games_per_level < 1 or cfg.train.final_games_level_9 < 0):
            raise ValueError(f"train.final_games_per_level must be at least 1 and train.final_games_level_9 at least 0 "
                             f"(got {cfg.train.final_games_per_level}, {cfg.train.final_games_level_9})")
        self.run_dir = Path(run_dir) if run_dir else default_run_dir(cfg)
        if resume and not run_dir:
            raise ValueError("--resume needs --run-dir: the run folder whose checkpoints to continue from")
        from melee_agent.manager.resume import check_run_dir  # noqa: PLC0415

        check_run_dir(self.run_dir, resume)  # before any process starts: a clear word, not a child's log
        self.device, self.port, self.progress, self.log, self.resume = device, port, progress, log, resume
        self.token = token if token is not None else os.environ.get("MELEE_AGENT_TOKEN")
        self.training = TrainingFigures()  # eval.json's "training": steps, rows, rates, where they ran
        self.league: dict[str, Any] | None = None  # a league's report, eval.json's "league" (docs/league.md)

    def child_flags(self) -> list[str]:
        """Write the resolved config beside the run; the flags a child process reads it with."""
        config_file = self.run_dir / "config.toml"
        atomic_write_bytes(config_file, config_to_toml(self.cfg).encode())
        return ["--config", str(config_file), "--device", self.device]

    def run(self) -> RunReport:
        """Train, evaluate, write the run folder; returns the report ``eval.json`` holds."""
        cfg, run_dir = self.cfg, self.run_dir
        (run_dir / "logs").mkdir(parents=True, exist_ok=True)
        backend: Backend = FusedBackend(self) if cfg.train.fused else FleetBackend(self)
        how = "fused: arena, replay and learner in this process" if cfg.train.fused else \
            f"a manager and {self.workers} worker process(es)"
        self.log(f"run folder: {run_dir} ({how})   watch: {tensorboard_command()} --logdir {run_dir.parent}")
        evals = Evaluations(cfg, run_dir, self.device, cfg.train.check_device)
        try:
            backend.start()
            steps0, rows0, _ = backend.progress()  # a resumed run counts from its checkpoint
            t0 = time.monotonic()
            best = self._train(backend, evals)
            seconds = time.monotonic() - t0
            backend.end_training()
            data = backend.model_bytes()
            atomic_write_bytes(run_dir / "model-last.safetensors", data)
            steps, rows, version = backend.progress()
            fused = bool(cfg.train.fused)
            t = self.training = TrainingFigures(
                train_steps=steps, rows=rows, fused=fused, seconds=round(seconds, 1),
                rows_per_s=round((rows - rows0) / seconds, 1), train_steps_per_s=round((steps - steps0) / seconds, 1),
                device=device_name(self.device), envs=fused_envs(cfg) if fused else None,
                replay_ratio=cfg.fused.replay_ratio if fused else None, seed=cfg.train.seed,
                chunks=cfg.train.chunks or None)
            self.log(f"training done: {steps:,} steps, {rows:,} rows, model v{version} "
                     f"({t.rows_per_s:,.0f} rows/s into the replay, {t.train_steps_per_s:,.1f} train steps/s)")
        finally:
            backend.close()
        try:
            report = self._finish(evals, best, data, steps)
        finally:
            evals.close()
        if self.league is not None:  # a league run: its members' ratings in eval.json, and drawn
            from melee_agent.league.ladder import plot_league  # noqa: PLC0415

            report = dataclasses.replace(report, league=self.league)
            atomic_write_json(run_dir / "eval.json", report.to_json())
            plot_league(self.league, run_dir / "league.png", steps)
        return report

    def _train(self, backend: Backend, evals: Evaluations) -> tuple[ModelCheck, bytes] | None:
        """The training period: the backend trains, the budget says when a check comes, the progress line shows it."""
        show = self.progress and on_terminal()  # elsewhere (a pipe, a log file) each check is a line instead
        checks = PeriodicChecks(self.cfg, evals, backend, log=None if show else self.log)
        checks.ask(0.0)  # the untrained network begins the curve (a fleet's workers start after it: it is hit in a second)
        backend.begin()
        budget = self.budget()
        with ProgressLine(show, budget) as line:
            while not budget.over():
                budget.work(backend, checks.pending is not None)
                checks.collect()
                if budget.due(checks.seconds, checks.pending is not None):
                    checks.ask(budget.minutes())
                    budget.checked()
                elif (note := budget.skip_note(checks.seconds, checks.pending is not None)) and not show:
                    self.log(f"[{budget.minutes():4.1f} min] {note}")
                line.show(_progress(backend), checks.last)
            checks.collect(wait=True)  # asked for before the end: a point of the curve like any other
        return checks.best

    def budget(self) -> WallBudget | CountedBudget:
        """The training period's budget: ``train.chunks`` counted chunks where set (fused runs), else the minutes."""
        t = self.cfg.train
        return CountedBudget(t.chunks, t.eval_every_chunks) if t.chunks else WallBudget(self.minutes,
                                                                                        t.eval_every_minutes)

    def _finish(self, evals: Evaluations, best: tuple[ModelCheck, bytes] | None, data: bytes, steps: int) -> RunReport:
        """The game's final report (:meth:`melee_agent.games.base.Game.final_report`)."""
        final = FinalReportRun(self, evals, best, data, steps)
        try:
            return final.game.final_report(final)
        finally:
            final.close()


class FinalReportRun:
    """What a game's final report plays and writes with (:meth:`melee_agent.games.base.Game.final_report`, the
    :class:`melee_agent.games.base.FinalReportRun` protocol): the settings it reads, the kept model, plays at the
    report's levels, the baselines, ``eval.json``, the learning curve and the log.

    Every game it plays advances one progress bar, with the time left, over the whole report (on a terminal, with
    ``train``'s progress on): the report takes minutes after training's budget ends, silent otherwise.
    """

    def __init__(self, run: TrainingRun, evals: Evaluations, best: tuple[ModelCheck, bytes] | None, data: bytes,
                 steps: int):
        from melee_agent.envs.make import eval_episodes  # noqa: PLC0415
        from melee_agent.report.progress import progress_bar  # noqa: PLC0415

        self.cfg, self.run_dir, self.minutes, self._log, self.training = (run.cfg, run.run_dir, run.minutes, run.log,
                                                                           run.training)
        self.evals, self._best, self._data, self.steps = evals, best, data, steps
        self.game = game_of(run.cfg.env.game)
        t, e = run.cfg.train, run.cfg.env
        self.eval_episodes, self.final_games_per_level, self.final_games_level_9 = (
            t.eval_episodes, t.final_games_per_level, t.final_games_level_9)
        self.env_name, self.action_set, self.delay_frames = e.env, e.action_set, e.delay_frames
        self.levels_text = _levels_text(env_levels(run.cfg))
        self.baseline_runs = len(self.game.baselines) if t.final_baselines else 0
        self._keep_episodes = eval_episodes(t.progress_eval_episodes, env_levels(run.cfg))
        total = self._keep_episodes + self.game.final_episodes(self)
        self.bar = progress_bar(total, "final evaluation", unit="game" if self.game.whole_games else "ep",
                                enabled=run.progress)

    def log(self, line: str) -> None:
        from melee_agent.report.progress import printing_beside  # noqa: PLC0415

        with printing_beside(self.bar):
            self._log(line)

    def _stage(self, what: str) -> None:
        self.bar.set_description(f"final evaluation: {what}")

    def close(self) -> None:
        self.bar.close()

    def keep(self) -> tuple[ModelCheck, bytes, ModelCheck]:
        """``(kept model's check, its file, the last model's check)``: the last model is checked as the periodic
        checks are, then the better of it and the best checked one kept (``train.keep_best``) as
        ``model.safetensors``."""
        self._stage("the last model")
        last = self.evals.run(self._data, self.cfg.train.progress_eval_episodes, self.minutes, self.steps, bar=self.bar)
        chosen, chosen_data = better(self._best, last, self._data) if self.cfg.train.keep_best else (last, self._data)
        atomic_write_bytes(self.run_dir / "model.safetensors", chosen_data)
        return chosen, chosen_data, last

    def play(self, data: bytes, episodes: int, levels: tuple[int, ...], seed: int) -> ModelCheck:
        """The model in ``data`` over ``episodes`` spread over ``levels`` (not a point of the curve)."""
        self._stage("the kept model" if len(levels) > 1 else f"the kept model at level {levels[0]}")
        return self.evals.run(data, episodes, self.minutes, self.steps, seed=seed, record=False, levels=levels,
                              bar=self.bar)

    def baselines(self, episodes: int, seed: int) -> dict[str, ModelCheck]:
        """The game's scripted baselines over every report level (none with ``train.final_baselines = false``), on
        ``seed`` (the model's, so both play the same games); one scripted for other action sets than the run's
        plays its own, and the report says so."""
        out = {}
        for p in self.game.baselines if self.cfg.train.final_baselines else ():
            a = scripted_action_set(p, self.cfg.env.action_set)
            self._stage(f"baseline {p}")
            b = self.evals.run(b"", episodes, self.minutes, 0, policy=p, seed=seed, levels=REPORT_LEVELS,
                               action_set=a, bar=self.bar)
            out[p] = b if a is None else dataclasses.replace(
                b, note=f"scripted for the {a!r} action set: played with it, not {self.cfg.env.action_set!r}")
        return out

    def report(self, model: ModelCheck, baselines: dict[str, ModelCheck], chosen: ModelCheck, last: ModelCheck,
               level_9: ModelCheck | None = None, action_set: str | None = None,
               delay_frames: int | None = None) -> RunReport:
        """The run's report: ``model`` (the kept one's final score) with the baselines, the curve and the run's figures."""
        return RunReport(model=model, baselines=baselines, run_dir=str(self.run_dir), curve=list(self.evals.points),
                         kept="last" if chosen is last else "best", last_model_check=last,
                         trained_levels=list(env_levels(self.cfg)), training=self.training,
                         trained_stages=list(env_stages(self.cfg)),
                         whole_games=self.game.whole_games, level_9=level_9, action_set=action_set,
                         delay_frames=delay_frames)

    def write(self, report: RunReport, baselines: dict[str, float], title: str, metric: str = "untouched_share") -> None:
        """``eval.json`` and ``learning_curve.png`` (the curve's ``metric``, the baselines as labelled lines)."""
        from melee_agent.report.plots import learning_curve  # noqa: PLC0415

        doc = report.to_json()
        atomic_write_json(self.run_dir / "eval.json", doc)
        learning_curve(doc["curve"], baselines, title, self.run_dir / "learning_curve.png", metric=metric)

    def log_table(self, model: ModelCheck, baselines: dict[str, ModelCheck], key: str) -> None:
        self.log(level_table(model.result, {p: b.result for p, b in baselines.items()}, key=key))

    def log_paths(self) -> None:
        d = self.run_dir
        self.log(f"model: {d / 'model.safetensors'}   results: {d / 'eval.json'}   curve: {d / 'learning_curve.png'}")


def level_table(model: EvalResult, baselines: dict[str, EvalResult], key: str = "untouched_share") -> str:
    """The final report's table: one row per level, the model's and each baseline's untouched share (or,
    with ``key="win_rate"``, win rate; the second column is then the model's stocks taken per game)."""
    second = "s to hit" if key == "untouched_share" else "stocks"
    head = f"{'level':>5}  {'model':>7}  {second:>8}  " + "  ".join(f"{b:>7}" for b in baselines)
    lines = [head, "-" * len(head)]
    levels: list[int | str] = [*(model.per_level or {}), "all"]
    for lv in levels:
        m = model if lv == "all" else (model.per_level or {})[int(lv)]
        bs = [b if lv == "all" else (b.per_level or {})[int(lv)] for b in baselines.values()]
        stocks = m.fights.stocks_taken_per_game if m.fights is not None else 0.0
        extra = m.mean_seconds_to_first_hit if key == "untouched_share" else stocks
        lines.append(f"{lv:>5}  {_figure(m, key):>7.1%}  {extra:>8.2f}  "
                     + "  ".join(f"{_figure(b, key):>7.1%}" for b in bs))
    lines.append(f"worst level: model {_figure(model, key + '_worst_level'):.1%}")
    return "\n".join(lines)


def _figure(r: EvalResult, key: str) -> float:
    """``untouched_share``, ``win_rate`` or their ``_worst_level`` of ``r``; 0 where it has none (no games)."""
    v = getattr(r, key)
    return float(v) if v is not None else 0.0


def _pct(x: float | None) -> str:
    return f"{x:.0%}" if x is not None else "-"


def _games(r: EvalResult) -> int:
    return r.fights.games if r.fights is not None else 0


def _levels_text(levels: tuple[int, ...]) -> str:
    if len(levels) == 1:
        return f"level {levels[0]}"
    if list(levels) == list(range(levels[0], levels[-1] + 1)):
        return f"levels {levels[0]}-{levels[-1]}"
    return "levels " + ",".join(map(str, levels))


def _per_level_text(r: EvalResult, key: str = "untouched_share") -> str:
    if not r.per_level:
        return ""
    return " (per level " + " ".join(f"{_figure(v, key):.0%}" for v in r.per_level.values()) + \
        f"; worst {_figure(r, key + '_worst_level'):.0%})"


def _progress(backend: FleetBackend | FusedBackend) -> tuple[int, int, int]:
    try:
        return backend.progress()
    except Exception:  # noqa: BLE001 (a progress figure only)
        return 0, 0, 0


def _progress_steps(backend: FleetBackend | FusedBackend) -> int:
    return _progress(backend)[0]
