"""Numbered training checkpoints: written atomically, verified on load, the last few kept.

``RUN_DIR/checkpoints/ckpt-000012000.pt`` holds the online and target networks, the optimizer,
the counters (train steps, model version) and the upload ledger's snapshot. The replay is not
saved (1M rows are cheap to refill); after a resume the trainer waits for burn-in again, as
Ape-X's learner does.

A file is ``MAGIC`` + the sha256 of the payload + the payload (``torch.save`` bytes), so a file
cut short or damaged on disk is recognised and never loaded: :func:`newest_valid` falls back to
the previous one and says so.

Example::

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = save_checkpoint(d, {"train_steps": 5}, step=5, keep=3)
    >>> load_checkpoint(latest(d))["train_steps"]
    5
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
from pathlib import Path

import torch

from melee_agent.io.files import atomic_write_bytes

log = logging.getLogger("melee_agent.manager")
_NAME = re.compile(r"^ckpt-(\d{9})\.pt$")
MAGIC = b"MACKPT1\n"  # melee-agent checkpoint, framing version 1
_DIGEST = 32


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


def save_checkpoint(run_dir: str | Path, state: dict[str, object], step: int, keep: int) -> Path:
    """Write ``state`` as checkpoint number ``step`` and delete all but the newest ``keep``."""
    buf = io.BytesIO()
    torch.save(state, buf)
    payload = buf.getvalue()
    path = checkpoint_dir(run_dir) / f"ckpt-{step:09d}.pt"
    atomic_write_bytes(path, MAGIC + hashlib.sha256(payload).digest() + payload)
    for old in list_checkpoints(run_dir)[:-max(1, keep)]:
        old.unlink(missing_ok=True)
    return path


def load_checkpoint(path: str | Path, device: str | torch.device = "cpu") -> dict[str, object]:
    """The state saved in ``path``; a ValueError naming the problem if it is cut short or damaged."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ValueError(f"checkpoint {path} cannot be read ({e})") from None
    if data.startswith(MAGIC):
        digest, payload = data[len(MAGIC):len(MAGIC) + _DIGEST], data[len(MAGIC) + _DIGEST:]
        if len(digest) < _DIGEST or hashlib.sha256(payload).digest() != digest:
            raise ValueError(f"checkpoint {path} is damaged or cut short (its sha256 does not match)")
    else:  # written before the framing: a plain torch.save file, loaded only if it parses whole
        payload = data
    try:
        state = torch.load(io.BytesIO(payload), map_location=device, weights_only=True)
    except Exception as e:  # noqa: BLE001 (a truncated or foreign file raises anything)
        raise ValueError(f"checkpoint {path} does not load ({type(e).__name__}: {e})") from None
    if not isinstance(state, dict):
        raise ValueError(f"checkpoint {path} holds a {type(state).__name__}, not a state dict")
    return state


def newest_valid(run_dir: str | Path, device: str | torch.device = "cpu") -> tuple[Path, dict[str, object]] | None:
    """The newest checkpoint that verifies and loads. A damaged one is logged and renamed
    ``*.pt.damaged`` (kept for a look, but no longer counted among the last few)."""
    for path in reversed(list_checkpoints(run_dir)):
        try:
            return path, load_checkpoint(path, device)
        except ValueError as e:
            log.warning("%s; falling back to the previous checkpoint", e)
            path.replace(path.with_name(path.name + ".damaged"))
    return None
