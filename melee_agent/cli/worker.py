"""`melee-agent worker`: play with the manager's current model and upload experience, forever."""

from __future__ import annotations

import argparse
import logging
import json
import threading
from pathlib import Path

from melee_agent.io.files import atomic_write_json
from melee_agent.envs.make import ENVS
from melee_agent.cli.common import add_common, config_from_args
from melee_agent.cli import flags


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("worker", help="play with the current model, upload experience, fetch new models")
    add_common(p, run_dir=False)
    p.add_argument("--manager", required=True, type=flags.manager_url, metavar="URL", help="the manager, e.g. http://127.0.0.1:8000")
    p.add_argument("--env", choices=ENVS, default=None, help="environment (default: the config's, arena)")
    p.add_argument("--envs", type=flags.positive_int, default=None, help="arena environments stepped together (default: config)")
    p.add_argument("--worker-index", type=flags.nonneg_int, default=0, help="this worker's index i in 0..N-1 (sets epsilon_i)")
    p.add_argument("--num-workers", type=flags.positive_int, default=1, help="N, the number of workers in the fleet")
    p.add_argument("--segments", type=flags.positive_int, default=None, help="stop after this many segments (default: never)")
    p.add_argument("--spool-dir", default=None, metavar="DIR",
                   help="keep batches here until the manager takes them; a worker restarted on the same DIR "
                        "sends what its predecessor left (default: a temporary folder)")
    p.add_argument("--seed", type=flags.seed, default=None, help="environment seed (default: derived from the config's train.seed and --worker-index)")
    p.set_defaults(func=run)


def check_env(cfg) -> None:
    """A Dolphin worker's paths, checked before it waits on the manager (a DolphinError naming the setting)."""
    if cfg.env.env == "dolphin":
        from melee_agent.dolphin.launch import check_paths  # noqa: PLC0415 (libmelee only for Dolphin)

        check_paths(cfg.dolphin)


def run(args: argparse.Namespace) -> int:
    from melee_agent.workers.worker import Worker, WorkerSettings, install_signal_handlers  # noqa: PLC0415

    if args.env:
        args.set = [*args.set, f"env.env={args.env}"]
    cfg = config_from_args(args)
    check_env(cfg)
    if args.spool_dir and Path(args.spool_dir).exists() and not Path(args.spool_dir).is_dir():
        raise ValueError(f"--spool-dir {args.spool_dir}: a file, not a folder")
    if args.worker_index >= args.num_workers:
        raise ValueError(f"--worker-index {args.worker_index} must be below --num-workers {args.num_workers}")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request drowns the segment lines
    stop = threading.Event()
    install_signal_handlers(stop)
    settings = WorkerSettings(manager=args.manager, index=args.worker_index, count=args.num_workers,
                              envs=args.envs, device=args.device, seed=args.seed, segments=args.segments,
                              spool_dir=args.spool_dir)
    worker = Worker(cfg, settings, stop)
    code = worker.run()
    summary = worker.summary()
    logging.getLogger("melee_agent.worker").info("done: %s", json.dumps(summary))
    if args.json:
        atomic_write_json(args.json, summary)
    return code
