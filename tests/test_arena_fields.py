"""`Fields`: per-field tensors indexed like the stored state; writes rebind, `store` writes back."""

from __future__ import annotations

import doctest

import pytest
import torch

from melee_agent.arena import fields as fields_module
from melee_agent.arena.fields import Fields


def test_module_example_runs():
    assert doctest.testmod(fields_module).failed == 0


def test_reads_and_writes_match_the_stored_layout():
    stored = torch.arange(3 * 2 * 5, dtype=torch.float32).view(3, 2, 5)  # [N, 2, B]
    S = Fields.load_players(stored)
    view = stored.permute(2, 1, 0)  # the [B, 2, N] layout callers index
    assert torch.equal(S[..., 1], view[..., 1]) and torch.equal(S[:, 1, 2], view[:, 1, 2])
    S[:, 0, 2] = -1.0  # one player, a scalar
    S[..., 0] = S[..., 0] * 10  # both players
    p = S[:, 1]
    p[:, 1] = torch.full((5,), 7.0)  # through a player view
    assert float(stored.sum()) == float(torch.arange(30).sum())  # nothing written yet
    S.store_players(stored)
    want = torch.arange(3 * 2 * 5, dtype=torch.float32).view(3, 2, 5).permute(2, 1, 0).clone()
    want[:, 0, 2] = -1.0
    want[..., 0] *= 10
    want[:, 1, 1] = 7.0
    assert torch.equal(stored.permute(2, 1, 0), want)


def test_bad_index_names_the_problem():
    S = Fields.load(torch.zeros(4, 3))
    with pytest.raises(IndexError, match="column"):
        S[1]
    with pytest.raises(IndexError, match="unsupported"):
        S[0, 1, 2, 3]
