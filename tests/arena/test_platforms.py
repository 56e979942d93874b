"""Stages in the fight's engine: platforms (landing from above, passing through from below, dropping through,
walking off an end), the collision-box landing on the main floor, each stage's blast zones, mixed batches."""

from __future__ import annotations

import pytest
import torch
from melee.enums import Action, Character

from melee_agent.arena import Arena
from melee_agent.arena.fight.ground import PASS_DELAY
from melee_agent.arena.fight.measured import MEASURED
from melee_agent.arena.stages import stage_named
from tests.fight_kit import AGENT, CPU, fight, frames, place

BF = stage_named("battlefield")
LEFT, TOP = BF.platforms[0], BF.platforms[2]
FALLING, LANDING = float(Action.FALLING.value), float(Action.LANDING.value)
PASS, SQUAT = float(Action.PLATFORM_DROP.value), float(Action.CROUCH_START.value)
FOX_GRAVITY = 0.23  # characterdata.csv


def _arena(stage: str = "battlefield", n: int = 1) -> Arena:
    env = fight(n, cpu="melee", stage=stage)
    place(env, CPU, position_x=80.0 if stage == "final_destination" else 60.0)  # Marth out of the way
    return env


def _ps(env: Arena, field: str, who: int = AGENT) -> float:
    return float(getattr(env.state.players, field)[0, who])


def _trace(env: Arena, n: int, fox: dict | None = None, first: dict | None = None) -> list[tuple[float, ...]]:
    """``n`` frames, Marth idle; each frame's Fox (x, y, on_ground, action)."""
    out = []
    for i in range(n):
        frames(env, 1, fox=first if (i == 0 and first is not None) else fox)
        out.append((_ps(env, "position_x"), _ps(env, "position_y"), _ps(env, "on_ground"), _ps(env, "action")))
    return out


FOX_BOX = MEASURED[Character.FOX]["ecb_air"]  # Fox's collision box bottom above his position, falling


def _air(env: Arena, **fields) -> None:
    """Fox airborne and falling, its collision box unlocked."""
    place(env, AGENT, **{"on_ground": 0.0, "action": FALLING, "jumps_left": 1.0, **fields})
    fs = env.state.fight
    env.state = env.state._replace(fight=fs._replace(ecb_lock=torch.zeros_like(fs.ecb_lock)))


def test_landing_on_a_platform_from_above():
    env = _arena()
    _air(env, position_x=-40.0, position_y=LEFT.height + 12.0, speed_y=-1.0)
    t = _trace(env, 20)
    landed = next(i for i, f in enumerate(t) if f[2] > 0)
    assert t[landed][1] == pytest.approx(LEFT.height) and t[landed][3] == LANDING
    # By the collision box: the position dips below the platform (by less than Fox's box bottom) before it lands.
    assert LEFT.height - FOX_BOX < t[landed - 1][1] < LEFT.height and t[landed - 1][2] == 0
    assert all(f[1] == pytest.approx(LEFT.height) and f[2] == 1 for f in t[landed:])  # it stays up there


def test_passing_through_a_platform_from_below_and_landing_on_it_coming_down():
    env = _arena()
    _air(env, position_x=-40.0, position_y=10.0, speed_y=3.68, action=float(Action.JUMPING_FORWARD.value))
    t = _trace(env, 80)
    above = [i for i, f in enumerate(t) if f[1] > LEFT.height]
    assert above and all(t[i][2] == 0 for i in range(above[0] + 1))  # rose through it without landing
    landed = next(i for i, f in enumerate(t) if f[2] > 0)
    assert landed > above[0] and t[landed][1] == pytest.approx(LEFT.height)
    # A jump too low for the box's bottom to clear the platform falls back through it to the floor.
    env = _arena()
    _air(env, position_x=-40.0, position_y=10.0, speed_y=2.2)
    t = _trace(env, 60)
    landed = next(i for i, f in enumerate(t) if f[2] > 0)
    assert max(f[1] for f in t) + FOX_BOX < LEFT.height + 2.0 and t[landed][1] == 0.0


