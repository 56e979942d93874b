"""Ports (DESIGN.md "Ports, opponents and the league"): characters per port, each port's own view, model opponents."""

from __future__ import annotations

import pytest
import torch

from melee_agent.arena import Arena
from melee_agent.arena.ports import Opponent, Opponents, character_table, observe_port
from melee_agent.rl.model import DuelingDQN
from melee_agent.rl.policies import fighter_policy

FIGHTER = fighter_policy("fight")
# The 27-float state's x, speed_x and facing (per fighter): what a left-right mirror turns into 1 - value.
MIRRORED = (0, 2, 5)


def mirror(obs: torch.Tensor) -> torch.Tensor:
    out = obs.clone()
    for base in (0, 13):
        for i in MIRRORED:
            out[:, base + i] = 1.0 - obs[:, base + i]
    return out


def mirrored_start(env: Arena) -> torch.Tensor:
    """Both fighters placed as each other's mirror image (the arena's own start is not symmetric)."""
    env.reset()
    env.place(0, position_x=-30.0, facing=True)
    env.place(1, position_x=30.0, facing=False)
    return env.observe()


@pytest.mark.slow
def test_port_view_swaps_the_halves_and_keeps_each_ports_previous_action():
    env = Arena(3, game="fight", characters=("marth", "fox"), seed=2)
    env.set_opponents(Opponents.split([FIGHTER], 3, env))
    obs = env.reset()
    for _ in range(8):
        obs, *_ = env.step(FIGHTER(obs))
        o1 = observe_port(env, 1, env.opponents.previous.float())
        assert torch.equal(o1[:, :13], obs[:, 13:26]) and torch.equal(o1[:, 13:26], obs[:, :13])
        assert torch.allclose(o1[:, 26], env.opponents.previous.float() / (env.num_actions - 1))


@pytest.mark.slow
@pytest.mark.parametrize("ditto", ["fox", "marth"])
def test_a_ditto_from_a_mirrored_start_stays_mirrored_from_either_ports_view(ditto):
    """The same policy on both ports of a ditto, started as mirror images: each port's own view is the other's
    mirrored at every decision, damage included (the fight has no side built in but the respawn spots)."""
    env = Arena(2, game="fight", characters=(ditto, ditto), seed=1)
    env.set_opponents(Opponents.split([FIGHTER], 2, env))
    obs = mirrored_start(env)
    for _ in range(80):
        assert torch.allclose(obs[:, :26], mirror(observe_port(env, 1))[:, :26], atol=1e-6)
        obs, *_ = env.step(FIGHTER(obs))
    assert float(env.state.players.percent.min()) > 0  # blows were traded, and still mirrored


def _frames(env: Arena, port: int, steps: int) -> torch.Tensor:
    """Every frame of ``steps`` decisions, as port ``port`` sees it (the first 26 values, mirrored for port 1)."""
    seen = []
    env.on_frame = lambda state: seen.append(observe_port(env, port)[:, :26].clone())
    obs = mirrored_start(env)
    for _ in range(steps):
        obs, *_ = env.step(FIGHTER(obs))
    env.on_frame = None
    out = torch.stack(seen)
    return out if port == 0 else torch.stack([mirror(f) for f in out])


@pytest.mark.slow
def test_seat_swap_the_same_game_from_either_port():
    """Fox (port 0) vs Marth (port 1), and the same two on swapped ports as mirror images: every frame of the first
    game as port 0 sees it is the frame of the second as port 1 sees it, mirrored (and the other way round)."""
    a = Arena(2, game="fight", characters=("fox", "marth"), seed=4)
    a.set_opponents(Opponents.split([FIGHTER], 2, a))
    b = Arena(2, game="fight", characters=("marth", "fox"), seed=4)
    b.set_opponents(Opponents.split([FIGHTER], 2, b))
    fa, fb = _frames(a, 0, 40), _frames(b, 1, 40)
    n = min(len(fa), len(fb))
    assert n > 60
    assert torch.allclose(fa[:n], fb[:n], atol=1e-6)
    assert float(a.state.players.percent.max()) > 0


