"""The prioritized replay (two-level sum tree), its importance weights and beta schedule, and the
initial priorities workers compute (Ape-X)."""

from __future__ import annotations

import numpy as np
import pytest

from melee_agent.io.segment_stats import SegmentStats
import torch

from melee_agent.rl.learner import Learner
from melee_agent.rl.model import DuelingDQN
from melee_agent.rl.replay import BlockSumTree, PrioritizedDeviceReplay, annealed_beta
from melee_agent.rl.rows import ACTION, DISCOUNT, NEXT_OBS, OBS, REWARD, ROW_WIDTH
from melee_agent.workers.priorities import td_priorities


def _rows(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = rng.random((n, ROW_WIDTH), dtype=np.float32)
    rows[:, ACTION] = rng.integers(0, 5, n)
    rows[:, DISCOUNT] = 0.97
    rows[:, 0] = np.arange(n)  # each row names itself
    return rows


def test_sampling_frequencies_follow_p_to_the_alpha():
    n, alpha = 300, 0.6
    rng = np.random.default_rng(1)
    p = rng.uniform(0.05, 5.0, n)  # expected shares differ by 13x: uniform sampling would fail badly
    r = PrioritizedDeviceReplay(n, block_size=100, alpha=alpha, eps=0.0, seed=3)
    r.tree = BlockSumTree(n, r.device, block=16)  # many blocks, and a partly filled last one
    r.add(_rows(n), priority=p)
    r.flush()
    draws, batch = 120_000, 200
    counts = np.zeros(n)
    for _ in range(draws // batch):
        np.add.at(counts, r.sample_indices(batch)[0].numpy(), 1)
    expected = draws * p**alpha / (p**alpha).sum()
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    # Independent draws give chi2 ~ 299 +- 24 (dof 299); stratified draws are less spread, never more.
    # 420 is 5 standard deviations above the mean: a wrong rule (say alpha = 1) lands in the thousands.
    assert chi2 < 420, chi2
    wrong = draws * p / p.sum()
    assert float(((counts - wrong) ** 2 / wrong).sum()) > 2_000
    uniform = np.full(n, draws / n)
    assert float(((counts - uniform) ** 2 / uniform).sum()) > 2_000


def test_importance_weights_match_the_formula():
    n, alpha, beta = 50, 0.6, 0.4
    p = np.linspace(0.1, 3.0, n)
    r = PrioritizedDeviceReplay(n, block_size=10, alpha=alpha, beta=beta, eps=0.0, seed=0)
    r.add(_rows(n), priority=p)
    r.flush()
    idx, w = r.sample_indices(64)
    prob = p**alpha / (p**alpha).sum()
    by_hand = (n * prob[idx.numpy()]) ** -beta
    np.testing.assert_allclose(w.numpy(), by_hand / by_hand.max(), rtol=1e-5)
    assert float(w.max()) == 1.0


def test_repeated_indices_and_rounding_never_split_a_block_sum_from_its_leaves():
    t = BlockSumTree(40, torch.device("cpu"), block=8)
    t.set(torch.arange(40), torch.rand(40, dtype=torch.float64))
    gen = torch.Generator().manual_seed(0)
    for _ in range(200):
        idx = torch.randint(0, 40, (16,), generator=gen)
        idx[1] = idx[0]  # a row sampled twice in one batch
        t.set(idx, torch.rand(16, dtype=torch.float64, generator=gen))
        torch.testing.assert_close(t.sums, t.leaves.sum(1), rtol=0, atol=1e-12)
    # Every leaf set to zero is never found, even at the edges of the mass.
    t.set(torch.arange(0, 40, 2), torch.zeros(20, dtype=torch.float64))
    total = float(t.total())
    mass = torch.linspace(0, total * (1 - 1e-12), 5_000, dtype=torch.float64)
    found = t.find(mass)
    assert bool((t.get(found) > 0).all())
    assert found.diff().min() >= 0  # the running sum is monotone in the mass


def test_the_fifo_overwrite_drops_the_old_priority():
    r = PrioritizedDeviceReplay(8, block_size=4, alpha=1.0, eps=0.0)
    r.add(_rows(8), priority=np.array([100.0] + [1.0] * 7))
    r.flush()
    r.add(_rows(1, seed=9), priority=np.array([2.0]))  # overwrites slot 0
    r.flush()
    assert float(r.tree.get(torch.tensor([0]))) == 2.0
    assert float(r.tree.total()) == pytest.approx(2.0 + 7.0)


def test_beta_anneals_to_one_over_the_configured_steps_and_metrics_report_it():
    r = PrioritizedDeviceReplay(200, block_size=50, beta=0.4, seed=0)
    r.add(_rows(200), priority=np.linspace(0.1, 2, 200))
    r.flush()
    learner = Learner(r, num_actions=5, batch_size=16, metrics_every=10, beta_steps=40)
    seen = []
    for _ in range(60):
        m = learner.step()
        if m is not None:
            seen.append((m.replay.beta, m.replay.weight_min, m.replay.priority_max, m.replay.priority_mean))
    # The beta used by the last sample of each window: steps 9, 19, ... (0-based).
    assert [round(s[0], 3) for s in seen] == [round(annealed_beta(0.4, 40, t), 3) for t in (9, 19, 29, 39, 49, 59)]
    assert seen[-1][0] == 1.0
    assert all(0 < s[1] <= 1 for s in seen) and all(s[2] >= s[3] > 0 for s in seen)


def _known_model() -> DuelingDQN:
    """Q(s, a) = s[0] + A_a - mean(A) with A = (0, 1, 2, 3, 4): V reads the state's first value."""
    m = DuelingDQN(num_actions=5)
    with torch.no_grad():
        for p in m.parameters():
            p.zero_()
        m.shared[0].weight[0, 0] = 1.0  # h0 = relu(s0)
        m.value[0].weight[0, 0] = 1.0  # unit 0 = h0
        m.value[2].weight[0, 0] = 1.0  # V = unit 0
        m.advantage[2].bias.copy_(torch.arange(5.0))
    return m


def test_worker_priorities_equal_a_hand_computation():
    rows = torch.zeros(3, ROW_WIDTH)
    #            s0   a    r      d        s'0
    for i, (s0, a, r, d, n0) in enumerate([(0.2, 1, 0.1, 0.5, 0.7), (0.0, 4, 0.0, 0.0, 0.9), (0.5, 0, 1 / 60, 0.99**3, 0.5)]):
        rows[i, OBS.start], rows[i, ACTION], rows[i, REWARD], rows[i, DISCOUNT], rows[i, NEXT_OBS.start] = s0, a, r, d, n0
    # Q(s, a) = s0 + a - 2, so max_a Q(s') = s'0 + 2:
    #   |0.1 + 0.5 (0.7 + 2) - (0.2 - 1)| = 2.25;  |0 + 0 - (0 + 2)| = 2;  |1/60 + 0.970299 (2.5) - (0.5 - 2)|
    by_hand = [2.25, 2.0, 1 / 60 + 0.970299 * 2.5 + 1.5]
    torch.testing.assert_close(td_priorities(_known_model(), rows), torch.tensor(by_hand), rtol=1e-5, atol=1e-6)
    # With the learner's reward_scale c the reward counts c times: |10 * 0.1 + 0.5 (2.7) + 0.8| = 3.15.
    scaled = td_priorities(_known_model(), rows, reward_scale=10.0)
    torch.testing.assert_close(scaled[0], torch.tensor(3.15), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(scaled[1], torch.tensor(2.0))


def test_a_worker_sends_its_priorities_with_each_batch(tmp_path):
    from melee_agent.config import load_config
    from melee_agent.io.wire import decode_experience
    from melee_agent.workers.worker import Worker, WorkerSettings

    cfg = load_config("small", ["replay.prioritized=true", "worker.upload_rows=100"])
    # Nothing listens on port 9: every batch stays in the spool, where the test reads it back.
    w = Worker(cfg, WorkerSettings(manager="http://127.0.0.1:9", spool_dir=tmp_path / "spool"))
    w.client.retries = 0
    w.model = _known_model()
    rows = torch.from_numpy(_rows(250))
    rows[:, OBS.start] = torch.rand(250)
    w.upload(rows, SegmentStats())
    sent = []
    while (head := w.spool.oldest()) is not None:
        seq, payload, n = head
        sent.append(decode_experience(payload, action_set="untouchable", num_actions=5, max_rows=10_000))
        w.spool.remove(seq)
    assert [e.rows.shape[0] for e in sent] == [100, 100, 50]
    got = np.concatenate([e.priority for e in sent])
    np.testing.assert_allclose(got, td_priorities(_known_model(), rows).numpy(), rtol=1e-6)
    uniform = load_config("small")
    w2 = Worker(uniform, WorkerSettings(manager="http://127.0.0.1:9", spool_dir=tmp_path / "spool2"))
    w2.model = _known_model()
    w2.upload(rows[:10], SegmentStats())
    assert decode_experience(w2.spool.oldest()[1], action_set="untouchable", num_actions=5,
                             max_rows=10_000).priority is None
