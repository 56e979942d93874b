"""``cpu-report``'s figures beside the sources (arena/cpu/sources.py): the perfect-shield probe and the rows."""

from __future__ import annotations

import pytest

from melee_agent.arena import cpu_report
from melee_agent.arena.cpu import sources as cpu_sources


def test_the_probe_meets_no_shield_the_melee_cpu_releases_r_for_its_roll_script():
    # [D ftCo_800BA9A0]: a Fox hitbox seen while Marth is in Guard runs the roll script, whose first frame releases R
    # (ftCo_800BA160): the probe's jab, seen a frame before it reaches the shield, never meets it, on any of the 8
    # shield frames (the perfect shield itself: test_melee_cpu.py, with the pads held by hand). The designed CPU's
    # fights have no perfect shield.
    p = cpu_sources.perfect_shield_probe("melee", 9)
    assert not any(p["perfect_by_shield_frame"].values()) and p["punished"] == 0, p
    d = cpu_sources.perfect_shield_probe("designed", 9)
    assert not any(d["perfect_by_shield_frame"].values())


@pytest.mark.parametrize("level", [1, 5, 9])
def test_the_di_probe_finds_the_documented_share_of_the_120_frame_cycle(level):
    # [D ftCo_800AC5A0]: DI on the frames with (t mod 120) > 120 - 12 L: 12 L - 1 of the 120 phases.
    p = cpu_sources.di_probe("melee", level)
    assert p == {"phases_with_di": 12 * level - 1, "of": 120}


@pytest.mark.slow
def test_every_named_behaviour_has_a_row_with_the_arenas_figure():
    doc = cpu_report.report("melee", 9, envs=2, frames=60, scenarios=("standing", "recovery"))
    rows = cpu_sources.beside_sources(doc, cpu_sources.perfect_shield_probe("melee", 9), cpu_sources.di_probe("melee", 9))
    names = " ".join(r["behaviour"] for r in rows)
    for named in ("perfect shield", "perfect shields in play", "counterattack", "most frequent choices",
                  "jab, grab, dash grab", "aerials", "wavedash", "up-B angle", "charged smash", "edgehogs"):
        assert named in names, named
    by = {r["behaviour"]: r for r in rows}
    assert by["perfect shield (a hit on the shield's first frames)"]["arena"] == "none"  # the roll script drops it
    assert by["wait from choosing an attack to playing it"]["source_figure"] == "0-0 frames"
    assert by["DI in hitstun (stick held)"]["arena"].startswith("107/120 phases")
    assert "| behaviour |" in cpu_sources.format_rows(rows)


@pytest.mark.slow
@pytest.mark.parametrize("level,envs,frames", [(9, 4, 200), (5, 4, 200), (1, 8, 600)])
def test_the_measured_wait_before_an_attack_stays_in_the_sources_range(level, envs, frames):
    # [D ftCo_800B63D8]: int(span x u) + base frames, level 1: 5-39, level 5: 0-19, level 9: none -- a choice with no
    # wait is pressed on its decision frame (the report counts it as 0, not as missing). Level 1 dash-grabs a standing
    # Fox: the grab starts under the dash script's plan, its wait counted once, when it was chosen (not as a 0).
    doc = cpu_report.report("melee", level, envs=envs, frames=frames, scenarios=("standing",))
    least, most = cpu_sources.SOURCE_WAIT[level]
    w = doc["attack_wait_frames"]
    assert w["count"] > 0 and w["min"] >= least and w["max"] <= most, w
    assert doc["choices"]["dash_grab"] > 0 or level != 1, doc["choices"]
