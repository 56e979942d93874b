"""The stage on the pages and in `watch`: the painter draws each stage's platforms (watch's Pillow painter, and the
page's own painter in a real browser, from the geometry the real server sends), a saved game keeps its stage, and
`play` picks the stage from --stage or the model file."""

from __future__ import annotations

import httpx
import numpy as np
import pytest
from PIL import Image

from melee_agent.arena.stages import STAGES
from melee_agent.cli.play import _stage
from melee_agent.play.app import create_play_app, geometry
from melee_agent.play.replay_file import load_frames, save_frames
from melee_agent.play.session import PlayOptions, PlaySession, check_options
from melee_agent.report.watch import C, FighterView, FrameView, Capsule, Painter
from melee_agent.rl.model import DuelingDQN, save_model
from tests.play.browser_kit import browser_or_skip, serve


def _fighter(name: str, x: float) -> FighterView:
    return FighterView(name, Capsule(x, 0.0, 10.0, 4.0), 1.0, (), False, False, None, 0.0, 4, "STANDING", 0)


VIEW = FrameView(0, (_fighter("Fox", -100.0), _fighter("Marth", 100.0)), 9)  # both off the platforms' span


def platform_pixels(img: np.ndarray, painter: Painter, stage: str) -> list[tuple[int, ...]]:
    """The colour at the middle of each of ``stage``'s platforms' tops, in the main view."""
    v = painter.view
    return [tuple(img[round(v.py(p.height)), round(v.px((p.left + p.right) / 2))][:3]) for p in STAGES[stage].platforms]


@pytest.mark.parametrize("stage", [s for s in STAGES if STAGES[s].platforms])
def test_watch_draws_each_stages_platforms_and_final_destination_none(stage):
    img = np.asarray(Painter(3.0, "x", "fight", stage=stage).draw(VIEW))
    assert platform_pixels(img, Painter(3.0, "x", "fight", stage=stage), stage) == [C.stage_top] * len(
        STAGES[stage].platforms)
    empty = np.asarray(Painter(3.0, "x", "fight").draw(VIEW))  # Final Destination: sky where the platforms would be
    assert set(platform_pixels(empty, Painter(3.0, "x", "fight"), stage)) == {C.sky}


def test_the_inset_map_is_the_stages_blast_zones():
    p = Painter(3.0, "x", "fight", stage="dreamland")
    assert (p.blast_left, p.blast_right, p.blast_top, p.blast_bottom) == STAGES["dreamland"].blast
    assert Painter(3.0, "x", "fight", stage="dreamland").title == "arena · fight · Dream Land"
    assert Painter(3.0, "x", "fight").title == "arena · fight"  # as drawn before stages
    with pytest.raises(ValueError, match="unknown stage 'corneria'"):
        Painter(3.0, "x", "fight", stage="corneria")


def test_a_saved_game_keeps_its_stage_and_watch_draws_it(tmp_path):
    from melee_agent.cli.watch import watch_replay
    from melee_agent.play.view import frame_json

    path = tmp_path / "g.frames.json.gz"
    save_frames(path, [frame_json(VIEW)] * 3, ("you", "CPU"), stage="battlefield")
    assert load_frames(path).stage == "battlefield"
    out = watch_replay(path, tmp_path / "g.gif", fps=30, scale=3.0).out
    img = np.asarray(Image.open(out).convert("RGB"))
    assert platform_pixels(img, Painter(3.0, "x", "fight", stage="battlefield"), "battlefield") == [C.stage_top] * 3
    save_frames(path, [frame_json(VIEW)], ("you", "CPU"), stage="corneria")
    with pytest.raises(ValueError, match="stage 'corneria' is not one of final_destination"):
        load_frames(path)


def test_play_takes_the_stage_from_the_flag_else_the_model_else_final_destination(tmp_path):
    model = tmp_path / "bf.safetensors"
    save_model(model, DuelingDQN(num_actions=46), version=1, train_step=0, action_set="fight",
               stages=["yoshis_story", "battlefield"])
    assert _stage(None, None) == "final_destination"
    assert _stage(None, str(model)) == "yoshis_story"
    assert _stage("Dreamland", str(model)) == "dreamland"
    with pytest.raises(ValueError, match="--stage 'corneria' is not a stage"):
        _stage("corneria", None)
    with pytest.raises(ValueError, match="--stage 'corneria' is not a stage"):
        check_options(PlayOptions(stage="corneria"))


def test_the_page_gets_every_stages_geometry_from_the_server():
    g = geometry("battlefield")
    assert g["stage"] == "battlefield" and sorted(g["stages"]) == sorted(STAGES)
    for name, s in STAGES.items():
        left, right, top, bottom = s.blast
        assert g["stages"][name]["edge"] == s.edge_x and g["stages"][name]["blast"] == [left, right, bottom, top]
        assert g["stages"][name]["platforms"] == [[p.left, p.right, p.height] for p in s.platforms]
    assert geometry()["edge"] == STAGES["final_destination"].edge_x and geometry()["stage"] == "final_destination"


