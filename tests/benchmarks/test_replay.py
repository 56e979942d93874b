import pytest
import json
import subprocess
import sys


@pytest.mark.slow
def test_bench_replay_quick_prints_table_and_writes_json(tmp_path):
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, "-m", "melee_agent.cli", "bench", "replay", "--quick",
                           "--train-steps", "5", "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "sample latency" in proc.stdout and "train step" in proc.stdout
    r = json.loads(out.read_text())
    for bs in ("16", "32", "64", "128", "256"):
        assert r["sample_us"]["device"][bs] > 0
        row = r["train_step_ms"][bs]
        assert row["device"] > 0 and row["host_list"] > 0 and row["fixed_batch"] > 0
    assert set(r["add_us_per_row"]["one_at_a_time_by_block"]) == {"1", "10", "100", "1000", "2000", "10000"}
    assert r["memory"]["device_replay_bytes"] == 20_000 * 228 + 2_000 * 228
    assert r["targets"]["train128_vs_floor"] > 0
