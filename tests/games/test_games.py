"""The game objects: what each declares is what the arena and the reports use."""

from __future__ import annotations

import torch

from melee_agent.arena import Arena
from melee_agent.arena import async_step
from melee_agent.arena.env_state import EnvState, where
from melee_agent.arena.fight.state import FightState
from melee_agent.games import DODGE, FIGHT, game_of, game_playing


def test_each_game_declares_the_frame_function_the_arena_plays():
    # async_step plays fight_frame where the consts hold a fight's, else the dodging game's frame: both games play
    # the fight's engine against Melee's CPU; the dodging game keeps its own frame for the designed CPU.
    assert DODGE.frame("melee") is async_step.fight_frame and FIGHT.frame("melee") is async_step.fight_frame
    assert DODGE.frame("designed") is async_step.game_frame and FIGHT.frame("designed") is async_step.fight_frame


def test_the_extra_state_is_the_games_own_and_the_arena_keeps_it():
    cpu = torch.device("cpu")
    assert DODGE.extra_state(3, cpu, "designed") is None
    extra = FIGHT.extra_state(3, cpu)
    assert isinstance(extra, FightState) and extra.stale.shape == (3, 2, 9)
    assert isinstance(DODGE.extra_state(3, cpu, "melee"), FightState)  # the dodging rules on the fight's engine
    assert Arena(2, game="dodge").state.fight is None and isinstance(Arena(2, game="fight").state.fight, FightState)
    assert isinstance(Arena(2, game="dodge", cpu="melee").state.fight, FightState)
    # The shared state blends a game's extra state field by field, without knowing whose it is.
    a = EnvState.zeros(3, cpu, extra=FIGHT.extra_state(3, cpu))
    b = a._replace(fight=a.fight._replace(hitlag_left=a.fight.hitlag_left + 5))
    mixed = where(torch.tensor([True, False, True]), b, a)
    assert mixed.fight.hitlag_left[:, 0].tolist() == [5.0, 0.0, 5.0]


def test_a_report_that_says_only_whether_it_played_whole_games_names_its_game():
    assert game_playing(True) is FIGHT is game_of("fight") and game_playing(False) is DODGE
