"""Fights (``game="fight"``): Melee's stock rules, KOs at every blast zone, respawn, the clock, ties, input delay."""

from __future__ import annotations

import pytest
import torch
from melee.enums import Action

from melee_agent.arena import Arena
from melee_agent.arena import libmelee_data as d
from melee_agent.arena.env_state import AGENT, CPU, with_game, with_player
from melee_agent.arena.dodge.frame import intangible
from melee_agent.envs.rewards import GAME_FRAMES, game_result
from melee_agent.envs.state import STATE_DIM
from melee_agent.rl.model import DuelingDQN
from melee_agent.rl.rows import DISCOUNT, NEXT_OBS, REWARD
from melee_agent.workers.nstep import nstep_rows

FALLING = float(Action.FALLING.value)


def fight(num_envs: int = 1, **kw) -> Arena:
    kw.setdefault("action_set", "basic")
    env = Arena(num_envs, cpu_level=1, seed=0, game="fight", **kw)
    env.reset()
    env.state = with_game(env.state, cpu_cooldown=1e9)  # the CPU never attacks unless a test wants it
    return env


def noop(env: Arena) -> tuple:
    return env.step(torch.full((env.num_envs,), env.noop_index))


@pytest.mark.parametrize("who", [AGENT, CPU])
def test_a_ko_at_each_blast_zone_costs_one_stock_and_respawns_invulnerable(who):
    # Final Destination's blast zones from libmelee's stages.py: x -246 / +246, top 188, bottom -140.
    spots = [(d.BLAST_LEFT - 1.0, 20.0), (d.BLAST_RIGHT + 1.0, 20.0), (0.0, d.BLAST_TOP + 1.0), (0.0, d.BLAST_BOTTOM - 1.0)]
    env = fight(len(spots))
    env.state = with_player(env.state, who, position_x=torch.tensor([x for x, _ in spots]),
                            position_y=torch.tensor([y for _, y in spots]), on_ground=0.0, percent=75.0, action=FALLING)
    _, reward, done, info = noop(env)
    ps = env.state.players
    assert ps.stock[:, who].tolist() == [3.0] * 4 and ps.stock[:, 1 - who].tolist() == [4.0] * 4
    assert ps.percent[:, who].tolist() == [0.0] * 4 and (ps.position_x[:, who].abs() < d.EDGE).all()
    # 120 frames of invulnerability from the KO's frame, counted down through the rest of the macro
    left = float(d.RESPAWN_INVULNERABLE - (info.frames[0].item() - 1))
    assert ps.invulnerability_left[:, who].tolist() == [left] * 4
    assert intangible(ps, env.T)[:, who].all()
    lost, taken = (info.stocks_lost, info.stocks_taken) if who == AGENT else (info.stocks_taken, info.stocks_lost)
    assert lost.tolist() == [1] * 4 and taken.tolist() == [0] * 4
    # reward "fight": a stock is worth +-1 (docs/design.md)
    assert reward.tolist() == [-1.0 if who == AGENT else 1.0] * 4
    assert not done.any() and not info.game_over.any()
    frames = info.frames[0].item()
    while frames <= d.RESPAWN_INVULNERABLE:  # the KO frame, then 120 more
        assert intangible(env.state.players, env.T)[:, who].all()
        frames += noop(env)[3].frames[0].item()
    assert (env.state.players.invulnerability_left[:, who] == 0).all()


def test_the_last_stock_ends_the_game_terminal_with_its_result_and_a_new_game_starts():
    env = fight(2)
    env.state = with_player(env.state, AGENT, stock=torch.tensor([1.0, 2.0]), position_x=d.BLAST_RIGHT + 5.0,
                            position_y=30.0, on_ground=0.0, action=FALLING)
    _, _, done, info = noop(env)
    assert done.tolist() == [True, False] and info.terminal.tolist() == [True, False]
    assert info.game_over.tolist() == [True, False] and not info.truncated.any()
    assert info.agent_stocks.tolist() == [0, 1] and info.opponent_stocks.tolist() == [4, 4]
    result = game_result(info.agent_stocks, info.opponent_stocks, info.agent_percent, info.opponent_percent)
    assert result[0].item() == -1  # lost
    assert env.state.players.stock[0].tolist() == [4.0, 4.0] and env.state.game.episode_frame[0].item() == 0


