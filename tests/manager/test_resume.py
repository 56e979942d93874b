"""manager/resume.py: a fresh run never writes over an earlier one; --resume continues one, from a
checkpoint or (after `kill -9` before the first checkpoint) from the published model."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from melee_agent.config import load_config
from melee_agent.manager import checkpoint_files as checkpoints, model_files as published
from melee_agent.manager.spawn import ManagerProcess, ManagerProcessError
from melee_agent.workers.client import ManagerClient
from tests.manager_kit import batch, wait_for


def test_resume_without_checkpoint_fails_clearly(tmp_path):
    from melee_agent.manager.trainer import Trainer

    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        Trainer(load_config("small"), tmp_path, resume=True)


def test_resume_with_another_network_width_names_it(tmp_path):
    from melee_agent.manager.trainer import Trainer

    Trainer(load_config("small"), tmp_path)  # publishes v0 at the config's width
    with pytest.raises(ValueError, match=r"published model .*another shape: stream 512 \(the config: 256\)"):
        Trainer(load_config("small", ["learner.stream=256"]), tmp_path, resume=True)
    assert Trainer(load_config("small"), tmp_path, resume=True).resumed_from.startswith("model")
    # A setting only the resuming config has is named too (the stored file's sizes lack it).
    with pytest.raises(ValueError, match=r"another shape: action_embed 0 \(the config: 8\)"):
        Trainer(load_config("small", ["learner.action_embed=8"]), tmp_path, resume=True)


def test_resume_of_an_empty_folder_says_there_is_nothing_to_resume(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "melee_agent.cli.main", "manager", "--config", "small", "--resume",
                           "--run-dir", str(tmp_path / "none")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "nothing to resume" in proc.stderr and "Traceback" not in proc.stderr


def _manager(run_dir, log, *extra):
    flags = ["--config", "small", "--set", "manager.burn_in=300", "--set", "manager.publish_every=20",
             "--set", "manager.checkpoint_every=1000000", "--set", "manager.max_train_per_row=1", *extra]
    return ManagerProcess(flags, run_dir, log)


@pytest.mark.slow
def test_kill_9_before_the_first_checkpoint_resumes_from_the_published_model(tmp_path):
    run_dir, log = tmp_path / "run", tmp_path / "manager.log"
    first = _manager(run_dir, log).start()
    try:
        c = ManagerClient(first.url)
        for seq in range(6):
            c.upload(batch(200, seed=seq, batch_seq=seq))
        before = wait_for(lambda: (s := c.status()).model_version >= 2 and s)
        assert not checkpoints.list_checkpoints(run_dir)
    finally:
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(30)
    published_before = published.newest_valid_model(run_dir, "untouchable").version
    assert published_before >= before.model_version
    with pytest.raises(ManagerProcessError, match="already holds a run"):
        _manager(run_dir, log).start()  # a fresh start would write over the run
    second = _manager(run_dir, log, "--resume").start()
    try:
        c = ManagerClient(second.url)
        st = c.status()
        assert st.resumed_from.startswith("model")
        assert st.model_version > published_before  # versions never go back
        assert st.rows_accepted == 1200 and st.train_steps >= published.newest_valid_model(
            run_dir, "untouchable").train_step - 1
        assert c.upload(batch(200, seed=5, batch_seq=5))["duplicate"] is True
        assert st.replay_size == 0 and not st.training  # waits for burn-in again
        assert "fresh optimizer" in log.read_text()
    finally:
        second.stop()
