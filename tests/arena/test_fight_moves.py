"""Fight mechanics: L-cancel, shields, grabs and throws, the firefox to the ledge."""

from __future__ import annotations

import pytest
import torch
from melee.enums import Action, Character

from melee_agent.arena import gamedata as gd
from melee_agent.arena import knockback as kb
from melee_agent.arena.fight.moves import Slot
from tests.fight_kit import AGENT, CPU, EDGE, fight, frames, place, slot_of

FALLING = float(Action.FALLING.value)


@pytest.mark.parametrize("lcancel", [False, True])
def test_l_cancel_halves_an_aerials_landing_lag(lcancel):
    env = fight()
    place(env, CPU, position_x=-60.0)
    place(env, AGENT, position_x=40.0, position_y=20.0, on_ground=0.0, facing=1.0, action=FALLING)
    frames(env, 1, fox_first={"a": 1})  # nair, falling from 20 units: it lands mid-move (frame ~13)
    landed_at = None
    for _ in range(30):
        low = env.state.players.position_y[0, AGENT].item() < 8.0
        frames(env, 1, fox={"shield": 1} if (lcancel and low) else {})
        if env.state.players.on_ground[0, AGENT].item() > 0:
            landed_at = env.state.players.busy_left[0, AGENT].item()
            break
    nair = gd.move(Character.FOX, Action.NAIR)  # landing lag 15, L-cancelled 7 (gamedata)
    assert env.state.players.action[0, AGENT].item() == Action.NAIR_LANDING.value
    assert landed_at == (nair.lcancel_landing_lag if lcancel else nair.landing_lag)


def test_a_shield_takes_damage_and_breaks():
    env = fight()
    place(env, AGENT, position_x=0.0, facing=1.0)
    place(env, CPU, position_x=8.0, facing=-1.0)
    frames(env, 2, marth={"shield": 1})
    assert env.state.players.action[0, CPU].item() == Action.SHIELD.value
    before = env.state.players.shield_strength[0, CPU].item()
    taken = frames(env, 3, fox_first={"a": 1}, marth={"shield": 1})
    after = env.state.players.shield_strength[0, CPU].item()
    assert taken[0, CPU].item() == 0  # a shielded hit deals no damage...
    assert before - after == pytest.approx(4.0 + 3 * 0.28, abs=1e-4)  # ...but 4 off the shield (plus its decay)
    assert env.state.players.hitstun_frames_left[0, CPU].item() > 0  # shieldstun
    frames(env, 30, marth={"shield": 1})
    env.state = env.state._replace(players=env.state.players._replace(
        shield_strength=torch.tensor([[60.0, 2.0]])))
    frames(env, 3, fox_first={"a": 1}, marth={"shield": 1})
    assert slot_of(env, CPU).item() == Slot.SHIELD_BREAK


def test_a_grab_and_a_forward_throw():
    env = fight()
    place(env, AGENT, position_x=0.0, facing=1.0)
    place(env, CPU, position_x=10.0, facing=-1.0, percent=50.0)
    frames(env, 8, fox_first={"z": 1})
    assert slot_of(env, AGENT).item() == Slot.GRAB_HOLD and slot_of(env, CPU).item() == Slot.HELD
    thrown = frames(env, 20, fox_first={"sx": 1.0})
    t = gd.throw(Character.FOX, Action.THROW_FORWARD)  # 3%, 45 degrees, released on frame 11
    assert thrown[0, CPU].item() == pytest.approx(t.damage)
    assert env.state.players.percent[0, CPU].item() == pytest.approx(50.0 + t.damage)
    assert env.state.players.hitstun_frames_left[0, CPU].item() > 0
    assert env.state.players.position_x[0, CPU].item() > 20.0  # launched forward


def test_a_throw_launches_as_if_the_thrown_fighter_weighed_100():
    """ikneedata's calculator (and real replays, docs/fidelity.md) take a throw's knockback at weight 100.
    Fox's forward throw on Marth at 150%: p = 153, KB = ((15.3 + 22.95) * 1.4 + 18) * 1.3 + 35 = 128.0,
    hitstun 51; with Marth's own weight (87) it would be 132.9, hitstun 53."""
    env = fight()
    place(env, AGENT, position_x=0.0, facing=1.0)
    place(env, CPU, position_x=10.0, facing=-1.0, percent=150.0)
    frames(env, 8, fox_first={"z": 1})
    t = gd.throw(Character.FOX, Action.THROW_FORWARD)
    hitstun = None
    for i in range(20):
        before = env.state.players.percent[0, CPU].item()
        frames(env, 1, fox_first={"sx": 1.0} if i == 0 else {})
        if env.state.players.percent[0, CPU].item() > before:
            hitstun = env.state.players.hitstun_frames_left[0, CPU].item()
            break

    def expected(weight: float) -> float:
        p = kb.knockback_percent(torch.tensor(150.0), torch.tensor(t.damage))
        return float(kb.hitstun(kb.knockback(p, t.damage, weight, t.kb_growth, t.base_kb, t.set_kb)))

    assert hitstun == expected(kb.THROW_WEIGHT) == 51.0
    assert expected(gd.attributes(Character.MARTH).weight) == 53.0


