"""Raw controller frames (`Pads`), `Arena.step_pads` and `Arena.place` (issue 49; docs/design.md "Motion")."""

from __future__ import annotations

import pytest
import torch
from melee.enums import Action

from melee_agent.arena import Arena
from melee_agent.arena.fight import pads
from melee_agent.arena.fight.pads import Pads
from tests.examples_kit import examples_failed


def test_examples() -> None:
    assert examples_failed(pads) == 0


def test_stick_deadzone_and_rim() -> None:
    # 22/80 of travel reads 0, 23/80 reads as it is (Melee's pad layer); the rim is the unit circle.
    sx, sy = pads.stick(torch.tensor([0.5 + 0.1375, 0.5 + 0.14375, 1.0]), torch.tensor([0.5, 0.5, 1.0]))
    assert sx[0] == 0.0 and sx[1] == pytest.approx(0.2875)
    assert float(torch.hypot(sx[2], sy[2])) == pytest.approx(1.0)


def test_cstick_is_one_a_press_at_its_direction() -> None:
    p = Pads.neutral(1)._replace(c_x=torch.tensor([[1.0, 0.5]]))
    pad = pads.read(p, torch.zeros(1, 2, dtype=torch.bool))
    assert pad.a.tolist() == [[True, False]] and pad.c.tolist() == [[True, False]] and pad.cx[0, 0] == 1.0
    assert pad.sx[0, 0] == 0.0  # the main stick reads as it is (a dash's turns and tilt timers go on)
    held = pads.read(p, torch.ones(1, 2, dtype=torch.bool))  # held out from the last frame: no new push
    assert held.c[0, 0].item() is False


def test_analog_shield_threshold() -> None:
    p = Pads.neutral(2)._replace(l=torch.tensor([[0.29, 0.0], [0.31, 0.0]]))
    assert pads.read(p, torch.zeros(2, 2, dtype=torch.bool)).shield[:, 0].tolist() == [False, True]


def test_place_then_step_pads_moves_one_env() -> None:
    a = Arena(2, game="fight", seed=0)
    a.reset()
    a.place(0, env=1, position_x=10.0, position_y=0.0, on_ground=True, action=float(Action.STANDING.value),
            action_frame=3, facing=False, speed_ground_x_self=0.0, percent=12.0)
    ps = a.state.players
    assert ps.position_x[1, 0] == 10.0 and ps.facing[1, 0] == -1.0 and ps.percent[1, 0] == 12.0
    assert ps.position_x[0, 0] != 10.0  # env 0 untouched
    obs, reward, done, info = a.step_pads(Pads.neutral(2))
    assert obs.shape == (2, 27) and info.frames.tolist() == [1, 1]
    assert a.state.players.position_x[1, 0] == 10.0  # standing still, nothing pressed
    # The stick held right in env 1 alone: its Fox turns and dashes; everyone else stands where they stood.
    right = Pads.neutral(2)._replace(main_x=torch.tensor([[0.5, 0.5], [1.0, 0.5]]))
    before = a.state.players.position_x.clone()
    for _ in range(12):
        a.step_pads(right)
    after = a.state.players.position_x
    assert after[1, 0] - before[1, 0] > 3.0, (before, after)
    assert torch.equal(after[0], before[0]) and after[1, 1] == before[1, 1], (before, after)


def test_place_refuses_unknown_fields_and_the_designed_dodging_game() -> None:
    with pytest.raises(ValueError, match="unknown fields"):
        Arena(1, game="fight").place(0, speed=1.0)
    with pytest.raises(ValueError, match="not the dodging game's designed CPU"):
        Arena(1, cpu="designed").place(0, position_x=1.0)
    Arena(1, cpu="melee").place(0, position_x=1.0)  # the dodging game against Melee's CPU plays on the fight's engine


def test_place_counts_the_sticks_tilt_timer_from_the_frames_before() -> None:
    # A turn placed on the frame of a flick back (the stick crossed the smash deadzone on it) is a smash turn: it
    # dashes on its next frame; placed with the stick held out for frames before, a tilt turn: it does not.
    def placed(history: list[float]) -> Arena:
        a = Arena(1, game="fight", seed=0)
        a.reset()
        frames = [Pads.neutral(1)._replace(main_x=torch.tensor([[x, 0.5]])) for x in history]
        a.place(0, position_x=0.0, position_y=0.0, on_ground=True, action=float(Action.TURNING.value), action_frame=1,
                facing=True, controller_state=[Pads(*(f[:, 0] for f in p)) for p in frames])
        a.step_pads(frames[-1])
        return a
    assert placed([0.5, 0.5, 0.0]).state.players.action[0, 0] == float(Action.DASHING.value)
    assert placed([0.0, 0.0, 0.0]).state.players.action[0, 0] == float(Action.TURNING.value)
