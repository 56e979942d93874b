"""manager/checkpoint_contents.py: one writer, one reader; a missing or wrong field is named."""

from __future__ import annotations

import pytest
import torch

from melee_agent.config import load_config
from melee_agent.rl.learner import Learner
from melee_agent.manager.checkpoint_contents import Checkpointer, TrainerCheckpoint, load_newest
from melee_agent.manager.checkpoint_files import save_checkpoint
from melee_agent.manager.ledger import LedgerSnapshot, UploadLedger
from melee_agent.manager.trainer import make_replay


def _learner() -> Learner:
    cfg = load_config("small")
    return Learner.from_config(make_replay(cfg.replay, torch.device("cpu")), 5, torch.device("cpu"), cfg.learner)


def test_a_checkpoint_is_read_back_as_it_was_written_and_prunes_the_ledger(tmp_path):
    ledger = UploadLedger(tmp_path)
    ledger.record("w0", 0, 100)
    ck = Checkpointer(tmp_path, ledger, keep=2)
    learner = _learner()
    for _ in range(3):
        ck.write(learner, rows_ingested=100, model_version=7, config_name="small")
    path, got = load_newest(tmp_path, torch.device("cpu"))
    assert (got.rows_ingested, got.rows_accepted, got.model_version, got.config_name) == (100, 100, 7, "small")
    assert got.ledger.rows == 100 and got.ledger.workers == {"w0": (1, [])}
    assert len(ck.gens) == 2 and ledger.generations()[0] == ck.gens[0]  # older ledger files pruned
    fresh = _learner()
    fresh.load_state_dict(got.learner_state)
    assert all(torch.equal(a, b) for a, b in zip(fresh.online.state_dict().values(),
                                                  learner.online.state_dict().values()))


def test_a_checkpoint_written_as_a_plain_mapping_by_the_earlier_trainer_still_loads(tmp_path):
    learner = _learner()
    snapshot = {"gen": 2, "rows": 300, "batches": 3, "duplicates": 1, "workers": {"w0": [3, [5]]}}
    save_checkpoint(tmp_path, {**learner.state_dict(), "rows_ingested": 300, "rows_accepted": 300,
                               "model_version": 4, "config_name": "small", "ledger": snapshot}, 0, keep=3)
    _, got = load_newest(tmp_path, torch.device("cpu"))
    assert got.model_version == 4 and got.ledger == LedgerSnapshot(2, 300, 3, 1, {"w0": (3, [5])})
    assert got.ledger.to_dict() == snapshot


@pytest.mark.parametrize("broken, message", [
    (lambda s: s.pop("model_version"), "field 'model_version' is missing"),
    (lambda s: s.update(rows_ingested="12"), "field 'rows_ingested' is a str, not a int"),
    (lambda s: s.pop("optimizer"), "field 'optimizer' is missing"),
    (lambda s: s["ledger"].pop("gen"), "field 'ledger'.*'gen'"),
])
def test_a_missing_or_wrong_field_is_named(tmp_path, broken, message):
    state = TrainerCheckpoint({}, {}, {}, 1, 2, 3, 4, "small", LedgerSnapshot(1, 0, 0, 0, {})).to_state()
    broken(state)
    with pytest.raises(ValueError, match=message):
        TrainerCheckpoint.from_state(state)
