"""Action sets played through a real libmelee Controller into a recording pipe."""

import numpy as np
import pytest

from melee_agent.actions import ACTION_SETS, TABLE_COLUMNS, ControllerFrame, apply_frame, get_action_set
from tests.recording_controller import held, recording_controller

DOWN, LEFT, RIGHT, NEUTRAL = (0.5, 0.0), (0.0, 0.5), (1.0, 0.5), (0.5, 0.5)


def play(action) -> list[dict]:
    c = recording_controller()
    for frame in action.frames:
        apply_frame(c, frame)
        c.flush()
    return [held(cmds) for cmds in c.pipe.frames]


def stick_dir(main: tuple[float, float]) -> tuple[float, float]:
    # libmelee remaps sticks into Melee's [-80, 80] range, so compare directions, not raw values.
    return (round(main[0] - 0.5, 1), round(main[1] - 0.5, 1))


def test_untouchable_set_matches_the_design():
    s = ACTION_SETS["untouchable"]
    assert s.names == ["noop", "spot_dodge", "roll_left", "roll_right", "shine"]
    assert s.lengths.tolist() == [1, 22, 32, 32, 6]


@pytest.mark.parametrize("name,stick,hold,rest", [("spot_dodge", DOWN, 10, 12), ("roll_left", LEFT, 10, 22),
                                                  ("roll_right", RIGHT, 10, 22)])
def test_dodges_hold_shield_and_direction_then_release(name, stick, hold, rest):
    frames = play(ACTION_SETS["untouchable"].actions[ACTION_SETS["untouchable"].index(name)])
    assert len(frames) == hold + rest
    for f in frames[:hold]:
        assert f["buttons"] == {"L"} and f["l"] > 0.5  # libmelee maps a full press into Melee's trigger range
        assert np.sign(stick_dir(f["main"])).tolist() == np.sign(stick_dir(stick)).tolist()
    for f in frames[hold:]:
        assert f["buttons"] == set() and f["l"] < 0.01 and stick_dir(f["main"]) == (0.0, 0.0)


def test_shine_is_down_b_then_jump():
    frames = play(ACTION_SETS["untouchable"].actions[4])
    assert [sorted(f["buttons"]) for f in frames] == [["B"], [], [], ["Y"], [], []]
    assert stick_dir(frames[0]["main"])[1] < 0 and stick_dir(frames[3]["main"]) == (0.0, 0.0)


def test_noop_is_one_neutral_frame_and_releases_what_was_held():
    c = recording_controller()
    apply_frame(c, ControllerFrame(frozenset({"A", "L"}), LEFT, 1.0))
    c.flush()
    apply_frame(c, ACTION_SETS["untouchable"].actions[0].frames[0])
    c.flush()
    assert held(c.pipe.frames[0])["buttons"] == {"A", "L"}
    last = held(c.pipe.frames[1])
    assert last["buttons"] == set() and last["l"] < 0.01 and stick_dir(last["main"]) == (0.0, 0.0)
    assert not any(c.current.button.values())


def test_basic_set_is_buttons_times_sticks_held_three_frames():
    s = get_action_set("basic")
    assert s.num_actions == 30 and len(set(s.names)) == 30
    assert (s.lengths == 3).all()
    a = s.actions[s.index("a_up")]
    frames = play(a)
    assert all(f["buttons"] == {"A"} and np.sign(stick_dir(f["main"])).tolist() == [0.0, 1.0] for f in frames)
    assert play(s.actions[s.index("none_neutral")])[0]["buttons"] == set()


def test_table_matches_frames():
    for s in ACTION_SETS.values():
        t = s.table
        assert t.shape == (s.num_actions, s.lengths.max(), len(TABLE_COLUMNS))
        for i, a in enumerate(s.actions):
            np.testing.assert_array_equal(t[i, : len(a.frames)], [f.row() for f in a.frames])
            assert (t[i, len(a.frames):, TABLE_COLUMNS.index("stick_x")] == 0.5).all()


def test_unknown_names_fail_clearly():
    with pytest.raises(KeyError, match="unknown action set 'nope'"):
        get_action_set("nope")
    with pytest.raises(ValueError, match="unknown buttons"):
        ControllerFrame(frozenset({"Q"}))
    with pytest.raises(KeyError, match="not in action set"):
        ACTION_SETS["untouchable"].index("jab")
