"""`Arena(compile=True)`: the fused simulator plays the same games as the op-by-op one."""

from __future__ import annotations

import pytest
import torch

from melee_agent.arena import Arena
from melee_agent.arena.env_state import AGENT, CPU


def _play(compile: bool, calls: int, lockstep: bool, game: str = "dodge",
          cpu_level: int | list[int] = 9, max_frames: int | None = None,
          cpu: str = "designed", seed: int = 3, resets: dict[str, int] | None = None,
          **kw) -> list[tuple[torch.Tensor, ...]]:
    """``calls`` steps of random actions; ``resets``, where given, counts the compiled arena's resets by kind."""
    env = Arena(48, cpu_level=cpu_level, seed=seed, compile=compile, game=game, max_frames=max_frames, cpu=cpu, **kw)
    if resets is not None:
        env._reset_rows, env._reset_finished = (_counted(f, name, resets) for f, name in
                                                ((env._reset_rows, "rows"), (env._reset_finished, "whole")))
        if env._frame_end_reset is not None:
            env._frame_end_reset = _counted_in_frame(env._frame_end_reset, resets)
    env.reset()
    gen = torch.Generator().manual_seed(1)
    out = []
    for _ in range(calls):
        a = torch.randint(0, env.num_actions, (env.num_envs,), generator=gen)
        obs, reward, done, info = env.step(a) if lockstep else env.step_async(a)
        out.append((obs, reward, done, info.ready, info["hit"], info["episode_frame"],
                    env.state.players.action.clone(), env.state.players.stock.clone(),
                    torch.stack((info.ko_move, info.lost_move)),
                    info.stocks_taken, env.state.players.percent.clone(),
                    # read before a finished game resets: the same in both, frame for frame
                    torch.stack((info.cpu_level, info.agent_stocks, info.game_over.long())), info.final_obs,
                    torch.stack((info.episode_return, info.opponent_percent))))
    return out


def _counted(fn, name: str, counts: dict[str, int]):
    def call(*args):
        counts[name] = counts.get(name, 0) + 1
        return fn(*args)
    return call


def _counted_in_frame(fn, counts: dict[str, int]):
    """``fn`` (a frame that resets its first finished games itself), counting the frames where some game ended."""
    def call(*args):
        out = fn(*args)
        counts["in_frame"] = counts.get("in_frame", 0) + int(bool(out.frame.step.done.any()))
        return out
    return call


@pytest.mark.slow
def test_compiled_step_async_plays_the_same_games_as_eager():
    """Frame for frame, with the finished games reset both ways: a few at a time row by row, in place (what a
    level-9 CPU makes of a large batch), and many at once through the whole-batch graph."""
    resets: dict[str, int] = {}
    eager, fused = _play(False, 400, lockstep=False), _play(True, 400, lockstep=False, resets=resets)
    assert sum(int(e[2].sum()) for e in eager) > 0  # episodes ended (and reset) along the way
    # A dodging frame resets its first few finished games in its own graph, the rest through the whole-batch graph
    # (the first call, and frames where many games ended).
    assert resets.get("in_frame", 0) > 10 and resets["whole"] > 1 and "rows" not in resets, resets
    for e, c in zip(eager, fused):
        torch.testing.assert_close(c[0], e[0], atol=1e-5, rtol=0)  # observations
        torch.testing.assert_close(c[1], e[1])  # rewards
        for k in range(2, 8):  # done, ready, hit, episode frame, actions, stocks: exactly equal
            assert torch.equal(c[k], e[k]), k
        assert torch.equal(c[11], e[11])  # level, the agent's stocks, game over
        torch.testing.assert_close(c[12], e[12], atol=1e-5, rtol=0)  # the final observations
        torch.testing.assert_close(c[13], e[13], atol=1e-4, rtol=1e-5)  # return, Marth's percent


@pytest.mark.slow
# One CPU and one compile: compiling a fight costs about two minutes of the suite; the designed CPU's frame is
# checked for graph breaks in test_each_compiled_arena_function_traces_as_one_graph below, without inductor.
def test_compiled_fights_play_the_same_games_as_eager():
    """A compiled fight plays each frame and the end of its decisions as one graph (frame_and_end), with the
    CPU of levels 1, 5 and 9 side by side (each level's table is a tensor the graph reads) on stages mixed in one
    batch (platforms, blast zones, the CPU's platform rules), and resets the games that ended (a clock of 250
    frames here) in a graph of its own on those frames only."""
    # seed 4: games with a KO credited to a move in these 300 calls (seed 3's, with Melee's CPU as read again, has
    # none: every KO a self-destruct)
    stages = dict(stage=["battlefield", "yoshis_story", "final_destination"], stage_weights=[2, 1, 1])
    eager, fused = (_play(c, 300, lockstep=False, game="fight", cpu_level=[1, 5, 9], max_frames=250, cpu="melee",
                          seed=4, **stages) for c in (False, True))
    assert any(bool((e[7] < 4).any()) for e in eager) and any(bool((e[8] > 0).any()) for e in eager)  # KOs, credited ones
    assert sum(int(e[2].sum()) for e in eager) > 0 and any(bool(e[11][2].any()) for e in eager)  # games ended, reset
    for e, c in zip(eager, fused):
        torch.testing.assert_close(c[0], e[0], atol=1e-5, rtol=0)
        torch.testing.assert_close(c[1], e[1])
        torch.testing.assert_close(c[10], e[10], atol=1e-4, rtol=0)  # percent
        for k in range(2, 10):  # done, ready, hit, episode frame, actions, stocks, KO credits, stocks taken
            assert torch.equal(c[k], e[k]), k
        assert torch.equal(c[11], e[11])  # level, the agent's stocks, game over
        torch.testing.assert_close(c[12], e[12], atol=1e-5, rtol=0)  # the final observations
        torch.testing.assert_close(c[13], e[13], atol=1e-3, rtol=1e-5)  # return, Marth's percent


