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
import difflib
import json
import math
import os
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from melee_agent.io.files import atomic_write_json
from melee_agent.games import GAMES

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

#: The shipped configs: the repository's ``configs/`` folder, installed as ``melee_agent.configs``.
CONFIG_PACKAGE = "melee_agent.configs"


@dataclass
class ReplayConfig:
    capacity: int = 1_000_000
    block_size: int = 2_000
    prioritized: bool = False
    alpha: float = 0.6
    beta: float = 0.4  # the importance-weight exponent at the start, annealed to 1 over beta_steps
    beta_steps: int = 100_000  # train steps (0: beta stays put)


@dataclass
class LearnerConfig:
    batch_size: int = 128
    gamma: float = 0.99
    lr: float = 1e-4
    grad_clip: float = 10.0
    target_sync: int = 10_000
    metrics_every: int = 100
    huber_delta: float = 1.0
    # The network's width (melee_agent/rl/model.py): the shared layer's units and each stream's hidden units.
    shared: int = 128
    stream: int = 512
    # A learned vector of this many floats for each fighter's action id, beside the state (0: none). The state
    # holds an action as id / 400, where neighbouring ids can be moves that need opposite answers.
    action_embed: int = 0
    # Each row's reward is multiplied by this in the TD target (y = scale * r + discount * Q'). Adam is
    # nearly blind to a loss's scale, so what it changes is where TD errors meet the Huber loss's
    # huber_delta: 0.1 keeps a fight's stock rewards (1 per stock) inside its quadratic part.
    reward_scale: float = 1.0
    # On CUDA: capture the whole train step once as a CUDA graph and replay it (no effect on CPU).
    cuda_graph: bool = True


