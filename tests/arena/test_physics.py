"""Arena physics and frame data against libmelee's own numbers (FrameData, characterdata)."""

from __future__ import annotations

from types import SimpleNamespace

import melee
import pytest
import torch
from melee.enums import Action, Character

from melee_agent.envs.actions import get_action_set
from melee_agent.arena import Arena
from melee_agent.arena import libmelee_data as d
from melee_agent.arena.env_state import AGENT, CPU, with_game, with_player
from melee_agent.arena.dodge.tables import MOVE_INDEX

FD = melee.framedata.FrameData()
NOOP = 0


def place(env: Arena, who: int, **fields: float) -> None:
    env.state = with_player(env.state, who, **fields)


def start_marth_attack(env: Arena, move_name: str, marth_x: torch.Tensor) -> None:
    k = MOVE_INDEX[move_name]
    mv = d.MARTH_MOVES[k]
    place(env, AGENT, position_x=0.0, position_y=0.0, invulnerability_left=0.0, on_ground=1.0, facing=-1.0)
    env.state = with_player(env.state, CPU, position_x=marth_x)
    place(env, CPU, position_y=0.0, facing=1.0, move=float(k), action=float(mv.action), action_frame=0.0,
          busy_left=float(mv.length + 1),
          on_ground=1.0, hit_done=0.0)
    env.state = with_game(env.state, cpu_cooldown=10_000.0)  # no second attack


@pytest.mark.parametrize("move", [m.name for m in d.MARTH_MOVES])
def test_marth_attack_hits_only_in_its_active_frames_and_reach(move):
    mv = d.MARTH_MOVES[MOVE_INDEX[move]]
    action = Action(mv.action)
    first, last = FD.first_hitbox_frame(Character.MARTH, action), FD.last_hitbox_frame(Character.MARTH, action)
    frames = FD.framedata[Character.MARTH][action]
    # Farthest reach libmelee's data implies: hitbox x + radius, plus the move's own forward travel.
    travel, reach = 0.0, 0.0
    for f in sorted(frames):
        travel += frames[f]["locomotion_x"]
        if first <= f <= last:
            for i in range(1, 5):
                if frames[f][f"hitbox_{i}_status"]:
                    reach = max(reach, travel + frames[f][f"hitbox_{i}_x"] + frames[f][f"hitbox_{i}_size"])
    far = reach + d.BODY_RADIUS + 0.5
    # Close targets stand where the hitboxes come out: a dash attack carries Marth forward first.
    ahead = sum(frames[f]["locomotion_x"] for f in sorted(frames) if f < first)
    dist = torch.tensor([ahead + 6.0, ahead + 10.0, ahead + 14.0, ahead + 18.0, far, far + 10.0, far + 40.0])
    env = Arena(len(dist), cpu_level=9, seed=0, reward="damage")
    env.reset()
    start_marth_attack(env, move, -dist)
    hit_frame = torch.zeros(len(dist))
    for af in range(1, mv.length + 1):
        before = env.state.players.percent[:, AGENT].clone()
        env.step(torch.full((len(dist),), NOOP))
        newly = (env.state.players.percent[:, AGENT] > before) & (hit_frame == 0)
        hit_frame[newly] = af
    hits = hit_frame[hit_frame > 0]
    assert len(hits) >= 3, f"{move}: close-range targets were not hit: {hit_frame.tolist()}"
    assert bool(((hits >= first) & (hits <= last)).all()), f"{move}: hit at {hits.tolist()}, active {first}-{last}"
    assert bool((hit_frame[dist >= far] == 0).all()), f"{move}: hit beyond reach {far:.1f}: {hit_frame.tolist()}"


def test_falling_reaches_terminal_velocity_and_fast_fall():
    env = Arena(2, cpu_level=1, seed=0)
    env.reset()
    place(env, AGENT, position_x=-80.0, position_y=150.0, speed_y=0.0, on_ground=0.0,
          action=float(Action.FALLING.value))
    env.state = with_game(env.state, cpu_cooldown=10_000.0)
    ys = []
    for _ in range(20):
        env.step(torch.zeros(2, dtype=torch.long))
        ys.append(env.state.players.position_y[0, AGENT].item())
    assert env.state.players.speed_y[0, AGENT].item() == pytest.approx(-d.FOX.terminal)  # 2.8 from characterdata
    assert ys[-2] - ys[-1] == pytest.approx(d.FOX.terminal, abs=1e-4)
    # Holding down while falling: fast fall speed 3.4 (characterdata).
    basic = Arena(1, cpu_level=1, seed=0, action_set="basic")
    basic.reset()
    place(basic, AGENT, position_x=-80.0, position_y=150.0, speed_y=-1.0, on_ground=0.0,
          action=float(Action.FALLING.value))
    basic.state = with_game(basic.state, cpu_cooldown=10_000.0)
    basic.step(torch.tensor([get_action_set("basic").index("none_down")]))
    assert basic.state.players.speed_y[0, AGENT].item() == pytest.approx(-d.FOX.fast_fall)


