"""The Dolphin worker's frame loop, driven by real Slippi replays through libmelee's file console.

Everything but the emulator runs: `DolphinEnv` steps a real `melee.Console` (reading a `.slp`),
encodes each frame, plays the chosen actions into a real `melee.Controller` whose pipe records
them, and scores frames with the arena's rules. The results are checked against libmelee's own
values on the same frames. `pytest -k dolphin` selects these tests.
"""

from __future__ import annotations

import os
from pathlib import Path

import melee
import pytest
import torch

from melee_agent.envs.actions import apply_frame, get_action_set
from melee_agent.config import ConfigError, DolphinConfig, load_config
from melee_agent.dolphin import DolphinEnv, DolphinError, check_paths
from melee_agent.dolphin.iso import disc_header
from melee_agent.envs.state import encode_gamestate
from tests.replays_kit import READABLE_REPLAYS, replay_path
from tests.dolphin_kit import ReplayOver, replay_env
from tests.recording_controller import held, recording_controller


def play_all(env: DolphinEnv, actions) -> list[tuple]:
    out = []
    obs = env.reset()
    out.append(("reset", obs, None, None, None))
    try:
        for a in actions:
            obs, r, done, info = env.step(torch.tensor([a]))
            out.append((a, obs, r.item(), done.item(), info))
    except ReplayOver:
        pass
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", READABLE_REPLAYS)
def test_dolphin_loop_states_hits_and_rewards_match_the_recorded_game(name):
    path = replay_path(name)
    env, states = replay_env(path, reward="untouchable", max_frames=10**9)
    a_port, o_port = env.rules.agent_port, env.rules.opponent_port
    steps = play_all(env, [0] * (len(states) + 5))  # noop: one frame per step
    played = steps[1:]
    last = states[-1].players
    # A hit on the frame that decides the game (the agent's last stock) ends the episode, and the
    # environment goes on to the next game, which this harness ends: that step never returns.
    decided_by_agent_ko = last[a_port].stock == 0
    assert len(played) == len(states) - 1 - decided_by_agent_ko  # every frame after the first
    hits_seen, rewards_seen = 0, 0.0
    prev = 0
    for i, (a, obs, r, done, info) in enumerate(played, start=1):
        gs, before = states[i], states[i - 1]
        expected_hit = (gs.players[a_port].percent > before.players[a_port].percent
                        or gs.players[a_port].stock < before.players[a_port].stock)
        assert info["hit"].item() == expected_hit, f"{name} frame {i}"
        assert done == expected_hit and info["terminal"].item() == expected_hit
        standing = gs.players[a_port].action == melee.enums.Action.STANDING
        assert r == pytest.approx(1 / 60 if standing else 0.0)
        # The state the agent sees after the step is libmelee's frame, encoded with the table.
        want = encode_gamestate(gs, a_port, o_port, 0 if done else prev, 5)
        assert torch.allclose(obs[0], torch.as_tensor(want)), f"{name} frame {i}"
        prev = 0
        hits_seen += expected_hit
        rewards_seen += r
    # The replays hold hits (libmelee_test_game_1: a stock is lost; pyslippi: all four).
    if name in ("libmelee_test_game_1.slp", "pyslippi_game.slp"):
        assert hits_seen > 0
    assert env.restarts == 1  # the replay's end looks like a Dolphin that stopped answering


def test_dolphin_a_game_that_ends_on_the_agents_last_ko_leaves_no_phantom_episode():
    # peppi_v3.13 ends on the frame port 1 (the agent, Fox) loses its last stock, as every real
    # replay that ends in a KO does. The hit ends the episode; the next episode must start in the
    # next game (here the replay again, on a "restarted" console), never on the KO frame: that
    # would leave an episode with no frame, cut at the game's end as a second done (0 frames,
    # never hit, truncated) holding an action never played.
    path = replay_path("peppi_v3.13.slp")
    env, states = replay_env(path, consoles=2, max_frames=10**9)
    a_port = env.rules.agent_port
    assert states[-1].players[a_port].stock == 0
    steps = play_all(env, [0] * (len(states) + 20))
    ends = [(i, s[4]) for i, s in enumerate(steps[1:], start=1) if s[3]]
    assert ends, "the agent's last KO ended no episode"
    for _, info in ends:
        assert info["frames"].item() > 0 and info["episode_frame"].item() > 0, "an episode with no frame"
    ko = len(states) - 1  # noop plays one frame per step: step k plays recorded frame k
    assert steps[ko][3] and steps[ko][4]["terminal"].item() and steps[ko][4]["stocks_lost"].item() == 1
    # The KO frame is the last recorded one; the observation after it is the next game's first frame.
    want = encode_gamestate(states[0], a_port, env.rules.opponent_port, 0, 5)
    assert torch.allclose(steps[ko][1][0], torch.as_tensor(want))
    after = steps[ko + 1][4]
    assert after["frames"].item() == 1 and not after["truncated"].item()  # a real frame of the new game
    assert env.restarts == 1


