"""`train --fused`: the fused loop's rows are the worker path's rows, a fused run leaves what `train` leaves,
and it resumes after kill -9."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from melee_agent.config import load_config
from melee_agent.envs.make import make_env
from melee_agent.run.fused import FusedTrainer
from melee_agent.workers.play import SegmentPlayer
from melee_agent.workers.priorities import td_priorities
from tests.manager_kit import scalar_tags

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "melee_agent.cli.main"]


def _count_calls(env, stop_after: int | None = None, stop: threading.Event | None = None) -> list[int]:
    """Wrap ``env.step_async`` to count its calls (and set ``stop`` at call ``stop_after``)."""
    calls = [0]
    inner = env.step_async

    def step_async(actions):
        out = inner(actions)
        calls[0] += 1
        if stop is not None and calls[0] >= stop_after:
            stop.set()
        return out

    env.step_async = step_async
    return calls


def _sorted_rows(rows: torch.Tensor) -> list[tuple[float, ...]]:
    return sorted(map(tuple, rows.tolist()))


@pytest.mark.slow
@pytest.mark.parametrize("game", ["dodge", "fight"])
@pytest.mark.parametrize("prioritized", [False, True])
def test_fused_rows_equal_the_worker_paths_from_the_same_seed_and_actions(tmp_path, game, prioritized):
    """Learning off (a burn-in never reached), so both act with one fixed network: the fused loop's chunks
    (rows held back until their n-step windows close, then the rest at stop) write into its replay exactly
    the rows, discounts and initial priorities a worker's one segment of the same frames builds."""
    sets = ["manager.burn_in=1000000", "fused.envs=5", "worker.epsilon_per_env=true", "fused.chunk_frames=7", "worker.n_step=3",
            f"replay.prioritized={str(prioritized).lower()}"]
    if game == "fight":
        sets += ["env.game=\"fight\"", "env.action_set=\"fight\"", "env.reward=\"fight\""]
    cfg = load_config("small", sets)
    fused = FusedTrainer(cfg, tmp_path / "run", seed=11)
    model = fused.learner.online
    frozen = {k: v.clone() for k, v in model.state_dict().items()}
    calls = _count_calls(fused.env)
    fused.work(0.0, chunks=30 if game == "dodge" else 12)  # a fight's macros are shorter: 12 chunks make > 50 rows
    fused.stop()
    n = len(fused.replay)
    fused_rows = fused.replay.storage.data[:n].clone()
    assert n > 50 and fused.learner.train_steps == 0
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in frozen.items())

    # The worker path: its own arena from the same seed, one segment of the same number of frames.
    env = make_env(cfg, num_envs=5, seed=11)
    stop = threading.Event()
    _count_calls(env, stop_after=calls[0], stop=stop)
    player = SegmentPlayer(env, fused.player.epsilon.clone(), 3, cfg.learner.gamma, seed=11)
    worker_rows, stats = player.play(model, frames_per_env=10**9, stop=stop)
    assert stats.steps == n
    assert _sorted_rows(fused_rows) == _sorted_rows(worker_rows)
    if prioritized:  # the sum tree holds (|TD| + eps)^alpha of each row, as a worker's upload gives them
        r = fused.replay
        leaves = r.tree.leaves.view(-1)[:n]
        want = (td_priorities(model, fused_rows).double() + r.eps) ** r.alpha
        assert torch.allclose(leaves, want, rtol=1e-4, atol=1e-6)  # a chunk's batch against the whole: float32 rounding
        # The same rows in the worker's upload get the same priorities (up to the float rounding of a matrix
        # product over another batch).
        by_row = dict(zip(map(tuple, worker_rows.tolist()), td_priorities(model, worker_rows).tolist()))
        got = torch.tensor([by_row[tuple(row)] for row in fused_rows.tolist()])
        assert torch.allclose(got, td_priorities(model, fused_rows), rtol=1e-4, atol=1e-6)