def test_the_clock_ends_the_game_as_a_cut_and_more_stocks_then_less_percent_wins():
    # The default layout shows no clock: its end is a cut (truncated), yet the game is over.
    env = fight(4, action_set="untouchable")  # its noop is one frame
    assert env.max_frames == GAME_FRAMES == 28_800  # 8:00
    env.state = with_game(env.state, episode_frame=float(GAME_FRAMES - 2), cpu_cooldown=1e9)
    env.state = with_player(env.state, AGENT, stock=torch.tensor([3.0, 2.0, 2.0, 2.0]),
                            percent=torch.tensor([90.0, 10.0, 50.0, 40.0]))
    env.state = with_player(env.state, CPU, stock=torch.tensor([2.0, 2.0, 2.0, 2.0]),
                            percent=torch.tensor([0.0, 20.0, 20.0, 40.0]))
    _, _, done, info = noop(env)
    assert not done.any()  # 28,799 frames played: one to go
    _, _, done, info = noop(env)
    assert done.all() and info.truncated.all() and not info.terminal.any() and info.game_over.all()
    assert info.episode_frame.tolist() == [GAME_FRAMES] * 4
    result = game_result(info.agent_stocks, info.opponent_stocks, info.agent_percent, info.opponent_percent)
    assert result.tolist() == [1, 1, -1, 0]  # more stocks; equal stocks, less percent; more percent; a draw


def test_a_state_at_the_clock_and_mid_game_gets_the_same_bootstrapped_target_without_the_clock():
    # Pardo et al. 2018: where the state lacks the time left, the clock's cut must bootstrap, or two equal
    # states get different targets (0 at the cut, the bootstrapped value mid-game).
    env = fight(2, action_set="untouchable")  # its noop is one frame
    env.state = with_game(env.state, episode_frame=torch.tensor([GAME_FRAMES - 1.0, 1_000.0]), cpu_cooldown=1e9)
    for who, x in ((AGENT, -30.0), (CPU, 30.0)):  # the spawns differ by environment
        env.state = with_player(env.state, who, position_x=x)
    obs = env.observe()
    assert torch.equal(obs[0], obs[1])  # the 27 floats hold no clock: the same state
    _, reward, done, info = noop(env)
    assert done.tolist() == [True, False] and info.game_over.tolist() == [True, False]
    rows = nstep_rows(obs.unsqueeze(0), torch.full((1, 2), env.noop_index), reward.unsqueeze(0),
                      info.final_obs.unsqueeze(0), done.unsqueeze(0), info.terminal.unsqueeze(0), n=1, gamma=0.99)
    assert rows[:, DISCOUNT].tolist() == pytest.approx([0.99, 0.99])
    torch.manual_seed(0)
    q = DuelingDQN(STATE_DIM, env.num_actions)
    with torch.no_grad():  # one row a forward: a batch's rows may round differently
        target = [float(r[REWARD] + r[DISCOUNT] * q(r[NEXT_OBS].unsqueeze(0)).max()) for r in rows]
    assert torch.equal(rows[0], rows[1]) and target[0] == target[1] != float(rows[0, REWARD])


def test_the_fight_layout_shows_the_time_left_and_stocks_and_its_clock_end_is_terminal():
    env = fight(2, action_set="untouchable", state_layout="fight-30")
    env.state = with_game(env.state, episode_frame=torch.tensor([GAME_FRAMES - 1.0, 7_200.0]), cpu_cooldown=1e9)
    env.state = with_player(env.state, AGENT, stock=torch.tensor([3.0, 1.0]))
    obs = env.observe()
    assert obs.shape == (2, 30)
    # time left / 28,800 (Melee's 8:00), then the agent's and the opponent's stocks / 4
    assert obs[:, 27:].flatten().tolist() == pytest.approx([1 / GAME_FRAMES, 0.75, 1.0, 0.75, 0.25, 1.0])
    nxt, _, done, info = noop(env)
    assert done.tolist() == [True, False] and info.game_over.tolist() == [True, False]
    assert info.terminal.tolist() == [True, False] and not info.truncated.any()  # the state shows the clock
    assert info.final_obs[0, 27:].tolist() == [0.0, 0.75, 1.0]  # the game's last state: no time left
    assert nxt[0, 27:].tolist() == [1.0, 1.0, 1.0]  # the next game's first: 8:00 and 4 stocks each
    assert nxt[1, 27].item() == pytest.approx((GAME_FRAMES - 7_201) / GAME_FRAMES)
    with pytest.raises(ValueError, match="state_layout 'fight-30' shows a fight's clock"):
        Arena(1, state_layout="fight-30")
    with pytest.raises(ValueError, match="unknown env.state_layout 'other-9'"):
        Arena(1, game="fight", state_layout="other-9")