@dataclass
class EnvConfig:
    env: str = "arena"
    action_set: str = "untouchable"
    reward: str = "untouchable"
    cpu_level: int = 9
    # Arena only: a set of levels, each environment drawing its CPU's level again at every episode
    # reset (weights optional, one per level); empty: every episode plays cpu_level.
    cpu_levels: list[int] = field(default_factory=list)
    level_weights: list[float] = field(default_factory=list)
    # The stage (arena/stages.py): one name ("final_destination", "battlefield", "yoshis_story", "dreamland",
    # "fountain_of_dreams", "pokemon_stadium"), or a list of them, each environment drawing its stage again at
    # every episode reset (weights optional, one per stage, as level_weights). Model files record it.
    stage: str | list[str] = "final_destination"
    stage_weights: list[float] = field(default_factory=list)
    # The dodging task's frame limit (a cut); a fight's clock is clock_frames.
    max_frames: int = 3_600
    # Arena fights only: the game's clock in frames, its end the game's end (0: Melee's 8:00, 28,800
    # frames). Shorter clocks are for smoke tests; every shipped config keeps 0.
    clock_frames: int = 0
    # "dodge" (the Untouchable task) or "fight" (whole 4-stock games, docs/design.md "Fights"), in the
    # arena and in Dolphin (configs/dolphin-fight.toml).
    game: str = "dodge"
    # Arena only: which CPU plays Marth -- "melee" (Melee's own AI from the decompilation and SmashWiki,
    # DESIGN.md "Melee's CPU", arena/cpu/melee.py: both games play it on the fight's engine) or "designed"
    # (the earlier CPU: fights arena/cpu/designed.py; the dodging game its earlier frame, arena/dodge/frame.py
    # with arena/cpu/levels.py CPU_LEVELS). "melee" is the default; results made before it were against
    # "designed" (set env.cpu = "designed" to reproduce them).
    cpu: str = "melee"
    # Frames between the agent's controller state and the game reading it, in the arena and in
    # Dolphin (the Computer Melee Championship plays at 18 and 21).
    delay_frames: int = 0
    # Arena fights only: the character on each port (DESIGN.md "Ports"): the agent's on port 0, the CPU's on
    # port 1 (the CPU plays Marth only). ["marth", "marth"] trains Marth against the Marth CPU.
    characters: list[str] = field(default_factory=lambda: ["fox", "marth"])
    # The state layout (DESIGN.md "State"): "untouchable-27" (the default and the dodging game's) or, in
    # fights, "fight-30", the 27 floats and the time left and both players' stocks. Where the layout does not
    # show the time left, a game cut by its clock is a truncation (bootstrapped); with "fight-30" it is terminal.
    state_layout: str = "untouchable-27"
    # Arena only: torch.compile the frame (3-9x faster frames; ~1-3 minutes of compiling per
    # batch size on first use, cached on disk after that).
    compile: bool = False
    # Arena only: torch.compile the evaluation arenas (train's periodic checks and final report, and
    # `melee-agent eval`) whatever env.compile says for the workers. Whole games are long: compiled, a
    # fight's final report takes minutes instead of half an hour.
    compile_eval: bool = False


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
    spool_mb: float = 1024.0  # batches kept on disk while the manager is away; the oldest go first past this
    backoff_max_s: float = 30.0  # the longest wait between tries to reach the manager


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
    eval_episodes: int = 200  # the final evaluation, at each CPU level 1-9 (the paper's metric over 200 episodes)
    progress_eval_episodes: int = 50  # the periodic ones during training, spread over the trained levels
    keep_best: bool = True  # model.safetensors is the best periodically evaluated model (the last is kept too)
    # Fights (env.game = "fight") only: the final report plays whole games instead of eval_episodes.
    final_games_per_level: int = 100  # games at each CPU level 1-9, for the model and each baseline
    # Both games: more games (fights) or one-minute episodes (dodging) at level 9, for the model alone (its
    # headline figure; the Untouchable paper measured level 9 only).
    final_games_level_9: int = 1_000
    # The final report plays the scripted baselines (noop, random; dodging adds dodger and roller, fights dodger
    # and fighter) beside the model. They do not depend on the model: runs compared with each other may leave
    # them out.
    final_baselines: bool = True
    # Arena only: at most this many evaluation games or episodes play side by side (more wait for a free one).
    # An eager arena's frame costs about the same from 90 to 1,800 environments (31.7 ms at 90, 30.2 at 900, 35.1
    # at 1,800: dodging, one thread, measured 2026-11-29), so the 1,000 level-9 minutes play at once.
    eval_envs: int = 1_000
    # Where the periodic checks (the learning curve's points) play: "" is the training device (--device);
    # "cpu" keeps them off a GPU that the learner and the workers keep busy (on an H100 a 90-episode
    # dodging check took 3-4 s with nothing else running and 26 s to 50 s or more during training).
    # The final report and its baselines play on the training device, which has nothing else to do by then.
    check_device: str = ""
    # `train --fused`: the arena, acting, n-step rows, the device replay and the learner in one process on
    # one device (the [fused] section), instead of a manager process and worker processes.
    fused: bool = False
    # The run's seed (`train --seed`): the arena plays from it, and the replay's sampling, the networks' first
    # weights, each worker's and the league's generators from seeds derived from it (melee_agent/rl/seeds.py).
    # Also in eval.json's "training" and every model file. docs/training.md "Reproducing a run" says what
    # stays nondeterministic.
    seed: int = 0
    # Fused runs only: when > 0, train for exactly this many chunks of fused.chunk_frames frames (a league's
    # rounds) instead of `minutes` of wall time, with a periodic check every eval_every_chunks chunks. A count
    # of work, not of time: two runs from one seed then train the same steps and check the same models.
    chunks: int = 0
    eval_every_chunks: int = 0


@dataclass
class FusedConfig:
    """``train --fused`` (``train.fused = true``): the arena, acting, rows, replay and learner in one process."""

    # Arena games side by side (0: worker.envs times train.workers, the fleet `train` would run).
    envs: int = 0
    # Samples the learner draws per row written: train steps = rows * replay_ratio / learner.batch_size.
    # 8 is Atari DQN's (a batch of 32 every 4 transitions); the manager path drew about 4-7 on two CPU
    # cores and 9-38 on an H100 (README "On a GPU").
    replay_ratio: float = 8.0
    # Frames each environment plays between looks at the learner (n-step rows wait across chunks, so a
    # short chunk cuts no return short): small, so the learner's steps interleave with play.
    chunk_frames: int = 8
    # Acting network: 0 acts with the learner's online network as it trains (Podracer's Anakin); K > 0
    # with a copy refreshed every K train steps.
    act_refresh_steps: int = 0
    # Threads torch uses in the fused process (0: torch's default). One: on this 2-core machine, beside the
    # check process, two threads played B = 1,024 dodging games at 7,000 env-frames/s against 62,000 on one
    # (measured side by side; small ops gain nothing from a second thread and lose to its waits).
    torch_threads: int = 1


