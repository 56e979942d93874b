"""Mixed CPU levels in one arena: each environment's level drawn at every reset, played, reported.

The arena's random numbers are a pure function of (seed, environment, counter), so an
environment of a mixed arena that drew level L must play its first episode exactly as the same
environment of a one-level arena at L: that is what shows the level column drives each CPU.
"""

from __future__ import annotations

import math

import pytest
import torch

from melee_agent.arena import Arena
from melee_agent.arena.cpu.levels import LevelMix, check_levels
from melee_agent.config import ConfigError, config_to_toml, env_levels, load_config
from melee_agent.envs.make import make_env, make_eval_env
from melee_agent.report.evaluate import evaluate
from melee_agent.rl.policies import make_policy


def _first_episode(env: Arena, actions: torch.Tensor, steps: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Observations and hits of every environment until its first episode ends (zero afterwards), and
    the levels drawn for that episode."""
    env.reset()
    levels = env.cpu_levels.clone()
    alive = torch.ones(env.num_envs, dtype=torch.bool)
    obs_log, hit_log = [], []
    for t in range(steps):
        obs, _, done, info = env.step(actions[t])
        obs_log.append(torch.where(alive.unsqueeze(1), info.final_obs, 0.0))
        hit_log.append(info.hit & alive)
        alive &= ~done
    return torch.stack(obs_log), torch.stack(hit_log), levels


@pytest.mark.slow
def test_each_environment_plays_the_level_it_drew():
    B, steps = 24, 300
    # Mostly standing (one frame a decision, so the test stays quick), with a spot dodge now and then.
    actions = torch.zeros(steps, B, dtype=torch.long)
    actions[::40] = 1
    obs_mixed, hit_mixed, drawn = _first_episode(Arena(B, cpu_level=[2, 6, 9], seed=11), actions, steps)
    assert set(drawn.tolist()) == {2, 6, 9}, drawn  # 24 draws from 3 levels: all appear (seeded)
    for level in (2, 6, 9):
        obs_one, hit_one, _ = _first_episode(Arena(B, cpu_level=level, seed=11), actions, steps)
        mine = drawn == level
        assert torch.equal(obs_mixed[:, mine], obs_one[:, mine]), f"level {level} environments differ"
        assert torch.equal(hit_mixed[:, mine], hit_one[:, mine])
    # ... and the levels are not interchangeable: level 9 hits a standing Fox sooner than level 2.
    assert hit_mixed[:, drawn == 9].any(0).float().mean() > hit_mixed[:, drawn == 2].any(0).float().mean()


@pytest.mark.slow
def test_one_level_given_as_a_list_plays_the_same_games():
    actions = torch.zeros(200, 8, dtype=torch.long)
    actions[::30] = 3
    a, b = Arena(8, cpu_level=7, seed=3), Arena(8, cpu_level=[7], seed=3)
    assert torch.equal(_first_episode(a, actions, 200)[0], _first_episode(b, actions, 200)[0])
    assert a.cpu_levels.tolist() == [7] * 8
    assert a.cpu_level == 7 and b.cpu_level == (7,)


@pytest.mark.slow
def test_levels_are_drawn_again_at_every_reset_with_the_weights():
    env = Arena(64, cpu_level=[1, 4, 9], level_weights=[1.0, 0.0, 3.0], seed=5, max_frames=30)
    env.reset()
    seen: list[int] = env.cpu_levels.tolist()
    ended: list[int] = []
    noop = torch.zeros(64, dtype=torch.long)
    changed = torch.zeros(64, dtype=torch.bool)
    first = env.cpu_levels.clone()
    for _ in range(300):
        before = env.cpu_levels.clone()
        _, _, done, info = env.step(noop)
        # info.cpu_level is the level the finished episode was played against, not the next one's.
        assert torch.equal(info.cpu_level[done], before[done])
        ended += info.cpu_level[done].tolist()
        seen += env.cpu_levels[done].tolist()
        changed |= env.cpu_levels != first
    assert changed.float().mean() > 0.5  # environments switch level between episodes
    n = len(seen)
    assert 4 not in seen  # weight 0: never drawn
    share9 = seen.count(9) / n
    # Binomial(n, 0.75): a 5-sigma band (draws are independent per environment and episode).
    assert abs(share9 - 0.75) < 5 * math.sqrt(0.75 * 0.25 / n), (share9, n)
    assert set(ended) == {1, 9}


def test_level_mix_pick_follows_the_cumulative_weights():
    mix = LevelMix.of([3, 5, 8], [2.0, 1.0, 1.0], torch.device("cpu"))
    u = torch.tensor([0.0, 0.49, 0.5, 0.74, 0.75, 0.999])
    assert mix.pick(u, torch.arange(6)).tolist() == [3, 3, 5, 5, 8, 8]
    spread = LevelMix.of([3, 5, 8], None, torch.device("cpu"), spread=True)
    assert spread.pick(u, torch.arange(6)).tolist() == [3, 5, 8, 3, 5, 8]


@pytest.mark.parametrize("levels, weights, message", [
    ([], None, "empty"),
    ([0, 5], None, "1-9, got 0"),
    ([5, 10], None, "1-9, got 10"),
    ([1, 2], [1.0], "1 weights for 2 levels"),
    ([1, 2], [1.0, -1.0], "non-negative"),
    ([1, 2], [0.0, 0.0], "positive sum"),
])
def test_bad_level_sets_are_refused_with_the_reason(levels, weights, message):
    with pytest.raises(ValueError, match=message):
        Arena(4, cpu_level=levels, level_weights=weights)


def test_spread_levels_keep_one_level_per_environment():
    env = Arena(6, cpu_level=[1, 5, 9], spread_levels=True, max_frames=20, seed=2)
    env.reset()
    for _ in range(100):
        env.step(torch.zeros(6, dtype=torch.long))
        assert env.cpu_levels.tolist() == [1, 5, 9, 1, 5, 9]


def test_config_lists_round_trip_and_bad_values_name_the_key():
    cfg = load_config("default", ["env.cpu_levels=[1, 5, 9]", "env.level_weights=[1, 2, 3.5]"])
    assert env_levels(cfg) == (1, 5, 9) and cfg.env.level_weights == [1.0, 2.0, 3.5]
    again = load_config(None)
    path_cfg = config_to_toml(cfg)
    assert "cpu_levels = [1, 5, 9]" in path_cfg and again.env.cpu_levels == []
    with pytest.raises(ConfigError, match="env.cpu_levels must be a list"):
        load_config(None, ["env.cpu_levels=9"])
    with pytest.raises(ConfigError, match="env.cpu_levels must hold integers"):
        load_config(None, ["env.cpu_levels=[1.5]"])
    # A weighted config's levels overridden alone: refused at load, naming the fix (a worker would die on it).
    with pytest.raises(ConfigError, match=r"9 weights.*env.cpu_levels is \[2, 9\].*env.level_weights=\[\]"):
        load_config("fight", ["env.cpu_levels=[2, 9]"])
    assert load_config("fight", ["env.cpu_levels=[2, 9]", "env.level_weights=[]"]).env.level_weights == []
    assert load_config("fight", ["env.cpu_levels=[2, 9]", "env.level_weights=[1, 3]"]).env.level_weights == [1.0, 3.0]
    env = make_env(cfg, num_envs=3)
    assert env.cpu_level == (1, 5, 9)
    assert make_env(cfg, num_envs=3, cpu_level=4).cpu_level == 4


def test_dolphin_refuses_a_level_mix_with_the_reason():
    cfg = load_config("default", ["env.env=dolphin", "env.cpu_levels=[1, 9]", "env.level_weights=[]"])
    with pytest.raises(ValueError, match="one CPU level"):
        make_env(cfg)


def test_evaluation_on_a_mix_reports_every_level_with_equal_counts():
    cfg = load_config("default", ["env.cpu_levels=[1, 9]", "env.level_weights=[]", "env.max_frames=600"])  # 10 s
    env, n = make_eval_env(cfg, 15, env_levels(cfg))
    assert n == 16 and env.num_envs == 16
    r = evaluate(env, make_policy("noop", "untouchable"), n, progress=False)
    assert r.per_level is not None
    assert {k: v.episodes for k, v in r.per_level.items()} == {1: 8, 9: 8}
    assert r.per_level[9].untouched_share == 0.0  # noop never lasts a minute against level 9
    assert r.untouched_share_worst_level == min(v.untouched_share for v in r.per_level.values())
    assert r.untouched_share == pytest.approx(sum(v.untouched_share for v in r.per_level.values()) / 2)
    assert r.per_level[1].mean_seconds_to_first_hit > r.per_level[9].mean_seconds_to_first_hit
    assert set(r.to_json()["per_level"]) == {"1", "9"}  # the JSON keys levels as text


def test_check_levels_accepts_one_int_or_a_list():
    assert check_levels(3) == (3,) and check_levels([9, 1]) == (9, 1)
    with pytest.raises(ValueError):
        check_levels([True])


@pytest.mark.slow
def test_worker_stats_count_episodes_per_level_and_the_board_shows_each_level(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from melee_agent.manager.metrics import LEVEL_WINDOW, Board
    from melee_agent.rl.model import DuelingDQN
    from melee_agent.workers.play import SegmentPlayer

    env = Arena(32, cpu_level=[1, 9], seed=4, max_frames=120)
    player = SegmentPlayer(env, epsilon=1.0, n_step=3, gamma=0.99, seed=0)
    board = Board(tmp_path)
    total = {"1": [0, 0], "9": [0, 0]}
    for step in range(8):
        _, stats = player.play(DuelingDQN(num_actions=5), frames_per_env=240)
        per = stats.per_level
        assert set(per) <= {"1", "9"}
        assert sum(c[0] for c in per.values()) == stats.episodes
        assert sum(c[1] for c in per.values()) == stats.untouched
        for lv, (n, u) in per.items():
            total[lv][0] += n
            total[lv][1] += u
        board.episodes(stats, step)
    # A malformed per-level count never reaches the board: the batch's stats are refused when decoded.
    from melee_agent.io.segment_stats import SegmentStats
    for bad in ('{"3": "junk"}', '{"x": [1, 0]}', '{"4": [1, 2]}'):
        with pytest.raises(ValueError, match="per_level"):
            SegmentStats.from_json(f'{{"episodes": 1, "per_level": {bad}}}')
    board.close()
    assert min(n for n, _ in total.values()) >= LEVEL_WINDOW
    # Two-second episodes: level 1 rarely hits in time, level 9 nearly always does.
    assert total["1"][1] / total["1"][0] > total["9"][1] / total["9"][0]
    acc = EventAccumulator(str(tmp_path), size_guidance={"scalars": 0})
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert {"episode/untouched_level_1", "episode/untouched_level_9"} <= tags
    assert not any(t.endswith(("_3", "_x", "_4")) for t in tags)
    shown = [e.value for e in acc.Scalars("episode/untouched_level_1")]
    assert all(0.0 <= v <= 1.0 for v in shown)


def test_the_dodging_default_draws_the_levels_with_the_untouchable_papers_weights():
    """configs/default.toml: L1 .06, L2 .04, L3-L7 .03 each, L8 .05, L9 .70 (bparr/melee-ai cpu.py), per episode."""
    cfg = load_config("default")
    assert env_levels(cfg) == tuple(range(1, 10))
    w = torch.tensor(cfg.env.level_weights)
    assert torch.allclose(w / w.sum(), torch.tensor([.06, .04, .03, .03, .03, .03, .03, .05, .70]))
    env = make_env(cfg, num_envs=4096, seed=3)
    env.reset()
    share = torch.bincount(env.cpu_levels, minlength=10)[1:].float() / 4096
    assert abs(float(share[8]) - 0.70) < 0.03 and abs(float(share[0]) - 0.06) < 0.015  # 4-5 standard errors
    # A one-level override still needs the weights cleared (refused naming the fix, as for fights).
    with pytest.raises(ConfigError, match="env.level_weights=\\[\\]"):
        load_config("default", ["env.cpu_levels=[9]"])
