"""Fight hits: a real hit's knockback and hitstun against the formula by hand; moves deal the game data's damage."""

from __future__ import annotations

import math

import pytest
import torch
from melee.enums import Action, Character

from melee_agent.arena import gamedata as gd
from melee_agent.arena.fight.moves import Slot
from tests.fight_kit import AGENT, CPU, fight, frames, place, slot_of


def test_a_jab_hit_matches_the_knockback_formula_by_hand():
    env = fight()
    place(env, AGENT, position_x=0.0, facing=1.0)
    place(env, CPU, position_x=8.0, facing=-1.0, percent=20.0)
    frames(env, 2, fox_first={"a": 1})  # A on frame 1; Fox's jab1 hitboxes are out on frames 2-3
    ps, fs = env.state.players, env.state.fight
    hb = gd.hitboxes_at(Character.FOX, Action.NEUTRAL_ATTACK_1, 2)[0]  # the lowest id touches: id 0
    d, w = hb.damage, gd.attributes(Character.MARTH).weight  # 4%, Marth's weight 87
    # SmashWiki: KB = ((p/10 + p*d/20) * 200/(w+100) * 1.4 + 18) * g/100 + b, p = floor(percent) + d
    p = math.floor(20.0) + d
    kb = ((p / 10 + p * d / 20) * 200 / (w + 100) * 1.4 + 18) * hb.kb_growth / 100 + hb.base_kb
    assert ps.percent[0, CPU].item() == pytest.approx(24.0)
    assert ps.hitstun_frames_left[0, CPU].item() == math.floor(0.4 * kb)  # hitstun floor(0.4 KB)
    assert fs.launch_kb[0, CPU].item() == pytest.approx(kb, rel=1e-5)
    assert fs.hitlag_left[0].tolist() == [math.floor(d / 3 + 3)] * 2  # hitlag floor(d/3 + 3), both fighters
    frames(env, 4)  # hitlag: frozen for 4 frames, then the launch at the jab's 70 degrees (no DI)
    ps = env.state.players
    speed = 0.03 * kb  # launch speed 0.03 x KB
    assert ps.speed_x_attack[0, CPU].item() == pytest.approx(speed * math.cos(math.radians(hb.angle)), rel=1e-4)
    assert ps.speed_y_attack[0, CPU].item() == pytest.approx(speed * math.sin(math.radians(hb.angle)), rel=1e-4)
    x0 = ps.position_x[0, CPU].item()
    frames(env, 1)  # then it moves, decaying by 0.051 per frame
    ps = env.state.players
    assert math.hypot(ps.speed_x_attack[0, CPU].item(), ps.speed_y_attack[0, CPU].item()) == pytest.approx(
        speed - 0.051, rel=1e-4)
    assert ps.position_x[0, CPU].item() > x0


@pytest.mark.parametrize("name,setup,inputs,action", [
    ("jab", {}, {"a": 1}, Action.NEUTRAL_ATTACK_1),
    ("ftilt", {}, {"a": 1, "sx": 0.5}, Action.FTILT_MID),
    ("dtilt", {}, {"a": 1, "sy": -0.5}, Action.DOWNTILT),
    ("fsmash", {}, {"a": 1, "sx": 1.0}, Action.FSMASH_MID),
    ("nair", {"position_y": 6.0, "on_ground": 0.0, "action": float(Action.FALLING.value)}, {"a": 1}, Action.NAIR),
])
def test_moves_connect_and_deal_the_game_datas_damage(name, setup, inputs, action):
    env = fight()
    place(env, AGENT, position_x=0.0, facing=1.0, **setup)
    place(env, CPU, position_x=9.0, facing=-1.0)
    taken = frames(env, 1, fox_first=inputs)
    assert env.state.players.action[0, AGENT].item() == action.value, name
    taken += frames(env, 25)
    damages = {h.damage for f in range(1, 40) for h in gd.hitboxes_at(Character.FOX, action, f)}
    assert taken[0, CPU].item() in damages, (name, taken, damages)
    assert taken[0, AGENT].item() == 0


def test_a_multi_hit_move_hits_again_when_its_hitboxes_come_back():
    env = fight()
    # Fox's drill (dair) comes out in bursts: frames 5-6, 8-9, ... each one hits again.
    place(env, AGENT, position_x=0.0, position_y=14.0, on_ground=0.0, facing=1.0, action=float(Action.FALLING.value))
    place(env, CPU, position_x=1.0, facing=-1.0)
    env.state = env.state._replace(players=env.state.players._replace(
        speed_y=torch.tensor([[0.23, 0.0]])))  # hover a moment
    taken = frames(env, 1, fox_first={"a": 1, "sy": -1.0})
    assert slot_of(env, AGENT).item() == Slot.DAIR
    taken += frames(env, 12)
    assert taken[0, CPU].item() > 3.0  # more than one hit of 2-3%


def test_stale_moves_deal_less():
    env = fight()
    place(env, AGENT, position_x=0.0, facing=1.0)
    place(env, CPU, position_x=8.0, facing=-1.0)
    first = frames(env, 40, fox_first={"a": 1})[0, CPU].item()
    place(env, CPU, position_x=8.0, facing=-1.0)
    place(env, AGENT, position_x=0.0, facing=1.0)
    second = frames(env, 40, fox_first={"a": 1})[0, CPU].item()
    assert first == 4.0 and second == pytest.approx(4.0 * (1 - 0.09))  # SmashWiki: the last move stales by 9%


def test_a_hit_puts_its_move_on_ko_credit_until_the_victim_stands_again():
    from melee_agent.report.evaluate import ko_cause_names

    fsmash = {v: k for k, v in ko_cause_names().items()}["fsmash"]
    env = fight()
    place(env, AGENT, position_x=0.0, facing=1.0)
    place(env, CPU, position_x=9.0, facing=-1.0, percent=10.0)
    assert env.state.fight.ko_credit[0].tolist() == [-1.0, -1.0]  # a new game: nothing on credit
    frames(env, 1, fox_first={"a": 1, "sx": 1.0})
    for _ in range(30):  # the fsmash connects: its attack id is on Marth's credit, through hitlag and flight
        frames(env, 1)
        if env.state.players.hitstun_frames_left[0, CPU] > 0:
            break
    assert env.state.fight.ko_credit[0, CPU].item() == fsmash
    assert env.state.fight.ko_credit[0, AGENT].item() == -1.0  # Fox was not hit
    for _ in range(600):  # Marth flies, falls and lands (the CPU's reactions are irrelevant here)
        if env.state.players.hitstun_frames_left[0, CPU] <= 0 and env.state.players.on_ground[0, CPU] > 0:
            break
        assert env.state.fight.ko_credit[0, CPU].item() == fsmash
        frames(env, 1)
    else:
        raise AssertionError("Marth never stood again")
    frames(env, 1)
    assert env.state.fight.ko_credit[0, CPU].item() == -1.0  # standing again: the credit is gone
