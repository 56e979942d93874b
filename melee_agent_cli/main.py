"""Entry point of `melee-agent`: builds the argument parser from the subcommand modules."""

from __future__ import annotations

import argparse
import importlib
import sys

from melee_agent.config import ConfigError

#: Subcommand modules in this package; each defines ``register(subparsers)``.
SUBCOMMANDS = ("train", "manager", "worker", "launch", "eval", "bench")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="melee-agent",
        description="Train and evaluate a Dueling DQN that plays Super Smash Bros. Melee.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMANDS:
        module = f"melee_agent_cli.{name}"
        try:
            importlib.import_module(module).register(sub)
        except ModuleNotFoundError as e:
            if e.name != module:  # a missing dependency inside the module is a real error
                raise
    return parser


def _runtime_errors() -> tuple[type[BaseException], ...]:
    from melee_agent.dolphin import DolphinError  # noqa: PLC0415
    from melee_agent_cli.common import CommandError  # noqa: PLC0415
    from workers.client import ManagerError  # noqa: PLC0415

    return (CommandError, ManagerError, DolphinError)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ConfigError, FileNotFoundError, KeyError, ValueError, *_runtime_errors()) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"melee-agent {args.command}: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"melee-agent {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
