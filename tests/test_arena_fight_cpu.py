"""The fight's Marth CPU: it recovers from off stage at level 9; its level table is the documented one;
the compiled fight frame plays the games the op-by-op one plays."""

from __future__ import annotations

import pytest

import torch
from melee.enums import Action

from melee_agent.arena import Arena
from melee_agent.arena.fight import marth_cpu
from melee_agent.arena.fight.moves import Slot
from tests.fight_kit import AGENT, CPU, EDGE, fight, place, slot_of


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


def _play(compile: bool) -> list[tuple[torch.Tensor, ...]]:
    env = Arena(16, cpu_level=[1, 5, 9], seed=3, game="fight", action_set="basic", compile=compile)
    env.reset()
    gen = torch.Generator().manual_seed(1)
    out = []
    for _ in range(150):
        a = torch.randint(0, env.num_actions, (env.num_envs,), generator=gen)
        obs, reward, done, info = env.step_async(a)
        ps = env.state.players
        out.append((obs, reward, done, info.ready, ps.action.clone(), ps.stock.clone(), ps.percent.clone()))
    return out


@pytest.mark.slow
def test_the_compiled_fight_frame_plays_the_same_games_as_eager():
    eager, fused = _play(False), _play(True)
    assert sum(float(e[6].sum()) for e in eager) > 0  # damage was dealt along the way
    for e, c in zip(eager, fused):
        torch.testing.assert_close(c[0], e[0], atol=1e-5, rtol=0)  # observations
        torch.testing.assert_close(c[1], e[1], atol=1e-5, rtol=0)  # rewards
        torch.testing.assert_close(c[6], e[6], atol=1e-4, rtol=0)  # percents
        for k in (2, 3, 4, 5):  # done, ready, actions, stocks: exactly equal
            assert torch.equal(c[k], e[k]), k