def test_characters_change_the_table_only_where_asked():
    env = Arena(2, game="fight")
    T = env._consts.fight.table
    assert character_table(T, ("fox", "marth")) is T
    ditto = character_table(T, ("marth", "marth"))
    assert torch.equal(ditto.base[:, 0], T.base[:, 1]) and torch.equal(ditto.weight[:, 0], T.weight[:, 1])
    assert torch.equal(ditto.attrs.gravity[:, 0], T.attrs.gravity[:, 1])


def _net(seed: int, num_actions: int) -> DuelingDQN:
    torch.manual_seed(seed)
    return DuelingDQN(num_actions=num_actions, shared=16, stream=16).eval()


def _greedy(net: DuelingDQN):
    @torch.inference_mode()
    def act(obs: torch.Tensor) -> torch.Tensor:
        return net(obs).argmax(1)
    return act


@pytest.mark.slow
def test_one_environment_and_1024_play_the_same_game_with_a_model_opponent():
    """Environment 0 of 1,024 against a model opponent plays what a lone environment plays (lockstep steps)."""
    calls = 25
    trajectories = []
    for B in (1, 1024):
        env = Arena(B, game="fight", characters=("fox", "fox"), seed=7)
        agent, opponent = _greedy(_net(1, env.num_actions)), _greedy(_net(2, env.num_actions))
        env.set_opponents(Opponents.split([opponent], B, env))
        obs = env.reset()
        seen = [obs[0].clone()]
        for _ in range(calls):
            obs, reward, done, info = env.step(agent(obs))
            seen.append(torch.cat((obs[0], reward[:1], info.damage_dealt[:1], info.damage_taken[:1])))
        trajectories.append(torch.stack(seen[1:]))
    assert torch.equal(trajectories[0], trajectories[1])


def test_a_pool_splits_the_environments_and_the_rest_play_the_cpu():
    env = Arena(6, game="fight", seed=3)
    pool = Opponents.split([FIGHTER, FIGHTER], 6, env, share=2 / 3, names=["a", "b"])
    assert [m.envs.tolist() for m in pool.members] == [[0, 1], [2, 3]]
    assert pool.mask.tolist() == [True] * 4 + [False] * 2
    env.set_opponents(pool)
    obs = env.reset()
    for _ in range(5):
        obs, *_ = env.step(FIGHTER(obs))
    assert env.opponents.previous[:4].ne(0).any()  # the members chose macros; the CPU's environments never do
    assert env.opponents.previous[4:].eq(0).all()


def test_bad_ports_are_refused_before_any_play():
    with pytest.raises(ValueError, match="unknown character 'luigi'"):
        Arena(2, game="fight", characters=("fox", "luigi"))
    with pytest.raises(ValueError, match="plays fights"):
        Arena(2, characters=("fox", "fox"))
    env = Arena(2, game="fight", characters=("fox", "fox"))
    with pytest.raises(ValueError, match="the CPU plays Marth only"):
        env.reset()
    with pytest.raises(ValueError, match="already plays"):
        Opponents([Opponent(FIGHTER, [0, 1], "a"), Opponent(FIGHTER, [1], "b")], 2)


def test_a_model_file_records_its_character_and_configs_check_theirs(tmp_path):
    from melee_agent.config import ConfigError, load_config
    from melee_agent.rl.model import load_model, save_model

    save_model(tmp_path / "m.safetensors", _net(0, 46), version=1, train_step=2, action_set="fight", character="marth")
    assert load_model(tmp_path / "m.safetensors", action_set="fight")[1]["character"] == "marth"
    cfg = load_config("configs/fight.toml", ["env.characters=[\"Marth\", \"marth\"]"])
    assert cfg.env.characters == ["marth", "marth"]
    with pytest.raises(ConfigError, match="the CPU plays Marth only"):
        load_config("configs/fight.toml", ["env.characters=[\"marth\", \"fox\"]"])
    with pytest.raises(ConfigError, match="plays arena fights"):
        load_config("configs/default.toml", ["env.characters=[\"fox\", \"fox\"]"])
    with pytest.raises(ConfigError, match="must name two of fox, marth"):
        load_config("configs/fight.toml", ["env.characters=[\"fox\"]"])