@pytest.mark.slow
def test_fused_training_learns_publishes_and_checkpoints(tmp_path):
    cfg = load_config("small", ["manager.burn_in=200", "fused.envs=8", "fused.replay_ratio=4",
                                "manager.checkpoint_every=40", "manager.publish_every=20"])
    fused = FusedTrainer(cfg, tmp_path / "run", seed=3)
    before = [p.clone() for p in fused.learner.online.parameters()]
    fused.work(0.0, chunks=60)
    steps, rows, version = fused.progress()
    # Steps follow the replay ratio: rows since the burn-in times 4 / batch 32, give or take the chunk that
    # crossed the burn-in (at most 8 games x 8 one-frame decisions = 64 rows, 8 steps).
    assert rows > 200 and steps > 0 and abs(steps - (rows - 200) * 4 / 32) <= 9
    assert version == steps // 20 and fused.model_bytes() == fused.trainer.model.data
    assert any(not torch.equal(a, b) for a, b in zip(before, fused.learner.online.parameters()))
    fused.stop()
    assert list((tmp_path / "run" / "checkpoints").glob("ckpt-*.pt"))



@pytest.mark.slow
def test_act_refresh_steps_acts_with_the_online_weights_of_the_last_multiple_of_k_steps(tmp_path):
    """The acting copy is refreshed after every K-th train step, inside a chunk too: whenever it plays, it holds
    the online network's weights as they were at the last multiple of K steps (never K or more steps behind)."""
    k = 3
    cfg = load_config("small", ["manager.burn_in=200", "fused.envs=8", "fused.replay_ratio=16",
                                f"fused.act_refresh_steps={k}"])
    fused = FusedTrainer(cfg, tmp_path / "run", seed=4)
    assert fused.actor is not fused.learner.online

    def weights(net: torch.nn.Module) -> torch.Tensor:
        return torch.cat([p.detach().flatten() for p in net.parameters()]).clone()

    at_multiples = {0: weights(fused.learner.online)}  # the online weights after every K-th step
    learner_step, play = fused.learner.step, fused.player.play

    def step(*args, **kwargs):
        out = learner_step(*args, **kwargs)
        if fused.learner.train_steps % k == 0:
            at_multiples[fused.learner.train_steps] = weights(fused.learner.online)
        return out

    steps_at_play = []

    def play_checked(actor, frames, **kw):
        steps = fused.learner.train_steps
        steps_at_play.append(steps)
        assert torch.equal(weights(actor), at_multiples[steps - steps % k]), f"stale actor at step {steps}"
        return play(actor, frames, **kw)

    fused.learner.step, fused.player.play = step, play_checked
    fused.work(0.0, chunks=40)
    gaps = [b - a for a, b in zip(steps_at_play, steps_at_play[1:])]
    # Chunks of more than K steps happened (a refresh only after a chunk's steps would leave the copy behind).
    assert steps_at_play[-1] >= 4 * k and max(gaps) > k
    fused.learner.step = learner_step
    fused.learner.step()  # the online network moves on; the copy waits for its next refresh
    assert any(not torch.equal(a, b) for a, b in zip(fused.actor.parameters(), fused.learner.online.parameters()))
    fused.refresh_actor()
    assert all(torch.equal(a, b) for a, b in zip(fused.actor.parameters(), fused.learner.online.parameters()))
    fused.stop()


def test_write_refuses_rows_on_another_device_or_of_another_width():
    from melee_agent.rl.replay import DeviceReplay

    replay = DeviceReplay(100)
    with pytest.raises(ValueError, match="57"):
        replay.write(torch.zeros(3, 5))
    with pytest.raises(ValueError, match="add"):
        replay.write(torch.zeros(3, 57).numpy())
    replay.add(torch.ones(2, 57))  # staged, then the written rows: arrival order is kept
    replay.write(torch.full((3, 57), 2.0))
    assert len(replay) == 5 and replay.storage.data[:5, 0].tolist() == [1.0, 1.0, 2.0, 2.0, 2.0]