def test_a_pummel_damages_the_held_fighter():
    env = fight()
    place(env, AGENT, position_x=0.0, facing=1.0)
    place(env, CPU, position_x=10.0, facing=-1.0)
    frames(env, 8, fox_first={"z": 1})
    taken = frames(env, 10, fox_first={"a": 1})
    assert taken[0, CPU].item() == 3.0 and slot_of(env, CPU).item() == Slot.HELD


def test_the_firefox_recovers_to_the_ledge_from_below_and_fox_gets_up():
    env = fight()
    place(env, CPU, position_x=-40.0)
    place(env, AGENT, position_x=EDGE + 12.0, position_y=-60.0, on_ground=0.0, facing=-1.0, action=FALLING,
          jumps_left=0.0)
    frames(env, 1, fox_first={"b": 1, "sy": 1.0}, fox={"sy": 1.0})
    assert slot_of(env, AGENT).item() == Slot.UP_B
    hung = False
    for _ in range(100):
        frames(env, 1, fox={"sy": 1.0})
        if slot_of(env, AGENT).item() == Slot.LEDGE_HANG:
            hung = True
            break
    assert hung, env.state.players
    frames(env, 5)
    frames(env, 40, fox={"sx": -1.0})  # toward the stage: get up
    ps = env.state.players
    assert ps.on_ground[0, AGENT].item() == 1 and abs(ps.position_x[0, AGENT].item()) < EDGE
    assert ps.stock[0, AGENT].item() == 4


def test_a_double_jump_and_fast_fall():
    env = fight()
    place(env, CPU, position_x=-40.0)
    place(env, AGENT, position_x=30.0, position_y=30.0, on_ground=0.0, action=FALLING, jumps_left=1.0)
    frames(env, 1, fox={"jump": 1})
    a = gd.attributes(Character.FOX)
    assert env.state.players.speed_y[0, AGENT].item() == pytest.approx(a.jump_v * a.air_jump_multiplier - a.gravity)
    assert env.state.players.jumps_left[0, AGENT].item() == 0
    frames(env, 25)
    frames(env, 1, fox={"sy": -1.0})
    assert env.state.players.speed_y[0, AGENT].item() == pytest.approx(-a.fast_fall_velocity)


def test_the_firefox_travel_hits_with_the_hitbox_the_game_makes_in_code():
    """Its hitbox is not in the dump (the game makes it in code): its values are gamedata's
    code_hitboxes.csv, on the frames and at the positions libmelee recorded. Fox starts at a spread of
    distances from an idle Marth; some firefoxes connect, each dealing the code hitbox's damage once and
    taking the KO credit under up-b's attack id (20)."""
    code = gd.code_hitbox(Character.FOX, 356)  # 14%
    xs = [-40.0 - 4.0 * i for i in range(25)]  # beyond the reach of the charge's flames (2% hits of their own)
    env = fight(len(xs))  # one environment per start x
    place(env, CPU, position_x=0.0, facing=-1.0)
    place(env, AGENT, position_y=8.0, on_ground=0.0, facing=1.0, jumps_left=0.0, action=FALLING)
    env.state = env.state._replace(players=env.state.players._replace(
        position_x=torch.stack((torch.tensor(xs), torch.zeros(len(xs))), 1)))
    took = frames(env, 90, fox_first={"b": 1, "sy": 1.0}, fox={"sx": 1.0})[:, CPU]  # up-b, then aim at Marth
    hit = took == code.damage
    assert hit.any(), took
    assert ((took == 0) | hit).all(), took
    credit = env.state.fight.ko_credit[hit, CPU]  # -1 where Marth has landed and stood again since
    assert (credit == code.attack_id).any() and ((credit == code.attack_id) | (credit == -1)).all(), credit
