"""`melee-agent bench replay`: the paper's Table 1 and Figure 3 on the machine at hand.

(``--prioritized`` benches the prioritized replay instead: :mod:`melee_agent.benchmarks.prioritized`.)

Measures, side by side in one run:

* sample latency per batch size on a full store: DeviceReplay, the in-RAM list (HostReplay),
  Stable-Baselines3's ``ReplayBuffer`` and torchrl's ``ReplayBuffer(LazyTensorStorage)``
  (each baseline is skipped, saying so, where it is not installed: ``pip install -e .[bench]``);
* cost per experience added, rows arriving one at a time, for block sizes 1 to 10,000, and in
  2,000-row batches into a full store;
* train-step time per batch size with DeviceReplay, with HostReplay, and with one fixed pre-made
  batch (the compute floor: the same learner with no replay at all);
* memory: bytes held by the store, and process RSS after a warm-up and after many more train
  steps and block adds on the same replay (nothing should grow).

Every sample is timed as a user would consume it: the call plus reading obs, action, reward,
discount and next_obs (the baselines return those already built; ours are views of one gather).
"""

from __future__ import annotations

import argparse
import gc
from typing import Any, Callable

import numpy as np
import torch

from melee_agent.benchmarks.timing import random_rows, rss_mb, sync, time_interleaved, time_per_call
from melee_agent.benchmarks.fed import FedReplay, HostReplay, sb3_replay, torchrl_replay
from melee_agent.rl.learner import Learner
from melee_agent.rl.replay import DeviceReplay, PrioritizedDeviceReplay
from melee_agent.rl.rows import ROW_WIDTH
from melee_agent.cli import flags

BATCH_SIZES = (16, 32, 64, 128, 256)
BLOCK_SIZES = (1, 10, 100, 1_000, 2_000, 10_000)


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--capacity", type=flags.positive_int, default=1_000_000, help="rows in the full store (default: %(default)s)")
    p.add_argument("--train-steps", type=flags.positive_int, default=300, help="timed train steps per case (default: %(default)s)")
    p.add_argument("--repeats", type=flags.positive_int, default=5, help="timed rounds per train-step case; the best counts (default: %(default)s)")
    p.add_argument("--threads", type=flags.nonneg_int, default=0, help="torch intra-op threads (default: torch's choice)")
    p.add_argument("--quick", action="store_true", help="a small store and few repetitions (smoke test)")
    p.add_argument("--prioritized", action="store_true",
                   help="bench the prioritized replay instead: sample + update per batch size against a numpy sum "
                        "tree and torchrl's PrioritizedSampler, and its train step against the uniform one")


def _consume(batch: Any) -> None:
    # Touch the five fields the learner reads (the baselines' adapters built them already).
    batch.obs, batch.action, batch.reward, batch.discount, batch.next_obs  # noqa: B018 (reading is the point)


# Issue 26's targets on a GPU: (key in results["targets"], comparison, threshold).
GPU_TARGETS = (
    ("train128_captured_speedup_vs_host_list", ">=", 5.0),
    ("train128_captured_speedup_vs_torchrl", ">=", 1.5),
    ("add_batches_2000_us", "<=", 0.05),
)

# Issue 2's targets: (key in results["targets"], comparison, threshold).
TARGETS = (
    ("sample128_speedup_vs_sb3", ">=", 3.0),
    ("sample128_speedup_vs_torchrl", ">=", 3.0),
    ("sample128_speedup_vs_host_list", ">=", 12.0),
    ("add_one_at_a_time_us_block2000", "<=", 1.4),
    ("add_batches_2000_us", "<=", 0.05),
    ("train128_speedup_vs_host", ">=", 1.10),
    ("train128_vs_floor", ">=", 0.95),
)


