"""Flags every subcommand shares, and how they turn into a resolved `Config`."""

from __future__ import annotations

import argparse

from melee_agent.config import Config, load_config


def add_common(p: argparse.ArgumentParser, config_default: str | None = "default") -> None:
    p.add_argument("--config", default=config_default,
                   help="a TOML file, or a name in configs/ (default: %(default)s)")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="override one config value (repeatable)")
    p.add_argument("--run-dir", default=None, help="folder for this run's outputs")
    p.add_argument("--device", default="cpu", help="torch device: cpu, cuda, cuda:1 ... (default: cpu)")
    p.add_argument("--json", default=None, metavar="FILE", help="also write machine-readable results here")


def config_from_args(args: argparse.Namespace) -> Config:
    return load_config(args.config, args.set)


class CommandError(RuntimeError):
    """A failure to report as one line (no traceback): a child process died, a server never came up."""
