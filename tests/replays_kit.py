"""The real Slippi replays beside the repository (``../shared/replays``): a test asks for one by name and skips,
saying why, where it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
REPLAY_DIR = REPO.parent / "shared" / "replays"
#: Replays libmelee 0.47 reads to the end (see ../shared/replays/README.md).
READABLE_REPLAYS = (
    "libmelee_test_game_1.slp",
    "slippijs_lCancel.slp",
    "pyslippi_game.slp",
    "peppi_v3.13.slp",
)
BROKEN_REPLAYS = (
    "libmelee_corrupt_game_1.slp",
    "libmelee_corrupt_game_2.slp",
    "libmelee_corrupt_game_3.slp",
    "pyslippi_v0.1.slp",
)


def replay_path(name: str) -> Path:
    if not REPLAY_DIR.is_dir():
        pytest.skip(f"real replays not found: {REPLAY_DIR} is absent (CI has ../shared beside the repo)")
    path = REPLAY_DIR / name
    if not path.exists():
        pytest.skip(f"replay {path} is absent")
    return path