def test_double_jump_apex_matches_libmelee_dj_height():
    env = Arena(1, cpu_level=1, seed=0, action_set="basic")
    env.reset()
    place(env, AGENT, position_x=-70.0, position_y=60.0, speed_y=0.0, on_ground=0.0, jumps_left=1.0,
          action=float(Action.FALLING.value))
    env.state = with_game(env.state, cpu_cooldown=10_000.0)
    y0 = env.state.players.position_y[0, AGENT].item()
    env.step(torch.tensor([get_action_set("basic").index("y_neutral")]))
    assert env.state.players.jumps_left[0, AGENT].item() == 0  # the double jump is spent
    top = env.state.players.position_y[0, AGENT].item()
    for _ in range(40):
        env.step(torch.tensor([0]))
        top = max(top, env.state.players.position_y[0, AGENT].item())
    fox = SimpleNamespace(character=Character.FOX, jumps_left=1, action=Action.FALLING, speed_y_self=0.0)
    expected = FD.dj_height(fox)
    assert abs((top - y0) - expected) / expected < 0.05, (top - y0, expected)
    assert env.state.players.on_ground[0, AGENT].item() == 1 and env.state.players.jumps_left[0, AGENT].item() == 2  # landing restores jumps


def test_blast_zone_ko_removes_a_stock_and_respawns():
    env = Arena(1, cpu_level=1, seed=0, reward="damage")
    env.reset()
    place(env, AGENT, position_x=d.BLAST_RIGHT + 1.0, position_y=30.0, on_ground=0.0, percent=80.0,
          action=float(Action.FALLING.value))
    _, _, done, info = env.step(torch.tensor([0]))
    assert info["stocks_lost"].item() == 1 and not done.item()
    assert env.state.players.stock[0, AGENT].item() == 3
    assert env.state.players.percent[0, AGENT].item() == 0
    assert abs(env.state.players.position_x[0, AGENT].item()) < d.EDGE and env.state.players.on_ground[0, AGENT].item() == 1
    assert env.players()["agent"]["invulnerable"].item()


def test_spot_dodge_is_intangible_through_an_fsmash_that_hits_a_standing_fox():
    env = Arena(2, cpu_level=9, seed=0, reward="damage")
    env.reset()
    start_marth_attack(env, "fsmash", torch.tensor([-15.0, -15.0]))
    spot = get_action_set("untouchable").index("spot_dodge")
    env.step(torch.tensor([spot, NOOP]))  # Fox 0 dodges on fsmash frame 1; Fox 1 stands
    for _ in range(30):
        env.step(torch.tensor([NOOP, NOOP]))
    pct = env.state.players.percent[:, AGENT]
    # Fox 15 units away is touched by the sword's hitbox 1 on the first active frame, not by the tipper
    # (id 3, 20%): the game data's fsmash sword hitboxes deal 14% (hitboxes.csv, Marth action 60).
    assert pct[0].item() == 0 and pct[1].item() == 14.0


def test_a_player_falling_just_past_the_edge_catches_the_ledge_and_one_far_out_does_not():
    env = Arena(2, cpu_level=1, seed=0)
    env.reset()
    env.state = with_player(env.state, AGENT, position_x=torch.tensor([d.EDGE + 5.0, d.EDGE + 60.0]))
    place(env, AGENT, position_y=-2.0, speed_y=-1.0, on_ground=0.0, action=float(Action.FALLING.value))
    env.state = with_game(env.state, cpu_cooldown=10_000.0)
    env.step(torch.zeros(2, dtype=torch.long))
    assert env.state.players.on_ground[0, AGENT].item() == 1 and abs(env.state.players.position_x[0, AGENT].item()) < d.EDGE
    assert env.state.players.action[0, AGENT].item() == Action.EDGE_GETUP_SLOW.value
    assert env.players()["agent"]["invulnerable"][0].item()  # the getup is intangible
    assert env.state.players.on_ground[1, AGENT].item() == 0 and env.state.players.position_y[1, AGENT].item() < -2.0
