"""What a trainer checkpoint holds (:class:`TrainerCheckpoint`), written in one place and read back in one.

:meth:`Checkpointer.write` is the only writer and :func:`load_newest` the only reader. The file
holds a flat mapping (``torch.load(weights_only=True)`` reads only plain types): the learner's
``online``, ``target``, ``optimizer`` and ``train_steps``, then ``rows_ingested``,
``rows_accepted``, ``model_version``, ``config_name`` and ``ledger`` (the upload ledger's
snapshot from the rotation that started this checkpoint). A field missing or of the wrong type
is a ValueError naming it and the file.

A checkpoint rotates the upload ledger first; the ledger files older than every kept checkpoint
are then pruned (:class:`Checkpointer`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import torch

from melee_agent.rl.learner import Learner
from melee_agent.manager.checkpoint_files import newest_valid, save_checkpoint
from melee_agent.manager.ledger import LedgerSnapshot, UploadLedger

log = logging.getLogger("melee_agent.manager")
T = TypeVar("T")


@dataclass(frozen=True)
class TrainerCheckpoint:
    online: dict[str, torch.Tensor]  # the learner's networks and optimizer (Learner.state_dict)
    target: dict[str, torch.Tensor]
    optimizer: dict[str, object]
    train_steps: int
    rows_ingested: int  # written into the replay
    rows_accepted: int  # recorded in the upload ledger
    model_version: int  # the publisher's version number when it was written
    config_name: str
    ledger: LedgerSnapshot

    @property
    def learner_state(self) -> dict[str, object]:
        """What :meth:`Learner.load_state_dict` takes."""
        return {"online": self.online, "target": self.target, "optimizer": self.optimizer,
                "train_steps": self.train_steps}

    def to_state(self) -> dict[str, object]:
        return {**self.learner_state, "rows_ingested": self.rows_ingested, "rows_accepted": self.rows_accepted,
                "model_version": self.model_version, "config_name": self.config_name,
                "ledger": self.ledger.to_dict()}

    @classmethod
    def from_state(cls, state: dict[str, object], origin: str = "checkpoint") -> TrainerCheckpoint:
        """Read back what :meth:`to_state` wrote; a ValueError naming the field missing or wrong."""
        return cls(
            _field(state, "online", dict, origin), _field(state, "target", dict, origin),
            _field(state, "optimizer", dict, origin), _field(state, "train_steps", int, origin),
            _field(state, "rows_ingested", int, origin), _field(state, "rows_accepted", int, origin),
            _field(state, "model_version", int, origin), _field(state, "config_name", str, origin),
            LedgerSnapshot.from_dict(_field(state, "ledger", dict, origin), f"{origin}: field 'ledger'"),
        )


def _field(state: dict[str, object], name: str, kind: type[T], origin: str) -> T:
    if name not in state:
        raise ValueError(f"{origin}: field {name!r} is missing")
    value = state[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{origin}: field {name!r} is a {type(value).__name__}, not a {kind.__name__}")
    return value


def load_newest(run_dir: Path, device: torch.device) -> tuple[Path, TrainerCheckpoint] | None:
    """The newest checkpoint that verifies and loads (damaged files are set aside, see
    :func:`~.checkpoints.newest_valid`); a ValueError if it loads but does not hold a TrainerCheckpoint."""
    found = newest_valid(run_dir, device)
    if found is None:
        return None
    path, state = found
    return path, TrainerCheckpoint.from_state(state, f"checkpoint {path}")


class Checkpointer:
    """Writes checkpoints and prunes the upload-ledger files no kept checkpoint needs."""

    def __init__(self, run_dir: Path, ledger: UploadLedger, keep: int):
        self.run_dir, self.ledger, self.keep = run_dir, ledger, keep
        self.gens: list[int] = []  # the ledger generation each kept checkpoint starts from

    def resumed_from(self, ckpt: TrainerCheckpoint) -> None:
        self.gens = [ckpt.ledger.gen]

    def write(self, learner: Learner, rows_ingested: int, model_version: int, config_name: str) -> Path:
        snapshot = self.ledger.rotate()
        s = learner.state_dict()
        ckpt = TrainerCheckpoint(s["online"], s["target"], s["optimizer"], learner.train_steps, rows_ingested,
                                 self.ledger.rows, model_version, config_name, snapshot)
        path = save_checkpoint(self.run_dir, ckpt.to_state(), ckpt.train_steps, self.keep)
        self.gens = [*self.gens, snapshot.gen][-max(1, self.keep):]
        self.ledger.prune(self.gens[0])
        log.info("checkpoint %s", path.name)
        return path

    def write_or_warn(self, learner: Learner, rows_ingested: int, model_version: int, config_name: str) -> None:
        try:
            self.write(learner, rows_ingested, model_version, config_name)
        except OSError as e:
            log.warning("could not write a checkpoint (%s): the previous one is kept, training goes on", e)
