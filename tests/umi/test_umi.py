"""The Computer Melee Championship bot (UMI v1): the same 27 floats as libmelee's path, the bot's
per-game memory and controller rows, and the real `umi-conform` run against `melee-agent umi`."""

from __future__ import annotations

import csv
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from umi.frame import CTRL_FIELDS, FRAME

from melee_agent.io.slp import game_ports, read_gamestates
from melee_agent.envs.state import encode_gamestate
from melee_agent.umi import encode_frames
from tests.replays_kit import READABLE_REPLAYS, replay_path


def libmelee_zero_indexed() -> set[tuple[int, int]]:
    """(character, action) pairs libmelee adds 1 to (its actiondata.csv), read here independently."""
    spec = importlib.util.find_spec("melee")
    path = Path(next(iter(spec.submodule_search_locations))) / "actiondata.csv"
    with open(path, newline="") as f:
        return {(int(r["character"]), int(r["action"])) for r in csv.DictReader(f) if r["zeroindex"] == "True"}


def fighter_record(p, zero_indexed: set[tuple[int, int]]) -> tuple:
    """One libmelee PlayerState as a UMI fighter: the game-memory values the replay holds.

    libmelee's action_frame counts zero-indexed actions from 1 (it adds 1); game memory, and so
    UMI, counts them from 0. UMI's percent is the whole percent (floored); its hitstun counter is
    unsigned.
    """
    action = int(getattr(p.action, "value", p.action))
    character = int(p.character.value)
    frame = int(p.action_frame) - ((character, action) in zero_indexed)
    rec = np.zeros((), FRAME["players"].base)
    values = dict(exists=1, character=character, stocks=int(p.stock), facing=bool(p.facing),
                  on_ground=bool(p.on_ground), invulnerable=bool(p.invulnerable), hurtbox_state=int(bool(p.invulnerable)),
                  jumps_left=int(p.jumps_left), action=action, action_frame=frame, percent=math.floor(p.percent),
                  hitlag_left=max(0, int(p.hitlag_left)), hitstun_left=min(max(0, int(p.hitstun_frames_left)), 65535),
                  x=p.position.x, y=p.position.y, shield_strength=p.shield_strength,
                  speed_air_x_self=p.speed_air_x_self, speed_ground_x_self=p.speed_ground_x_self,
                  speed_y_self=p.speed_y_self, speed_x_attack=p.speed_x_attack, speed_y_attack=p.speed_y_attack)
    for k, v in values.items():
        rec[k] = v
    return rec


def umi_frames(states: list, agent: int, opponent: int) -> np.ndarray:
    """libmelee game states as UMI frames from the agent's seat (players[0] = agent)."""
    zero = libmelee_zero_indexed()
    out = np.zeros(len(states), FRAME)
    for i, gs in enumerate(states):
        out[i]["frame"] = gs.frame
        out[i]["players"][0] = fighter_record(gs.players[agent], zero)
        out[i]["players"][1] = fighter_record(gs.players[opponent], zero)
    return out


@pytest.fixture(scope="module")
def games() -> dict:
    return {name: read_gamestates(replay_path(name)) for name in READABLE_REPLAYS}


@pytest.mark.slow
@pytest.mark.parametrize("name", READABLE_REPLAYS)
def test_replay_frames_give_the_same_27_floats_as_libmelee(games, name):
    states = games[name]
    ports = game_ports(states[-1])[:2]
    for agent, opponent in (ports, ports[::-1]):  # from both seats
        prev = np.arange(len(states)) % 5
        want = np.stack([encode_gamestate(gs, agent, opponent, int(a), 5) for gs, a in zip(states, prev)])
        got = encode_frames(umi_frames(states, agent, opponent), prev, 5)
        assert got.shape == want.shape == (len(states), 27) and got.dtype == np.float32
        np.testing.assert_array_equal(got, want, err_msg=f"{name}, agent port {agent}")


def test_replay_frames_give_libmelee_s_fight_layout(games):
    # The fight layout's time left (UMI's frame, -123 first, 0 at GO, as libmelee's) and stocks, from both seats.
    states = games["libmelee_test_game_1.slp"]
    for agent, opponent in ((1, 2), (2, 1)):
        prev = np.arange(len(states)) % 5
        want = np.stack([encode_gamestate(gs, agent, opponent, int(a), 5, layout="fight-30") for gs, a in zip(states, prev)])
        got = encode_frames(umi_frames(states, agent, opponent), prev, 5, layout="fight-30")
        assert got.shape == want.shape == (len(states), 30)
        np.testing.assert_array_equal(got, want)
        assert len(set(got[:, 28 if agent == 1 else 29].tolist())) == 2  # port 1's stock lost on the way


