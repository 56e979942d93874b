"""When Fox and Marth cannot be hit: the replays' hurtbox state (`melee-agent fidelity --intangibility`) against
the arena's windows, and the arena's windows through :func:`~melee_agent.arena.fight.hits.intangible`."""

from __future__ import annotations

import json

import pytest
import torch
from melee.enums import Action

from melee_agent.arena import Arena
from melee_agent.arena.fight.hits import intangible
from melee_agent.arena.fight.moves import AGENT_COL, CPU_COL, Slot, row
from melee_agent.cli.main import main
from melee_agent.io.slp import ReplayError
from melee_agent.report import intangibility
from melee_agent.report.intangibility import Instance
from tests.replays_kit import READABLE_REPLAYS, replay_path


def _window_frames(col: int, slot: int, frames: range) -> list[int]:
    """The action frames on which the arena calls a fighter in this move intangible."""
    a = Arena(1, game="fight", seed=0)
    a.reset()
    T = a._consts.fight.table
    out = []
    for f in frames:
        ps = a.state.players
        move = ps.move.clone()
        move[0, col] = float(row(col, slot))
        af = ps.action_frame.clone()
        af[0, col] = float(f)
        ps = ps._replace(move=move, action_frame=af, invulnerability_left=torch.zeros_like(ps.invulnerability_left))
        if bool(intangible(ps, T)[0, col]):
            out.append(f)
    return out


@pytest.mark.parametrize(("col", "slot", "first", "last"), [
    (AGENT_COL, Slot.ROLL_FORWARD, 4, 19), (AGENT_COL, Slot.ROLL_BACKWARD, 4, 19), (AGENT_COL, Slot.SPOT_DODGE, 2, 15),
    (AGENT_COL, Slot.DOWN_B, 1, 1), (CPU_COL, Slot.ROLL_BACKWARD, 4, 23), (CPU_COL, Slot.UP_B, 5, 5),
])
def test_the_arena_is_intangible_on_the_measured_frames_only(col: int, slot: int, first: int, last: int) -> None:
    # the windows docs/intangibility.md measured (Fox's rolls 4-19 of 31, Marth's back roll 4-23 of 35, ...)
    assert _window_frames(col, slot, range(1, 40)) == list(range(first, last + 1))


def test_votes_take_each_frame_from_the_instances_that_reached_it() -> None:
    roll = Action.ROLL_FORWARD.value
    whole = tuple(range(4, 20))
    found = [Instance("a", "FOX", roll, 31, whole), Instance("b", "FOX", roll, 31, whole),
             Instance("c", "FOX", roll, 2, ()),  # cut short on frame 2: votes on frames 1-2 only
             Instance("d", "FOX", roll, 31, tuple(range(4, 16)))]  # one dissenter: 16-19 vulnerable
    (r,) = intangibility.compare(found)
    assert (r.character, r.action, r.instances, r.seen_to, r.measured) == ("FOX", "ROLL_FORWARD", 4, 31, (4, 19))
    assert r.agree == pytest.approx(1 - 4 / (3 * 31 + 2))  # the dissenter's 4 frames
    assert (r.arena, r.arena_length, r.match) == ((4, 19), 31, True)
    (short,) = intangibility.compare([Instance("a", "FOX", roll, 31, tuple(range(4, 16)))])
    assert short.match is False  # the arena's 16-19 are not in this one


def test_replays_without_hurtbox_state_are_named_and_passed_over() -> None:
    old = replay_path("pyslippi_game.slp")  # replay format 1.0.0
    with pytest.raises(ReplayError, match=r"pyslippi_game\.slp: replay format 1\.0\.0 records no hurtbox state"):
        intangibility.instances(old)
    found, errors = intangibility.run([old])
    assert found == [] and len(errors) == 1


def test_the_shared_replays_agree_with_the_arena() -> None:
    paths = [replay_path(n) for n in READABLE_REPLAYS]
    found, errors = intangibility.run(paths)
    assert len(errors) == 1 and "pyslippi_game.slp" in errors[0]  # the one replay from before 2.1.0
    rows = {(r.character, r.action): r for r in intangibility.compare(found)}
    # Fox's shine start (frame 1 only) and his air dodge are in libmelee's test game
    assert rows[("FOX", "DOWN_B_GROUND_START")].measured == (1, 1)
    assert rows[("FOX", "AIRDODGE")].measured == (4, 29)
    assert rows[("FOX", "DOWN_B_GROUND_START")].match and rows[("FOX", "AIRDODGE")].match
    assert rows[("FOX", "STANDING")].measured is None and rows[("FOX", "STANDING")].match is not False
    assert [k for k, r in rows.items() if r.match is False] == []


def test_cli_prints_the_table_and_writes_json(tmp_path, capsys) -> None:
    out = tmp_path / "intang.json"
    path = str(replay_path("libmelee_test_game_1.slp"))
    assert main(["fidelity", "--intangibility", path, "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "DOWN_B_GROUND_START" in text and "the arena agrees on every action it plays" in text
    data = json.loads(out.read_text())
    assert data["mismatches"] == [] and data["skipped"] == []
    assert any(r["action"] == "AIRDODGE" and r["measured"] == [4, 29] for r in data["rows"])
    assert main(["fidelity", "--intangibility", "--motion", path]) == 2


def test_a_replay_given_twice_is_read_once() -> None:
    path = replay_path("libmelee_test_game_1.slp")
    once, _ = intangibility.run([path])
    twice, errors = intangibility.run([path, path])
    assert twice == once and len(errors) == 1 and "the same file as" in errors[0]
