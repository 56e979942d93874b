"""`melee-agent watch`: play one arena game with a policy and draw it as a GIF or MP4 (picked by ``--out``'s extension).

A 1-environment arena plays the policy through ``step_async`` (a decision at the end of every
macro) until the episode ends or ``--seconds`` of game have passed. ``Arena.on_frame`` hands
over the state after every game frame; every ``60 / --fps``-th one is drawn
(:class:`melee_agent.report.watch.Painter`) and streamed to the file (:mod:`melee_agent.report.video`), and
the frame that ends the episode (a hit, a KO) is always drawn, so the end is seen.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NamedTuple

import torch
from tqdm import tqdm

from melee_agent.arena import Arena
from melee_agent.arena.env_state import EnvState
from melee_agent.arena.games import GAMES
from melee_agent.games import game_of
from melee_agent.arena.dodge.tables import Tables
from melee_agent.cli.common import add_stage_flag, config_for_policy, model_settings, stage_override
from melee_agent.config import env_stages
from melee_agent.envs.make import arena_stage
from melee_agent.rl.policies import SCRIPTED, make_policy
from melee_agent.report.video import NO_FFMPEG, VideoWriter, check_fps, ffmpeg_available, open_video, video_format
from melee_agent.report.watch import Painter, clock, palette_image, view_of
from melee_agent.cli import flags

GAME_FPS = 60
END_HOLD_MS = 1_000  # a GIF loops: the frame that ended the game stays a second before it does


class WatchOptions(NamedTuple):
    policy: str
    cpu_level: int
    game: str
    out: Path
    seconds: float = 20.0
    fps: int = 30
    seed: int = 1
    scale: float = 3.0
    action_set: str = "untouchable"
    reward: str = "untouchable"
    max_frames: int = 3_600
    progress: bool = False
    delay_frames: int = 0  # the config's input delay (a model trained at 18 frames plays at 18)
    state_layout: str = "untouchable-27"  # the model's state layout (a fight-30 model reads the clock and stocks)
    stage: str = "final_destination"  # the stage played and drawn (--stage; the model's first, else the config's)
    cpu: str = "designed"  # the CPU playing Marth (another stage than Final Destination: the config's env.cpu)


class WatchResult(NamedTuple):
    out: Path
    game_frames: int  # game frames played (60 a second)
    frames: int  # frames drawn into the file
    ended: bool  # the episode ended (a hit, a KO, the frame limit) before --seconds
    size: tuple[int, int]  # width, height in pixels
    bytes: int


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("watch", help="draw one arena game as a GIF or MP4: stage, hurtboxes, hitboxes, HUD")
    p.add_argument("--policy", default="random",
                   help="MODEL.safetensors, pretrained:NAME (a model shipped with melee-agent, e.g. "
                        "pretrained:fight), or a scripted policy: noop, random, dodger, roller, fighter (default: %(default)s)")
    p.add_argument("--cpu-level", default="9", help="the CPU's level, 1-9 (default: %(default)s)")
    p.add_argument("--game", default=None,
                   help="dodge (the arena's task: the episode ends at the first hit) or fight (a whole "
                        "4-stock game) (default: the model file's, else the config's env.game)")
    add_stage_flag(p)
    p.add_argument("--out", required=True, metavar="FILE",
                   help="FILE.gif or FILE.mp4 (MP4 through ffmpeg: on PATH, else imageio-ffmpeg's)")
    p.add_argument("--seconds", type=float, default=20.0,
                   help="game seconds to draw at most; the episode's end stops it sooner (default: %(default)s)")
    p.add_argument("--fps", type=int, default=30,
                   help="frames per second of the video; the game runs at 60 (default: %(default)s)")
    p.add_argument("--seed", type=flags.seed, default=1, help="arena and policy seed (default: %(default)s)")
    p.add_argument("--scale", type=float, default=3.0,
                   help="pixels per game unit; 3 gives 768 x 510 (default: %(default)s)")
    p.add_argument("--config", default=None,
                   help="config whose env section (game, action set, reward, delay, frame limit) the arena plays "
                        "(default: for a model file, the shipped config of its own game, action set and delay; "
                        "else default)")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="override one config value (repeatable), e.g. env.action_set=basic for a model trained so")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--replay", default=None, metavar="FILE",
                   help="draw a game `melee-agent play --save` kept (FILE.frames.json.gz: its arena frames) instead "
                        "of playing one (--policy, --cpu-level, --game and --seconds are then not used)")
    p.set_defaults(func=run)


def parse_level(text: str) -> int:
    try:
        level = int(text)
    except ValueError:
        level = 0
    if not 1 <= level <= 9:
        raise ValueError(f"--cpu-level must be one level, 1-9; got {text!r}")
    return level


def check_options(o: WatchOptions) -> str:
    """Refuse bad flags before anything is played, each in one line naming its flag; returns the format."""
    try:
        fmt = video_format(o.out)
        if fmt == ".mp4" and not ffmpeg_available():
            raise ValueError(NO_FFMPEG)
    except ValueError as e:
        raise ValueError(f"--out {o.out}: {e}") from None
    try:
        check_fps(fmt, o.fps)
    except ValueError as e:
        raise ValueError(f"--fps {e}") from None
    if not 1 <= o.cpu_level <= 9:
        raise ValueError(f"--cpu-level must be one level, 1-9; got {o.cpu_level}")
    if not 0 < o.seconds < float("inf"):
        raise ValueError(f"--seconds must be a positive number of seconds, got {o.seconds}")
    if not 0.25 <= o.scale <= 12:
        raise ValueError(f"--scale must be 0.25-12 pixels per game unit, got {o.scale}")
    return fmt


def build_arena(o: WatchOptions) -> Arena:
    # A fight is the whole game under its own reward and clock; dodging keeps the config's.
    try:
        fight = game_of(o.game).whole_games
        return Arena(1, cpu_level=o.cpu_level, seed=o.seed, action_set=o.action_set, cpu=o.cpu,
                     reward=None if fight else o.reward, max_frames=None if fight else o.max_frames, game=o.game,
                     delay_frames=o.delay_frames, state_layout=o.state_layout, **arena_stage(o.stage))
    except ValueError as e:
        raise ValueError(f"--game {o.game!r}: {e}") from None


class Recorder:
    """The ``on_frame`` hook: draws the sampled game frames and streams them to the video."""

    def __init__(self, tables: Tables, painter: Painter, video: VideoWriter, limit: int, fps: int, bar: tqdm):
        self.tables, self.painter, self.video, self.limit, self.fps, self.bar = tables, painter, video, limit, fps, bar
        self.seen = 0  # game frames played, those past the limit included
        self.played = 0  # game frames within the limit
        self.drawn = 0  # frames drawn
        self.last: EnvState | None = None  # the newest frame, when it was not drawn

    def next_sample(self) -> int:
        """The game frame (0-based) the next video frame shows: frame ``j`` shows ``j * 60 // fps``."""
        return self.drawn * GAME_FPS // self.fps

    def __call__(self, state: EnvState) -> None:
        self.seen += 1
        if self.played >= self.limit:  # the macro in flight runs past --seconds: not drawn
            return
        if self.played == self.next_sample():
            self._draw(state)
            self.last = None
        else:
            self.last = state  # kept in case the episode ends with it
        self.played += 1
        self.bar.update(1)

    def _draw(self, state: EnvState) -> None:
        self.video.add(self.painter.draw(view_of(state, self.tables)))
        self.drawn += 1

    def end_of_episode(self) -> None:
        """The episode ended with the newest frame: draw it even off the schedule, and hold it."""
        if self.last is not None:
            self._draw(self.last)
        self.video.hold_last(END_HOLD_MS)


