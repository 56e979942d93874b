"""Fights in real Melee: whole games in Dolphin, scored from libmelee's game state (issue 23).

The frame-to-frame accounting (:class:`melee_agent.envs.rewards.GameStateRules` with reward ``fight``)
is checked on every frame of the real replays in ../shared/replays against what each replay ends
on, computed here another way: a player's stocks lost are the stocks they started with minus the
stocks they end with, and their damage taken is, stock by stock, the percent that stock ended on
(Melee resets the percent to 0 when a KO'd player comes back, and holds it while they are dead).
Then :class:`~melee_agent.dolphin.DolphinEnv` plays whole games on libmelee's file console and,
end to end, ``melee-agent eval --config dolphin-fight --env dolphin`` plays one against the
Dolphin stand-in: pyslippi_game.slp, the one replay that is a whole game ending in a KO (Fox, the
recorded CPU, loses all four stocks to Marth, who ends on 7%).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from melee_agent.config import DolphinConfig, load_config
from melee_agent.dolphin import DolphinEnv, replay_session
from melee_agent.envs.make import make_env
from melee_agent.report.evaluate import evaluate
from melee_agent.rl.policies import make_policy
from melee_agent.envs.rewards import GAME_FRAMES, GameStateRules, game_result
from melee_agent.io.slp import game_ports, read_gamestates
from tests.replays_kit import READABLE_REPLAYS, replay_path
from tests.dolphin_standin.install import events, install_standin
from tests.episode_ends import record_episode_ends
from tests.recording_controller import held, recording_controller

REPO = Path(__file__).resolve().parents[2]
WHOLE_GAME = "pyslippi_game.slp"  # the replay that is a whole game ending in a KO (README of ../shared/replays)


class ReplayOver(Exception):
    pass


def stock_by_stock(states: list, port: int) -> tuple[int, float]:
    """``(stocks lost, damage taken)`` of the player at ``port`` over ``states``, read per stock.

    Each stock's damage is the percent it ended on (on its last frame, or the replay's) less the
    lowest percent it showed: a stock begins on the frame the previous one was lost, still showing
    that one's percent while the player is dead, until the respawn resets it to 0.
    """
    stocks = [int(s.players[port].stock) for s in states]
    percent = [float(s.players[port].percent) for s in states]
    cuts = [0] + [i for i in range(1, len(states)) if stocks[i] < stocks[i - 1]] + [len(states)]
    damage = sum(percent[b - 1] - min(percent[a:b]) for a, b in zip(cuts, cuts[1:]))
    # (the low is where the stock's damage starts because percent never falls after it within a stock)
    for a, b in zip(cuts, cuts[1:]):
        low = percent[a:b].index(min(percent[a:b]))
        rising = percent[a + low: b]
        assert rising == sorted(rising), f"port {port}: percent fell within a stock"
    return stocks[0] - stocks[-1], damage


def replay_result(states: list, agent: int, opponent: int) -> dict:
    """What a whole game on ``states`` gives the agent at port ``agent``: eval's keys for one game."""
    lost, taken = stock_by_stock(states, agent)
    took, dealt = stock_by_stock(states, opponent)
    last = states[-1].players
    t = lambda v: torch.tensor([float(v)])  # noqa: E731
    result = int(game_result(t(last[agent].stock), t(last[opponent].stock), t(last[agent].percent),
                             t(last[opponent].percent)))
    return {"wins": int(result > 0), "losses": int(result < 0), "draws": int(result == 0),
            "stocks_taken_per_game": took, "stocks_lost_per_game": lost,
            "damage_dealt_per_game": dealt, "damage_taken_per_game": taken}


def file_env(path: Path, consoles: int = 2, **kw) -> tuple[DolphinEnv, list]:
    """A fight DolphinEnv on the replay's file console (menus off); a console past ``consoles`` ends the test."""
    states = read_gamestates(path)
    ports = game_ports(states[-1])
    made: list = []

    def session():
        if len(made) >= consoles:
            raise ReplayOver
        made.append(replay_session(str(path), ports[0], ports[1], recording_controller))
        return made[-1]

    cfg = DolphinConfig(agent_port=ports[0], opponent_port=ports[1])
    env = DolphinEnv(cfg, cpu_level=9, game="fight", session_factory=session, menus=False, **kw)
    return env, states


# --- the accounting, frame by frame, on real replays ---

