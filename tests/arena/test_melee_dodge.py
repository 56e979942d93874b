"""The dodging game's ``melee`` CPU (``Arena(cpu="melee")``, arena/cpu_levels.py MELEE_LEVELS): its per-level values
from Melee's CPU code, and what they do against an agent that stands still."""

from __future__ import annotations

import pytest
import torch

from melee_agent.arena import Arena
from melee_agent.arena.cpu_levels import CPU_LEVELS, MELEE_LEVELS, LevelTable


def test_the_levels_come_from_the_games_attack_gate_and_waits():
    # [D ftCo_800B885C]: levels 1-4 attack on 119/300, 179/300, 119/240, 179/240 of frames; 5-9 always.
    assert [round(MELEE_LEVELS[lv].aggression * 300) for lv in (1, 2)] == [119, 179]
    assert [round(MELEE_LEVELS[lv].aggression * 240) for lv in (3, 4)] == [119, 179]
    assert all(MELEE_LEVELS[lv].aggression == 1.0 and MELEE_LEVELS[lv].accuracy == 1.0 for lv in range(5, 10))
    # [D ftCo_800B63D8]: level 1 waits 5-39 frames (int(35 u) + 5), level 9 none.
    assert (MELEE_LEVELS[1].recover, MELEE_LEVELS[1].rest) == (5, 35) and MELEE_LEVELS[9].rest == 0
    table = LevelTable.build(torch.device("cpu"), "melee")
    assert table.at(torch.tensor([3.0])).aggression.item() == pytest.approx(119 / 240)
    assert LevelTable.build(torch.device("cpu")).at(torch.tensor([9.0])).rest.item() == CPU_LEVELS[9].rest


def _first_hit(cpu: str, level: int, n: int = 16, steps: int = 60) -> torch.Tensor:
    env = Arena(n, cpu_level=level, seed=0, cpu=cpu)
    env.reset()
    first = torch.full((n,), -1)
    noop = torch.full((n,), env.noop_index)
    for i in range(steps):
        _, _, _, info = env.step(noop)
        first = torch.where((first < 0) & info["hit"], i, first)
    return first


def test_a_level_5_melee_cpu_attacks_whenever_a_move_reaches_the_designed_one_seldom():
    # Melee's CPU at levels 5-9 starts an attack on any frame its list reaches the agent [D ftCo_800B4AB0,
    # ftCo_800B885C]; the designed level 5 does so with a small chance per frame (a guess, cpu_levels.CPU_LEVELS).
    melee, designed = _first_hit("melee", 5), _first_hit("designed", 5)
    assert (melee >= 0).float().mean() >= 0.9, melee
    assert (designed >= 0).sum() < (melee >= 0).sum(), (designed, melee)
