"""`melee-agent fidelity`: the arena's hit predictions beside real replays (../shared/replays)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from melee.enums import Action, Character

from melee_agent.report import fidelity as fd
from melee_agent.cli import main as cli

REPLAYS = Path(__file__).resolve().parents[3] / "shared" / "replays"
needs_replays = pytest.mark.skipif(not REPLAYS.is_dir(), reason=f"no replay folder at {REPLAYS} (../shared/replays)")
BAD = ("libmelee_corrupt_game_1.slp", "libmelee_corrupt_game_2.slp", "libmelee_corrupt_game_3.slp", "pyslippi_v0.1.slp")


def player(character: Character, action: int, frame: int, x: float, y: float = 0.0, right: bool = True) -> fd.PlayerFrame:
    return fd.PlayerFrame(character, action, frame, 0.0, 4, True, right, x, y, 0.0, 0.0, 0.0, -1)


def test_tipper_by_geometry_lowest_touching_id_wins():
    """Marth's fsmash: a victim at the tip is hit by the tipper (id 3) only; one close in by id 0 first."""
    marth_prev = player(Character.MARTH, Action.FSMASH_MID.value, 10, 0.0)
    marth = player(Character.MARTH, Action.FSMASH_MID.value, 11, 0.0)
    cands = fd.gd.hitboxes_at(Character.MARTH, Action.FSMASH_MID, 11)
    far = player(Character.FOX, 0, 1, 34.0)
    near = player(Character.FOX, 0, 1, 20.0)
    assert fd._pick_hitbox(cands, marth, marth_prev, far)[0].hitbox_id == 3
    assert fd._pick_hitbox(cands, marth, marth_prev, near)[0].hitbox_id == 0
    # facing left mirrors the hitboxes: the same victim on the right is now out of reach of all
    left = marth._replace(facing_right=False)
    assert fd.hitbox_gap(cands[0], left, None, near) > 10


def test_grounded_only_hitboxes_are_dropped_only_where_the_replay_records_ground():
    """Fox's utilt: id 0 (12%) hits grounded victims only, id 1 (9%) airborne ones only. Before Slippi
    2.0.0 libmelee reports every player on the ground, so such a replay keeps both."""
    fox = player(Character.FOX, Action.UPTILT.value, 8, 0.0)
    victim = player(Character.MARTH, Action.STANDING.value, 1, 5.0)  # on_ground=True, as libmelee says
    ids = lambda v, carries: [h.hitbox_id for h in fd.candidate_hitboxes(fox, v, carries)]  # noqa: E731
    assert ids(victim, True) == [0, 2, 3]
    assert ids(victim._replace(on_ground=False), True) == [1, 2, 3]
    assert ids(victim, False) == [0, 1, 2, 3]


def test_segment_distance():
    assert fd._segment_distance((0, 0), (2, 0), (1, -1), (1, 1)) == 0.0  # crossing
    assert fd._segment_distance((0, 0), (0, 0), (3, 0), (3, 10)) == pytest.approx(3.0)
    assert fd._segment_distance((0, 12), (0, 12), (0, 0), (0, 10)) == pytest.approx(2.0)


@pytest.fixture(scope="module")
def results():
    if not REPLAYS.is_dir():
        pytest.skip(f"no replay folder at {REPLAYS} (../shared/replays)")
    res, errors = fd.run(sorted(REPLAYS.glob("*.slp")))
    return {Path(r.file).name: r for r in res}, errors


@needs_replays
def test_bad_files_are_named_and_skipped_whole(results):
    by_name, errors = results
    assert len(errors) == len(BAD)
    for name in BAD:
        assert name not in by_name
        assert sum(name in e for e in errors) == 1
    assert any("too old" in e for e in errors if "v0.1" in e)
    assert all("\n" not in e for e in errors)


