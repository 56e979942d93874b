"""End to end with real processes: the manager under uvicorn on a loopback port, two arena workers.

Checks what the user relies on: the model version rises, workers pick up new versions, every
row sent is accepted, the TensorBoard run holds the documented tags, and `melee-agent train`
leaves a model, an evaluation and a learning curve behind.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from melee_agent.manager.spawn import ManagerProcess
from tests.manager_kit import scalar_tags

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "melee_agent.cli.main"]


@pytest.mark.slow
def test_manager_and_two_arena_workers_train_publish_and_log(tmp_path):
    run_dir = tmp_path / "run"
    common = ["--config", "small", "--set", "manager.burn_in=500", "--set", "worker.segment_seconds=3"]
    manager = ManagerProcess(common, run_dir, tmp_path / "manager.log").start()
    url = manager.url
    try:
        workers = [subprocess.Popen([*CLI, "worker", *common, "--manager", url, "--worker-index", str(i),
                                     "--num-workers", "2", "--segments", "8", "--seed", str(i),
                                     "--json", str(tmp_path / f"worker-{i}.json")],
                                    cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                   for i in range(2)]
        for w in workers:
            out, _ = w.communicate(timeout=600)
            assert w.returncode == 0, out.decode()[-3000:]
        status = httpx.get(f"{url}/v1/status", timeout=10).json()
        summaries = [json.loads((tmp_path / f"worker-{i}.json").read_text()) for i in range(2)]
        sent = sum(s["rows_sent"] for s in summaries)
        assert sent > 0 and status["rows_accepted"] == sent
        assert status["train_steps"] > 0 and status["model_version"] >= 2
        # Workers played with more than one model version: they fetched the newer ones.
        assert any(len(set(s["versions_seen"])) >= 2 for s in summaries), summaries
        assert summaries[0]["epsilon"] == pytest.approx(0.4) and summaries[1]["epsilon"] == pytest.approx(0.4 ** 8)
    finally:
        manager.stop()  # SIGINT: the manager checkpoints and flushes TensorBoard on the way out
    tags = scalar_tags(run_dir)
    for prefix in ("loss/", "q/", "replay/", "ingest/", "train/", "model/version", "workers/", "episode/"):
        assert any(t.startswith(prefix) for t in tags), f"no {prefix} tag in {sorted(tags)}"
    assert (run_dir / "model.safetensors").exists()
    assert list((run_dir / "checkpoints").glob("*.pt")), "the manager writes a checkpoint when it stops"


def _train_small(run_dir: Path, minutes: float, *sets: str) -> subprocess.CompletedProcess[str]:
    """`melee-agent train --config small` with these `--set`s; it must exit 0."""
    proc = subprocess.run([*CLI, "train", "--config", "small", "--minutes", str(minutes), "--run-dir", str(run_dir),
                           *[a for s in sets for a in ("--set", s)], "--no-progress"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc


@pytest.mark.slow
def test_train_command_leaves_model_eval_and_curve(tmp_path):
    run_dir = tmp_path / "run"
    # 0.7 minutes: with the suite's other process beside it on two cores, 0.4 once ended before the
    # learner's first metrics (the replay/ tags below).
    proc = _train_small(run_dir, 0.7, "train.eval_every_minutes=0.15", "train.progress_eval_episodes=4",
                        "train.eval_episodes=3", "manager.burn_in=300", "env.cpu_levels=[2, 9]",
                        "env.max_frames=900", "replay.prioritized=true")
    result = json.loads((run_dir / "eval.json").read_text())
    for key in ("policy", "cpu_level", "episodes", "untouched_share", "mean_seconds_to_first_hit", "damage_taken",
                "damage_dealt", "stocks_lost", "stocks_taken"):
        assert key in result
    # The final report plays every level 1-9, eval_episodes each, for the model and the baselines.
    assert result["episodes"] == 27 and result["cpu_level"] == list(range(1, 10))
    assert {k: v["episodes"] for k, v in result["per_level"].items()} == {str(lv): 3 for lv in range(1, 10)}
    assert result["untouched_share_worst_level"] == min(v["untouched_share"] for v in result["per_level"].values())
    assert set(result["baselines"]) == {"noop", "random", "dodger", "roller"}
    assert result["baselines"]["noop"]["per_level"]["9"]["untouched_share"] == 0.0
    assert result["trained_levels"] == [2, 9]
    # Periodic checks play the trained levels, the same count at each.
    assert all(set(p["per_level"]) == {"2", "9"} and p["episodes"] == 4 for p in result["curve"])
    assert (run_dir / "model.safetensors").stat().st_size > 100_000
    assert (run_dir / "model-last.safetensors").exists() and result["kept"] in ("best", "last")
    assert result["last_model_check"]["episodes"] == 4
    assert (run_dir / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    tags = scalar_tags(run_dir)
    assert {"eval/untouched_share", "eval/untouched_share_worst_level", "eval/untouched_share_level_2"} <= tags
    # A prioritized run (workers send priorities) shows the replay's figures.
    assert {"replay/priority_mean", "replay/priority_max", "replay/weight_min", "replay/beta"} <= tags
    assert "untouched" in proc.stdout and "worst level" in proc.stdout
    # Each periodic check's line says how long it took (a shared GPU once made them ten times slower).
    assert re.search(r"\[ *[\d.]+ min\] model v\d+ \(step [\d,]+\): untouched .*; check \d+ s\n", proc.stdout)


@pytest.mark.slow
def test_train_without_baselines_leaves_them_out_of_the_report(tmp_path):
    """`train.final_baselines = false`: runs compared with each other skip the model-independent baselines."""
    run_dir = tmp_path / "run"
    _train_small(run_dir, 0.2, "train.progress_eval_episodes=2", "train.eval_episodes=1", "manager.burn_in=500",
                 "env.max_frames=300", "train.final_baselines=false")
    result = json.loads((run_dir / "eval.json").read_text())
    assert result["baselines"] == {} and result["episodes"] == 9
    assert result["training"]["rows"] > 0
    from melee_agent.report import compare  # noqa: PLC0415

    row = compare.summarize([compare.load_run(run_dir)])["runs"][0]  # `compare` reads the folder train left
    assert row["metric"] == "untouched_share" and row["rows"] == result["training"]["rows"]
    assert [c["untouched_share"] for c in row["checks"]] == [p["untouched_share"] for p in result["curve"]]
    assert (run_dir / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_checks_play_on_the_check_device_and_the_final_report_on_the_training_device(tmp_path, monkeypatch):
    """`train.check_device`: the curve's checks (``record``) go there; the rest stays on ``device``."""
    import melee_agent.envs.make as envs
    from melee_agent.config import Config
    from melee_agent.run.training import Evaluations

    asked: list[str] = []

    class Asked(Exception):
        pass

    def capture(cfg, episodes, levels, device="cpu", seed=0, max_envs=256):
        asked.append(str(device))
        raise Asked

    monkeypatch.setattr(envs, "make_eval_env", capture)
    # (model, recorded): a check; (model, not recorded): the final report; a scripted baseline, recorded
    # or not, is part of the final report.
    calls = (("model", True), ("model", False), ("noop", True), ("noop", False))
    for check_device, want in ((None, ["cuda:7"] * 4), ("cpu", ["cpu", "cuda:7", "cuda:7", "cuda:7"])):
        evals = Evaluations(Config(), tmp_path, "cuda:7", check_device)
        asked.clear()
        for policy, record in calls:
            with pytest.raises(Asked):
                evals.run(b"", 9, 0.0, 0, policy=policy, record=record)
        evals.close()
        assert asked == want