@pytest.mark.slow
def test_train_fused_leaves_the_run_folder_train_leaves(tmp_path):
    run_dir = tmp_path / "run"
    proc = subprocess.run([*CLI, "train", "--fused", "--config", "small", "--minutes", "0.5", "--run-dir", str(run_dir),
                           "--set", "train.eval_every_minutes=0.1", "--set", "train.progress_eval_episodes=4",
                           "--set", "train.eval_episodes=2", "--set", "manager.burn_in=300",
                           "--set", "env.max_frames=600", "--set", "fused.envs=16", "--no-progress"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    result = json.loads((run_dir / "eval.json").read_text())
    assert result["episodes"] == 18 and set(result["baselines"]) == {"noop", "random", "dodger", "roller"}
    t = result["training"]
    assert t["fused"] is True and t["train_steps"] > 0 and t["rows"] > 300 and t["rows_per_s"] > 0
    assert len(result["curve"]) >= 2  # the untrained model and at least one check played beside training
    assert [p["minutes"] for p in result["curve"]] == sorted(p["minutes"] for p in result["curve"])
    for name in ("model.safetensors", "model-last.safetensors", "learning_curve.png", "config.toml", "config.json"):
        assert (run_dir / name).exists(), name
    assert list((run_dir / "checkpoints").glob("ckpt-*.pt"))
    tags = scalar_tags(run_dir)
    for prefix in ("loss/", "q/", "replay/", "ingest/", "train/", "model/version", "episode/", "eval/"):
        assert any(tg.startswith(prefix) for tg in tags), f"no {prefix} tag in {sorted(tags)}"
    assert "fused" in proc.stdout and "rows/s" in proc.stdout


@pytest.mark.slow
def test_a_fused_run_killed_with_sigkill_resumes_from_its_checkpoint(tmp_path):
    run_dir = tmp_path / "run"
    sets = ["--set", "manager.burn_in=200", "--set", "manager.checkpoint_every=50", "--set", "manager.publish_every=25",
            "--set", "fused.envs=8", "--set", "train.eval_every_minutes=5", "--set", "train.eval_episodes=1",
            "--set", "env.max_frames=300", "--set", "train.final_baselines=false"]
    first = subprocess.Popen([*CLI, "train", "--fused", "--config", "small", "--minutes", "10", "--run-dir",
                              str(run_dir), "--no-progress", *sets], cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while len(list((run_dir / "checkpoints").glob("ckpt-*.pt"))) < 2:
            assert first.poll() is None and time.monotonic() < deadline, "no checkpoints written"
            time.sleep(0.5)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    from melee_agent.manager.checkpoint_contents import load_newest
    from melee_agent.manager.model_files import stored_models

    _, ckpt = load_newest(run_dir, torch.device("cpu"))
    published = max(m.version for m in stored_models(run_dir, "untouchable"))
    # Without --resume the folder is refused before any work; with it the run continues.
    refused = subprocess.run([*CLI, "train", "--fused", "--config", "small", "--minutes", "0.1", "--run-dir",
                              str(run_dir), "--no-progress", *sets], cwd=ROOT, capture_output=True, text=True)
    assert refused.returncode == 2 and "--resume" in refused.stderr
    # Counted chunks, not minutes: under load a few seconds may not refill the burn-in (the replay is not kept).
    again = subprocess.run([*CLI, "train", "--fused", "--resume", "--config", "small", "--run-dir", str(run_dir),
                            "--no-progress", *sets, "--set", "train.chunks=40"], cwd=ROOT, capture_output=True,
                           text=True, timeout=600)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-3000:]
    result = json.loads((run_dir / "eval.json").read_text())
    assert result["training"]["train_steps"] > ckpt.train_steps  # it went on from the checkpoint, not from 0
    versions = [m.version for m in stored_models(run_dir, "untouchable")]
    assert max(versions) > published  # no version number is published twice
