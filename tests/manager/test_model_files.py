"""manager/model_files.py: published model files verify themselves; a damaged one is skipped."""

from __future__ import annotations

from melee_agent.manager import model_files as published
from melee_agent.manager.model_files import newest_valid_model, stored_models, write_published
from tests.manager_kit import model_bytes
from tests.examples_kit import examples_failed


def test_module_examples_run():
    assert examples_failed(published) == 0

def test_published_models_verify_themselves_and_a_damaged_one_is_skipped(tmp_path):
    for v in (1, 2, 3, 4):
        write_published(tmp_path, model_bytes(v, seed=v), v, keep=3)
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == [f"model-v00000{v}.safetensors" for v in (2, 3, 4)]
    assert newest_valid_model(tmp_path, "untouchable").version == 4
    # Damage the newest two copies (the numbered one and model.safetensors): v3 is the newest that verifies.
    for p in (tmp_path / "models" / "model-v000004.safetensors", tmp_path / "model.safetensors"):
        b = bytearray(p.read_bytes())
        b[-20] ^= 0x01
        p.write_bytes(bytes(b))
    found = stored_models(tmp_path, "untouchable")
    assert [m.version for m in found] == [3, 2]
