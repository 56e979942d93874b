"""`bench arena` and `bench ingest` run end to end and write their JSON (no timing assertions)."""

from __future__ import annotations

import pytest

import json
import re
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench(kind: str, out: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "melee_agent.cli.main", "bench", kind, "--quick", "--json", str(out),
                           *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)


@pytest.mark.slow
def test_bench_arena_quick(tmp_path):
    out = tmp_path / "arena.json"
    proc = _bench("arena", out, "--eager")  # the compiled path has its own tests (test_arena_compiled)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(out.read_text())
    loops = {(x["envs"], x["loop"]) for x in r["results"]}
    assert loops == {(b, k) for b in (1, 64) for k in ("noop", "random", "dqn")}
    assert all(x["frames_per_s"] > 0 for x in r["results"])
    assert r["compiled"] is False and r["action_set"] == "untouchable"  # the dodging game's own set
    assert r["cpu"] == "melee" and "CPU melee level 9" in proc.stdout  # what the configs train against
    assert all(x["frames_per_decision"] == 1.0 for x in r["results"] if x["loop"] == "noop")  # its noop: one frame
    assert all(1.0 <= x["frames_per_decision"] <= 32 for x in r["results"] if x["loop"] != "noop")
    assert set(r["targets"]) == {"noop_frames_per_s_at_4096", "dqn_frames_per_s_best"}
    assert "frames per second" in proc.stdout and "actions untouchable (noop: 1 frame)" in proc.stdout
    # Each loop is told of as it ends (on stderr), so a run cut short by a time limit still shows them.
    told = re.findall(r"B=([\d,]+) (noop|random|dqn): [\d,]+ frames/s \(\d+ s, setup included\)", proc.stderr)
    assert told == [(str(b), k) for b in (1, 64) for k in ("noop", "random", "dqn")]
    designed = _bench("arena", tmp_path / "designed.json", "--eager", "--game", "fight", "--cpu", "designed")
    assert designed.returncode == 0, designed.stderr
    assert json.loads((tmp_path / "designed.json").read_text())["cpu"] == "designed"
    assert "game fight, CPU designed level 9" in designed.stdout
    bad = _bench("arena", out, "--eager", "--action-set", "nosuch")
    assert bad.returncode != 0 and "--action-set" in bad.stderr and "nosuch" in bad.stderr


@pytest.mark.slow
def test_bench_arena_side_by_side_takes_turns_and_gives_the_ratio(tmp_path):
    out = tmp_path / "side.json"
    proc = _bench("arena", out, "--eager", "--game", "dodge", "--side-by-side", "fight")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(out.read_text())
    assert r["games"] == ["dodge", "fight"] and [x["envs"] for x in r["side_by_side"]] == [1, 64]
    for row in r["side_by_side"]:
        by_turn = row["ms_per_call_by_turn"]
        assert len(by_turn["dodge"]) == len(by_turn["fight"]) == row["turns"] >= 1  # the two took turns, alike
        fps = row["frames_per_s"]
        assert row["ratio"] == pytest.approx(fps["dodge"] / fps["fight"])
    assert "dodge / fight" in proc.stdout
    same = _bench("arena", out, "--eager", "--game", "fight", "--side-by-side", "fight")
    assert same.returncode != 0 and "--side-by-side" in same.stderr


@pytest.mark.slow
def test_bench_ingest_quick(tmp_path):
    out, temp = tmp_path / "ingest.json", tmp_path / "temp"
    temp.mkdir()
    proc = _bench("ingest", out, env={**os.environ, "TMPDIR": str(temp)})
    assert proc.returncode == 0, proc.stderr
    assert not list(temp.glob("bench-ingest-*"))  # its scratch manager run is removed
    r = json.loads(out.read_text())
    assert r["rows_accepted"] > 0 and r["rows_accepted"] == r["server_rows_accepted"]
    assert r["rows_per_s"] > 0 and r["rss_mib_end"] > 0
    assert r["target"]["rows_per_s"] == 100_000


@pytest.mark.slow
def test_load_200_workers_for_a_minute_nothing_lost_nothing_twice_memory_flat(tmp_path):
    """The load test: 200 concurrent simulated workers for 60 s against a real manager (training on)."""
    out = tmp_path / "load.json"
    proc = subprocess.run([sys.executable, "-m", "melee_agent.cli.main", "bench", "ingest", "--uploaders", "200",
                           "--seconds", "60", "--rows", "500", "--capacity", "200000", "--resend", "0.05",
                           "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(out.read_text())
    print(proc.stdout)
    assert r["seconds"] >= 60 and r["workers"] == 200
    # Every row the workers saw accepted is counted once by the manager; every resend was refused.
    assert r["rows_accepted"] > 0 and r["server_rows_accepted"] == r["rows_accepted"]
    assert r["resends"] > 0 and r["resends_refused"] == r["resends"]
    assert r["duplicates"] == r["server_duplicates_refused"] >= r["resends"]
    assert r["counts_match"] is True
    # Bounded memory: after the first half (replay allocated, allocator warm) it stays flat.
    assert r["rss_mib_growth_second_half"] < 100, r
    assert r["latency_ms"]["count"] == r["batches_accepted"] + r["resends"] and r["latency_ms"]["p99"] > 0