def test_the_replays_exercise_what_the_conversion_changes(games):
    """Fractional percents and zero-indexed actions occur in these frames, so the equality above means something."""
    zero = libmelee_zero_indexed()
    players = [p for states in games.values() for gs in states for p in gs.players.values()]
    assert sum(p.percent != math.floor(p.percent) for p in players) > 1000
    assert sum((p.character.value, p.action.value) in zero for p in players) > 1000
    assert sum(not p.on_ground for p in players) > 1000


def test_encode_frames_refuses_other_arrays():
    with pytest.raises(ValueError, match="umi.frame.FRAME"):
        encode_frames(np.zeros((2, 27), np.float32), 0, 5)


# ---- the bot, driven through the real protocol (umi.protocol over a socket pair)

from melee_agent.envs.actions import ACTION_SETS, TABLE_COLUMNS, ActionSet  # noqa: E402
from melee_agent.rl.model import DuelingDQN, model_to_bytes  # noqa: E402
from melee_agent.umi import MeleeAgentBot  # noqa: E402


def fixed_choice_model(num_actions: int, action: int) -> DuelingDQN:
    """A network that picks ``action`` whatever it sees."""
    net = DuelingDQN(num_actions=num_actions)
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
        net.advantage[2].bias[action] = 1.0
    return net


def shine_unless_just_shone_model(otherwise: int = 0) -> DuelingDQN:
    """untouchable: shine (4) where the state's previous action is 0, else ``otherwise`` (noop): shine, noop, ..."""
    net = fixed_choice_model(5, otherwise)
    with torch.no_grad():
        net.shared[0].bias[0], net.shared[0].weight[0, 26] = 1.0, -10.0  # h0 = 1 only at previous action 0
        net.advantage[0].weight[0, 0] = 1.0
        net.advantage[2].weight[4, 0] = 10.0
    return net


def expected_row(frame) -> list[float]:
    """A ControllerFrame as UMI's controller row, written out from CTRL_FIELDS."""
    values = {"main_x": frame.main_stick[0], "main_y": frame.main_stick[1], "c_x": 0.5, "c_y": 0.5,
              "shoulder": frame.l_shoulder}
    return [values.get(name, 1.0 if name in frame.buttons else 0.0) for name in CTRL_FIELDS]


def macro_rows(action_set: ActionSet, name: str) -> np.ndarray:
    return np.array([expected_row(f) for f in action_set.actions[action_set.index(name)].frames], np.float32)


class Link:
    """The arena's side of a UMI session with a bot running in a thread (umi.protocol messages)."""

    def __init__(self, bot: MeleeAgentBot, max_games: int = 8, lanes: int = 1, delay: int = 18):
        import socket
        import threading

        from umi import protocol

        self.protocol, self.seq = protocol, 0
        self.conn, theirs = socket.socketpair()
        self.conn.settimeout(30)
        self.thread = threading.Thread(target=bot.run, args=(theirs,), daemon=True)
        self.thread.start()
        assert protocol.recv(self.conn)["t"] == "hello"
        protocol.send(self.conn, {"t": "welcome", "delay": delay, "max_games": max_games, "lanes": lanes,
                                  "buckets": [1, 8], "info_every": 6, "warmups": 0,
                                  "timeouts": {"ready_s": 300, "act_s": 10}, "rng_seed": 0})
        assert protocol.recv(self.conn)["t"] == "ready"

    def new_games(self, *games: int) -> None:
        self.protocol.send(self.conn, {"t": "new_games", "games": [
            {"game": g, "port": 1, "character": "FOX", "opp_character": "MARTH", "stage": "FINAL_DESTINATION"}
            for g in games]})

    def end_games(self, *games: int) -> None:
        self.protocol.send(self.conn, {"t": "end_games", "games": [
            {"game": g, "result": "void", "reason": "void", "frame": 0, "stocks": [4, 4], "percent": [0, 0]}
            for g in games]})

    def step(self, games: list[int], first: list[bool], lane: int = 0, frames: np.ndarray | None = None) -> np.ndarray:
        self.seq += 1
        if frames is None:
            frames = np.zeros(len(games), FRAME)
            frames["players"]["character"] = 1  # FOX
        self.protocol.send(self.conn, self.protocol.obs(self.seq, lane, np.array(games, np.uint32),
                                                        np.array(first, bool), frames))
        msg = self.protocol.recv(self.conn)
        assert msg["t"] == "act" and msg["seq"] == self.seq, msg
        return self.protocol.act_arrays(msg, len(games))["ctrl"].copy()

    def close(self) -> None:
        self.protocol.send(self.conn, {"t": "shutdown", "reason": "test done"})
        self.thread.join(10)
        self.conn.close()


