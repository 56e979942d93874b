import math

import numpy as np
import pytest
import torch

from melee_agent.rl.replay import (ROW_WIDTH, DeviceReplay, DeviceStorage,
                                PrioritizedDeviceReplay, StagingWriter, BlockSumTree, UniformSampler)
from melee_agent.benchmarks.fed import HostReplay


def numbered(n: int, start: int = 0) -> np.ndarray:
    """Rows whose every value is the row's serial number, so a stored row tells where it came from."""
    return np.repeat(np.arange(start, start + n, dtype=np.float32)[:, None], ROW_WIDTH, axis=1)


def test_fifo_order_across_the_wrap():
    r = DeviceReplay(capacity=10, block_size=4)
    r.add(numbered(14))  # 12 as whole blocks (wrapping), 2 staged
    assert len(r) == 10 and r.staged == 2
    stored = r.storage.data[:, 0].tolist()
    # 12 rows written into 10 slots: rows 10 and 11 overwrote slots 0 and 1.
    assert stored == [10, 11, 2, 3, 4, 5, 6, 7, 8, 9]
    r.flush()
    assert r.storage.data[:, 0].tolist() == [10, 11, 12, 13, 4, 5, 6, 7, 8, 9]
    assert r.storage.cursor == 4


def test_rows_one_at_a_time_reach_the_device_only_as_whole_blocks():
    r = DeviceReplay(capacity=100, block_size=5)
    for i, row in enumerate(numbered(12)):
        r.add(row)
        assert len(r) == 5 * ((i + 1) // 5)
    assert r.staged == 2
    r.flush()  # partial block
    assert len(r) == 12 and r.staged == 0
    assert r.storage.data[:12, 0].tolist() == list(range(12))
    r.flush()  # nothing staged: a no-op
    assert len(r) == 12


def test_capacity_not_a_multiple_of_the_block():
    r = DeviceReplay(capacity=7, block_size=3)
    for k in range(5):
        r.add(numbered(3, start=3 * k))  # 15 rows in blocks of 3 through 7 slots
    data = r.storage.data[:, 0].tolist()
    # The newest 7 rows (8..14) are all present, each exactly once.
    assert sorted(data) == list(range(8, 15))
    assert len(r) == 7 and r.storage.cursor == 15 % 7


def test_torch_and_mixed_inputs_and_bad_shapes():
    r = DeviceReplay(capacity=20, block_size=4)
    r.add(torch.from_numpy(numbered(3)))
    r.add(numbered(2, start=3))
    r.flush()
    assert r.storage.data[:5, 0].tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match=r"\[n, 57\]"):
        r.add(np.zeros((2, 56), np.float32))
    with pytest.raises(ValueError, match="57"):
        r.add(np.zeros(12, np.float32))
    with pytest.raises(ValueError, match="empty"):
        DeviceReplay(5).sample(2)


def test_sampled_rows_are_stored_rows_and_fields_split_correctly():
    rows = np.random.default_rng(0).random((300, ROW_WIDTH), dtype=np.float32)
    rows[:, 27] = np.arange(300) % 5
    r = DeviceReplay(capacity=1000, block_size=100, seed=1)
    r.add(rows)
    b = r.sample(64)
    got = torch.cat([b.obs, b.action[:, None].float(), b.reward[:, None], b.discount[:, None], b.next_obs], 1)
    torch.testing.assert_close(got, torch.from_numpy(rows)[b.idx])
    assert b.action.dtype == torch.long and b.obs.device == r.device
    assert torch.all(b.weight == 1)


