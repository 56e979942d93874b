"""The scripted fighter: its plan read off real arena states (``fight`` set), the ``basic`` set kept, and a
short game against level 1 in which it hits Marth with the ``fight`` macros."""

from __future__ import annotations

import pytest
import torch
from melee.enums import Action

from melee_agent.envs.actions import get_action_set
from melee_agent.report.evaluate import evaluate
from melee_agent.rl.policies import FIGHTER_SETS, make_policy
from tests.fight_kit import AGENT, CPU, EDGE, fight, place

FALLING = float(Action.FALLING.value)


def test_the_fight_fighter_recovers_off_stage_and_attacks_in_reach():
    env = fight(5, level=1, action_set="fight")
    place(env, AGENT, position_x=torch.tensor([EDGE + 30, EDGE + 20, 0.0, 0.0, -(EDGE + 30)]),
          position_y=torch.tensor([10.0, -40.0, 0.0, 0.0, 10.0]),
          on_ground=torch.tensor([0.0, 0.0, 1.0, 1.0, 0.0]),
          action=torch.tensor([FALLING, FALLING, float(Action.STANDING.value), float(Action.STANDING.value), FALLING]),
          jumps_left=torch.tensor([1.0, 0.0, 2.0, 2.0, 1.0]), facing=torch.tensor([1.0, 1.0, 1.0, -1.0, 1.0]))
    place(env, CPU, position_x=torch.tensor([0.0, 0.0, 15.0, 15.0, 0.0]), percent=torch.tensor([0, 0, 90.0, 20, 0]))
    names = get_action_set("fight").names
    chosen = [names[i] for i in make_policy("fighter", "fight")(env.observe()).tolist()]
    # The padded set (each macro at least 18 frames, for 18 frames of delay) has the same plan.
    assert make_policy("fighter", "fight:18")(env.observe()).tolist() == [names.index(c) for c in chosen]
    assert chosen == ["double_jump_left",  # off stage to the right with a jump left: jump back in
                      "up_b_up",  # far below the ledge with none: firefox straight up
                      "usmash",  # in reach, facing Marth at 90%: the kill move
                      "ftilt_right",  # in reach but facing away: a forward tilt turns Fox to him
                      "double_jump_right"]  # the mirror of the first


def test_the_fighter_names_the_sets_it_plays():
    assert FIGHTER_SETS == ("basic", "fight")
    with pytest.raises(ValueError, match="'basic' or 'fight' action set, not 'untouchable'"):
        make_policy("fighter", "untouchable")
    with pytest.raises(ValueError, match="not 'untouchable:18'"):
        make_policy("fighter", "untouchable:18")


@pytest.mark.slow
def test_the_fight_fighter_hits_marth_in_a_short_game():
    env = fight(2, level=1, action_set="fight", max_frames=1_200)  # a 20-second clock
    r = evaluate(env, make_policy("fighter", "fight"), 2, progress=False)
    assert r.fights is not None and r.fights.games == 2
    assert r.fights.damage_dealt_per_game > 20.0, r.fights