@dataclass
class LeagueConfig:
    """``configs/league.toml``: the main agent trains against a pool drawn by PFSP (docs/league.md); fused runs only."""

    # The pool starts with the CPU at env.cpu_levels (else env.cpu_level), each level a member with its own rating.
    enabled: bool = False
    # Games side by side against the pool's models (snapshots, exploiters' frozen copies), beside the
    # fused.envs games against the CPU; 0: as many as fused.envs.
    model_envs: int = 0
    # The clock, in frames, of every game between models (the models' arena and the exploiters'); at its end the game
    # goes to the one with more stocks, then less percent (Melee's rule at time). 0: env.clock_frames, as the CPU's
    # games. Greedy-ish models that both shield and wait seldom end an 8-minute game in a short run, so their
    # results (PFSP's win rates, the ratings) come late; a shorter clock gives them sooner (a choice, not the game's).
    model_clock_frames: int = 0
    # A frozen snapshot of the main joins the pool every this many of its train steps; the oldest leave past
    # max_snapshots (their ratings stay in the report).
    snapshot_every_steps: int = 5_000
    max_snapshots: int = 8
    # PFSP's f_hard(x) = (1 - x)^p (AlphaStar; x: the main's win rate against the member): p = 2 is its "squared".
    pfsp_power: float = 2.0
    # Each game counts this much less per later batch of results in the win rates PFSP reads (AlphaStar's
    # payoff decays old games too; the value is a guess), so a member the main has learned to beat fades.
    win_rate_decay: float = 0.99
    # Exploiters: agents trained only against the current main, each in its own arena of exploiter_envs games.
    exploiters: int = 1
    exploiter_envs: int = 64
    # A frozen copy of an exploiter joins the pool, and the exploiter is reset, once it wins this share of its
    # recent games (AlphaStar's main exploiters: 70%).
    exploiter_promote_at: float = 0.7
    # ... and it is reset (weights as exploiter_init says, empty replay) when, past exploiter_patience_steps train
    # steps of its generation, it wins less than this share of its recent games (it stopped winning; a guess).
    exploiter_reset_below: float = 0.2
    exploiter_patience_steps: int = 20_000
    # The recent games an exploiter's verdict reads.
    exploiter_window: int = 200
    # Its replay's rows and the rows it holds before it trains (smaller than the main's: it trains on its own
    # games only; both guesses).
    exploiter_replay_capacity: int = 200_000
    exploiter_burn_in: int = 10_000
    # What a new exploiter generation starts from: "fresh" weights, or a copy of the "main" agent's online network
    # as it is at the reset (AlphaStar resets its exploiters to the supervised agent; here there is none, and the
    # main is the nearest competent player: a copy starts near an even score and searches for holes beside it,
    # where fresh weights must first learn to fight on a small share of the compute). Its replay starts empty.
    exploiter_init: str = "fresh"
    # An exploiter's share of the machine: chunks it plays every round of the league (the main plays one), and the
    # samples its learner draws per row (0: fused.replay_ratio). One chunk at the main's ratio gives an exploiter of
    # 64 games about 8 frames a game a round: in the 60-minute runs L1 and L2 (about 1,000 rounds) each of its games
    # saw some 2 minutes of play, enough for a fresh exploiter to lose quickly and too few for one that holds its
    # own to finish the games its verdicts read.
    exploiter_chunks: int = 1
    exploiter_replay_ratio: float = 0.0


@dataclass
class DolphinConfig:
    dolphin_path: str = ""
    iso_path: str = ""
    agent_port: int = 1
    opponent_port: int = 2
    agent_character: str = "FOX"
    opponent_character: str = "MARTH"
    # "" (the default): Dolphin plays env.stage. Its older name: a libmelee stage name (FINAL_DESTINATION ...)
    # or RANDOM_STAGE; where set it must agree with env.stage, which then follows it.
    stage: str = ""
    headless: bool = True  # what it means depends on the build: see dolphin.launch_options
    # Supervision (see melee_agent/dolphin/supervisor.py): a Dolphin silent this long while a frame
    # is awaited is stopped and restarted; so is one stuck in the menus this long.
    timeout_s: float = 30.0
    menu_timeout_s: float = 120.0
    # At most max_restarts restarts within any restart_window_s seconds, then the worker stops.
    max_restarts: int = 5
    restart_window_s: float = 600.0
    # Tries to start Dolphin (each on a new spectator port) before a restart counts as failed.
    start_attempts: int = 3
    # A game with the wrong setup is quit (pause, L+R+A+START); one not quit within this is restarted,
    # and this many wrong games in a row stop the worker with a DolphinError naming what was seen.
    quit_timeout_s: float = 15.0
    max_setup_mismatches: int = 5
    # Dolphin's own log verbosity (its Logger.ini): 1 notices, 2 errors (default), 3 warnings, 4 info, 5 debug.
    log_level: int = 2
    # Slippi replays (.slp) of every game, into replay_dir (eval --env dolphin turns them on under its run folder).
    save_replays: bool = False
    replay_dir: str = ""


