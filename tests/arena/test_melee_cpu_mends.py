"""Melee's CPU (``cpu = "melee"``, arena/cpu/): each rule mended after a second reading of the decompilation, in a
scripted situation that triggers it (doldecomp/melee ``ftcpuattack.c``, ``ftCo_0A01.c``; the function beside each)."""

from __future__ import annotations

import torch
from melee.enums import Action

from melee_agent.arena import Arena
from melee_agent.arena.cpu import melee_attack, melee_data as md, melee_defend, melee_move
from melee_agent.arena.cpu.common import PadOut
from melee_agent.arena.cpu.melee import control
from melee_agent.arena.cpu.melee_frame import Out, carried, see
from melee_agent.arena.env_state import with_game
from melee_agent.arena.fight.frame import EDGE, count_down
from melee_agent.arena.fight.moves import Slot, row
from tests.fight_kit import AGENT, CPU, fight, frames, place

ROLL = float(Action.ROLL_FORWARD.value)
SPOT_DODGE = float(Action.SPOTDODGE.value)


def _set_fight(env: Arena, **fields) -> None:
    """Set FightState fields: ``[B]`` ones as given, ``[B, 2]`` ones as ``(fox, marth)`` pairs."""
    fs = env.state.fight
    out = {}
    for k, v in fields.items():
        cur = getattr(fs, k)
        out[k] = torch.zeros_like(cur) + (torch.tensor(v, dtype=cur.dtype) if isinstance(v, tuple) else v)
    env.state = env.state._replace(fight=fs._replace(**out))


def _control(env: Arena):
    c = env._consts.fight
    return control(env.state, c.table, c.melee_levels, env._consts.seed, EDGE)


def _fox_as(env: Arena, slot: int, frame: int, x: float, facing: float) -> None:
    T = env._consts.fight.table
    r = row(AGENT, slot)
    place(env, AGENT, position_x=x, facing=facing, move=float(r), action_frame=float(frame),
          busy_left=float(T.length[r]) - frame, action=float(T.action[r]))


def _rolling_fox(n: int, x: float, fox_dx: float, marth_dx: float = 0.0) -> Arena:
    """A level-9 Marth at 0 facing Fox, who is mid forward roll at ``x`` toward him (his position change ``fox_dx`` a
    frame); Marth's own change ``marth_dx``. x80 = 1 after the frame's count: only the every-frame entries look."""
    env = fight(n, level=9, cpu="melee")
    env.state = with_game(env.state, episode_frame=61.0)
    _fox_as(env, Slot.ROLL_FORWARD, 12, x, -1.0)
    place(env, CPU, position_x=0.0, facing=1.0)
    _set_fight(env, pos_dx=(fox_dx, marth_dx), cpu_x80=0.0)
    return env


def test_pos_delta_is_each_fighters_position_change_over_the_frame_a_roll_included():
    # What the CPU predicts with [D ftCo_800B4AB0: pos_delta]: the fight frame records it, a roll's own motion
    # (the move's locomotion, with speed_x 0) included.
    env = fight(1, level=9, cpu="melee")
    _fox_as(env, Slot.ROLL_FORWARD, 10, 0.0, 1.0)
    place(env, CPU, position_x=60.0, facing=-1.0)
    x0 = float(env.state.players.position_x[0, AGENT])
    frames(env, 1)
    moved = float(env.state.players.position_x[0, AGENT]) - x0
    assert abs(moved) > 0.5 and float(env.state.players.speed_x[0, AGENT]) == 0.0
    assert float(env.state.fight.pos_dx[0, AGENT]) == moved


def test_a_level_9_marth_leads_a_rolling_fox():
    # [D ftCo_800B4AB0]: the jab's box (reach x scale + Fox's half width: 24.5 at most at level 9) is tested against
    # Fox moved on by his position change x the entry's lookahead (the jab's first active frame, 4): a Fox 27 away
    # rolling in at 1.7 a frame is met where the roll takes him (27 - 6.8); the same Fox with no motion is out of reach.
    # (The grab entry is left out while Fox rolls [D ftCo_800B8A9C]; x80 = 1 leaves the gated entries out.)
    env = _rolling_fox(2, 27.0, 0.0)
    _set_fight(env, pos_dx=torch.tensor([[0.0, 0.0], [-1.7, 0.0]]))
    env.state = count_down(env.state)[0]
    d = _control(env)
    assert d.fight.cpu_plan.tolist() == [md.NONE, md.NONE], d.fight.cpu_plan  # level 9: pressed, plan done
    assert d.pad.a.tolist() == [False, True], d.pad.a  # the jab, on the decision frame (no wait at level 9)