def watch(o: WatchOptions) -> WatchResult:
    """Play one game as ``o`` says and write it to ``o.out``."""
    check_options(o)
    try:
        policy = make_policy(o.policy, o.action_set, seed=o.seed, delay_frames=o.delay_frames)
    except (ValueError, FileNotFoundError) as e:
        raise ValueError(f"--policy: {e}") from None
    env = build_arena(o)
    label = o.policy if o.policy in SCRIPTED else Path(o.policy).name  # a model: its file's name
    painter = Painter(o.scale, label, o.game, stage=o.stage)
    limit = max(1, round(o.seconds * GAME_FPS))
    ended = False
    with tqdm(total=limit, unit="frame", desc=f"watch {Path(o.out).name}", disable=not o.progress) as bar, \
            open_video(o.out, painter.size, o.fps, palette=palette_image()) as video:
        rec = Recorder(env.T, painter, video, limit, o.fps, bar)
        env.on_frame = rec
        obs = env.reset()
        while rec.played < limit:
            obs, _, done, _ = env.step_async(policy(obs))  # one environment: returns at each decision
            if bool(done[0]) and rec.seen <= limit:
                ended = True
                rec.end_of_episode()
                break
        env.on_frame = None
    return WatchResult(Path(o.out), rec.played, rec.drawn, ended, painter.size, Path(o.out).stat().st_size)