@pytest.fixture
def link_to():
    threads = torch.get_num_threads()  # the bot's setup() sets one thread for itself: give the tests theirs back
    links = []

    def make(net: DuelingDQN, action_set: str, **kw) -> Link:
        links.append(Link(MeleeAgentBot(net, ACTION_SETS[action_set]), **kw))
        return links[-1]

    yield make
    for link in links:
        link.close()
    torch.set_num_threads(threads)


@pytest.mark.parametrize("set_name", sorted(ACTION_SETS))
def test_controller_rows_are_the_action_sets_sequences_frame_by_frame(link_to, set_name):
    aset = ACTION_SETS[set_name]
    for a, action in enumerate(aset.actions):
        link = link_to(fixed_choice_model(aset.num_actions, a), set_name)
        link.new_games(1)
        again = aset.macro(a, a)  # the same decision again: its own macro, or the post-shine one after a shine
        rows = np.concatenate([link.step([1], [t == 0]) for t in range(len(action.frames) + len(again.frames))])
        want = np.array([expected_row(f) for f in action.frames + again.frames], np.float32)
        np.testing.assert_array_equal(rows, want, err_msg=f"{set_name}: {action.name}")


@pytest.mark.parametrize("k", range(5))
def test_the_paper_set_plays_the_post_shine_script_of_index_k_after_a_shine(link_to, k):
    """What the arena presses (its table, tests/arena/test_paper_actions.py) is what the bot sends."""
    aset = ACTION_SETS["untouchable-paper"]
    link = link_to(shine_unless_just_shone_model(otherwise=k), "untouchable-paper", max_games=1)
    link.new_games(1)
    macro = aset.macro_index(k, aset.index("shine"))
    n = 6 + int(aset.lengths[macro])
    rows = np.concatenate([link.step([1], [t == 0]) for t in range(n)])
    want = np.array([expected_row(f) for f in aset.macro(4, 0).frames + aset.macros[macro].frames], np.float32)
    np.testing.assert_array_equal(rows, want)
    np.testing.assert_array_equal(rows[6:, CTRL_FIELDS.index("main_y")],
                                  aset.table[macro, : n - 6, list(TABLE_COLUMNS).index("stick_y")])


def test_memory_resets_on_a_games_first_frame_and_the_bot_queues_no_delay(link_to):
    aset = ACTION_SETS["untouchable"]
    shine, noop = macro_rows(aset, "shine"), macro_rows(aset, "noop")
    link = link_to(shine_unless_just_shone_model(), "untouchable", max_games=1, delay=18)
    link.new_games(1)
    # At delay 18 the very first reply is already the model's (the arena applies the delay).
    rows = np.concatenate([link.step([1], [t == 0]) for t in range(9)])
    np.testing.assert_array_equal(rows, np.concatenate([shine, noop, shine[:2]]))
    link.end_games(1)
    link.new_games(2)  # the one slot again, its row left mid-shine with previous action 4
    np.testing.assert_array_equal(link.step([2], [True]), shine[:1])


