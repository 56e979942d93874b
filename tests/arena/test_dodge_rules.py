"""The dodging game as rules on the fight's engine (DESIGN.md "Dodging"): one Fox, one Marth and one CPU for
both games; one-minute episodes that end when Fox is hit; the ``untouchable`` reward and its five macros."""

from __future__ import annotations

import pytest
import torch
from melee.enums import Action

from melee_agent.arena import Arena
from melee_agent.arena.env_state import AGENT, CPU, EnvState
from melee_agent.arena.fight.frame import fight_frame
from melee_agent.arena.fight.state import FightState
from melee_agent.envs.actions import get_action_set
from melee_agent.games import DODGE


def test_the_dodging_game_against_melees_cpu_plays_on_the_fight_engine_the_designed_cpu_on_its_own_frame():
    from melee_agent.arena.dodge.frame import game_frame  # noqa: PLC0415

    melee, designed = Arena(2, cpu="melee"), Arena(2, cpu="designed")
    assert melee.fight_engine and isinstance(melee.state.fight, FightState)
    assert not designed.fight_engine and designed.state.fight is None
    assert DODGE.frame("melee") is fight_frame and DODGE.frame("designed") is game_frame
    # The dodging rules stay the dodging game's: Fox against Marth, untouchable actions and reward, a minute's cut.
    assert (melee.action_set, melee.reward_kind, melee.max_frames, melee.whole_games) == \
        ("untouchable", "untouchable", 3_600, False)


def _frames(game: str, actions: torch.Tensor, level: int | list[int], seed: int = 5) -> list[EnvState]:
    """Each frame's state of ``game``, the untouchable actions ``[steps, B]`` played in both games."""
    env = Arena(actions.shape[1], cpu_level=level, seed=seed, cpu="melee", game=game, action_set="untouchable",
                reward="untouchable" if game == "dodge" else "fight")
    env.reset()
    states: list[EnvState] = []
    env.on_frame = states.append
    for a in actions:
        env.step(a)
    return states


@pytest.mark.slow
def test_the_dodging_and_fight_games_share_one_marth():
    # The same Fox inputs give the same Marth frame by frame in both games, Melee's CPU choosing for him in each,
    # up to the frame the dodging episode ends (Fox hit: the fight goes on, the dodging game starts anew).
    n, steps = 12, 16
    gen = torch.Generator().manual_seed(3)
    # Half noops (one frame each), half dodges, rolls and shines: about 200 frames a game.
    actions = torch.where(torch.rand(steps, n, generator=gen) < 0.5, 0, torch.randint(1, 5, (steps, n), generator=gen))
    levels = [1, 5, 9]
    dodge, fight = _frames("dodge", actions, levels), _frames("fight", actions, levels)
    assert len(dodge) == len(fight)
    alive = torch.ones(n, dtype=torch.bool)
    compared, marth_moved = 0, torch.zeros(n, dtype=torch.bool)
    for d, g in zip(dodge, fight):
        # A dodging episode's frames, its last (the hit) included: the dodging arena then holds the game still
        # until the step's end and starts a new one; the fight goes on.
        alive &= d.game.episode_frame == g.game.episode_frame
        # Marth's every field, his CPU's memory, and Fox's fields too (the same motion and hits).
        for name in d.players._fields:
            a, b = getattr(d.players, name), getattr(g.players, name)
            assert torch.equal(a[alive], b[alive]), (name, int(g.game.episode_frame[0]))
        for name in ("cpu_act", "cpu_wait", "cpu_count", "hitlag_left", "stale"):
            a, b = getattr(d.fight, name), getattr(g.fight, name)
            assert torch.equal(a[alive], b[alive]), (name, int(g.game.episode_frame[0]))
        assert torch.equal(d.game.cpu_cooldown[alive], g.game.cpu_cooldown[alive])
        marth_moved |= alive & (d.players.action[:, CPU] != float(Action.STANDING.value))
        compared += int(alive.sum())
    assert compared > 40 * n  # a second of frames and more, each game's
    assert marth_moved.sum() >= n // 2  # Marth walked or attacked in most games: his choices were compared
    assert not alive.all()  # some Fox was hit: the comparison ran up to a dodging episode's end