def test_dodging_episodes_are_not_games():
    env = Arena(1, cpu_level=1, seed=0, max_frames=5)
    env.reset()
    for _ in range(5):
        _, _, done, info = env.step(torch.zeros(1, dtype=torch.long))
    assert done.item() and info.truncated.item() and not info.game_over.item()


def test_bad_game_settings_are_refused_by_name():
    with pytest.raises(ValueError, match="unknown game 'brawl'"):
        Arena(1, game="brawl")
    with pytest.raises(ValueError, match="reward 'untouchable' does not fit game 'fight'"):
        Arena(1, game="fight", reward="untouchable")
    for bad in (-1, 61, 2.5, True):
        with pytest.raises(ValueError, match="delay_frames"):
            Arena(1, game="fight", delay_frames=bad)


@pytest.mark.parametrize("delay", [1, 18])
def test_input_delay_reaches_the_game_that_many_frames_later(delay):
    """A spot dodge (L + down) chosen at frame 0 starts on the game's frame 1 + delay."""
    starts = {}
    for dl in (0, delay):
        env = fight(1, action_set="untouchable", delay_frames=dl)
        env.state = with_player(env.state, CPU, position_x=80.0)
        env.state = with_player(env.state, AGENT, position_x=-80.0)
        seen = []
        env.on_frame = lambda s, seen=seen: seen.append(s.players.action[0, AGENT].item())
        env.step(torch.tensor([1]))  # spot dodge: 22 frames
        while len(seen) < delay + 5:
            noop(env)
        starts[dl] = seen.index(float(Action.SPOTDODGE.value)) + 1
    assert starts[0] == 1 and starts[delay] == 1 + delay


@pytest.mark.slow
def test_one_environment_and_1024_play_the_same_fight():
    def play(n: int) -> list[torch.Tensor]:
        env = Arena(n, cpu_level=9, seed=5, game="fight", action_set="basic", delay_frames=18)
        out = [env.reset()[0]]
        gen = torch.Generator().manual_seed(2)
        for _ in range(60):
            a = torch.randint(0, env.num_actions, (1,), generator=gen).expand(n)
            obs, reward, done, info = env.step_async(a)
            out += [obs[0], reward[0:1], info.ready[0:1].float(), info.agent_stocks[0:1].float()]
        return out

    for x, y in zip(play(1), play(1024)):
        assert torch.equal(x, y)


def test_evaluate_reports_games_when_episodes_are_games():
    from melee_agent.report.evaluate import evaluate, summarize  # noqa: PLC0415

    env = fight(4, action_set="untouchable", max_frames=30)  # a 30-frame clock: every game goes to time
    report = evaluate(env, lambda obs: torch.zeros(obs.shape[0], dtype=torch.long), episodes=4, progress=False)
    g = report.fights
    assert g is not None and g.games == 4 and g.draws == 4 and g.win_rate == 0.0  # nobody was hit
    dodge = evaluate(Arena(2, cpu_level=1, seed=0, max_frames=30), lambda obs: torch.zeros(2, dtype=torch.long),
                     episodes=2, progress=False)
    assert dodge.fights is None and "games" not in dodge.to_json()  # dodging episodes are not games
    row = dict(cpu_level=9, untouched=0.0, seconds_to_first_hit=1.0, damage_taken=10.0, damage_dealt=40.0,
               stocks_lost=1.0, stocks_taken=4.0, game_over=1.0)
    rows = [{**row, "result": 1.0}, {**row, "result": 1.0}, {**row, "result": -1.0}, {**row, "result": 0.0}]
    out = summarize(rows).fights
    assert out is not None
    assert (out.games, out.wins, out.losses, out.draws, out.win_rate) == (4, 2, 1, 1, 0.5)
    assert out.stocks_taken_per_game == 4.0 and out.damage_dealt_per_game == 40.0
