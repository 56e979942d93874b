"""Melee's own CPU (``cpu = "melee"``, arena/cpu/melee.py): each rule against a scripted situation that
triggers it, the perfect shield it plays, and ``cpu-report``'s figures (a small run)."""

from __future__ import annotations

import math

import pytest
import torch
from melee.enums import Action

from melee_agent.arena import Arena, cpu_report
from melee_agent.arena.env_state import with_game
from melee_agent.arena.cpu import melee as melee_cpu
from melee_agent.arena.fight.frame import EDGE, count_down, play
from melee_agent.arena.fight.fighter import rows_of
from melee_agent.arena.fight.moves import Slot, row
from tests.fight_kit import AGENT, CPU, fight, pad, place

SHIELD = float(Action.SHIELD.value)


def _control(env: Arena):
    c = env._consts.fight
    return melee_cpu.control(env.state, c.table, c.melee_levels, env._consts.seed, EDGE)


def _fox_in(env: Arena, slot: int, frame: int, x: float = 0.0, facing: float = 1.0) -> None:
    T = env._consts.fight.table
    r = row(AGENT, slot)
    place(env, AGENT, position_x=x, facing=facing, move=float(r), action_frame=float(frame),
          busy_left=float(T.length[r]) - frame, action=float(T.action[r]))


def _set_x80(env: Arena, value) -> None:
    """The melee CPU's own counter x80 (it counts up by one on the next frame its handler runs)."""
    fs = env.state.fight
    env.state = env.state._replace(fight=fs._replace(cpu_x80=torch.zeros_like(fs.cpu_x80) + value))


def _levels(n_per: int, levels: tuple[int, ...]) -> torch.Tensor:
    return torch.tensor([lv for lv in levels for _ in range(n_per)], dtype=torch.float32)


def test_defence_is_gated_by_level_and_rolls_by_distance():
    # A Fox forward smash out on frame 13 that reaches Marth's body sphere but not his hurtbox (22 away): a threat
    # ([D ftCo_800BB104]). Level 1 never defends; level 9 always does ([D ftCo_800A5ACC]).
    env = fight(2, level=9, cpu="melee")
    env.state = with_game(env.state, cpu_level=torch.tensor([1.0, 9.0]), episode_frame=60.0)
    _fox_in(env, Slot.FSMASH, 14)
    place(env, CPU, position_x=22.0, facing=-1.0)
    assert melee_cpu._threat(env.state, env._consts.fight.table).tolist() == [True, True]
    d = _control(env)
    assert d.fight.cpu_plan[0] != melee_cpu.DEFEND_ROLL and d.fight.cpu_plan[1] == melee_cpu.DEFEND_ROLL
    # Within 30 of the attacker the roll goes behind him (toward Fox, -x here) [D ftCo_800BA9A0 inline2].
    assert d.fight.cpu_act[1].item() == -1.0


def test_the_defence_gate_opens_on_the_documented_share_of_each_120_frames():
    # [D ftCo_800A5ACC]: level 5 defends only on frames with (t mod 120) > 40.
    env = fight(2, level=5, cpu="melee")
    env.state = with_game(env.state, episode_frame=torch.tensor([30.0, 90.0]))
    _fox_in(env, Slot.FSMASH, 14)
    place(env, CPU, position_x=22.0, facing=-1.0)
    d = _control(env)
    assert d.fight.cpu_plan[0] != melee_cpu.DEFEND_ROLL and d.fight.cpu_plan[1] == melee_cpu.DEFEND_ROLL


def test_the_roll_script_presses_the_stick_and_r_together_after_one_idle_frame():
    # The roll script [D ftCo_800BA160 / ftCo_800BA224]: SetLstick 0, ReleaseR, WaitFor 1; SetLstickX 0x7F and PressR,
    # WaitFor 2; ReleaseR, WaitFor 5 with the stick held. (Until the decompilation was read again the arena pressed the
    # shield alone on the script's first frame.) Fox's forward smash 22 away: within 30, behind him (-x here).
    env = fight(1, level=9, cpu="melee")
    env.state = with_game(env.state, episode_frame=60.0)
    _fox_in(env, Slot.FSMASH, 14)
    place(env, CPU, position_x=22.0, facing=-1.0)
    presses = []
    for _ in range(9):
        d = _control(env)
        presses.append((bool(d.pad.shield[0]), round(float(d.pad.sx[0]), 3)))
        env.state = env.state._replace(fight=d.fight)
        env.state = count_down(env.state)[0]
    assert presses[:8] == [(False, 0.0)] + [(True, -1.0)] * 2 + [(False, -1.0)] * 5, presses


