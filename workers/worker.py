"""The worker process: fetch the model, play a segment with it, upload n-step rows, repeat.

One loop, as in the paper and Ape-X: the model is fixed for a whole segment (default two minutes
of game time per environment), then the newest one is fetched (a 304 when nothing changed).
Rows go up in batches of ``worker.upload_rows``; the segment's episode statistics ride on the
last batch so the manager counts each episode once.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any

import torch

from melee_agent.config import Config
from melee_agent.dolphin import DolphinEnv  # light: libmelee is imported only when one is built
from melee_agent.envs import make_env
from melee_agent.model import model_from_bytes
from melee_agent.wire import encode_experience
from melee_agent.workers.client import ManagerClient, ManagerError
from melee_agent.workers.play import SegmentPlayer, ape_x_epsilon, env_epsilons

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


class Worker:
    def __init__(self, cfg: Config, settings: WorkerSettings, stop: threading.Event | None = None):
        self.cfg, self.s = cfg, settings
        self.stop = stop or threading.Event()
        self.client = ManagerClient(settings.manager, token=settings.token)
        self.worker_id = f"{cfg.env.env}-{settings.index}"
        self.epsilon = ape_x_epsilon(settings.index, settings.count, cfg.worker.epsilon_base, cfg.worker.epsilon_alpha)
        self.model: Any = None
        self.version = -1
        self.etag: str | None = None
        self.batch_seq = 0
        self.rows_sent = 0
        self.versions_seen: list[int] = []

    def fetch_model(self) -> bool:
        """Download the model if it changed; returns True when a new version was loaded."""
        data, etag, _ = self.client.model(self.etag)
        if data is None:
            return False
        model, meta = model_from_bytes(data, action_set=self.cfg.env.action_set, device=self.s.device)
        self.model, self.etag, self.version = model, etag, int(meta["version"])
        self.versions_seen.append(self.version)
        return True

    def upload(self, rows: torch.Tensor, stats: dict[str, Any]) -> None:
        arr = rows.detach().to("cpu").numpy()
        step = self.cfg.worker.upload_rows
        for start in range(0, arr.shape[0], step):
            last = start + step >= arr.shape[0]
            payload = encode_experience(arr[start:start + step], action_set=self.cfg.env.action_set,
                                        worker_id=self.worker_id, batch_seq=self.batch_seq,
                                        model_version=self.version, stats=stats if last else None)
            self.client.upload(payload)
            self.batch_seq += 1
            self.rows_sent += min(step, arr.shape[0] - start)

    def run(self) -> int:
        cfg, s = self.cfg, self.s
        if cfg.worker.torch_threads > 0:
            torch.set_num_threads(cfg.worker.torch_threads)
        while True:  # wait for the manager, but stay stoppable
            if self.stop.is_set():
                return 0
            try:
                self.client.wait_ready(timeout=5)
                break
            except ManagerError:
                log.info("waiting for the manager at %s", s.manager)
        self.fetch_model()
        envs = s.envs if s.envs is not None else (1 if cfg.env.env == "dolphin" else cfg.worker.envs)
        seed = s.seed if s.seed is not None else 1_000 * (s.index + 1) + int(time.time()) % 1_000
        env = make_env(cfg, num_envs=envs, device=s.device, seed=seed)
        epsilon: float | torch.Tensor = self.epsilon
        if cfg.worker.epsilon_per_env and envs > 1:
            epsilon = env_epsilons(s.index, s.count, envs, cfg.worker.epsilon_base, cfg.worker.epsilon_alpha)
            log.info("epsilon per environment: %.4f .. %.6f", float(epsilon.max()), float(epsilon.min()))
        player = SegmentPlayer(env, epsilon, cfg.worker.n_step, cfg.learner.gamma, seed=seed)
        frames = max(1, int(cfg.worker.segment_seconds * 60))
        log.info("worker %s: %d %s env(s), epsilon %.4f, model v%d", self.worker_id, envs, cfg.env.env,
                 self.epsilon, self.version)
        segment = 0
        try:
            while not self.stop.is_set() and (s.segments is None or segment < s.segments):
                rows, stats = player.play(self.model, frames)
                stats.extra["worker_id"] = self.worker_id
                stats.extra["epsilon"] = self.epsilon
                if isinstance(env, DolphinEnv):  # restarts and games so far (TensorBoard workers/)
                    stats.extra.update(env.stats())
                self.upload(rows, stats.to_dict())
                segment += 1
                fps = stats.frames / max(stats.seconds, 1e-9)
                log.info("segment %d: %d rows, %d episodes (%d untouched), %.0f frames/s, model v%d", segment,
                         rows.shape[0], stats.episodes, stats.untouched, fps, self.version)
                if self.fetch_model():
                    log.info("model v%d loaded", self.version)
        finally:
            env.close()
        self.segments_played = segment
        return 0

    def summary(self) -> dict[str, Any]:
        return {"worker_id": self.worker_id, "epsilon": self.epsilon, "segments": getattr(self, "segments_played", 0),
                "rows_sent": self.rows_sent, "batches_sent": self.batch_seq, "versions_seen": self.versions_seen}


def install_signal_handlers(stop: threading.Event) -> None:
    """SIGTERM/SIGINT finish the current segment's upload, then exit cleanly."""
    def handler(signum: int, frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
