"""manager/status.py: the GET /v1/status payload, one type on both sides of the wire."""

from __future__ import annotations

import pytest

from melee_agent.manager import status
from melee_agent.manager.status import ManagerStatus
from tests.examples_kit import examples_failed


def _status(**kw) -> ManagerStatus:
    base = dict(replay_size=10, replay_capacity=100, replay_staged=0, rows_accepted=10, rows_ingested=10,
                batches_accepted=1, duplicates_refused=0, queue_batches=0, train_steps=3, model_version=1,
                model_sha256="ab", ingest_rows_per_s=1.5, train_steps_per_s=0.0, workers_active=1,
                worker_frames_per_s=60.0, burn_in=50, training=True, resumed_from=None, error=None)
    return ManagerStatus(**{**base, **kw})


def test_module_example_runs():
    assert examples_failed(status) == 0


def test_status_round_trips_and_reads_json_numbers_and_newer_fields():
    st = _status(resumed_from="ckpt-000000040.pt")
    assert ManagerStatus.from_json(st.to_json()) == st
    assert ManagerStatus.from_json({**st.to_json(), "train_steps_per_s": 2, "new_field": 1}).train_steps_per_s == 2.0
    assert st.scalars()["replay/fill"] == 0.1


@pytest.mark.parametrize("change, message", [
    ({"train_steps": None}, "'train_steps' is None, not int"),
    ({"training": 1}, "'training' is 1, not bool"),
    ({"error": 3}, "'error' is 3, not str or NoneType"),
])
def test_a_wrong_field_is_named(change, message):
    with pytest.raises(ValueError, match=message):
        ManagerStatus.from_json({**_status().to_json(), **change})
    d = _status().to_json()
    del d["model_sha256"]
    with pytest.raises(ValueError, match="'model_sha256' is missing"):
        ManagerStatus.from_json(d)
