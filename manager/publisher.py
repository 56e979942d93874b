"""Publishing model versions: the one served by ``GET /v1/model`` and the files on disk.

Each publish writes ``RUN_DIR/model.safetensors`` and a numbered copy (:mod:`.model_files`) before
the new version is served, so a version is only ever seen once it is on disk. A publish that
cannot be written (disk full) keeps serving the last one and reuses the number.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from melee_agent.rl.learner import Learner
from melee_agent.rl.model import model_to_bytes
from melee_agent.envs.state import STATE_LAYOUT
from melee_agent.manager.metrics import Board
from melee_agent.manager.model_files import write_published

log = logging.getLogger("melee_agent.manager")


@dataclass(frozen=True)
class PublishedModel:
    data: bytes
    version: int
    train_step: int
    sha256: str

    @property
    def etag(self) -> str:
        return f'"{self.sha256}"'


class Publisher:
    """Holds the version number and the model being served; ``version`` is the number of the last
    publish that reached the disk (or, before the first, the one the next publish writes)."""

    def __init__(self, run_dir: Path, action_set: str, keep: int, board: Board, version: int = 0,
                 delay_frames: int = 0, character: str | None = None, seed: int | None = None,
                 state_layout: str = STATE_LAYOUT, stages: Sequence[str] | None = None):
        self.run_dir, self.action_set, self.keep, self.board = run_dir, action_set, keep, board
        self.delay_frames = delay_frames  # recorded in every model file: the input delay it trains under
        self.character = character  # recorded in every model file: the character it plays (env.characters[0])
        self.seed = seed  # recorded in every model file: the run's seed (train.seed)
        self.state_layout = state_layout  # recorded in every model file: the state layout it reads (env.state_layout)
        self.stages = None if stages is None else list(stages)  # recorded in every model file: env.stage's stages
        self.version = version
        self.model: PublishedModel | None = None

    @property
    def current(self) -> PublishedModel:
        if self.model is None:
            raise RuntimeError("nothing published yet")
        return self.model

    def publish(self, learner: Learner) -> PublishedModel:
        """Publish the learner's online network as ``version`` (raises OSError if it cannot be written)."""
        data = model_to_bytes(learner.online, version=self.version, train_step=learner.train_steps,
                              action_set=self.action_set, state_layout=self.state_layout,
                              delay_frames=self.delay_frames, character=self.character, seed=self.seed,
                              stages=self.stages)
        model = PublishedModel(data, self.version, learner.train_steps, hashlib.sha256(data).hexdigest())
        write_published(self.run_dir, data, self.version, self.keep)
        self.model = model
        self.board.scalars({"model/version": self.version}, learner.train_steps)
        return model

    def publish_next(self, learner: Learner) -> None:
        """Publish the next version; if its files cannot be written (disk full), keep serving the
        last one and reuse the number, so a version is only ever seen once it is on disk."""
        self.version += 1
        try:
            self.publish(learner)
        except OSError as e:
            self.version -= 1
            log.warning("could not write model v%d (%s): still serving v%d", self.version + 1, e,
                        self.current.version)
