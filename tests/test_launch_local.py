"""`launch local`: N worker processes with their indices; a worker that dies is restarted."""

from __future__ import annotations

import time

from melee_agent.workers.launch_local import LocalFleet


def test_fleet_gives_each_worker_its_index_and_restarts_the_dead(tmp_path):
    # An unreachable manager keeps the workers waiting (alive), which is all this test needs.
    fleet = LocalFleet("http://127.0.0.1:9", 2, ["--config", "small"], log_dir=tmp_path, restart_delay=0.0)
    assert fleet.command(1)[-4:] == ["--num-workers", "2", "--config", "small"]
    assert fleet.command(1)[fleet.command(1).index("--worker-index") + 1] == "1"
    fleet.start()
    try:
        first = fleet.procs[0].pid
        fleet.procs[0].kill()
        fleet.procs[0].wait()
        deadline = time.monotonic() + 10
        restarted = []
        while not restarted and time.monotonic() < deadline:
            restarted = fleet.poll()
            time.sleep(0.05)
        assert restarted == [0] and fleet.restarts == [1, 0]
        assert fleet.procs[0].pid != first and fleet.procs[0].poll() is None
        assert fleet.procs[1].poll() is None
    finally:
        fleet.stop(timeout=10)
    assert all(p.poll() is not None for p in fleet.procs)
    assert (tmp_path / "worker-0.log").exists() and (tmp_path / "worker-1.log").exists()