def test_a_double_jump_lands_by_its_own_box_bottom():
    """The box's bottom follows the action (fight/measured.py): a double jump's lies higher than a fall's, so from
    the same height and speed the position sinks deeper below the platform, and lands a frame later."""
    landed, dips = {}, {}
    for name, action in (("fall", FALLING), ("double jump", float(Action.JUMPING_ARIAL_FORWARD.value))):
        env = _arena()
        _air(env, position_x=-40.0, position_y=LEFT.height + 1.0, speed_y=-2.8, action=action, action_frame=5.0)
        t = _trace(env, 6)
        landed[name] = next(i for i, f in enumerate(t) if f[2] > 0)
        assert t[landed[name]][1] == pytest.approx(LEFT.height)
        dips[name] = LEFT.height - t[landed[name] - 1][1]
    assert landed["double jump"] == landed["fall"] + 1
    assert dips["fall"] < FOX_BOX < dips["double jump"] < MEASURED[Character.FOX]["ecb_double_jump"]


def test_a_box_that_moves_up_below_a_platform_does_not_land_on_it():
    """The landing is the box's bottom crossing the platform from the frame before to this one: a fighter falling
    below a platform as its box unlocks (from its feet to FOX_BOX above them, past the platform's height) falls on
    through (slippi-js teams_time_p3...winner_blue.slp, Battlefield: Fox air dodges down at game frame 782 right under
    the left platform, as his jump's lock ends)."""
    env = _arena()
    place(env, AGENT, on_ground=0.0, action=float(Action.JUMPING_FORWARD.value), action_frame=10.0, jumps_left=1.0,
          position_x=-40.0, position_y=LEFT.height - FOX_BOX + 1.0, speed_y=-2.0)
    fs = env.state.fight
    env.state = env.state._replace(fight=fs._replace(ecb_lock=torch.ones_like(fs.ecb_lock),
                                                     ecb_last=torch.zeros_like(fs.ecb_last)))
    t = _trace(env, 6)
    assert all(f[2] == 0 for f in t) and t[-1][1] < LEFT.height - 10  # never caught: it fell on below


def _standing_on_left(env: Arena) -> None:
    place(env, AGENT, position_x=-40.0, position_y=LEFT.height)


def test_dropping_through_a_platform_with_a_flick_down():
    env = _arena()
    _standing_on_left(env)
    t = _trace(env, 40, fox={"sy": -1.0})
    acts = [f[3] for f in t]
    # The squat's three frames, then the drop (ftCo_Squat_IASA's countdown): airborne, -0.5 and gravity on frame 1.
    assert acts[:PASS_DELAY + 1] == [SQUAT] * (PASS_DELAY + 1) and acts[PASS_DELAY + 1] == PASS
    drop = t[PASS_DELAY + 1]
    assert drop[2] == 0 and drop[1] == pytest.approx(LEFT.height - 0.5 - FOX_GRAVITY)
    assert t[-1][1] == 0.0 and t[-1][2] == 1  # through it, down to the main floor (not caught by the one it left)


def test_no_drop_without_a_flick_or_off_a_platform():
    # The stick eased down past the drop's window (6 frames since it left the deadzone) only crouches.
    env = _arena()
    _standing_on_left(env)
    for sy in (-0.3, -0.4, -0.5, -0.55, -0.6, -0.62, -0.63, -0.64):  # left the smash deadzone at -0.3, not below -0.66
        frames(env, 1, fox={"sy": sy})
    t = _trace(env, 20, fox={"sy": -1.0})
    assert all(f[2] == 1 and f[1] == pytest.approx(LEFT.height) for f in t)
    # On the main floor a flick down crouches and stays.
    env = _arena()
    place(env, AGENT, position_x=0.0)
    t = _trace(env, 20, fox={"sy": -1.0})
    assert all(f[2] == 1 and f[1] == 0.0 and f[3] != PASS for f in t)


def test_dropping_through_from_shield():
    env = _arena()
    _standing_on_left(env)
    frames(env, 3, fox={"shield": 1})
    # Shielding with the stick already part way down (past the spot dodge's moment: ftCo_Guard_IASA checks escapes
    # first, the drop last), it goes on down within the drop's window: through the platform.
    fs = env.state.fight
    env.state = env.state._replace(fight=fs._replace(stick_y_prev=torch.full_like(fs.stick_y_prev, -0.55),
                                                     tilt_y=torch.full_like(fs.tilt_y, 2.0)))
    t = _trace(env, 4, fox={"shield": 1, "sy": -0.7})
    assert t[0][3] == PASS and t[-1][2] == 0 and t[-1][1] < LEFT.height