@dataclass
class Config:
    replay: ReplayConfig = field(default_factory=ReplayConfig)
    learner: LearnerConfig = field(default_factory=LearnerConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    worker: WorkerConfig = field(default_factory=WorkerConfig)
    manager: ManagerConfig = field(default_factory=ManagerConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    fused: FusedConfig = field(default_factory=FusedConfig)
    league: LeagueConfig = field(default_factory=LeagueConfig)
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
    if (section, key) == ("env", "stage"):
        setattr(part, key, _stage_value(value, origin))
        return
    if isinstance(current, list):
        if not isinstance(value, list):
            raise ConfigError(f"{origin}: {section}.{key} must be a list like [1, 2], got {value!r}")
        kind = {"cpu_levels": int, "characters": str}.get(key, float)
        for x in value:
            if kind is str:
                if not isinstance(x, str):
                    raise ConfigError(f"{origin}: {section}.{key} must hold names like \"fox\", got {x!r}")
                continue
            if isinstance(x, bool) or not isinstance(x, (int, float)) or (kind is int and not isinstance(x, int)):
                raise ConfigError(f"{origin}: {section}.{key} must hold {'integers' if kind is int else 'numbers'}, "
                                  f"got {x!r}")
        value = [kind(x) for x in value]
    elif isinstance(current, bool):
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


def _stage_value(value: Any, origin: str) -> str | list[str]:
    """``env.stage``: a name, or a list of names (``[battlefield, dreamland]`` unquoted is taken too)."""
    if isinstance(value, str) and value.strip().startswith("[") and value.strip().endswith("]"):
        value = [v.strip().strip("'\"") for v in value.strip()[1:-1].split(",") if v.strip()]
    if isinstance(value, list):
        if not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{origin}: env.stage must be a stage name or a list of names like "
                              f'["battlefield", "dreamland"], got {value!r}')
        return list(value)
    if not isinstance(value, str):
        raise ConfigError(f"{origin}: env.stage must be a stage name or a list of names, got {value!r}")
    return value


def shipped_configs() -> list[str]:
    """Names of the configs that ship with the package (``default``, ``small``, ``dolphin``...)."""
    return sorted(f.name[:-5] for f in resources.files(CONFIG_PACKAGE).iterdir() if f.name.endswith(".toml"))


def _read_config_text(name_or_path: str | os.PathLike) -> tuple[str, str]:
    """``(text, origin)`` of a config: a file path, or a bare name of a shipped config."""
    p = Path(name_or_path)
    if p.is_file():
        try:
            return p.read_text(encoding="utf-8"), str(p)
        except UnicodeDecodeError:
            raise ConfigError(f"{p}: not a config (TOML is UTF-8 text; this file is not text)") from None
    if p.suffix == "" and p.name == str(name_or_path):
        shipped = resources.files(CONFIG_PACKAGE) / f"{name_or_path}.toml"
        if shipped.is_file():
            return shipped.read_text(), f"{name_or_path}.toml (shipped)"
    close = difflib.get_close_matches(str(name_or_path), shipped_configs(), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}? " if close else ""
    raise ConfigError(f"config file not found: {name_or_path} ({hint}a TOML path, or one of the shipped configs: "
                      f"{', '.join(shipped_configs())})")


# The stages libmelee's MenuHelper.choose_stage can pick (melee/menuhelper.py: six stages and Random);
# any other dolphin.stage would leave the stage select screen untouched and every game mismatched.
DOLPHIN_STAGES = ("FINAL_DESTINATION", "BATTLEFIELD", "POKEMON_STADIUM", "DREAMLAND", "FOUNTAIN_OF_DREAMS",
                  "YOSHIS_STORY", "RANDOM_STAGE")
# Characters that are not on the character select screen (libmelee's enum also names these).
NOT_SELECTABLE = ("NANA", "WIREFRAME_MALE", "WIREFRAME_FEMALE", "GIGA_BOWSER", "SANDBAG", "UNKNOWN_CHARACTER")


def check_dolphin_config(d: DolphinConfig, origin: str = "config") -> None:
    """One line naming the first [dolphin] value the worker cannot play with (None when all can)."""
    import melee.enums  # noqa: PLC0415 (only Dolphin configs need libmelee's names)

    if d.stage and d.stage.upper() not in DOLPHIN_STAGES:
        raise ConfigError(f"{origin}: dolphin.stage {d.stage!r} is not one libmelee's menu helper can pick; "
                          f"use one of {', '.join(DOLPHIN_STAGES)}")
    names = [c.name for c in melee.enums.Character if c.name not in NOT_SELECTABLE]
    for key in ("agent_character", "opponent_character"):
        value = getattr(d, key)
        if value.upper() not in names:
            raise ConfigError(f"{origin}: dolphin.{key} {value!r} is not a character on the select screen; "
                              f"use one of {', '.join(names)}")
    if d.opponent_character.upper() == "SHEIK":
        raise ConfigError(f"{origin}: dolphin.opponent_character SHEIK cannot be a CPU (libmelee picks Sheik through "
                          "Zelda, by hand); use ZELDA")
    if not (1 <= d.agent_port <= 4 and 1 <= d.opponent_port <= 4) or d.agent_port == d.opponent_port:
        raise ConfigError(f"{origin}: dolphin.agent_port and dolphin.opponent_port must be two different ports 1-4, "
                          f"got {d.agent_port} and {d.opponent_port}")
    if not 1 <= d.log_level <= 5:
        raise ConfigError(f"{origin}: dolphin.log_level must be 1-5 (Dolphin's notice..debug), got {d.log_level}")
    for key in ("timeout_s", "menu_timeout_s", "quit_timeout_s", "restart_window_s"):
        if getattr(d, key) <= 0:
            raise ConfigError(f"{origin}: dolphin.{key} must be positive, got {getattr(d, key)}")
    for key in ("max_restarts", "start_attempts", "max_setup_mismatches"):
        if getattr(d, key) < 1:
            raise ConfigError(f"{origin}: dolphin.{key} must be at least 1, got {getattr(d, key)}")


_POSITIVE, _AT_LEAST_1, _AT_LEAST_0 = "a positive number", "an integer of at least 1", "0 or more"
_FRACTION = "a number from 0 to 1"
_SEED = "an integer from 0 to 2^62"
_LEVEL, _LEVELS, _PORT, _WEIGHTS = "a CPU level 1-9", "CPU levels 1-9", "a port 0-65535", "weights of 0 or more"
#: The values each setting can take, where not every value of its type can work (a zero batch, a NaN rate).
#: Checked once the file and the overrides are applied, so a run never starts on one it would fail with later.
RANGES: dict[str, str] = {
    "replay.capacity": _AT_LEAST_1, "replay.block_size": _AT_LEAST_1, "replay.alpha": _AT_LEAST_0,
    "replay.beta": _FRACTION, "replay.beta_steps": _AT_LEAST_0,
    "learner.batch_size": _AT_LEAST_1, "learner.gamma": _FRACTION, "learner.lr": _POSITIVE,
    "learner.grad_clip": _POSITIVE, "learner.target_sync": _AT_LEAST_1, "learner.metrics_every": _AT_LEAST_1,
    "learner.huber_delta": _POSITIVE, "learner.shared": _AT_LEAST_1, "learner.stream": _AT_LEAST_1,
    "learner.action_embed": _AT_LEAST_0,
    "learner.reward_scale": _POSITIVE,
    "env.cpu_level": _LEVEL, "env.cpu_levels": _LEVELS, "env.level_weights": _WEIGHTS,
    "env.stage_weights": _WEIGHTS,
    "env.max_frames": _AT_LEAST_1, "env.clock_frames": _AT_LEAST_0, "env.delay_frames": _AT_LEAST_0,
    "worker.envs": _AT_LEAST_1, "worker.segment_seconds": _POSITIVE, "worker.n_step": _AT_LEAST_1,
    "worker.upload_rows": _AT_LEAST_1, "worker.epsilon_base": _FRACTION, "worker.epsilon_alpha": _AT_LEAST_0,
    "worker.torch_threads": _AT_LEAST_0, "worker.spool_mb": _POSITIVE, "worker.backoff_max_s": _POSITIVE,
    "manager.port": _PORT, "manager.burn_in": _AT_LEAST_0, "manager.publish_every": _AT_LEAST_1,
    "manager.max_train_per_row": _POSITIVE, "manager.queue_batches": _AT_LEAST_1,
    "manager.max_upload_rows": _AT_LEAST_1, "manager.checkpoint_every": _AT_LEAST_1,
    "manager.keep_checkpoints": _AT_LEAST_1, "manager.torch_threads": _AT_LEAST_0,
    "train.minutes": _POSITIVE, "train.workers": _AT_LEAST_1, "train.eval_every_minutes": _POSITIVE,
    "train.eval_episodes": _AT_LEAST_1, "train.progress_eval_episodes": _AT_LEAST_1, "train.seed": _SEED,
    "train.chunks": _AT_LEAST_0, "train.eval_every_chunks": _AT_LEAST_0,
    "fused.envs": _AT_LEAST_0, "fused.replay_ratio": _POSITIVE, "fused.chunk_frames": _AT_LEAST_1,
    "fused.act_refresh_steps": _AT_LEAST_0, "fused.torch_threads": _AT_LEAST_0,
    "train.final_games_per_level": _AT_LEAST_1, "train.final_games_level_9": _AT_LEAST_0, "train.eval_envs": _AT_LEAST_1,
    "league.model_envs": _AT_LEAST_0, "league.model_clock_frames": _AT_LEAST_0, "league.snapshot_every_steps": _AT_LEAST_1,
    "league.max_snapshots": _AT_LEAST_1, "league.pfsp_power": _POSITIVE, "league.win_rate_decay": _FRACTION,
    "league.exploiters": _AT_LEAST_0, "league.exploiter_envs": _AT_LEAST_1, "league.exploiter_promote_at": _FRACTION,
    "league.exploiter_reset_below": _FRACTION, "league.exploiter_patience_steps": _AT_LEAST_0,
    "league.exploiter_window": _AT_LEAST_1, "league.exploiter_replay_capacity": _AT_LEAST_1,
    "league.exploiter_burn_in": _AT_LEAST_0, "league.exploiter_chunks": _AT_LEAST_1,
    "league.exploiter_replay_ratio": _AT_LEAST_0,
}


#: Each kind of :data:`RANGES` as a test of one value (NaN fails every comparison, so every test refuses it).
_ONE_VALUE = {
    _POSITIVE: lambda v: math.isfinite(v) and v > 0, _AT_LEAST_1: lambda v: math.isfinite(v) and v >= 1,
    _AT_LEAST_0: lambda v: math.isfinite(v) and v >= 0, _FRACTION: lambda v: 0 <= v <= 1,
    _LEVEL: lambda v: 1 <= v <= 9, _LEVELS: lambda v: 1 <= v <= 9, _PORT: lambda v: 0 <= v <= 65535,
    _WEIGHTS: lambda v: math.isfinite(v) and v >= 0, _SEED: lambda v: 0 <= v <= 2**62,  # rl/seeds.py MAX_SEED
}


def _fits(value: Any, kind: str) -> bool:
    values = value if isinstance(value, list) else [value]
    return all(map(_ONE_VALUE[kind], values)) and (kind != _WEIGHTS or not values or sum(values) > 0)


def check_ranges(cfg: Config) -> None:
    """A :class:`ConfigError` naming the first setting outside :data:`RANGES`.

    >>> c = Config(); c.learner.lr = float("nan"); check_ranges(c)
    Traceback (most recent call last):
    ...
    melee_agent.config.ConfigError: learner.lr must be a positive number, got nan
    """
    for dotted, kind in RANGES.items():
        section, key = dotted.split(".")
        value = getattr(getattr(cfg, section), key)
        if not _fits(value, kind):
            raise ConfigError(f"{dotted} must be {kind}, got {value!r}")


def load_config(path: str | os.PathLike | None = "default", overrides: list[str] | None = None) -> Config:
    """Read a TOML config (a path, or the name of a shipped config) and apply ``section.key=value`` overrides."""
    cfg = Config()
    if path is not None:
        text, origin = _read_config_text(path)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{origin}: not valid TOML: {e}") from None
        cfg.name = str(data.pop("name", Path(path).stem))
        for section, table in data.items():
            if not isinstance(table, dict):
                raise ConfigError(f"{origin}: top-level key {section!r} must be a [section] table")
            for key, value in table.items():
                _apply(cfg, section, key, value, origin)
    for item in overrides or []:
        if "=" not in item or "." not in item.split("=", 1)[0]:
            raise ConfigError(f"override {item!r} must look like section.key=value")
        dotted, text = item.split("=", 1)
        section, key = dotted.strip().split(".", 1)
        _apply(cfg, section, key.strip(), _parse_value(text.strip()), f"--set {item}")
    check_ranges(cfg)
    weights, levels = cfg.env.level_weights, cfg.env.cpu_levels
    if weights and len(weights) != len(levels):
        # Caught here, not in a worker that would die on it: `--set env.cpu_levels=[9]` on a weighted config.
        raise ConfigError(f"env.level_weights has {len(weights)} weights, one per level of env.cpu_levels, but "
                          f"env.cpu_levels is {levels}: give one weight per level, or env.level_weights=[] "
                          "for equal weights")
    if cfg.env.cpu not in ("designed", "melee"):
        raise ConfigError(f"env.cpu must be 'designed' or 'melee', got {cfg.env.cpu!r}")
    check_layout_config(cfg)
    check_stage_config(cfg)
    check_characters_config(cfg)
    check_league_config(cfg)
    if cfg.env.env == "dolphin":
        check_dolphin_config(cfg.dolphin, str(path) if path is not None else "config")
    return cfg


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(str(v))  # a JSON string is a valid TOML basic string


def config_to_toml(cfg: Config) -> str:
    """The config as a TOML file that :func:`load_config` reads back to an equal config."""
    lines = [f"name = {_toml_value(cfg.name)}"]
    for section, values in cfg.to_dict().items():
        if isinstance(values, dict):
            lines += ["", f"[{section}]"] + [f"{k} = {_toml_value(v)}" for k, v in values.items()]
    return "\n".join(lines) + "\n"


def save_resolved_config(cfg: Config, run_dir: str | os.PathLike) -> Path:
    """Save the config actually used beside a run, as JSON (``config.json``)."""
    out = Path(run_dir) / "config.json"
    atomic_write_json(out, cfg.to_dict())
    return out


def env_levels(cfg: Config) -> tuple[int, ...]:
    """The CPU levels a config's episodes are played against: ``env.cpu_levels``, else ``(env.cpu_level,)``."""
    return tuple(cfg.env.cpu_levels) if cfg.env.cpu_levels else (cfg.env.cpu_level,)


def env_stages(cfg: Config) -> tuple[str, ...]:
    """The stages a config's episodes are played on, as :func:`check_stage_config` leaves ``env.stage``.

    >>> env_stages(load_config(None, ["env.stage=[battlefield, dreamland]"]))
    ('battlefield', 'dreamland')
    """
    stage = cfg.env.stage
    return tuple(stage) if isinstance(stage, list) else (stage,)


def check_stage_config(cfg: Config) -> None:
    """``env.stage``: known stage names (any case; kept lower-case), each once; ``env.stage_weights`` one per stage;
    ``dolphin.stage`` (its older name), where set for a Dolphin run, the same stage (``env.stage`` then follows it)."""
    from melee_agent.arena.stages import STAGES  # noqa: PLC0415

    names = [n.strip().lower() for n in env_stages(cfg)]
    if not names:
        raise ConfigError(f"env.stage must name at least one stage: one of {', '.join(STAGES)}")
    for n in names:
        if n not in STAGES:
            close = difflib.get_close_matches(n, list(STAGES), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ConfigError(f"env.stage {n!r} is not a stage{hint}; use one of {', '.join(STAGES)}")
    if len(set(names)) != len(names):
        raise ConfigError(f"env.stage names a stage twice: {names}; give each stage once (env.stage_weights "
                          "sets how often each is played)")
    weights = cfg.env.stage_weights
    if weights and len(weights) != len(names):
        raise ConfigError(f"env.stage_weights has {len(weights)} weights, one per stage of env.stage, but env.stage "
                          f"is {names}: give one weight per stage, or env.stage_weights=[] for equal weights")
    cfg.env.stage = names if isinstance(cfg.env.stage, list) else names[0]
    game = GAMES.get(cfg.env.game)
    if cfg.env.env == "arena" and names != ["final_destination"] and game is not None \
            and not game.on_fight_engine(cfg.env.cpu):
        raise ConfigError(f"env.stage={cfg.env.stage!r} plays on the fight's engine; env.cpu = {cfg.env.cpu!r} keeps the "
                          f"{cfg.env.game!r} game's earlier frame, on Final Destination only: set env.cpu = 'melee'")
    old = cfg.dolphin.stage.strip()
    if cfg.env.env != "dolphin" or not old or old.upper() == "RANDOM_STAGE":
        return
    if old.lower() in STAGES and env_stages(cfg) == (STAGES[old.lower()].name,):
        return
    if old.lower() in STAGES and env_stages(cfg) == ("final_destination",):
        cfg.env.stage = old.lower()  # the older setting alone names the stage: env.stage follows it
        return
    if old.lower() in STAGES:
        raise ConfigError(f"dolphin.stage {old!r} and env.stage {cfg.env.stage!r} name different stages: set the "
                          "stage with env.stage alone (dolphin.stage is its older name)")


def default_run_dir(cfg: Config) -> Path:
    """Where a run writes when no ``--run-dir`` is given: ``runs/<config name>-<local time>``."""
    return Path("runs") / f"{cfg.name}-{time.strftime('%Y%m%d-%H%M%S')}"


def check_layout_config(cfg: Config) -> None:
    """``env.state_layout``: a known layout; one that shows the clock plays fights only."""
    from melee_agent.envs.state import LAYOUTS, STATE_LAYOUT  # noqa: PLC0415

    layout = LAYOUTS.get(cfg.env.state_layout)
    if layout is None:
        raise ConfigError(f"env.state_layout must be one of {', '.join(LAYOUTS)}, got {cfg.env.state_layout!r}")
    if layout.shows_clock and not (cfg.env.game in GAMES and GAMES[cfg.env.game].whole_games):
        raise ConfigError(f"env.state_layout={layout.name!r} shows a fight's clock and stocks (env.game='fight'); "
                          f"the {cfg.env.game!r} game plays {STATE_LAYOUT!r}")


def check_characters_config(cfg: Config) -> None:
    """``env.characters``: two known names, Fox vs Marth outside arena fights, Marth on the CPU's port 1."""
    from melee_agent.arena.ports import CHARACTER_NAMES, DEFAULT_CHARACTERS  # noqa: PLC0415

    chars = tuple(c.lower() for c in cfg.env.characters)
    if len(chars) != 2 or any(c not in CHARACTER_NAMES for c in chars):
        raise ConfigError(f"env.characters must name two of {', '.join(CHARACTER_NAMES)} (port 0, port 1), got "
                          f"{cfg.env.characters}")
    if chars != DEFAULT_CHARACTERS and (cfg.env.env != "arena" or not (cfg.env.game in GAMES and GAMES[cfg.env.game].whole_games)):
        raise ConfigError(f"env.characters={list(chars)} plays arena fights (env.env='arena', env.game='fight')")
    if chars[1] != "marth":
        raise ConfigError(f"env.characters={list(chars)}: port 1 is the CPU's, and the CPU plays Marth only")
    cfg.env.characters = list(chars)


def check_league_config(cfg: Config) -> None:
    """``[league]`` (where enabled): a fused arena fight (the one path that runs it)."""
    lg = cfg.league
    if not lg.enabled:
        return
    if not (cfg.train.fused and cfg.env.env == "arena" and cfg.env.game in GAMES and GAMES[cfg.env.game].whole_games):
        raise ConfigError("league.enabled runs on the fused path in arena fights: train.fused = true, env.env = "
                          f"'arena', env.game = 'fight' (got fused = {cfg.train.fused}, env = {cfg.env.env!r}, "
                          f"game = {cfg.env.game!r})")
    if lg.exploiter_init not in ("fresh", "main"):
        raise ConfigError(f"league.exploiter_init must be 'fresh' or 'main', got {lg.exploiter_init!r}")
    if lg.exploiter_reset_below >= lg.exploiter_promote_at:
        raise ConfigError(f"league.exploiter_reset_below ({lg.exploiter_reset_below}) must be below "
                          f"league.exploiter_promote_at ({lg.exploiter_promote_at})")