def _fixed_batch(replay: DeviceReplay, batch_size: int) -> FedReplay:
    """A replay that always returns one pre-made device batch: the train step's compute floor (no
    replay work at all)."""
    batch = replay.sample(batch_size)
    return FedReplay(lambda bs: batch, replay.device, batch_size)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every measurement the module docstring names, printed as tables; returns what ``--json`` writes."""
    device = torch.device(args.device)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    if args.prioritized:
        from melee_agent.benchmarks import prioritized as bench_prioritized  # noqa: PLC0415

        return bench_prioritized.run(args)
    capacity = 20_000 if args.quick else args.capacity
    train_steps = min(30, args.train_steps) if args.quick else args.train_steps
    repeats = min(2, args.repeats) if args.quick else max(1, args.repeats)
    sample_calls = 200 if args.quick else 2_000
    rng = np.random.default_rng(0)
    results: dict[str, Any] = {"device": str(device), "capacity": capacity, "torch": torch.__version__,
                               "threads": torch.get_num_threads(), "train_steps_per_round": train_steps,
                               "rounds": repeats, "timing": "best of rounds; train-step cases interleaved"}
    rss0 = rss_mb()
    rows, dev, host = _fill_stores(results, capacity, device, rng)
    fed: dict[str, FedReplay | str] = {"sb3": sb3_replay(rows, device), "torchrl": torchrl_replay(rows, device)}
    _bench_sample(results, dev, host, fed, device, sample_calls)
    batch2000 = _bench_add(results, dev, capacity, device, rng, args.quick)
    rss_before_train = rss_mb()
    _bench_train(results, dev, host, fed, rows, rng, device, train_steps, repeats)
    steady = _bench_steady_state(dev, device, batch2000, args.quick)
    results["memory"].update({"rss_start_mb": rss0, "rss_before_train_mb": rss_before_train, **steady})
    _set_targets(results, device)
    _print_tables(results)
    return results


def _fill_stores(results: dict[str, Any], capacity: int, device: torch.device,
                 rng: np.random.Generator) -> tuple[np.ndarray, DeviceReplay, HostReplay]:
    """``capacity`` random rows, and the device replay and the in-RAM list filled with them; their memory in
    ``results``."""
    print(f"filling stores with {capacity:,} rows ...", flush=True)
    rows = random_rows(capacity, rng)
    dev = DeviceReplay(capacity, device, block_size=2_000, seed=0)
    dev.add(rows)
    dev.flush()
    host = HostReplay(capacity, device, seed=0)
    host.rows = list(rows)  # one numpy row object per experience, as the paper's list held them
    results["memory"] = {"device_replay_bytes": dev.nbytes(), "bytes_per_row": ROW_WIDTH * 4,
                         "staging_block_bytes": dev.writer.nbytes()}
    return rows, dev, host


def _bench_sample(results: dict[str, Any], dev: DeviceReplay, host: HostReplay, fed: dict[str, FedReplay | str],
                  device: torch.device, sample_calls: int) -> None:
    """Sample latency per batch size for each replay (a baseline not installed: its reason), and how many
    times faster the device replay is."""
    baselines: dict[str, Callable[[int], Any] | str] = {
        "device": dev.sample, "host_list": host.sample,
        **{k: (v if isinstance(v, str) else v.sample) for k, v in fed.items()}}
    sample: dict[str, dict[str, float] | str] = {}
    for name, fn in baselines.items():
        if isinstance(fn, str):
            sample[name] = fn
            continue
        sample[name] = {str(bs): time_per_call(lambda fn=fn, bs=bs: _consume(fn(bs)),
                                                sample_calls // (4 if name == "host_list" else 1), device) * 1e6
                        for bs in BATCH_SIZES}
    sample_ratio = {k: {bs: v[bs] / sample["device"][bs] for bs in v} for k, v in sample.items()
                    if k != "device" and isinstance(v, dict)}
    results["sample_speedup_of_device"] = sample_ratio
    results["sample_us"] = sample
    del baselines
    gc.collect()


def _bench_add(results: dict[str, Any], dev: DeviceReplay, capacity: int, device: torch.device,
               rng: np.random.Generator, quick: bool) -> np.ndarray:
    """Cost per experience added: one at a time per block size, the in-RAM list's append, and 2,000-row
    batches into the full store; returns that 2,000-row batch."""
    n_rows = 20_000 if quick else 100_000
    one_at_a_time = {}
    feed = random_rows(n_rows, rng)
    row_list = list(feed)
    for block in BLOCK_SIZES:
        r = DeviceReplay(max(capacity, 2 * block), device, block_size=block)

        def feed_rows(r: DeviceReplay = r) -> None:
            add = r.add
            for row in row_list:
                add(row)
        one_at_a_time[str(block)] = time_per_call(feed_rows, 1, device, repeats=3) / n_rows * 1e6
    h = HostReplay(capacity)

    def feed_host() -> None:
        add = h.rows.append  # the paper's list: one append per experience
        for row in row_list:
            add(row)
        del h.rows[:-capacity]
    host_add = time_per_call(feed_host, 1, device, repeats=3) / n_rows * 1e6
    batch2000 = feed[:2_000]
    batched = time_per_call(lambda: dev.add(batch2000), 50 if quick else 500, device) / 2_000 * 1e6
    results["add_us_per_row"] = {"one_at_a_time_by_block": one_at_a_time, "host_list_append": host_add,
                                 "batches_of_2000_full_store": batched}
    return batch2000


def _bench_train(results: dict[str, Any], dev: DeviceReplay, host: HostReplay, fed: dict[str, FedReplay | str],
                 rows: np.ndarray, rng: np.random.Generator, device: torch.device, train_steps: int,
                 repeats: int) -> None:
    """Train-step time per batch size for each replay and the fixed-batch floor; on a GPU also the
    prioritized replays'."""
    cases: dict[str, Any] = {"device": dev, "host_list": host, "fixed_batch": None,
                             **{k: v for k, v in fed.items() if not isinstance(v, str)}}
    results["train_step_ms"] = _train_table(cases, device, train_steps, repeats, graph=device.type == "cuda")
    results["train_step_skipped"] = {k: v for k, v in fed.items() if isinstance(v, str)}
    if device.type == "cuda":
        capacity = len(rows)  # the full store's rows
        results["gpu"] = torch.cuda.get_device_name(device)
        prio = PrioritizedDeviceReplay(capacity, device, block_size=2_000, seed=0)
        prio.add(rows, priority=rng.exponential(1.0, capacity))
        prio.flush()
        trl = torchrl_replay(rows, device, prioritized=True)
        pcases: dict[str, Any] = {"device": prio, **({} if isinstance(trl, str) else {"torchrl": trl})}
        results["train_step_prioritized_ms"] = _train_table(pcases, device, train_steps, repeats, graph=True)
        results["train_step_prioritized_skipped"] = {"torchrl": trl} if isinstance(trl, str) else {}
        del prio, trl