@pytest.mark.parametrize("perfect_frames,shield_frame,loses_shield", [(4, 1, False), (4, 4, False), (4, 5, True),
                                                                      (0, 1, True)])
def test_a_hit_on_the_shields_first_four_frames_is_a_perfect_shield(perfect_frames, shield_frame, loses_shield):
    # SmashWiki "Perfect shield": no shield damage. The melee CPU's fights play it (4 frames); designed's do not (0).
    env = fight(1, level=9, cpu="melee" if perfect_frames else "designed")
    _fox_in(env, Slot.JAB1, 1)
    place(env, CPU, position_x=10.0, facing=-1.0, action=SHIELD, action_frame=float(shield_frame - 1))
    T = env._consts.fight.table
    before = env.state.players.shield_strength[0, CPU].item()
    hit = False
    for _ in range(4):
        state, frozen = count_down(env.state)
        res = play(state, pad(1, marth={"shield": 1}), frozen, T, env._consts.spawn_x, None, perfect_frames)
        env.state = res.state
        if env.state.fight.hitlag_left[0, CPU] > 0:
            hit = True
            break
    assert hit
    lost = before - env.state.players.shield_strength[0, CPU].item()
    assert (lost > 1.0) == loses_shield, lost


def test_out_of_shield_level_9_counterattacks_at_once_with_a_shield_grab():
    # Fox in the end lag of a forward smash right beside a shielding level-9 Marth: the attack list picks a move
    # ([D ftCo_800B4AB0]), level 9 waits no frame ([D ftCo_800B63D8]), and A or Z in shield is a grab.
    env = fight(1, level=9, cpu="melee")
    env.state = with_game(env.state, episode_frame=60.0)
    _fox_in(env, Slot.FSMASH, 36, x=0.0, facing=1.0)
    place(env, CPU, position_x=10.0, facing=-1.0, action=SHIELD, action_frame=10.0)
    pressed = None
    for i in range(3):
        d = _control(env)
        if bool(d.pad.a[0] | d.pad.z[0]):
            pressed = i
            break
        assert bool(d.pad.shield[0])  # the shield stays up while the script waits
        env.state = count_down(env.state._replace(fight=d.fight))[0]
    assert pressed == 0  # pressed on the decision frame: the script runs the frame it is written [D ftCo_800B3900]


def test_level_9_attacks_sooner_than_level_1():
    # [D ftCo_800B63D8]: the wait before an attack is played: level 1 5-39 frames, level 9 none; and level 1
    # starts attacks only on 119 of each 300 counts of its x80 [D ftCo_800B885C] (here: inside that part).
    n = 32
    env = fight(2 * n, level=9, cpu="melee")
    env.state = with_game(env.state, cpu_level=_levels(n, (1, 9)), episode_frame=200.0)
    _set_x80(env, 199.0)
    place(env, AGENT, position_x=0.0, facing=1.0)
    place(env, CPU, position_x=12.0, facing=-1.0)
    T = env._consts.fight.table
    first = torch.full((2 * n,), -1.0)
    z = torch.zeros(2 * n)
    no = z.bool()
    from melee_agent.arena.fight.frame import fight_frame_fox
    with torch.inference_mode():
        for i in range(60):
            res, _ = fight_frame_fox(env.state, (no, no, no, no, no, z, z), env._consts.fight, env._consts.seed,
                                      env._consts.spawn_x)
            env.state = res.state
            moving = env.state.players.move[:, CPU] >= 0
            first = torch.where((first < 0) & moving, float(i), first)
    assert (first >= 0).all(), first
    lv1, lv9 = first[:n], first[n:]
    assert lv9.max() <= 2 and lv1.mean() >= 10, (lv1.mean(), lv9.max())
    assert T is not None


