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


def add_common(p: argparse.ArgumentParser, config_default: str | None = "default", *, config: bool = True,
               run_dir: bool = True, json: bool = True, config_help: str | None = None) -> None:
    """The shared flags; a command leaves out (``config=False``, ``run_dir=False``, ``json=False``) those it would
    otherwise take and ignore."""
    if config:
        p.add_argument("--config", default=config_default,
                       help=f"a TOML file, or the name of a shipped config: {', '.join(shipped_configs())} "
                            f"({config_help or 'default: %(default)s'})")
        p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                       help="override one config value (repeatable)")
    if run_dir:
        p.add_argument("--run-dir", default=None, help="folder for this run's outputs")
    p.add_argument("--device", default="cpu", type=flags.device, help="torch device: cpu, cuda, cuda:1 ... (default: cpu)")
    if json:
        p.add_argument("--json", default=None, metavar="FILE", help="also write machine-readable results here")


def hidden_alias(p: argparse.ArgumentParser, flag: str, dest: str, **kwargs: Any) -> None:
    """An old name of a flag, still taken (so older commands keep working) but not shown in ``--help``."""
    p.add_argument(flag, dest=dest, help=argparse.SUPPRESS, **kwargs)


def config_from_args(args: argparse.Namespace) -> Config:
    return load_config(args.config, args.set)


#: What a model file says it plays, as ``--config`` settings: ``env.game``, ``env.action_set``, ``env.delay_frames``.
ModelSettings = dict


def model_settings(policy: str | None) -> ModelSettings | None:
    """The game, action set and input delay a model file records (``None`` for a scripted policy or a missing
    file; an unreadable one is left to the policy's own loading, which names the problem).

    The game is the action set's: a ``fight`` set (``fight``, ``fight:18``...) plays fights, ``untouchable``
    and ``untouchable-paper`` dodging; a file that does not record its delay (older files) leaves the config's.
    """
    from melee_agent.rl.policies import SCRIPTED  # noqa: PLC0415 (torch)

    if not policy or policy in SCRIPTED or not Path(policy).is_file():
        return None
    from melee_agent.envs.actions import base_name  # noqa: PLC0415
    from melee_agent.rl.model import trained_delay  # noqa: PLC0415
    from melee_agent.io.safetensors_header import HeaderError, read_metadata  # noqa: PLC0415

    try:
        with open(policy, "rb") as f:
            meta = read_metadata(f.read())
        delay = trained_delay(meta, policy)
    except (HeaderError, ValueError, OSError):
        return None
    action_set = meta.get("action_set")
    if not action_set:
        return None
    out: ModelSettings = {"env.action_set": action_set}
    game = {"fight": "fight", "untouchable": "dodge", "untouchable-paper": "dodge"}.get(base_name(action_set))
    if game is not None:
        out["env.game"] = game
    if delay is not None:
        out["env.delay_frames"] = delay
    if meta.get("state_layout"):
        out["env.state_layout"] = meta["state_layout"]
    if meta.get("stages"):
        out["env.stage"] = model_stage(meta, policy)
    return out


def model_stage(meta: dict[str, Any], policy: str) -> str:
    """The stage a model file plays unless told otherwise: the first it records (a ValueError naming the file for one
    this version does not know)."""
    from melee_agent.arena.stages import STAGES  # noqa: PLC0415
    from melee_agent.rl.model import trained_stages  # noqa: PLC0415

    first = trained_stages(meta, policy)[0]
    if first not in STAGES:
        raise ValueError(f"{policy}: the model trained on stage {first!r}, which this version does not know "
                         f"(known: {', '.join(STAGES)}); pass --stage NAME to play it on one of those")
    return first


def add_stage_flag(p: argparse.ArgumentParser) -> None:
    """``--stage NAME``: the stage played (the model file's own first, else the config's ``env.stage``)."""
    p.add_argument("--stage", default=None, metavar="NAME",
                   help="the stage: final_destination, battlefield, yoshis_story, dreamland, fountain_of_dreams or "
                        "pokemon_stadium (default: the model file's first, else the config's env.stage)")


def stage_override(stage: str | None) -> list[str]:
    """``--stage NAME`` as a ``--set`` override (none without it); an unknown name is refused naming the flag."""
    if stage is None:
        return []
    from melee_agent.arena.stages import STAGES  # noqa: PLC0415

    name = stage.strip().lower()
    if name not in STAGES:
        raise ValueError(f"--stage {stage!r} is not a stage; use one of {', '.join(STAGES)}")
    return [f"env.stage={name}"]