def test_dolphin_loop_plays_each_macro_frame_into_the_controller():
    path = replay_path("pyslippi_game.slp")
    env, states = replay_env(path, reward="damage", max_frames=10**9)
    aset = get_action_set("untouchable")
    plan = [1, 0, 2, 0, 4, 3, 0, 0] * 5
    steps = play_all(env, plan)
    frames = env.controller.pipe.frames
    want = [f for a, *_ in steps[1:] for f in aset.actions[a].frames[: _[3]["frames"].item()]]
    assert len(frames) == len(want) == sum(s[4]["frames"].item() for s in steps[1:])
    for got, f in zip(frames, want):
        h = held(got)
        assert h["buttons"] == set(f.buttons)
        # libmelee maps the stick onto the controller's analog grid; the direction is what must match
        assert [round(v - 0.5, 1) != 0 and (v > 0.5) for v in h["main"]] == \
            [round(v - 0.5, 1) != 0 and (v > 0.5) for v in f.main_stick]
        assert [round(v - 0.5, 1) < 0 for v in h["main"]] == [round(v - 0.5, 1) < 0 for v in f.main_stick]
    assert [s[4]["frames"].item() for s in steps[1:6]] == [22, 1, 32, 1, 6]


def test_dolphin_loop_plays_the_papers_post_shine_scripts_frame_for_frame_as_the_arenas_table():
    """untouchable-paper: after a shine each index plays its post-shine macro; what reaches the controller is
    exactly what the macros' frames (the arena's table rows) press through libmelee."""
    path = replay_path("pyslippi_game.slp")
    env, _ = replay_env(path, reward="damage", max_frames=10**9, action_set="untouchable-paper")
    aset = get_action_set("untouchable-paper")
    plan = [4, 1, 4, 2, 4, 3, 4, 4, 4, 0, 1, 2]  # shine then each index; shines chained; then no shine
    steps = play_all(env, plan)
    assert len(steps) == len(plan) + 1 and not any(s[3] for s in steps[1:])
    played, prev = [], 0
    for a, *_ in steps[1:]:
        played.append(aset.macro(a, prev))
        prev = a
    assert [m.name for m in played] == ["shine", "wavedash_down", "shine", "wavedash_left", "shine",
                                        "wavedash_right", "shine", "multishine", "multishine", "noop",
                                        "spot_dodge", "roll_left"]
    assert [s[4]["frames"].item() for s in steps[1:]] == [len(m.frames) for m in played]
    expected = recording_controller()
    for m in played:  # the macros' frames are the arena's table rows (tests/envs/test_actions.py)
        for f in m.frames:
            apply_frame(expected, f)
            expected.flush()
    assert env.controller.pipe.frames == expected.pipe.frames


@pytest.mark.slow
def test_dolphin_loop_damage_reward_and_stock_counts_follow_libmelee():
    path = replay_path("pyslippi_game.slp")
    env, states = replay_env(path, reward="damage", max_frames=10**9)
    a, o = env.rules.agent_port, env.rules.opponent_port
    steps = play_all(env, [0] * len(states))
    total = sum(s[2] for s in steps[1:])
    lost = sum(s[4]["stocks_lost"].item() for s in steps[1:])
    took = sum(s[4]["stocks_taken"].item() for s in steps[1:])
    first, last = states[0].players, states[len(steps) - 1].players
    assert lost == first[a].stock - last[a].stock and took == first[o].stock - last[o].stock
    assert lost + took > 0
    taken = sum(s[4]["damage_taken"].item() for s in steps[1:])
    dealt = sum(s[4]["damage_dealt"].item() for s in steps[1:])
    assert total == pytest.approx(0.01 * (dealt - taken) + (took - lost), abs=1e-6)


def test_dolphin_loop_cuts_an_episode_at_max_frames_without_a_hit():
    path = replay_path("slippijs_lCancel.slp")  # Mario vs Falco: nobody is hit early on
    env, _ = replay_env(path, max_frames=50)
    steps = play_all(env, [0] * 120)
    ends = [i for i, s in enumerate(steps[1:], start=1) if s[3]]
    assert ends and ends[0] == 50
    info = steps[50][4]
    assert info["truncated"].item() and not info["terminal"].item() and info["episode_frame"].item() == 50
    assert steps[51][4]["episode_frame"].item() == 1  # the next episode started on the next frame


def test_dolphin_restarts_a_console_that_stops_answering_and_keeps_going():
    path = replay_path("libmelee_test_game_1.slp")
    env, states = replay_env(path, consoles=2, die_after=100, max_frames=10**9)
    steps = play_all(env, [0] * 400)
    assert env.restarts == 1 and "stopped answering" in env.supervisor.restart_log[0]
    assert len(steps) - 1 == 400  # play went on in the restarted console
    cut = [s for s in steps[1:] if s[4]["truncated"].item()]
    assert len(cut) == 1  # the episode in flight was cut at the restart


