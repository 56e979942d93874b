"""Action sets played through a real libmelee Controller into a recording pipe."""

import numpy as np
import pytest

from melee_agent.envs.actions import ACTION_SETS, TABLE_COLUMNS, ControllerFrame, apply_frame, get_action_set
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
        assert t.shape == (len(s.macros), s.lengths.max(), len(TABLE_COLUMNS))
        assert s.macros[: s.num_actions] == s.actions
        for i, a in enumerate(s.macros):
            np.testing.assert_array_equal(t[i, : len(a.frames)], [f.row() for f in a.frames])
            assert (t[i, len(a.frames):, TABLE_COLUMNS.index("stick_x")] == 0.5).all()


def test_unknown_names_fail_clearly():
    with pytest.raises(KeyError, match="unknown action set 'nope'"):
        get_action_set("nope")
    with pytest.raises(ValueError, match="unknown buttons"):
        ControllerFrame(frozenset({"Q"}))
    with pytest.raises(KeyError, match="not in action set"):
        ACTION_SETS["untouchable"].index("jab")


def test_a_padded_set_keeps_names_and_frames_and_adds_neutral_frames_up_to_its_length():
    base, pad = ACTION_SETS["fight"], get_action_set("fight:18")
    assert pad.name == "fight:18" and pad.names == base.names and pad.noop_index == base.noop_index
    for a, p in zip(base.actions, pad.actions):
        assert p.frames[: len(a.frames)] == a.frames
        assert len(p.frames) == max(18, len(a.frames))
        assert all(f == ControllerFrame() for f in p.frames[len(a.frames):])
    assert get_action_set("untouchable:2").lengths.tolist() == [2, 22, 32, 32, 6]


@pytest.mark.parametrize("name, says", [("fight:", "whole number of frames"), ("fight:x", "whole number of frames"),
                                        ("fight:0", r"\[1, 120\]"), ("fight:121", r"\[1, 120\]"),
                                        ("dodge:18", "unknown action set 'dodge:18'"),
                                        ("fight:018", "write it as 'fight:18'"),  # one name per set
                                        ("untouchable:1", "changes nothing; use 'untouchable'")])
def test_a_bad_padded_name_is_refused_naming_the_problem(name, says):
    with pytest.raises(KeyError, match=says):
        get_action_set(name)


def _queues_at_decisions(action_set: str, delay: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """At each decision of a delayed fight (random actions): the frames in flight, and the previous
    macro's last ``delay`` frames."""
    import torch  # noqa: PLC0415

    from melee_agent.arena import Arena  # noqa: PLC0415

    env = Arena(8, cpu_level=9, seed=1, game="fight", action_set=action_set, delay_frames=delay)
    aset = get_action_set(action_set)
    table, lengths = aset.table, aset.lengths
    env.reset()
    gen = torch.Generator().manual_seed(0)
    out = []
    for _ in range(60):
        _, _, done, info = env.step_async(torch.randint(0, env.num_actions, (8,), generator=gen))
        for b in torch.nonzero(info.ready & ~done).flatten().tolist():
            prev = int(env.state.game.previous_action[b])
            end = int(lengths[prev])
            tail = table[prev, max(0, end - delay):end]
            out.append((env.state.inputs[b].numpy(), tail))
    return out


@pytest.mark.slow
def test_padded_to_the_delay_the_frames_in_flight_are_the_previous_macros_tail():
    """Why `fight:18` exists: at 18 frames of delay, with every macro 18 frames or more, what is still on its
    way to the game when the agent decides is the end of the one macro its state names (previous action)."""
    padded = _queues_at_decisions("fight:18", 18)
    assert len(padded) > 50
    assert all(q.shape == t.shape and np.array_equal(q, t) for q, t in padded)
    unpadded = _queues_at_decisions("fight", 18)  # short macros: several decisions are in flight at once
    assert any(q.shape != t.shape or not np.array_equal(q, t) for q, t in unpadded)


# ---- untouchable-paper: the paper's post-shine scripts (bparr/melee-ai smash_env.py, _POST_SHINE_SCRIPTS)

WD_Y = float(np.float32(89 / 255))  # its _CONTROLLER's wavedash height, as the float32 the arena's table holds
WD_LEFT, WD_RIGHT = (0.0, WD_Y), (1.0, WD_Y)
PAPER = "untouchable-paper"


def test_the_paper_set_remaps_every_index_after_a_shine_and_nothing_otherwise():
    s = get_action_set(PAPER)
    assert s.names == ACTION_SETS["untouchable"].names and s.actions == ACTION_SETS["untouchable"].actions
    shine = s.index("shine")
    after_shine = {a: s.macro(a, shine).name for a in range(5)}
    assert after_shine == {0: "noop", 1: "wavedash_down", 2: "wavedash_left", 3: "wavedash_right", 4: "multishine"}
    for prev in range(4):  # any other previous decision: each index plays its own macro
        assert [s.macro(a, prev) for a in range(5)] == list(s.actions)
    assert get_action_set("untouchable").macro(1, shine).name == "spot_dodge"  # the plain set never remaps
    with pytest.raises(ValueError, match="previous action 5 is outside"):
        s.macro_index(0, 5)


def _script(*parts: tuple[tuple[str, ...], tuple[float, float], int]) -> list[ControllerFrame]:
    """Frames as the paper writes them: (buttons, stick, frames held); L with the full trigger as every shield."""
    return [ControllerFrame(frozenset(b), st, 1.0 if "L" in b else 0.0) for b, st, n in parts for _ in range(n)]


@pytest.mark.parametrize("name, want", [
    ("multishine", _script((("B",), DOWN, 2), ((), NEUTRAL, 3), (("Y",), DOWN, 2), ((), NEUTRAL, 1))),
    ("wavedash_down", _script((("L",), DOWN, 5), ((), NEUTRAL, 8))),
    ("wavedash_left", _script((("L",), WD_LEFT, 5), ((), NEUTRAL, 8))),
    ("wavedash_right", _script((("L",), WD_RIGHT, 5), ((), NEUTRAL, 8))),
])
def test_the_post_shine_macros_are_the_papers_controller_frames(name, want):
    macro = {m.name: m for m in get_action_set(PAPER).macros}[name]
    assert list(macro.frames) == want


def test_a_padded_paper_set_pads_the_post_shine_macros_and_keeps_the_remap():
    s = get_action_set(f"{PAPER}:18")
    assert s.lengths.tolist() == [18, 22, 32, 32, 18, 18, 18, 18, 18]
    assert s.macro(4, 4).name == "multishine" and s.macro(4, 4).frames[:8] == get_action_set(PAPER).macro(4, 4).frames
