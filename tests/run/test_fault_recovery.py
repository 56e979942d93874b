"""Workers playing while the manager is killed with SIGKILL and restarted with --resume: the workers
carry on by themselves, no batch is lost or stored twice, model versions never go back; a long
outage fills the spool, and what it dropped is counted up to TensorBoard."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from melee_agent.config import load_config
from melee_agent.manager.spawn import ManagerProcess, free_port
from melee_agent.manager.model_files import newest_valid_model
from melee_agent.workers.worker import Worker, WorkerSettings
from tests.manager_kit import wait_for

ROOT = Path(__file__).resolve().parents[2]
FLAGS = ["--config", "small", "--set", "manager.burn_in=500", "--set", "manager.checkpoint_every=150",
         "--set", "worker.segment_seconds=1"]
SEGMENTS = 30  # the manager is killed about 10 segments in; the rest are played across the outage and after


@pytest.mark.slow
def test_manager_killed_mid_run_and_resumed_loses_nothing_and_stores_nothing_twice(tmp_path):
    run_dir = tmp_path / "run"
    port = free_port()
    first = ManagerProcess(FLAGS, run_dir, tmp_path / "manager.log", port=port).start()
    url = first.url
    workers = [subprocess.Popen([sys.executable, "-m", "melee_agent.cli.main", "worker", *FLAGS, "--manager", url,
                                 "--worker-index", str(i), "--num-workers", "2", "--segments", str(SEGMENTS), "--seed", str(i),
                                 "--spool-dir", str(tmp_path / f"spool-{i}"), "--json", str(tmp_path / f"w{i}.json"),
                                 "--set", "worker.backoff_max_s=2"],
                                cwd=ROOT, stdout=open(tmp_path / f"worker-{i}.log", "wb"), stderr=subprocess.STDOUT)
               for i in range(2)]
    second = None
    try:
        before = wait_for(lambda: (s := httpx.get(f"{url}/v1/status").json())["model_version"] >= 2
                          and s["rows_accepted"] >= 1_000 and s, timeout=240)
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(30)
        killed_version = newest_valid_model(run_dir, "untouchable").version  # the last one published
        time.sleep(6.0)  # the workers play on and spool
        assert all(w.poll() is None for w in workers), "a worker exited while the manager was away"
        # Copies of the batches waiting in the spools: after the run they are sent again, as a worker
        # whose answers were lost would, and must all be refused as duplicates.
        waiting = [p.read_bytes() for i in range(2) for p in sorted((tmp_path / f"spool-{i}").glob("batch-*.st"))]
        second = ManagerProcess([*FLAGS, "--resume"], run_dir, tmp_path / "manager.log", port=port).start()
        after_restart = httpx.get(f"{url}/v1/status").json()
        for w in workers:
            assert w.wait(400) == 0, (tmp_path / "worker-0.log").read_text()[-3000:]
        status = httpx.get(f"{url}/v1/status").json()
        answers = [httpx.post(f"{url}/v1/experience", content=b).json() for b in waiting]
        status_after_resend = httpx.get(f"{url}/v1/status").json()
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
        if second is not None:
            second.stop()
        if first.proc.poll() is None:
            first.proc.kill()
    summaries = [json.loads((tmp_path / f"w{i}.json").read_text()) for i in range(2)]
    counts = {
        "rows_made": sum(s["rows_made"] for s in summaries),
        "rows_sent": sum(s["rows_sent"] for s in summaries),
        "rows_duplicate_answers": sum(s["rows_duplicate"] for s in summaries),
        "rows_dropped": sum(s["rows_dropped"] for s in summaries),
        "rows_refused": sum(s["rows_refused"] for s in summaries),
        "rows_pending": sum(s["rows_pending"] for s in summaries),
        "spool_peak_batches": [s["spool_peak_batches"] for s in summaries],
        "manager_rows_accepted": status["rows_accepted"],
        "resent_after_the_run": len(answers),
        "duplicates_refused_after_restart": status_after_resend["duplicates_refused"],
        "version_at_kill": before["model_version"], "version_after_restart": after_restart["model_version"],
    }
    print("fault test counts:", json.dumps(counts))
    (tmp_path / "counts.json").write_text(json.dumps(counts))
    # Nothing lost: every row made was taken by the manager (the spool bound was never reached).
    assert counts["rows_dropped"] == counts["rows_refused"] == counts["rows_pending"] == 0
    assert counts["rows_made"] == counts["rows_sent"] == counts["manager_rows_accepted"]
    # Nothing stored twice: the manager counts every batch it stores (its ledger line comes before
    # the queue), and that count equals the rows made, each batch made once.
    assert answers and all(a["duplicate"] is True and a["accepted"] == 0 for a in answers)
    assert status_after_resend["rows_accepted"] == status["rows_accepted"]
    assert status_after_resend["duplicates_refused"] == status["duplicates_refused"] + len(answers)
    for s in summaries:
        assert s["versions_seen"] == sorted(s["versions_seen"]), "a worker saw a model version go back"
    # The workers really were cut off, and came back by themselves.
    assert max(counts["spool_peak_batches"]) >= 2
    assert all(s["segments"] == SEGMENTS for s in summaries)
    assert counts["version_after_restart"] > killed_version
    assert status["model_version"] >= counts["version_after_restart"]


def _last_scalar(run_dir: Path, tag: str) -> float | None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    found: list[tuple[float, float]] = []
    for f in run_dir.glob("events.out.tfevents.*"):
        acc = EventAccumulator(str(f), size_guidance={"scalars": 0})
        acc.Reload()
        if tag in acc.Tags()["scalars"]:
            found += [(e.wall_time, e.value) for e in acc.Scalars(tag)]
    return max(found)[1] if found else None


@pytest.mark.slow
def test_a_long_outage_fills_the_spool_and_drops_the_oldest_counted_up_to_tensorboard(tmp_path):
    import threading

    run_dir, port = tmp_path / "run", free_port()
    flags = ["--config", "small", "--set", "manager.burn_in=300"]
    manager = ManagerProcess(flags, run_dir, tmp_path / "manager.log", port=port).start()
    # About 250 rows (57 KB) a segment and room for about 2 batches: a 5 s outage overflows it.
    cfg = load_config("small", ["worker.segment_seconds=1", "worker.spool_mb=0.12", "worker.backoff_max_s=1"])
    worker = Worker(cfg, WorkerSettings(manager=manager.url, spool_dir=tmp_path / "spool", segments=40, seed=1))
    result: dict = {}
    thread = threading.Thread(target=lambda: result.setdefault("code", worker.run()), daemon=True)
    thread.start()
    try:
        wait_for(lambda: worker.batches_sent >= 2, timeout=120)
        manager.proc.send_signal(signal.SIGKILL)
        manager.proc.wait(30)
        wait_for(lambda: worker.spool.dropped_batches >= 2, timeout=120)  # it plays on, spooling
        manager = ManagerProcess([*flags, "--resume"], run_dir, tmp_path / "manager.log", port=port).start()
        thread.join(300)
        assert result.get("code") == 0
        status = httpx.get(f"{manager.url}/v1/status").json()
    finally:
        manager.stop()
    s = worker.summary()
    assert s["rows_dropped"] > 0 and s["rows_pending"] == 0 and s["segments"] == 40
    assert s["rows_made"] == s["rows_sent"] + s["rows_dropped"]
    assert status["rows_accepted"] == s["rows_sent"]
    # The count reached the manager with the worker's statistics (TensorBoard workers/, from the event files).
    assert _last_scalar(run_dir, "workers/spool_dropped_rows") == s["rows_dropped"]
