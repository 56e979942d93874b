"""Where a run starts: refuse to write over an earlier run, or continue one (``--resume``).

``--resume`` continues from the newest checkpoint that loads (:func:`.checkpoint_state.load_newest`),
or where there is none yet from the newest published model with a fresh optimizer (the upload
ledger is then replayed from all its files). The first version published after a restart is above
every version published before it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import torch

from melee_agent.rl.learner import Learner
from melee_agent.manager.checkpoint_contents import TrainerCheckpoint, load_newest
from melee_agent.manager.checkpoint_files import list_checkpoints
from melee_agent.manager.ledger import UploadLedger
from melee_agent.manager.model_files import stored_models
from melee_agent.rl.model import sizes_of_weights

log = logging.getLogger("melee_agent.manager")


def check_run_dir(run_dir: str | Path, resume: bool) -> None:
    """Before serving: a fresh run must not write over an earlier one; ``--resume`` needs one."""
    run_dir = Path(run_dir)
    held = bool(list_checkpoints(run_dir)) or (run_dir / "models").is_dir() or (run_dir / "model.safetensors").exists()
    if not resume and held:
        raise FileExistsError(f"{run_dir} already holds a run (checkpoints or published models): "
                              "pass --resume to continue it, or choose a new --run-dir")
    if resume and not held:
        raise FileNotFoundError(f"--resume: nothing to resume in {run_dir}: no checkpoint and no published model")


@dataclass(frozen=True)
class Resumed:
    next_version: int  # the version the next publish takes
    rows_ingested: int
    source: str  # the file name it continued from
    checkpoint: TrainerCheckpoint | None  # None: from a published model


def resume(run_dir: Path, action_set: str, device: torch.device, learner: Learner, ledger: UploadLedger) -> Resumed:
    """Load the learner and the ledger from the newest checkpoint or published model of ``run_dir``."""
    models = stored_models(run_dir, action_set)
    published = max((m.version for m in models), default=-1)
    found = load_newest(run_dir, device)
    ckpt = None
    if found is not None:
        path, ckpt = found
        _check_width(sizes_of_weights(ckpt.learner_state["online"]), learner, f"checkpoint {path.name}")
        learner.load_state_dict(ckpt.learner_state)
        ledger.restore(ckpt.ledger)
        rows_ingested, checkpointed, source = ckpt.rows_ingested, ckpt.model_version, path.name
        how = f"checkpoint {path.name}"
    elif models:
        m = models[0]
        _check_width(m.model.sizes(), learner, f"published model {m.path.name}")
        learner.online.load_state_dict(m.model.state_dict())
        learner.sync_target()
        learner.train_steps = m.train_step
        ledger.restore(None)
        rows_ingested, checkpointed, source = ledger.rows, m.version, m.path.name
        how = f"published model v{m.version} ({m.path.name}) with a fresh optimizer: no checkpoint loads yet"
    else:
        raise FileNotFoundError(f"--resume: nothing to resume in {run_dir}: no checkpoint that loads "
                                "and no published model")
    # Versions never go back, even when the last publish came after the last checkpoint.
    version = max(checkpointed, published) + 1
    log.info("resumed from %s: step %d; the next model is v%d (v%d was the last published)", how,
             learner.train_steps, version, published)
    return Resumed(version, rows_ingested, source, ckpt)


def _check_width(stored: dict[str, int], learner: Learner, what: str) -> None:
    """A clear error where the run's stored network and the one this config builds differ in shape."""
    have = learner.online.sizes()
    if stored != have:
        keys = sorted(set(stored) | set(have))
        diff = ", ".join(f"{k} {stored.get(k, 0)} (the config: {have.get(k, 0)})" for k in keys
                         if stored.get(k, 0) != have.get(k, 0))
        raise ValueError(f"--resume: {what} holds a network of another shape: {diff}; resume with the run's own "
                         "settings (its config.json: learner.shared, learner.stream, learner.action_embed, "
                         "env.action_set)")
