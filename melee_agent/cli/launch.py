"""`melee-agent launch local|gce`: start a fleet of workers on this machine or on GCE VMs."""

from __future__ import annotations

import argparse
import logging
import time

from melee_agent.cli.common import add_common, add_unavailable, config_from_args, forward_flags, import_or_explain
from melee_agent.envs.make import ENVS
from melee_agent.cli import flags


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("launch", help="start workers: on this machine (local) or on GCE VMs (gce)")
    where = p.add_subparsers(dest="where", metavar="WHERE", required=True)
    lp = where.add_parser("local", help="N worker processes here; a worker that dies is restarted")
    add_common(lp, run_dir=False, json=False)
    lp.add_argument("--count", type=flags.positive_int, required=True, help="number of worker processes")
    lp.add_argument("--manager", required=True, type=flags.manager_url, metavar="URL", help="the manager, e.g. http://127.0.0.1:8000")
    lp.add_argument("--env", choices=ENVS, default=None, help="environment (default: the config's, arena)")
    lp.add_argument("--envs", type=flags.positive_int, default=None, help="arena environments per worker (default: config)")
    lp.add_argument("--spool-dir", default=None, metavar="DIR",
                    help="worker i keeps unsent batches in DIR/worker-i (default: a temporary folder per fleet)")
    lp.add_argument("--log-dir", default=None, help="write each worker's log to DIR/worker-i.log")
    lp.set_defaults(func=run_local)
    gce, why = import_or_explain("melee_agent.workers.gce")
    if gce is None:
        add_unavailable(where, "gce", why or "unknown error")
        return
    gp = where.add_parser("gce", help="a GCE instance template and managed instance group of worker VMs")
    gce.add_args(gp)
    gp.set_defaults(func=gce.run)


def worker_flags(args: argparse.Namespace) -> list[str]:
    flags = forward_flags(args)
    if args.env:
        flags += ["--env", args.env]
    if args.envs:
        flags += ["--envs", str(args.envs)]
    return flags


def check_worker_config(args: argparse.Namespace) -> None:
    """What every worker of the fleet would refuse at its start, refused here once: the config (with ``--env``)
    loads, and Dolphin's and the ISO's paths are set and exist where the workers play Dolphin."""
    from melee_agent.cli.worker import check_env  # noqa: PLC0415

    overrides = [*args.set, *([f"env.env={args.env}"] if args.env else [])]
    check_env(config_from_args(argparse.Namespace(config=args.config, set=overrides)))


def run_local(args: argparse.Namespace) -> int:
    from pathlib import Path  # noqa: PLC0415

    from melee_agent.workers.launch_local import LocalFleet  # noqa: PLC0415

    check_worker_config(args)  # each worker would fail alike and be restarted until the crash-loop guard stops it
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    fleet = LocalFleet(args.manager, args.count, worker_flags(args),
                       log_dir=Path(args.log_dir) if args.log_dir else None,
                       spool_root=Path(args.spool_dir) if args.spool_dir else None)
    fleet.start()
    try:
        while True:
            time.sleep(1.0)
            fleet.poll()
    except KeyboardInterrupt:
        pass
    finally:
        fleet.stop()
        print(f"stopped {args.count} workers; restarts: {sum(fleet.restarts)}")
    return 0
