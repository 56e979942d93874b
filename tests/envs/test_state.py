"""The 27-float state on every frame of the real replays, through libmelee's own reader."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from melee_agent.io.slp import game_ports, read_gamestates
from melee_agent.envs.state import (PLAYER_DIM, RAW_FIELDS, STATE_DIM, STATE_FIELDS, STATE_NAMES, encode_gamestate,
                               encode_players, player_fields)
from tests.replays_kit import READABLE_REPLAYS, replay_path

COL = {name: i for i, name in enumerate(STATE_NAMES)}


@pytest.fixture(scope="module")
def games() -> dict:
    return {name: read_gamestates(replay_path(name)) for name in READABLE_REPLAYS}


def expected_player(p) -> list[float]:
    """The docs/design.md formulas written out independently of the STATE_FIELDS table."""
    clip = lambda v: min(max(v, 0.0), 1.0)  # noqa: E731
    sx = p.speed_ground_x_self if p.on_ground else p.speed_air_x_self
    return [clip((p.position.x + 300) / 600), clip((p.position.y + 200) / 500), clip((sx + 20) / 40),
            clip((p.speed_y_self + 20) / 40), clip(p.action.value / 400), 1.0 if p.facing else 0.0,
            1.0 if p.invulnerable else 0.0, 0.0 if p.on_ground else 1.0, clip(p.shield_strength / 60),
            clip(min(p.jumps_left, 2) / 2), clip(min(p.hitstun_frames_left, 60) / 60),
            clip(min(math.floor(p.percent), 999) / 999), clip(min(p.action_frame, 120) / 120)]


def test_table_shape():
    assert STATE_DIM == 27 and len(STATE_FIELDS) == PLAYER_DIM == 13 and len(STATE_NAMES) == 27
    assert [f.name for f in STATE_FIELDS][:4] == ["x", "y", "speed_x", "speed_y"]


@pytest.mark.parametrize("name", READABLE_REPLAYS)
def test_every_frame_is_27_finite_floats_in_unit_range(games, name):
    states = games[name]
    a, b = game_ports(states[-1])[:2]
    enc = np.stack([encode_gamestate(gs, a, b, previous_action=i % 5) for i, gs in enumerate(states)])
    assert enc.shape == (len(states), 27) and enc.dtype == np.float32
    assert np.isfinite(enc).all()
    assert enc.min() >= 0.0 and enc.max() <= 1.0
    # Pre-game frames (negative frame numbers) are included and also in range.
    assert states[0].frame < 0
    # Both sides of the table are filled: the opponent half is not a copy of the agent half.
    assert not np.allclose(enc[:, :13], enc[:, 13:26])


@pytest.mark.parametrize("name", READABLE_REPLAYS)
def test_fields_follow_the_formulas_at_chosen_frames(games, name):
    states = games[name]
    a, b = game_ports(states[-1])[:2]
    n = len(states)
    for i in sorted({0, 1, n // 3, n // 2, 2 * n // 3, n - 1}):
        gs = states[i]
        want = expected_player(gs.players[a]) + expected_player(gs.players[b]) + [3 / 4]
        got = encode_gamestate(gs, a, b, previous_action=3, num_actions=5)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=f"{name} frame {i}")


def test_percent_and_stock_changes_show_where_the_game_has_them(games):
    states = games["libmelee_test_game_1.slp"]
    enc = np.stack([encode_gamestate(gs, 1, 2) for gs in states])
    percent = np.array([float(gs.players[1].percent) for gs in states])
    stock = np.array([int(gs.players[1].stock) for gs in states])
    rises = np.flatnonzero(np.diff(percent) > 0) + 1
    assert len(rises) >= 5  # port 1 is hit several times in this game
    for i in rises:
        assert enc[i, COL["agent_percent"]] > enc[i - 1, COL["agent_percent"]]
    lost = np.flatnonzero(np.diff(stock) < 0) + 1
    assert len(lost) == 1  # "port 1 loses a stock" (replays README)
    i = lost[0]
    # Percent resets to 0 after the stock is lost; the encoded percent falls to 0 as well.
    after = i + np.flatnonzero(percent[i:] == 0)[0]
    assert enc[after, COL["agent_percent"]] == 0.0 and enc[i - 1, COL["agent_percent"]] > 0
    # Port 2 is never hit.
    assert np.all(enc[:, COL["opponent_percent"]] == 0)


def test_fox_loses_four_stocks_in_the_pyslippi_game(games):
    states = games["pyslippi_game.slp"]
    fox = next(p for p in game_ports(states[-1]) if states[-1].players[p].character.name == "FOX")
    stocks = [int(gs.players[fox].stock) for gs in states]
    assert stocks[0] == 4 and stocks[-1] == 0
    losses = [i for i in range(1, len(stocks)) if stocks[i] < stocks[i - 1]]
    assert len(losses) == 4


def test_batch_encoder_matches_per_frame_encoder_numpy_and_torch(games):
    states = games["slippijs_lCancel.slp"]
    a, b = game_ports(states[-1])[:2]
    per_frame = np.stack([encode_gamestate(gs, a, b, previous_action=2) for gs in states])
    agent = {k: np.array([player_fields(gs.players[a])[k] for gs in states]) for k in RAW_FIELDS}
    opp = {k: np.array([player_fields(gs.players[b])[k] for gs in states]) for k in RAW_FIELDS}
    prev = np.full(len(states), 2)
    np.testing.assert_allclose(encode_players(agent, opp, prev, 5), per_frame, atol=1e-6)
    t = encode_players({k: torch.from_numpy(v) for k, v in agent.items()},
                       {k: torch.from_numpy(v) for k, v in opp.items()}, torch.from_numpy(prev), 5)
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float32
    np.testing.assert_allclose(t.numpy(), per_frame, atol=1e-6)


def test_odd_raw_values_are_clipped_and_non_finite_become_zero():
    raw = {k: np.array([np.nan, -1e9, 1e9, np.inf]) for k in RAW_FIELDS}
    enc = encode_players(raw, raw, np.array([0, 9, -3, 4]), 5)
    assert np.isfinite(enc).all() and enc.min() >= 0 and enc.max() <= 1
    assert enc[0, 0] == pytest.approx(300 / 600)  # NaN x encodes as x = 0: the stage centre


def test_missing_port_names_the_port(games):
    gs = games["peppi_v3.13.slp"][-1]  # ports 1 and 3
    with pytest.raises(KeyError, match="opponent port 2"):
        encode_gamestate(gs, 1, 2)


def test_percent_is_floored_as_the_game_shows_it():
    raw = {k: np.zeros(3) for k in RAW_FIELDS}
    raw["percent"] = np.array([12.0, 12.9, 1000.5])
    enc = encode_players(raw, raw, np.zeros(3), 5)
    assert enc[:, COL["agent_percent"]].tolist() == pytest.approx([12 / 999, 12 / 999, 1.0])


def test_the_fight_layout_on_a_real_replay_gives_the_time_left_and_both_stocks():
    # libmelee_test_game_1: port 1 loses its first stock on frame 264 (libmelee's PlayerState.stock), and the
    # timer counts from GO (GameState.frame 0; the first frame is -123).
    from melee_agent.envs.state import LAYOUTS

    states = read_gamestates(replay_path("libmelee_test_game_1.slp"))
    at = {gs.frame: gs for gs in states}
    assert LAYOUTS["fight-30"].dim == 30 and LAYOUTS["fight-30"].shows_clock
    for frame, time_left, stocks in ((-123, 1.0, (1.0, 1.0)), (263, (28_800 - 263) / 28_800, (1.0, 1.0)),
                                     (264, (28_800 - 264) / 28_800, (0.75, 1.0)), (914, (28_800 - 914) / 28_800, (0.75, 1.0))):
        gs = at[frame]
        got = encode_gamestate(gs, 1, 2, 3, 5, layout="fight-30")
        assert got.shape == (30,) and got.dtype == np.float32
        np.testing.assert_array_equal(got[:27], encode_gamestate(gs, 1, 2, 3, 5))  # the 27 floats unchanged
        assert got[27:].tolist() == pytest.approx([time_left, *stocks]), frame
        mirrored = encode_gamestate(gs, 2, 1, 3, 5, layout="fight-30")  # from the other port: its stocks first
        assert mirrored[28:].tolist() == pytest.approx(stocks[::-1])
    # A shorter clock (the league's one-minute games): the time left on it, in the same 8:00 units.
    assert encode_gamestate(at[600], 1, 2, layout="fight-30", clock_frames=3_600)[27] == pytest.approx(3_000 / 28_800)
    # The countdown before GO is not on the clock: the timer shows all of it.
    assert encode_gamestate(at[-123], 1, 2, layout="fight-30", clock_frames=3_600)[27] == pytest.approx(3_600 / 28_800)
    with pytest.raises(ValueError, match="unknown env.state_layout 'fight-31'"):
        encode_gamestate(at[600], 1, 2, layout="fight-31")