def test_marths_own_motion_counts_in_the_lead():
    # [D ftCo_800B4AB0]: Marth's own position change x the lookahead too: walking in at 1 a frame toward a still Fox
    # 27 away (in a roll's first frames, no motion yet) brings the jab's box to him 4 frames on (27 - 4.8).
    env = _rolling_fox(2, 27.0, 0.0)
    _set_fight(env, pos_dx=torch.tensor([[0.0, 0.0], [0.0, 1.2]]))
    env.state = count_down(env.state)[0]
    assert _control(env).pad.a.tolist() == [False, True]


def test_the_lookahead_has_no_cap():
    # The forward smash looks 10 frames ahead, the prediction runs the whole lookahead: the box test at 10 frames
    # differs from one at 4 for a moving Fox.
    env = _rolling_fox(1, 40.0, -1.7)
    env.state = count_down(env.state)[0]
    s = see(env.state, env._consts.seed, EDGE, carried(env.state).plan)
    T = env._consts.fight.table
    x4, _ = melee_attack.predicted(s, env.state, T, torch.tensor([4.0]))
    x10, _ = melee_attack.predicted(s, env.state, T, torch.tensor([10.0]))
    x30, _ = melee_attack.predicted(s, env.state, T, torch.tensor([30.0]))
    assert abs(float(x4[0]) - 33.2) < 1e-3 and abs(float(x10[0]) - 23.0) < 1e-3 and abs(float(x30[0]) + 11.0) < 1e-3


def test_no_grab_is_chosen_into_a_spot_dodge():
    # [D ftCo_800B8A9C]: with the target in Catch..EscapeAir (a spot dodge: EscapeN) the grab entries (0x28, 0x29) are
    # dropped. Fox 30 from a level-9 Marth: standing, the (dash) grab is the only entry that reaches; spot-dodging, none.
    env = fight(2, level=9, cpu="melee")
    env.state = with_game(env.state, episode_frame=61.0)
    place(env, AGENT, position_x=30.0, facing=-1.0,
          action=torch.tensor([float(Action.STANDING.value), SPOT_DODGE]))
    _fox_as_spot = row(AGENT, Slot.SPOT_DODGE)
    mv = env.state.players.move.clone()
    mv[1, AGENT] = float(_fox_as_spot)
    env.state = env.state._replace(players=env.state.players._replace(move=mv))
    place(env, CPU, position_x=0.0, facing=1.0)
    _set_fight(env, cpu_x80=0.0)
    env.state = count_down(env.state)[0]
    s = see(env.state, env._consts.seed, EDGE, carried(env.state).plan)
    pick = melee_attack.pick_ground(s, env.state, env._consts.fight.table)
    assert pick.tolist() == [float(Slot.GRAB), -1.0], pick


def test_a_hitbox_that_has_already_hit_marth_is_no_threat():
    # [D ftCo_800BB104]: hitboxes with Marth in their victim list (lbColl_8000ACFC) are skipped: in the arena, a burst
    # at or under Fox's hit_done. Fox's forward smash out on frame 13 reaches Marth's body sphere 22 away.
    env = fight(2, level=9, cpu="melee")
    env.state = with_game(env.state, episode_frame=60.0)
    _fox_as(env, Slot.FSMASH, 14, 0.0, 1.0)
    place(env, CPU, position_x=22.0, facing=-1.0)
    T = env._consts.fight.table
    burst = float(T.group[row(AGENT, Slot.FSMASH), 13])
    assert burst > 0
    hd = env.state.players.hit_done.clone()
    hd[1, AGENT] = burst
    env.state = env.state._replace(players=env.state.players._replace(hit_done=hd))
    assert melee_defend.threat(env.state, T).tolist() == [True, False]
    plan = _control(env).fight.cpu_plan.tolist()
    assert plan[0] == md.DEFEND_ROLL and plan[1] != md.DEFEND_ROLL, plan


def _first_attack_level_1(x80: float, episode_frame: float) -> bool:
    env = fight(1, level=1, cpu="melee")
    env.state = with_game(env.state, episode_frame=episode_frame)
    place(env, AGENT, position_x=0.0, facing=1.0)
    place(env, CPU, position_x=12.0, facing=-1.0)
    _set_fight(env, cpu_x80=x80)
    env.state = count_down(env.state)[0]
    return bool(_control(env).fight.cpu_plan[0] == md.ATTACK)


