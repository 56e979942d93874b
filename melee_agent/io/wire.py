"""Experience batches on the wire: safetensors bytes, decoded straight into numpy and validated.

A batch is a safetensors file with tensor ``rows`` [n, 57] float32 (optional ``priority`` [n]
float32) and metadata ``schema=melee-agent/experience/1``, ``state_layout``, ``action_set``,
``worker_id``, ``batch_seq``, ``model_version`` and ``stats`` (JSON episode statistics).
Never pickle. ``decode_experience`` checks everything before anything is stored and raises
:class:`WireError` with an HTTP status and a message that names the problem.

Example::

    >>> import numpy as np
    >>> rows = np.zeros((4, 57), np.float32); rows[:, 29] = 0.99
    >>> data = encode_experience(rows, action_set="untouchable", worker_id="w0", batch_seq=0, model_version=3)
    >>> exp = decode_experience(data, action_set="untouchable", num_actions=5, max_rows=100)
    >>> exp.rows.shape, exp.meta["model_version"]
    ((4, 57), '3')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from melee_agent.rl.rows import columns
from melee_agent.io.safetensors_header import HeaderError, read_header
from melee_agent.io.segment_stats import SegmentStats
from melee_agent.envs.state import STATE_LAYOUT, get_layout

EXPERIENCE_SCHEMA = "melee-agent/experience/1"
MAX_WORKER_ID = 200  # the manager remembers (worker_id, batch_seq) for every accepted batch


class WireError(ValueError):
    """A batch that cannot be accepted; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Experience:
    rows: np.ndarray  # [n, 57] float32
    priority: np.ndarray | None
    meta: dict[str, str]
    stats: SegmentStats = field(default_factory=SegmentStats)


def encode_experience(rows: np.ndarray, *, action_set: str, worker_id: str, batch_seq: int, model_version: int,
                      stats: SegmentStats | None = None, priority: np.ndarray | None = None,
                      state_layout: str = STATE_LAYOUT) -> bytes:
    from safetensors.numpy import save  # noqa: PLC0415

    tensors = {"rows": np.ascontiguousarray(rows, dtype=np.float32)}
    if priority is not None:
        tensors["priority"] = np.ascontiguousarray(priority, dtype=np.float32).reshape(-1)
    meta = {"schema": EXPERIENCE_SCHEMA, "state_layout": state_layout, "action_set": action_set,
            "worker_id": str(worker_id), "batch_seq": str(int(batch_seq)), "model_version": str(int(model_version)),
            "stats": (stats or SegmentStats()).to_json()}
    return save(tensors, metadata=meta)


def _header(data: bytes) -> dict[str, Any]:
    try:
        return read_header(data)
    except HeaderError as e:
        raise WireError(400, str(e)) from None


def decode_experience(data: bytes, *, action_set: str, num_actions: int, max_rows: int,
                      state_layout: str = STATE_LAYOUT) -> Experience:
    """Parse and validate one batch; raises :class:`WireError` naming the first problem found."""
    if not data:
        raise WireError(400, "empty body: expected a safetensors experience batch")
    header = _header(data)
    meta = header.get("__metadata__") or {}
    if meta.get("schema") != EXPERIENCE_SCHEMA:
        raise WireError(400, f"schema is {meta.get('schema')!r}, expected {EXPERIENCE_SCHEMA!r}")
    if meta.get("state_layout") != state_layout:
        raise WireError(409, f"state_layout is {meta.get('state_layout')!r}, this manager trains on {state_layout!r}")
    if meta.get("action_set") != action_set:
        raise WireError(409, f"action_set is {meta.get('action_set')!r}, this manager trains on {action_set!r}")
    cols = columns(get_layout(state_layout).dim)  # the rows' width follows the state layout's
    info = header.get("rows")
    if not isinstance(info, dict):
        raise WireError(400, "no tensor named 'rows' in the batch")
    extra = set(header) - {"rows", "priority", "__metadata__"}
    if extra:
        raise WireError(400, f"unexpected tensors {sorted(extra)}: a batch holds 'rows' and optional 'priority'")
    shape = info.get("shape")
    if info.get("dtype") != "F32":
        raise WireError(400, f"rows dtype is {info.get('dtype')}, expected F32 (float32)")
    if not (isinstance(shape, list) and len(shape) == 2 and shape[1] == cols.width):
        raise WireError(400, f"rows shape is {shape}, expected [n, {cols.width}] (state layout {state_layout!r})")
    n = int(shape[0])
    if n == 0:
        raise WireError(400, "rows is empty")
    if n > max_rows:
        raise WireError(413, f"{n} rows in one batch; the limit is {max_rows}")
    if "priority" in header:
        p = header["priority"]
        if p.get("dtype") != "F32" or p.get("shape") != [n]:
            raise WireError(400, f"priority must be float32 [{n}], got {p.get('dtype')} {p.get('shape')}")
    try:
        from safetensors.numpy import load  # noqa: PLC0415

        tensors = load(data)
    except Exception as e:  # noqa: BLE001 (safetensors' own error types)
        raise WireError(400, f"not a valid safetensors file ({type(e).__name__}: {e})") from None
    rows = tensors["rows"]
    if not np.isfinite(rows).all():
        bad = int(np.argwhere(~np.isfinite(rows))[0][0])
        raise WireError(400, f"rows hold non-finite values (first at row {bad})")
    act = rows[:, cols.action]
    if (act < 0).any() or (act >= num_actions).any() or (act != np.floor(act)).any():
        bad = int(np.argmax((act < 0) | (act >= num_actions) | (act != np.floor(act))))
        raise WireError(400, f"action out of range [0, {num_actions}) or not an integer at row {bad}: {act[bad]}")
    disc = rows[:, cols.discount]
    if (disc < 0).any() or (disc > 1).any():
        bad = int(np.argmax((disc < 0) | (disc > 1)))
        raise WireError(400, f"discount outside [0, 1] at row {bad}: {disc[bad]}")
    priority = tensors.get("priority")
    if priority is not None and (not np.isfinite(priority).all() or (priority < 0).any()):
        raise WireError(400, "priority must be finite and >= 0")
    try:
        stats = SegmentStats.from_json(meta.get("stats"))
    except ValueError as e:
        raise WireError(400, f"metadata {e}") from None
    for key in ("batch_seq", "model_version"):
        try:
            value = int(meta.get(key, "0"))
        except ValueError:
            raise WireError(400, f"metadata {key!r} is not an integer: {meta.get(key)!r}") from None
        if key == "batch_seq" and not 0 <= value < 2**63:
            raise WireError(400, f"metadata 'batch_seq' must be in [0, 2^63), got {value}")
    if len(str(meta.get("worker_id", ""))) > MAX_WORKER_ID:
        raise WireError(400, f"metadata 'worker_id' is longer than {MAX_WORKER_ID} characters")
    return Experience(rows=rows, priority=priority, meta=dict(meta), stats=stats)
