"""The ``fight`` action set: every macro, played frame by frame into the arena's fight, makes Fox do its move.

Each macro's controller rows go through the arena's own reading of the agent's controller
(:func:`melee_agent.arena.fight.fighter.agent_pad`, what ``Arena.step`` feeds a fight frame) with
Marth standing still far away. Moves are named by libmelee's ``Action`` ids.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from melee.enums import Action, Character

from melee_agent.envs.actions import ACTION_SETS, SH_AERIAL_LANDS
from melee_agent.arena import gamedata as gd
from melee_agent.arena.fight import fighter
from melee_agent.arena.fight.frame import count_down, play
from melee_agent.arena.fight.moves import AGENT_COL, Slot, row
from melee_agent.arena.fight.state import Pad
from tests.fight_kit import AGENT, CPU, EDGE, fight, place
from tests.recording_controller import held, recording_controller

S = ACTION_SETS["fight"]
FOX = gd.attributes(Character.FOX)
NEUTRAL_ROW = torch.as_tensor(S.table[S.noop_index, 0])


def setup(start: str = "stand", facing: float = 1.0):
    """A fight with Fox at the centre (standing, in the air, on the right ledge or holding Marth) and Marth still."""
    env = fight()
    if start == "grab":
        place(env, AGENT, position_x=0.0, facing=1.0)
        place(env, CPU, position_x=10.0, facing=-1.0, percent=30.0)
        drive(env, ["grab"], extra=10)
        assert env.state.players.action[0, AGENT].item() == Action.GRAB_WAIT.value
        return env
    place(env, CPU, position_x=-70.0, facing=1.0)
    if start == "stand":
        place(env, AGENT, position_x=0.0, facing=facing)
    elif start == "air":  # past the jump's peak, falling, the double jump left
        place(env, AGENT, position_x=0.0, position_y=40.0, on_ground=0.0, speed_y=-0.5, facing=facing,
              action=float(Action.FALLING.value), jumps_left=1.0)
    elif start == "ledge":
        r = row(AGENT_COL, Slot.LEDGE_HANG)
        place(env, AGENT, position_x=EDGE + 3.0, position_y=-12.0, on_ground=0.0, facing=-1.0, move=float(r),
              busy_left=200.0, action=float(Action.EDGE_HANGING.value), action_frame=10.0, jumps_left=1.0)
    return env


def drive(env, names: list[str], extra: int = 0) -> list[dict[str, float]]:
    """Play the macros' frames (then ``extra`` neutral ones) into the fight; Fox's state after each frame."""
    rows = [torch.as_tensor(S.table[S.index(n), i]) for n in names for i in range(int(S.lengths[S.index(n)]))]
    rows += [NEUTRAL_ROW] * extra
    still = (torch.zeros(1, dtype=torch.bool),) * 5 + (torch.zeros(1),) * 2
    out = []
    for r in rows:
        state, frozen = count_down(env.state)
        fox = fighter.agent_pad(r.view(-1, 1))
        pad = Pad(*(torch.stack((f, m), 1) for f, m in zip(fox, still)))
        env.state = play(state, pad, frozen, env._consts.fight.table, env._consts.spawn_x).state
        p = env.state.players
        out.append({k: float(getattr(p, k)[0, AGENT]) for k in (
            "action", "on_ground", "busy_left", "position_x", "position_y", "speed_x", "speed_y", "facing",
            "fast_falling", "jumps_left")} | {"aim": float(env.state.fight.aim[0, AGENT])})
    return out


def actions_of(trace) -> list[str]:
    seq: list[str] = []
    for f in trace:
        name = Action(int(f["action"])).name
        if not seq or seq[-1] != name:
            seq.append(name)
    return seq


# name -> (start, the action sequence's first moves in order, the facing afterwards or None)
GROUND = {
    # Issue 49: the arena moves as Melee does (arena/fight/ground.py). From standing facing right, walking left is a
    # turn first (11 frames, facing left from its 6th), a walk ramps up (a slow walk, then a middle one), and a dash
    # left is a smash turn and then the dash.
    "walk_left": ("stand", ["TURNING", "STANDING"], -1), "walk_right": ("stand", ["WALK_SLOW", "WALK_MIDDLE"], 1),
    "dash_left": ("stand", ["TURNING", "DASHING"], -1), "dash_right": ("stand", ["DASHING"], 1),
    "jab": ("stand", ["NEUTRAL_ATTACK_1"], 1),
    "ftilt_left": ("stand", ["FTILT_MID"], -1), "ftilt_right": ("stand", ["FTILT_MID"], 1),
    "utilt": ("stand", ["UPTILT"], 1), "dtilt": ("stand", ["DOWNTILT"], 1),
    "fsmash_left": ("stand", ["FSMASH_MID"], -1), "fsmash_right": ("stand", ["FSMASH_MID"], 1),
    "usmash": ("stand", ["UPSMASH"], 1), "dsmash": ("stand", ["DOWNSMASH"], 1),
    # Issue 49: from standing facing right, the dash attack's left flick is a smash turn, and A on the turn's
    # second frame, the stick held left, is a forward tilt that way (the arena's turn to a tilt's stick).
    "dash_attack_left": ("stand", ["TURNING", "FTILT_MID"], -1),
    "dash_attack_right": ("stand", ["DASHING", "DASH_ATTACK"], 1),
    "shine": ("stand", ["DOWN_B_GROUND_START", "DOWN_B_GROUND"], 1),
    "shine_jc": ("stand", ["DOWN_B_GROUND_START", "KNEE_BEND", "JUMPING_FORWARD"], 1),
    "side_b_left": ("stand", ["SWORD_DANCE_2_HIGH"], -1), "side_b_right": ("stand", ["SWORD_DANCE_2_HIGH"], 1),
    "grab": ("stand", ["GRAB"], 1),
    "shield": ("stand", ["SHIELD"], 1),
    "spot_dodge": ("stand", ["SPOTDODGE", "STANDING"], 1),
    "roll_left": ("stand", ["ROLL_BACKWARD", "STANDING"], 1),  # facing right: a roll left is backward
    "roll_right": ("stand", ["ROLL_FORWARD", "STANDING"], -1),  # ... and a forward roll ends facing back
    "throw_up": ("grab", ["THROW_UP"], None), "throw_down": ("grab", ["THROW_DOWN"], None),
    "throw_left": ("grab", ["THROW_BACK"], None),  # Fox holds Marth facing right
    "throw_right": ("grab", ["THROW_FORWARD"], None),
    "double_jump": ("air", ["JUMPING_ARIAL_FORWARD"], None),
    # Fox faces right here: a double jump to the left is the game's backward one (ftCo_JumpAerial_Enter_Basic).
    "double_jump_left": ("air", ["JUMPING_ARIAL_BACKWARD"], None),
    "double_jump_right": ("air", ["JUMPING_ARIAL_FORWARD"], None),
    "fast_fall": ("air", ["FALLING"], None),
    "ledge_drop": ("ledge", ["FALLING"], None),
    "full_hop": ("stand", ["KNEE_BEND", "JUMPING_FORWARD"], 1),
    "short_hop": ("stand", ["KNEE_BEND", "JUMPING_FORWARD", "LANDING", "STANDING"], 1),
    "up_b_up": ("stand", ["SWORD_DANCE_3_LOW", "SWORD_DANCE_4_MID"], None),
    "up_b_left": ("stand", ["SWORD_DANCE_3_LOW", "SWORD_DANCE_4_MID"], -1),
    "up_b_right": ("stand", ["SWORD_DANCE_3_LOW", "SWORD_DANCE_4_MID"], 1),
}
# Short-hop aerials from standing facing right: (the aerial, the facing it is done in). Issue 49: the side aerials'
# one-frame facing tap toward the back is a turn in Melee, which faces the other way only on its 6th frame; the jump
# out of it on its 2nd keeps the facing (as the replays show), so from facing right sh_fair_left is a back air to the
# left and sh_bair_right a forward air to the right (the attack still goes the macro's way).
AERIALS = {"sh_nair": ("NAIR", 1), "sh_uair": ("UAIR", 1), "sh_dair": ("DAIR", 1),
           "sh_fair_right": ("FAIR", 1), "sh_fair_left": ("BAIR", 1),
           "sh_bair_right": ("FAIR", 1), "sh_bair_left": ("BAIR", 1)}


def test_the_set_has_every_macro_named_by_the_design():
    assert set(S.names) == set(GROUND) | set(AERIALS) | {"noop"}
    assert 40 <= S.num_actions <= 50 and S.names[S.noop_index] == "noop" and S.lengths[S.noop_index] == 1


@pytest.mark.parametrize("name", sorted(GROUND))
def test_each_macro_makes_fox_do_its_move(name):
    start, expected, facing = GROUND[name]
    env = setup(start)
    # (a normal landing plays its animation out before standing: Fox 27 frames)
    trace = drive(env, [name], extra=60 if name == "short_hop" else 30 if name == "spot_dodge" else 12)
    seq = actions_of(trace)
    assert seq[:len(expected)] == expected if start == "stand" else seq[0] == expected[0], (name, seq)
    if start == "stand":
        assert Action(int(trace[0]["action"])).name == expected[0]  # from standing, on the macro's first frame
    if facing is not None:
        assert trace[-1]["facing"] == facing, name


def test_full_and_short_hops_leave_at_the_games_jump_speeds():
    full = drive(setup(), ["full_hop"])
    short = drive(setup(), ["short_hop"])
    # The jump squat (3 frames) ends on the 4th, the first airborne frame: it rises by the whole jump speed, gravity
    # from the next (issue 49: ftCo_Jump_Phys skips its first frame; the replays rise 3.68 on it for Fox's full hop).
    assert full[3]["speed_y"] == pytest.approx(FOX.jump_v, abs=1e-5)
    assert full[3]["position_y"] == pytest.approx(FOX.jump_v, abs=1e-5)
    assert full[4]["speed_y"] == pytest.approx(FOX.jump_v - FOX.gravity, abs=1e-5)
    assert short[3]["speed_y"] == pytest.approx(FOX.short_hop_v, abs=1e-5)


def test_double_jumps_go_up_and_drift_their_way():
    for name, sign in (("double_jump", 0), ("double_jump_left", -1), ("double_jump_right", 1)):
        t = drive(setup("air"), [name])
        assert t[0]["speed_y"] > 0 and t[-1]["jumps_left"] == 0, name
        assert np.sign(round(t[-1]["speed_x"], 3)) == sign, name


def test_fast_fall_and_ledge_drop():
    t = drive(setup("air"), ["fast_fall"])
    assert t[-1]["fast_falling"] == 1 and t[-1]["speed_y"] == pytest.approx(-FOX.fast_fall_velocity)
    t = drive(setup("ledge"), ["ledge_drop"], extra=5)
    assert Action(int(t[0]["action"])) == Action.FALLING and t[-1]["position_y"] < -12.0
    assert t[0]["fast_falling"] == 0  # let go without a fast fall


def test_up_b_flies_at_three_angles():
    for name, angle in (("up_b_up", 90), ("up_b_left", 135), ("up_b_right", 45)):
        t = drive(setup(), [name], extra=10)
        assert Action(int(t[-1]["action"])) == Action.SWORD_DANCE_4_MID, name
        assert math.degrees(t[-1]["aim"]) == pytest.approx(angle, abs=0.5), name
        assert t[-1]["position_y"] > 5.0, name


@pytest.mark.parametrize("name", sorted(AERIALS))
def test_short_hop_aerials_land_l_cancelled(name):
    aerial, facing = AERIALS[name]
    env = setup()
    trace = drive(env, [name], extra=30)
    seq = actions_of(trace)
    head = 1 if name.startswith(("sh_fair", "sh_bair")) else 0  # the facing tap: one walking (or turning) frame
    # Tapped right (toward the facing) a walk, which ramps up from slow; tapped left a turn (issue 49).
    tap = ["WALK_SLOW"] if name in ("sh_fair_right", "sh_bair_left") else ["TURNING"]
    assert seq == (tap if head else []) + ["KNEE_BEND", aerial, f"{aerial}_LANDING", "STANDING"], seq
    landed = next(i for i, f in enumerate(trace) if Action(int(f["action"])).name == f"{aerial}_LANDING")
    assert landed == head + SH_AERIAL_LANDS
    assert landed < len(S.actions[S.index(name)].frames)  # the landing happens within the macro
    move = gd.move(Character.FOX, Action[aerial])
    assert trace[landed]["busy_left"] == move.lcancel_landing_lag  # L-cancelled (not the full landing lag)
    assert trace[landed]["facing"] == facing


def test_every_macro_but_shield_ends_released():
    for a in S.actions:
        last = a.frames[-1]
        if a.name == "shield":
            assert "L" in last.buttons
        else:
            assert not last.buttons and last.main_stick == (0.5, 0.5) and last.l_shoulder == 0.0, a.name


def test_dolphin_plays_every_fight_macro_as_the_table_says():
    from melee_agent.envs.actions import apply_frame  # noqa: PLC0415

    for a in S.actions:
        c = recording_controller()
        for f in a.frames:
            apply_frame(c, f)
            c.flush()
        got = [held(cmds) for cmds in c.pipe.frames]
        assert len(got) == len(a.frames)
        for f, g in zip(a.frames, got):
            assert g["buttons"] == set(f.buttons), a.name
            assert np.sign(round(g["main"][0] - 0.5, 2)) == np.sign(round(f.main_stick[0] - 0.5, 2)), a.name
            assert np.sign(round(g["main"][1] - 0.5, 2)) == np.sign(round(f.main_stick[1] - 0.5, 2)), a.name