@pytest.mark.slow
def test_an_episode_ends_when_fox_is_hit_terminal_and_is_cut_at_its_frame_limit_not_terminal():
    env = Arena(8, cpu_level=9, seed=0, cpu="melee", max_frames=300)
    env.reset()
    noop = torch.full((8,), env.noop_index)
    ended = torch.zeros(8, dtype=torch.bool)
    for _ in range(300):
        _, reward, done, info = env.step(noop)
        fresh = done & ~ended
        # A hit ends the episode there (terminal), its frames counted in info["episode_frame"].
        assert torch.equal(info["hit"][fresh], info.terminal[fresh])
        assert not (info.truncated & info.terminal).any()
        assert (info["episode_frame"][fresh & info.terminal] < 300).all()
        assert torch.equal(reward[fresh & info.terminal], torch.zeros_like(reward[fresh & info.terminal]))
        ended |= done
        if bool(ended.sum() >= 4):
            break
    assert ended.sum() >= 4  # a level-9 Marth hits most standing Foxes within 5 seconds
    # Where nothing hits (level 1, a short cut), the cut is a truncation after exactly max_frames, and each
    # standing noop frame paid 1/60.
    env = Arena(8, cpu_level=1, seed=0, cpu="melee", max_frames=20)
    env.reset()
    total = torch.zeros(8)
    for i in range(20):
        _, reward, done, info = env.step(torch.full((8,), env.noop_index))
        total += reward
        assert bool(done.any()) is (i == 19)
    assert info.truncated.all() and not info.terminal.any() and not info["hit"].any()
    assert info["episode_frame"].tolist() == [20.0] * 8
    assert torch.allclose(total, torch.full((8,), 20 / 60))


@pytest.mark.parametrize("name,first,frames", [
    ("spot_dodge", Action.SPOTDODGE, 22),  # DESIGN.md "Actions": 10 frames L + down, 12 neutral
    ("roll_left", Action.ROLL_BACKWARD, 32),  # Fox faces right at the start here: left is a backward roll
    ("roll_right", Action.ROLL_FORWARD, 32),
    ("shine", Action.DOWN_B_GROUND_START, 6),  # B + down, 2 neutral, jump, 2 neutral
])
def test_each_macro_plays_its_move_on_the_fight_engine_and_pays_nothing(name, first, frames):
    env = Arena(1, cpu_level=1, seed=0, cpu="melee")
    env.reset()
    env.place(AGENT, 0, position_x=-60.0, facing=True)
    env.place(CPU, 0, position_x=60.0, facing=False)  # far: nothing reaches Fox in these frames
    acts: list[int] = []
    env.on_frame = lambda s: acts.append(int(s.players.action[0, AGENT]))
    _, reward, done, info = env.step(torch.tensor([get_action_set("untouchable").index(name)]))
    assert info.frames.tolist() == [frames] and acts[0] == first.value and not bool(done)
    assert float(reward) == 0.0  # the reward pays standing during a noop only
    if name == "shine":  # jump-cancelled on its 4th frame: the jump squat follows
        assert Action.KNEE_BEND.value in acts


def test_the_fight_engines_tools_work_in_the_dodging_game_not_on_the_designed_frame():
    env = Arena(2, cpu="melee")
    env.reset()
    env.place(AGENT, None, position_x=10.0, percent=30.0)
    assert env.state.players.position_x[:, AGENT].tolist() == [10.0, 10.0]
    with pytest.raises(ValueError, match="fight's engine"):
        Arena(2, cpu="designed").place(AGENT, None, position_x=10.0)


def test_the_roller_rolls_toward_marth_when_he_is_near_and_needs_the_rolls():
    from melee_agent.envs.state import STATE_FIELDS, STATE_NAMES  # noqa: PLC0415
    from melee_agent.rl.policies import make_policy  # noqa: PLC0415

    names = get_action_set("untouchable").names
    col = {n: i for i, n in enumerate(STATE_NAMES)}
    scale = {f.name: (f.offset, f.scale) for f in STATE_FIELDS}
    obs = torch.zeros(3, len(STATE_NAMES))
    for i, (fox, marth) in enumerate(((0.0, 20.0), (0.0, -20.0), (0.0, 50.0))):
        for name, x in (("agent_x", fox), ("opponent_x", marth)):
            offset, s = scale["x"]
            obs[i, col[name]] = (x + offset) / s
    acts = [names[a] for a in make_policy("roller", "untouchable")(obs).tolist()]
    assert acts == ["roll_right", "roll_left", "noop"]
    with pytest.raises(ValueError, match="roll_left and roll_right"):
        make_policy("roller", "basic")