@pytest.mark.slow
def test_compiled_lockstep_step_matches_eager():
    eager, fused = _play(False, 40, lockstep=True), _play(True, 40, lockstep=True)
    for e, c in zip(eager, fused):
        torch.testing.assert_close(c[0], e[0], atol=1e-5, rtol=0)
        assert torch.equal(c[2], e[2]) and torch.equal(c[6], e[6])


@pytest.mark.slow
def test_compiled_arena_states_stay_in_bounds():
    env = Arena(48, cpu_level=9, seed=0, compile=True)
    env.reset()
    for _ in range(200):
        obs, *_ = env.step_async(torch.randint(0, env.num_actions, (48,)))
    assert torch.isfinite(obs).all() and (obs >= 0).all() and (obs <= 1).all()
    assert (env.state.players.stock[:, AGENT] >= 1).all() and (env.state.players.stock[:, CPU] >= 1).all()


@pytest.mark.slow
def test_env_compile_setting_reaches_the_arena():
    from melee_agent.config import ConfigError, load_config  # noqa: PLC0415
    from melee_agent.envs.make import make_env  # noqa: PLC0415

    assert make_env(load_config("default"), num_envs=2).compiled is False
    assert make_env(load_config("default", ["env.compile=true"]), num_envs=2).compiled is True
    with pytest.raises(ConfigError, match="env.compile"):
        load_config("default", ["env.compile=fast"])


def _double(x: torch.Tensor) -> tuple[torch.Tensor]:
    return (x * 2,)


def _triple(x: torch.Tensor) -> tuple[torch.Tensor]:
    return (x * 3,)


@pytest.mark.slow
def test_each_compiled_function_keeps_its_own_graphs(caplog):
    """Dynamo counts graphs against its recompile limit per code object: with one shared wrapper, an arena's
    frame and reset graphs at a few batch sizes (a training run's checks and final report) passed the limit
    and fell back to op by op. Here with a limit of 2: two functions at two sizes each stay compiled."""
    from melee_agent.arena.compiled import compiled  # noqa: PLC0415

    fns = [compiled(_double), compiled(_triple)]
    with torch._dynamo.config.patch(recompile_limit=2), caplog.at_level("WARNING", logger="torch._dynamo"):
        for n in (1, 2):
            for f in fns:
                f(torch.ones(n))
    assert "recompile_limit" not in caplog.text
    assert [f(torch.ones(2))[0].tolist() for f in fns] == [[2.0, 2.0], [3.0, 3.0]]


@pytest.mark.slow
@pytest.mark.parametrize("game,cpu", [("dodge", "designed"), ("dodge", "melee"), ("fight", "designed"), ("fight", "melee")])
def test_each_compiled_arena_function_traces_as_one_graph(game, cpu):
    """A graph break would split a frame into several graphs, each fused alone (an experiment's
    ``dataclasses.fields`` call in the Marth CPU cost a fight ~20% of its frames per second so)."""
    from melee_agent.arena import episodes as storage  # noqa: PLC0415
    from melee_agent.arena.async_step import frame_and_end, frame_async, frame_end_and_reset  # noqa: PLC0415
    from melee_agent.arena.compiled import cloned  # noqa: PLC0415

    env = Arena(8, cpu_level=[1, 9], seed=0, compile=True, game=game, max_frames=30, cpu=cpu)
    calls: dict[str, tuple] = {}  # name -> (the function, its first arguments)

    def recorded(fn):
        def call(*args):
            calls.setdefault(fn.__name__, (fn, args))
            return fn(*args)
        return call

    # The raw functions in place of the compiled ones: the arena takes its compiled path and hands them its arguments.
    env._frame_and_end, env._reset_finished = recorded(frame_and_end), recorded(storage.reset_finished)
    env._frame_async, env._finish_decision = recorded(frame_async), recorded(storage.finish_decision)
    env._reset_rows, env._reset_rows_max = recorded(storage.reset_rows), 8  # every end but the first call
    if game == "dodge":  # a dodging frame resets its first finished games itself: 2 of 8, so the whole batch's too
        env._frame_end_reset, env._rows_in_frame = recorded(frame_end_and_reset), 2
    env.reset()
    gen = torch.Generator().manual_seed(0)
    for _ in range(20):  # past the 30-frame clock: games end and reset
        env.step_async(torch.randint(0, env.num_actions, (8,), generator=gen))
    env.step(torch.zeros(8, dtype=torch.long))
    frame = {"frame_end_and_reset"} if game == "dodge" else {"frame_and_end", "reset_rows"}
    assert set(calls) == frame | {"reset_finished", "frame_async", "finish_decision"}
    for name, (fn, args) in calls.items():
        if name == "reset_rows":  # it writes into the state: copies of it (inference tensors are read-only here)
            args = cloned(args)
        explained = torch._dynamo.explain(fn)(*args)
        assert explained.graph_break_count == 0 and explained.graph_count == 1, (name, explained.break_reasons)