@pytest.mark.parametrize("name", READABLE_REPLAYS)
@pytest.mark.parametrize("agent_first", [True, False])
def test_dolphin_fight_accounting_over_a_whole_replay_equals_its_final_values(name, agent_first):
    states = read_gamestates(replay_path(name))
    ports = game_ports(states[-1])
    agent, opponent = ports if agent_first else ports[::-1]
    rules = GameStateRules(agent, opponent, "fight", GAME_FRAMES, timed=True)
    rules.start(states[0])
    taken = dealt = reward = 0.0
    lost = took = 0
    ends = []
    for i, gs in enumerate(states[1:], start=1):
        r = rules.frame(gs, noop=True)
        assert not r.truncated
        taken, dealt, lost, took, reward = (taken + r.damage_taken, dealt + r.damage_dealt, lost + r.stocks_lost,
                                            took + r.stocks_taken, reward + r.reward)
        if r.terminal:
            ends.append(i)
    want_lost, want_taken = stock_by_stock(states, agent)
    want_took, want_dealt = stock_by_stock(states, opponent)
    assert (lost, took) == (want_lost, want_took)
    assert taken == pytest.approx(want_taken, abs=1e-3) and dealt == pytest.approx(want_dealt, abs=1e-3)
    assert reward == pytest.approx(0.01 * (dealt - taken) + (took - lost), abs=1e-4)
    assert rules.episode_return == pytest.approx(reward)
    # The game ends (terminal) on the frame a player loses their last stock, and on no other: the
    # replays are all far shorter than the 8:00 clock.
    last = states[-1].players
    assert ends == ([len(states) - 1] if min(last[agent].stock, last[opponent].stock) == 0 else [])
    if name == WHOLE_GAME:  # Marth (port 1) takes all four of Fox's stocks
        assert (want_took, want_lost) == ((4, 0) if agent == 1 else (0, 4))
        assert want_dealt + want_taken > 300


def test_dolphin_fight_stock_lost_is_never_negative_damage():
    # On a KO the stock count drops while the percent holds; 60 frames later the respawn resets it
    # to 0 within the same stock. Neither is damage, either way round.
    states = read_gamestates(replay_path(WHOLE_GAME))
    rules = GameStateRules(2, 1, "fight", GAME_FRAMES, timed=True)  # the agent is Fox, who is KO'd
    rules.start(states[0])
    seen_reset = 0
    for i, gs in enumerate(states[1:], start=1):
        before = states[i - 1].players[2]
        r = rules.frame(gs, noop=True)
        assert r.damage_taken >= 0 and r.damage_dealt >= 0
        if gs.players[2].stock < before.stock:
            assert r.stocks_lost == 1 and r.damage_taken == 0 and r.reward == pytest.approx(-1.0)
        if gs.players[2].stock == before.stock and gs.players[2].percent < before.percent:
            seen_reset += 1
            assert r.damage_taken == 0
    assert seen_reset == 3  # three respawns: the fourth KO ends the game


@pytest.mark.parametrize("clock_in_state", [False, True])
def test_dolphin_fight_clock_counts_from_go_and_ends_the_game(clock_in_state):
    # Melee's timer starts at GO (libmelee's frame 0); the 123 countdown frames are not on it. The
    # frame on which it reads 0:00 (frame max_frames) is the game's last and ends it: terminal where the
    # state shows the clock, else a cut (bootstrapped).
    states = read_gamestates(replay_path("libmelee_test_game_1.slp"))
    rules = GameStateRules(1, 2, "fight", 200, timed=True, clock_in_state=clock_in_state)
    rules.start(states[0])
    assert states[0].frame == -123
    for gs in states[1:]:
        r = rules.frame(gs, noop=True)
        if r.terminal or r.truncated:
            break
    assert gs.frame == 200 and rules.time_up(gs) and (r.terminal, r.truncated) == (clock_in_state, not clock_in_state)
    assert rules.episode_frame == 123 + 200  # frames -122..200: the episode's first frame (-123) is its start


# --- DolphinEnv: one episode per game ---

