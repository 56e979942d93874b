"""The manager's training side: one thread owns the device replay and the learner.

HTTP handlers only validate and enqueue (a bounded queue; full means 429); every accepted batch
is written to the :class:`~melee_agent.manager.ledger.UploadLedger` first, so a retried one is
answered as a duplicate, even after a restart. The training thread
drains the queue into the :class:`~melee_agent.replay.DeviceReplay`, and once ``burn_in`` rows
are stored runs learner steps, never more than ``max_train_per_row`` steps per ingested row (a
slow fleet is not overfitted). Every ``publish_every`` steps it publishes a model version
(atomically to ``RUN_DIR/model.safetensors`` and in memory for ``GET /v1/model``), every
``checkpoint_every`` steps it writes a checkpoint, and every couple of seconds it logs
TensorBoard scalars.

Crash safety: checkpoints and model files are written atomically and verified on load.
``resume=True`` continues from the newest checkpoint that loads, or where there is none yet from
the newest published model (a fresh optimizer); the first version published after a restart is
above every version published before it.
"""

from __future__ import annotations

import hashlib
import logging
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from melee_agent.actions import get_action_set
from melee_agent.config import Config, save_resolved_config
from melee_agent.learner import Learner
from melee_agent.model import model_to_bytes
from melee_agent.replay import DeviceReplay, PrioritizedDeviceReplay, Replay
from melee_agent.state import STATE_LAYOUT
from melee_agent.wire import Experience
from melee_agent.manager.checkpoints import list_checkpoints, newest_valid, save_checkpoint
from melee_agent.manager.ledger import UploadLedger
from melee_agent.manager.published import stored_models, write_published
from melee_agent.manager.metrics import Board, Rate

log = logging.getLogger("melee_agent.manager")
TRAIN_CHUNK = 25  # learner steps between looks at the queue


@dataclass(frozen=True)
class PublishedModel:
    data: bytes
    version: int
    train_step: int
    sha256: str

    @property
    def etag(self) -> str:
        return f'"{self.sha256}"'


class QueueFull(RuntimeError):
    pass


class NotStored(RuntimeError):
    """The batch could not be recorded (the disk is full or failing); nothing was queued."""


def check_run_dir(run_dir: str | Path, resume: bool) -> None:
    """Before serving: a fresh run must not write over an earlier one; ``--resume`` needs one."""
    run_dir = Path(run_dir)
    held = bool(list_checkpoints(run_dir)) or (run_dir / "models").is_dir() or (run_dir / "model.safetensors").exists()
    if not resume and held:
        raise FileExistsError(f"{run_dir} already holds a run (checkpoints or published models): "
                              "pass --resume to continue it, or choose a new --run-dir")
    if resume and not held:
        raise FileNotFoundError(f"--resume: nothing to resume in {run_dir}: no checkpoint and no published model")


