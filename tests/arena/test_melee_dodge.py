"""The dodging game's ``melee`` CPU (``Arena(cpu="melee")``, arena/cpu_levels.py MELEE_LEVELS): its per-level values
from Melee's CPU code, and what they do against an agent that stands still."""

from __future__ import annotations

import pytest
import torch

from melee_agent.arena import Arena
from melee_agent.arena.cpu_levels import CPU_LEVELS, MELEE_LEVELS, LevelTable


def test_the_levels_come_from_the_games_attack_gate_and_waits():
    # [D ftCo_800B885C]: levels 1-4 attack on 119/300, 179/300, 119/240, 179/240 of frames; 5-9 always.
    assert [round(MELEE_LEVELS[lv].aggression * 300) for lv in (1, 2)] == [119, 179]
    assert [round(MELEE_LEVELS[lv].aggression * 240) for lv in (3, 4)] == [119, 179]
    assert all(MELEE_LEVELS[lv].aggression == 1.0 and MELEE_LEVELS[lv].accuracy == 1.0 for lv in range(5, 10))
    # [D ftCo_800B63D8]: level 1 waits 5-39 frames (int(35 u) + 5), level 9 none.
    assert (MELEE_LEVELS[1].recover, MELEE_LEVELS[1].rest) == (5, 35) and MELEE_LEVELS[9].rest == 0
    table = LevelTable.build(torch.device("cpu"), "melee")
    assert table.at(torch.tensor([3.0])).aggression.item() == pytest.approx(119 / 240)
    assert LevelTable.build(torch.device("cpu")).at(torch.tensor([9.0])).rest.item() == CPU_LEVELS[9].rest


def _first_hit(cpu: str, level: int, n: int = 16, steps: int = 60) -> torch.Tensor:
    env = Arena(n, cpu_level=level, seed=0, cpu=cpu)
    env.reset()
    first = torch.full((n,), -1)
    noop = torch.full((n,), env.noop_index)
    for i in range(steps):
        _, _, _, info = env.step(noop)
        first = torch.where((first < 0) & info["hit"], i, first)
    return first


def test_a_level_5_melee_cpu_attacks_whenever_a_move_reaches_the_designed_one_seldom():
    # Melee's CPU at levels 5-9 starts an attack on any frame its list reaches the agent [D ftCo_800B4AB0,
    # ftCo_800B885C]; the designed level 5 does so with a small chance per frame (a guess, cpu_levels.CPU_LEVELS).
    # (300 frames: a level-5 Marth walks in, his stick stepping 2 of 127 a frame up to 92 [D ftCo_800AA320].)
    melee, designed = _first_hit("melee", 5, steps=300), _first_hit("designed", 5, steps=300)
    assert (melee >= 0).float().mean() >= 0.9, melee
    assert (designed >= 0).sum() < (melee >= 0).sum(), (designed, melee)


def _attacks_into_intangibility(cpu: str, level: int = 9, n: int = 32, frames: int = 300) -> tuple[int, int]:
    """Against a Fox that spot-dodges again and again: the CPU's attacks whose first active frame falls in the
    dodge's intangibility, and all the attacks it started."""
    from melee_agent.arena.dodge.frame import NO_MOVE  # noqa: PLC0415

    env = Arena(n, cpu_level=level, seed=0, cpu=cpu)
    env.reset()
    dodge = torch.full((n,), 1)  # spot_dodge
    into = started_n = 0
    T = env.T
    for _ in range(frames):
        env.step_async(dodge)
        ps = env.state.players
        started = (ps.move[:, 1] != NO_MOVE) & (ps.action_frame[:, 1] == 1)
        act, af = ps.action[:, 0].long(), ps.action_frame[:, 0]
        lands = af + T.first_active[ps.move[:, 1].long().clamp(min=0)] - 1  # Fox's action frame when it lands
        inside = (T.intang_lo[act] > 0) & (lands >= T.intang_lo[act]) & (lands <= T.intang_hi[act])
        into += int((started & inside).sum())
        started_n += int(started.sum())
    return into, started_n


