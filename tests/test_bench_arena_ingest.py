"""`bench arena` and `bench ingest` run end to end and write their JSON (no timing assertions)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _bench(kind: str, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "melee_agent.cli.main", "bench", kind, "--quick", "--json", str(out),
                           *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_bench_arena_quick(tmp_path):
    out = tmp_path / "arena.json"
    proc = _bench("arena", out, "--eager")  # the compiled path has its own tests (test_arena_compiled)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(out.read_text())
    loops = {(x["envs"], x["loop"]) for x in r["results"]}
    assert loops == {(b, k) for b in (1, 64) for k in ("noop", "random", "dqn")}
    assert all(x["frames_per_s"] > 0 for x in r["results"])
    assert r["compiled"] is False
    assert all(1.0 <= x["frames_per_decision"] <= 32 for x in r["results"] if x["loop"] != "noop")
    assert set(r["targets"]) == {"noop_frames_per_s_at_4096", "dqn_frames_per_s_best"}
    assert "frames per second" in proc.stdout


def test_bench_ingest_quick(tmp_path):
    out = tmp_path / "ingest.json"
    proc = _bench("ingest", out)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(out.read_text())
    assert r["rows_accepted"] > 0 and r["rows_accepted"] == r["server_rows_accepted"]
    assert r["rows_per_s"] > 0 and r["rss_mib_end"] > 0
    assert r["target"]["rows_per_s"] == 100_000
