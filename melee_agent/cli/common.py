"""Flags every subcommand shares, how they turn into a resolved `Config`, and how they are forwarded."""

from __future__ import annotations

import argparse
import importlib
import os
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from melee_agent.config import Config, load_config, shipped_configs
from melee_agent.cli import flags


def add_common(p: argparse.ArgumentParser, config_default: str | None = "default") -> None:
    p.add_argument("--config", default=config_default,
                   help=f"a TOML file, or the name of a shipped config: {', '.join(shipped_configs())} "
                        "(default: %(default)s)")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="override one config value (repeatable)")
    p.add_argument("--run-dir", default=None, help="folder for this run's outputs")
    p.add_argument("--device", default="cpu", type=flags.device, help="torch device: cpu, cuda, cuda:1 ... (default: cpu)")
    p.add_argument("--json", default=None, metavar="FILE", help="also write machine-readable results here")


def config_from_args(args: argparse.Namespace) -> Config:
    return load_config(args.config, args.set)


def forward_flags(args: argparse.Namespace, defaults: tuple[str, ...] = ()) -> list[str]:
    """The common flags of ``args`` (config, device, overrides) for a child ``melee-agent`` process.

    ``defaults`` are ``section.key=value`` overrides placed before the user's own, so the user's win.
    """
    flags = ["--config", args.config, "--device", args.device]
    for s in (*defaults, *args.set):
        flags += ["--set", s]
    return flags


class CommandError(RuntimeError):
    """A failure to report as one line (no traceback): a child process died, a server never came up."""


def import_or_explain(module: str) -> tuple[ModuleType | None, str | None]:
    """``(module, None)``, or ``(None, why)`` when importing it failed (a missing dependency, a bug)."""
    try:
        return importlib.import_module(module), None
    except Exception as e:  # noqa: BLE001 (shown to the user when the subcommand is used)
        return None, f"{type(e).__name__}: {e}"


def add_unavailable(sub: argparse._SubParsersAction, name: str, why: str) -> None:
    """Register ``name`` as a subcommand that explains why it cannot run, instead of dropping it."""
    # No option prefix: whatever flags follow are taken as they come, so the error shown is the import's.
    p = sub.add_parser(name, help=f"(unavailable: {why})", add_help=False, prefix_chars="\x00")
    p.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    p.set_defaults(func=_unavailable(name, why))


def _unavailable(name: str, why: str) -> Callable[[Any], int]:
    def run(args: argparse.Namespace) -> int:
        raise CommandError(f"`{name}` cannot run here: importing it failed with {why}")

    return run


#: Flags naming a file a command writes, and flags naming what it reads (files, or run folders whose files it reads).
OUTPUT_FLAGS = {"json": "--json", "plot": "--plot", "out": "--out"}
INPUT_FLAGS = ("policy", "model", "replays", "config", "token_file")
RUN_FILES = ("eval.json", "config.json", "config.toml")  # what `compare` reads in each run folder


def output_problem(args: argparse.Namespace) -> str | None:
    """Why an output flag of ``args`` cannot be written, checked before the command does any work, or None.

    Refused: an empty name, a folder, a folder that is missing (where none of it can be made) or not writable,
    and a file the same command reads (writing it would destroy its own input, with exit status 0).
    """
    reads: list[Path] = []
    for name in INPUT_FLAGS:
        value = getattr(args, name, None)
        values = value if isinstance(value, list) else [value]
        if name == "policy" and isinstance(value, str):
            from melee_agent.policies import SCRIPTED  # noqa: PLC0415 (the commands with --policy load it anyway)

            # A scripted policy's name is not a file, whatever file of that name the folder holds.
            values = [] if value in SCRIPTED else values
        reads += [Path(v) for v in values if isinstance(v, str) and v]
    runs = getattr(args, "runs", None)  # compare's run folders (bench learn's --runs is a count)
    if isinstance(runs, list):
        reads += [Path(run) / f for run in runs if isinstance(run, str) for f in RUN_FILES]
    written: dict[str, str] = {}
    for name, flag in OUTPUT_FLAGS.items():
        value = getattr(args, name, None)
        if value is None or not isinstance(value, (str, os.PathLike)):
            continue
        why = _unwritable(Path(value), str(value), reads)
        key = os.path.abspath(value) if str(value).strip() else ""
        if not why and key in written:
            why = f"is also the {written[key]} output; give each its own file"
        if why:
            return f"{flag} {str(value)!r}: {why}"
        written[key] = flag
    return None


def _unwritable(out: Path, text: str, reads: list[Path]) -> str | None:
    if not text.strip():
        return "an empty file name"
    if out.is_dir():
        return "is a folder; give a file name"
    for r in reads:
        if out.exists() and r.exists() and os.path.samefile(out, r):
            return f"is also what this command reads ({r}); writing it would destroy it"
    folder = out.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # the folders below it are made on writing
    if not folder.is_dir():
        return f"{folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot write in {folder} (read-only or no permission)"
    return None


def require_png(plot: str) -> None:
    """``--plot`` names a PNG (the plots are drawn as PNG whatever the name says)."""
    if Path(plot).suffix.lower() != ".png":
        raise ValueError(f"--plot {plot}: the plot is a PNG; name it .png")
