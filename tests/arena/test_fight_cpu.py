"""The fight's Marth CPU: it recovers from off stage at level 9; its level table is the documented one.
(The compiled fight, at levels 1, 5 and 9, is in test_compiled.py.)"""

from __future__ import annotations

import pytest
import torch
from melee.enums import Action

from melee_agent.arena.cpu import designed as marth_cpu
from melee_agent.arena.fight.moves import Slot
from tests.fight_kit import AGENT, CPU, EDGE, fight, place, slot_of


@pytest.mark.slow
def test_the_level_9_cpu_recovers_from_off_stage():
    n = 8
    env = fight(n, level=9, action_set="untouchable")
    side = torch.tensor([1, 1, 1, 1, -1, -1, -1, -1.0])
    xs = side * (EDGE + torch.tensor([30, 45, 60, 20, 30, 45, 60, 20.0]))
    ys = torch.tensor([10, -20, 0, -40, 20, -10, -30, -50.0])
    place(env, AGENT, position_x=0.0)
    place(env, CPU, position_x=xs, position_y=ys, on_ground=0.0, action=float(Action.FALLING.value), jumps_left=1.0,
          facing=-side)
    for _ in range(300):
        env.step(torch.zeros(n, dtype=torch.long))
    ps = env.state.players
    assert ps.stock[:, CPU].tolist() == [4.0] * n  # no KO: every one made it back
    over_stage = (ps.position_x[:, CPU].abs() <= EDGE) & (ps.position_y[:, CPU] >= 0)  # on it, or in a hop above it
    back = over_stage | (slot_of(env, CPU) == Slot.LEDGE_HANG)
    assert back.all(), ps.position_x[:, CPU]


def test_the_documented_level_table_is_the_one_played():
    for line in marth_cpu.level_rows():
        assert line in marth_cpu.__doc__, line
    lv = [marth_cpu.FIGHT_LEVELS[k] for k in range(1, 10)]
    for name in ("aggression", "accuracy", "defend", "di", "recover"):
        values = [getattr(v, name) for v in lv]
        assert values == sorted(values), name  # every skill grows with the level
    assert [v.reaction for v in lv] == sorted((v.reaction for v in lv), reverse=True)