def test_melees_cpu_attacks_by_reach_alone_into_dodges_the_designed_one_waits_them_out():
    # [D ftCo_800B4AB0, ftCo_800B8A9C]: the game's choice reads the target's position and speed, never its
    # intangibility or lag, so the melee CPU has no punish rule and no "smart" level.
    table = LevelTable.build(torch.device("cpu"), "melee")
    levels = torch.arange(1, 10).float()
    assert not table.at(levels).smart.any() and (table.at(levels).punish == 0).all()
    melee_into, melee_n = _attacks_into_intangibility("melee")
    designed_into, designed_n = _attacks_into_intangibility("designed")
    assert melee_n > 50 and designed_n > 50, (melee_n, designed_n)  # both attack the dodger all along
    assert melee_into >= 0.1 * melee_n, (melee_into, melee_n)
    assert designed_into == 0  # the designed level 9 (smart) times its attacks to land after the window


def _attack_starts(level: int, n: int = 32, frames: int = 600) -> list[tuple[int, float, float]]:
    """Against a Fox that stands: each attack the melee CPU starts, as (move, distance, Marth's action the frame
    before)."""
    from melee_agent.arena.dodge.frame import NO_MOVE  # noqa: PLC0415

    env = Arena(n, cpu_level=level, seed=1, cpu="melee")
    env.reset()
    noop = torch.full((n,), env.noop_index)
    out = []
    before = env.state.players.action[:, 1].clone()
    for _ in range(frames):
        env.step_async(noop)
        ps = env.state.players
        started = (ps.move[:, 1] != NO_MOVE) & (ps.action_frame[:, 1] == 1)
        dist = (ps.position_x[:, 0] - ps.position_x[:, 1]).abs()
        for i in torch.nonzero(started).flatten().tolist():
            out.append((int(ps.move[i, 1]), float(dist[i]), float(before[i])))
        before = ps.action[:, 1].clone()
    return out


def test_the_dodging_melee_cpu_aims_and_moves_as_the_fights():
    # The fight's Melee CPU's rules (arena/dodge/melee_aim.py): a move is chosen only when its reach, scaled by x570
    # [D ftCo_800B33B0: 0.55-0.575 at level 1, 0.75-0.775 at 9] plus the agent's half width, holds the agent; never
    # from a dash; never the dash attack (in no list); jab first by weight ([W-flaws]: mostly jab).
    from melee.enums import Action  # noqa: PLC0415

    from melee_agent.arena.dodge import melee_aim  # noqa: PLC0415
    from melee_agent.arena.dodge.tables import MOVE_INDEX, build_tables  # noqa: PLC0415

    reach = build_tables(torch.device("cpu")).reach
    for level, top in ((1, 0.575), (9, 0.775)):
        starts = _attack_starts(level)
        assert len(starts) >= 20, (level, len(starts))
        assert all(dist <= reach[m] * top + melee_aim.BODY_HALF_WIDTH + 1e-3 for m, dist, _ in starts), level
        assert all(before != Action.DASHING.value for _, _, before in starts)
        moves = [m for m, _, _ in starts]
        assert MOVE_INDEX["dash_attack"] not in moves
        assert moves.count(MOVE_INDEX["jab"]) > len(moves) / 2, moves
    # The designed CPU's stop at 0.8 of the jab's reach is beyond level 1's scaled jab: the melee CPU walks in.
    assert 0.8 * reach[MOVE_INDEX["jab"]] > 0.575 * reach[MOVE_INDEX["jab"]] + melee_aim.BODY_HALF_WIDTH


