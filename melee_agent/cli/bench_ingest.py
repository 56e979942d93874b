"""`melee-agent bench ingest`: rows/s the manager accepts over loopback HTTP while it trains.

Starts a real manager (its own process, uvicorn on a free 127.0.0.1 port, training once burn-in
is reached), then ``--uploaders`` threads POST pre-encoded ``--rows``-row batches for
``--seconds``. Reports accepted rows/s, 429 answers, the trainer's steps/s during the run, and
the manager's resident memory sampled over the run (it must stay flat: the replay is allocated
up front and nothing grows per request).
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from melee_agent.cli.common import forward_flags
from melee_agent.rows import ACTION, DISCOUNT, ROW_WIDTH

TARGET_ROWS_PER_S = 100_000


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seconds", type=float, default=60.0, help="upload time (default: %(default)s)")
    p.add_argument("--uploaders", type=int, default=8, help="concurrent uploaders (default: %(default)s)")
    p.add_argument("--rows", type=int, default=2000, help="rows per batch (default: %(default)s)")
    p.add_argument("--quick", action="store_true", help="5 s, a 50,000-row replay (for tests)")


def _rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _batch(rows: int, seed: int) -> bytes:
    from melee_agent.wire import encode_experience  # noqa: PLC0415

    r = np.random.default_rng(seed).random((rows, ROW_WIDTH), dtype=np.float32)
    r[:, ACTION] = np.arange(rows) % 5
    r[:, DISCOUNT] = 0.97
    return encode_experience(r, action_set="untouchable", worker_id=f"bench-{seed}", batch_seq=0, model_version=0,
                             stats={"episodes": 1, "return_sum": 1.0, "length_sum": 60, "hits": 1, "frames": 60})


def run(args: argparse.Namespace) -> dict[str, Any]:
    import httpx  # noqa: PLC0415

    from melee_agent.manager.process import ManagerProcess  # noqa: PLC0415

    seconds = 5.0 if args.quick else args.seconds
    if args.uploaders < 1 or args.rows < 1 or seconds <= 0:
        raise ValueError("--uploaders, --rows and --seconds must be positive")
    capacity = 50_000 if args.quick else 1_000_000
    run_dir = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    flags = forward_flags(args, (f"replay.capacity={capacity}", "manager.burn_in=10000",
                                 "manager.max_train_per_row=1000", f"manager.max_upload_rows={max(args.rows, 2000)}"))
    manager = ManagerProcess(flags, run_dir, run_dir / "manager.log")
    url = manager.url
    try:
        manager.start()
        proc = manager.proc
        assert proc is not None
        payloads = [_batch(args.rows, i) for i in range(args.uploaders)]
        accepted = [0] * args.uploaders
        busy = [0] * args.uploaders
        errors: list[str] = []
        stop = threading.Event()

        def upload(i: int) -> None:
            with httpx.Client(base_url=url, timeout=30) as c:
                while not stop.is_set():
                    r = c.post("/v1/experience", content=payloads[i], headers={"Content-Type": "application/octet-stream"})
                    if r.status_code == 202:
                        accepted[i] += args.rows
                    elif r.status_code == 429:
                        busy[i] += 1
                        time.sleep(float(r.headers.get("retry-after", "0.05")) * 0.05)
                    else:
                        errors.append(f"{r.status_code} {r.text[:200]}")
                        return

        rss = [_rss_mib(proc.pid)]
        status0 = httpx.get(f"{url}/v1/status").json()
        threads = [threading.Thread(target=upload, args=(i,), daemon=True) for i in range(args.uploaders)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        while time.perf_counter() - t0 < seconds:
            time.sleep(min(1.0, seconds / 10))
            rss.append(_rss_mib(proc.pid))
        stop.set()
        for t in threads:
            t.join(60)
        dt = time.perf_counter() - t0
        status1 = httpx.get(f"{url}/v1/status").json()
    finally:
        manager.stop()
    if errors:
        raise RuntimeError(f"uploads failed: {errors[0]}")
    rows_per_s = sum(accepted) / dt
    steps = status1["train_steps"] - status0["train_steps"]
    half = len(rss) // 2
    result = {
        "seconds": round(dt, 2), "uploaders": args.uploaders, "rows_per_batch": args.rows,
        "rows_accepted": sum(accepted), "server_rows_accepted": status1["rows_accepted"] - status0["rows_accepted"],
        "rows_per_s": rows_per_s, "busy_429": sum(busy), "train_steps": steps, "train_steps_per_s": steps / dt,
        "rss_mib_start": rss[0], "rss_mib_mid": rss[half], "rss_mib_end": rss[-1],
        "rss_mib_growth_second_half": rss[-1] - rss[half], "replay_capacity": capacity,
        "target": {"rows_per_s": TARGET_ROWS_PER_S, "met": rows_per_s >= TARGET_ROWS_PER_S},
    }
    print(f"manager ingest over loopback HTTP: {args.uploaders} uploaders, {args.rows}-row batches, "
          f"{dt:.0f} s, training on")
    print(f"{'rows/s accepted':>16}  {'429s':>6}  {'train steps/s':>13}  {'RSS start':>9}  {'mid':>7}  {'end':>7} MiB")
    print(f"{rows_per_s:>16,.0f}  {sum(busy):>6}  {steps / dt:>13.1f}  {rss[0]:>9.0f}  {rss[half]:>7.0f}  {rss[-1]:>7.0f}")
    print(f"target >= {TARGET_ROWS_PER_S:,} rows/s: {'met' if result['target']['met'] else 'NOT met'}")
    return result
