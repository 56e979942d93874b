"""The generated game data: the values the issue quotes as the game's, the mapping onto libmelee's
actions and hitbox slots, and that the committed CSV files are what the generator writes."""

from __future__ import annotations

import csv
import math
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from melee.enums import Action, Character

from melee_agent.arena import gamedata as gd

ROOT = Path(__file__).resolve().parents[2]
#: The generator's sources, named by environment variables (a clone, its .git, or a bare mirror of each):
#: the regeneration check runs wherever they are given.
SOURCES = {"MELEE_AGENT_MELEEDB": "https://github.com/BroccoliRaab/meleedb",
           "MELEE_AGENT_IKNEEDATA": "https://github.com/schmooblidon/ikneedata"}


def git_dir(variable: str) -> str | None:
    """The git directory the environment variable names (a clone's own .git when it names a clone), or None."""
    folder = os.environ.get(variable)
    if not folder:
        return None
    path = Path(folder).expanduser()
    return str(path / ".git") if (path / ".git").exists() else str(path)


def by_id(character: Character, action: Action | int, frame: int) -> dict[int, gd.Hitbox]:
    return {h.hitbox_id: h for h in gd.hitboxes_at(character, action, frame)}


def test_marth_ftilt_is_30_70_and_the_tipper_13_percent():
    hb = by_id(Character.MARTH, Action.FTILT_MID, 7)
    assert sorted(hb) == [0, 1, 2, 3]
    for i in (0, 1, 2):
        assert (hb[i].damage, hb[i].base_kb, hb[i].kb_growth, hb[i].angle) == (9, 30, 70, 361)
    assert (hb[3].damage, hb[3].base_kb, hb[3].kb_growth) == (13, 60, 70)


def test_marth_fsmash_untipped_14_bkb_60_tipper_20():
    hb = by_id(Character.MARTH, Action.FSMASH_MID, 10)
    assert [hb[i].damage for i in range(4)] == [14, 14, 14, 20]
    assert [hb[i].base_kb for i in range(4)] == [60, 60, 60, 80]
    assert all(h.kb_growth == 70 for h in hb.values())
    assert [f for f in range(1, 50) if gd.hitboxes_at(Character.MARTH, 60, f)] == [10, 11, 12, 13]


def test_marth_dash_attack_blade_hitboxes_are_70_55_110():
    hb = by_id(Character.MARTH, Action.DASH_ATTACK, 12)
    assert [(hb[i].damage, hb[i].base_kb, hb[i].kb_growth, hb[i].angle) for i in (0, 3)] == [
        (11, 70, 55, 110), (12, 70, 55, 110)]
    assert [(hb[i].damage, hb[i].base_kb, hb[i].kb_growth, hb[i].angle) for i in (1, 2)] == [(9, 35, 60, 361)] * 2


def test_fox_shine_is_5_percent_angle_0_set_80_electric_on_frame_1_only():
    for action in (360, 365):  # ground and air shine start
        (h,) = gd.hitboxes_at(Character.FOX, action, 1)
        assert (h.damage, h.angle, h.base_kb, h.kb_growth, h.set_kb, h.element) == (5, 0, 0, 100, 80, "electric")
        assert gd.hitboxes_at(Character.FOX, action, 2) == ()
        assert h.radius == pytest.approx(8.0, abs=0.01)


def test_weights_and_attributes_match_libmelee_characterdata():
    assert gd.attributes(Character.FOX).weight == 75
    assert gd.attributes(Character.MARTH).weight == 87
    with resources.files("melee").joinpath("characterdata.csv").open() as f:
        lm = {r["Character"]: r for r in csv.DictReader(f)}
    for ch, name in ((Character.FOX, "Fox"), (Character.MARTH, "Marth")):
        a = gd.attributes(ch)
        assert a.gravity == pytest.approx(float(lm[name]["Gravity"]), abs=1e-6)
        assert a.terminal_velocity == pytest.approx(float(lm[name]["TerminalVelocity"]), abs=1e-6)
        assert a.fast_fall_velocity == pytest.approx(float(lm[name]["FastFallSpeed"]), abs=1e-6)
        assert a.walk_max == pytest.approx(float(lm[name]["MaxWalkSpeed"]), abs=1e-6)
    assert gd.attributes(Character.FOX).jumpsquat == 3 and gd.attributes(Character.MARTH).jumpsquat == 4
    with pytest.raises(KeyError):
        gd.attributes(Character.PEACH)


