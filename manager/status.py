"""The manager's status (``GET /v1/status``) as one typed record, and its TensorBoard scalars.

:class:`ManagerStatus` is built by the trainer, sent by the server with :meth:`~ManagerStatus.to_json`
and read back by clients (``ManagerClient.status()``) with :meth:`~ManagerStatus.from_json`, which
names a field that is missing or of the wrong type.

Example::

    >>> st = ManagerStatus(replay_size=10, replay_capacity=100, replay_staged=0, rows_accepted=10,
    ...     rows_ingested=10, batches_accepted=1, duplicates_refused=0, queue_batches=0, train_steps=0,
    ...     model_version=0, model_sha256="ab", ingest_rows_per_s=1.0, train_steps_per_s=0.0,
    ...     workers_active=1, worker_frames_per_s=60.0, burn_in=50, training=False, resumed_from=None,
    ...     error=None)
    >>> ManagerStatus.from_json(st.to_json()) == st
    True
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import get_args, get_type_hints


@dataclass(frozen=True)
class ManagerStatus:
    replay_size: int
    replay_capacity: int
    replay_staged: int  # rows waiting on the host for a full block
    rows_accepted: int  # recorded in the upload ledger
    rows_ingested: int  # written into the replay
    batches_accepted: int
    duplicates_refused: int
    queue_batches: int
    train_steps: int
    model_version: int
    model_sha256: str
    ingest_rows_per_s: float
    train_steps_per_s: float
    workers_active: int
    worker_frames_per_s: float
    burn_in: int
    training: bool
    resumed_from: str | None
    error: str | None  # the training thread's error, if it stopped

    def to_json(self) -> dict[str, int | float | str | bool | None]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: object) -> ManagerStatus:
        """Read what :meth:`to_json` wrote (fields it does not know are ignored: a newer manager)."""
        if not isinstance(d, dict):
            raise ValueError(f"manager status: not a JSON object but {type(d).__name__}")
        hints = get_type_hints(cls)
        values = {}
        for f in fields(cls):
            if f.name not in d:
                raise ValueError(f"manager status: field {f.name!r} is missing")
            v, kinds = d[f.name], get_args(hints[f.name]) or (hints[f.name],)
            if float in kinds and isinstance(v, int) and not isinstance(v, bool):
                v = float(v)  # JSON writes 2.0 as 2
            if not any(type(v) is k or (k is type(None) and v is None) for k in kinds):
                raise ValueError(f"manager status: field {f.name!r} is {v!r}, not {_name(hints[f.name])}")
            values[f.name] = v
        return cls(**values)

    def scalars(self) -> dict[str, float]:
        """The TensorBoard scalars the manager logs every couple of seconds."""
        return {
            "replay/size": self.replay_size, "replay/fill": self.replay_size / self.replay_capacity,
            "ingest/rows_per_s": self.ingest_rows_per_s, "train/steps_per_s": self.train_steps_per_s,
            "model/version": self.model_version, "workers/active": self.workers_active,
            "workers/frames_per_s": self.worker_frames_per_s,
            "uploads/batches": self.batches_accepted, "uploads/rows": self.rows_accepted,
            "uploads/duplicates_refused": self.duplicates_refused,
        }


def _name(hint: object) -> str:
    return " or ".join(getattr(k, "__name__", str(k)) for k in (get_args(hint) or (hint,)))


