"""The worker process: fetch the model, play a segment with it, upload n-step rows, repeat.

One loop, as in the paper and Ape-X: the model is fixed for a whole segment (default two minutes
of game time per environment), then the newest one is fetched (a 304 when nothing changed).
Rows go up in batches of ``worker.upload_rows``; the segment's episode statistics ride on the
last batch so the manager counts each episode once. Where the run's replay is prioritized
(the manager says so with every model: ``X-Send-Priorities``), each batch carries the rows' initial priorities, their absolute TD
errors under the worker's model (:mod:`~melee_agent.workers.priorities`).

Nothing is lost to a manager that is away: every batch goes through the on-disk
:class:`~melee_agent.workers.spool.Spool` (numbered by ``batch_seq``, sent oldest first, deleted on
a 202), the worker keeps playing while the manager is unreachable or busy (exponential backoff
with jitter), and a downloaded model is used only once its sha256 and metadata check out.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import signal
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import torch

from melee_agent.config import Config
from melee_agent.dolphin import DolphinEnv  # light: libmelee is imported only when one is built
from melee_agent.envs.make import make_env
from melee_agent.io.segment_stats import SegmentStats
from melee_agent.rl.model import DuelingDQN, ModelMismatch, model_from_bytes
from melee_agent.envs.state import STATE_LAYOUT
from melee_agent.io.wire import encode_experience
from melee_agent.workers.priorities import td_priorities
from melee_agent.workers.backoff import Backoff
from melee_agent.workers.client import ManagerClient, ManagerError, ManagerRefused, ManagerUnavailable
from melee_agent.workers.spool import Spool
from melee_agent.workers.play import SegmentPlayer, ape_x_epsilon, env_epsilons
from melee_agent.rl.seeds import derive

log = logging.getLogger("melee_agent.worker")


@dataclass
class WorkerSettings:
    manager: str
    index: int = 0
    count: int = 1
    envs: int | None = None  # default: the config's worker.envs (1 for Dolphin)
    device: str = "cpu"
    seed: int | None = None
    segments: int | None = None  # stop after this many segments (default: run until stopped)
    token: str | None = None
    spool_dir: str | Path | None = None  # default: a new temporary folder (batches then do not outlive the process)


def check_model(data: bytes, headers: dict[str, str], action_set: str, device: str,
                delay_frames: int | None = None, state_layout: str = STATE_LAYOUT) -> tuple[DuelingDQN, dict[str, Any]]:
    """The model in ``data`` if it is whole and the one the manager announced; ValueError otherwise.

    Checked: the body's sha256 against ``X-Model-Sha256``, the weights against the file's own
    ``weights_sha256``, schema, layout and action set, the input delay it trains under (where the file
    records it and ``delay_frames`` is given: a ModelMismatch, as another action set is), and the version
    against ``X-Model-Version``.
    """
    h = {k.lower(): v for k, v in headers.items()}
    want = h.get("x-model-sha256")
    got = hashlib.sha256(data).hexdigest()
    if want is not None and got != want:
        raise ValueError(f"sha256 {got[:12]}... of {len(data)} bytes does not match X-Model-Sha256 {want[:12]}... "
                         "(a download cut short or altered)")
    model, meta = model_from_bytes(data, action_set=action_set, state_layout=state_layout, device=device,
                                   origin="downloaded model")
    trained = meta.get("delay_frames")
    if delay_frames is not None and trained is not None and trained != delay_frames:
        raise ModelMismatch(f"downloaded model: the manager trains at {trained} frames of input delay, this worker "
                            f"plays at {delay_frames} (env.delay_frames)")
    if "x-model-version" in h and str(meta["version"]) != h["x-model-version"]:
        raise ValueError(f"the file says version {meta['version']}, X-Model-Version says {h['x-model-version']}")
    return model, meta


class Worker:
    def __init__(self, cfg: Config, settings: WorkerSettings, stop: threading.Event | None = None):
        self.cfg, self.s = cfg, settings
        self.stop = stop or threading.Event()
        self.client = ManagerClient(settings.manager, token=settings.token)
        self._temp_spool = settings.spool_dir is None
        spool_dir = settings.spool_dir or tempfile.mkdtemp(prefix="melee-agent-spool-")
        self.spool = Spool(spool_dir, int(cfg.worker.spool_mb * 2**20))
        self.identity = self.spool.identity(f"{cfg.env.env}-{settings.index}")
        self.worker_id = self.identity.worker_id
        self.backoff = Backoff(base=0.5, cap=cfg.worker.backoff_max_s)
        self.epsilon = ape_x_epsilon(settings.index, settings.count, cfg.worker.epsilon_base, cfg.worker.epsilon_alpha)
        self.model: Any = None
        # Whether batches carry initial priorities: the manager says so with each model (its replay
        # decides); the worker's own config only until the first answer.
        self.send_priorities = bool(cfg.replay.prioritized)
        self.version = -1
        self.etag: str | None = None
        self.rows_made = 0
        self.rows_sent = 0  # acknowledged by the manager (202), duplicates included
        self.rows_duplicate = 0  # acknowledged as already stored (a retry after a lost answer)
        self.rows_refused = 0  # refused as bad input (4xx): dropped, they would never be taken
        self.batches_sent = 0
        self.models_rejected = 0
        self.rows_lost_unspooled = 0  # could neither be written to the spool (disk full) nor sent
        self.spool_peak_batches = len(self.spool)
        self.versions_seen: list[int] = []
        if len(self.spool):
            log.info("spool %s holds %d batches (%d rows) from before: they go first", spool_dir, len(self.spool),
                     self.spool.rows)

    def fetch_model(self) -> bool:
        """Download the model if it changed and it checks out; returns True when a new version was loaded.

        Once a model is held, an unreachable manager or a bad download keeps the current one.
        """
        if self.model is not None and not self.backoff.ready():
            return False
        try:
            data, etag, headers = self.client.model(self.etag, retries=0 if self.model is not None else None)
        except ManagerUnavailable as e:
            if self.model is None:
                raise
            self.backoff.failed(retry_after=e.retry_after)
            log.warning("model check failed (%s); playing on with model v%d", e, self.version)
            return False
        said = {k.lower(): v for k, v in headers.items()}.get("x-send-priorities")
        if said in ("0", "1"):
            self.send_priorities = said == "1"
        if data is None:
            return False
        try:
            model, meta = check_model(data, headers, self.cfg.env.action_set, self.s.device,
                                      delay_frames=self.cfg.env.delay_frames, state_layout=self.cfg.env.state_layout)
        except ModelMismatch as e:
            # The manager trains a model for another game, action set or delay: no later download will fit either.
            raise ManagerRefused(f"{e}: the manager runs another config than this worker's; start the worker "
                                 "with the manager's --config", 200) from None
        except ValueError as e:
            self.models_rejected += 1
            log.warning("model download rejected: %s; %s", e,
                        f"keeping model v{self.version}" if self.model is not None else "no model yet, retrying")
            return False
        self.model, self.etag, self.version = model, etag, int(meta["version"])
        self.versions_seen.append(self.version)
        return True

    def upload(self, rows: torch.Tensor, stats: SegmentStats) -> None:
        """Spool the rows as batches (numbered in order), then send what the manager will take now."""
        arr = rows.detach().to("cpu").numpy()
        # One forward pass for the whole segment's rows (Ape-X: actors rank their own experience).
        priority = td_priorities(self.model, rows, self.cfg.learner.reward_scale).cpu().numpy() if self.send_priorities else None
        step = self.cfg.worker.upload_rows
        for start in range(0, arr.shape[0], step):
            last = start + step >= arr.shape[0]
            chunk = arr[start:start + step]
            seq = self.identity.next_seq
            payload = encode_experience(chunk, action_set=self.cfg.env.action_set, worker_id=self.worker_id,
                                        batch_seq=seq, model_version=self.version, stats=stats if last else None,
                                        state_layout=self.cfg.env.state_layout,
                                        priority=None if priority is None else priority[start:start + step])
            self.identity.next_seq += 1
            self.rows_made += chunk.shape[0]
            try:
                self.spool.put(seq, payload, rows=chunk.shape[0])
            except OSError as e:  # the disk is full or failing
                self._send_unspooled(seq, payload, chunk.shape[0], e)
        try:
            self.spool.save_identity(self.identity)
        except OSError as e:  # the numbering is recovered from the spooled files' names
            log.warning("cannot save the worker identity (%s)", e)
        self.spool_peak_batches = max(self.spool_peak_batches, len(self.spool))
        self.drain()

    def _send_unspooled(self, seq: int, payload: bytes, rows: int, why: OSError) -> None:
        try:
            answer = self.client.upload(payload, retries=0)
        except (ManagerUnavailable, ManagerRefused) as e:
            self.rows_lost_unspooled += rows
            log.error("batch %d (%d rows) could not be spooled (%s) nor sent (%s): dropped", seq, rows, why, e)
            return
        log.warning("batch %d could not be spooled (%s): sent directly", seq, why)
        self._acknowledged(seq, rows, answer)

    def _acknowledged(self, seq: int, rows: int, answer: dict[str, Any]) -> None:
        self.batches_sent += 1
        self.rows_sent += rows
        if answer.get("duplicate"):
            self.rows_duplicate += rows
            log.info("batch %d was already stored (an answer lost before): not stored again", seq)

    @property
    def rows_dropped(self) -> int:
        """Rows made but never sent: dropped from a full spool, or neither spooled nor sent."""
        return self.spool.dropped_rows + self.rows_lost_unspooled

    def drain(self) -> None:
        """Send spooled batches oldest first until the spool is empty or the manager is unavailable."""
        while len(self.spool) and self.backoff.ready():
            head = self.spool.oldest()
            if head is None:
                return
            seq, payload, rows = head
            try:
                answer = self.client.upload(payload, retries=0)
            except ManagerUnavailable as e:
                wait = self.backoff.failed(retry_after=e.retry_after)
                log.warning("upload of batch %d: %s; %d batches (%d rows) spooled, next try in %.1f s", seq, e,
                            len(self.spool), self.spool.rows, wait)
                return
            except ManagerRefused as e:
                if e.status in (401, 403, 409):  # a wrong token or a config the manager does not train
                    raise
                log.error("batch %d (%d rows) refused: %s; dropped", seq, rows, e)
                self.spool.remove(seq)
                self.rows_refused += rows
                continue
            self.spool.remove(seq)
            self.backoff.succeeded()
            self._acknowledged(seq, rows, answer)

    def counters(self) -> dict[str, int]:
        """What the manager shows under ``workers/`` in TensorBoard (totals over workers)."""
        return {"spool_rows": self.spool.rows, "spool_dropped_rows": self.rows_dropped,
                "models_rejected": self.models_rejected}

    def _wait_for_model(self) -> bool:
        while not self.stop.is_set():
            try:
                self.client.wait_ready(timeout=5)
                if self.fetch_model():
                    return True
            except ManagerRefused:
                raise
            except ManagerError as e:
                log.info("waiting for the manager at %s (%s)", self.s.manager, e)
            self.stop.wait(self.backoff.failed())
        return False

    def run(self) -> int:
        """Play and upload until stopped (or ``segments`` are played); 0 when it ends as asked."""
        try:
            return self._run()
        finally:
            # A temp spool no one will start a worker on again: gone when empty, however the run ended.
            if self._temp_spool and not len(self.spool):
                shutil.rmtree(self.spool.dir, ignore_errors=True)
            elif self._temp_spool:
                log.warning("%d batches (%d rows) left in the temp spool %s: a worker started with that "
                            "--spool-dir sends them", len(self.spool), self.spool.rows, self.spool.dir)

    def _run(self) -> int:
        cfg, s = self.cfg, self.s
        if cfg.worker.torch_threads > 0:
            torch.set_num_threads(cfg.worker.torch_threads)
        if not self._wait_for_model():
            return 0
        self.backoff.succeeded()
        envs = s.envs if s.envs is not None else (1 if cfg.env.env == "dolphin" else cfg.worker.envs)
        # Each worker's arena and exploration from its own seed, derived from the run's (train.seed) and its index.
        seed = s.seed if s.seed is not None else derive(cfg.train.seed, "worker", s.index)
        env = make_env(cfg, num_envs=envs, device=s.device, seed=seed)
        epsilon: float | torch.Tensor = self.epsilon
        if cfg.worker.epsilon_per_env and envs > 1:
            epsilon = env_epsilons(s.index, s.count, envs, cfg.worker.epsilon_base, cfg.worker.epsilon_alpha)
            log.info("epsilon per environment: %.4f .. %.6f", float(epsilon.max()), float(epsilon.min()))
        player = SegmentPlayer(env, epsilon, cfg.worker.n_step, cfg.learner.gamma, seed=seed)
        frames = max(1, int(cfg.worker.segment_seconds * 60))
        log.info("worker %s: %d %s env(s), epsilon %.4f, model v%d, spool %s", self.worker_id, envs, cfg.env.env,
                 self.epsilon, self.version, self.spool.dir)
        segment = 0
        try:
            self.drain()  # batches left by an earlier process on this spool
            while not self.stop.is_set() and (s.segments is None or segment < s.segments):
                # The stop flag is read every decision: a SIGTERM (systemd's stop) ends the segment
                # within a macro, not after up to worker.segment_seconds of game.
                # Model v0 is the untrained network the manager starts with: random actions until a trained one.
                rows, stats = player.play(self.model, frames, stop=self.stop, uniform=self.version == 0)
                stats.extra["worker_id"] = self.worker_id
                stats.extra["epsilon"] = self.epsilon
                stats.extra.update(self.counters())
                if isinstance(env, DolphinEnv):  # restarts and games so far (TensorBoard workers/)
                    stats.extra.update(env.stats())
                self.upload(rows, stats)
                segment += 1
                fps = stats.frames / max(stats.seconds, 1e-9)
                log.info("segment %d: %d rows, %d episodes (%d untouched), %.0f frames/s, model v%d%s", segment,
                         rows.shape[0], stats.episodes, stats.untouched, fps, self.version,
                         f", {len(self.spool)} batches spooled" if len(self.spool) else "")
                if self.fetch_model():
                    log.info("model v%d loaded", self.version)
            self.finish(timeout=5.0 if self.stop.is_set() else 60.0)
        finally:
            env.close()
        self.segments_played = segment
        return 0

    def finish(self, timeout: float = 60.0) -> None:
        """Before exiting: try to send what is spooled (waiting out the backoff up to ``timeout``)."""
        deadline = time.monotonic() + timeout
        while len(self.spool) and time.monotonic() < deadline:
            self.drain()
            if len(self.spool):
                time.sleep(min(max(0.0, self.backoff.next_try - time.monotonic()), 1.0) + 0.05)
        if len(self.spool) and not self._temp_spool:  # a temp spool's are told of once, as run() ends
            log.warning("exiting with %d batches (%d rows) spooled in %s: a worker started on that --spool-dir "
                        "sends them", len(self.spool), self.spool.rows, self.spool.dir)

    def summary(self) -> dict[str, Any]:
        return {"worker_id": self.worker_id, "epsilon": self.epsilon, "segments": getattr(self, "segments_played", 0),
                "rows_made": self.rows_made, "rows_sent": self.rows_sent, "rows_duplicate": self.rows_duplicate,
                "rows_refused": self.rows_refused, "rows_dropped": self.rows_dropped,
                "rows_pending": self.spool.rows, "batches_sent": self.batches_sent,
                "spool_peak_batches": self.spool_peak_batches,
                "models_rejected": self.models_rejected, "versions_seen": self.versions_seen,
                "spool_dir": str(self.spool.dir)}


def install_signal_handlers(stop: threading.Event) -> None:
    """SIGTERM/SIGINT end the segment being played, upload or spool its rows, then exit cleanly."""
    def handler(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