def test_walking_off_a_platforms_end():
    env = _arena()
    place(env, AGENT, position_x=LEFT.right - 3.0, position_y=LEFT.height, facing=1.0)
    t = _trace(env, 60, fox={"sx": 0.5})
    off = next(i for i, f in enumerate(t) if f[2] == 0)
    assert t[off][0] > LEFT.right and t[off][3] == FALLING
    assert t[-1][2] == 1 and t[-1][1] == 0.0  # down to the main floor


def test_grounded_moves_stop_at_a_platforms_end():
    env = _arena()
    place(env, AGENT, position_x=LEFT.right - 1.0, position_y=LEFT.height, facing=1.0)
    frames(env, 1, fox={"a": 1, "sx": 0.9, "sy": 0.0})  # a forward smash or tilt: locomotion, stays on
    frames(env, 10)
    assert _ps(env, "on_ground") == 1 and _ps(env, "position_x") <= LEFT.right


def test_landing_on_the_main_floor_by_the_collision_box():
    env = _arena("final_destination")
    _air(env, position_x=0.0, position_y=1.0, speed_y=-2.5)
    t = _trace(env, 3)
    # Frame 1: the position is below the floor (-1.73) but the box's bottom (4 above it) is not: still airborne.
    assert t[0][2] == 0 and t[0][1] == pytest.approx(1.0 - 2.5 - FOX_GRAVITY)
    assert t[1][2] == 1 and t[1][1] == 0.0 and t[1][3] == LANDING
    # Just off the ground (a jump's first frames: the box's bottom locked at the feet), it lands by the position.
    env = _arena("final_destination")
    place(env, AGENT, position_x=0.0, position_y=2.0, speed_y=-3.0, on_ground=0.0, action=FALLING, jumps_left=1.0)
    fs = env.state.fight
    env.state = env.state._replace(fight=fs._replace(ecb_lock=torch.full_like(fs.ecb_lock, 5.0)))
    t = _trace(env, 1)
    assert t[0][2] == 1 and t[0][1] == 0.0


def test_leaving_the_ground_locks_the_box_bottom():
    env = _arena("final_destination")
    place(env, AGENT, position_x=0.0)
    frames(env, 1, fox={"jump": 1})
    frames(env, 4)  # the jump squat, then airborne
    assert _ps(env, "on_ground") == 0 and 0 < float(env.state.fight.ecb_lock[0, AGENT]) <= 10


@pytest.mark.parametrize("x, y, ko_on_battlefield, ko_on_fd", [(230.0, 30.0, True, False), (0.0, 195.0, False, True),
                                                                 (-100.0, -120.0, True, False)])
def test_ko_at_the_stages_own_blast_zones(x, y, ko_on_battlefield, ko_on_fd):
    for stage, ko in (("battlefield", ko_on_battlefield), ("final_destination", ko_on_fd)):
        env = _arena(stage)
        _air(env, position_x=x, position_y=y, speed_y=0.0)
        frames(env, 1)
        assert (_ps(env, "stock") == 3.0) == ko, stage
        if ko:  # back on the stage's own respawn spot
            assert _ps(env, "position_x") == stage_named(stage).respawn_x[AGENT] and _ps(env, "on_ground") == 1


def test_one_batch_mixes_stages_each_with_its_geometry():
    env = Arena(4, cpu_level=9, seed=0, game="fight", cpu="melee", stage=["final_destination", "battlefield"],
                spread_stages=True, action_set="basic")
    env.reset()
    assert env.stage_names == ("final_destination", "battlefield") * 2
    for who, x in ((CPU, 60.0), (AGENT, 0.0)):
        place(env, who, position_x=x)
    _air(env, position_x=-40.0, position_y=LEFT.height + 6.0, speed_y=-1.0)
    frames(env, 30)
    ys = env.state.players.position_y[:, AGENT].tolist()
    assert ys == [0.0, pytest.approx(LEFT.height), 0.0, pytest.approx(LEFT.height)]  # the platform on Battlefield only
    _air(env, position_x=230.0, position_y=30.0, speed_y=0.0)
    frames(env, 1)
    assert env.state.players.stock[:, AGENT].tolist() == [4.0, 3.0, 4.0, 3.0]


def test_stages_are_drawn_by_weight_and_games_start_on_their_stage():
    env = Arena(400, cpu_level=9, seed=0, game="fight", cpu="melee", stage=["yoshis_story", "dreamland"],
                stage_weights=[3, 1])
    env.reset()
    names = env.stage_names
    assert 0.65 < names.count("yoshis_story") / len(names) < 0.85
    x = env.state.players.position_x
    edge = torch.tensor([stage_named(n).edge_x for n in names])
    assert bool((x.abs() <= edge.view(-1, 1)).all())  # both fighters start on the main floor of their stage
    one = Arena(2, game="fight", cpu="melee", stage="yoshis_story")
    one.reset()
    assert one.stage_names == ("yoshis_story",) * 2 and bool((one.state.players.position_x.abs() <= 56.0).all())


