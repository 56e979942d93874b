"""Outputs the CLI is asked to write are checked before any work: never over the command's own input, never
a folder or an empty name, and a failed write names the file asked for, in one line. Also a `--device`
that is not here."""

from __future__ import annotations

import shutil
import stat

import pytest
import torch

from melee_agent.cli.main import main
from melee_agent.io import files
from melee_agent.io.files import atomic_output, atomic_write_bytes, atomic_write_json, cannot_write
from melee_agent.rl.model import DuelingDQN, save_model
from tests.replays_kit import replay_path


def _run(capsys, *argv: str) -> tuple[int, str]:
    rc = main(list(argv))
    return rc, capsys.readouterr().err


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "m.safetensors"
    save_model(path, DuelingDQN(num_actions=46), version=1, train_step=0, action_set="fight")
    return path


def test_an_output_over_the_commands_own_input_is_refused_and_the_input_kept(tmp_path, capsys, model):
    before = model.read_bytes()
    zipped = model.with_name("m.zip")  # umi export takes only a .zip --out: a model so named is its input
    zipped.write_bytes(before)
    rc, err = _run(capsys, "umi", "export", "--policy", str(zipped), "--out", str(zipped))
    assert rc == 2 and "--out" in err and "is also what this command reads" in err
    assert zipped.read_bytes() == before
    rc, err = _run(capsys, "eval", "--policy", str(model), "--config", "fight", "--episodes", "1", "--cpu-level", "1",
                   "--json", str(model))
    assert rc == 2 and "--json" in err and "would destroy it" in err
    assert model.read_bytes() == before
    replay = tmp_path / "game.slp"
    shutil.copy(replay_path("libmelee_test_game_1.slp"), replay)
    rc, err = _run(capsys, "fidelity", str(replay), "--json", str(replay))
    assert rc == 2 and "would destroy it" in err
    assert replay.read_bytes() == replay_path("libmelee_test_game_1.slp").read_bytes()


def test_compare_will_not_write_over_a_runs_report(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "eval.json").write_text("{}")
    rc, err = _run(capsys, "compare", str(run), str(run), "--json", str(run / "eval.json"))
    assert rc == 2 and "would destroy it" in err and (run / "eval.json").read_text() == "{}"


@pytest.mark.parametrize(("out", "why"), [("", "an empty file name"), (".", "is a folder"),
                                          ("afile/x.json", "is not a folder")])
def test_an_output_that_cannot_be_a_file_is_named_before_any_work(tmp_path, capsys, monkeypatch, out, why):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    rc, err = _run(capsys, "fidelity", str(replay_path("libmelee_test_game_1.slp")), "--json", out)
    assert rc == 2 and why in err and f"--json {out!r}" in err
    assert "Traceback" not in err and "replay(s) read" not in capsys.readouterr().out  # refused before reading


def test_a_failed_write_names_the_file_asked_for_not_its_temp(tmp_path):
    (tmp_path / "afile").write_text("x")
    target = tmp_path / "afile" / "out.json"
    with pytest.raises(OSError) as e:
        atomic_write_json(target, {"a": 1})
    assert f"cannot write {target}" in str(e.value) and ".tmp" not in str(e.value)
    with pytest.raises(IsADirectoryError, match="it is a folder"):
        atomic_write_bytes(tmp_path, b"x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]  # no temp left


def test_written_files_get_the_usual_permissions_not_mkstemps_private_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "_UMASK", 0o022)  # the process's umask, read once at import
    atomic_write_json(tmp_path / "r.json", {})
    with atomic_output(tmp_path / "v.gif") as tmp:
        tmp.write_bytes(b"GIF89a")
    assert [stat.S_IMODE((tmp_path / n).stat().st_mode) for n in ("r.json", "v.gif")] == [0o644, 0o644]


def test_an_unwritable_output_at_run_time_is_one_line(tmp_path, capsys, monkeypatch):
    """A write that fails after the check (the disk fills, the folder goes) is an OSError naming the file."""
    import melee_agent.cli.fidelity as fidelity_cli

    def fail(path, obj):
        raise cannot_write(path, PermissionError(13, "Permission denied"))

    monkeypatch.setattr(fidelity_cli, "atomic_write_json", fail)
    rc, err = _run(capsys, "fidelity", str(replay_path("libmelee_test_game_1.slp")), "--json", str(tmp_path / "f.json"))
    assert rc == 2 and err.count("\n") == 1 and f"cannot write {tmp_path / 'f.json'}" in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA GPU is here: --device cuda is available")
def test_a_device_that_is_not_here_is_refused_before_any_work(capsys):
    rc, err = _run(capsys, "eval", "--device", "cuda", "--episodes", "1")
    assert rc == 2 and "--device cuda: CUDA is not available" in err and "Traceback" not in err


def test_a_check_device_that_is_not_a_device_is_refused_before_the_run_starts(capsys, tmp_path):
    """`train.check_device` is checked with --device's rules before the manager starts (no run folder)."""
    run_dir = tmp_path / "run"
    rc, err = _run(capsys, "train", "--set", "train.check_device=gpu0", "--run-dir", str(run_dir), "--no-progress")
    assert rc == 2 and "train.check_device gpu0: not a torch device" in err and "Traceback" not in err
    if not torch.cuda.is_available():
        rc, err = _run(capsys, "train", "--set", "train.check_device=cuda", "--run-dir", str(run_dir))
        assert rc == 2 and "train.check_device cuda: CUDA is not available" in err
    assert not run_dir.exists()


def test_an_oserror_that_names_no_file_keeps_its_traceback(capsys, monkeypatch):
    """A broken pipe or too many open files says nothing in one line; its traceback says where it came from."""
    import melee_agent.cli.fidelity as fidelity_cli

    def broken(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(fidelity_cli, "run", broken)
    with pytest.raises(BrokenPipeError):
        main(["fidelity", "x.slp"])


def test_a_scripted_policys_name_is_not_a_file_to_protect(tmp_path, capsys, monkeypatch):
    """`eval --policy random --json random` twice: the second time the file "random" is the first run's output."""
    import melee_agent.cli.eval as eval_cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "random").write_text("{}")
    monkeypatch.setattr(eval_cli, "run", lambda args: 0)
    assert main(["eval", "--policy", "random", "--json", "random"]) == 0


def test_two_outputs_on_one_file_are_refused(tmp_path, capsys):
    rc, err = _run(capsys, "eval", "--cpu-level", "1,2", "--json", str(tmp_path / "x"), "--plot", str(tmp_path / "x"))
    assert rc == 2 and "is also the --json output" in err


def test_bench_learns_run_count_is_not_a_run_folder(tmp_path, capsys, monkeypatch):
    """`bench learn --runs 2` is a count; compare's RUN arguments are folders (a review caught a TypeError)."""
    import melee_agent.benchmarks.learn as bench_learn

    monkeypatch.chdir(tmp_path)
    seen = []
    monkeypatch.setattr(bench_learn, "run", lambda args: seen.append(args.runs) or {"runs": args.runs})
    assert main(["bench", "learn", "--runs", "2", "--json", "bench-learn.json"]) == 0 and seen == [2]
    assert (tmp_path / "bench-learn.json").read_text().strip().startswith("{")
