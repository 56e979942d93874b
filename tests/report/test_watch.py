"""`melee-agent watch`: the drawing's geometry is the simulator's, a short game reads back frame by frame,
bad flags are named."""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image, ImageSequence

from melee_agent.report import video as video_module
from melee_agent.report import watch as watch_module
from melee_agent.arena import libmelee_data as d
from melee_agent.arena.env_state import AGENT, CPU, EnvState, with_player
from melee_agent.arena.dodge.frame import LOCKED, NO_MOVE
from melee_agent.arena.dodge.tables import MOVE_INDEX, build_tables
from melee_agent.cli import watch as watch_cli
from melee_agent.cli.main import main
from melee_agent.report.video import ffmpeg_available
from melee_agent.report.watch import C, Circle, Painter, clock, hitbox_circles, hurtbox
from tests.examples_kit import examples_failed

T = build_tables(torch.device("cpu"))
FSMASH = next(m for m in d.MARTH_MOVES if m.name == "fsmash")


def _state(p: int, **fields: float) -> EnvState:
    return with_player(EnvState.zeros(1, torch.device("cpu")), p, **fields)


def _options(tmp_path, name="game.gif", **kw) -> watch_cli.WatchOptions:
    base = dict(policy="dodger", cpu_level=9, game="dodge", out=tmp_path / name, seconds=1.0, fps=30, scale=1.5)
    return watch_cli.WatchOptions(**{**base, **kw})


def _frames(path) -> tuple[list[np.ndarray], list[int]]:
    im = Image.open(path)
    frames, delays = [], []
    for f in ImageSequence.Iterator(im):
        delays.append(f.info.get("duration", 0))
        frames.append(np.array(f.convert("RGB")))
    return frames, delays


def test_module_examples_run():
    assert examples_failed(watch_module) == 0
    assert examples_failed(video_module) == 0


@pytest.mark.parametrize("facing", [1.0, -1.0])
def test_an_fsmash_hitbox_is_drawn_at_position_plus_facing_times_its_forward_offset(facing):
    first, last = FSMASH.active
    s = _state(CPU, move=float(MOVE_INDEX["fsmash"]), action_frame=float(first), position_x=30.0,
               position_y=12.0, facing=facing)
    want = [Circle(30.0 + facing * ox, 12.0 + oy, r) for ox, oy, r in FSMASH.circles[first - 1] if r > 0]
    got = hitbox_circles(s.players, T, CPU)
    assert len(got) == len(want) > 0
    for g, w in zip(got, want):
        assert g == pytest.approx(w, abs=1e-4)
    # Before the hitbox comes out, and outside any move, nothing is drawn.
    assert hitbox_circles(_state(CPU, move=float(MOVE_INDEX["fsmash"]), action_frame=1.0).players, T, CPU) == ()
    for move in (NO_MOVE, LOCKED):
        assert hitbox_circles(_state(CPU, move=move, action_frame=float(first)).players, T, CPU) == ()


def test_a_drawn_hitbox_that_touches_the_drawn_body_is_a_hit_in_the_simulator():
    from melee_agent.arena.dodge.frame import _hits  # noqa: PLC0415 (the simulator's own hit test)

    first, _ = FSMASH.active
    s = _state(CPU, move=float(MOVE_INDEX["fsmash"]), action_frame=float(first), facing=1.0, position_x=0.0)
    far = max(hitbox_circles(s.players, T, CPU), key=lambda c: c.x + c.r)  # the farthest reaching circle
    for gap, hit in ((-0.05, True), (0.05, False)):
        # Fox's body (a capsule around x, from its feet up its height) just inside, then just outside, its reach.
        x = far.x + far.r + d.BODY_RADIUS + gap
        fox = with_player(s, AGENT, move=NO_MOVE, position_x=x, position_y=far.y - 1.0, facing=-1.0)
        body = hurtbox(fox.players, T, AGENT)
        assert body.bottom <= far.y <= body.top and body.r == d.BODY_RADIUS and body.x == pytest.approx(x)
        out = _hits(fox.players, T, torch.zeros(1, 2, dtype=torch.bool))
        assert bool(out.damage[0, AGENT] > 0) is hit


def test_the_hurtbox_is_the_simulators_capsule():
    s = _state(AGENT, position_x=-12.5, position_y=3.0)
    assert hurtbox(s.players, T, AGENT) == pytest.approx((-12.5, 3.0, 3.0 + d.FOX_HEIGHT, d.BODY_RADIUS))
    s = _state(CPU, position_x=40.0)
    assert hurtbox(s.players, T, CPU).top == pytest.approx(d.MARTH_HEIGHT)