@needs_replays
def test_truncated_replay_gives_no_hits(tmp_path):
    data = (REPLAYS / "libmelee_test_game_1.slp").read_bytes()
    cut = tmp_path / "cut.slp"
    cut.write_bytes(data[: len(data) // 2])
    res, errors = fd.run([cut])
    assert res == [] and len(errors) == 1 and "cut.slp" in errors[0]


@needs_replays
def test_fox_ditto_every_prediction_matches(results):
    """libmelee_test_game_1 (Slippi 3.6.1) carries hitstun and launch speeds: Fox's nair, shine and five
    upsmashes, the later upsmashes staled by the earlier ones."""
    r = results[0]["libmelee_test_game_1.slp"]
    assert [h.move for h in r.hits] == ["nair", "shine", "usmash", "usmash", "usmash", "usmash", "usmash"]
    assert [round(h.stale_factor, 2) for h in r.hits[2:]] == [1.0, 0.91, 0.83, 0.76, 0.70]  # 0.09, +0.08, +0.07, +0.06
    for h in r.hits:
        assert h.damage_exact and h.hitstun_ok and h.launch_ok, h
    shine = r.hits[1]
    # set knockback 80 on Fox: ((1 + 40) * 200/175 * 1.4 + 18) = 83.6 -> hitstun 33, launch 2.508
    assert (shine.damage_observed, shine.hitstun_observed, shine.hitstun_predicted) == (5.0, 33, 33)
    assert shine.launch_speed_predicted == pytest.approx(2.508, abs=1e-4)
    assert shine.launch_speed_observed == pytest.approx(2.508, abs=1e-3)


@needs_replays
def test_marth_game_damage_staleness_throws_and_the_laser(results):
    r = results[0]["pyslippi_game.slp"]
    assert r.version == "1.0.0"
    assert all(h.hitstun_observed is None and h.launch_speed_observed is None for h in r.hits)  # too old to carry them
    # Throws: the throw command (gamedata throws.csv, from ikneedata): Marth's fthrow and uthrow 4%.
    throws = [h for h in r.hits if h.move in ("fthrow", "uthrow")]
    assert [(h.frame, h.move, h.attack_id) for h in throws] == [
        (180, "uthrow", 55), (471, "fthrow", 53), (2356, "fthrow", 53), (2958, "uthrow", 55), (4214, "fthrow", 53)]
    assert all(h.damage_exact and h.damage_predicted == 4.0 and h.note == "throw command" for h in throws)
    assert all(h.hitstun_predicted is not None and h.launch_speed_predicted > 0 for h in throws)  # thrown: launched
    # Fox's laser: the item's hit (projectiles.csv), 3%, no knockback; named by the replay's attack id 18.
    (laser,) = [h for h in r.hits if h.move == "laser"]
    assert (laser.attacker, laser.attack_id, laser.damage_observed, laser.damage_predicted) == ("FOX", 18, 3.0, 3.0)
    assert (laser.knockback_predicted, laser.hitstun_predicted) == (0.0, 0)
    # Every hit's damage is some active hitbox's (or the throw's, the laser's) damage x the stale factor.
    assert len(r.hits) == 47 and all(h.damage_any_hitbox for h in r.hits)
    pummels = [h for h in r.hits if h.move == "pummel"]
    assert [round(h.damage_observed, 2) for h in pummels] == [3.0, 2.85, 3.0, 2.82, 3.0]
    assert all(h.damage_exact and h.hitstun_predicted is None for h in pummels)
    # The throws enter Marth's stale queue: the pummels at 440 and 2929 are 0.95 and 0.94 only with the
    # uthrow (180) and fthrow (2356) counted between them and the earlier pummel (0.94 and 0.93 without).
    assert [round(h.stale_factor, 2) for h in pummels] == [1.0, 0.95, 1.0, 0.94, 1.0]
    # Two 1% rises with no Marth attack out (Marth 100 units away) are kept apart, not counted.
    assert [(u.frame, u.damage) for u in r.unattributed] == [(1436, 1.0), (2457, 1.0)]


@needs_replays
def test_cli_table_json_and_exit_codes(tmp_path, capsys):
    out = tmp_path / "deep" / "fid.json"
    files = [str(p) for p in sorted(REPLAYS.glob("*.slp"))]
    assert cli.main(["fidelity", *files, "--json", str(out)]) == 0
    cap = capsys.readouterr()
    assert "damage exact" in cap.out and "MARTH" in cap.out and "usmash" in cap.out
    assert sum("skipped" in ln for ln in cap.err.splitlines()) == len(BAD)
    doc = json.loads(out.read_text())
    assert set(doc) >= {"hits", "summary", "per_move", "errors", "files", "unattributed"}
    need = {"attacker", "move", "damage_observed", "damage_predicted", "hitstun_observed", "hitstun_predicted",
            "launch_speed_observed", "launch_speed_predicted", "file", "frame", "victim", "percent_before"}
    assert doc["hits"] and all(need <= set(h) for h in doc["hits"])
    s = doc["summary"]
    assert s["hits"] == len(doc["hits"]) and s["hitstun_hits"] == 7 and s["hitstun_within_1"] == 1.0
    assert not list(out.parent.glob("*.tmp"))
    assert cli.main(["fidelity", str(REPLAYS / BAD[0])]) == 2  # none readable: one error line
    err = capsys.readouterr().err
    assert BAD[0] in err and err.count("\n") == 1


def airborne(character: Character, action: int, frame: int, percent: float, x: float = 0.0, attack: int = -1,
             hitstun: float = 0.0, speed_x: float = 0.0) -> fd.PlayerFrame:
    """A player in the air at height 20 facing right, as a synthetic replay's frame records it."""
    return fd.PlayerFrame(character, action, frame, percent, 4, False, True, x, 20.0, hitstun, speed_x, 0.0, attack)


def fox_and_marth(n: int, fox: fd.PlayerFrame, marth: fd.PlayerFrame, laser_out: bool = False) -> fd.Frame:
    """Frame ``n`` of a synthetic replay, Fox on port 1 and Marth on port 2 (``laser_out``: a laser of Fox's)."""
    return fd.Frame(n, {1: fox, 2: marth}, frozenset({1}) if laser_out else frozenset())


FOX, MARTH = Character.FOX, Character.MARTH


def test_firefox_hit_from_the_hitbox_the_game_makes_in_code():
    """Fox's firefox travel has no hitbox command (the dump has none): its hit is predicted from
    code_hitboxes.csv (14%, base 60, growth 60). Worked by hand for Marth (weight 87) at 30%:
    p = 30 + 14 = 44; KB = ((44/10 + 44*14/20) * 200/187 * 1.4 + 18) * 0.60 + 60 = 102.42;
    hitstun floor(0.4 KB) = 40; launch speed 0.03 KB = 3.073. A second firefox hit later is staled by
    the first in the queue (0.91)."""
    frames = [fox_and_marth(1, airborne(FOX, 356, 4, 0.0), airborne(MARTH, 0, 1, 30.0, 5.0)),
              fox_and_marth(2, airborne(FOX, 356, 5, 0.0, attack=20),
                            airborne(MARTH, 0, 1, 44.0, 5.0, hitstun=40.0, speed_x=3.0726)),
              fox_and_marth(3, airborne(FOX, 0, 1, 0.0, attack=20), airborne(MARTH, 0, 1, 44.0, 5.0)),
              fox_and_marth(4, airborne(FOX, 356, 5, 0.0, attack=20), airborne(MARTH, 0, 1, 44.0, 5.0)),
              fox_and_marth(5, airborne(FOX, 356, 6, 0.0, attack=20), airborne(MARTH, 0, 1, 56.74, 5.0))]
    res = fd.analyse(fd.Replay("synthetic.slp", (3, 7, 0), frames))
    first, second = res.hits
    assert (first.move, first.attack_id, first.damage_predicted) == ("firefox_air", 20, 14.0)
    assert first.damage_exact and first.hitstun_predicted == 40 and first.hitstun_ok
    assert first.launch_speed_predicted == pytest.approx(3.0726, abs=1e-3) and first.launch_ok
    assert "code" in first.note
    assert second.stale_factor == pytest.approx(0.91) and second.damage_predicted == pytest.approx(14 * 0.91)
    assert second.damage_exact  # 44 -> 56.74: 12.74 = 14 x 0.91
    assert fd.gd.code_hitbox(MARTH, 356) is None  # Marth's 356 is a dancing-blade swing with its own data


def test_a_code_made_hitbox_counts_only_while_out_and_not_for_another_attack():
    """A laser (attack id 18) landing while Fox firefoxes is the laser's 3%, not the firefox's 14%; a rise
    during the illusion's end past the frames libmelee recorded its hitbox out (1-2) is not the illusion's."""
    frames = [fox_and_marth(1, airborne(FOX, 356, 4, 0.0), airborne(MARTH, 0, 1, 10.0), laser_out=True),
              fox_and_marth(2, airborne(FOX, 356, 5, 0.0, attack=18), airborne(MARTH, 0, 1, 13.0), laser_out=True),
              fox_and_marth(3, airborne(FOX, 352, 19, 0.0, attack=18), airborne(MARTH, 0, 1, 13.0)),
              fox_and_marth(4, airborne(FOX, 352, 20, 0.0, attack=18), airborne(MARTH, 0, 1, 14.0))]
    res = fd.analyse(fd.Replay("synthetic.slp", (3, 7, 0), frames))
    (laser,) = res.hits
    assert (laser.move, laser.damage_predicted) == ("laser", 3.0) and laser.damage_exact
    (rise,) = res.unattributed
    assert rise.frame == 4


def test_a_throw_is_predicted_at_weight_100_and_its_lasers_leave_the_launch_running():
    """Marth's up throw on Fox at 65.63% (slippi-js rollbackFrameTest.slp, frame 7186, re-typed): p = 69,
    KB = ((6.9 + 13.8) * 200/200 * 1.4 + 18) * 1.3 + 60 = 121.07 at weight 100 (``kb.THROW_WEIGHT``):
    hitstun 48, launch 3.632 less one frame's decay (no hitlag) = 3.581, as the replay shows (Fox's weight
    75 would give 126.46: hitstun 50, outside the frame). Then Fox's up throw on Marth (the same replay,
    frame 4821) and two of its lasers (2% each, staled by the throw: 1.82): no knockback, so hitstun and
    launch run on from the frame before; their damage is in no source, so not predicted."""
    marth_throws = [fox_and_marth(1, airborne(FOX, 241, 11, 65.63), airborne(MARTH, 221, 11, 0.0)),
                    fox_and_marth(2, airborne(FOX, 90, 1, 69.63, hitstun=48.0, speed_x=3.581),
                                  airborne(MARTH, 221, 12, 0.0, attack=55))]
    (throw,) = fd.analyse(fd.Replay("synthetic.slp", (3, 7, 0), marth_throws)).hits
    assert (throw.move, throw.damage_predicted) == ("uthrow", 4.0)
    assert throw.knockback_predicted == pytest.approx(121.07, abs=0.01)
    assert throw.hitstun_predicted == 48 and throw.hitstun_ok
    assert throw.launch_speed_predicted == pytest.approx(3.581, abs=1e-3) and throw.launch_ok

    fox_throws = [fox_and_marth(1, airborne(FOX, 221, 7, 0.0), airborne(MARTH, 241, 7, 18.0)),
                  fox_and_marth(2, airborne(FOX, 221, 8, 0.0, attack=55),
                                airborne(MARTH, 90, 1, 20.0, hitstun=39.0, speed_x=2.978)),
                  fox_and_marth(3, airborne(FOX, 221, 9, 0.0, attack=55),
                                airborne(MARTH, 90, 2, 20.0, hitstun=38.0, speed_x=2.927)),
                  fox_and_marth(4, airborne(FOX, 221, 10, 0.0, attack=55),
                                airborne(MARTH, 90, 3, 21.82, hitstun=37.0, speed_x=2.876)),
                  fox_and_marth(5, airborne(FOX, 221, 11, 0.0, attack=55),
                                airborne(MARTH, 90, 4, 23.64, hitstun=36.0, speed_x=2.825))]
    throw, *lasers = fd.analyse(fd.Replay("synthetic.slp", (3, 7, 0), fox_throws)).hits
    assert throw.move == "uthrow" and throw.damage_exact and throw.hitstun_ok
    assert throw.launch_speed_predicted == pytest.approx(2.978, abs=1e-3) and throw.launch_ok
    assert [h.move for h in lasers] == ["laser (throw)"] * 2
    for h, hs, ls in zip(lasers, (37, 36), (2.876, 2.825), strict=True):
        assert h.damage_predicted is None and not h.damage_exact and h.stale_factor == pytest.approx(0.91)
        assert h.hitstun_predicted == hs and h.hitstun_ok
        assert h.launch_speed_predicted == pytest.approx(ls, abs=1e-3) and h.launch_ok


def test_a_laser_in_hitstun_leaves_it_running_and_any_character_can_be_the_victim():
    """Fox's blaster laser has no knockback (projectiles.csv: base, growth, set 0; SmashWiki: no hitstun,
    no flinch): a laser landing on a Falco in hitstun 20, launched at 2.0, leaves hitstun 19 and 1.949.
    Falco is not a fighter of the arena; victims.csv gives every character's weight and height."""
    falco = Character.FALCO
    frames = [fox_and_marth(1, airborne(FOX, 0, 30, 0.0), airborne(falco, 90, 5, 30.0, hitstun=20.0, speed_x=2.0),
                            laser_out=True),
              fox_and_marth(2, airborne(FOX, 0, 31, 0.0, attack=18),
                            airborne(falco, 90, 6, 33.0, hitstun=19.0, speed_x=1.949), laser_out=True)]
    (laser,) = fd.analyse(fd.Replay("synthetic.slp", (3, 7, 0), frames)).hits
    assert (laser.move, laser.victim, laser.damage_predicted) == ("laser", "FALCO", 3.0) and laser.damage_exact
    assert laser.hitstun_predicted == 19 and laser.launch_speed_predicted == pytest.approx(1.949)
    assert fd.gd.victim(falco).weight == 80 and len(fd.gd.load().victims) == 27


def test_a_rollback_keeps_each_frames_last_version():
    """A netplay replay sends a frame again when the game rolls back; the timeline that stood is each
    frame's last version (libmelee's default keeps the first, a prediction). libmelee_test_game_1.slp
    holds 11 such frames."""
    import melee

    path = REPLAYS / "libmelee_test_game_1.slp"
    if not path.is_file():
        pytest.skip(f"{path} not found: ../shared/replays is absent")
    console = melee.Console(path=str(path), is_dolphin=False, allow_old_version=True, skip_rollback_frames=False)
    console.connect()
    last: dict[int, tuple] = {}
    resent = 0
    while (gs := console.step()) is not None:
        resent += int(gs.frame) in last
        last[int(gs.frame)] = tuple((p.action.value, float(p.position.x), float(p.percent)) for _, p in
                                    sorted(gs.players.items()))
    assert resent > 0
    frames = fd.read_replay(path).frames
    assert [f.number for f in frames] == sorted(last)
    assert all(tuple((p.action, p.x, p.percent) for _, p in sorted(f.players.items())) == last[f.number]
               for f in frames)


def usmash(frame: int, attack: int = -1) -> fd.PlayerFrame:
    return airborne(FOX, Action.UPSMASH.value, frame, 0.0, attack=attack)


def test_a_move_started_again_without_leaving_it_is_one_attack_for_the_stale_queue():
    """Fox's up smash hits, starts again from its interruptible frame without another action between
    (its action frame falls back, its action does not change) and hits again: the game counts one attack,
    so the second hit sees the first's staleness (0.91) and adds none; a later up smash after standing
    sees one entry (0.91), not two (0.83). slippi-js rollbackFrameTest.slp: Fox's up tilt, twice so."""
    m = lambda pct: airborne(MARTH, 0, 1, pct, 5.0)  # noqa: E731
    frames = [fox_and_marth(1, usmash(6), m(0.0)), fox_and_marth(2, usmash(7, 11), m(18.0)),
              fox_and_marth(3, usmash(1, 11), m(18.0)), fox_and_marth(4, usmash(6, 11), m(18.0)),
              fox_and_marth(5, usmash(7, 11), m(34.38)),
              fox_and_marth(6, airborne(FOX, Action.STANDING.value, 1, 0.0, attack=11), m(34.38)),
              fox_and_marth(7, usmash(6, 11), m(34.38)), fox_and_marth(8, usmash(7, 11), m(50.76))]
    first, again, later = fd.analyse(fd.Replay("synthetic.slp", (3, 7, 0), frames)).hits
    assert first.stale_factor == 1.0 and first.damage_exact
    assert again.stale_factor == pytest.approx(0.91) and again.damage_exact
    assert later.stale_factor == pytest.approx(0.91) and later.damage_exact


def test_a_charged_smash_deals_more_and_its_knockback_takes_the_damage_floored():
    """Fox's up smash (18%) standing on its charge frame (2) for 4 frames is charged 3: 18 x (1 + 0.3671 x
    3/60) = 18.3304 (consistencyTest NessVFox-Absorb.slp dealt 18.33 so); knockback with d = 18."""
    frames = [fox_and_marth(n, usmash(af), airborne(MARTH, 0, 1, 20.0, 5.0))
              for n, af in enumerate((1, 2, 2, 2, 2, 3, 4, 5, 6), start=1)]
    frames.append(fox_and_marth(10, usmash(7, 11), airborne(MARTH, 0, 1, 38.3304, 5.0)))
    (hit,) = fd.analyse(fd.Replay("synthetic.slp", (3, 7, 0), frames)).hits
    assert hit.damage_predicted == pytest.approx(18.3304, abs=1e-4) and hit.damage_exact and "charged 3" in hit.note
    h = fd.gd.hitboxes_at(FOX, Action.UPSMASH, 7)[0]
    p = fd.kb.knockback_percent(fd.torch.tensor(20.0), fd.torch.tensor(18.3304))
    assert hit.knockback_predicted == pytest.approx(float(fd.kb.knockback(p, 18.0, 87.0, h.kb_growth, h.base_kb)))


def test_a_laser_gone_on_its_hit_frame_and_a_laser_in_a_replay_without_items_are_lasers():
    """A laser that hits is gone from the frame's projectiles, and with the replay's last attack landed
    already 18 (a laser before) nothing changes on the hit frame; before 3.0.0 a replay has no projectiles
    at all. Both rises are the laser's, staled by the laser before."""
    for version, out in (((3, 7, 0), True), ((2, 0, 0), False)):
        frames = [fox_and_marth(1, airborne(FOX, 0, 1, 0.0), airborne(MARTH, 0, 1, 0.0), laser_out=out),
                  fox_and_marth(2, airborne(FOX, 0, 2, 0.0, attack=18), airborne(MARTH, 0, 1, 3.0), laser_out=out),
                  fox_and_marth(3, airborne(FOX, 0, 3, 0.0, attack=18), airborne(MARTH, 0, 1, 3.0), laser_out=out),
                  fox_and_marth(4, airborne(FOX, 0, 4, 0.0, attack=18), airborne(MARTH, 0, 1, 5.73))]
        res = fd.analyse(fd.Replay("synthetic.slp", version, frames))
        assert [(h.move, h.damage_exact) for h in res.hits] == [("laser", True), ("laser", True)], version
        assert res.hits[1].stale_factor == pytest.approx(0.91) and not res.unattributed


@pytest.mark.parametrize("attack_before", [-1, 14])
def test_a_trade_reads_the_move_of_the_frame_before(attack_before):
    """Marth's forward air and a hit on Marth land on one frame: Marth already shows his own damage
    action (his percent rose too), so his hit is read from the fair of the frame before, one frame on;
    also where his last attack landed was a fair already and so does not change (slippi-js Whispy.slp,
    frame 3839)."""
    fair = Action.FAIR.value
    frames = [fox_and_marth(1, airborne(FOX, 0, 1, 10.0, 4.0), airborne(MARTH, fair, 3, 0.0, attack=attack_before)),
              fox_and_marth(2, airborne(FOX, 0, 1, 10.0, 4.0), airborne(MARTH, fair, 4, 0.0, attack=attack_before)),
              fox_and_marth(3, airborne(FOX, 0, 1, 10.0 + fd.gd.hitboxes_at(MARTH, fair, 5)[0].damage, 4.0),
                            airborne(MARTH, Action.DAMAGE_AIR_1.value, 1, 5.0, attack=14))]
    hits = [h for h in fd.analyse(fd.Replay("synthetic.slp", (3, 7, 0), frames)).hits if h.attacker == "MARTH"]
    assert [(h.move, h.action, h.action_frame) for h in hits] == [("fair", fair, 5)]
    assert "trade" in hits[0].note


def test_a_grounded_victim_sent_down_below_tumble_moves_along_the_ground_only():
    """Fox's drill (3%, 290 degrees, set knockback 30, growth 100) on a standing Marth: KB = ((10/10 +
    10*30/20) * 200/187 * 1.4 + 18) * 1.0 = 41.96, below tumble (80), sent into the ground: Marth stays on
    it and only the launch's horizontal part, 0.03 KB x |cos 290| = 0.4305, moves him (slippi-js
    FodPlatforms.slp: every drill on a standing Peach, 1.247 -> 0.427). Airborne, the whole 1.2587."""
    dair = Action.DAIR.value
    for on_ground, launch in ((True, 0.4305), (False, 1.2587)):
        marth = lambda pct, g=on_ground: fd.PlayerFrame(MARTH, 0, 1, pct, 4, g, False, 1.8, 20.0, 0.0, 0.0, 0.0, -1)  # noqa: E731
        frames = [fox_and_marth(1, airborne(FOX, dair, 4, 0.0), marth(0.0)),
                  fox_and_marth(2, airborne(FOX, dair, 5, 0.0, attack=17), marth(3.0))]
        (hit,) = fd.analyse(fd.Replay("synthetic.slp", (3, 7, 0), frames)).hits
        assert hit.damage_predicted == 3.0 and hit.hitstun_predicted == 16
        assert hit.launch_speed_predicted == pytest.approx(launch, abs=1e-3), on_ground


def test_a_smash_restarted_from_its_own_frames_starts_uncharged_and_a_charged_trade_keeps_its_charge():
    """The charge count starts again when the move does (its action frame falls back), and where the
    charged smash trades (Fox already in his damage action, his percent rising) it is the frame before's."""
    m = lambda pct: airborne(MARTH, 0, 1, pct, 5.0)  # noqa: E731
    once = [fox_and_marth(n, usmash(af), m(0.0)) for n, af in enumerate((1, 2, 2, 2, 2, 3, 4, 5, 6), start=1)]
    once.append(fox_and_marth(10, usmash(7, 11), m(18.3304)))
    again = [fox_and_marth(11 + i, usmash(af, 11), m(18.3304)) for i, af in enumerate((20, 1, 2, 3, 4, 5, 6))]
    again.append(fox_and_marth(18, usmash(7, 11), m(18.3304 + 18 * 0.91)))
    first, second = fd.analyse(fd.Replay("synthetic.slp", (3, 7, 0), once + again)).hits
    assert first.damage_exact and "charged 3" in first.note
    assert second.damage_predicted == pytest.approx(18 * 0.91) and "charged" not in second.note

    trade = [fox_and_marth(n, airborne(FOX, Action.UPSMASH.value, af, 10.0), m(0.0))
             for n, af in enumerate((1, 2, 2, 2, 2, 3, 4, 5, 6), start=1)]
    trade.append(fox_and_marth(10, airborne(FOX, Action.DAMAGE_AIR_1.value, 1, 22.0, attack=11), m(18.3304)))
    (hit,) = [h for h in fd.analyse(fd.Replay("synthetic.slp", (3, 7, 0), trade)).hits if h.attacker == "FOX"]
    assert "trade" in hit.note and "charged 3" in hit.note and hit.damage_exact


def test_a_rise_before_a_throws_release_is_a_laser_and_an_off_screen_1_is_no_projectiles_hit():
    """Fox's down throw releases on its frame 33 whatever the victim weighs: a rise on frame 20 is one of
    its lasers, the rise on 33 the throw command. A 1% rise while a laser of Fox's flies, his last attack
    landed naming his back air all along, is not the laser's: unattributed (slippi-js Whispy.slp 9434)."""
    dthrow = Action.THROW_DOWN.value
    frames = [fox_and_marth(1, airborne(FOX, dthrow, 19, 0.0), airborne(MARTH, 0, 1, 10.0)),
              fox_and_marth(2, airborne(FOX, dthrow, 20, 0.0), airborne(MARTH, 0, 1, 12.0)),
              fox_and_marth(3, airborne(FOX, dthrow, 32, 0.0), airborne(MARTH, 0, 1, 12.0)),
              fox_and_marth(4, airborne(FOX, dthrow, 33, 0.0, attack=56), airborne(MARTH, 0, 1, 13.0))]
    laser, command = fd.analyse(fd.Replay("synthetic.slp", (3, 7, 0), frames)).hits
    assert laser.move == "laser (throw)" and laser.damage_predicted is None and command.move == "dthrow"

    frames = [fox_and_marth(1, airborne(FOX, 0, 1, 0.0, attack=15), airborne(MARTH, 0, 1, 10.0), laser_out=True),
              fox_and_marth(2, airborne(FOX, 0, 2, 0.0, attack=15), airborne(MARTH, 0, 1, 11.0), laser_out=True)]
    res = fd.analyse(fd.Replay("synthetic.slp", (3, 7, 0), frames))
    assert not res.hits and len(res.unattributed) == 1 and "off screen" in res.unattributed[0].reason