def test_level_1s_cycle_runs_on_the_cpus_own_counter_not_the_games_frames():
    # [D ftCo_800B885C]: level 1 may attack only when x80 % 300 > 180; x80 counts the frames the CPU's handler runs
    # [D ftCo_800B2790]. Fox in the jab's reach: x80 in the open part attacks whatever the game's frame; x80 in the
    # closed part does not, even on a game frame inside the open part.
    assert _first_attack_level_1(x80=199.0, episode_frame=49.0)
    assert not _first_attack_level_1(x80=49.0, episode_frame=199.0)


def test_x80_advances_only_on_frames_with_no_script_running():
    # [D ftCo_800B2790]: x80 += 1 only with no command script (csP NULL, duration 0): during a chosen attack's wait
    # (a level-1 WaitFor) it holds.
    env = fight(2, level=1, cpu="melee")
    env.state = with_game(env.state, episode_frame=0.0)
    place(env, AGENT, position_x=-60.0, facing=1.0)
    place(env, CPU, position_x=40.0, facing=-1.0)
    _set_fight(env, cpu_x80=10.0, cpu_plan=torch.tensor([md.NONE, md.ATTACK]), cpu_wait=20.0,
               cpu_act=float(Slot.JAB1))
    env.state = count_down(env.state)[0]
    assert _control(env).fight.cpu_x80.tolist() == [11.0, 10.0]


def test_per_entry_gates_count_x80():
    # [D ftCo_800B4AB0]: an entry is looked at only when x80 % x1C == 0; the forward smash's gate (guess: 40) on x80,
    # not on the game's frame. A spot-dodging Fox 27.5 away: only the forward smash's box reaches (grabs dropped).
    picks = []
    for x80, frame in ((39.0, 41.0), (40.0, 39.0)):
        env = fight(1, level=9, cpu="melee")
        env.state = with_game(env.state, episode_frame=frame)
        _fox_as(env, Slot.SPOT_DODGE, 10, 27.5, -1.0)
        place(env, CPU, position_x=0.0, facing=1.0)
        _set_fight(env, cpu_x80=x80)
        env.state = count_down(env.state)[0]  # x80 and the frame count up one
        s = see(env.state, env._consts.seed, EDGE, carried(env.state).plan)
        picks.append(float(melee_attack.pick_ground(s, env.state, env._consts.fight.table)[0]))
    assert picks == [float(Slot.FSMASH), -1.0], picks


def test_the_walk_stops_at_x56c_plus_the_targets_half_width():
    # [D ftCo_800A75DC]: x38 = x56C + the target's x564; [D ftCo_800A0CB0]: x56C = 4 (1 - u^3), drawn again every 600
    # frames of x7C. 64 games: every stop distance in (4, 8], the same through a 600-frame block, not one value.
    env = fight(64, level=9, cpu="melee")
    place(env, CPU, position_x=20.0, facing=-1.0)
    place(env, AGENT, position_x=-20.0, facing=1.0)
    nears = []
    for t in (0.0, 599.0, 600.0):
        env.state = with_game(env.state, episode_frame=t)
        nears.append(see(env.state, env._consts.seed, EDGE, carried(env.state).plan).near)
    assert ((nears[0] > md.BODY_HALF_WIDTH) & (nears[0] <= md.STOP_SPAN + md.BODY_HALF_WIDTH)).all()
    assert torch.equal(nears[0], nears[1]) and not torch.equal(nears[0], nears[2])
    assert nears[0].std() > 0.1
    # Within x38 the stick rests; just beyond it the walk goes on [D ftCo_800AA42C].
    s = see(env.state, env._consts.seed, EDGE, carried(env.state).plan)
    for gap, walks in ((-0.5, False), (0.5, True)):
        fx = env.state.players.position_x.clone()
        fx[:, AGENT] = fx[:, CPU] - s.near - gap  # Fox behind Marth's stop distance by ``gap`` (never past the edge)
        env.state = env.state._replace(players=env.state.players._replace(position_x=fx))
        s1 = see(env.state, env._consts.seed, EDGE, carried(env.state).plan)
        out = Out(PadOut.neutral(s1.mx), torch.zeros_like(s1.ground))
        out = melee_move.walk(s1, env.state, env._consts.fight.melee_levels, out, carried(env.state))
        assert (out.decided == walks).all(), (gap, out.decided)