def test_the_clock_shows_frames_played_as_minutes_seconds_and_hundredths():
    assert [clock(f) for f in (0, 1, 59, 60, 3_599, 28_800)] == \
        ["0:00.00", "0:00.01", "0:00.98", "0:01.00", "0:59.98", "8:00.00"]


@pytest.mark.parametrize("fps, seconds, scale", [(30, 1.0, 1.5), (20, 0.5, 1.0)])
def test_a_short_gif_has_fps_times_seconds_frames_each_different_at_the_painters_size(tmp_path, fps, seconds, scale):
    r = watch_cli.watch(_options(tmp_path, fps=fps, seconds=seconds, scale=scale))
    frames, delays = _frames(r.out)
    assert not r.ended and r.game_frames == round(60 * seconds)  # the dodger is never hit in a second
    assert len(frames) == r.frames == round(fps * seconds)
    assert Image.open(r.out).size == r.size == Painter(scale, "dodger", "dodge").size
    assert r.size[0] == pytest.approx(256 * scale, abs=1)  # the main view is 256 game units wide
    # Every frame differs from the one before (at least the clock moves), and the clip lasts `seconds`.
    assert all((a != b).any() for a, b in zip(frames, frames[1:]))
    assert sum(delays) == pytest.approx(1000 * seconds, abs=10)
    assert [p.name for p in tmp_path.iterdir()] == ["game.gif"]  # no temp file left beside it


def test_a_game_that_ends_early_stops_the_gif_on_the_hit_and_holds_it(tmp_path):
    # noop against level 9 is hit within a second (README: 0% untouched): the episode ends there.
    r = watch_cli.watch(_options(tmp_path, policy="noop", seconds=10.0))
    assert r.ended and r.game_frames < 600
    on_schedule = math.ceil(r.game_frames * 30 / 60)
    last_on_schedule = (r.game_frames - 1) % 2 == 0
    assert r.frames == on_schedule + (0 if last_on_schedule else 1)  # the last game frame is always drawn
    frames, delays = _frames(r.out)
    assert len(frames) == r.frames
    assert delays[-1] >= watch_cli.END_HOLD_MS
    red = (frames[-1] == np.array(C.hitbox, np.uint8)).all(axis=2)
    assert red.any()  # the hitbox that ended it is on the last frame


def test_an_error_while_drawing_leaves_no_file(tmp_path, monkeypatch):
    calls = []

    def failing_draw(self, view):
        calls.append(view)
        if len(calls) == 3:
            raise RuntimeError("boom")
        return Image.new("RGB", self.size)

    monkeypatch.setattr(Painter, "draw", failing_draw)
    with pytest.raises(RuntimeError, match="boom"):
        watch_cli.watch(_options(tmp_path))
    assert list(tmp_path.iterdir()) == []


def _run(capsys, *args: str) -> tuple[int, str]:
    rc = main(["watch", *args])
    return rc, capsys.readouterr().err.strip()


@pytest.mark.parametrize("args, flag, message", [
    (["--policy", "nothere.safetensors"], "--policy", "model file not found"),
    (["--policy", "smart"], "--policy", "unknown policy"),
    (["--cpu-level", "10"], "--cpu-level", "1-9"),
    (["--cpu-level", "0"], "--cpu-level", "1-9"),
    (["--cpu-level", "hard"], "--cpu-level", "1-9"),
    (["--out", "game.avi"], "--out", "unknown extension '.avi': use .gif or .mp4"),
    (["--out", "game"], "--out", "use .gif or .mp4"),
    (["--fps", "0"], "--fps", "1-50"),
    (["--fps", "60"], "--fps", "use .mp4 for 60"),
    (["--seconds", "0"], "--seconds", "positive"),
    (["--seconds", "inf"], "--seconds", "positive number of seconds"),
    (["--scale", "0"], "--scale", "0.25-12"),
    (["--game", "chess"], "--game", "chess"),
])
def test_bad_flags_get_one_line_naming_the_flag_and_no_file(tmp_path, capsys, args, flag, message):
    out = ["--out", str(tmp_path / "game.gif")]
    if "--out" in args:
        args = [a if a.startswith("--") else str(tmp_path / a) for a in args]
        out = []
    rc, err = _run(capsys, *out, *args)
    assert rc == 2
    assert len(err.splitlines()) == 1 and flag in err and message in err, err
    assert list(tmp_path.iterdir()) == []


