"""Start `melee-agent manager` as a child process on a free loopback port and wait until it serves.

Used by :class:`melee_agent.run.training.TrainingRun` and `bench ingest`, which both need a real
manager beside them.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path



class ManagerProcessError(RuntimeError):
    """The manager process exited or never became ready; the message ends with its log's tail."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class ManagerProcess:
    """``with ManagerProcess(flags, run_dir, log) as m:`` -> ``m.url`` serves; stopped with SIGINT on exit."""

    def __init__(self, flags: list[str], run_dir: Path, log_path: Path, port: int = 0, ready_timeout: float = 180):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.cmd = [sys.executable, "-m", "melee_agent.cli.main", "manager", *flags, "--run-dir", str(run_dir),
                    "--host", "127.0.0.1", "--port", str(self.port)]
        self.ready_timeout = ready_timeout
        self.proc: subprocess.Popen | None = None

    def start(self) -> "ManagerProcess":
        import httpx  # noqa: PLC0415

        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.ready_timeout
        while True:
            self.check()
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:  # not listening yet
                pass
            if time.monotonic() > deadline:
                raise ManagerProcessError(f"the manager did not become ready in {self.ready_timeout:.0f} s:\n"
                                   f"{tail(self.log_path)}")
            time.sleep(0.5)

    def check(self) -> None:
        """Raise if the manager process has exited."""
        if self.proc is not None and self.proc.poll() is not None:
            raise ManagerProcessError(f"the manager exited with code {self.proc.returncode}:\n{tail(self.log_path)}")

    def stop(self, timeout: float = 60) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)  # the manager checkpoints and flushes TensorBoard on the way out
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> "ManagerProcess":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