@pytest.mark.slow
def test_dolphin_fight_env_plays_a_whole_game_as_one_episode_and_reports_it_as_the_arena_does():
    env, states = file_env(replay_path(WHOLE_GAME))
    a, o = env.rules.agent_port, env.rules.opponent_port
    assert env.action_set.name == "fight" and env.rules.reward == "fight" and env.max_frames == GAME_FRAMES
    ends = record_episode_ends(env)
    r = evaluate(env, make_policy("noop", "fight"), 1, progress=False).to_json()
    assert len(ends) == 1
    obs, reward, _, info = ends[0]
    assert info["terminal"].item() and not info["truncated"].item() and info["game_over"].item()
    assert info["episode_frame"].item() == len(states) - 1  # every frame of the game after the first
    last = states[-1].players
    assert (info["agent_stocks"].item(), info["opponent_stocks"].item()) == (int(last[a].stock), int(last[o].stock))
    assert info["agent_percent"].item() == pytest.approx(float(last[a].percent))
    assert info["opponent_percent"].item() == pytest.approx(float(last[o].percent))
    want = replay_result(states, a, o)
    assert r["games"] == 1 and r["win_rate"] == 1.0 and r["episodes_cut"] == 0
    for k, v in want.items():
        assert r[k] == pytest.approx(v, abs=1e-3), k
    assert info["episode_return"].item() == pytest.approx(
        0.01 * (want["damage_dealt_per_game"] - want["damage_taken_per_game"]) + 4, abs=1e-3)
    # The next episode starts on the next game's first frame (here the replay again, "restarted").
    assert env.restarts == 1
    from melee_agent.envs.state import encode_gamestate

    assert torch.allclose(obs[0], torch.as_tensor(encode_gamestate(states[0], a, o, 0, env.num_actions)))


def test_dolphin_fight_env_ends_the_game_on_the_clock_and_goes_on_in_the_next_one():
    # basic's noop holds 3 frames: the step after the restart plays 3 of the next game's frames.
    env, states = file_env(replay_path("libmelee_test_game_1.slp"), max_frames=300, action_set="basic")
    a, o = env.rules.agent_port, env.rules.opponent_port
    env.reset()
    steps = []
    while not steps or not steps[-1][2].item():
        steps.append(env.step(torch.tensor([env.noop_index])))
    _, _, _, info = steps[-1]
    at = next(i for i, s in enumerate(states) if s.frame == 300)
    # The 27 floats show no clock: its end is a cut (bootstrapped), and the game is over.
    assert info["truncated"].item() and not info["terminal"].item()
    assert info["game_over"].item() and info["episode_frame"].item() == at
    last = states[at].players
    assert info["agent_stocks"].item() == last[a].stock and info["opponent_stocks"].item() == last[o].stock
    assert info["agent_percent"].item() == pytest.approx(float(last[a].percent))
    # What is left of the game is not played: the next step is in the next game (the replay again).
    nxt = env.step(torch.tensor([env.noop_index]))[3]
    assert env.restarts == 1 and nxt["frames"].item() == 3 and not nxt["terminal"].item()
    assert env.rules.episode_frame == 3 and env.gamestate.frame == states[3].frame


