"""Arena physics and frame data against libmelee's own numbers (FrameData, characterdata)."""

from __future__ import annotations

from types import SimpleNamespace

import melee
import pytest
import torch
from melee.enums import Action, Character

from melee_agent.actions import get_action_set
from melee_agent.arena import Arena
from melee_agent.arena import data as d
from melee_agent.arena.layout import AGENT, CPU, E, P
from melee_agent.arena.tables import MOVE_INDEX

FD = melee.framedata.FrameData()
NOOP = 0


def place(env: Arena, who: int, **cols: float) -> None:
    for name, value in cols.items():
        env.S[:, who, getattr(P, name)] = value


def start_marth_attack(env: Arena, move_name: str, marth_x: torch.Tensor) -> None:
    k = MOVE_INDEX[move_name]
    mv = d.MARTH_MOVES[k]
    place(env, AGENT, X=0.0, Y=0.0, INV=0.0, GND=1.0, FACE=-1.0)
    env.S[:, CPU, P.X] = marth_x
    place(env, CPU, Y=0.0, FACE=1.0, MOVE=float(k), ACT=float(mv.action), AF=0.0, BUSY=float(mv.length + 1),
          GND=1.0, HITDONE=0.0)
    env.En[:, E.CPU_CD] = 10_000.0  # no second attack


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
        before = env.S[:, AGENT, P.PCT].clone()
        env.step(torch.full((len(dist),), NOOP))
        newly = (env.S[:, AGENT, P.PCT] > before) & (hit_frame == 0)
        hit_frame[newly] = af
    hits = hit_frame[hit_frame > 0]
    assert len(hits) >= 3, f"{move}: close-range targets were not hit: {hit_frame.tolist()}"
    assert bool(((hits >= first) & (hits <= last)).all()), f"{move}: hit at {hits.tolist()}, active {first}-{last}"
    assert bool((hit_frame[dist >= far] == 0).all()), f"{move}: hit beyond reach {far:.1f}: {hit_frame.tolist()}"


def test_falling_reaches_terminal_velocity_and_fast_fall():
    env = Arena(2, cpu_level=1, seed=0)
    env.reset()
    place(env, AGENT, X=-80.0, Y=150.0, VY=0.0, GND=0.0, ACT=float(Action.FALLING.value))
    env.En[:, E.CPU_CD] = 10_000.0
    ys = []
    for _ in range(20):
        env.step(torch.zeros(2, dtype=torch.long))
        ys.append(env.S[0, AGENT, P.Y].item())
    assert env.S[0, AGENT, P.VY].item() == pytest.approx(-d.FOX.terminal)  # 2.8 from characterdata
    assert ys[-2] - ys[-1] == pytest.approx(d.FOX.terminal, abs=1e-4)
    # Holding down while falling: fast fall speed 3.4 (characterdata).
    basic = Arena(1, cpu_level=1, seed=0, action_set="basic")
    basic.reset()
    place(basic, AGENT, X=-80.0, Y=150.0, VY=-1.0, GND=0.0, ACT=float(Action.FALLING.value))
    basic.En[:, E.CPU_CD] = 10_000.0
    basic.step(torch.tensor([get_action_set("basic").index("none_down")]))
    assert basic.S[0, AGENT, P.VY].item() == pytest.approx(-d.FOX.fast_fall)


def test_double_jump_apex_matches_libmelee_dj_height():
    env = Arena(1, cpu_level=1, seed=0, action_set="basic")
    env.reset()
    place(env, AGENT, X=-70.0, Y=60.0, VY=0.0, GND=0.0, JUMPS=1.0, ACT=float(Action.FALLING.value))
    env.En[:, E.CPU_CD] = 10_000.0
    y0 = env.S[0, AGENT, P.Y].item()
    env.step(torch.tensor([get_action_set("basic").index("y_neutral")]))
    assert env.S[0, AGENT, P.JUMPS].item() == 0  # the double jump is spent
    top = env.S[0, AGENT, P.Y].item()
    for _ in range(40):
        env.step(torch.tensor([0]))
        top = max(top, env.S[0, AGENT, P.Y].item())
    fox = SimpleNamespace(character=Character.FOX, jumps_left=1, action=Action.FALLING, speed_y_self=0.0)
    expected = FD.dj_height(fox)
    assert abs((top - y0) - expected) / expected < 0.05, (top - y0, expected)
    assert env.S[0, AGENT, P.GND].item() == 1 and env.S[0, AGENT, P.JUMPS].item() == 2  # landing restores jumps


def test_blast_zone_ko_removes_a_stock_and_respawns():
    env = Arena(1, cpu_level=1, seed=0, reward="damage")
    env.reset()
    place(env, AGENT, X=d.BLAST_RIGHT + 1.0, Y=30.0, GND=0.0, PCT=80.0, ACT=float(Action.FALLING.value))
    _, _, done, info = env.step(torch.tensor([0]))
    assert info["stocks_lost"].item() == 1 and not done.item()
    assert env.S[0, AGENT, P.STOCK].item() == 3
    assert env.S[0, AGENT, P.PCT].item() == 0
    assert abs(env.S[0, AGENT, P.X].item()) < d.EDGE and env.S[0, AGENT, P.GND].item() == 1
    assert env.players()["agent"]["invulnerable"].item()


def test_spot_dodge_is_intangible_through_an_fsmash_that_hits_a_standing_fox():
    env = Arena(2, cpu_level=9, seed=0, reward="damage")
    env.reset()
    start_marth_attack(env, "fsmash", torch.tensor([-15.0, -15.0]))
    spot = get_action_set("untouchable").index("spot_dodge")
    env.step(torch.tensor([spot, NOOP]))  # Fox 0 dodges on fsmash frame 1; Fox 1 stands
    for _ in range(30):
        env.step(torch.tensor([NOOP, NOOP]))
    pct = env.S[:, AGENT, P.PCT]
    assert pct[0].item() == 0 and pct[1].item() == d.MARTH_MOVES[MOVE_INDEX["fsmash"]].damage


def test_a_player_falling_just_past_the_edge_catches_the_ledge_and_one_far_out_does_not():
    env = Arena(2, cpu_level=1, seed=0)
    env.reset()
    env.S[:, AGENT, P.X] = torch.tensor([d.EDGE + 5.0, d.EDGE + 60.0])
    place(env, AGENT, Y=-2.0, VY=-1.0, GND=0.0, ACT=float(Action.FALLING.value))
    env.En[:, E.CPU_CD] = 10_000.0
    env.step(torch.zeros(2, dtype=torch.long))
    assert env.S[0, AGENT, P.GND].item() == 1 and abs(env.S[0, AGENT, P.X].item()) < d.EDGE
    assert env.S[0, AGENT, P.ACT].item() == Action.EDGE_GETUP_SLOW.value
    assert env.players()["agent"]["invulnerable"][0].item()  # the getup is intangible
    assert env.S[1, AGENT, P.GND].item() == 0 and env.S[1, AGENT, P.Y].item() < -2.0