def test_uniform_sampling_passes_a_chi_square_test():
    n, draws = 50, 100_000
    r = DeviceReplay(capacity=n, block_size=10, seed=123)
    r.add(numbered(n))
    counts = np.zeros(n)
    for _ in range(draws // 1000):
        counts += np.bincount(r.sample(1000).idx.numpy(), minlength=n)
    expected = draws / n
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    # 49 degrees of freedom: the 0.999 quantile is 85.35; a skewed sampler fails this.
    assert chi2 < 85.35, chi2
    # Only the filled part is ever sampled.
    r2 = DeviceReplay(capacity=100, block_size=10, seed=0)
    r2.add(numbered(20))
    assert int(r2.sample(5000).idx.max()) < 20


def test_memory_is_the_store_plus_one_block():
    r = DeviceReplay(capacity=1000, block_size=200)
    assert r.nbytes() == 1000 * 57 * 4 + 200 * 57 * 4


def test_parts_work_alone():
    storage = DeviceStorage(6)
    writer = StagingWriter(storage, block_size=4)
    writer.add(numbered(5))
    assert storage.size == 4 and writer.staged == 1
    idx, w = UniformSampler(storage, seed=0).sample(8)
    assert idx.max() < 4 and w.shape == (8,)


def test_sum_tree_prefix_search():
    t = BlockSumTree(5, torch.device("cpu"), block=2)
    t.set(torch.arange(5), torch.tensor([1.0, 0.0, 2.0, 3.0, 4.0]))
    assert float(t.total()) == 10.0
    found = t.find(torch.tensor([0.0, 0.99, 1.0, 2.99, 3.0, 5.99, 6.0, 9.99], dtype=torch.float64))
    assert found.tolist() == [0, 0, 2, 2, 3, 3, 4, 4]


def test_prioritized_replay_samples_in_proportion_and_weights():
    r = PrioritizedDeviceReplay(capacity=4, block_size=4, alpha=1.0, beta=1.0, seed=0)
    r.add(numbered(4), priority=np.array([1.0, 1.0, 1.0, 5.0]))
    counts = np.bincount(r.sample(8000).idx.numpy(), minlength=4) / 8000
    np.testing.assert_allclose(counts, [0.125, 0.125, 0.125, 0.625], atol=0.02)
    b = r.sample(16)
    assert math.isclose(float(b.weight.max()), 1.0)
    r.update_priorities(torch.tensor([3]), torch.tensor([0.0]))
    assert int((r.sample(2000).idx == 3).sum()) < 10


def test_host_replay_is_a_fifo_list():
    h = HostReplay(capacity=5, seed=0)
    h.add(numbered(7))
    assert sorted(row[0] for row in h.rows) == [2, 3, 4, 5, 6]
    b = h.sample(5)
    assert sorted(b.obs[:, 0].tolist()) == [2, 3, 4, 5, 6]


def test_prioritized_initial_priorities_follow_their_rows_through_a_wrap():
    r = PrioritizedDeviceReplay(capacity=4, block_size=3, alpha=1.0, eps=0.0)
    # 7 rows into 4 slots in one call: only rows 3..6 survive, each with its own priority.
    r.add(numbered(7), priority=np.arange(7, dtype=np.float64) + 1)
    r.flush()
    rows = r.storage.data[:, 0].long()
    torch.testing.assert_close(r.tree.get(torch.arange(4)), (rows + 1).double())
    # Rows added without a priority get the largest seen so far (7 here, then 9 after an update).
    r.update_priorities(torch.tensor([0]), torch.tensor([9.0]))
    r.add(numbered(1, start=100)); r.flush()
    slot = int((r.storage.data[:, 0] == 100).nonzero())
    assert float(r.tree.get(torch.tensor([slot]))) == 9.0
    with pytest.raises(ValueError, match="priority must be 2"):
        r.add(numbered(2), priority=np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="57"):
        r.add(np.zeros((2, 5), np.float32), priority=np.ones(2))
    assert r._pending == []  # rejected adds left nothing behind


def test_single_torch_rows_and_numpy_rows_mix():
    r = DeviceReplay(capacity=10, block_size=2)
    r.add(torch.full((ROW_WIDTH,), 1.0))
    r.add(np.full(ROW_WIDTH, 2.0, np.float32))
    assert len(r) == 2 and r.storage.data[:2, 5].tolist() == [1.0, 2.0]