class Trainer:
    def __init__(self, cfg: Config, run_dir: str | Path, device: str = "cpu", resume: bool = False):
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.device = torch.device(device)
        self.action_set = cfg.env.action_set
        self.num_actions = get_action_set(self.action_set).num_actions
        rc = cfg.replay
        self.replay: Replay
        if rc.prioritized:
            self.replay = PrioritizedDeviceReplay(rc.capacity, self.device, rc.block_size,
                                                                alpha=rc.alpha, beta=rc.beta)
        else:
            self.replay = DeviceReplay(rc.capacity, self.device, rc.block_size)
        self.learner = Learner.from_config(self.replay, self.num_actions, self.device, cfg.learner,
                                           beta_steps=rc.beta_steps)  # used only with a prioritized replay
        self.queue: queue.Queue[Experience] = queue.Queue(maxsize=cfg.manager.queue_batches)
        self.rows_ingested = 0  # written into the replay
        self.version = 0
        self.resumed_from: str | None = None
        self._ckpt_gens: list[int] = []  # the ledger generation each kept checkpoint starts from
        if not resume:
            check_run_dir(self.run_dir, resume=False)
        self.ledger = UploadLedger(self.run_dir)
        if resume:
            self._resume()
        self.workers: dict[str, float] = {}  # worker id -> last upload time
        self._ingest_rate, self._train_rate, self._frame_rate = Rate(), Rate(), Rate()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.running = False
        self.error: str | None = None
        save_resolved_config(cfg, self.run_dir)
        self.board = Board(self.run_dir)
        self.model: PublishedModel = self._publish()

    # --- model and checkpoints ---
    @property
    def rows_accepted(self) -> int:
        return self.ledger.rows

    def _publish(self) -> PublishedModel:
        data = model_to_bytes(self.learner.online, version=self.version, train_step=self.learner.train_steps,
                              action_set=self.action_set, state_layout=STATE_LAYOUT)
        model = PublishedModel(data, self.version, self.learner.train_steps, hashlib.sha256(data).hexdigest())
        write_published(self.run_dir, data, self.version, self.cfg.manager.keep_checkpoints)
        self.model = model
        self.board.scalars({"model/version": self.version}, self.learner.train_steps)
        return model

    def _publish_next(self) -> None:
        """Publish the next version; if its files cannot be written (disk full), keep serving the
        last one and reuse the number, so a version is only ever seen once it is on disk."""
        self.version += 1
        try:
            self._publish()
        except OSError as e:
            self.version -= 1
            log.warning("could not write model v%d (%s): still serving v%d", self.version + 1, e, self.model.version)

    def _checkpoint_or_warn(self) -> None:
        try:
            self._checkpoint()
        except OSError as e:
            log.warning("could not write a checkpoint (%s): the previous one is kept, training goes on", e)

    def _checkpoint(self) -> None:
        snapshot = self.ledger.rotate()
        state = {**self.learner.state_dict(), "rows_ingested": self.rows_ingested, "rows_accepted": self.rows_accepted,
                 "model_version": self.version, "config_name": self.cfg.name, "ledger": snapshot}
        keep = self.cfg.manager.keep_checkpoints
        path = save_checkpoint(self.run_dir, state, self.learner.train_steps, keep)
        self._ckpt_gens = [*self._ckpt_gens, snapshot["gen"]][-max(1, keep):]
        self.ledger.prune(self._ckpt_gens[0])
        log.info("checkpoint %s", path.name)

    def _resume(self) -> None:
        models = stored_models(self.run_dir, self.action_set)
        published = max((m.version for m in models), default=-1)
        found = newest_valid(self.run_dir, self.device)
        if found is not None:
            path, state = found
            self.learner.load_state_dict(state)
            self.ledger.restore(state.get("ledger"))
            self._ckpt_gens = [int(state["ledger"]["gen"])] if state.get("ledger") else []
            self.rows_ingested = int(state.get("rows_ingested", 0))
            checkpointed = int(state.get("model_version", 0))
            self.resumed_from = path.name
            how = f"checkpoint {path.name}"
        elif models:
            m = models[0]
            self.learner.online.load_state_dict(m.model.state_dict())
            self.learner.sync_target()
            self.learner.train_steps = m.train_step
            self.ledger.restore(None)
            self.rows_ingested = self.ledger.rows
            checkpointed = m.version
            self.resumed_from = m.path.name
            how = f"published model v{m.version} ({m.path.name}) with a fresh optimizer: no checkpoint loads yet"
        else:
            raise FileNotFoundError(f"--resume: nothing to resume in {self.run_dir}: no checkpoint that loads "
                                    "and no published model")
        # Versions never go back, even when the last publish came after the last checkpoint.
        self.version = max(checkpointed, published) + 1
        log.info("resumed from %s: step %d; the next model is v%d (v%d was the last published)", how,
                 self.learner.train_steps, self.version, published)

    # --- ingest (called from HTTP handlers) ---
    def submit(self, exp: Experience) -> int | None:
        """Queue a validated batch; returns its row count, or None for a batch accepted before.

        Under one lock: the duplicate check, the room check, the ledger line, the queue put. The
        training thread only takes from the queue, so room seen here is still there at the put.
        """
        n = exp.rows.shape[0]
        worker = exp.meta.get("worker_id")
        seq = int(exp.meta["batch_seq"]) if worker is not None and "batch_seq" in exp.meta else -1
        now = time.monotonic()
        with self._lock:
            self.workers[worker or "?"] = now
            if seq >= 0 and self.ledger.seen(worker, seq):
                self.ledger.duplicates += 1
                return None
            if self.queue.full():
                raise QueueFull("the ingest queue is full; retry shortly")
            try:
                self.ledger.record(worker or "", seq, n)
            except OSError as e:
                raise NotStored(f"the manager cannot record the batch ({e.strerror or e}); retry later") from None
            self.queue.put_nowait(exp)
        self._ingest_rate.add(n, now)
        return n

    def _ingest(self, exp: Experience) -> None:
        self.replay.add(exp.rows, exp.priority)
        self.rows_ingested += exp.rows.shape[0]
        stats = exp.stats
        if not stats.empty:
            self.board.episodes(stats, self.learner.train_steps)
            self.board.workers(stats, self.learner.train_steps)
            if stats.frames:
                self._frame_rate.add(float(stats.frames))

    def _drain(self, wait: float) -> int:
        n = 0
        try:
            exp = self.queue.get(timeout=wait) if wait > 0 else self.queue.get_nowait()
        except queue.Empty:
            return 0
        while True:
            self._ingest(exp)
            n += 1
            try:
                exp = self.queue.get_nowait()
            except queue.Empty:
                # Nothing more is waiting: move a partial block to the device now rather than
                # holding rows back from training until the next upload fills it.
                if self.replay.staged:
                    self.replay.flush()
                return n

    # --- the training thread ---
    def can_train(self) -> bool:
        m = self.cfg.manager
        return (len(self.replay) >= max(m.burn_in, self.cfg.learner.batch_size)
                and self.learner.train_steps < m.max_train_per_row * self.rows_ingested)

    def status(self) -> dict[str, Any]:
        now = time.monotonic()
        with self._lock:
            active = sum(1 for t in self.workers.values() if now - t < 60)
        return {
            "replay_size": len(self.replay), "replay_capacity": self.replay.capacity, "replay_staged": self.replay.staged,
            "rows_accepted": self.rows_accepted, "rows_ingested": self.rows_ingested,
            "batches_accepted": self.ledger.batches, "duplicates_refused": self.ledger.duplicates,
            "queue_batches": self.queue.qsize(),
            "train_steps": self.learner.train_steps, "model_version": self.model.version,
            "model_sha256": self.model.sha256, "ingest_rows_per_s": round(self._ingest_rate.per_second(now), 1),
            "train_steps_per_s": round(self._train_rate.per_second(now), 1), "workers_active": active,
            "worker_frames_per_s": round(self._frame_rate.per_second(now), 1), "burn_in": self.cfg.manager.burn_in,
            "training": self.running and self.can_train(), "resumed_from": self.resumed_from, "error": self.error,
        }

    def _log_status(self) -> None:
        st = self.status()
        cap = self.cfg.replay.capacity
        self.board.scalars({
            "replay/size": st["replay_size"], "replay/fill": st["replay_size"] / cap,
            "ingest/rows_per_s": st["ingest_rows_per_s"], "train/steps_per_s": st["train_steps_per_s"],
            "model/version": st["model_version"], "workers/active": st["workers_active"],
            "workers/frames_per_s": st["worker_frames_per_s"],
            "uploads/batches": st["batches_accepted"], "uploads/rows": st["rows_accepted"],
            "uploads/duplicates_refused": st["duplicates_refused"],
        }, self.learner.train_steps)

    def _run(self) -> None:
        m = self.cfg.manager
        if m.torch_threads > 0:
            torch.set_num_threads(m.torch_threads)
        last_log = 0.0
        try:
            while not self._stop.is_set():
                training = self.can_train()
                self._drain(0 if training else 0.2)
                if self.can_train():
                    done = 0
                    for _ in range(TRAIN_CHUNK):
                        done += 1
                        metrics = self.learner.step()
                        step = self.learner.train_steps
                        if metrics is not None:
                            self.board.learner(metrics, step)
                        if step % m.publish_every == 0:
                            self._publish_next()
                        if step % m.checkpoint_every == 0:
                            self._checkpoint_or_warn()
                        if not self.can_train():
                            break
                    self._train_rate.add(done)
                self.ledger.sync()
                now = time.monotonic()
                if now - last_log > 2.0:
                    self._log_status()
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
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=60)
        self._drain(0)
        if self.learner.train_steps > 0:
            self._checkpoint_or_warn()
        self._log_status()
        self.board.close()
        self.ledger.close()