def test_di_on_the_documented_share_and_perpendicular_to_the_launch():
    # [D ftCo_800AC5A0]: on (t mod 120) > 120 - 12 L the stick is perpendicular to the launch, pointing up.
    env = fight(2, level=5, cpu="melee")
    env.state = with_game(env.state, episode_frame=torch.tensor([10.0, 100.0]))  # 10 <= 60 < 100
    place(env, CPU, position_x=0.0, hitstun_frames_left=10.0)
    fs = env.state.fight
    env.state = env.state._replace(fight=fs._replace(launch_angle=torch.full_like(fs.launch_angle, 45.0),
                                                     launch_dir=torch.ones_like(fs.launch_dir)))
    d = _control(env)
    assert float(d.pad.sx[0]) == 0.0 and float(d.pad.sy[0]) == 0.0
    assert math.isclose(float(d.pad.sx[1]), -math.sqrt(0.5), abs_tol=1e-5)
    assert math.isclose(float(d.pad.sy[1]), math.sqrt(0.5), abs_tol=1e-5)


def test_throws_toward_the_nearer_stage_end():
    # [D ftCo_800B658C]: within 30 of a stage end the throw goes toward it (when it does not pummel).
    n = 16
    env = fight(n, level=9, cpu="melee")
    T = env._consts.fight.table
    r = row(CPU, Slot.GRAB_HOLD)
    place(env, CPU, position_x=EDGE - 10.0, facing=-1.0, move=float(r), action_frame=5.0, busy_left=100.0,
          action=float(T.action[r]))
    d = _control(env)
    threw = ~d.pad.a
    assert threw.any() and (d.pad.sx[threw] == 1.0).all()


def test_an_unknown_cpu_is_refused_for_either_game():
    for game in ("fight", "dodge"):
        with pytest.raises(ValueError, match="unknown cpu"):
            Arena(1, game=game, cpu="nope")


@pytest.fixture(scope="module")
def level9_report():
    return cpu_report.report("melee", 9, envs=8, frames=240, scenarios=("standing", "recovery"))


@pytest.mark.slow
def test_report_level_9_jab_and_grab_first_no_charged_smash_few_aerials(level9_report):
    sh = level9_report["shares"]
    attacks = ("jab", "ftilt", "utilt", "dtilt", "fsmash", "usmash", "dsmash", "dash_attack", "grab", "dash_grab")
    assert sh["jab"] + sh["grab"] + sh["dash_grab"] >= 0.5, sh  # [W-flaws]: jab and dash grab first
    assert sh["fsmash"] + sh["usmash"] + sh["dsmash"] <= 0.1, sh  # seldom smashes
    assert sh["nair"] + sh["fair"] + sh["bair"] + sh["uair"] + sh["dair"] <= 0.05, sh  # almost never aerials
    assert sum(level9_report["choices"][k] for k in attacks) > 0


@pytest.mark.slow
def test_report_level_9_recovers_with_jumps_and_a_fixed_up_b_angle(level9_report):
    r = level9_report["scenarios"]["recovery"]
    assert r["side_b"] == 0 and r["air_dodge"] == 0  # [W-flaws]: only jumps and up-B
    assert r["double_jumps"] > 0 and r["up_b"] > 0
    a = r["up_b_stick_angle_deg"]
    assert abs(a["min"] - 45.0) < 0.5 and abs(a["max"] - 45.0) < 0.5  # [D ftCo_CpuRecoverDiagonally]: (88, 88)
    assert r["made_it_back"] >= r["of"] - 1
    text = cpu_report.format_table(level9_report)
    assert "recovery:" in text and "jab" in text


@pytest.mark.slow
def test_the_melee_cpu_never_holds_a_for_a_charge():
    # Smashes are a one-frame press (never charged, [W-flaws]): A is never held two frames running.
    env = fight(8, level=9, cpu="melee")
    cpu_report._place("approach", env)
    c = env._consts
    from melee_agent.arena.fight.frame import fight_frame_fox
    held = torch.zeros(8, dtype=torch.bool)
    with torch.inference_mode():
        for i in range(200):
            res, p = fight_frame_fox(env.state, cpu_report._fox_pad("approach", env, i), c.fight, c.seed, c.spawn_x)
            env.state = res.state
            assert not (held & p.a[:, CPU]).any()
            held = p.a[:, CPU].clone()