def test_dolphin_paths_missing_or_wrong_give_one_line_saying_what_to_set(tmp_path):
    with pytest.raises(DolphinError, match="dolphin.dolphin_path is not set"):
        check_paths(DolphinConfig())
    with pytest.raises(DolphinError, match="does not exist"):
        check_paths(DolphinConfig(dolphin_path=str(tmp_path / "nope")))
    with pytest.raises(DolphinError, match="dolphin.iso_path is not set"):
        check_paths(DolphinConfig(dolphin_path=str(tmp_path)))
    with pytest.raises(DolphinError, match="not a file"):
        check_paths(DolphinConfig(dolphin_path=str(tmp_path), iso_path=str(tmp_path / "melee.iso")))
    # A folder is usable only where libmelee can find the executable in it (a 'netplay' install folder).
    iso = tmp_path / "melee.iso"
    iso.write_bytes(disc_header("GALE01", revision=2))
    with pytest.raises(DolphinError, match="folder libmelee cannot use"):
        check_paths(DolphinConfig(dolphin_path=str(tmp_path), iso_path=str(iso)))
    netplay = tmp_path / "netplay"
    netplay.mkdir()
    (netplay / "Slippi_Online-x86_64.AppImage").write_bytes(b"")
    check_paths(DolphinConfig(dolphin_path=str(netplay), iso_path=str(iso)))
    cfg = load_config("dolphin")
    assert cfg.env.env == "dolphin" and cfg.env.cpu_level == 9


def test_dolphin_config_has_one_cpu_level():
    # dolphin.cpu_level was never read (env.cpu_level won): now it is refused, naming the section's keys.
    with pytest.raises(ConfigError, match="unknown key dolphin.cpu_level"):
        load_config("dolphin", ["dolphin.cpu_level=3"])


def test_dolphin_eval_cli_without_paths_prints_what_to_set():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "melee_agent.cli.main", "eval", "--config", "dolphin", "--env",
                           "dolphin", "--policy", "noop", "--episodes", "1"], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2], timeout=120)
    assert proc.returncode == 2 and "dolphin.dolphin_path is not set" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(not (os.environ.get("MELEE_ISO") and os.environ.get("DOLPHIN_PATH")),
                    reason="real Dolphin test: set MELEE_ISO and DOLPHIN_PATH to run it")
def test_dolphin_real_game_against_the_level_9_cpu():
    cfg = load_config("dolphin", [f"dolphin.iso_path={os.environ['MELEE_ISO']}",
                                  f"dolphin.dolphin_path={os.environ['DOLPHIN_PATH']}"])
    env = DolphinEnv(cfg.dolphin, cpu_level=9, action_set="untouchable", reward="untouchable", max_frames=600)
    try:
        obs = env.reset()
        assert obs.shape == (1, 27)
        for _ in range(200):
            obs, _, _, info = env.step(torch.tensor([0]))
            assert bool(((obs >= 0) & (obs <= 1)).all())
    finally:
        env.close()


def test_dolphin_an_episode_cut_by_a_restart_is_counted_but_never_untouched():
    # "Untouched" is the paper's minute survived: an episode that a restart (or a game's end) cut
    # short reached no frame limit, whatever its hits. Both the evaluation and the worker's
    # segment statistics count it as an episode and not as untouched.
    from melee_agent.report.evaluate import evaluate
    from melee_agent.rl.model import DuelingDQN
    from melee_agent.rl.policies import make_policy
    from melee_agent.workers.play import SegmentPlayer

    path = replay_path("libmelee_test_game_1.slp")
    env, _ = replay_env(path, consoles=2, die_after=50, max_frames=100)  # nobody is hit in the countdown
    r = evaluate(env, make_policy("noop", "untouchable"), 2, progress=False)
    assert r.episodes == 2
    assert r.untouched_share == 0.5  # only the second, in the "restarted" game, reached its 100 frames
    assert r.episodes_cut == 1
    env, _ = replay_env(path, consoles=2, die_after=50, max_frames=100)
    player = SegmentPlayer(env, epsilon=1.0, n_step=3, gamma=0.99, seed=0)
    _, stats = player.play(DuelingDQN(num_actions=5), frames_per_env=200)
    assert stats.episodes == 2 and stats.untouched == 1 and stats.per_level == {"9": [2, 1]}


def test_dolphin_config_refuses_a_stage_or_character_the_menus_cannot_pick():
    # libmelee's choose_stage knows six stages and Random: any other would leave every game on the
    # wrong stage, quit and set up again for ever. Caught when the config loads, in one line.
    with pytest.raises(ConfigError, match="dolphin.stage 'CORNERIA' is not one libmelee's menu helper can pick"):
        load_config("dolphin", ["dolphin.stage=CORNERIA"])
    with pytest.raises(ConfigError, match="dolphin.opponent_character 'SANDBAG' is not a character"):
        load_config("dolphin", ["dolphin.opponent_character=SANDBAG"])
    with pytest.raises(ConfigError, match="two different ports"):
        load_config("dolphin", ["dolphin.opponent_port=1"])
    assert load_config("dolphin", ["dolphin.stage=battlefield"]).dolphin.stage == "battlefield"
    load_config("dolphin", ["dolphin.stage=RANDOM_STAGE"])
    load_config("default", ["dolphin.stage=CORNERIA"])  # an arena run never reads [dolphin]