def test_a_fight_is_drawn_as_a_whole_game_and_an_unknown_game_is_refused(tmp_path, capsys):
    out = tmp_path / "fight.gif"
    rc, _ = _run(capsys, "--out", str(out), "--policy", "noop", "--game", "fight", "--seconds", "0.5", "--fps", "10")
    assert rc == 0 and Image.open(out).n_frames == 5  # a fight is not over at the first hit
    # The scripted fighter plays the fight's own action set, whatever game the config is for.
    rc, _ = _run(capsys, "--out", str(out), "--policy", "fighter", "--game", "fight", "--seconds", "0.5", "--fps", "10")
    assert rc == 0 and Image.open(out).n_frames == 5
    rc, err = _run(capsys, "--out", str(tmp_path / "x.gif"), "--game", "brawl")
    assert rc == 2 and "--game 'brawl'" in err and "unknown game" in err


def _no_ffmpeg_on_path(monkeypatch):
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda cmd, *a, **k: None if Path(cmd).name == "ffmpeg" else real_which(cmd, *a, **k))


def test_mp4_needs_ffmpeg_and_says_so(tmp_path, capsys, monkeypatch):
    _no_ffmpeg_on_path(monkeypatch)
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # as where it has no build: import fails
    rc, err = _run(capsys, "--out", str(tmp_path / "game.mp4"))
    assert rc == 2 and "--out" in err and "melee-agent[video]" in err and "install ffmpeg" in err and ".gif" in err
    assert list(tmp_path.iterdir()) == []


def test_an_mp4_is_written(tmp_path):
    if not ffmpeg_available():
        pytest.skip("no ffmpeg on PATH and no imageio-ffmpeg build for this platform: MP4 output not tested here")
    r = watch_cli.watch(_options(tmp_path, name="game.mp4", seconds=0.5))
    data = r.out.read_bytes()
    assert data[4:8] == b"ftyp" and r.frames == 15 and r.size == Painter(1.5, "dodger", "dodge").size
    assert [p.name for p in tmp_path.iterdir()] == ["game.mp4"]


def test_an_mp4_needs_no_ffmpeg_on_path(tmp_path, monkeypatch):
    """With no ffmpeg on PATH the MP4 is made by imageio-ffmpeg's bundled build (the `video` extra)."""
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg", reason="imageio-ffmpeg (the video extra) is not installed")
    try:
        bundled = imageio_ffmpeg.get_ffmpeg_exe()
    except RuntimeError as e:
        pytest.skip(f"imageio-ffmpeg has no build for this platform: {e}")
    _no_ffmpeg_on_path(monkeypatch)
    assert shutil.which("ffmpeg") is None and video_module.ffmpeg_path() == bundled
    started = []
    real_popen = subprocess.Popen
    monkeypatch.setattr(subprocess, "Popen", lambda args, *a, **k: started.append(args[0]) or real_popen(args, *a, **k))
    r = watch_cli.watch(_options(tmp_path, name="game.mp4", seconds=0.25))
    assert r.out.read_bytes()[4:8] == b"ftyp" and r.frames > 0
    assert started == [bundled]


def test_the_command_reports_what_it_wrote(tmp_path, capsys):
    rc = main(["watch", "--policy", "dodger", "--out", str(tmp_path / "w.gif"), "--seconds", "0.5", "--scale", "1"])
    out = capsys.readouterr().out
    assert rc == 0 and "15 frames at 30 fps" in out and "0:00.50 of game" in out
    assert Image.open(tmp_path / "w.gif").n_frames == 15


def test_a_model_file_is_a_policy(tmp_path):
    from melee_agent.rl.model import DuelingDQN, save_model  # noqa: PLC0415

    path = tmp_path / "m.safetensors"
    save_model(path, DuelingDQN(num_actions=5), version=1, train_step=0, action_set="untouchable")
    r = watch_cli.watch(_options(tmp_path, policy=str(path), seconds=0.25))
    assert Image.open(r.out).n_frames == r.frames > 0 and r.game_frames <= 15


def test_watch_plays_the_configs_input_delay_and_padded_set(tmp_path, monkeypatch):
    """`watch --config fight-d18` draws the game its model trained in: 18 frames of delay, `fight:18` macros."""
    seen = []

    def record(o: watch_cli.WatchOptions) -> watch_cli.WatchResult:
        seen.append(watch_cli.build_arena(o))
        return watch_cli.WatchResult(o.out, 1, 1, False, (1, 1), 1)

    monkeypatch.setattr(watch_cli, "watch", record)
    for config, delay, aset in (("fight-d18", 18, "fight:18"), ("fight", 0, "fight")):
        assert main(["watch", "--config", config, "--game", "fight", "--policy", "fighter",
                     "--out", str(tmp_path / "g.gif")]) == 0
        assert (seen[-1].delay_frames, seen[-1].action_set) == (delay, aset)
