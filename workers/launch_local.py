"""Run N worker processes on this machine and restart any that dies (`melee-agent launch local`).

A worker that dies again and again right after it starts (a bad flag, a config its workers refuse) is
not restarted for ever: after ``crash_loop`` such deaths in a row the fleet raises
:class:`FleetError` with the worker's log tail, so `train` and `launch local` stop with the cause
instead of running on with no rows.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import tempfile
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from melee_agent.workers.spool import batch_files

log = logging.getLogger("melee_agent.launch")


class FleetError(RuntimeError):
    """A worker keeps dying right after it starts; the message names it and ends with its log's tail."""


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@dataclass
class LocalFleet:
    """N `melee-agent worker` processes with indices 0..N-1; ``poll()`` restarts the dead ones."""

    manager: str
    count: int
    worker_args: list[str] = field(default_factory=list)  # extra flags: --config, --set, --envs, ...
    log_dir: Path | None = None
    spool_root: Path | None = None  # worker i spools in spool_root/worker-i (default: a temporary folder, made here)
    restart_delay: float = 2.0
    env: dict[str, str] | None = None
    crash_loop: int = 3
    """Deaths in a row, each within ``quick_seconds`` of the worker's start, that raise :class:`FleetError`."""
    quick_seconds: float = 60.0
    """A worker that lived this long before dying starts its count of quick deaths again."""
    procs: list[subprocess.Popen | None] = field(default_factory=list)
    _own_spool: bool = False  # spool_root is a temporary folder made here, removed by stop() once empty
    restarts: list[int] = field(default_factory=list)
    _died_at: list[float] = field(default_factory=list)
    _started_at: list[float] = field(default_factory=list)
    _quick_deaths: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError(f"--count must be at least 1, got {self.count}")
        self.procs = [None] * self.count
        if self.spool_root is None:
            # One folder per index for the fleet's life: a restarted worker sends what the dead one left.
            self.spool_root = Path(tempfile.mkdtemp(prefix="melee-agent-spool-"))
            self._own_spool = True
        self.restarts = [0] * self.count
        self._died_at = [0.0] * self.count
        self._started_at = [0.0] * self.count
        self._quick_deaths = [0] * self.count

    def command(self, index: int) -> list[str]:
        assert self.spool_root is not None  # set in __post_init__
        return [sys.executable, "-m", "melee_agent.cli.main", "worker", "--manager", self.manager,
                "--spool-dir", str(self.spool_root / f"worker-{index}"), "--worker-index", str(index),
                "--num-workers", str(self.count), *self.worker_args]

    def _spawn(self, index: int) -> subprocess.Popen:
        out = None
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            out = open(self.log_dir / f"worker-{index}.log", "ab")  # noqa: SIM115 (the child owns it)
        env = dict(os.environ if self.env is None else self.env)
        proc = subprocess.Popen(self.command(index), stdout=out, stderr=subprocess.STDOUT if out else None, env=env)
        if out is not None:
            out.close()
        self._started_at[index] = time.monotonic()
        return proc

    def start(self) -> None:
        for i in range(self.count):
            self.procs[i] = self._spawn(i)
        log.info("started %d workers against %s", self.count, self.manager)

    def poll(self) -> list[int]:
        """Restart workers that exited (after ``restart_delay``); returns the indices restarted.

        Raises :class:`FleetError` when a worker has died ``crash_loop`` times in a row within
        ``quick_seconds`` of starting.
        """
        restarted = []
        now = time.monotonic()
        for i, p in enumerate(self.procs):
            if p is None or p.poll() is None:
                continue
            if not self._died_at[i]:
                self._died_at[i] = now
                quick = now - self._started_at[i] < self.quick_seconds
                self._quick_deaths[i] = self._quick_deaths[i] + 1 if quick else 0
                if self._quick_deaths[i] >= self.crash_loop:
                    where = self.log_dir / f"worker-{i}.log" if self.log_dir is not None else None
                    raise FleetError(
                        f"worker {i} exited with code {p.returncode} {self._quick_deaths[i]} times in a row, each "
                        f"within {self.quick_seconds:.0f} s of starting; not restarting it again"
                        + (f". The end of {where}:\n{_tail(where)}" if where is not None else
                           " (its output went to this terminal)"))
                log.warning("worker %d exited with code %s; restarting", i, p.returncode)
            if now - self._died_at[i] >= self.restart_delay:
                self.procs[i] = self._spawn(i)
                self.restarts[i] += 1
                self._died_at[i] = 0.0
                restarted.append(i)
        return restarted

    def stop(self, timeout: float = 20.0) -> None:
        for p in self.procs:
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for p in self.procs:
            if p is None:
                continue
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if self._own_spool and self.spool_root is not None:
            self._remove_temporary_spool(self.spool_root)

    @staticmethod
    def _remove_temporary_spool(root: Path) -> None:
        """Remove the fleet's temporary spool unless a worker left batches in it (then say where they are).

        Its workers' identities die with it: the next fleet makes a new temporary folder and new workers.
        """
        left = [b for folder in sorted(root.glob("worker-*")) for b in batch_files(folder)]
        if left:
            log.warning("%d spooled batches left in %s: a worker started with --spool-dir %s/worker-N sends them",
                        len(left), root, root)
        else:
            shutil.rmtree(root, ignore_errors=True)
