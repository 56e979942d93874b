"""A worker's outbox on disk: experience batches wait here, in order, until the manager takes them.

Every batch is written here first (one file per batch, atomically) and deleted once the manager
answered 202, so rows survive a manager that is down, busy or restarting, and a worker process
that is killed (the next one on the same ``--spool-dir`` sends them). The spool is bounded in
bytes: past ``max_bytes`` the oldest batches are dropped, counted and logged.

The folder also keeps the worker's identity (``identity.json``: ``worker_id`` and the next
``batch_seq``), so a restarted worker continues its numbering and the manager can tell a retried
batch from a new one.

Example::

    >>> import tempfile
    >>> s = Spool(tempfile.mkdtemp(), max_bytes=10)
    >>> s.put(0, b"12345", rows=1); s.put(1, b"67890", rows=1); s.put(2, b"abc", rows=1)
    >>> s.seqs(), s.dropped_batches
    ([1, 2], 1)
"""

from __future__ import annotations

import json
import logging
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from melee_agent.io.files import atomic_write_bytes, atomic_write_json

log = logging.getLogger("melee_agent.worker")
_NAME = re.compile(r"^batch-(\d{12})-(\d+)\.st$")


def batch_files(folder: Path) -> list[Path]:
    """The batches waiting in the spool ``folder`` (none where it does not exist), by their file names."""
    return sorted(p for p in folder.iterdir() if _NAME.match(p.name)) if folder.is_dir() else []


@dataclass
class Identity:
    worker_id: str
    next_seq: int


class Spool:
    def __init__(self, folder: str | Path, max_bytes: int):
        if max_bytes <= 0:
            raise ValueError(f"the spool needs a positive size bound, got {max_bytes} bytes")
        self.dir = Path(folder)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.max_bytes = max_bytes
        self.dropped_batches = 0
        self.dropped_rows = 0
        self._files: dict[int, tuple[Path, int, int]] = {}  # seq -> (path, bytes, rows)
        for p in self.dir.iterdir():
            if (m := _NAME.match(p.name)) is not None:
                self._files[int(m.group(1))] = (p, p.stat().st_size, int(m.group(2)))
            elif p.name.startswith(".batch-") and p.name.endswith(".tmp"):
                p.unlink(missing_ok=True)  # a write cut short by a crash: never renamed, never counted

    # --- identity ---
    def identity(self, default_prefix: str) -> Identity:
        """This folder's worker identity, made (``<prefix>-<random>``) on first use."""
        path = self.dir / "identity.json"
        ident: Identity | None = None
        try:
            d = json.loads(path.read_text())
            ident = Identity(str(d["worker_id"]), int(d["next_seq"]))
        except FileNotFoundError:
            pass
        except (ValueError, KeyError, TypeError) as e:
            log.warning("spool identity %s is damaged (%s): starting a new identity", path, e)
        if ident is None:
            ident = Identity(f"{default_prefix}-{secrets.token_hex(4)}", 0)
        # A batch spooled just before a crash may be newer than the saved counter.
        ident.next_seq = max(ident.next_seq, max(self._files, default=-1) + 1)
        self.save_identity(ident)
        return ident

    def save_identity(self, ident: Identity) -> None:
        atomic_write_json(self.dir / "identity.json", {"worker_id": ident.worker_id, "next_seq": ident.next_seq})

    # --- batches ---
    def put(self, seq: int, payload: bytes, rows: int) -> None:
        path = self.dir / f"batch-{seq:012d}-{rows}.st"
        atomic_write_bytes(path, payload)
        self._files[seq] = (path, len(payload), rows)
        while self.bytes > self.max_bytes and len(self._files) > 1:
            oldest = min(self._files)
            p, _, n = self._files.pop(oldest)
            p.unlink(missing_ok=True)
            self.dropped_batches += 1
            self.dropped_rows += n
            log.warning("spool over %d bytes: dropped batch %d (%d rows); %d batches (%d rows) dropped so far",
                        self.max_bytes, oldest, n, self.dropped_batches, self.dropped_rows)

    def seqs(self) -> list[int]:
        return sorted(self._files)

    def oldest(self) -> tuple[int, bytes, int] | None:
        """``(seq, payload, rows)`` of the oldest waiting batch, or None."""
        while self._files:
            seq = min(self._files)
            path, _, rows = self._files[seq]
            try:
                return seq, path.read_bytes(), rows
            except OSError as e:
                log.warning("spooled batch %s cannot be read (%s): dropped", path.name, e)
                self._files.pop(seq)
                self.dropped_batches += 1
                self.dropped_rows += rows
        return None

    def remove(self, seq: int) -> None:
        path, _, _ = self._files.pop(seq)
        path.unlink(missing_ok=True)

    @property
    def bytes(self) -> int:
        return sum(b for _, b, _ in self._files.values())

    @property
    def rows(self) -> int:
        return sum(r for _, _, r in self._files.values())

    def __len__(self) -> int:
        return len(self._files)