def test_two_games_in_one_batch_keep_separate_memories(link_to):
    aset = ACTION_SETS["untouchable"]
    cycle = np.concatenate([macro_rows(aset, "shine"), macro_rows(aset, "noop")])  # 7 frames, then again
    clock = lambda t: cycle[t % len(cycle)]  # noqa: E731
    link = link_to(shine_unless_just_shone_model(), "untouchable", max_games=6, lanes=2)
    link.new_games(10)
    got = {10: [link.step([10], [True]), link.step([10], [False])]}
    link.new_games(20, 30)
    got.update({20: [], 30: []})
    for t in range(12):
        order = [20, 10] if t % 2 else [10, 20]  # games in any order in a batch
        rows = link.step(order, [t == 0 and g == 20 for g in order])
        for g, row in zip(order, rows):
            got[g].append(row[None])
        got[30].append(link.step([30], [t == 0], lane=1))  # a game of the other lane, between them
    np.testing.assert_array_equal(np.concatenate(got[10]), np.stack([clock(t) for t in range(14)]))
    for g in (20, 30):
        np.testing.assert_array_equal(np.concatenate(got[g]), np.stack([clock(t) for t in range(12)]))


def test_the_same_frames_under_another_game_handle_give_the_same_actions(link_to, games):
    """What the bot's ``deterministic = True`` promises, on real replay frames and a network whose choice
    follows them. (umi-conform 0.1.0's own determinism check feeds the second handle another fixture stream,
    ``game_id % 6`` in its ``_frames``, so a bot whose actions follow the frames fails it: README.)"""
    states = games["libmelee_test_game_1.slp"][:300]
    agent, opponent = game_ports(states[-1])[:2]
    frames = umi_frames(states, agent, opponent)
    torch.manual_seed(3)
    net = DuelingDQN(num_actions=ACTION_SETS["fight"].num_actions)  # random weights: choices follow the frames

    def play(link: Link, game: int, seq: np.ndarray) -> np.ndarray:
        link.new_games(game)
        rows = np.concatenate([link.step([game], [t == 0], frames=seq[t:t + 1]) for t in range(len(seq))])
        link.end_games(game)
        return rows

    link = link_to(net, "fight", max_games=1)
    first, again = play(link, 7, frames), play(link, 8, frames)
    np.testing.assert_array_equal(first, again)
    other = play(link, 9, frames[::-1].copy())
    assert not np.array_equal(first, other)  # the rows do depend on the frames


def test_a_model_of_an_unknown_action_set_is_refused_naming_it():
    data = model_to_bytes(DuelingDQN(num_actions=7), version=1, train_step=0, action_set="mystery")
    with pytest.raises(ValueError, match="mystery"):
        MeleeAgentBot.from_bytes(data, origin="m.safetensors")


# ---- the command line, the exported zip, and the package's own conformance test

import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import zipfile  # noqa: E402

from melee_agent.cli import main as cli  # noqa: E402
from melee_agent.rl.model import save_model  # noqa: E402

BIN = Path(sys.executable).parent  # the venv's melee-agent and umi-conform


def conform(cmd: str, cwd: Path) -> str:
    """`umi-conform` as the README runs it less ``--realtime``; returns its report (the test fails on any FAIL).

    The reply times are measured and reported either way; ``--realtime`` would fail a p99 over one frame, which on
    this shared 2-core machine under other load is the machine's (p99 56 ms seen beside a training run), not the
    bot's: speed is measured, not asserted in tests (the README's figures are a ``--realtime`` run).
    """
    r = subprocess.run([str(BIN / "umi-conform"), "--cmd", cmd, "--delay", "18", "--characters", "FOX"],
                       cwd=cwd, capture_output=True, text=True, timeout=600)
    report = r.stdout + r.stderr
    print(report)
    assert r.returncode == 0 and "PASSED" in report and not re.search(r"^FAIL", report, re.M), report
    return report


@pytest.fixture(scope="module")
def model_files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("models")
    torch.manual_seed(0)
    every_frame = DuelingDQN(num_actions=5)
    with torch.no_grad():
        every_frame.advantage[2].bias[0] += 10.0  # mostly noop, a 1-frame macro: the network runs every frame
    save_model(d / "untouchable.safetensors", every_frame, version=3, train_step=0, action_set="untouchable")
    torch.manual_seed(1)
    save_model(d / "basic.safetensors", DuelingDQN(num_actions=30), version=1, train_step=0, action_set="basic")
    (d / "junk.safetensors").write_bytes(b"not a model")
    return {p.stem: p for p in d.iterdir()}


@pytest.mark.slow
def test_umi_conform_passes_melee_agent_umi(model_files, tmp_path):
    report = conform(f"{BIN / 'melee-agent'} umi --model {model_files['untouchable']}", tmp_path)
    assert re.search(r"PASS\s+reply time N=1\s+N=1: p50 [\d.]+ ms, p99 [\d.]+ ms", report), report
    assert "0 warnings" in report


