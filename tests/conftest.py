"""Shared test fixtures for every test folder: the temp directory under the test's own folder.

The kits beside this file hold what tests import: ``replays_kit`` (the real replays), ``live_manager`` (the
manager served over real HTTP, the ``manager`` fixture of tests/manager/ and tests/workers/), ``examples_kit``,
``manager_kit``, ``fight_kit``, ``dolphin_kit``, ``recording_controller``, ``episode_ends``, ``run_reports`` (training
reports built as `train` builds them).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest


@pytest.fixture
def temp_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temp directory moved under this test's folder, so what libmelee makes there (``libmelee_*``:
    its temporary Dolphin homes) is this test's alone to count and never left in /tmp."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return temp
