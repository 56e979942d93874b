"""The dodging arena's hits: every hitbox's values come from the game data, the lowest touching id
hits, and knockback, hitstun and launch follow Melee's formulas (hand computations written out)."""

from __future__ import annotations

import math

import pytest
import torch
from melee.enums import Action, Character

from melee_agent.arena import Arena, gamedata
from melee_agent.arena import libmelee_data as d
from melee_agent.arena.env_state import AGENT, CPU, with_player
from melee_agent.arena.dodge.frame import NO_MOVE, _hits
from melee_agent.arena.dodge.tables import MOVE_INDEX, MOVES

FIELDS = ("damage", "angle", "base_kb", "kb_growth", "set_kb")


@pytest.mark.parametrize("name", ["jab", "ftilt", "dtilt", "fsmash", "dash_attack", "shine"])
def test_move_tables_hold_the_game_data_for_every_frame_and_hitbox(name):
    env = Arena(1, seed=0)
    mv = MOVES[MOVE_INDEX[name]]
    character = Character.FOX if name == "shine" else Character.MARTH
    seen = 0
    for f in range(1, mv.length + 1):
        game = {h.hitbox_id: h for h in gamedata.hitboxes_at(character, mv.action, f)}
        for k in range(4):
            got = tuple(float(getattr(env.T, n)[MOVE_INDEX[name], f, k]) for n in FIELDS)
            want = tuple(float(getattr(game[k], n)) for n in FIELDS) if k in game else (0.0,) * 5
            assert got == want, (name, f, k)
            assert (float(env.T.circles[MOVE_INDEX[name], f, k, 2]) > 0) == (k in game)
            seen += k in game
    assert seen > 0


def test_the_issues_corrected_values():
    """Issue 22's list: ftilt 30/70, fsmash 14% base 60, dash attack 70/55 at 110 degrees, shine 0 degrees."""
    mv = {m.name: m for m in MOVES}
    assert mv["ftilt"].hitbox(7, 0)[2:4] == (30.0, 70.0)
    assert mv["fsmash"].hitbox(10, 0)[0] == 14.0 and mv["fsmash"].hitbox(10, 0)[2] == 60.0
    assert mv["dash_attack"].hitbox(12, 0)[1:4] == (110.0, 70.0, 55.0)
    assert mv["shine"].hitbox(1, 0) == (5.0, 0.0, 0.0, 100.0, 80.0)


def _hit_once(move: str, attacker: int, frame: int, victim_x: list[float], percent: float = 0.0):
    """Resolve one frame's hits with ``attacker`` at x = 0 facing right on ``frame`` of ``move`` and
    its opponent standing at each of ``victim_x``."""
    n = len(victim_x)
    env = Arena(n, cpu_level=9, seed=0, reward="damage")
    env.reset()
    victim = 1 - attacker
    s = with_player(env.state, attacker, position_x=0.0, position_y=0.0, facing=1.0, on_ground=1.0,
                    move=float(MOVE_INDEX[move]), action=float(MOVES[MOVE_INDEX[move]].action),
                    action_frame=float(frame), hit_done=0.0, invulnerability_left=0.0)
    s = with_player(s, victim, position_x=torch.tensor(victim_x), position_y=0.0, on_ground=1.0, facing=-1.0,
                    move=NO_MOVE, action=float(Action.STANDING.value), percent=percent, invulnerability_left=0.0,
                    hit_done=0.0)
    out = _hits(s.players, env.T, torch.zeros(n, 2, dtype=torch.bool))
    ps = out.players
    return (out.damage[:, victim], ps.hitstun_frames_left[:, victim], ps.speed_x_attack[:, victim],
            ps.speed_y_attack[:, victim], ps.on_ground[:, victim], ps.action[:, victim])


def test_shine_is_set_knockback_at_0_degrees_whatever_marths_percent():
    # Set knockback 80 (growth 100, base 0) on Marth (weight 87): p -> 10, d -> 80:
    # 10/10 + 10*80/20 = 41; * 200/187 = 43.850267; * 1.4 = 61.390374; + 18 = 79.390374
    kbv = 41 * 200 / 187 * 1.4 + 18
    for percent in (0.0, 60.0):
        dmg, stun, vx, vy, ground, act = _hit_once("shine", AGENT, 1, [5.0], percent)
        assert dmg.item() == 5.0
        assert stun.item() == math.floor(0.4 * kbv) == 31
        assert vx.item() == pytest.approx(0.03 * kbv, abs=1e-5) and vy.item() == 0.0  # 0 degrees, away from Fox
        assert ground.item() == 1.0  # a horizontal launch leaves Marth on the ground, sliding
        assert act.item() == Action.DAMAGE_HIGH_1.value  # 79.39 < 80: no tumble


def test_fsmash_lowest_touching_id_hits_and_the_tipper_only_alone():
    # fsmash frame 12 (hitboxes.csv, Marth action 60): id 0 at x 18.63 r 3.906, id 3 (tipper) at x 24.45 r 3.906;
    # Fox's capsule radius 3.5, so id 0 reaches Fox up to x 26.04 and the tipper from 17.04 to 31.86.
    dmg, stun, vx, vy, ground, act = _hit_once("fsmash", CPU, 12, [22.0, 28.0])
    assert dmg.tolist() == [14.0, 20.0]
    # sword, Fox at 0%: p = 14, d = 14: 1.4 + 9.8 = 11.2; * 200/175 = 12.8; * 1.4 = 17.92; + 18 = 35.92;
    # * 0.70 = 25.144; + 60 = 85.144. tipper: p = d = 20: 2 + 20 = 22; * 8/7 = 25.142857; * 1.4 = 35.2; + 18 = 53.2;
    # * 0.70 = 37.24; + 80 = 117.24. Sakurai angle on a grounded victim above 32.1: 44 degrees.
    for i, kbv in enumerate((85.144, 117.24)):
        assert stun[i].item() == math.floor(0.4 * kbv)
        speed = 0.03 * kbv
        assert vx[i].item() == pytest.approx(speed * math.cos(math.radians(44)), abs=1e-4)
        assert vy[i].item() == pytest.approx(speed * math.sin(math.radians(44)), abs=1e-4)
        assert ground[i].item() == 0.0 and act[i].item() == Action.DAMAGE_FLY_NEUTRAL.value


def test_dash_attack_sends_up_and_behind_marth_at_110_degrees():
    # dash attack frame 12, only id 0 reaches x 17 (x 11.03 r 3.906; ids 1-3 end by 16.17): 11%, 110 degrees,
    # base 70, growth 55. Fox at 0%: p = d = 11: 1.1 + 6.05 = 7.15; * 8/7 = 8.171429; * 1.4 = 11.44; + 18 = 29.44;
    # * 0.55 = 16.192; + 70 = 86.192
    kbv = 86.192
    dmg, stun, vx, vy, ground, act = _hit_once("dash_attack", CPU, 12, [17.0])
    assert dmg.item() == 11.0 and stun.item() == math.floor(0.4 * kbv) == 34
    assert vx.item() == pytest.approx(0.03 * kbv * math.cos(math.radians(110)), abs=1e-4)  # < 0: behind Marth
    assert vy.item() == pytest.approx(0.03 * kbv * math.sin(math.radians(110)), abs=1e-4)
    assert act.item() == Action.DAMAGE_FLY_NEUTRAL.value


def test_weights_are_the_game_datas():
    assert (d.FOX_WEIGHT, d.MARTH_WEIGHT) == (75.0, 87.0)