def test_the_dodging_melee_cpu_walks_in_with_the_levels_stick_never_dashing():
    # [D ftCo_800B24B8, ftCo_800AA42C]: no dash without a Starman or hammer to flee; the stick steps toward the agent
    # by the level's step from neutral [D ftCo_800AA320: 8 of 127 a frame at level 9, 2 at level 1] up to the clamp
    # (0x7F at 9, 0x48 at 1), ramped down to 80 of 127 at 5 away [ftCo_800AA42C_inline0]; within 5 it stands.
    from melee.enums import Action  # noqa: PLC0415

    from melee_agent.arena.dodge import melee_aim  # noqa: PLC0415

    lv = LevelTable.build(torch.device("cpu"), "melee").at(torch.tensor([9.0, 9.0, 1.0, 1.0, 9.0, 9.0]))
    gap = torch.tensor([60.0, 60.0, 60.0, 60.0, 22.5, 3.0])
    frames = torch.tensor([1.0, 20.0, 1.0, 100.0, 100.0, 100.0])
    speed, action = melee_aim.approach(gap, lv.walk_stick, lv.walk_step, frames)
    walk = 1.6  # Marth's walk speed (libmelee characterdata)
    expected = [walk * 8 / 127, walk, walk * 2 / 127, walk * 0x48 / 127, walk * (80 + 0.5 * (127 - 80)) / 127, 0.0]
    assert speed.tolist() == pytest.approx(expected, rel=1e-5)
    assert action.tolist() == [Action.WALK_MIDDLE.value] * 5 + [Action.STANDING.value]
    # In play: from far away a level-9 Marth is never seen dashing, and his speed grows frame by frame.
    env = Arena(8, cpu_level=9, seed=0, cpu="melee")
    env.reset()
    noop = torch.full((8,), env.noop_index)
    speeds = []
    for _ in range(12):
        env.step_async(noop)
        ps = env.state.players
        assert not (ps.action[:, 1] == Action.DASHING.value).any()
        speeds.append(ps.speed_x[:, 1].abs())
    rising = torch.stack(speeds)[:6]
    assert (rising[1:] >= rising[:-1]).all() and (rising[-1] > rising[0]).all()


def test_the_dodging_melee_cpu_turns_to_an_agent_behind_it_choosing_nothing_meanwhile():
    # ftCo_CpuTurnAround (ftCo_0A01.c): 13 frames in which a free Marth with the agent behind him chooses no attack.
    from melee.enums import Action  # noqa: PLC0415

    from melee_agent.arena.dodge import melee_aim  # noqa: PLC0415
    from melee_agent.arena.dodge.frame import NO_MOVE  # noqa: PLC0415

    n = 4
    env = Arena(n, cpu_level=9, seed=0, cpu="melee")
    env.reset()
    ps = env.state.players
    # Fox 10 behind a level-9 Marth that faces away: well within his jab's reach, were he facing it.
    marth_x = ps.position_x[:, 1]
    facing = ps.facing[:, 1]
    ps = ps._replace(position_x=torch.stack((marth_x - 10.0 * facing, marth_x), 1))
    env.state = env.state._replace(players=ps)
    noop = torch.full((n,), env.noop_index)
    env.step_async(noop)
    ps = env.state.players
    assert (ps.action[:, 1] == Action.TURNING.value).all() and (ps.facing[:, 1] == -facing).all()
    for _ in range(melee_aim.TURN_FRAMES - 1):
        env.step_async(noop)
        assert (env.state.players.move[:, 1] != NO_MOVE).all()  # still in the turn
        assert (env.state.players.action[:, 1] == Action.TURNING.value).all()
    started = False
    for _ in range(5):
        env.step_async(noop)
        started |= bool((env.state.players.move[:, 1] >= 0).any())
    assert started  # then he attacks the agent now in front of him


