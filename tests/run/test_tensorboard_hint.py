"""`train` tells the user to run the tensorboard installed beside its own Python (`.venv/bin/tensorboard`): the
venv's bin folder is often not on the PATH, so a bare `tensorboard` would not be found."""

import sys
from pathlib import Path

from melee_agent.run.training import tensorboard_command


def test_the_hint_names_the_tensorboard_beside_this_python(monkeypatch, tmp_path):
    venv_bin = tmp_path / ".venv" / "bin"
    monkeypatch.setattr(sys, "executable", str(venv_bin / "python"))
    monkeypatch.chdir(tmp_path)
    assert tensorboard_command() == str(Path(".venv") / "bin" / "tensorboard")


def test_outside_the_working_folder_the_hint_is_the_whole_path(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "executable", "/opt/env/bin/python")
    monkeypatch.chdir(tmp_path)
    assert tensorboard_command() == str(Path("/opt/env/bin/tensorboard"))
