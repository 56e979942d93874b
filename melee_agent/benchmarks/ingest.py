"""`melee-agent bench ingest`: a real manager under load from many simulated workers.

Starts a real manager (its own process, uvicorn on a free 127.0.0.1 port, training once burn-in
is reached), then ``--uploaders`` simulated workers upload for ``--seconds`` over loopback HTTP,
as real workers do: each numbers its batches (``worker_id``, ``batch_seq``), sends one at a time,
retries the same batch after a 429, 5xx or dropped connection (exponential backoff with
jitter), and now and then sends a batch again as if its 202 had been lost (``--resend``), which
the manager must answer as a duplicate and not store.

Reported: accepted rows/s, upload latency p50/p99 (from the request to its 202), 429 answers,
duplicates, the trainer's steps/s meanwhile, and the manager's resident memory over the run (it
must stay flat: the replay is allocated up front and nothing grows per request). Checked:
rows the manager counts == rows the workers saw accepted; duplicates refused == resends.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from melee_agent.cli.common import forward_flags, hidden_alias
from melee_agent.rl.rows import ACTION, DISCOUNT, ROW_WIDTH
from melee_agent.cli import flags

TARGET_ROWS_PER_S = 100_000


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seconds", type=flags.positive_float, default=60.0, help="upload time (default: %(default)s)")
    p.add_argument("--uploaders", type=int, default=8,
                   help="simulated workers uploading at once (default: %(default)s)")
    hidden_alias(p, "--workers", "uploaders", type=int)  # the older name (train's --workers are processes)
    p.add_argument("--rows", type=flags.positive_int, default=2000, help="rows per batch (default: %(default)s)")
    p.add_argument("--resend", type=float, default=0.02,
                   help="share of batches sent a second time, as after a lost answer (default: %(default)s)")
    p.add_argument("--interval", type=float, default=0.0,
                   help="seconds each worker waits between batches, jittered (default: 0, as fast as answered; "
                        "a Dolphin worker makes a 2,000-row batch about every 40 s)")
    p.add_argument("--capacity", type=flags.positive_int, default=None, help="replay rows (default: 1,000,000; 50,000 with --quick)")
    p.add_argument("--quick", action="store_true", help="5 s, a 50,000-row replay (for tests)")


def rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


@dataclass
class LoadResult:
    rows_accepted: int = 0  # rows answered 202 as new
    batches_accepted: int = 0
    resends: int = 0
    resends_refused: int = 0  # resends answered {"duplicate": true}, as they must be
    duplicates: int = 0  # every duplicate answer (resends, and retries of a batch stored before its answer was lost)
    busy: int = 0  # 429 and 5xx answers (retried)
    dropped: int = 0  # connections that failed (retried)
    latencies: list[float] = field(default_factory=list)  # seconds, request to 202
    errors: list[str] = field(default_factory=list)


async def simulate_workers(url: str, workers: int, seconds: float, rows: int, resend: float = 0.02,
                           seed: int = 0, token: str | None = None, interval: float = 0.0) -> LoadResult:
    """``workers`` simulated workers uploading numbered batches to ``url`` for ``seconds``."""
    import httpx  # noqa: PLC0415

    from melee_agent.io.segment_stats import SegmentStats  # noqa: PLC0415
    from melee_agent.io.wire import encode_experience  # noqa: PLC0415
    from melee_agent.workers.backoff import Backoff  # noqa: PLC0415

    data = np.random.default_rng(seed).random((rows, ROW_WIDTH), dtype=np.float32)
    data[:, ACTION] = np.arange(rows) % 5
    data[:, DISCOUNT] = 0.97
    stats = SegmentStats(episodes=1, return_sum=1.0, length_sum=60, hits=1, frames=60)
    out = LoadResult()
    deadline = time.monotonic() + seconds
    headers = {"Content-Type": "application/octet-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    limits = httpx.Limits(max_connections=workers, max_keepalive_connections=workers)

    async def post(client: httpx.AsyncClient, payload: bytes, rng: random.Random) -> dict[str, Any] | None:
        """POST until answered 202 (retrying like a worker); None if time ran out or it was refused."""
        backoff = Backoff(base=0.05, cap=2.0, seed=rng.getrandbits(32))
        while time.monotonic() < deadline + 30:
            t0 = time.perf_counter()
            try:
                r = await client.post("/v1/experience", content=payload)
            except httpx.TransportError:
                out.dropped += 1
            else:
                if r.status_code == 202:
                    out.latencies.append(time.perf_counter() - t0)
                    return r.json()
                if r.status_code == 429 or r.status_code >= 500:
                    out.busy += 1
                else:
                    out.errors.append(f"{r.status_code} {r.text[:200]}")
                    return None
            await asyncio.sleep(backoff.failed())
        return None

    async def worker(i: int, client: httpx.AsyncClient) -> None:
        rng = random.Random(seed * 1_000 + i)
        last: bytes | None = None
        seq = 0
        # Real workers do not start on the same millisecond: spread the first batches over one interval.
        await asyncio.sleep(rng.uniform(0, max(0.5, interval)))
        while time.monotonic() < deadline and not out.errors:
            if last is not None and rng.random() < resend:
                out.resends += 1
                answer = await post(client, last, rng)
                if answer is not None and answer.get("duplicate"):
                    out.duplicates += 1
                    out.resends_refused += 1
                continue
            payload = encode_experience(data, action_set="untouchable", worker_id=f"sim-{seed}-{i}", batch_seq=seq,
                                        model_version=0, stats=stats)
            answer = await post(client, payload, rng)
            if answer is None:
                return
            if answer.get("duplicate"):  # a retry whose first try was stored, its answer lost
                out.duplicates += 1
            out.rows_accepted += rows
            out.batches_accepted += 1
            last, seq = payload, seq + 1
            if interval > 0:
                await asyncio.sleep(rng.uniform(0.5, 1.5) * interval)

    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60, limits=limits) as client:
        await asyncio.gather(*(worker(i, client) for i in range(workers)))
    return out


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def run(args: argparse.Namespace) -> dict[str, Any]:
    import httpx  # noqa: PLC0415

    from melee_agent.manager.spawn import ManagerProcess  # noqa: PLC0415
    from melee_agent.manager.status import ManagerStatus  # noqa: PLC0415

    seconds = 5.0 if args.quick else args.seconds
    if args.uploaders < 1 or args.rows < 1 or seconds <= 0:
        raise ValueError("--workers, --rows and --seconds must be positive")
    if args.interval < 0:
        raise ValueError(f"--interval must be >= 0, got {args.interval}")
    if not 0 <= args.resend < 1:
        raise ValueError(f"--resend must be in [0, 1), got {args.resend}")
    capacity = args.capacity or (50_000 if args.quick else 1_000_000)
    run_dir = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    flags = forward_flags(args, (f"replay.capacity={capacity}", "manager.burn_in=10000",
                                 "manager.max_train_per_row=1000", f"manager.max_upload_rows={max(args.rows, 2000)}"))
    manager = ManagerProcess(flags, run_dir, run_dir / "manager.log")
    try:
        manager.start()
        proc = manager.proc
        assert proc is not None
        status0 = ManagerStatus.from_json(httpx.get(f"{manager.url}/v1/status").json())
        rss = [rss_mib(proc.pid)]

        async def sample_memory() -> None:
            while True:
                await asyncio.sleep(1.0)
                rss.append(rss_mib(proc.pid))

        async def main() -> LoadResult:
            sampler = asyncio.create_task(sample_memory())
            try:
                return await simulate_workers(manager.url, args.uploaders, seconds, args.rows, args.resend,
                                              interval=args.interval)
            finally:
                sampler.cancel()

        t0 = time.perf_counter()
        load = asyncio.run(main())
        dt = time.perf_counter() - t0
        status1 = ManagerStatus.from_json(httpx.get(f"{manager.url}/v1/status").json())
        manager.check()
        if load.errors:
            raise RuntimeError(f"uploads refused: {load.errors[0]} (the manager's log: {run_dir / 'manager.log'})")
    finally:
        manager.stop()
    shutil.rmtree(run_dir, ignore_errors=True)  # a scratch run, kept above for its log only when it failed
    half = len(rss) // 2
    rows_per_s = load.rows_accepted / dt
    steps = status1.train_steps - status0.train_steps
    lat_ms = [x * 1_000 for x in load.latencies]
    server_rows = status1.rows_accepted - status0.rows_accepted
    server_dups = status1.duplicates_refused - status0.duplicates_refused
    result = {
        "seconds": round(dt, 2), "workers": args.uploaders, "interval_s": args.interval, "uploaders": args.uploaders, "rows_per_batch": args.rows,
        "rows_accepted": load.rows_accepted, "server_rows_accepted": server_rows,
        "batches_accepted": load.batches_accepted, "resends": load.resends, "resends_refused": load.resends_refused,
        "duplicates": load.duplicates,
        "server_duplicates_refused": server_dups, "rows_per_s": rows_per_s, "busy_429": load.busy,
        "connections_dropped": load.dropped,
        "latency_ms": {"p50": percentile(lat_ms, 50), "p90": percentile(lat_ms, 90), "p99": percentile(lat_ms, 99),
                       "max": max(lat_ms, default=float("nan")), "count": len(lat_ms)},
        "train_steps": steps, "train_steps_per_s": steps / dt,
        "rss_mib_start": rss[0], "rss_mib_mid": rss[half], "rss_mib_end": rss[-1], "rss_mib_peak": max(rss),
        "rss_mib_growth_second_half": rss[-1] - rss[half], "replay_capacity": capacity,
        "counts_match": server_rows == load.rows_accepted and server_dups == load.duplicates,
        "target": {"rows_per_s": TARGET_ROWS_PER_S, "met": rows_per_s >= TARGET_ROWS_PER_S,
                   "applies": not args.interval},
    }
    pace = f"one batch per ~{args.interval:g} s each" if args.interval else "as fast as answered"
    print(f"manager ingest over loopback HTTP: {args.uploaders} simulated workers, {args.rows}-row batches {pace}, "
          f"{dt:.0f} s, training on, {capacity:,}-row replay")
    print(f"{'rows/s accepted':>16}  {'p50 ms':>7}  {'p99 ms':>7}  {'429/5xx':>7}  {'resent':>6}  {'dups':>5}  "
          f"{'steps/s':>7}  {'RSS start':>9}  {'mid':>6}  {'end':>6}  {'peak':>6} MiB")
    print(f"{rows_per_s:>16,.0f}  {result['latency_ms']['p50']:>7.1f}  {result['latency_ms']['p99']:>7.1f}  "
          f"{load.busy:>7}  {load.resends:>6}  {load.duplicates:>5}  {steps / dt:>7.1f}  {rss[0]:>9.0f}  "
          f"{rss[half]:>6.0f}  {rss[-1]:>6.0f}  {max(rss):>6.0f}")
    print(f"manager counted {server_rows:,} rows and refused {server_dups} duplicates: "
          f"{'matches' if result['counts_match'] else 'DOES NOT MATCH'} what the workers saw")
    if args.interval:  # paced: the workers offer less than the target, so it says nothing about it
        print(f"paced load: about {args.uploaders * args.rows / args.interval:,.0f} rows/s offered; "
              f"the {TARGET_ROWS_PER_S:,} rows/s target is measured unpaced (--interval 0)")
    else:
        print(f"target >= {TARGET_ROWS_PER_S:,} rows/s: {'met' if result['target']['met'] else 'NOT met'}")
    return result