@pytest.mark.slow
def test_rolling_through_a_level_9_melee_cpu_outlasts_it_the_spot_dodger_does_not():
    # The turn is what a roll through Marth buys: 13 frames choosing nothing [ftCo_CpuTurnAround]. The roller policy
    # (roll toward him whenever he is within 30) stays untouched through many level-9 minutes; without the turn (the
    # CPU before it) it lasted none, and the scripted spot dodger lasts none either way.
    from melee_agent.rl.policies import make_policy  # noqa: PLC0415

    def untouched_share(spec: str, n: int = 16) -> float:
        env = Arena(n, cpu_level=9, seed=3, cpu="melee")
        obs = env.reset()
        policy = make_policy(spec, "untouchable")
        touched = torch.zeros(n, dtype=torch.bool)
        finished = torch.zeros(n, dtype=torch.bool)
        for _ in range(1_000):  # decisions: a minute is 3,600 frames, a roll 32 of them
            obs, _, done, info = env.step(policy(obs))
            touched |= info["hit"] & ~finished
            finished |= done
            if bool(finished.all()):
                break
        assert bool(finished.all())
        return float((~touched).float().mean())

    assert untouched_share("roller") >= 0.25
    assert untouched_share("dodger") == 0.0


def test_the_roller_rolls_toward_marth_when_he_is_near_and_needs_the_rolls():
    from melee_agent.envs.actions import get_action_set  # noqa: PLC0415
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


def test_the_dodging_melee_cpu_waits_the_levels_time_then_plays_the_move_whatever_the_agent_did():
    # [D ftCo_800B63D8]: the chosen attack waits int(35 u) + 5 frames at level 1 (5-39) and is then played whatever
    # the target did (the follow-through); level 9 waits none, the press on the frame it chooses [D ftCo_800B3900].
    # Here Fox is carried 120 away the frame after each choice: the move is still played, Marth standing meanwhile.
    from melee_agent.arena.dodge.frame import NO_MOVE  # noqa: PLC0415

    n = 64
    env = Arena(n, cpu_level=1, seed=3, cpu="melee")
    env.reset()
    noop = torch.full((n,), env.noop_index)
    chosen_at = torch.full((n,), -1)
    chosen_move = torch.full((n,), -1.0)
    waits, moved = [], []
    for i in range(900):
        was_waiting, x_before = env.state.game.cpu_pending > 0, env.state.players.position_x[:, 1].clone()
        env.step_async(noop)
        g, ps = env.state.game, env.state.players
        still = was_waiting & (g.cpu_pending > 0)
        moved.append(float((ps.position_x[:, 1] - x_before).abs().where(still, 0.0).max()))
        new = (chosen_at < 0) & (g.cpu_pending > 0)
        chosen_at = torch.where(new, i, chosen_at)
        chosen_move = torch.where(new, g.cpu_pending - 1, chosen_move)
        if new.any():  # Fox goes far away: out of every move's reach
            far = ps.position_x[:, 1] + torch.where(ps.position_x[:, 1] > 0, -120.0, 120.0)
            x = torch.where(new, far, ps.position_x[:, 0])
            env.state = env.state._replace(players=ps._replace(position_x=torch.stack((x, ps.position_x[:, 1]), 1)))
        started = (chosen_at >= 0) & (ps.move[:, 1] != NO_MOVE) & (ps.action_frame[:, 1] == 1)
        for j in torch.nonzero(started).flatten().tolist():
            waits.append(i - int(chosen_at[j]))
            assert float(ps.move[j, 1]) == float(chosen_move[j])
        chosen_at = torch.where(started, -1, chosen_at)
    assert len(waits) >= 20, len(waits)
    assert min(waits) >= 5 and max(waits) <= 39, (min(waits), max(waits))
    assert max(waits) - min(waits) >= 15  # drawn, not fixed
    assert max(moved) == 0.0, max(moved)  # he stood through the wait

    env = Arena(n, cpu_level=9, seed=3, cpu="melee")
    env.reset()
    started_n = 0
    for _ in range(300):
        env.step_async(noop)
        assert not (env.state.game.cpu_pending > 0).any()  # level 9: chosen and played on the same frame
        ps = env.state.players
        started_n += int(((ps.move[:, 1] != NO_MOVE) & (ps.action_frame[:, 1] == 1)).sum())
    assert started_n >= 20
