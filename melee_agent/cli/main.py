"""Entry point of `melee-agent`: builds the argument parser from the subcommand modules.

A subcommand whose module cannot be imported (a missing optional dependency, a broken install)
is still listed; running it prints the import error instead of a traceback or silence.
"""

from __future__ import annotations

import argparse
import sys

import melee_agent
from melee_agent import pretrained
from melee_agent.cli import flags
from melee_agent.cli.common import CommandError, add_unavailable, import_or_explain, output_problem
from melee_agent.config import ConfigError
from melee_agent.extras import MissingExtra

#: Subcommand modules in this package; each defines ``register(subparsers)``.
SUBCOMMANDS = ("train", "manager", "worker", "launch", "eval", "bench", "fidelity", "watch", "umi", "compare",
               "cpu_report", "play", "ladder", "exploit")


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``melee-agent worker: error: argument --manager: must be ...``."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="melee-agent",
        description="Train and evaluate a Dueling DQN that plays Super Smash Bros. Melee.",
    )
    parser.add_argument("--version", action="version", version=f"melee-agent {melee_agent.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMANDS:
        module, why = import_or_explain(f"melee_agent.cli.{name}")
        if module is None:
            add_unavailable(sub, name, why or "unknown error")
        else:
            module.register(sub)
    return parser


def _runtime_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [CommandError, ConfigError, MissingExtra, FileNotFoundError, FileExistsError,
                                         KeyError, ValueError]
    for module, name in (("melee_agent.dolphin", "DolphinError"), ("melee_agent.workers.client", "ManagerError"),
                         ("melee_agent.manager.spawn", "ManagerProcessError"),
                         ("melee_agent.workers.launch_local", "FleetError"), ("umi.protocol", "ProtocolError")):
        mod, _ = import_or_explain(module)
        if mod is not None:
            errors.append(getattr(mod, name))
    return tuple(errors)


def _out_of_memory(e: RuntimeError) -> bool:
    """torch's allocation failures: CUDA's own type, the CPU allocator's message."""
    import torch  # noqa: PLC0415 (loaded already by the flags)

    cuda_oom = getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError)  # torch.OutOfMemoryError: 2.5 on
    return isinstance(e, cuda_oom) or "can't allocate memory" in str(e)


def _shipped_models(args: argparse.Namespace) -> str | None:
    """``pretrained:NAME`` in a model flag becomes the shipped file's path; an unknown name is the problem."""
    def resolve(spec: str) -> str:  # a character suffix (ladder's and exploit's MODEL:marth) stays on
        from melee_agent.league.ladder import split_model_arg  # noqa: PLC0415

        model, character = split_model_arg(spec) if spec.startswith(pretrained.PREFIX) else (spec, None)
        return pretrained.resolve(model) + (f":{character}" if character else "")

    # How the error names each: the flags by name, ladder's positional models as its usage line does.
    for name, said in (("policy", "--policy"), ("model", "--model"), ("models", "argument MODEL")):
        value = getattr(args, name, None)
        try:
            if isinstance(value, str):
                setattr(args, name, resolve(value))
            elif isinstance(value, list):
                setattr(args, name, [resolve(v) if isinstance(v, str) else v for v in value])
        except ValueError as e:
            return f"{said}: {e}"
    return None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    missing = flags.missing_device(args.device) if isinstance(getattr(args, "device", None), str) else None
    problem = missing or _shipped_models(args) or output_problem(args)
    if problem:
        print(f"melee-agent {args.command}: error: {problem}", file=sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except _runtime_errors() as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"melee-agent {args.command}: error: {msg}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        if not _out_of_memory(e):
            raise
        print(f"melee-agent {args.command}: error: out of memory ({str(e).splitlines()[0][:160]}); "
              "ask for fewer environments or episodes at once (--envs, --episodes, train.eval_envs)", file=sys.stderr)
        return 2
    except OSError as e:
        # A file or folder the user named cannot be read or written: the message names it. Any other OSError
        # (a broken pipe, too many open files) keeps its traceback, which says where it came from.
        if e.filename is None and not getattr(e, "path", None):
            raise
        print(f"melee-agent {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"melee-agent {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
