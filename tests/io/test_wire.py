"""Experience batches on the wire: round trip, and every kind of bad input named with its status."""

from __future__ import annotations

import numpy as np
import pytest
from safetensors.numpy import save

from melee_agent.rl.rows import ACTION, DISCOUNT
from melee_agent.io.segment_stats import SegmentStats
from melee_agent.io.wire import EXPERIENCE_SCHEMA, WireError, decode_experience, encode_experience


def rows(n: int = 10, seed: int = 0) -> np.ndarray:
    r = np.random.default_rng(seed).random((n, 57), dtype=np.float32)
    r[:, ACTION] = np.arange(n) % 5
    r[:, DISCOUNT] = 0.97
    return r


def dec(data: bytes, **kw):
    return decode_experience(data, **{"action_set": "untouchable", "num_actions": 5, "max_rows": 1000, **kw})


def test_round_trip_keeps_rows_priority_and_stats():
    r = rows()
    data = encode_experience(r, action_set="untouchable", worker_id="w3", batch_seq=7, model_version=2,
                             stats=SegmentStats(episodes=2, return_sum=1.5), priority=np.ones(10, np.float32))
    exp = dec(data)
    assert np.array_equal(exp.rows, r) and exp.rows.dtype == np.float32
    assert exp.priority is not None and exp.priority.shape == (10,)
    assert exp.meta["worker_id"] == "w3" and exp.meta["batch_seq"] == "7" and exp.stats.episodes == 2


def _raw(tensors, **meta):
    base = {"schema": EXPERIENCE_SCHEMA, "state_layout": "untouchable-27", "action_set": "untouchable",
            "worker_id": "w", "batch_seq": "0", "model_version": "0", "stats": "{}"}
    base.update(meta)
    return save(tensors, metadata=base)


def _with(col: int, value: float) -> np.ndarray:
    r = rows()
    r[3, col] = value
    return r


@pytest.mark.parametrize("data, status, message", [
    (b"", 400, "empty body"),
    (b"hello world, not safetensors", 400, "not a safetensors file"),
    (b"\x05\x00\x00\x00\x00\x00\x00\x00{abcd", 400, "not JSON"),
    (_raw({"rows": rows()}, schema="other/1"), 400, "schema"),
    (_raw({"rows": rows()}, state_layout="other-30"), 409, "state_layout"),
    (_raw({"rows": rows()}, action_set="basic"), 409, "action_set"),
    (_raw({"rows": rows().astype(np.float64)}), 400, "dtype"),
    (_raw({"rows": rows()[:, :50]}), 400, "shape"),
    (_raw({"x": rows()}), 400, "no tensor named 'rows'"),
    (_raw({"rows": _with(5, np.nan)}), 400, "non-finite"),
    (_raw({"rows": _with(ACTION, 5.0)}), 400, "action out of range"),
    (_raw({"rows": _with(ACTION, 1.5)}), 400, "not an integer"),
    (_raw({"rows": _with(DISCOUNT, 1.5)}), 400, "discount outside"),
    (_raw({"rows": rows(2000)}), 413, "limit"),
    (_raw({"rows": rows()}, stats="[1, 2]"), 400, "stats"),
    (_raw({"rows": rows()}, stats='{"episodes": "2"}'), 400, "stats 'episodes' must be a number"),
    (_raw({"rows": rows()}, stats='{"length_sum": -1}'), 400, "stats 'length_sum' must be finite and >= 0"),
    (_raw({"rows": rows()}, stats='{"per_level": {"9": [1, 2]}}'), 400, "stats 'per_level'"),
    (_raw({"rows": rows(), "priority": np.ones(3, np.float32)}), 400, "priority"),
])
def test_bad_batches_raise_wire_errors_that_name_the_problem(data, status, message):
    with pytest.raises(WireError) as e:
        dec(data)
    assert e.value.status == status and message in e.value.message, e.value.message


def test_fight_layout_batches_are_63_wide_and_checked_against_the_manager_s_layout():
    from melee_agent.rl.rows import columns

    c = columns(30)
    r = np.random.default_rng(1).random((6, c.width), dtype=np.float32)
    r[:, c.action], r[:, c.discount] = np.arange(6) % 5, 0.0  # terminal rows: the clock is in the state
    data = encode_experience(r, action_set="untouchable", worker_id="w", batch_seq=0, model_version=0,
                             state_layout="fight-30")
    exp = dec(data, state_layout="fight-30")
    assert c.width == 63 and exp.rows.shape == (6, 63) and exp.meta["state_layout"] == "fight-30"
    with pytest.raises(WireError, match="state_layout is 'fight-30', this manager trains on 'untouchable-27'"):
        dec(data)
    narrow = _raw({"rows": rows()}, state_layout="fight-30")  # 57 wide: another layout's rows
    with pytest.raises(WireError, match=r"expected \[n, 63\] \(state layout 'fight-30'\)"):
        dec(narrow, state_layout="fight-30")
    bad = r.copy()
    bad[2, c.action] = 7.0  # the action column moves with the width
    with pytest.raises(WireError, match="action out of range"):
        dec(_raw({"rows": bad}, state_layout="fight-30"), state_layout="fight-30")
