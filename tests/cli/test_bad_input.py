"""Bad input that once gave a traceback, a loop or a message naming nothing (a helper's audit of the CLI):
each is one line naming the flag or the file, exit 2, before any work."""

from __future__ import annotations

import shutil

import pytest

from melee_agent.cli.main import main
from tests.replays_kit import replay_path


def _err(capsys, *argv: str) -> tuple[int, str]:
    rc = main(list(argv))
    return rc, capsys.readouterr().err


def test_a_text_file_as_a_model_names_the_file(tmp_path, capsys):
    junk = tmp_path / "text.safetensors"
    junk.write_text("hello\n")
    rc, err = _err(capsys, "eval", "--policy", str(junk), "--episodes", "1", "--cpu-level", "1")
    assert rc == 2 and f"{junk}: not a safetensors file" in err and err.count("\n") == 1


def test_a_binary_file_as_a_config_or_a_token_is_named_as_not_text(tmp_path, capsys):
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"\x00\xaf\xff\xfe" * 8)
    rc, err = _err(capsys, "eval", "--config", str(blob), "--episodes", "1")
    assert rc == 2 and f"{blob}: not a config" in err and "codec" not in err
    rc, err = _err(capsys, "manager", "--token-file", str(blob))
    assert rc == 2 and "--token-file" in err and "not a text file" in err
    rc, err = _err(capsys, "manager", "--token-file", str(tmp_path))
    assert rc == 2 and "a folder, not a file" in err


def test_fidelity_names_a_folder_and_reads_a_file_given_twice_once(tmp_path, capsys):
    game = tmp_path / "game.slp"
    shutil.copy(replay_path("libmelee_test_game_1.slp"), game)
    rc = main(["fidelity", str(tmp_path), str(game), str(tmp_path / "." / "game.slp")])
    out, err = capsys.readouterr()
    assert rc == 0 and "1 replay(s) read, 2 skipped; 7 Fox/Marth hits" in out
    assert f"{tmp_path}: a folder, not a replay file" in err and "the same file as" in err


def test_eval_plot_must_be_a_png(capsys):
    rc, err = _err(capsys, "eval", "--plot", "levels.txt", "--cpu-level", "1,2", "--episodes", "1")
    assert rc == 2 and "--plot levels.txt: the plot is a PNG" in err


def test_compare_names_an_ignored_setting_no_run_has(tmp_path, capsys):
    from melee_agent.config import load_config, save_resolved_config
    from melee_agent.io.files import atomic_write_json
    from tests.run_reports import check, fight_result, report

    run = tmp_path / "run"
    save_resolved_config(load_config("fight"), run)
    atomic_write_json(run / "eval.json", report(check(fight_result(1.0)), [check(fight_result(1.0))]).to_json())
    rc, err = _err(capsys, "compare", str(run), "--ignore", "learner.lrr")
    assert rc == 2 and "--ignore learner.lrr: no run has such a setting" in err


@pytest.mark.parametrize("kind", ["missing", "a plain file"])
def test_umi_names_a_socket_it_cannot_connect_to(tmp_path, capsys, kind):
    from melee_agent.rl.model import DuelingDQN, save_model

    model = tmp_path / "m.safetensors"
    save_model(model, DuelingDQN(num_actions=46), version=1, train_step=0, action_set="fight")
    sock = tmp_path / "arena.sock"
    if kind == "a plain file":
        sock.write_text("")
    rc, err = _err(capsys, "umi", "--model", str(model), "--socket", str(sock))
    assert rc == 2 and f"--socket {sock}: cannot connect to the arena" in err and "Traceback" not in err


def test_a_manager_on_a_busy_port_says_so_and_leaves_no_run_behind(tmp_path, capsys):
    """Before: 'address already in use' from uvicorn, after the run folder was made; running again on that
    folder was then refused as 'already holds a run'."""
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        rc, err = _err(capsys, "manager", "--port", str(port), "--run-dir", str(tmp_path / "run"))
    assert rc == 2 and f"--port {port}: cannot listen on 127.0.0.1:{port}" in err
    assert not (tmp_path / "run").exists()
    rc, err = _err(capsys, "manager", "--host", "no-such-host.invalid", "--run-dir", str(tmp_path / "run"))
    assert rc == 2 and "--host no-such-host.invalid: not a name or address" in err and not (tmp_path / "run").exists()


def test_running_out_of_memory_is_one_line_and_other_errors_are_not_hidden(capsys, monkeypatch):
    import melee_agent.cli.fidelity as fidelity_cli

    def oom(args):
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't allocate memory: you "
                           "tried to allocate 800000000000 bytes")

    monkeypatch.setattr(fidelity_cli, "run", oom)
    rc, err = _err(capsys, "fidelity", "x.slp")
    assert rc == 2 and err.count("\n") == 1 and "out of memory" in err and "--episodes" in err

    def bug(args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(fidelity_cli, "run", bug)
    with pytest.raises(RuntimeError, match="a bug"):
        main(["fidelity", "x.slp"])


def test_a_file_as_the_workers_spool_folder_is_named(tmp_path, capsys):
    taken = tmp_path / "m.safetensors"
    taken.write_text("x")
    rc, err = _err(capsys, "worker", "--manager", "http://127.0.0.1:9", "--spool-dir", str(taken))
    assert rc == 2 and f"--spool-dir {taken}: a file, not a folder" in err and taken.read_text() == "x"