def _bench_steady_state(dev: DeviceReplay, device: torch.device, batch2000: np.ndarray,
                        quick: bool) -> dict[str, Any]:
    """Steady state: RSS after a warm-up vs after many more steps and adds on the same replay (nothing
    should grow); the figures for ``results["memory"]``."""
    learner = Learner(dev, num_actions=5, device=device, batch_size=128, metrics_every=100, cuda_graph=False)
    warm, more = (50, 200) if quick else (500, 5_000)
    for _ in range(warm):
        learner.step()
    gc.collect()
    rss_warm = rss_mb()
    for i in range(more):
        learner.step()
        if i % 10 == 0:
            dev.add(batch2000)  # keep writing: the store wraps, it must not grow
    sync(device)
    gc.collect()
    rss_end = rss_mb()
    return {"rss_after_warmup_mb": rss_warm, "rss_after_more_steps_mb": rss_end,
            "more_steps": more, "more_rows_added": 2_000 * ((more + 9) // 10),
            "rss_growth_mb": rss_end - rss_warm, "device_replay_bytes_after": dev.nbytes()}


def _set_targets(results: dict[str, Any], device: torch.device) -> None:
    """The targets' figures from the measurements in ``results`` (the GPU's too on one), and which are met."""
    sample, train = results["sample_us"], results["train_step_ms"]
    add = results["add_us_per_row"]
    s128 = sample["device"]["128"]
    ratios = {f"sample128_speedup_vs_{k}": (v["128"] / s128 if isinstance(v, dict) else None)
              for k, v in sample.items() if k != "device"}
    results["targets"] = {
        **ratios,
        "add_one_at_a_time_us_block2000": add["one_at_a_time_by_block"]["2000"],
        "add_batches_2000_us": add["batches_of_2000_full_store"],
        "train128_speedup_vs_host": train["128"]["device_vs_host_speedup"],
        "train128_vs_floor": train["128"]["device_vs_floor"],
    }
    targets = TARGETS
    if device.type == "cuda":
        t128 = train["128"]
        results["targets"]["train128_captured_speedup_vs_host_list"] = t128["host_list"] / t128["device_captured"]
        results["targets"]["train128_captured_speedup_vs_torchrl"] = (
            t128["torchrl"] / t128["device_captured"] if "torchrl" in t128 else None)
        targets = GPU_TARGETS + TARGETS
    results["target_list"] = [list(t) for t in targets]
    results["targets_met"] = {
        k: (None if results["targets"].get(k) is None else
            (results["targets"][k] >= t if op == ">=" else results["targets"][k] <= t))
        for k, op, t in targets}


def _train_table(cases: dict[str, Any], device: torch.device, train_steps: int, repeats: int,
                 graph: bool) -> dict[str, dict[str, float]]:
    """Train-step ms per batch size for each replay (``None``: the fixed-batch floor on ``cases["device"]``),
    eager; with ``graph`` also ``device_captured``: the device replay's step as one CUDA graph."""
    table: dict[str, dict[str, float]] = {}
    for bs in BATCH_SIZES:
        steps: dict[str, Callable[[], Any]] = {}
        for name, replay in cases.items():
            torch.manual_seed(0)
            replay = _fixed_batch(cases["device"], bs) if replay is None else replay
            steps[name] = Learner(replay, num_actions=5, device=device, batch_size=bs, metrics_every=100,
                                  cuda_graph=False, beta_steps=100_000 if replay.prioritized else 0).step
        if graph:
            torch.manual_seed(0)
            steps["device_captured"] = Learner(cases["device"], num_actions=5, device=device, batch_size=bs,
                                               metrics_every=100, cuda_graph=True, beta_steps=100_000).step
        row = {k: v * 1e3 for k, v in time_interleaved(steps, train_steps, device, repeats).items()}
        del steps
        best = row.get("device_captured", row["device"])
        for k in list(row):
            if k not in ("device", "device_captured"):
                row[f"device_vs_{k}"] = row[k] / row["device"]
                if graph:
                    row[f"captured_vs_{k}"] = row[k] / best
        if "host_list" in row:  # the names the CPU tables and tests have always used
            row["device_vs_host_speedup"] = row["host_list"] / row["device"]
        if "fixed_batch" in row:
            row["device_vs_floor"] = row["fixed_batch"] / row["device"]
        table[str(bs)] = row
    return table


def _fmt(v: Any, spec: str = ".2f") -> str:
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def _print_train(title: str, table: dict[str, dict[str, float]]) -> None:
    cols = [k for k in next(iter(table.values())) if "_vs_" not in k]
    ratios = [k for k in next(iter(table.values())) if k.startswith("captured_vs_")] or \
        [k for k in next(iter(table.values())) if k.startswith("device_vs_") and k not in ("device_vs_host_speedup", "device_vs_floor")]
    print(f"\n{title}")
    print(f"{'batch':>6} " + " ".join(f"{c:>15}" for c in cols) + " " + " ".join(f"{r:>22}" for r in ratios))
    for bs, v in table.items():
        print(f"{bs:>6} " + " ".join(f"{v[c]:>15.3f}" for c in cols) + " "
              + " ".join(f"{v[r]:>21.2f}x" for r in ratios))


def _print_tables(r: dict[str, Any]) -> None:
    print(f"\nbench replay: device={r['device']}{' (' + r['gpu'] + ')' if 'gpu' in r else ''} store={r['capacity']:,} rows, torch {r['torch']}, "
          f"{r['threads']} threads")
    print("\nsample latency (us per batch, fields read), and how many times faster the device replay is")
    ratios = r["sample_speedup_of_device"]
    print(f"{'batch':>6} " + " ".join(f"{k:>10}" for k in r["sample_us"]) + " "
          + " ".join(f"{'x ' + k:>12}" for k in ratios))
    for bs in BATCH_SIZES:
        cells = [(_fmt(v[str(bs)], ".1f") if isinstance(v, dict) else "skipped") for v in r["sample_us"].values()]
        print(f"{bs:>6} " + " ".join(f"{c:>10}" for c in cells) + " "
              + " ".join(f"{v[str(bs)]:>11.1f}x" for v in ratios.values()))
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
    _print_train("train step (ms per step; x: how many times faster the device replay's step is)", r["train_step_ms"])
    for k, v in r.get("train_step_skipped", {}).items():
        print(f"  {k}: {v}")
    if "train_step_prioritized_ms" in r:
        _print_train("prioritized train step (ms)", r["train_step_prioritized_ms"])
        for k, v in r.get("train_step_prioritized_skipped", {}).items():
            print(f"  {k}: {v}")
    m = r["memory"]
    print(f"\nmemory: store {m['device_replay_bytes'] / 1e6:.1f} MB ({m['bytes_per_row']} B/row + "
          f"{m['staging_block_bytes'] / 1e6:.2f} MB staging); RSS after warm-up {m['rss_after_warmup_mb']:.0f} MiB, "
          f"after {m['more_steps']:,} more steps and {m['more_rows_added']:,} more rows "
          f"{m['rss_after_more_steps_mb']:.0f} MiB ({m['rss_growth_mb']:+.1f} MiB)")
    print("\ntargets:")
    for k, op, t in r["target_list"]:
        v, met = r["targets"].get(k), r["targets_met"].get(k)
        verdict = "skipped" if met is None else ("met" if met else "MISSED")
        print(f"  {k:<34} {_fmt(v, '.3f'):>8} (target {op} {t})  {verdict}")
