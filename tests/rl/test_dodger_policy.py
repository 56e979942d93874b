"""The scripted dodger: it spot-dodges the start of Marth's grabs as it does his attacks, read off real arena states
(the dodging game against Melee's CPU, on the fight's engine)."""

from __future__ import annotations

import torch
from melee.enums import Action

from melee_agent.arena import Arena
from melee_agent.envs.actions import get_action_set
from melee_agent.rl.policies import make_policy
from tests.fight_kit import AGENT, CPU, place


def _choices(marth_action: list[int], marth_x: list[float], marth_frame: list[float]) -> list[str]:
    n = len(marth_action)
    env = Arena(n, cpu_level=9, seed=0, game="dodge", cpu="melee")
    env.reset()
    place(env, AGENT, position_x=torch.zeros(n), facing=torch.ones(n))
    place(env, CPU, position_x=torch.tensor(marth_x), facing=-torch.ones(n),
          action=torch.tensor(marth_action, dtype=torch.float32), action_frame=torch.tensor(marth_frame))
    names = get_action_set("untouchable").names
    return [names[i] for i in make_policy("dodger", "untouchable")(env.observe()).tolist()]


def test_a_grab_starting_in_reach_makes_the_dodger_spot_dodge():
    grab, dash_grab, jab = Action.GRAB.value, Action.GRAB_RUNNING.value, Action.NEUTRAL_ATTACK_1.value
    stand = Action.STANDING.value
    chosen = _choices([grab, dash_grab, grab, grab, dash_grab, jab, stand],
                      [12.0, 60.0, 12.0, 100.0, 100.0, 12.0, 12.0],
                      [1.0, 2.0, 20.0, 1.0, 1.0, 1.0, 1.0])
    spot, noop = "spot_dodge", "noop"
    assert chosen == [spot,  # a standing grab's first frame, in reach
                      spot,  # a dash grab slides in: its reach is the dash attack's
                      noop,  # a grab 20 frames in is no start: too late to answer
                      noop, noop,  # out of reach
                      spot,  # an attack, as before
                      noop]  # standing is no threat
