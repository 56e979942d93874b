"""`melee-agent bench replay`: the paper's Table 1 and Figure 3 on the machine at hand.

Measures, side by side in one run:

* sample latency per batch size on a full store: DeviceReplay, the in-RAM list (HostReplay),
  Stable-Baselines3's ``ReplayBuffer`` and torchrl's ``ReplayBuffer(LazyTensorStorage)``
  (each baseline is skipped, saying so, where it is not installed: ``pip install -e .[bench]``);
* cost per experience added, rows arriving one at a time, for block sizes 1 to 10,000, and in
  2,000-row batches into a full store;
* train-step time per batch size with DeviceReplay, with HostReplay, and with one fixed pre-made
  batch (the compute floor: the same learner with no replay at all);
* memory: bytes held by the store, and process RSS before and after many steps.
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import time
from typing import Any, Callable

import numpy as np
import torch

from melee_agent.learner import Learner
from melee_agent.replay import ROW_WIDTH, DeviceReplay, HostReplay

BATCH_SIZES = (16, 32, 64, 128, 256)
BLOCK_SIZES = (1, 10, 100, 1_000, 2_000, 10_000)


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--capacity", type=int, default=1_000_000, help="rows in the full store (default: %(default)s)")
    p.add_argument("--train-steps", type=int, default=300, help="timed train steps per case (default: %(default)s)")
    p.add_argument("--quick", action="store_true", help="a small store and few repetitions (smoke test)")


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _time_per_call(fn: Callable[[], Any], calls: int, device: torch.device, repeats: int = 5) -> float:
    """Median over `repeats` of the mean seconds per call."""
    for _ in range(max(3, calls // 10)):
        fn()
    _sync(device)
    results = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        _sync(device)
        results.append((time.perf_counter() - t0) / calls)
    return statistics.median(results)


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def _random_rows(n: int, rng: np.random.Generator) -> np.ndarray:
    rows = rng.random((n, ROW_WIDTH), dtype=np.float32)
    rows[:, 27] = rng.integers(0, 5, n)
    rows[:, 29] = 0.99**3
    return rows


def _sb3_sampler(rows: np.ndarray) -> Callable[[int], Any] | str:
    try:
        from gymnasium import spaces
        from stable_baselines3.common.buffers import ReplayBuffer
    except ImportError as e:
        return f"skipped: stable-baselines3 not installed ({e.name})"
    n = rows.shape[0]
    buf = ReplayBuffer(n, spaces.Box(0, 1, (27,), np.float32), spaces.Discrete(5), device="cpu",
                       n_envs=1, optimize_memory_usage=False, handle_timeout_termination=False)
    # Fill its arrays directly: calling add() a million times would only time the fill.
    buf.observations[:, 0] = rows[:, :27]
    buf.next_observations[:, 0] = rows[:, 30:]
    buf.actions[:, 0, 0] = rows[:, 27]
    buf.rewards[:, 0] = rows[:, 28]
    buf.dones[:, 0] = 0
    buf.full, buf.pos = True, 0
    return lambda bs: buf.sample(bs)


def _torchrl_sampler(rows: np.ndarray) -> Callable[[int], Any] | str:
    try:
        from tensordict import TensorDict
        from torchrl.data import LazyTensorStorage, ReplayBuffer
    except ImportError as e:
        return f"skipped: torchrl not installed ({e.name})"
    n = rows.shape[0]
    t = torch.from_numpy(rows)
    data = TensorDict({"obs": t[:, :27], "action": t[:, 27].long(), "reward": t[:, 28],
                       "discount": t[:, 29], "next_obs": t[:, 30:]}, batch_size=[n])
    buf = ReplayBuffer(storage=LazyTensorStorage(n))
    buf.extend(data)
    return lambda bs: buf.sample(bs)


class _FixedBatch:
    """A 'replay' that always returns one pre-made device batch: the train step's compute floor."""

    def __init__(self, replay: DeviceReplay, batch_size: int):
        self.batch = replay.sample(batch_size)

    def sample(self, batch_size: int) -> Any:
        return self.batch