def test_env_cpu_setting_reaches_the_arena_and_is_checked():
    from melee_agent.envs import make as envs  # noqa: PLC0415
    from melee_agent.config import ConfigError, load_config  # noqa: PLC0415

    cfg = load_config("fight", ["env.cpu=melee"])
    assert envs._arena(cfg, 2, 9, "cpu", 0).cpu == "melee"
    assert envs._arena(load_config("fight"), 2, 9, "cpu", 0).cpu == "melee"  # the default
    assert envs._arena(load_config("fight", ["env.cpu=designed"]), 2, 9, "cpu", 0).cpu == "designed"
    with pytest.raises(ConfigError, match="env.cpu must be"):
        load_config("fight", ["env.cpu=nope"])
    assert envs._arena(load_config("default", ["env.cpu=melee"]), 2, 9, "cpu", 0).cpu == "melee"  # dodging too


def test_cpu_report_command_prints_the_table_and_writes_json(tmp_path, capsys):
    import json  # noqa: PLC0415

    from melee_agent.cli.main import main  # noqa: PLC0415

    out = tmp_path / "r.json"
    assert main(["cpu-report", "--cpu", "designed", "--level", "5", "--envs", "2", "--frames", "20",
                 "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["cpu"] == "designed" and doc["level"] == 5 and set(doc["scenarios"]) == set(cpu_report.SCENARIOS)
    assert doc["perfect_shield_frames"] == 0 and set(doc["shares"]) == set(cpu_report.CHOICES)
    assert "choice" in capsys.readouterr().out


def _play_fox_standing(env: Arena, frames: int):
    """Each frame's Marth pad while Fox stands still (the real frame function, CPU included)."""
    from melee_agent.arena.fight.frame import fight_frame_fox  # noqa: PLC0415
    n = env.state.players.position_x.shape[0]
    z, no = torch.zeros(n), torch.zeros(n, dtype=torch.bool)
    c = env._consts
    pads = []
    with torch.inference_mode():
        for _ in range(frames):
            res, p = fight_frame_fox(env.state, (no, no, no, no, no, z, z), c.fight, c.seed, c.spawn_x)
            env.state = res.state
            pads.append((p.sx[:, CPU].clone(), env.state.players.action[:, CPU].clone()))
    return pads


@pytest.mark.parametrize("level", [1, 9])
def test_far_away_it_walks_in_at_every_level_never_a_dash(level):
    # [D ftCo_800B24B8]: xF8_b0 (the dash in ftCo_800AA42C) is set only to flee a Starman or hammer holder; the versus
    # CPU walks from any distance, its stick stepping up from neutral by the level's step (2 or 8 of 127 a frame).
    env = fight(1, level=level, cpu="melee")
    env.state = with_game(env.state, episode_frame=0.0)
    place(env, AGENT, position_x=-60.0, facing=1.0)
    place(env, CPU, position_x=40.0, facing=-1.0)
    pads = _play_fox_standing(env, 12)
    step = melee_cpu.STICK_STEP[level]
    assert [round(-float(p[0][0]) * 127) for p in pads[:3]] == [step, 2 * step, 3 * step], pads[:3]
    actions = {float(p[1][0]) for p in pads}
    assert float(Action.DASHING.value) not in actions and float(Action.RUNNING.value) not in actions, actions


def test_with_fox_behind_him_he_turns_and_attacks_once_his_facing_has_flipped():
    # ftCo_CpuTurnAround: stick neutral, WaitFor 1, stick 80 of 127 back, WaitFor 1, WaitFor 10. The dispatcher
    # (ftCo_800ADE48) runs every frame, script or not, and its attack check (ftCo_800B8A9C) tests boxes in Marth's
    # facing: once the turn has flipped it, the jab's box holds Fox 12 behind where he started and the attack replaces
    # the script. (Until the decompilation was read again the arena chose nothing for all 13 frames of the turn.)
    env = fight(1, level=9, cpu="melee")
    env.state = with_game(env.state, episode_frame=0.0)
    place(env, AGENT, position_x=-12.0, facing=1.0)
    place(env, CPU, position_x=0.0, facing=1.0)
    from melee_agent.arena.fight.frame import fight_frame_fox  # noqa: PLC0415
    z, no = torch.zeros(1), torch.zeros(1, dtype=torch.bool)
    c = env._consts
    sticks, facing, attack_at = [], [], None
    with torch.inference_mode():
        for i in range(melee_cpu.TURN_FRAMES):
            facing.append(float(env.state.players.facing[0, CPU]))
            res, p = fight_frame_fox(env.state, (no, no, no, no, no, z, z), c.fight, c.seed, c.spawn_x)
            env.state = res.state
            sticks.append(round(float(p.sx[0, CPU]) * 127))
            if int(env.state.players.move[0, CPU]) >= 0:
                attack_at = i
                break
    assert sticks[0] == 0 and set(sticks[1:-1]) == {-80}, sticks  # the script's stick until the attack
    assert attack_at is not None and attack_at < melee_cpu.TURN_FRAMES - 1, sticks
    assert facing[attack_at] == -1.0 and facing[0] == 1.0, facing  # chosen on a frame that began facing Fox
    assert rows_of(env.state.players.move)[0, CPU] == row(CPU, Slot.JAB1)


def test_the_stick_walks_up_by_the_levels_step_to_its_clamp():
    # [D ftCo_800AA320 / ftcmdscript.c LstickXTowardDestinationClamped]: the stick moves by the level's step per
    # frame (level 1: 2, level 9: 8 of 127) toward Fox, never past the ramped clamp (level 1: 72 of 127).
    env = fight(2, level=9, cpu="melee")
    env.state = with_game(env.state, cpu_level=torch.tensor([1.0, 9.0]), episode_frame=0.0)
    place(env, AGENT, position_x=-40.0, facing=1.0)
    place(env, CPU, position_x=0.0, facing=-1.0)
    pads = _play_fox_standing(env, 3)
    lv1 = [round(-float(p[0][0]) * 127) for p in pads]
    lv9 = [round(-float(p[0][1]) * 127) for p in pads]
    assert lv1 == [2, 4, 6] and lv9 == [8, 16, 24], (lv1, lv9)
    env = fight(1, level=1, cpu="melee")
    env.state = with_game(env.state, episode_frame=0.0)
    place(env, AGENT, position_x=-40.0, facing=1.0)
    place(env, CPU, position_x=0.0, facing=-1.0)
    top = max(-float(p[0][0]) for p in _play_fox_standing(env, 60)) * 127
    assert 70.0 <= top <= 72.0 + 1e-3, top  # walks: never the dash's 127


JAB_AWAY = 15.0  # Fox's jab: its first hitbox (frame 2, 9.5 forward) falls short of a shield this far; the next reaches


def _jab_on_shield(n: int, shield_frame: torch.Tensor) -> Arena:
    """Fox's jab one frame in (its first hitbox out short of Marth) beside a level-9 Marth whose shield is up, so that
    the jab's next hitbox meets the shield on ``shield_frame`` ``[n]``."""
    env = fight(n, level=9, cpu="melee")
    env.state = with_game(env.state, episode_frame=60.0)  # any frame: level 9's defence gate is always open
    _fox_in(env, Slot.JAB1, 2)
    place(env, CPU, position_x=JAB_AWAY, facing=-1.0, action=SHIELD, action_frame=shield_frame - 1.0)
    return env


def test_a_fox_hitbox_seen_while_marth_shields_starts_the_roll_script_with_stick_and_r_on_one_frame():
    # [D ftCo_800BA9A0]: in Guard (motion 0xB3, not 0xB2 GuardOn) a fighter's hitbox goes to inline2, the roll script
    # (ftCo_800BA160 / ftCo_800BA224), not to ftCo_800B9F90's held shield (an item's hitbox, or GuardOn). Fox's jab one
    # frame in beside a level-9 Marth whose shield has been up 4 frames: its first hitbox, out a frame ago, is seen.
    # Frame 0: stick neutral and R released; frame 1: the stick toward Fox (within 30: behind him) and R together.
    # (Until the decompilation was read again the arena kept the shield up here: PressR with no wait.)
    env = _jab_on_shield(1, torch.tensor([4.0]))
    env.state = count_down(env.state)[0]  # the frame begins (as the frame function: the CPU reads it after this)
    assert melee_cpu._threat(env.state, env._consts.fight.table).tolist() == [True]
    pads = []
    for _ in range(3):
        d = _control(env)
        pads.append((bool(d.pad.shield[0]), round(float(d.pad.sx[0]), 3)))
        env.state = count_down(env.state._replace(fight=d.fight))[0]
    assert pads == [(False, 0.0), (True, -1.0), (True, -1.0)], pads


@pytest.mark.slow
def test_on_the_ground_it_never_jumps_so_no_short_hop_aerial_and_no_wavedash():
    # [W-flaws]: CPUs almost never use aerials and never wavedash; [D ftCo_800B89CC]: aerials only when already
    # airborne. The melee CPU presses jump only off stage (recovery) or on the ledge: never standing on the stage,
    # against Fox approaching with attacks or short-hopping forward airs.
    from melee_agent.arena.fight.frame import fight_frame_fox  # noqa: PLC0415
    for scenario in ("approach", "aerials"):
        env = fight(4, level=9, cpu="melee")
        cpu_report._place(scenario, env)
        c = env._consts
        with torch.inference_mode():
            for i in range(100):
                grounded = env.state.players.on_ground[:, CPU] > 0
                res, p = fight_frame_fox(env.state, cpu_report._fox_pad(scenario, env, i), c.fight, c.seed,
                                         c.spawn_x)
                assert not (grounded & p.jump[:, CPU]).any(), (scenario, i)
                env.state = res.state


@pytest.mark.slow
def test_with_fox_off_stage_it_stays_on_the_stage_no_edgeguard_no_edgehog():
    # [W-AI], [W-flaws]: CPUs never go out to edgeguard and never edgehog; [D ftCo_800AA42C]'s destination is
    # clamped to the stage here, so Marth stays on it while Fox recovers.
    from melee_agent.arena.fight.frame import fight_frame_fox  # noqa: PLC0415
    env = fight(8, level=9, cpu="melee")
    cpu_report._place("fox_offstage", env)
    c = env._consts
    with torch.inference_mode():
        for i in range(150):
            res, _ = fight_frame_fox(env.state, cpu_report._fox_pad("fox_offstage", env, i), c.fight, c.seed,
                                     c.spawn_x)
            env.state = res.state
            assert (env.state.players.position_x[:, CPU].abs() <= EDGE).all(), i
            assert (rows_of(env.state.players.move)[:, CPU] != row(CPU, Slot.LEDGE_HANG)).all(), i


@pytest.mark.slow
def test_it_walks_in_to_dash_grab_jabs_a_standing_fox_and_grabs_only_a_shielding_one():
    # [W-flaws]: CPUs approach "to then spam their neutral attack and dash grabs when close"; with the player close
    # and still they "only spam their jabs, grabbing only if the player shields" (the guessed grab entry: a dash-grab
    # script beyond a standing grab's reach, melee_cpu.GROUND_LIST; the anti-shield list at levels 6-9
    # [D ftCo_800B8A9C]). Level 9, 8 games each: Fox standing 80 away, standing 14 away, shielding 14 away; the first
    # attack Marth starts, and he walks in (never a dash before the dash grab's own).
    from melee_agent.arena.fight.frame import fight_frame_fox  # noqa: PLC0415
    n = 8
    env = fight(3 * n, level=9, cpu="melee")
    env.state = with_game(env.state, episode_frame=0.0)
    shield = torch.tensor([False] * (2 * n) + [True] * n)
    place(env, AGENT, position_x=-40.0, facing=1.0, action=torch.where(shield, SHIELD, float(Action.STANDING.value)),
          action_frame=10.0)  # the shielding Fox's shield up already
    place(env, CPU, position_x=torch.tensor([40.0] * n + [-26.0] * (2 * n)), facing=-1.0)
    c = env._consts
    z, no = torch.zeros(3 * n), torch.zeros(3 * n, dtype=torch.bool)
    first = torch.full((3 * n,), -1.0)
    dashed_before = torch.zeros(3 * n, dtype=torch.bool)
    dash = float(Action.DASHING.value)
    with torch.inference_mode():
        for _ in range(90):
            res, _ = fight_frame_fox(env.state, (no, no, no, no, shield, z, z), c.fight, c.seed, c.spawn_x)
            env.state = res.state
            m = env.state.players.move
            slot = torch.where(m[:, CPU] >= 0, rows_of(m)[:, CPU] - row(CPU, 0), -1)
            first = torch.where((first < 0) & (slot >= 0), slot.float(), first)
            dashed = env.state.players.action[:, CPU] == dash
            # a dash that is not the dash grab's script (its plan) is an approach dash
            plan = env.state.fight.cpu_plan
            dashed_before |= (first < 0) & dashed & (plan != melee_cpu.DASH_GRAB) & (plan != melee_cpu.ATTACK)
    far, close, shielded = first[:n].tolist(), first[n:2 * n].tolist(), first[2 * n:].tolist()
    assert far == [float(Slot.DASH_GRAB)] * n, far
    assert not dashed_before.any()
    assert close == [float(Slot.JAB1)] * n, close
    assert shielded == [float(Slot.GRAB)] * n, shielded