@pytest.mark.slow
def test_the_page_draws_the_platforms_of_the_geometry_the_server_sends():
    """The page's own painter (draw.js) in a real browser, served by the real app: each stage's platform tops in
    stage_top, where Final Destination has sky."""
    driver = browser_or_skip()
    app = create_play_app(PlaySession(PlayOptions(policy="noop", seconds=5.0), _noop()))
    try:
        with serve(app) as url:
            assert httpx.get(f"{url}/v1/state", timeout=60).json()["stage"] == "final_destination"
            driver.get(url + "/")
            for stage in ("battlefield", "yoshis_story", "dreamland", "fountain_of_dreams", "pokemon_stadium",
                          "final_destination"):
                got = driver.execute_script("""
                    const [stage] = arguments, G = window.SETTINGS.geometry, c = document.createElement("canvas");
                    const draw = makePainter(c, G, ["a", "b"], stage);
                    draw({frame: 0, cpu_level: 9, fighters: []}, "t");
                    const g = c.getContext("2d"), [L, R, B, T] = G.view, s = 3;
                    const at = (x, y) => Array.from(g.getImageData(Math.round((x - L) * s), Math.round((T - y) * s), 1, 1).data.slice(0, 3));
                    const plats = G.stages[stage].platforms.length ? G.stages[stage].platforms : G.stages.battlefield.platforms;
                    return plats.map(([l, r, h]) => at((l + r) / 2, h));""", stage)
                want = list(C.sky) if stage == "final_destination" else list(C.stage_top)
                assert got and all(px == want for px in got), (stage, got)
    finally:
        driver.quit()


def _noop():
    from melee_agent.rl.policies import make_policy

    return make_policy("noop", "fight")


def test_play_info_names_the_stage():
    s = PlaySession(PlayOptions(policy=None, seconds=0.05))
    assert s.info()["stage"] == "final_destination"


def test_watch_plays_and_draws_the_asked_stage(tmp_path):
    from melee_agent.cli.watch import WatchOptions, build_arena, watch

    o = WatchOptions(policy="fighter", cpu_level=5, game="fight", out=tmp_path / "bf.gif", seconds=0.2,
                     action_set="fight", reward="fight", stage="battlefield")
    assert build_arena(o).stage_names == ("battlefield",)
    r = watch(o)
    img = np.asarray(Image.open(r.out).convert("RGB"))
    assert platform_pixels(img, Painter(3.0, "x", "fight", stage="battlefield"), "battlefield") == [C.stage_top] * 3


def test_a_play_session_and_its_page_are_on_the_asked_stage():
    s = PlaySession(PlayOptions(policy=None, seconds=0.05, stage="dreamland"))
    assert s.arena.stage_names == ("dreamland",) and s.info()["stage"] == "dreamland"
    with serve(create_play_app(s)) as url:
        page = httpx.get(f"{url}/", timeout=60).text
        assert '"stage": "dreamland"' in page and httpx.get(f"{url}/v1/state", timeout=60).json()["stage"] == "dreamland"


def test_spectating_plays_the_models_first_stage(tmp_path):
    from melee_agent.play.spectate import Spectator

    save_model(tmp_path / "model.safetensors", DuelingDQN(num_actions=46), version=4, train_step=0, action_set="fight",
               stages=["pokemon_stadium", "battlefield"])
    sp = Spectator(tmp_path)
    frame = sp.tick()
    assert sp.arena.stage_names == ("pokemon_stadium",) and frame["stage"] == "pokemon_stadium"
    assert sp.info()["stage"] == "pokemon_stadium"


def test_watch_plays_a_models_first_stage_by_default_and_another_with_stage(tmp_path):
    from melee_agent.cli.main import main

    model = tmp_path / "ys.safetensors"  # a dodging model: on Yoshi's Story it plays against Melee's CPU
    save_model(model, DuelingDQN(num_actions=5), version=1, train_step=0, action_set="untouchable",
               stages=["yoshis_story"])
    for extra, stage in (([], "yoshis_story"), (["--stage", "pokemon_stadium"], "pokemon_stadium")):
        out = tmp_path / f"{stage}.gif"
        assert main(["watch", "--policy", str(model), "--seconds", "0.1", "--out", str(out), *extra]) == 0
        img = np.asarray(Image.open(out).convert("RGB"))
        assert platform_pixels(img, Painter(3.0, "x", "dodge", stage=stage), stage) == \
            [C.stage_top] * len(STAGES[stage].platforms)
