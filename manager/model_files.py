"""Published model files on disk: the newest as ``RUN_DIR/model.safetensors``, the last few numbered.

Each publish writes ``RUN_DIR/models/model-v000012.safetensors`` and ``RUN_DIR/model.safetensors``
atomically (temp file, fsync, rename) and keeps the newest ``keep`` numbered files. A restarted
manager reads them back to learn the highest version ever published (versions never go back)
and, where no checkpoint exists yet, to resume from the newest model that verifies.

Example::

    >>> import tempfile
    >>> from melee_agent.rl.model import DuelingDQN, model_to_bytes
    >>> d = tempfile.mkdtemp()
    >>> write_published(d, model_to_bytes(DuelingDQN(), version=4, train_step=40, action_set="untouchable"), 4, keep=3)
    >>> newest_valid_model(d, "untouchable").version
    4
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from melee_agent.io.files import atomic_write_bytes
from melee_agent.rl.model import DuelingDQN, model_from_bytes

log = logging.getLogger("melee_agent.manager")
_NAME = re.compile(r"^model-v(\d{6,})\.safetensors$")


@dataclass(frozen=True)
class StoredModel:
    path: Path
    model: DuelingDQN
    meta: dict[str, Any]

    @property
    def version(self) -> int:
        return int(self.meta["version"])

    @property
    def train_step(self) -> int:
        return int(self.meta["train_step"])


def models_dir(run_dir: str | Path) -> Path:
    return Path(run_dir) / "models"


def write_published(run_dir: str | Path, data: bytes, version: int, keep: int) -> None:
    run_dir = Path(run_dir)
    atomic_write_bytes(models_dir(run_dir) / f"model-v{version:06d}.safetensors", data)
    atomic_write_bytes(run_dir / "model.safetensors", data)
    numbered = sorted(p for p in models_dir(run_dir).iterdir() if _NAME.match(p.name))
    for old in numbered[:-max(1, keep)]:
        old.unlink(missing_ok=True)


def stored_models(run_dir: str | Path, action_set: str) -> list[StoredModel]:
    """Every model file of the run that verifies (its own weights digest, metadata), newest version first."""
    run_dir = Path(run_dir)
    paths = [run_dir / "model.safetensors"]
    if models_dir(run_dir).is_dir():
        paths += [p for p in models_dir(run_dir).iterdir() if _NAME.match(p.name)]
    found = []
    for path in paths:
        if not path.is_file():
            continue
        try:
            model, meta = model_from_bytes(path.read_bytes(), action_set=action_set, state_layout=None,
                                           origin=str(path))  # any layout: the learner's load says if it fits
        except (OSError, ValueError) as e:
            log.warning("skipping model file %s: %s", path, e)
            continue
        found.append(StoredModel(path, model, meta))
    return sorted(found, key=lambda m: (m.version, m.train_step), reverse=True)


def newest_valid_model(run_dir: str | Path, action_set: str) -> StoredModel | None:
    found = stored_models(run_dir, action_set)
    return found[0] if found else None