@pytest.mark.slow
def test_the_exported_zip_passes_umi_conform_from_an_empty_folder(model_files, tmp_path):
    out = tmp_path / "dist" / "bot.zip"
    assert cli.main(["umi", "export", "--model", str(model_files["basic"]), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.parent.iterdir()) == ["bot.zip"]  # written whole, no temp file left
    folder = tmp_path / "unpacked"
    folder.mkdir()
    with zipfile.ZipFile(out) as z:
        names = z.namelist()
        z.extractall(folder)
    assert {"run.py", "requirements.txt", "model.safetensors"} <= set(names)
    assert (folder / "model.safetensors").read_bytes() == model_files["basic"].read_bytes()
    required = {re.match(r"[A-Za-z0-9_.-]+", line).group(0) for line in (folder / "requirements.txt").read_text().split()}
    assert required == {"umi-melee", "torch", "numpy", "safetensors", "melee"}
    # run.py plays on the melee_agent modules shipped beside it, not on this checkout's.
    where = subprocess.run([sys.executable, "-c", "import runpy, sys; sys.argv = ['run.py']; "
                            "g = runpy.run_path('run.py', run_name='not_main'); "
                            "import melee_agent.umi.bot as b; print(b.__file__); print(g['Bot'].name)"],
                           cwd=folder, capture_output=True, text=True, timeout=120)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.split()[0]).is_relative_to(folder) and where.stdout.split()[1] == "melee-agent"
    conform(f"{sys.executable} run.py", folder)


def test_bad_model_files_get_one_line_errors_naming_them(model_files, tmp_path, capsys):
    missing = tmp_path / "missing.safetensors"
    unknown = tmp_path / "mystery.safetensors"
    unknown.write_bytes(model_to_bytes(DuelingDQN(num_actions=7), version=1, train_step=0, action_set="mystery"))
    cases = [(["umi", "--model", str(missing)], "missing.safetensors"),
             (["umi", "--model", str(model_files["junk"])], "junk.safetensors: not a safetensors file"),
             (["umi", "--model", str(unknown)], "mystery"),
             (["umi"], "--policy MODEL is required"),
             (["umi", "export", "--model", str(model_files["junk"]), "--out", str(tmp_path / "b.zip")], "junk.safetensors"),
             (["umi", "export", "--model", str(missing), "--out", str(tmp_path / "b.zip")], "missing.safetensors")]
    for argv, says in cases:
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert says in err and "\n" not in err and err.startswith("melee-agent umi: error:"), (argv, err)
    assert not (tmp_path / "b.zip").exists()


def test_serving_without_a_socket_says_so(model_files, monkeypatch, capsys):
    monkeypatch.delenv("UMI_SOCKET", raising=False)
    assert cli.main(["umi", "--model", str(model_files["untouchable"])]) == 2
    assert "UMI_SOCKET" in capsys.readouterr().err


@pytest.mark.parametrize("trained, session, warned", [(0, 18, True), (18, 18, False), (None, 18, False)])
def test_the_bot_warns_when_the_session_plays_another_delay_than_the_model_trained_at(link_to, capsys, trained,
                                                                                      session, warned):
    data = model_to_bytes(DuelingDQN(num_actions=5), version=2, train_step=0, action_set="untouchable",
                          delay_frames=trained)
    bot = MeleeAgentBot.from_bytes(data)
    assert bot.trained_delay == trained
    link = Link(bot, max_games=1, delay=session)
    link.close()
    err = capsys.readouterr().err
    assert ("trained with 0 frames of input delay and the session plays 18" in err) is warned, err
    assert "delay 18 (applied by the arena)" in err


def test_the_exported_zip_says_the_delay_the_model_trained_at(tmp_path):
    from melee_agent.umi.export import export_zip

    model = tmp_path / "d18.safetensors"
    model.write_bytes(model_to_bytes(DuelingDQN(num_actions=5), version=3, train_step=0, action_set="untouchable",
                                     delay_frames=18))
    info = export_zip(model, tmp_path / "bot.zip")
    assert info["delay_frames"] == 18
    with zipfile.ZipFile(tmp_path / "bot.zip") as z:
        assert "trained at 18 frames of input delay" in z.read("run.py").decode()
