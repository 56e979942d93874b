"""Which experience batches were accepted, by ``(worker_id, batch_seq)``: remembered across restarts.

A retried upload (its 202 was lost, or the manager died after storing it) must not be stored
twice. The ledger keeps, per worker, a low-water mark ``low`` (every ``seq < low`` was seen) and
the set of seen ``seq >= low``; a set grown past ``window`` moves ``low`` up to its smallest
member, so a worker that skips numbers (its spool dropped a batch) costs bounded memory.

Durability: every accepted batch is appended as one JSON line to ``RUN_DIR/uploads/
accepted-<gen>.jsonl`` and flushed before the 202 is sent (a ``kill -9`` keeps what the kernel
holds; :meth:`sync` fsyncs about once a second against power loss). A checkpoint stores the
:class:`LedgerSnapshot` :meth:`rotate` returns as it starts a new file, so a restart loads the
snapshot plus the files from its generation on. Files older than every kept checkpoint are pruned.

Example::

    >>> import tempfile
    >>> led = UploadLedger(tempfile.mkdtemp())
    >>> led.seen("w0", 0), led.record("w0", 0, 500), led.seen("w0", 0), led.rows
    (False, None, True, 500)
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("melee_agent.manager")
_NAME = re.compile(r"^accepted-(\d{6})\.jsonl$")


class _Seen:
    __slots__ = ("low", "above")

    def __init__(self, low: int = 0, above: set[int] | None = None):
        self.low = low
        self.above = above or set()

    def __contains__(self, seq: int) -> bool:
        return seq < self.low or seq in self.above

    def add(self, seq: int, window: int) -> None:
        if seq < self.low:
            return
        self.above.add(seq)
        while self.low in self.above:
            self.above.discard(self.low)
            self.low += 1
        if len(self.above) > window:  # numbers that never came (dropped by the worker): give up on them
            self.low = min(self.above)
            while self.low in self.above:
                self.above.discard(self.low)
                self.low += 1


@dataclass(frozen=True)
class LedgerSnapshot:
    """What a checkpoint stores of the ledger: the counters and, per worker, ``[low, sorted seen seqs]``
    as of generation ``gen`` (kept as plain lists, so ``torch.load(weights_only=True)`` reads it)."""

    gen: int
    rows: int
    batches: int
    duplicates: int
    workers: dict[str, tuple[int, list[int]]]

    def to_dict(self) -> dict[str, object]:
        return {"gen": self.gen, "rows": self.rows, "batches": self.batches, "duplicates": self.duplicates,
                "workers": {w: [low, above] for w, (low, above) in self.workers.items()}}

    @classmethod
    def from_dict(cls, d: object, origin: str = "the ledger snapshot") -> LedgerSnapshot:
        """Read back what :meth:`to_dict` wrote; a ValueError naming the field that is missing or wrong."""
        if not isinstance(d, dict):
            raise ValueError(f"{origin}: not a mapping but {type(d).__name__}")
        for name in ("gen", "rows", "batches", "duplicates"):
            if not isinstance(d.get(name), int):
                raise ValueError(f"{origin}: field {name!r} is missing or not an integer ({d.get(name)!r})")
        workers = d.get("workers")
        if not isinstance(workers, dict):
            raise ValueError(f"{origin}: field 'workers' is missing or not a mapping")
        try:
            checked = {str(w): (int(low), [int(s) for s in above]) for w, (low, above) in workers.items()}
        except (TypeError, ValueError):
            raise ValueError(f"{origin}: field 'workers' is not {{worker: [low, [seq, ...]]}}") from None
        return cls(d["gen"], d["rows"], d["batches"], d["duplicates"], checked)


class UploadLedger:
    def __init__(self, run_dir: str | Path, window: int = 1024):
        self.dir = Path(run_dir) / "uploads"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.window = window
        self.workers: dict[str, _Seen] = {}
        self.rows = 0
        self.batches = 0
        self.duplicates = 0
        self._lock = threading.Lock()
        self.gen = max(self.generations(), default=0) + 1
        self._file = self._open(self.gen)
        self._dirty = False
        self._last_sync = time.monotonic()

    # --- queries and updates (thread-safe) ---
    def seen(self, worker: str, seq: int) -> bool:
        with self._lock:
            s = self.workers.get(worker)
            return s is not None and seq in s

    def _open(self, gen: int):  # noqa: ANN202
        # Unbuffered: one write() per line, so a line that failed (disk full) is never written later.
        return open(self.dir / f"accepted-{gen:06d}.jsonl", "ab", buffering=0)  # noqa: SIM115 (kept open)

    def record(self, worker: str, seq: int, rows: int) -> None:
        """Append the batch (one write, in the kernel before the 202: survives kill -9); OSError if not."""
        # The leading newline ends any line a failed write left half-written.
        line = ("\n" + json.dumps({"w": worker, "s": seq, "n": rows}, separators=(",", ":"))).encode()
        with self._lock:
            if self._file.write(line) != len(line):
                raise OSError(f"short write to the upload ledger {self.dir}")
            self._dirty = True
            self._apply(worker, seq, rows)

    def _apply(self, worker: str, seq: int, rows: int) -> None:
        self.workers.setdefault(worker, _Seen()).add(seq, self.window)
        self.rows += rows
        self.batches += 1

    def sync(self, every: float = 1.0) -> None:
        """fsync the open file if something was written and ``every`` seconds have passed."""
        now = time.monotonic()
        if self._dirty and now - self._last_sync >= every:
            with self._lock:
                self._dirty = False
                fd = self._file.fileno()
            try:
                os.fsync(fd)
            except OSError as e:  # the lines are in the kernel; only a power loss could take them now
                log.warning("upload ledger: fsync failed (%s)", e)
            self._last_sync = now

    # --- checkpoints ---
    def rotate(self) -> LedgerSnapshot:
        """Start a new file and return a snapshot of everything written before it (for a checkpoint)."""
        new = self._open(self.gen + 1)  # first, so a failure here changes nothing
        with self._lock:  # uploads wait only for the swap, not for the disk
            old, self._file = self._file, new
            self.gen += 1
            snapshot = LedgerSnapshot(self.gen, self.rows, self.batches, self.duplicates,
                                      {w: (s.low, sorted(s.above)) for w, s in self.workers.items()})
        try:
            os.fsync(old.fileno())
        finally:
            old.close()
        return snapshot

    def prune(self, keep_from_gen: int) -> None:
        """Delete the files no kept checkpoint needs (generations below ``keep_from_gen``)."""
        for gen in self.generations():
            if gen < keep_from_gen:
                (self.dir / f"accepted-{gen:06d}.jsonl").unlink(missing_ok=True)

    def generations(self) -> list[int]:
        return sorted(int(m.group(1)) for p in self.dir.iterdir() if (m := _NAME.match(p.name)))

    def restore(self, snapshot: LedgerSnapshot | None) -> None:
        """Load ``snapshot`` (None: nothing) and replay every file from its generation on."""
        with self._lock:
            start = 0
            if snapshot is not None:
                start = snapshot.gen
                self.rows, self.batches, self.duplicates = snapshot.rows, snapshot.batches, snapshot.duplicates
                self.workers = {w: _Seen(low, set(above)) for w, (low, above) in snapshot.workers.items()}
            replayed = 0
            for gen in self.generations():
                if start <= gen < self.gen:
                    replayed += self._replay(self.dir / f"accepted-{gen:06d}.jsonl")
        log.info("upload ledger: %d batches (%d rows) from %d workers remembered (%d replayed from its logs)",
                 self.batches, self.rows, len(self.workers), replayed)

    def _replay(self, path: Path) -> int:
        n = 0
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                try:
                    e = json.loads(line)
                    worker, seq, rows = str(e["w"]), int(e["s"]), int(e["n"])
                except (ValueError, KeyError, TypeError):  # a line cut short by a crash: it was never answered
                    log.warning("upload ledger %s: skipping a damaged line", path.name)
                    continue
                if worker in self.workers and seq in self.workers[worker]:
                    continue
                self._apply(worker, seq, rows)
                n += 1
        return n

    def close(self) -> None:
        with self._lock:
            try:
                os.fsync(self._file.fileno())
            finally:
                self._file.close()