def test_hitbox_ids_are_libmelee_slots():
    """Where libmelee recorded a move, hitbox id k is active exactly when libmelee's hitbox_{k+1} is."""
    with resources.files("melee").joinpath("framedata.csv").open() as f:
        rows = [r for r in csv.DictReader(f) if (int(r["character"]), int(r["action"])) in
                {(Character.MARTH.value, 60), (Character.FOX.value, 65), (Character.MARTH.value, 56)}]
    assert rows
    for r in rows:
        ch, action, frame = Character(int(r["character"])), int(r["action"]), int(r["frame"])
        ours = by_id(ch, action, frame)
        for k in range(4):
            assert (r[f"hitbox_{k + 1}_status"] == "True") == (k in ours), (ch, action, frame, k)
            if k in ours:
                assert ours[k].radius == pytest.approx(float(r[f"hitbox_{k + 1}_size"]), abs=1e-4)
                assert ours[k].x == pytest.approx(float(r[f"hitbox_{k + 1}_x"]), abs=1e-4)


def test_rows_sorted_lowest_id_first_and_positions_recorded_where_libmelee_has_them():
    hb = gd.hitboxes_at(Character.MARTH, Action.FSMASH_MID, 11)
    assert [h.hitbox_id for h in hb] == [0, 1, 2, 3]
    assert all(h.radius > 0 and not math.isnan(h.x) for h in hb)
    # Fox's ftilt angled mid-high was never recorded by libmelee: damage known, position unknown.
    (h0, *_) = gd.hitboxes_at(Character.FOX, Action.FTILT_HIGH_MID, 5)
    assert h0.damage == 9 and math.isnan(h0.x)


def test_moves_table():
    nair = gd.move(Character.FOX, Action.NAIR)
    assert (nair.attack_id, nair.landing_lag, nair.lcancel_landing_lag, nair.autocancel_before,
            nair.autocancel_after, nair.total_frames) == (13, 15, 7, 4, 36, 49)
    assert gd.move(Character.MARTH, Action.FSMASH_MID).attack_id == 10
    assert gd.move(Character.FOX, 360).attack_id == 21 and gd.move(Character.MARTH, 367).attack_id == 20
    assert gd.move(Character.FOX, Action.STANDING) is None
    # slippi-js moves.ts: the attack ids the game uses.
    known = set(range(1, 22)) | set(range(50, 57)) | {61, 62}
    assert {m.attack_id for m in gd.load().moves} <= known
    assert gd.load() is gd.load()


def test_throws_are_the_throw_commands():
    """ikneedata's throw commands (the dump has none); Marth's down throw also as SmashWiki lists it."""
    t = {(x.character, x.move): x for x in gd.load().throws}
    assert len(t) == 8
    assert [(t[Character.MARTH, m].damage, t[Character.MARTH, m].base_kb, t[Character.MARTH, m].kb_growth)
            for m in ("fthrow", "bthrow", "uthrow", "dthrow")] == [(4, 70, 45), (4, 70, 60), (4, 60, 130), (5, 65, 50)]
    assert [(t[Character.FOX, m].damage, t[Character.FOX, m].angle) for m in ("fthrow", "bthrow", "uthrow", "dthrow")
            ] == [(3, 45), (2, 124), (2, 90), (1, 270)]
    assert gd.throw(Character.MARTH, Action.THROW_UP).attack_id == 55
    assert gd.throw(Character.FOX, Action.THROW_DOWN).weight_dependent is False
    assert all(x.weight_dependent for x in gd.load().throws if x.character == Character.MARTH)
    assert gd.throw(Character.FOX, Action.NAIR) is None


def test_fox_laser_is_3_percent_without_knockback():
    laser = gd.projectile(Character.FOX, 18)
    assert (laser.move, laser.damage, laser.base_kb, laser.kb_growth, laser.set_kb) == ("laser", 3, 0, 0, 0)
    assert gd.projectile(Character.MARTH, 18) is None


def test_committed_csv_files_are_what_the_generator_writes(tmp_path):
    missing = [v for v in SOURCES if git_dir(v) is None]
    if missing:
        pytest.skip("the generator's sources are not given: to check the committed CSV files against them, run "
                    + " ".join(f"{v}=<a clone of {SOURCES[v]}>" for v in SOURCES)
                    + " pytest tests/arena/test_gamedata.py (at the commits gamedata/SOURCES.md names)")
    meleedb, ikneedata = (git_dir(v) for v in SOURCES)
    for variable, folder in zip(SOURCES, (meleedb, ikneedata)):
        assert os.path.isdir(folder), f"{variable}={os.environ[variable]} is not a folder"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_gamedata.py"), "--meleedb-git", meleedb,
                    "--ikneedata-git", ikneedata, "--out", str(tmp_path)], check=True, capture_output=True)
    committed = ROOT / "melee_agent" / "arena" / "gamedata"
    for name in ("hitboxes.csv", "moves.csv", "characters.csv", "throws.csv", "projectiles.csv", "code_hitboxes.csv",
                 "victims.csv", "SOURCES.md"):
        assert (tmp_path / name).read_text() == (committed / name).read_text(), name


def test_docstring_examples_run():
    import doctest

    result = doctest.testmod(gd)
    assert result.attempted >= 3 and result.failed == 0
