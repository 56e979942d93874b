"""The manager's training side, composed: one thread owns the device replay and the learner.

HTTP handlers only validate and :meth:`Trainer.submit` (:mod:`.ingest`: deduplicated by the
upload ledger, a bounded queue; full means 429). The training thread (:class:`TrainingThread`)
drains the queue into the replay (:func:`make_replay`), runs learner steps, publishes model
versions (:mod:`.publisher`) and writes checkpoints (:mod:`.checkpoint_contents`, which rotates the
ledger).

The thread's schedule: once ``burn_in`` rows are stored it runs learner steps in chunks of
:data:`TRAIN_CHUNK` (looking at the queue between chunks), never more than ``max_train_per_row`` steps per
ingested row (a slow fleet is not overfitted). Every ``publish_every`` steps it publishes, every
``checkpoint_every`` steps it checkpoints, and every couple of seconds it logs the status to TensorBoard. An
exception stops the thread but not the server: the status shows it. ``resume=True`` continues a run (:mod:`.resume`); :meth:`Trainer.status` is the typed
``GET /v1/status`` payload (:mod:`.status`), also logged to TensorBoard.

Crash safety: checkpoints and model files are written atomically and verified on load; the first
version published after a restart is above every version published before it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path

import torch

from melee_agent.envs.actions import get_action_set
from melee_agent.config import Config, env_stages, save_resolved_config
from melee_agent.envs.state import get_layout
from melee_agent.rl.learner import Learner
from melee_agent.rl.rows import ROW_WIDTH, columns
from melee_agent.config import ManagerConfig, ReplayConfig
from melee_agent.rl.replay import DeviceReplay, PrioritizedDeviceReplay, Replay
from melee_agent.rl.seeds import derive
from melee_agent.io.wire import Experience
from melee_agent.manager.checkpoint_contents import Checkpointer
from melee_agent.manager.ingest import Ingest, NotStored, QueueFull
from melee_agent.manager.ledger import UploadLedger
from melee_agent.manager.metrics import Board, Rate
from melee_agent.manager.publisher import PublishedModel, Publisher
from melee_agent.manager.resume import check_run_dir, resume as resume_run
from melee_agent.manager.status import ManagerStatus

__all__ = ["NotStored", "PublishedModel", "QueueFull", "TrainSteps", "Trainer", "TrainingThread", "check_run_dir",
           "make_replay"]

log = logging.getLogger("melee_agent.manager")
TRAIN_CHUNK = 25  # learner steps between looks at the queue
LOG_EVERY_S = 2.0


def make_replay(rc: ReplayConfig, device: torch.device, seed: int | None = None, width: int = ROW_WIDTH) -> Replay:
    """A :class:`~melee_agent.rl.replay.PrioritizedDeviceReplay` when ``rc.prioritized``, else a uniform
    :class:`~melee_agent.rl.replay.DeviceReplay`; both hold ``rc.capacity`` rows ``width`` wide on ``device``
    and sample from ``seed`` where given."""
    if rc.prioritized:
        return PrioritizedDeviceReplay(rc.capacity, device, rc.block_size, alpha=rc.alpha, beta=rc.beta, seed=seed,
                                       width=width)
    return DeviceReplay(rc.capacity, device, rc.block_size, seed=seed, width=width)


class TrainSteps:
    """The train-step loop, the one both the manager's training thread and the fused loop
    (:mod:`melee_agent.run.fused`) run: each step's metrics to TensorBoard, a published model every
    ``publish_every`` steps, a checkpoint every ``checkpoint_every``; ``rate`` counts the steps per second."""

    def __init__(self, m: ManagerConfig, learner: Learner, board: Board, publish: Callable[[], None],
                 checkpoint: Callable[[], None]):
        self.publish_every, self.checkpoint_every = m.publish_every, m.checkpoint_every
        self.learner, self.board, self.publish, self.checkpoint = learner, board, publish, checkpoint
        self.rate = Rate()

    def take(self, n: int, after: Callable[[int], None] | None = None, more: Callable[[], bool] | None = None) -> int:
        """Up to ``n`` train steps: ``after(step)`` follows each (the fused loop's actor refresh), and the loop
        stops early once ``more()`` is false (the manager's burn-in and cap per row). Returns the steps taken."""
        done = 0
        for _ in range(n):
            metrics = self.learner.step()
            done += 1
            step = self.learner.train_steps
            if metrics is not None:
                self.board.learner(metrics, step)
            if step % self.publish_every == 0:
                self.publish()
            if step % self.checkpoint_every == 0:
                self.checkpoint()
            if after is not None:
                after(step)
            if more is not None and not more():
                break
        self.rate.add(done)
        return done


class TrainingThread:
    def __init__(self, m: ManagerConfig, batch_size: int, learner: Learner, ingest: Ingest, board: Board,
                 publish: Callable[[], None], checkpoint: Callable[[], None], log_status: Callable[[], None]):
        self.m, self.batch_size, self.learner, self.ingest, self.board = m, batch_size, learner, ingest, board
        self.log_status = log_status
        self.steps = TrainSteps(m, learner, board, publish, checkpoint)
        self.running = False
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def can_train(self) -> bool:
        return (len(self.ingest.replay) >= max(self.m.burn_in, self.batch_size)
                and self.learner.train_steps < self.m.max_train_per_row * self.ingest.rows_ingested)

    @property
    def rate(self) -> Rate:
        """Learner steps per second."""
        return self.steps.rate

    def _train_chunk(self) -> None:
        self.steps.take(TRAIN_CHUNK, more=self.can_train)

    def _run(self) -> None:
        if self.m.torch_threads > 0:
            torch.set_num_threads(self.m.torch_threads)
        last_log = 0.0
        try:
            while not self._stop.is_set():
                self.ingest.drain(0 if self.can_train() else 0.2)
                if self.can_train():
                    self._train_chunk()
                self.ingest.ledger.sync()
                now = time.monotonic()
                if now - last_log > LOG_EVERY_S:
                    self.log_status()
                    last_log = now
        except Exception as e:  # keep serving (status shows it) rather than dying silently
            self.error = f"{type(e).__name__}: {e}"
            log.exception("the training thread stopped")
        finally:
            self.running = False

    def start(self) -> None:
        self._stop.clear()
        self.running = True
        self._thread = threading.Thread(target=self._run, name="trainer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop and wait for the thread (up to a minute); the caller drains and checkpoints after."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=60)


class Trainer:
    def __init__(self, cfg: Config, run_dir: str | Path, device: str = "cpu", resume: bool = False,
                 seed: int | None = None):
        self.cfg = cfg
        #: the run's seed (``train.seed`` unless given): the replay's sampling and the network's first weights
        #: come from seeds derived from it, and every model file records it
        self.seed = cfg.train.seed if seed is None else seed
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.device = torch.device(device)
        self.action_set = cfg.env.action_set
        self.num_actions = get_action_set(self.action_set).num_actions
        if self.device.type == "cuda":  # a captured step draws its batch from the device's default generator
            torch.cuda.manual_seed(derive(self.seed, "cuda"))
        layout = get_layout(cfg.env.state_layout)  # the state the network reads, the rows' width with it
        self.replay: Replay = make_replay(cfg.replay, self.device, derive(self.seed, "replay"), columns(layout.dim).width)
        self.learner = Learner.from_config(self.replay, self.num_actions, self.device, cfg.learner,
                                           beta_steps=cfg.replay.beta_steps,  # used only with a prioritized replay
                                           seed=derive(self.seed, "network"), state_dim=layout.dim)
        if not resume:
            check_run_dir(self.run_dir, resume=False)
        self.ledger = UploadLedger(self.run_dir)
        keep = cfg.manager.keep_checkpoints
        self.checkpointer = Checkpointer(self.run_dir, self.ledger, keep)
        resumed = resume_run(self.run_dir, self.action_set, self.device, self.learner, self.ledger) if resume else None
        self.resumed_from = resumed.source if resumed else None
        if resumed and resumed.checkpoint:
            self.checkpointer.resumed_from(resumed.checkpoint)
        save_resolved_config(cfg, self.run_dir)
        self.board = Board(self.run_dir)
        self.ingest = Ingest(self.replay, self.ledger, self.board, cfg.manager.queue_batches,
                             lambda: self.learner.train_steps, resumed.rows_ingested if resumed else 0)
        self.publisher = Publisher(self.run_dir, self.action_set, keep, self.board,
                                   resumed.next_version if resumed else 0, delay_frames=cfg.env.delay_frames,
                                   character=cfg.env.characters[0], seed=self.seed, state_layout=layout.name,
                                   stages=env_stages(cfg))
        self.thread = TrainingThread(cfg.manager, cfg.learner.batch_size, self.learner, self.ingest, self.board,
                                     publish=lambda: self.publisher.publish_next(self.learner),
                                     checkpoint=self.checkpoint, log_status=self.log_status)
        self.publisher.publish(self.learner)

    # --- what the HTTP handlers and tests read ---
    @property
    def model(self) -> PublishedModel:
        return self.publisher.current

    @property
    def version(self) -> int:
        return self.publisher.version

    @property
    def rows_accepted(self) -> int:
        return self.ledger.rows

    @property
    def rows_ingested(self) -> int:
        return self.ingest.rows_ingested

    @property
    def queue(self) -> queue.Queue[Experience]:
        return self.ingest.queue

    @property
    def running(self) -> bool:
        return self.thread.running

    @property
    def error(self) -> str | None:
        return self.thread.error

    def submit(self, exp: Experience) -> int | None:
        """Queue a validated batch (:meth:`.ingest.Ingest.submit`): its row count, or None for a duplicate."""
        return self.ingest.submit(exp)

    def checkpoint(self) -> None:
        self.checkpointer.write_or_warn(self.learner, self.rows_ingested, self.version, self.cfg.name)

    def status(self) -> ManagerStatus:
        now = time.monotonic()
        ing, model = self.ingest, self.model
        return ManagerStatus(
            replay_size=len(self.replay), replay_capacity=self.replay.capacity, replay_staged=self.replay.staged,
            rows_accepted=self.rows_accepted, rows_ingested=ing.rows_ingested,
            batches_accepted=self.ledger.batches, duplicates_refused=self.ledger.duplicates,
            queue_batches=ing.queue.qsize(), train_steps=self.learner.train_steps, model_version=model.version,
            model_sha256=model.sha256, ingest_rows_per_s=round(ing.ingest_rate.per_second(now), 1),
            train_steps_per_s=round(self.thread.rate.per_second(now), 1), workers_active=ing.active_workers(now),
            worker_frames_per_s=round(ing.frame_rate.per_second(now), 1), burn_in=self.cfg.manager.burn_in,
            training=self.running and self.thread.can_train(), resumed_from=self.resumed_from, error=self.error,
        )

    def log_status(self) -> None:
        self.board.scalars(self.status().scalars(), self.learner.train_steps)

    # --- lifetime ---
    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.thread.stop()
        self.ingest.drain(0)
        if self.learner.train_steps > 0:
            self.checkpoint()
        self.log_status()
        self.board.close()
        self.ledger.close()
