"""Numbered training checkpoints: written atomically, the last few kept, the newest resumed.

``RUN_DIR/checkpoints/ckpt-000012000.pt`` holds the online and target networks, the optimizer,
the counters (train steps, rows ingested, model version). The replay is not saved (1M rows are
cheap to refill); after a resume the trainer waits for burn-in again, as Ape-X's learner does.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import torch

from melee_agent.files import atomic_write_bytes

_NAME = re.compile(r"^ckpt-(\d{9})\.pt$")


def checkpoint_dir(run_dir: str | Path) -> Path:
    return Path(run_dir) / "checkpoints"


def list_checkpoints(run_dir: str | Path) -> list[Path]:
    d = checkpoint_dir(run_dir)
    if not d.is_dir():
        return []
    return sorted(p for p in d.iterdir() if _NAME.match(p.name))


def latest(run_dir: str | Path) -> Path | None:
    found = list_checkpoints(run_dir)
    return found[-1] if found else None


def save_checkpoint(run_dir: str | Path, state: dict[str, Any], step: int, keep: int) -> Path:
    """Write ``state`` as checkpoint number ``step`` and delete all but the newest ``keep``."""
    buf = io.BytesIO()
    torch.save(state, buf)
    path = checkpoint_dir(run_dir) / f"ckpt-{step:09d}.pt"
    atomic_write_bytes(path, buf.getvalue())
    for old in list_checkpoints(run_dir)[:-max(1, keep)]:
        old.unlink(missing_ok=True)
    return path


def load_checkpoint(path: str | Path, device: str | torch.device = "cpu") -> dict[str, Any]:
    try:
        return torch.load(path, map_location=device, weights_only=True)
    except Exception as e:  # a truncated or foreign file
        raise ValueError(f"checkpoint {path} does not load ({type(e).__name__}: {e})") from None