def test_stage_choice_errors_name_the_field():
    with pytest.raises(ValueError, match="stage: unknown stage 'fd'"):
        Arena(1, game="fight", cpu="melee", stage="fd")
    with pytest.raises(ValueError, match="stage_weights: 1 weights for 2 stages"):
        Arena(1, game="fight", cpu="melee", stage=["battlefield", "dreamland"], stage_weights=[1])
    with pytest.raises(ValueError, match="fight's engine"):
        Arena(1, game="dodge", cpu="designed", stage="battlefield")


def _cpu_frames(env: Arena, n: int) -> list[tuple[float, float, float, float]]:
    """``n`` decisions of the agent's noop against Melee's CPU; each Marth's (x, y, on_ground, action)."""
    out = []
    for _ in range(n):
        env.step(torch.full((env.num_envs,), env.noop_index))
        ps = env.state.players
        out.append(tuple(float(getattr(ps, f)[0, CPU]) for f in ("position_x", "position_y", "on_ground", "action")))
    return out


def test_melee_cpu_jumps_up_to_a_target_on_a_platform():
    env = _arena()
    place(env, AGENT, position_x=-30.0, position_y=LEFT.height)
    place(env, CPU, position_x=-45.0, facing=1.0)  # under the platform, the agent 61 degrees up: the jump script
    t = _cpu_frames(env, 60)
    jumps = (float(Action.JUMPING_FORWARD.value), float(Action.JUMPING_BACKWARD.value))
    assert any(f[3] in jumps for f in t)  # ftCo_800A0148's full hop
    assert any(f[2] == 1 and f[1] == pytest.approx(LEFT.height) for f in t)  # up through it and onto it


def test_melee_cpu_drops_through_toward_a_target_below():
    env = _arena()
    place(env, AGENT, position_x=-55.0)
    place(env, CPU, position_x=0.0, position_y=TOP.height, facing=-1.0)
    t = _cpu_frames(env, 60)
    assert PASS in [f[3] for f in t]  # ftCo_800A08F0's stick down, the squat's drop
    assert min(f[1] for f in t) < TOP.height - 10.0


def test_melee_cpu_ignores_platform_rules_on_final_destination():
    # A target high above on Final Destination (no floor there): the CPU walks under it as before, no jump script.
    from melee_agent.arena.cpu.melee_data import PLAT_DROP, PLAT_JUMP

    env = _arena("final_destination")
    place(env, AGENT, position_x=0.0, position_y=30.0, on_ground=0.0, action=FALLING, speed_y=0.0)
    place(env, CPU, position_x=-40.0, facing=1.0)
    env.step(torch.full((1,), env.noop_index))
    assert float(env.state.fight.cpu_plan[0]) not in (PLAT_JUMP, PLAT_DROP)


def test_a_full_jump_onto_yoshis_storys_side_platform_takes_the_replays_airtime():
    # pyslippi_game.slp / libmelee_test_game_1.slp: Fox's full jump from the floor onto a side platform is 26 frames
    # of JUMPING_FORWARD, then LANDING (the collision box lands it; by its position it would take 24).
    env = _arena("yoshis_story")
    place(env, CPU, position_x=50.0)
    place(env, AGENT, position_x=-42.0)
    t = _trace(env, 40, fox={"jump": 1})
    acts = [f[3] for f in t]
    air = acts.count(float(Action.JUMPING_FORWARD.value))
    landed = acts.index(LANDING)
    assert air == 26 and t[landed][1] == pytest.approx(stage_named("yoshis_story").platforms[0].height)


def test_place_keeps_a_jumps_collision_box_lock():
    env = _arena("final_destination")
    env.place(AGENT, position_x=0.0, position_y=8.0, on_ground=0.0, action=float(Action.JUMPING_FORWARD.value),
              action_frame=3.0, speed_y_self=2.0)
    assert float(env.state.fight.ecb_lock[0, AGENT]) == 8.0  # 10 frames from the takeoff, 2 of them gone
    env.place(AGENT, action=FALLING, action_frame=3.0)
    assert float(env.state.fight.ecb_lock[0, AGENT]) == 0.0
