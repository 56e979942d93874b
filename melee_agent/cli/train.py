"""`melee-agent train`: a manager and local arena workers on this machine, for a time budget.

Argument parsing only; the run itself is :class:`melee_agent.run.training.TrainingRun`.
"""

from __future__ import annotations

import argparse

from melee_agent.cli.common import add_common, config_from_args
from melee_agent.io.files import atomic_write_json
from melee_agent.cli import flags


def shipped_minutes() -> str:
    """``default 15, fight 60, gpu 4, ...``: each shipped config's training minutes, as ``--help`` shows them."""
    from melee_agent.config import load_config, shipped_configs  # noqa: PLC0415

    out = []
    for name in shipped_configs():
        try:
            out.append(f"{name} {load_config(name).train.minutes:g}")
        except ValueError:  # a shipped config that does not load is its own tests' finding, not --help's
            continue
    return ", ".join(out)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="train on this machine: manager + local arena workers, then evaluate")
    add_common(p)
    p.add_argument("--minutes", type=flags.positive_float, default=None,
                   help="minutes of training; the final evaluation comes after them and takes minutes more (its "
                        "progress bar shows the time left) (default: the config's train.minutes: "
                        f"{shipped_minutes()})")
    p.add_argument("--workers", type=flags.positive_int, default=None, help="local worker processes (default: config)")
    p.add_argument("--port", type=flags.port_or_free, default=0, help="manager port on 127.0.0.1 (default: a free one)")
    p.add_argument("--no-progress", action="store_true", help="no progress line")
    p.add_argument("--fused", action="store_true",
                   help="arena, replay and learner in this one process on one device (train.fused; the [fused] "
                        "settings), instead of a manager and worker processes")
    p.add_argument("--resume", action="store_true", help="continue the run in --run-dir from its newest checkpoint")
    p.add_argument("--seed", type=flags.seed, default=None,
                   help="the run's seed (train.seed; default: the config's, 0): the arena, the replay's sampling, the "
                        "network's first weights and every worker's and the league's generators derive from it")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from melee_agent.run.training import TrainingRun  # noqa: PLC0415

    cfg = config_from_args(args)
    if args.fused:
        cfg.train.fused = True
    if args.seed is not None:
        cfg.train.seed = args.seed
    if cfg.train.check_device and (why := flags.missing_device(cfg.train.check_device, "train.check_device")):
        raise ValueError(why)  # before the manager starts, not at the first check
    run = TrainingRun(cfg, run_dir=args.run_dir, minutes=args.minutes, workers=args.workers,
                      device=args.device, port=args.port, progress=not args.no_progress,
                      resume=args.resume)
    report = run.run()
    if args.json:
        atomic_write_json(args.json, report.to_json())
    return 0
