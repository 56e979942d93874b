"""manager/app.py fuzzed: every endpoint over real HTTP (the manager fixture: uvicorn on loopback, token on).

Hypothesis generates requests: any method and path, any headers (a right, wrong or missing token),
and bodies that are random bytes, valid batches with broken metadata, shapes, dtypes or values,
and valid batches cut, flipped or spliced at the byte level. For every request: no 5xx, and a
request that is not accepted leaves the replay, its counters and the upload ledger exactly as
they were. An accepted one adds exactly its rows. ``FUZZ_EXAMPLES`` sets how many (default 600).
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import time

import httpx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.numpy import save as st_save

from melee_agent.rl.rows import ACTION, DISCOUNT, ROW_WIDTH
from melee_agent.io.wire import EXPERIENCE_SCHEMA

TOKEN = "fuzz-token-0123456789"
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "600"))
MAX_ROWS = 64


def quiet(trainer, timeout: float = 10.0):
    """Wait until everything accepted is in the replay, then fingerprint what a request could change."""
    deadline = time.monotonic() + timeout
    while (trainer.rows_ingested != trainer.rows_accepted or not trainer.queue.empty()
           or trainer.replay.writer.staged) and time.monotonic() < deadline:
        time.sleep(0.01)
    storage = trainer.replay.storage
    return (trainer.rows_accepted, trainer.ledger.batches, trainer.rows_ingested, storage.size, storage.cursor,
            hashlib.sha256(storage.data.numpy().tobytes()).hexdigest())


def valid_rows(n: int, seed: int) -> np.ndarray:
    r = np.random.default_rng(seed).random((n, ROW_WIDTH), dtype=np.float32)
    r[:, ACTION] = np.arange(n) % 5
    r[:, DISCOUNT] = 0.97
    return r


def base_meta(seq: int) -> dict[str, str]:
    return {"schema": EXPERIENCE_SCHEMA, "state_layout": "untouchable-27", "action_set": "untouchable",
            "worker_id": "fuzz", "batch_seq": str(seq), "model_version": "0", "stats": "{}"}


text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
header_text = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40).map(str.strip)
meta_value = st.one_of(text, st.integers(-2**70, 2**70).map(str), st.just(""),
                       st.dictionaries(text, st.integers() | text, max_size=3).map(json.dumps))


@st.composite
def structured_batch(draw, seq: int):
    """A safetensors file close to a valid batch, with some of its parts broken."""
    def sometimes() -> bool:  # each break on its own is rare, so some batches come through whole
        return draw(st.integers(0, 5)) == 0

    n = draw(st.integers(1, MAX_ROWS)) if not sometimes() else draw(st.sampled_from([0, MAX_ROWS + 1, MAX_ROWS + 8]))
    rows = valid_rows(max(n, 1), draw(st.integers(0, 2**16)))[:n]
    if sometimes() and n:
        col = draw(st.integers(0, ROW_WIDTH - 1))
        rows[draw(st.integers(0, n - 1)), col] = draw(st.sampled_from([np.nan, np.inf, -np.inf, -1.0, 1.5, 7.0, 0.5,
                                                                      1e30]))
    tensors: dict[str, np.ndarray] = {}
    shape_kind = draw(st.sampled_from(["narrow", "flat", "f64", "i32"])) if sometimes() else "ok"
    if shape_kind == "ok":
        tensors["rows"] = rows
    elif shape_kind == "narrow":
        tensors["rows"] = np.ascontiguousarray(rows[:, :-1])
    elif shape_kind == "flat":
        tensors["rows"] = rows.reshape(-1)
    elif shape_kind == "f64":
        tensors["rows"] = rows.astype(np.float64)
    else:
        tensors["rows"] = rows.astype(np.int32)
    if sometimes():
        k = draw(st.sampled_from([n, n + 1, max(n - 1, 0)]))
        pr = np.ones(k, np.float32) * draw(st.sampled_from([1.0, 0.0, -1.0, np.nan]))
        tensors["priority"] = pr if draw(st.booleans()) else pr.astype(np.float16)
    if sometimes():
        tensors[draw(st.sampled_from(["extra", "rows2", "obs"]))] = np.zeros(3, np.float32)
    if sometimes():
        del tensors["rows"]
    meta = base_meta(seq)
    for key in draw(st.lists(st.sampled_from([*meta, "other"]), max_size=3)) if sometimes() else []:
        if draw(st.booleans()):
            meta[key] = draw(meta_value)
        else:
            meta.pop(key, None)
    if not tensors:
        tensors["x"] = np.zeros(1, np.float32)
    return st_save(tensors, metadata=meta)


@st.composite
def mangled_batch(draw, seq: int):
    """A valid batch, then cut, flipped, spliced or given a wrong header length."""
    data = bytearray(st_save({"rows": valid_rows(draw(st.integers(1, 20)), 1)}, metadata=base_meta(seq)))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["cut", "flip", "splice", "hlen"]))
        if op == "cut":
            data = data[:draw(st.integers(0, len(data)))]
        elif op == "flip" and data:
            i = draw(st.integers(0, len(data) - 1))
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "splice":
            i = draw(st.integers(0, len(data)))
            data[i:i] = draw(st.binary(max_size=64))
        elif op == "hlen":
            data[:8] = struct.pack("<Q", draw(st.integers(0, 2**64 - 1)))
    return bytes(data)


def auth_header(draw):
    kind = draw(st.sampled_from(["right"] * 5 + ["wrong", "none", "prefix", "junk"]))
    return {"right": f"Bearer {TOKEN}", "wrong": f"Bearer {draw(header_text)}", "none": None,
            "prefix": f"Bearer {TOKEN[:draw(st.integers(0, len(TOKEN)))]}", "junk": draw(header_text)}[kind]


@st.composite
def request(draw):
    seq = draw(st.integers(0, 10**6))
    target = draw(st.sampled_from(["experience"] * 6 + ["model", "meta", "status", "healthz", "readyz", "other"]))
    method = "POST" if target == "experience" else "GET"
    if draw(st.integers(0, 9)) == 0:
        method = draw(st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]))
    path = {"experience": "/v1/experience", "model": "/v1/model", "meta": "/v1/model/meta", "status": "/v1/status",
            "healthz": "/healthz", "readyz": "/readyz",
            "other": "/" + draw(st.text(st.characters(min_codepoint=48, max_codepoint=122), max_size=20))}[target]
    headers = {}
    auth = auth_header(draw)
    if auth is not None:
        headers["Authorization"] = auth.strip()  # h11 refuses to send a value with edge whitespace
    if draw(st.booleans()):
        headers["Content-Type"] = draw(st.sampled_from(["application/octet-stream", "application/json", "text/plain",
                                                        "multipart/form-data; boundary=x"]))
    if target == "model" and draw(st.booleans()):
        headers["If-None-Match"] = draw(header_text)
    for _ in range(draw(st.integers(0, 2))):
        headers[f"X-Fuzz-{draw(st.integers(0, 99))}"] = draw(header_text)
    body = None
    if method in ("POST", "PUT", "PATCH"):
        body = draw(st.one_of(st.binary(max_size=512), structured_batch(seq), structured_batch(seq),
                              mangled_batch(seq)))
    return method, path, headers, body


@pytest.mark.slow
def test_fuzz_every_endpoint_no_5xx_and_nothing_changed_by_a_refused_request(tmp_path, manager):
    seen = {"accepted": 0, "refused": 0, "codes": {}}
    # burn_in above anything sent: the replay changes only by ingest, so a change is the request's doing.
    with (manager(tmp_path, token=TOKEN, manager__burn_in=10_000_000, manager__max_upload_rows=MAX_ROWS) as m,
          httpx.Client(base_url=m.url, timeout=30) as client):
        trainer = m.trainer

        @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(request())
        def check(req):
            method, path, headers, body = req
            before = quiet(trainer)
            r = client.request(method, path, headers=headers, content=body)
            seen["codes"][r.status_code] = seen["codes"].get(r.status_code, 0) + 1
            assert r.status_code < 500, (r.status_code, r.text[:300], method, path)
            accepted = (path == "/v1/experience" and method == "POST" and r.status_code == 202
                        and not r.json().get("duplicate"))
            after = quiet(trainer)
            if accepted:
                seen["accepted"] += 1
                assert after[0] == before[0] + r.json()["accepted"] and after[1] == before[1] + 1
            else:
                seen["refused"] += 1
                assert after == before, (r.status_code, r.text[:300])
            if r.status_code == 401:
                assert headers.get("Authorization") != f"Bearer {TOKEN}"

        check()
    print("fuzz answers by status:", dict(sorted(seen["codes"].items())), "accepted", seen["accepted"])
    # The generator reached both sides of the validation.
    assert seen["accepted"] > 0 and seen["refused"] > 0
    assert {400, 401}.issubset(seen["codes"])
