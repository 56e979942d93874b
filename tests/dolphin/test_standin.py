"""Real Melee's worker path end to end against a Slippi Dolphin stand-in (tests/dolphin_standin).

libmelee's own ``Console`` launches the stand-in exactly as it launches Dolphin (command line,
user folder, controller FIFOs) and reads it over Slippi's spectator protocol (ENet); the stand-in
streams real replays from ../shared/replays through menus that answer the controllers. Faults
(exit, hang, stall, port taken, wrong setup) are asked for per start of the executable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from melee_agent.config import DolphinConfig
from melee_agent.dolphin import DolphinEnv, DolphinError, RestartLimiter
from tests.replays_kit import replay_path
from tests.dolphin_standin.install import events, install_standin, launches
from tests.episode_ends import record_episode_ends

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.usefixtures("temp_in_tmp_path")  # libmelee's Dolphin homes: this test's to count, none in /tmp
GAMES = ("slippijs_lCancel.slp", "libmelee_test_game_1.slp", "peppi_v3.13.slp")


def standin(tmp_path: Path, frames_limit: int = 240, **kw) -> tuple[Path, DolphinConfig]:
    exe = install_standin(tmp_path / "dolphin", [replay_path(g) for g in GAMES], frames_limit=frames_limit, **kw)
    cfg = DolphinConfig(dolphin_path=str(exe), iso_path=str(exe.parent / "melee.iso"), timeout_s=3,
                        menu_timeout_s=60, max_restarts=5, restart_window_s=600)
    return exe, cfg


def play(env: DolphinEnv, steps: int, action: int = 0) -> list[tuple]:
    out = []
    for _ in range(steps):
        obs, r, done, info = env.step(torch.tensor([action]))
        out.append((obs, r.item(), done.item(), info))
    return out


def play_until(env: DolphinEnv, cond, limit_s: float = 60.0) -> float:
    t0 = time.monotonic()
    while not cond():
        assert time.monotonic() - t0 < limit_s, "not reached in time"
        env.step(torch.tensor([0]))
    return time.monotonic() - t0


def test_dolphin_standin_is_launched_like_dolphin_with_its_own_spectator_port(tmp_path):
    exe, cfg = standin(tmp_path)
    env = DolphinEnv(cfg, cpu_level=9)
    try:
        env.reset()
        first = launches(exe.parent)[0]
        assert first["argv"][:2] == ["-e", cfg.iso_path] and first["argv"][2] == "-u"
        assert first["argv"][4:] == ["--platform", "headless"]  # mainline headless
        assert first["blocking"] and first["gfx"] == "Null" and first["ports"] == [1, 2]
        assert first["port"] == env.supervisor.session.port != 51441
        env.supervisor.restart("test")
        second = launches(exe.parent)[1]
        assert second["port"] != first["port"]  # a new port on every restart
    finally:
        env.close()


@pytest.mark.slow
def test_dolphin_two_dolphins_on_one_host_each_stream_their_own_game(tmp_path):
    exe_a, cfg_a = standin(tmp_path / "a")
    exe_b, cfg_b = standin(tmp_path / "b", frames_limit=100)
    a, b = DolphinEnv(cfg_a, cpu_level=9), DolphinEnv(cfg_b, cpu_level=3)
    try:
        a.reset(), b.reset()
        assert a.supervisor.session.port != b.supervisor.session.port
        play(a, 300), play(b, 300)
        # Each worker saw its own Dolphin's games: b's games are 100 frames, a's 240.
        assert b.supervisor.games > a.supervisor.games >= 2
        assert a.restarts == b.restarts == 0
        assert any("port 2 MARTH cpu 3" in e for e in events(exe_b.parent))
        assert not any("cpu 3" in e for e in events(exe_a.parent))
    finally:
        a.close(), b.close()


@pytest.mark.slow
def test_dolphin_game_over_leads_through_postgame_into_the_next_game_without_a_restart(tmp_path):
    exe, cfg = standin(tmp_path, frames_limit=120)
    env = DolphinEnv(cfg, cpu_level=9)
    try:
        env.reset()
        steps = play(env, 500)
        assert env.supervisor.games >= 4 and env.restarts == 0
        assert sum(1 for e in events(exe.parent) if "postgame left" in e) >= 3
        # The episode cut at a game end has the ended game's last frame as final_obs (defect 9),
        # and the next observation comes from the new game.
        for i, (obs, _, done, info) in enumerate(steps[1:], start=1):
            if done and info["truncated"].item() and info["frames"].item() == 0:
                assert torch.equal(info["final_obs"], steps[i - 1][0])
                assert not torch.equal(obs, steps[i - 1][0])
                break
        else:
            pytest.fail("no episode was cut by a game end")
    finally:
        env.close()


@pytest.mark.slow
def test_dolphin_stage_select_without_a_menu_frame_0_still_starts_every_game(tmp_path):
    # libmelee's MenuHelper forgets its stage choice only on a menu frame numbered 0 (choose_stage);
    # a Dolphin whose menu frames count from boot never shows one at stage select, and kept helpers
    # would wait there until the menu timeout restarted Dolphin, game after game.
    exe, cfg = standin(tmp_path, frames_limit=120, menu_frame="boot")
    env = DolphinEnv(cfg, cpu_level=9)
    try:
        env.reset()
        play(env, 500)
        assert env.supervisor.games >= 4 and env.restarts == 0
        assert sum(1 for e in events(exe.parent) if "postgame left" in e) >= 3
    finally:
        env.close()


@pytest.mark.parametrize("lras", ["held", "press"])
def test_dolphin_first_frame_setup_is_checked_and_a_wrong_one_goes_back_through_the_menus(tmp_path, lras):
    # Melee refuses pause before GO and quits a paused game on L+R+A+START: held, or (lras="press")
    # with START newly pressed while paused, which only the watchdog's nudges can give, the paused
    # game streaming nothing to answer.
    exe, cfg = standin(tmp_path, faults=[{"launch": 1, "kind": "wrong_cpu_level", "game": 1}], lras=lras)
    env = DolphinEnv(cfg, cpu_level=9)
    try:
        t0 = time.monotonic()
        env.reset()
        took = time.monotonic() - t0
        assert len(env.supervisor.setup_mismatches) == 1 and env.restarts == 0
        assert "cpu 1" in env.supervisor.setup_mismatches[0] and "want" in env.supervisor.setup_mismatches[0]
        log = events(exe.parent)
        quit_at = [int(e.split(" at frame ")[1].split()[0]) for e in log if "game 1 quit (L+R+A+START) at frame" in e]
        assert quit_at and quit_at[0] >= 123  # after GO: the countdown refuses the pause
        assert any("game 2 starts" in e and "port 2 MARTH cpu 9" in e for e in log)
        print(f"wrong setup ({lras}): playing again after {took:.1f} s")
    finally:
        env.close()


@pytest.mark.slow
def test_dolphin_a_wrong_game_that_will_not_quit_is_restarted_and_wrong_games_in_a_row_stop_the_worker(tmp_path):
    # Pause off in the rules: L+R+A+START cannot quit. The attempt is bounded, then Dolphin restarts.
    exe, cfg = standin(tmp_path, faults=[{"launch": 1, "kind": "wrong_cpu_level", "game": 1},
                                         {"launch": 1, "kind": "pause_off"}], max_fps=120)
    cfg.quit_timeout_s = 1.5  # the 240-frame game would take 2 s
    env = DolphinEnv(cfg, cpu_level=9)
    try:
        env.reset()
        assert env.restarts == 1 and "did not leave a wrong-setup game" in env.supervisor.restart_log[0]
        assert len(launches(exe.parent)) == 2
    finally:
        env.close()
    # A setup the menus get wrong every time stops the worker with what was seen, not a silent loop.
    exe, cfg = standin(tmp_path / "always", faults=[{"launch": 1, "kind": "wrong_character"}])
    cfg.max_setup_mismatches = 2
    with pytest.raises(DolphinError, match="2 games in a row had the wrong setup.*saw port 1 FOX cpu 0, port 2 FALCO"):
        env = DolphinEnv(cfg, cpu_level=9)
        try:
            env.reset()
        finally:
            env.close()


@pytest.mark.slow
@pytest.mark.parametrize("batches", ["menu_first", "frame_first"])
def test_dolphin_sudden_death_is_the_end_of_the_game_it_follows(tmp_path, batches):
    # At time with stocks tied Melee plays sudden death, which libmelee reads either as a menu it
    # does not know (scene 0x0302) or as a new game at 300%. Nothing may press START there (it
    # pauses), and the agent plays none of it: its episode ended with the game's time.
    exe, cfg = standin(tmp_path, frames_limit=150, sudden_death_batches=batches, freeze_frames=20)
    env = DolphinEnv(cfg, cpu_level=9, max_frames=10**6)
    try:
        env.reset()
        steps = play(env, 500)
        log = events(exe.parent)
        assert sum("sudden death over" in e for e in log) >= 2
        assert not any("paused by port" in e for e in log) and env.restarts == 0
        started = sum(" starts: stage" in e for e in log)
        assert env.supervisor.games in (started, started - 1)  # sudden death is no game of its own
        for obs, _, done, info in steps:  # no frame of sudden death (everyone at 300%) reached the agent
            assert obs[0, 11] < 0.3 and obs[0, 24] < 0.3 and info["final_obs"][0, 11] < 0.3
        cut = [info for *_, done, info in steps if done]
        assert cut and all(i["episode_frame"].item() > 0 for i in cut)  # no empty episode at the time-out
        assert sum(i["truncated"].item() for i in cut) >= 2  # episodes the time-outs cut
    finally:
        env.close()


def test_dolphin_boots_through_the_title_screen_and_one_flush_is_enough_for_a_frame(tmp_path):
    # Real Melee boots to the title screen and the main menu (libmelee's menu_helper_simple does
    # nothing there); blocking pipes wait for one FLUSH, not one per controller.
    from melee_agent.dolphin import free_udp_port, launch_options, start_dolphin

    exe, cfg = standin(tmp_path)
    env = DolphinEnv(cfg, cpu_level=9)
    try:
        env.reset()
        log = events(exe.parent)
        assert any("title screen left" in e for e in log) and any("main menu: VS mode, Melee" in e for e in log)
        assert env.restarts == 0
    finally:
        env.close()
    session = start_dolphin(cfg, launch_options(cfg), free_udp_port())
    try:
        session.console.controllers.remove(session.cpu_controller)  # step() now flushes port 1 only
        frames = [session.console.step() for _ in range(30)]
        assert all(gs is not None for gs in frames)
        assert frames[-1].frame > frames[0].frame  # the title screen's frame counter runs
    finally:
        session.stop()


def test_dolphin_a_human_cpu_port_at_level_1_is_switched_to_a_cpu(tmp_path):
    # Port 2 boots as an idle human Marth; level 1 is what the CPU slider shows after the switch.
    exe, cfg = standin(tmp_path, css_start={"2": {"character": "MARTH"}})
    env = DolphinEnv(cfg, cpu_level=1)
    try:
        env.reset()
        assert env.supervisor.setup_mismatches == []
        assert any("game 1 starts" in e and "port 2 MARTH cpu 1" in e for e in events(exe.parent))
    finally:
        env.close()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["exit", "hang"])
def test_dolphin_crash_or_hang_in_game_is_restarted_and_play_goes_on(tmp_path, kind):
    exe, cfg = standin(tmp_path, faults=[{"launch": 1, "kind": kind, "game": 1, "frame": 60}])
    env = DolphinEnv(cfg, cpu_level=9)
    try:
        env.reset()
        t0 = time.monotonic()
        steps = play(env, 200)
        assert env.restarts == 1
        why = env.supervisor.restart_log[0]
        assert ("exited with code 3" in why) if kind == "exit" else ("silent for 3 s" in why)
        cut = [s for s in steps if s[3]["truncated"].item()]
        assert cut and len(launches(exe.parent)) == 2
        print(f"{kind}: 200 steps incl. the restart in {time.monotonic() - t0:.1f} s")
    finally:
        env.close()


@pytest.mark.slow
def test_dolphin_stall_in_the_menus_is_restarted(tmp_path):
    exe, cfg = standin(tmp_path, faults=[{"launch": 1, "kind": "menu_stall", "game": 1}])
    cfg.menu_timeout_s = 2
    env = DolphinEnv(cfg, cpu_level=9)
    try:
        env.reset()
        assert env.restarts == 1 and "stuck in the menus" in env.supervisor.restart_log[0]
    finally:
        env.close()


@pytest.mark.slow
def test_dolphin_spectator_port_taken_is_retried_on_a_new_port_and_nothing_leaks(tmp_path, temp_in_tmp_path):
    exe, cfg = standin(tmp_path, faults=[{"launch": 1, "kind": "port_taken"}])
    env = DolphinEnv(cfg, cpu_level=9)
    try:
        env.reset()
        first, second = launches(exe.parent)[:2]
        assert first["port"] != second["port"] and env.supervisor.session.port == second["port"]
        assert not _alive(first["pid"])  # the failed start's Dolphin was stopped
    finally:
        env.close()
    # Every start failing: a one-line DolphinError, no process or temporary user folder left behind.
    exe, cfg = standin(tmp_path / "all", faults=[{"launch": n, "kind": "port_taken"} for n in (1, 2)])
    cfg.start_attempts = 2
    before = set(temp_in_tmp_path.glob("libmelee_*"))
    with pytest.raises(DolphinError, match="did not start in 2 tries"):
        DolphinEnv(cfg, cpu_level=9)
    assert all(not _alive(rec["pid"]) for rec in launches(exe.parent))
    assert set(temp_in_tmp_path.glob("libmelee_*")) <= before


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_dolphin_restarts_are_limited_per_time_window_not_per_lifetime():
    now = [0.0]
    lim = RestartLimiter(max_restarts=2, window_s=600, clock=lambda: now[0])
    for _ in range(50):  # one restart every 400 s goes on for ever
        lim.record("crash")
        now[0] += 400
    assert lim.total == 50
    lim.record("a")  # 400 s after the last one: two within 600 s are allowed, a third is not
    with pytest.raises(DolphinError, match="3 restarts within 600 s"):
        lim.record("b")


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "melee_agent.cli.main", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=timeout)


@pytest.mark.slow
def test_dolphin_eval_cli_against_the_standin_reports_the_design_json_and_saves_replays(tmp_path):
    exe, cfg = standin(tmp_path, frames_limit=300, freeze_frames=10)
    out, run = tmp_path / "eval.json", tmp_path / "run"
    proc = _cli("eval", "--config", "dolphin", "--env", "dolphin", "--cpu-level", "9", "--episodes", "4",
                "--policy", "noop", "--no-progress", "--json", str(out), "--run-dir", str(run),
                "--set", f"dolphin.dolphin_path={exe}", "--set", f"dolphin.iso_path={cfg.iso_path}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["episodes"] == 4 and result["env"] == "dolphin"
    for key in ("policy", "cpu_level", "episodes", "episodes_cut"):
        assert key in result
    assert any("port 2 MARTH cpu 9" in e for e in events(exe.parent))
    # Each evaluated game was saved as a Slippi replay under the run folder: libmelee reads it back.
    from melee_agent.io.slp import read_gamestates

    assert result["replays"] == str(run / "replays")
    saved = sorted((run / "replays").glob("Game_*.slp"))
    assert saved and launches(exe.parent)[0]["argv"][:2] == ["-e", cfg.iso_path]
    states = read_gamestates(saved[0])
    players = states[-1].players
    assert players[1].character.name == "FOX" and players[2].character.name == "MARTH" and players[2].cpu_level == 9


@pytest.mark.slow
def test_dolphin_sixty_noop_episodes_across_games_that_end_in_the_agents_ko(tmp_path):
    # The acceptance run of issue 24: games alternate between one played to time (lCancel, nobody hit:
    # one-minute... here 60-frame... episodes reach their limit) and one that ends on the frame the
    # agent loses its last stock (peppi_v3.13). Exactly 60 episodes are counted, none is empty, and an
    # episode is untouched only where it reached the frame limit.
    from melee_agent.report.evaluate import evaluate
    from melee_agent.rl.policies import make_policy

    exe = install_standin(tmp_path / "dolphin", [replay_path("slippijs_lCancel.slp"), replay_path("peppi_v3.13.slp")],
                          frames_limit=300, freeze_frames=10)
    cfg = DolphinConfig(dolphin_path=str(exe), iso_path=str(exe.parent / "melee.iso"), timeout_s=3,
                        menu_timeout_s=60)
    env = DolphinEnv(cfg, cpu_level=9, max_frames=60)
    ends = record_episode_ends(env)
    try:
        r = evaluate(env, make_policy("noop", "untouchable"), 60, progress=False)
    finally:
        env.close()
    dones = [info for *_, info in ends]
    log = events(exe.parent)
    assert any("over (GAME!)" in e for e in log), "no game ended on the agent's KO"
    assert r.episodes == 60 == len(dones)
    assert all(i["episode_frame"].item() > 0 for i in dones)  # no phantom episode after the KO
    at_limit = [i for i in dones if i["truncated"].item() and i["episode_frame"].item() >= 60]
    assert r.untouched_share * 60 == pytest.approx(len(at_limit))
    assert r.episodes_cut == sum(i["truncated"].item() and i["episode_frame"].item() < 60 for i in dones)
    assert env.restarts == 0
    print(f"60 episodes: untouched {r.untouched_share:.0%}, cut {r.episodes_cut}, "
          f"games {env.supervisor.games}")


@pytest.mark.slow
def test_dolphin_two_workers_on_one_host_upload_rows_a_real_manager_accepts(tmp_path):
    from melee_agent.manager.spawn import ManagerProcess

    token = tmp_path / "token"
    token.write_text("standin-token\n")
    env = {**os.environ, "MELEE_AGENT_TOKEN": "standin-token"}
    with ManagerProcess(["--config", "small", "--token-file", str(token)], tmp_path / "run",
                        tmp_path / "manager.log") as m:
        procs, exes = [], []
        for i in range(2):
            # Worker 0's Dolphin crashes once: the restart reaches TensorBoard's workers/dolphin_restarts.
            faults = [{"launch": 1, "kind": "exit", "game": 1, "frame": 60}] if i == 0 else []
            exe, cfg = standin(tmp_path / f"w{i}", frames_limit=200, faults=faults)
            exes.append(exe)
            summary = tmp_path / f"w{i}.json"
            procs.append((subprocess.Popen(
                [sys.executable, "-m", "melee_agent.cli.main", "worker", "--config", "dolphin", "--manager", m.url,
                 "--env", "dolphin", "--worker-index", str(i), "--num-workers", "2", "--segments", "2",
                 "--json", str(summary), "--set", "worker.segment_seconds=5", "--set", "worker.upload_rows=200",
                 "--set", f"dolphin.dolphin_path={exe}", "--set", f"dolphin.iso_path={cfg.iso_path}"],
                cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True), summary))
        sent = 0
        for p, summary in procs:
            out, _ = p.communicate(timeout=300)
            assert p.returncode == 0, out[-3000:]
            sent += json.loads(summary.read_text())["rows_sent"]
        import httpx

        st = httpx.get(f"{m.url}/v1/status", headers={"Authorization": "Bearer standin-token"}, timeout=10).json()
        assert sent > 0 and st["rows_accepted"] == sent
        ports = [launches(exe.parent)[0]["port"] for exe in exes]
        assert ports[0] != ports[1]
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    restarts = []
    for f in (tmp_path / "run").rglob("events.out.tfevents.*"):
        acc = EventAccumulator(str(f), size_guidance={"scalars": 0})
        acc.Reload()
        if "workers/dolphin_restarts" in acc.Tags()["scalars"]:
            restarts += [e.value for e in acc.Scalars("workers/dolphin_restarts")]
    assert restarts and max(restarts) == 1


needs_xvfb = pytest.mark.skipif(__import__("shutil").which("Xvfb") is None,
                                reason="Xvfb is not installed (apt-get install xvfb)")


@pytest.mark.slow
@needs_xvfb
@pytest.mark.parametrize("build", ["ishiiruka", "mainline-qt"])
def test_dolphin_a_build_that_needs_a_display_gets_its_own_xvfb_restarted_and_stopped_with_it(
        tmp_path, monkeypatch, build):
    # Stock Slippi and mainline's Qt AppImage open a display (the stand-in checks an X server answers
    # there); with DISPLAY unset each Dolphin gets a private Xvfb, a new one on every restart.
    monkeypatch.delenv("DISPLAY", raising=False)
    exe, cfg = standin(tmp_path, build=build)
    env = DolphinEnv(cfg, cpu_level=9)
    try:
        env.reset()
        first = launches(exe.parent)[0]
        assert first["display"] and first["display"].startswith(":")
        assert "--platform" not in first["argv"]  # Qt's parser lacks it; Ishiiruka bakes its platform in
        xvfb = env.supervisor.session.display.process
        env.supervisor.restart("test")
        assert xvfb.poll() is not None  # the old display went with the old Dolphin
        play(env, 30)
        assert launches(exe.parent)[1]["display"]
        xvfb = env.supervisor.session.display.process
    finally:
        env.close()
    assert xvfb.poll() is not None


@pytest.mark.slow
def test_dolphin_start_up_retries_a_failed_version_check_and_a_dead_stream_worker(tmp_path, temp_in_tmp_path):
    # The 3rd --version (libmelee's own, inside Console() for the restart) fails as a busy AppImage
    # does: that start is retried instead of ending the worker.
    exe, cfg = standin(tmp_path, faults=[{"kind": "version_fail", "call": 3}])
    env = DolphinEnv(cfg, cpu_level=9)
    try:
        env.reset()
        env.supervisor.restart("test")
        play(env, 10)
        assert len(launches(exe.parent)) == 2 and env.restarts == 1
        # Dolphin's own log is kept to errors (Logger.ini Verbosity 2), so it does not flood the journal.
        assert launches(exe.parent)[0]["log_verbosity"] == "2"
    finally:
        env.close()
    # libmelee's stream worker dying before it answers (here: it cannot even build the port's address)
    # reaches connect() as EOFError: a StartFailed, cleaned up, which the supervisor retries.
    from melee_agent.dolphin import StartFailed, launch_options, start_dolphin

    before = set(temp_in_tmp_path.glob("libmelee_*"))
    with pytest.raises(StartFailed, match="EOFError"):
        start_dolphin(cfg, launch_options(cfg), 70000)
    assert set(temp_in_tmp_path.glob("libmelee_*")) <= before
    assert all(not _alive(rec["pid"]) for rec in launches(exe.parent))


@pytest.mark.parametrize("quieted", [True, False])
def test_dolphins_menu_frame_error_stays_out_of_the_workers_stderr(tmp_path, capfd, monkeypatch, quieted):
    """Ishiiruka logs `EXI SLIPPI: Invalid command byte: 0x3E` on every menu frame to stderr, which libmelee passes
    through (hundreds of lines a game in a VM's journal). The worker turns the logger's console output off in the
    user folder libmelee makes; without that (the second case) the stand-in writes the line as Ishiiruka does."""
    import melee_agent.dolphin.session as session

    if not quieted:
        monkeypatch.setattr(session, "quiet_console_log", lambda console: None)
    exe = install_standin(tmp_path / "dolphin", [replay_path(g) for g in GAMES], build="exiai", frames_limit=120)
    cfg = DolphinConfig(dolphin_path=str(exe), iso_path=str(exe.parent / "melee.iso"), timeout_s=3,
                        menu_timeout_s=60, max_restarts=5, restart_window_s=600)
    env = DolphinEnv(cfg, cpu_level=9)
    try:
        env.reset()
        play(env, 20)
    finally:
        env.close()
    err = capfd.readouterr().err
    assert launches(exe.parent)[0]["build"] == "exiai"
    if quieted:
        assert "Invalid command byte" not in err
    else:
        assert "EXI SLIPPI: Invalid command byte: 0x3E" in err