def _config_names_stage(config: str) -> bool:
    """Whether the config file itself sets ``env.stage`` (then it, not the model's own stage, is played)."""
    from melee_agent.config import _read_config_text, tomllib  # noqa: PLC0415

    try:
        return "stage" in tomllib.loads(_read_config_text(config)[0]).get("env", {})
    except (ValueError, OSError):
        return False  # load_config names the problem


def _settings_of(cfg: Config) -> ModelSettings:
    return {"env.game": cfg.env.game, "env.action_set": cfg.env.action_set, "env.delay_frames": cfg.env.delay_frames}


def _differences(cfg: Config, wanted: ModelSettings) -> dict[str, tuple[Any, Any]]:
    have = _settings_of(cfg)
    return {k: (have[k], v) for k, v in wanted.items() if have[k] != v}


def _matching_configs(wanted: ModelSettings, env: str | None) -> list[str]:
    """Shipped configs whose game, action set and delay are the model's; those of ``env`` (else the arena) first."""
    found = []
    for name in shipped_configs():
        try:
            cfg = load_config(name)
        except ValueError:
            continue
        if not _differences(cfg, wanted):
            found.append((cfg.env.env != (env or "arena"), name))
    return [name for _, name in sorted(found)]


def config_for_policy(config: str | None, overrides: list[str], policy: str | None,
                      env: str | None = None) -> tuple[Config, str]:
    """The config a command plays ``policy`` under, and its name.

    No ``--config`` (``config`` None): for a model file, the shipped config that plays its game, action set and
    delay (one of ``env``'s where there is one), else ``default`` set to them; for a scripted policy, ``default``.
    A ``--config`` given (with its ``--set`` values) must agree with the model file: where it does not, one line
    names the config that does (a ValueError). The state layout is always the model file's (``env.state_layout``); the
    stage is the model file's first (``env.stage``) unless ``--config`` or ``--set env.stage`` names one. A delay set by name (``--set env.delay_frames=N``) is played as
    asked: a model can be measured at another delay than its own (the policy warns).
    """
    wanted = model_settings(policy)
    # The state layout is the model's whatever the config says (its network reads that many floats): set after
    # the overrides, and not matched against the shipped configs, which all keep the default layout.
    layout = wanted.pop("env.state_layout", None) if wanted else None
    overrides = [*overrides, *([f"env.state_layout={layout}"] if layout else [])]
    # The stage is the model's first unless --stage, --set env.stage or the --config file names one: a model can be
    # played on any stage, so it is not matched against the configs either.
    stage = wanted.pop("env.stage", None) if wanted else None
    named = any(o.replace(" ", "").startswith("env.stage=") for o in overrides) or (
        config is not None and _config_names_stage(config))
    if stage and not named:
        overrides = [f"env.stage={stage}", *overrides]
    env_set = [f"env.env={env}"] if env else []
    if config is None:
        if wanted is None:
            return load_config("default", [*env_set, *overrides]), "default"
        matches = _matching_configs(wanted, env)
        if matches:
            return load_config(matches[0], [*env_set, *overrides]), matches[0]
        from melee_agent.arena.games import GAMES  # noqa: PLC0415

        rules = GAMES.get(str(wanted.get("env.game", "dodge")), GAMES["dodge"])
        fit = [f"env.reward={rules.reward}", *(f"{k}={v}" for k, v in wanted.items())]
        return load_config("default", [*fit, *env_set, *overrides]), "default"
    cfg = load_config(config, [*env_set, *overrides])
    wrong = _differences(cfg, wanted) if wanted else {}
    if any(o.replace(" ", "").startswith("env.delay_frames=") for o in overrides):
        wrong.pop("env.delay_frames", None)  # another delay asked for by name: played, and the policy warns
    if wrong:
        said = ", ".join(f"{k} {have!r}" for k, (have, _) in wrong.items())
        matches = _matching_configs(wanted or {}, env)
        fix = (f"use --config {matches[0]}" if matches else
               "pass " + " ".join(f"--set {k}={v}" for k, (_, v) in wrong.items()))
        model = ", ".join(f"{k} {v!r}" for k, v in (wanted or {}).items())
        raise ValueError(f"--config {config}: {said} does not match the model {policy} ({model}); {fix} "
                         "(or leave --config out: the model's own settings are used)")
    return cfg, config


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
            from melee_agent.rl.policies import SCRIPTED  # noqa: PLC0415 (the commands with --policy load it anyway)

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
