"""manager/checkpoint_files.py: checkpoint files verified on load, the last few kept."""

from __future__ import annotations

import pytest

from melee_agent.manager import checkpoint_files as checkpoints
from melee_agent.manager.checkpoint_files import list_checkpoints, load_checkpoint, newest_valid, save_checkpoint
from tests.examples_kit import examples_failed


def test_module_examples_run():
    assert examples_failed(checkpoints) == 0

def test_checkpoint_cut_short_is_never_loaded_and_the_previous_one_is_used(tmp_path, caplog):
    save_checkpoint(tmp_path, {"train_steps": 100}, 100, keep=3)
    save_checkpoint(tmp_path, {"train_steps": 200}, 200, keep=3)
    newest = list_checkpoints(tmp_path)[-1]
    data = newest.read_bytes()
    newest.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="damaged or cut short"):
        load_checkpoint(newest)
    path, state = newest_valid(tmp_path)
    assert state["train_steps"] == 100 and path.name == "ckpt-000000100.pt"
    assert "falling back to the previous checkpoint" in caplog.text
    # Set aside, so newer checkpoints with lower step numbers are not pruned in its place.
    assert [p.name for p in list_checkpoints(tmp_path)] == ["ckpt-000000100.pt"]
    assert (tmp_path / "checkpoints" / "ckpt-000000200.pt.damaged").exists()
    flipped = bytearray(data)
    flipped[-10] ^= 0xFF
    newest.write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match="sha256"):
        load_checkpoint(newest)


def test_checkpoints_keep_the_last_few(tmp_path):
    for step in (1, 2, 3, 4, 5):
        save_checkpoint(tmp_path, {"train_steps": step}, step, keep=3)
    assert [p.name for p in list_checkpoints(tmp_path)] == [f"ckpt-{s:09d}.pt" for s in (3, 4, 5)]
    assert not list(tmp_path.glob("checkpoints/.*.tmp"))
