"""The six legal stages' data against its sources: libmelee's ``melee.stages`` (read here, at test time), the
replays' first frames (spawn points), and the name lookups' errors."""

from __future__ import annotations

import melee
import pytest

from melee_agent.arena import libmelee_data as d
from melee_agent.arena.fight import frame
from melee_agent.arena.stages import STAGES, Platform, platforms_at, stage_named, stage_of_libmelee

NAMES = ("final_destination", "battlefield", "yoshis_story", "dreamland", "fountain_of_dreams", "pokemon_stadium")


def test_the_six_legal_stages_by_name_and_enum():
    assert tuple(STAGES) == NAMES
    for name in NAMES:
        s = stage_named(name)
        assert s.name == name and stage_of_libmelee(melee.Stage[s.libmelee]) is s


@pytest.mark.parametrize("name", NAMES)
def test_edges_and_blast_zones_are_libmeleees(name):
    s = stage_named(name)
    e = s.enum
    assert s.edge_x == pytest.approx(melee.stages.EDGE_GROUND_POSITION[e], abs=0)
    assert s.ledge_x == pytest.approx(melee.stages.EDGE_POSITION[e], abs=0)
    assert s.blast == tuple(float(v) for v in melee.stages.BLASTZONES[e])
    assert s.blast[0] < -s.edge_x < s.edge_x < s.blast[1] and s.blast[3] < 0 < s.blast[2]
    assert set(s.sources) >= {"edge_x", "blast", "platforms", "spawns"}


@pytest.mark.parametrize("name", NAMES)
def test_platforms_are_libmeleees(name):
    s = stage_named(name)
    e = s.enum
    given = {}
    for key, (h, lo, hi) in (("left", melee.stages.side_platform_position(False, e)),
                             ("right", melee.stages.side_platform_position(True, e)),
                             ("top", melee.stages.top_platform_position(e))):
        if h is not None:
            given[key] = Platform(float(lo), float(hi), float(h))
    ours = {p.left: p for p in s.platforms}
    for p in given.values():
        assert ours[p.left] == p
    # Fountain of Dreams' side platforms are the ones libmelee leaves out (its TODO): they start at libmelee's
    # FoDPlatforms heights x 0.80625 (see stages.py) and are named as a simplification.
    if name == "fountain_of_dreams":
        fod = melee.gamestate.FoDPlatforms()
        sides = [p for p in s.platforms if p.moves]
        assert [p.height for p in sides] == pytest.approx([float(fod.left) * 0.80625, float(fod.right) * 0.80625])
        assert "side platforms" in s.simplification
    else:
        assert len(s.platforms) == len(given)
    for p in s.platforms:
        assert -s.edge_x - 10 < p.left < p.right < s.edge_x + 10 and p.height > 0
    assert platforms_at(s, 1234) == s.platforms


def test_final_destination_is_todays_arena():
    fd = stage_named("final_destination")
    assert (fd.edge_x, fd.blast) == (d.EDGE, (d.BLAST_LEFT, d.BLAST_RIGHT, d.BLAST_TOP, d.BLAST_BOTTOM))
    assert (frame.EDGE, frame.BLAST_LEFT, frame.BLAST_TOP) == (85.5656967163, -246.0, 188.0)
    assert fd.platforms == () and fd.respawn_x == (-40.0, 40.0)


def _first_positions(path: str) -> tuple[object, list[tuple[float, float]]]:
    from melee_agent.io.slp import console_class

    c = console_class()(path=path, is_dolphin=False, allow_old_version=True)
    c.connect()
    gs = c.step()
    return gs.stage, [(float(p.position.x), float(p.position.y)) for _, p in sorted(gs.players.items())]


@pytest.mark.parametrize("replay", ["slippijs_lCancel.slp", "libmelee_test_game_1.slp"])
def test_spawn_points_are_the_replays_first_frame(replay):
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "replays" / replay
    if not path.exists():
        pytest.skip(f"{path} not here")
    stage, spots = _first_positions(str(path))
    s = stage_of_libmelee(stage)
    assert [pytest.approx(p, abs=1e-4) for p in spots] == list(s.spawns[:2])
    assert "measured" in s.sources["spawns"]


def test_bad_names_say_the_six():
    with pytest.raises(ValueError, match="final_destination, battlefield, yoshis_story, dreamland"):
        stage_named("fd")
    with pytest.raises(ValueError, match="not one of the six legal stages"):
        stage_of_libmelee(melee.Stage.NO_STAGE)
    with pytest.raises(ValueError, match="unknown stage"):
        stage_named(None)  # type: ignore[arg-type]
