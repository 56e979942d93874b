"""Run settings: small dataclasses, one per part, loaded from `configs/*.toml`.

A config file has one TOML table per section (``[replay]``, ``[learner]``, ...). Keys a file
leaves out keep the dataclass defaults; unknown sections or keys are an error that names them,
so a typo never silently does nothing. Any value can be overridden from the command line with
``--set section.key=value`` (the value is parsed as TOML, falling back to a bare string).

Example::

    >>> cfg = load_config(None, overrides=["learner.batch_size=64"])
    >>> cfg.learner.batch_size
    64
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"


@dataclass
class ReplayConfig:
    capacity: int = 1_000_000
    block_size: int = 2_000
    prioritized: bool = False
    alpha: float = 0.6
    beta: float = 0.4


@dataclass
class LearnerConfig:
    batch_size: int = 128
    gamma: float = 0.99
    lr: float = 1e-4
    grad_clip: float = 10.0
    target_sync: int = 10_000
    metrics_every: int = 100
    huber_delta: float = 1.0


@dataclass
class EnvConfig:
    env: str = "arena"
    action_set: str = "untouchable"
    reward: str = "untouchable"
    cpu_level: int = 9
    max_frames: int = 3_600
    # Arena only: torch.compile the frame (3-9x faster frames; ~1-3 minutes of compiling per
    # batch size on first use, cached on disk after that).
    compile: bool = False


@dataclass
class WorkerConfig:
    envs: int = 64
    segment_seconds: float = 120.0
    n_step: int = 3
    upload_rows: int = 2_000
    epsilon_base: float = 0.4
    epsilon_alpha: float = 7.0
    epsilon_per_env: bool = False  # spread the Ape-X epsilons over every environment of the fleet
    torch_threads: int = 0  # 0: torch's default; 1 when workers share a small machine with the trainer


@dataclass
class ManagerConfig:
    host: str = "127.0.0.1"
    port: int = 8000
    burn_in: int = 50_000
    publish_every: int = 1_000
    max_train_per_row: float = 8.0
    queue_batches: int = 64
    max_upload_rows: int = 100_000
    checkpoint_every: int = 5_000
    keep_checkpoints: int = 3
    torch_threads: int = 0  # 0: torch's default; training shares a small machine with workers


@dataclass
class TrainConfig:
    minutes: float = 15.0
    workers: int = 1
    eval_every_minutes: float = 5.0
    eval_episodes: int = 200  # the final evaluation (the paper's metric over 200 episodes)
    progress_eval_episodes: int = 50  # the periodic ones during training (they share the CPU)
    keep_best: bool = True  # model.safetensors is the best periodically evaluated model (the last is kept too)


@dataclass
class DolphinConfig:
    dolphin_path: str = ""
    iso_path: str = ""
    agent_port: int = 1
    opponent_port: int = 2
    agent_character: str = "FOX"
    opponent_character: str = "MARTH"
    stage: str = "FINAL_DESTINATION"
    cpu_level: int = 9
    headless: bool = True


@dataclass
class Config:
    replay: ReplayConfig = field(default_factory=ReplayConfig)
    learner: LearnerConfig = field(default_factory=LearnerConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    worker: WorkerConfig = field(default_factory=WorkerConfig)
    manager: ManagerConfig = field(default_factory=ManagerConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    dolphin: DolphinConfig = field(default_factory=DolphinConfig)
    name: str = "default"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class ConfigError(ValueError):
    """A config file or override that does not fit the dataclasses; the message names it."""


def _parse_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _apply(cfg: Config, section: str, key: str, value: Any, origin: str) -> None:
    if section == "name" and key == "":
        cfg.name = str(value)
        return
    sections = {f.name for f in dataclasses.fields(cfg) if f.name != "name"}
    if section not in sections:
        raise ConfigError(f"{origin}: unknown section [{section}] (known: {', '.join(sorted(sections))})")
    part = getattr(cfg, section)
    types = {f.name: f.type for f in dataclasses.fields(part)}
    if key not in types:
        raise ConfigError(f"{origin}: unknown key {section}.{key} (known: {', '.join(sorted(types))})")
    current = getattr(part, key)
    if isinstance(current, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{origin}: {section}.{key} must be true or false, got {value!r}")
    elif isinstance(current, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{origin}: {section}.{key} must be an integer, got {value!r}")
    elif isinstance(current, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{origin}: {section}.{key} must be a number, got {value!r}")
        value = float(value)
    elif isinstance(current, str):
        value = str(value)
    setattr(part, key, value)


def resolve_config_path(name_or_path: str | os.PathLike | None) -> Path | None:
    """`None` -> no file; a bare name like ``small`` -> ``configs/small.toml``; else a path."""
    if name_or_path is None:
        return None
    p = Path(name_or_path)
    if p.exists():
        return p
    candidate = CONFIG_DIR / f"{name_or_path}.toml"
    if p.suffix == "" and candidate.exists():
        return candidate
    raise ConfigError(f"config file not found: {name_or_path}")


def load_config(path: str | os.PathLike | None = "default", overrides: list[str] | None = None) -> Config:
    """Read a TOML config (a path or a name in ``configs/``) and apply ``section.key=value`` overrides."""
    cfg = Config()
    file = resolve_config_path(path)
    if file is not None:
        try:
            data = tomllib.loads(file.read_text())
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{file}: not valid TOML: {e}") from None
        cfg.name = str(data.pop("name", file.stem))
        for section, table in data.items():
            if not isinstance(table, dict):
                raise ConfigError(f"{file}: top-level key {section!r} must be a [section] table")
            for key, value in table.items():
                _apply(cfg, section, key, value, str(file))
    for item in overrides or []:
        if "=" not in item or "." not in item.split("=", 1)[0]:
            raise ConfigError(f"override {item!r} must look like section.key=value")
        dotted, text = item.split("=", 1)
        section, key = dotted.strip().split(".", 1)
        _apply(cfg, section, key.strip(), _parse_value(text.strip()), f"--set {item}")
    return cfg


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `path` through a temp file in the same folder and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_json(path: str | os.PathLike, obj: Any) -> None:
    atomic_write_bytes(path, (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode())


def save_resolved_config(cfg: Config, run_dir: str | os.PathLike) -> Path:
    """Save the config actually used beside a run, as JSON (``config.json``)."""
    out = Path(run_dir) / "config.json"
    atomic_write_json(out, cfg.to_dict())
    return out