def run(args: argparse.Namespace) -> dict[str, Any]:
    device = torch.device(args.device)
    capacity = 20_000 if args.quick else args.capacity
    train_steps = min(30, args.train_steps) if args.quick else args.train_steps
    sample_calls = 200 if args.quick else 2_000
    rng = np.random.default_rng(0)
    results: dict[str, Any] = {"device": str(device), "capacity": capacity, "torch": torch.__version__,
                               "threads": torch.get_num_threads()}
    rss0 = _rss_mb()

    print(f"filling stores with {capacity:,} rows ...", flush=True)
    rows = _random_rows(capacity, rng)
    dev = DeviceReplay(capacity, device, block_size=2_000, seed=0)
    dev.add(rows)
    dev.flush()
    host = HostReplay(capacity, device, seed=0)
    host.rows = list(rows)  # one numpy row object per experience, as the paper's list held them
    results["memory"] = {"device_replay_bytes": dev.nbytes(), "bytes_per_row": ROW_WIDTH * 4,
                         "staging_block_bytes": dev.writer.nbytes()}

    # --- sample latency ---
    baselines: dict[str, Callable[[int], Any] | str] = {
        "device": dev.sample, "host_list": host.sample, "sb3": _sb3_sampler(rows), "torchrl": _torchrl_sampler(rows)}
    sample: dict[str, dict[str, float] | str] = {}
    for name, fn in baselines.items():
        if isinstance(fn, str):
            sample[name] = fn
            continue
        sample[name] = {str(bs): _time_per_call(lambda: fn(bs), sample_calls // (4 if name == "host_list" else 1),
                                                device) * 1e6 for bs in BATCH_SIZES}
    results["sample_us"] = sample
    del baselines
    gc.collect()

    # --- add cost per experience ---
    n_rows = 20_000 if args.quick else 100_000
    one_at_a_time = {}
    feed = _random_rows(n_rows, rng)
    row_list = list(feed)
    for block in BLOCK_SIZES:
        r = DeviceReplay(max(capacity, 2 * block), device, block_size=block)

        def feed_rows(r: DeviceReplay = r) -> None:
            add = r.add
            for row in row_list:
                add(row)
        one_at_a_time[str(block)] = _time_per_call(feed_rows, 1, device, repeats=3) / n_rows * 1e6
    h = HostReplay(capacity)

    def feed_host() -> None:
        add = h.rows.append  # the paper's list: one append per experience
        for row in row_list:
            add(row)
        del h.rows[:-capacity]
    host_add = _time_per_call(feed_host, 1, device, repeats=3) / n_rows * 1e6
    batch2000 = feed[:2_000]
    batched = _time_per_call(lambda: dev.add(batch2000), 50 if args.quick else 500, device) / 2_000 * 1e6
    results["add_us_per_row"] = {"one_at_a_time_by_block": one_at_a_time, "host_list_append": host_add,
                                 "batches_of_2000_full_store": batched}

    # --- train step ---
    train: dict[str, dict[str, float]] = {}
    rss_before_train = _rss_mb()
    for bs in BATCH_SIZES:
        row: dict[str, float] = {}
        for name, replay in (("device", dev), ("host_list", host), ("fixed_batch", _FixedBatch(dev, bs))):
            torch.manual_seed(0)
            learner = Learner(replay, num_actions=5, device=device, batch_size=bs, metrics_every=100)
            row[name] = _time_per_call(learner.step, train_steps, device, repeats=3) * 1e3
        row["device_vs_host_speedup"] = row["host_list"] / row["device"]
        row["device_vs_floor"] = row["fixed_batch"] / row["device"]
        train[str(bs)] = row
    results["train_step_ms"] = train
    results["memory"].update({"rss_start_mb": rss0, "rss_before_train_mb": rss_before_train,
                              "rss_after_train_mb": _rss_mb()})

    s128 = sample["device"]["128"]
    ratios = {f"sample128_speedup_vs_{k}": (v["128"] / s128 if isinstance(v, dict) else None)
              for k, v in sample.items() if k != "device"}
    results["targets"] = {
        **ratios,
        "add_one_at_a_time_us_block2000": one_at_a_time["2000"],
        "add_batches_2000_us": batched,
        "train128_speedup_vs_host": train["128"]["device_vs_host_speedup"],
        "train128_vs_floor": train["128"]["device_vs_floor"],
    }
    _print_tables(results)
    return results


def _fmt(v: Any, spec: str = ".2f") -> str:
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def _print_tables(r: dict[str, Any]) -> None:
    print(f"\nbench replay: device={r['device']} store={r['capacity']:,} rows, torch {r['torch']}, "
          f"{r['threads']} threads")
    print("\nsample latency (us per batch)")
    print(f"{'batch':>6} " + " ".join(f"{k:>10}" for k in r["sample_us"]))
    for bs in BATCH_SIZES:
        cells = [(_fmt(v[str(bs)], ".1f") if isinstance(v, dict) else "skipped") for v in r["sample_us"].values()]
        print(f"{bs:>6} " + " ".join(f"{c:>10}" for c in cells))
    for k, v in r["sample_us"].items():
        if isinstance(v, str):
            print(f"  {k}: {v}")
    a = r["add_us_per_row"]
    print("\nadd cost (us per experience), rows arriving one at a time")
    print(f"{'block':>6} {'device':>10}")
    for b, v in a["one_at_a_time_by_block"].items():
        print(f"{b:>6} {v:>10.3f}")
    print(f"  in-RAM list append: {a['host_list_append']:.3f} us;  2,000-row batches, full store: "
          f"{a['batches_of_2000_full_store']:.4f} us")
    print("\ntrain step (ms)")
    print(f"{'batch':>6} {'device':>9} {'host_list':>9} {'floor':>9} {'vs host':>8} {'vs floor':>8}")
    for bs, v in r["train_step_ms"].items():
        print(f"{bs:>6} {v['device']:>9.3f} {v['host_list']:>9.3f} {v['fixed_batch']:>9.3f} "
              f"{v['device_vs_host_speedup']:>7.2f}x {v['device_vs_floor']:>7.2f}x")
    m = r["memory"]
    print(f"\nmemory: store {m['device_replay_bytes'] / 1e6:.1f} MB ({m['bytes_per_row']} B/row + "
          f"{m['staging_block_bytes'] / 1e6:.2f} MB staging); RSS before/after train steps "
          f"{m['rss_before_train_mb']:.0f}/{m['rss_after_train_mb']:.0f} MiB")
    print("\ntargets: " + ", ".join(f"{k}={_fmt(v)}" for k, v in r["targets"].items()))
