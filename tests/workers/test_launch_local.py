"""`launch local`: N worker processes with their indices; a worker that dies is restarted, one that
keeps dying at its start stops the fleet."""

from __future__ import annotations

import time

import pytest

from melee_agent.workers.launch_local import FleetError, LocalFleet


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


def _poll_until(fleet, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        fleet.poll()
        time.sleep(0.05)


@pytest.mark.slow
def test_a_worker_that_keeps_dying_at_start_stops_the_fleet_with_its_log(tmp_path):
    # A config no worker can load: every worker exits at once, with the reason in its log.
    fleet = LocalFleet("http://127.0.0.1:9", 1, ["--config", "no-such-config"], log_dir=tmp_path,
                       restart_delay=0.0, crash_loop=3)
    fleet.start()
    try:
        with pytest.raises(FleetError) as e:
            _poll_until(fleet, 120)
    finally:
        fleet.stop(timeout=10)
    assert fleet.restarts == [2]  # started once, restarted twice, not a fourth time
    msg = str(e.value)
    assert "worker 0 exited with code 2 3 times in a row" in msg
    assert "no-such-config" in msg and str(tmp_path / "worker-0.log") in msg


@pytest.mark.slow
def test_deaths_after_a_long_life_are_restarted_for_ever(tmp_path):
    # quick_seconds = 0: no death counts as a quick one, so the same crashing worker is restarted on.
    fleet = LocalFleet("http://127.0.0.1:9", 1, ["--config", "no-such-config"], log_dir=tmp_path,
                       restart_delay=0.0, crash_loop=1, quick_seconds=0.0)
    fleet.start()
    try:
        deadline = time.monotonic() + 120
        while fleet.restarts[0] < 2 and time.monotonic() < deadline:
            fleet.poll()
            time.sleep(0.05)
    finally:
        fleet.stop(timeout=10)
    assert fleet.restarts == [2]


def test_the_fleets_own_temporary_spool_goes_when_empty_and_stays_while_it_holds_batches(tmp_path, monkeypatch, caplog):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    fleet = LocalFleet("http://127.0.0.1:9", 2, [], log_dir=tmp_path / "logs")
    root = fleet.spool_root
    assert root is not None and root.parent == tmp_path and root.name.startswith("melee-agent-spool-")
    (root / "worker-1").mkdir()
    (root / "worker-1" / "identity.json").write_text("{}")
    batch = root / "worker-1" / "batch-000000000007-500.st"
    batch.write_bytes(b"rows")
    with caplog.at_level("WARNING", logger="melee_agent.launch"):
        fleet.stop()  # never started: nothing to wait for
    assert batch.exists() and "1 spooled batches left in" in caplog.text  # unsent rows are never deleted
    batch.unlink()
    fleet.stop()
    assert not root.exists()
    given = tmp_path / "spool"
    (given / "worker-0").mkdir(parents=True)
    LocalFleet("http://127.0.0.1:9", 1, [], spool_root=given).stop()
    assert (given / "worker-0").is_dir()  # a folder the user named is theirs
