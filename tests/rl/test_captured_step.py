"""The train step captured as a CUDA graph: its graph-safe samplers (CPU) and the captured step
against the eager one (CUDA only)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from melee_agent.rl.learner import Learner
from melee_agent.rl.replay import ROW_WIDTH, DeviceReplay, PrioritizedDeviceReplay
from melee_agent.rl.rows import ACTION, DISCOUNT

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="CUDA graphs need a CUDA GPU; this machine has none "
                                                 "(run these on a GPU: pytest tests/rl/test_captured_step.py)")


def _rows(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = rng.random((n, ROW_WIDTH), dtype=np.float32)
    rows[:, ACTION] = rng.integers(0, 5, n)
    rows[:, DISCOUNT] = np.where(rng.random(n) < 0.05, 0.0, 0.99**3)
    return rows


def test_uniform_graph_sampler_follows_the_device_row_count() -> None:
    replay = DeviceReplay(1_000, block_size=100)
    replay.add(_rows(100, 0))
    assert int(replay.storage.size_t) == 100
    idx = torch.cat([replay.sample_graphed(256).idx for _ in range(40)])
    assert int(idx.min()) == 0 and int(idx.max()) == 99  # every row reachable, none past the filled part
    replay.add(_rows(1_500, 1))  # wraps: the store is full
    assert int(replay.storage.size_t) == 1_000 == len(replay)
    idx = torch.cat([replay.sample_graphed(256).idx for _ in range(40)])
    assert int(idx.max()) > 900 and int(idx.max()) <= 999
    counts = torch.bincount(idx // 100, minlength=10).float()
    assert float(counts.min()) > 0.8 * float(counts.mean())  # uniform over the ten deciles


def test_prioritized_graph_sampler_draws_what_the_eager_one_draws() -> None:
    replay = PrioritizedDeviceReplay(5_000, block_size=1_000, beta=0.5)
    replay.add(_rows(3_000, 2), priority=np.random.default_rng(3).exponential(1.0, 3_000))
    replay.flush()
    torch.manual_seed(7)
    eager_idx, eager_w = replay.sample_indices(128)
    torch.manual_seed(7)
    batch = replay.sample_graphed(128, torch.tensor(0.5, dtype=torch.float64))
    assert torch.equal(batch.idx, eager_idx)
    assert torch.allclose(batch.weight, eager_w)
    assert int(batch.idx.max()) < 3_000


def test_a_cpu_learner_is_never_captured() -> None:
    replay = DeviceReplay(100, block_size=50)
    replay.add(_rows(100, 4))
    learner = Learner(replay, num_actions=5, batch_size=16, cuda_graph=True)
    assert not learner.captured
    learner.step()
    assert learner._graph is None and learner.train_steps == 1


def _pair(prioritized: bool) -> tuple[Learner, Learner, DeviceReplay, DeviceReplay]:
    rows = _rows(20_000, 5)
    prio = np.random.default_rng(6).exponential(1.0, rows.shape[0])
    replays = []
    for _ in range(2):
        r = (PrioritizedDeviceReplay(20_000, "cuda", block_size=2_000, beta=0.4) if prioritized
             else DeviceReplay(20_000, "cuda", block_size=2_000))
        r.add(rows, priority=prio if prioritized else None)
        r.flush()
        replays.append(r)
    learners = []
    for r, graph in zip(replays, (True, False)):
        torch.manual_seed(11)
        learners.append(Learner(r, num_actions=5, device="cuda", batch_size=128, target_sync=50,
                                metrics_every=100, beta_steps=200, cuda_graph=graph))
    return learners[0], learners[1], replays[0], replays[1]


@needs_cuda
@pytest.mark.parametrize("prioritized", [False, True])
def test_captured_step_matches_the_eager_step(prioritized: bool) -> None:
    captured, eager, replay_c, replay_e = _pair(prioritized)
    assert captured.captured and not eager.captured
    metrics_c, metrics_e = [], []
    for _ in range(300):
        mc = captured.step()
        b = captured._graph.batch
        me = eager.step(replay_e.batch_at(b.idx.clone(), b.weight.clone()))
        if mc is not None:
            metrics_c.append(mc)
            metrics_e.append(me)
    assert captured.train_steps == eager.train_steps == 300 and len(metrics_c) == 3
    for mc, me in zip(metrics_c, metrics_e):
        for k in ("loss", "q_mean", "td_abs", "grad_norm"):
            assert getattr(mc, k) == pytest.approx(getattr(me, k), rel=1e-4, abs=1e-6), k
    for pc, pe in zip(captured.online.parameters(), eager.online.parameters()):
        torch.testing.assert_close(pc, pe, rtol=1e-4, atol=1e-5)
    for pc, pe in zip(captured.target.parameters(), eager.target.parameters()):
        torch.testing.assert_close(pc, pe, rtol=1e-4, atol=1e-5)
    if prioritized:
        torch.testing.assert_close(replay_c.tree.leaves, replay_e.tree.leaves, rtol=1e-4, atol=1e-8)
        # the graph annealed beta on the device, as the eager learner does on the host
        assert float(captured._graph.beta) == pytest.approx(captured.beta_at(299))
        assert mc.replay.beta == pytest.approx(1.0)


@needs_cuda
def test_captured_step_samples_rows_added_after_the_capture() -> None:
    replay = DeviceReplay(10_000, "cuda", block_size=1_000)
    replay.add(_rows(1_000, 8))
    learner = Learner(replay, num_actions=5, device="cuda", batch_size=256, cuda_graph=True)
    learner.step()
    assert int(learner._graph.batch.idx.max()) < 1_000
    replay.add(_rows(9_000, 9))
    seen = torch.cat([(learner.step(), learner._graph.batch.idx.clone())[1] for _ in range(20)])
    assert int(seen.max()) >= 9_000  # the graph reads the row count at each replay