def test_dolphin_fight_layout_shows_the_clock_and_stocks_and_ends_the_game_terminal_on_it():
    # With the fight layout the state shows the time left, so the clock's end is terminal (no cut).
    env, states = file_env(replay_path("libmelee_test_game_1.slp"), max_frames=300, action_set="basic",
                           state_layout="fight-30")
    obs = env.reset()
    # Before GO the timer shows the whole clock (300 frames here), in 8:00 units; 4 stocks each.
    assert obs.shape == (1, 30) and obs[0, 27:].tolist() == pytest.approx([300 / 28_800, 1.0, 1.0])
    steps = []
    while not steps or not steps[-1][2].item():
        steps.append(env.step(torch.tensor([env.noop_index])))
    info = steps[-1][3]
    assert info["terminal"].item() and not info["truncated"].item() and info["game_over"].item()
    assert info["final_obs"][0, 27:].tolist() == [0.0, 0.75, 1.0]  # no time left; port 1 lost a stock at 264
    mid = steps[len(steps) // 2][0][0, 27].item()
    assert 0.0 < mid < 300 / 28_800


def _same_controller(commands: list[str], frame) -> bool:
    """The recorded frame holds ``frame``'s buttons and main-stick direction (libmelee maps the stick
    onto the controller's analog grid, so the direction is what must match)."""
    h = held(commands)
    side = lambda v: (round(v - 0.5, 1) > 0) - (round(v - 0.5, 1) < 0)  # noqa: E731
    return h["buttons"] == set(frame.buttons) and [side(v) for v in h["main"]] == [side(v) for v in frame.main_stick]


def test_dolphin_input_delay_plays_each_controller_state_delay_frames_late_from_a_neutral_start():
    # docs/design.md "Input delay": the agent's controller state reaches the game delay_frames after
    # the observation it answers; each episode starts with nothing in flight (neutral), as the arena.
    env, _ = file_env(replay_path("libmelee_test_game_1.slp"), delay_frames=5)
    aset = env.action_set
    neutral = aset.actions[aset.noop_index].frames[0]
    plan = [a for a in range(aset.num_actions) if a != aset.noop_index][:12]
    env.reset()
    assert list(env.in_flight) == [neutral] * 5
    chosen = []
    for a in plan:
        *_, info = env.step(torch.tensor([a]))
        chosen += aset.actions[a].frames[: info["frames"].item()]
    got = env.controller.pipe.frames
    want = [neutral] * 5 + chosen[:-5]
    assert len(got) == len(want) == len(chosen) > 5
    assert all(_same_controller(g, f) for g, f in zip(got, want))
    assert list(env.in_flight) == chosen[-5:]  # still in flight: they reach the game on the next frames
    # Without delay the same plan reaches the controller as chosen (the test above is not vacuous).
    env0, _ = file_env(replay_path("libmelee_test_game_1.slp"))
    env0.reset()
    for a in plan:
        env0.step(torch.tensor([a]))
    assert not all(_same_controller(g, f) for g, f in zip(env0.controller.pipe.frames, want))
    assert all(_same_controller(g, f) for g, f in zip(env0.controller.pipe.frames, chosen))
    with pytest.raises(ValueError, match=r"delay_frames must be an int in \[0, 60\], got -1"):
        DolphinEnv(DolphinConfig(), game="fight", delay_frames=-1, session_factory=lambda: None, menus=False)


def test_dolphin_input_delay_starts_neutral_in_each_new_game_and_carries_over_inside_one():
    # A fight's next episode is the next game: nothing of the old one is in flight there.
    env, _ = file_env(replay_path("libmelee_test_game_1.slp"), max_frames=300, delay_frames=5)
    aset = env.action_set
    neutral = aset.actions[aset.noop_index].frames[0]
    # Macros that press something on every frame: what is in flight is never neutral by chance.
    moves = [a for a in range(aset.num_actions)
             if len(aset.actions[a].frames) > 5 and all(f != neutral for f in aset.actions[a].frames)]
    assert moves
    env.reset()
    done, k = False, 0
    while not done:
        *_, done, info = env.step(torch.tensor([moves[k % len(moves)]]))
        done, k = bool(done.item()), k + 1
    assert info["game_over"].item() and list(env.in_flight) == [neutral] * 5  # a new game: nothing in flight
    n0 = len(env.controller.pipe.frames)
    *_, info = env.step(torch.tensor([moves[0]]))
    got = env.controller.pipe.frames[n0:]
    assert len(got) == info["frames"].item() > 5
    assert all(_same_controller(g, neutral) for g in got[:5])
    assert _same_controller(got[5], aset.actions[moves[0]].frames[0])
    # The dodging game's episodes end inside one game (here its 40-frame limit): the states in flight
    # still reach the game, so across its episodes the controller is one stream delayed by 5 frames.
    path = replay_path("libmelee_test_game_1.slp")
    ports = game_ports(read_gamestates(path)[-1])
    denv = DolphinEnv(DolphinConfig(agent_port=ports[0], opponent_port=ports[1]), cpu_level=9, action_set="basic",
                      reward="untouchable", max_frames=40, menus=False, delay_frames=5,
                      session_factory=lambda: replay_session(str(path), ports[0], ports[1], recording_controller))
    daset = denv.action_set
    dneutral = daset.actions[daset.noop_index].frames[0]
    denv.reset()
    chosen, ends = [], 0
    for k in range(40):
        a = [x for x in range(daset.num_actions) if x != daset.noop_index][k % (daset.num_actions - 1)]
        *_, done, info = denv.step(torch.tensor([a]))
        chosen += daset.actions[a].frames[: info["frames"].item()]
        ends += int(done.item())
    assert ends >= 2 and denv.restarts == 0  # episodes ended, all inside the replay's one game
    got = denv.controller.pipe.frames
    want = [dneutral] * 5 + chosen[:-5]
    assert len(got) == len(want) and all(_same_controller(g, f) for g, f in zip(got, want))


def test_dolphin_fight_takes_the_config_s_input_delay_and_refuses_a_reward_that_does_not_fit(tmp_path):
    with pytest.raises(ValueError, match="reward 'untouchable' does not fit game 'fight'"):
        DolphinEnv(DolphinConfig(), game="fight", reward="untouchable", session_factory=lambda: None, menus=False)
    cfg = load_config("dolphin-fight")
    assert (cfg.env.env, cfg.env.game, cfg.env.reward, cfg.env.action_set) == ("dolphin", "fight", "fight", "fight")
    exe = install_standin(tmp_path / "dolphin", [replay_path("slippijs_lCancel.slp")])
    env = make_env(load_config("dolphin-fight", [f"dolphin.dolphin_path={exe}", f"dolphin.iso_path={exe.parent / 'melee.iso'}",
                                                 "env.delay_frames=18"]))
    try:
        assert env.delay_frames == 18 and env.game == "fight"
    finally:
        env.close()


# --- end to end against the Dolphin stand-in ---

def _standin(tmp_path: Path, replay: str) -> tuple[Path, Path]:
    # No frames_limit: the game runs to its end as recorded (a KO, or TIME! at the replay's end).
    exe = install_standin(tmp_path / "dolphin", [replay_path(replay)], freeze_frames=10)
    return exe, exe.parent / "melee.iso"


@pytest.mark.slow
def test_dolphin_fight_eval_cli_against_the_standin_counts_the_game_as_the_replay_ends(tmp_path):
    states = read_gamestates(replay_path(WHOLE_GAME))
    exe, iso = _standin(tmp_path, WHOLE_GAME)
    out = tmp_path / "eval.json"
    proc = subprocess.run(
        [sys.executable, "-m", "melee_agent.cli.main", "eval", "--config", "dolphin-fight", "--env", "dolphin",
         "--episodes", "1", "--policy", "noop", "--no-progress", "--no-replays", "--json", str(out),
         "--set", f"dolphin.dolphin_path={exe}", "--set", f"dolphin.iso_path={iso}",
         "--set", "dolphin.timeout_s=10"], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(out.read_text())
    # The stand-in seats the recorded port 1 (Marth) on the agent's port as Fox, and the recorded
    # Fox CPU on port 2 as the level-9 Marth: the agent wins 4-0, as the replay does.
    want = replay_result(states, 1, 2)
    assert want["wins"] == 1 and want["stocks_taken_per_game"] == 4 and want["stocks_lost_per_game"] == 0
    assert r["env"] == "dolphin" and r["episodes"] == 1 and r["games"] == 1 and r["episodes_cut"] == 0
    assert r["win_rate"] == 1.0 and r["losses"] == 0 and r["draws"] == 0
    for k, v in want.items():
        assert r[k] == pytest.approx(v, abs=1e-3), k
    log = events(exe.parent)
    assert any("game 1 over (GAME!)" in e for e in log) and any("port 2 MARTH cpu 9" in e for e in log)
    assert "1 whole games (4 stocks, 8:00) per level" in proc.stdout
    row = next(line.split() for line in proc.stdout.splitlines() if line.split()[:2] == ["9", "1"])
    assert row[2:6] == ["100.0%", "1-0-0", "4.00", "0.00"], proc.stdout  # win rate, W-L-D, stocks taken, lost


@pytest.mark.slow
def test_dolphin_fight_a_game_melee_ends_at_time_is_over_not_cut(tmp_path):
    # libmelee_test_game_1 runs out (TIME!) with port 1 a stock down: Melee ends the game before
    # the 8:00 clock would. The episode is the game's, and the agent lost it; the clock ended it, which
    # the 27 floats do not show: a cut (bootstrapped), not terminal.
    states = read_gamestates(replay_path("libmelee_test_game_1.slp"))
    exe, iso = _standin(tmp_path, "libmelee_test_game_1.slp")
    cfg = DolphinConfig(dolphin_path=str(exe), iso_path=str(iso), timeout_s=5, menu_timeout_s=60)
    env = DolphinEnv(cfg, cpu_level=9, game="fight")
    ends = record_episode_ends(env)
    try:
        r = evaluate(env, make_policy("noop", "basic"), 1, progress=False).to_json()
    finally:
        env.close()
    assert any("game 1 over (TIME!)" in e for e in events(exe.parent))
    info = ends[0][3]
    assert info["truncated"].item() and not info["terminal"].item() and info["game_over"].item()
    assert env.restarts == 0
    want = replay_result(states, 1, 2)
    assert want["losses"] == 1 and want["stocks_lost_per_game"] == 1
    assert r["games"] == 1 and r["episodes_cut"] == 0
    for k, v in want.items():
        assert r[k] == pytest.approx(v, abs=1e-3), k
    last = states[-1].players
    assert (info["agent_stocks"].item(), info["opponent_stocks"].item()) == (3, 4)
    assert info["agent_percent"].item() == pytest.approx(float(last[1].percent))


def test_dolphin_standin_streams_an_older_replay_as_today_s_dolphin_does(tmp_path):
    # pyslippi_game.slp is replay format 1.0.0: no Frame Start or Bookend, which libmelee's live
    # console needs (and it refuses formats before 3.0.0). The stand-in streams it as format 3.0.0;
    # libmelee reads those frames (without allow_old_version) exactly as it reads the file itself.
    import melee
    import ubjson

    from tests.dolphin_standin.slp_frames import FRAME_BOOKEND, FRAME_START, read_game

    path = replay_path(WHOLE_GAME)
    game = read_game(path)
    assert game.version == (3, 0, 0) and game.ports == (0, 1)
    assert all(f[0] == FRAME_START and f[-5] == FRAME_BOOKEND for f in game.frames)
    streamed = tmp_path / "streamed.slp"
    streamed.write_bytes(ubjson.dumpb({"raw": game.start + b"".join(game.frames) + game.end, "metadata": {}}))
    console = melee.Console(path=str(streamed), is_dolphin=False)
    console.connect()
    got = []
    while (gs := console.step()) is not None:
        got.append(gs)
    want = read_gamestates(path)
    assert len(got) == len(want) == len(game.frames)
    for a, b in zip(got, want):
        assert a.frame == b.frame
        for p in (1, 2):
            pa, pb = a.players[p], b.players[p]
            assert (pa.stock, pa.percent, pa.action, pa.character) == (pb.stock, pb.percent, pb.action, pb.character)
            assert (pa.position.x, pa.position.y) == (pb.position.x, pb.position.y)


@pytest.mark.slow
def test_dolphin_fight_in_a_game_without_four_stocks_each_stops_with_what_to_set(tmp_path):
    # Slippi's required codes start every game with 4 stocks and 8:00, and each Dolphin gets a fresh user
    # folder: a fight whose game starts with other stocks (peppi_v3.13: one each) stops at once, naming the
    # Dolphin's codes, not a rules menu a fresh user folder could never keep.
    from melee_agent.dolphin import DolphinError

    exe, iso = _standin(tmp_path, "peppi_v3.13.slp")
    cfg = DolphinConfig(dolphin_path=str(exe), iso_path=str(iso), timeout_s=5, menu_timeout_s=60)
    env = DolphinEnv(cfg, cpu_level=9, game="fight")
    try:
        with pytest.raises(DolphinError, match="a fight needs Melee's standard rules, 4 stocks each and 8:00, but the "
                                               "game started with 1 and 1 stocks .*required codes .*GALE01r2.ini") as e:
            env.reset()
        assert "memory card" not in str(e.value)
    finally:
        env.close()
    env = DolphinEnv(cfg, cpu_level=9)  # the dodging task plays whatever the rules give
    try:
        env.reset()
        assert env.supervisor.setup_mismatches == []
    finally:
        env.close()


def _two_noop_games_on_the_standin(tmp_path: Path, faults: list[dict] | None = None) -> tuple:
    """``evaluate`` of two fight games by the noop on the stand-in: slippijs_lCancel (nobody is hit
    early on) cut by TIME! at 200 frames, so stocks are tied and sudden death follows; with ``faults``.
    Returns the executable, the (closed) env, its episode ends and the report's JSON."""
    exe = install_standin(tmp_path / "dolphin", [replay_path("slippijs_lCancel.slp")], frames_limit=200,
                          freeze_frames=10, faults=faults)
    cfg = DolphinConfig(dolphin_path=str(exe), iso_path=str(exe.parent / "melee.iso"), timeout_s=5,
                        menu_timeout_s=60)
    env = DolphinEnv(cfg, cpu_level=9, game="fight")
    ends = record_episode_ends(env)
    try:
        r = evaluate(env, make_policy("noop", "basic"), 2, progress=False).to_json()
    finally:
        env.close()
    return exe, env, ends, r


@pytest.mark.slow
def test_dolphin_fight_a_time_out_with_stocks_tied_goes_to_sudden_death_and_counts_as_the_game_s_end(tmp_path):
    # Melee plays sudden death after TIME! with stocks tied; the agent plays none of it, and the
    # game's episode ends (game over; a cut, the 27 floats showing no clock) at time: by the rules here
    # (docs/design.md "Fights"), less percent wins, and equal is a draw. slippijs_lCancel: nobody is hit early on.
    exe, env, ends, r = _two_noop_games_on_the_standin(tmp_path)
    log = events(exe.parent)
    assert sum("sudden death over" in e for e in log) >= 1
    assert len(ends) == 2 and env.restarts == 0
    for *_, info in ends:
        assert info["truncated"].item() and info["game_over"].item() and not info["terminal"].item()
        assert info["agent_stocks"].item() == info["opponent_stocks"].item() == 4
        assert info["agent_percent"].item() == info["opponent_percent"].item() == 0.0
        assert info["final_obs"][0, 11] < 0.3  # the last frame before time, not sudden death's 300%
    assert r["games"] == 2 and r["draws"] == 2 and r["episodes_cut"] == 0


@pytest.mark.slow
def test_dolphin_fight_a_game_melee_ended_stays_a_game_when_dolphin_dies_on_the_results_screen(tmp_path):
    # The game was over (TIME!, then sudden death) before Dolphin died in the menus: its episode is
    # a game Melee ended, not one the restart cut; the restart only costs the way to the next game.
    exe, env, ends, r = _two_noop_games_on_the_standin(tmp_path, [{"launch": 1, "kind": "exit_in_results"}])
    assert any("fault: exit on the results screen" in e for e in events(exe.parent))
    assert env.restarts == 1 and len(ends) == 2
    for *_, info in ends:
        assert info["truncated"].item() and info["game_over"].item() and not info["terminal"].item()
    assert r["games"] == 2 and r["draws"] == 2 and r["episodes_cut"] == 0


@pytest.mark.slow
def test_dolphin_fight_eval_plays_another_game_for_each_one_a_restart_cut(tmp_path):
    # Dolphin dies mid-game (fault "exit" at frame 100 of the first game): that episode is cut, not a
    # game, and evaluate plays one more, so the two games asked for are two games.
    exe, env, ends, r = _two_noop_games_on_the_standin(tmp_path, [{"launch": 1, "kind": "exit", "game": 1, "frame": 100}])
    assert any("fault: exit in game 1" in e for e in events(exe.parent))
    assert env.restarts == 1 and len(ends) == 3
    assert ends[0][-1]["truncated"].item() and not ends[0][-1]["game_over"].item()
    assert r["episodes"] == 3 and r["episodes_cut"] == 1 and r["games"] == 2 and r["draws"] == 2


def test_dolphin_fight_worker_rows_end_the_game_as_a_terminal_transition():
    # What a Dolphin worker with configs/dolphin-fight.toml uploads: one whole game is one episode,
    # its last row terminal (discount 0), its return the game's fight reward. peppi_v3.13 is short
    # and ends on the agent's (port 1's) last stock lost.
    from melee_agent.rl.model import DuelingDQN
    from melee_agent.rl.rows import DISCOUNT, REWARD
    from workers.play import SegmentPlayer

    env, states = file_env(replay_path("peppi_v3.13.slp"))
    player = SegmentPlayer(env, epsilon=1.0, n_step=1, gamma=0.99, seed=0)
    rows, stats = player.play(DuelingDQN(num_actions=env.num_actions), frames_per_env=len(states) + 2)
    assert stats.episodes == 1 and stats.length_sum == len(states) - 1
    want = replay_result(states, 1, 3)
    assert want["losses"] == 1 and want["stocks_lost_per_game"] == 1
    assert stats.return_sum == pytest.approx(
        0.01 * (want["damage_dealt_per_game"] - want["damage_taken_per_game"]) - 1, abs=1e-3)
    terminal = (rows[:, DISCOUNT] == 0).nonzero().view(-1).tolist()
    assert len(terminal) == 1 and rows[:, REWARD].sum().item() == pytest.approx(stats.return_sum, abs=1e-2)