def watch_replay(path: Path, out: Path, fps: int, scale: float) -> WatchResult:
    """Draw a saved game's frames (:mod:`melee_agent.play.replay_file`) to ``out``, every ``60 / fps``-th one
    and the last, held, as :func:`watch` draws a game it plays."""
    from melee_agent.play.replay_file import load_frames  # noqa: PLC0415

    check_options(WatchOptions(policy="noop", cpu_level=9, game="fight", out=out, fps=fps, scale=scale))
    game = load_frames(path)
    painter = Painter(scale, game.labels[0], game.game, opponent_label=game.labels[1], stage=game.stage)
    drawn, n = 0, len(game.views)
    with open_video(out, painter.size, fps, palette=palette_image()) as video:
        for i, view in enumerate(game.views):
            if i == drawn * GAME_FPS // fps or i == n - 1:
                video.add(painter.draw(view))
                drawn += 1
        video.hold_last(END_HOLD_MS)
    return WatchResult(out, n - 1, drawn, True, painter.size, out.stat().st_size)


def run(args: argparse.Namespace) -> int:
    if args.replay is not None:
        r = watch_replay(Path(args.replay), Path(args.out), args.fps, args.scale)
        print(f"wrote {r.out}: {r.frames} frames at {args.fps} fps, {r.size[0]} x {r.size[1]}, "
              f"{r.bytes / 1e6:.2f} MB; {clock(r.game_frames)} of game (the saved game {args.replay})")
        return 0
    cfg, _ = config_for_policy(args.config, [*args.set, *stage_override(args.stage)], args.policy)
    recorded = (model_settings(args.policy) or {}).get("env.game")
    if args.game and recorded and args.game != recorded:
        raise ValueError(f"--game {args.game}: the model {args.policy} plays {recorded} (action set "
                         f"{cfg.env.action_set!r}); leave --game out")
    game = args.game or cfg.env.game
    # The policy and the arena play one action set: the config's (a model's own), or a game's own where
    # --game names another game than the config's.
    same = game == cfg.env.game or game not in GAMES  # an unknown game is refused by name below
    action_set, reward = (cfg.env.action_set, cfg.env.reward) if same else (GAMES[game].action_set,
                                                                             GAMES[game].reward)
    stage = env_stages(cfg)[0]  # one game on one stage: a list's first
    o = WatchOptions(policy=args.policy, cpu_level=parse_level(args.cpu_level), game=game, out=Path(args.out),
                     seconds=args.seconds, fps=args.fps, seed=args.seed, scale=args.scale,
                     action_set=action_set, reward=reward, max_frames=cfg.env.max_frames,
                     progress=not args.no_progress and sys.stderr.isatty(),
                     delay_frames=cfg.env.delay_frames if same else 0,
                     state_layout=cfg.env.state_layout if same else "untouchable-27",
                     stage=stage,
                     # Final Destination keeps the CPU watch always played (its clips); the other stages are played on
                     # the fight's engine, by the config's CPU (the designed CPU's dodging game has Final Destination only).
                     cpu="designed" if stage == "final_destination" else cfg.env.cpu)
    torch.set_num_threads(1)  # one environment: small ops gain nothing from more threads
    r = watch(o)
    how = "the episode ended" if r.ended else "--seconds reached"
    print(f"wrote {r.out}: {r.frames} frames at {o.fps} fps, {r.size[0]} x {r.size[1]}, {r.bytes / 1e6:.2f} MB; "
          f"{clock(r.game_frames)} of game ({how})")
    return 0
