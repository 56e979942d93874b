"""The stand-in's pieces behave as the Slippi sources they model (see tests/dolphin_standin/).

Fast checks of each behaviour the stand-in copies from real Slippi Dolphin: the spectator server
keeps only the latest menu event and batches a game's events as SlippiSpectate.cpp does; the pipes
apply what was written as Pipes.cpp does; Melee boots to the title screen, refuses pause before
GO, streams nothing while paused or frozen on GAME!/TIME!, shows a results screen, and plays
sudden death after a time-out with stocks tied.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from tests.replays_kit import replay_path
from tests.dolphin_standin.melee_model import (
    END_GAME, END_NO_CONTEST, END_TIME, GO_INDEX, SCENE_CSS, SCENE_MAIN, SCENE_RESULTS, SCENE_SD, SCENE_TITLE, Log,
    Melee)
from tests.dolphin_standin.pads import Pad
from tests.dolphin_standin.spectate import SpectateServer, Spectator


def pad_with(tmp_path: Path, port: int = 1) -> Pad:
    return Pad(tmp_path / f"slippibot{port}")  # never opened: commands are fed to its buffer


def feed(pad: Pad, *lines: str) -> None:
    pad.buf += ("\n".join(lines) + "\nFLUSH\n").encode()


def test_the_server_sends_only_the_latest_menu_event_and_batches_game_events():
    server, spectator = SpectateServer(), Spectator()
    server.connect(spectator)
    for scene in (1, 2, 3):  # three menu frames before the spectator is served: it gets the last one
        server.write(bytes([0x3E, 0, scene]))
    server.pop_events()
    sent = [json.loads(m) for m in server.messages_for(spectator)]
    assert [base64.b64decode(m["payload"])[2] for m in sent] == [3]
    assert server.messages_for(spectator) == []  # nothing new: nothing sent
    # In a game, events are concatenated and sent at a bookend; a menu frame rides inside.
    server.start_game()
    server.write(bytes([0x35, 1]))
    server.write(bytes([0x36, 9]))
    server.write(bytes([0x3E, 0x02, 0x03]))
    server.write(bytes([0x3A, 0]))
    server.write(bytes([0x3C, 0]))
    server.pop_events()
    sent = [json.loads(m) for m in server.messages_for(spectator)]
    assert [m["type"] for m in sent] == ["start_game", "game_event", "game_event"]
    assert base64.b64decode(sent[2]["payload"]) == bytes([0x3E, 0x02, 0x03, 0x3A, 0, 0x3C, 0])
    server.write(bytes([0x39, 2]))
    server.end_game()
    server.pop_events()
    sent = server.messages_for(spectator)
    # After a game's end the menu cursor starts over, so the (cleared) menu event goes out first as an
    # empty packet (libmelee's stream worker skips it), then the game's last events.
    assert sent[0] == "" and [json.loads(m)["type"] for m in sent[1:]] == ["game_event", "end_game"]
    assert server.messages_for(spectator) == []


def test_pipes_apply_everything_written_and_keep_state(tmp_path):
    pad = pad_with(tmp_path)
    feed(pad, "PRESS START")
    feed(pad, "RELEASE START")  # two frames written before Dolphin reads: they collapse
    assert pad.update() and not pad.pressed("START") and not pad.buttons["START"]
    feed(pad, "PRESS A", "SET MAIN 0.5 0.0")
    assert pad.update() and pad.pressed("A") and pad.tilted("down")
    assert not pad.update() and pad.buttons["A"] and not pad.pressed("A")  # held, no new press


def melee(tmp_path: Path, replay: str, **cfg) -> Melee:
    (tmp_path / "state").mkdir(exist_ok=True)
    settings = {"replays": [str(replay_path(replay))], **cfg}
    return Melee(settings, [1, 2], Log(tmp_path / "state", 1), cfg.get("faults", []))


def to_game(m: Melee, pads: dict) -> list:
    """Seat both players as the menus would and choose the stage: the game's start writes."""
    m.scene = SCENE_CSS
    m.character.update({1: 10, 2: 23})  # FOX, MARTH
    m.coin.update({1: True, 2: True})
    m.status[2], m.level[2] = 1, 9
    m._start_game("FINAL_DESTINATION")
    return m.frame(pads)


def test_melee_boots_to_the_title_screen_and_the_main_menu_leads_to_vs_mode(tmp_path):
    m = melee(tmp_path, "slippijs_lCancel.slp")
    pads = {1: pad_with(tmp_path, 1), 2: pad_with(tmp_path, 2)}
    assert m.scene == SCENE_TITLE
    for lines in (["PRESS START"], ["RELEASE START"], ["SET MAIN 0.5 0.0"], ["SET MAIN 0.5 0.5"], ["PRESS A"],
                  ["RELEASE A"], ["PRESS A"]):
        feed(pads[1], *lines)
        pads[1].update(), pads[2].update()
        m.frame(pads)
    assert m.scene == SCENE_CSS
    assert any("main menu: VS mode, Melee" in line for line in (tmp_path / "state/events.log").read_text().splitlines())
    m = melee(tmp_path, "slippijs_lCancel.slp")
    feed(pads[1], "PRESS START")
    pads[1].update()
    m.frame(pads)
    assert m.scene == SCENE_MAIN and m.selection == 0  # 1P mode: one push down reaches VS mode


def test_pause_is_refused_before_go_streams_nothing_and_lras_quits(tmp_path):
    m = melee(tmp_path, "slippijs_lCancel.slp")
    pads = {1: pad_with(tmp_path, 1), 2: pad_with(tmp_path, 2)}
    to_game(m, pads)
    feed(pads[1], "PRESS START")
    pads[1].update()
    assert m.frame(pads) and m.paused_by is None  # the countdown: START does nothing
    while m.game_at < GO_INDEX:
        feed(pads[1], "RELEASE START")
        pads[1].update()
        m.frame(pads)
    feed(pads[1], "PRESS START")
    pads[1].update()
    assert m.frame(pads) == [] and m.paused_by == 1  # paused: the frame does not advance
    at = m.game_at
    feed(pads[1], "RELEASE START")
    pads[1].update()
    assert m.frame(pads) == [] and m.game_at == at  # nothing while paused
    feed(pads[1], "PRESS L", "PRESS R", "PRESS A", "PRESS START")
    pads[1].update()
    writes = m.frame(pads)
    assert writes[0][1][:2] == bytes([0x39, END_NO_CONTEST]) and writes[1] == ("end_game",)
    assert m.scene == SCENE_CSS


def test_a_game_ends_on_the_last_ko_then_freezes_then_shows_results(tmp_path):
    # peppi_v3.13: its player 0 (here the agent, port 1) loses the last stock on the last frame.
    m = melee(tmp_path, "peppi_v3.13.slp", freeze_frames=5, results_frames=4)
    pads = {1: pad_with(tmp_path, 1), 2: pad_with(tmp_path, 2)}
    to_game(m, pads)
    frames = len(m.game.frames)
    for _ in range(frames - 1):
        assert m.frame(pads)[0][0] == "write"
    last = m.frame(pads)
    assert last[-2][1][:2] == bytes([0x39, END_GAME]) and last[-1] == ("end_game",)  # GAME! on the KO frame
    assert [m.frame(pads) for _ in range(5)] == [[]] * 5  # the freeze: nothing written
    assert m.scene == SCENE_RESULTS
    feed(pads[1], "PRESS START")
    pads[1].update()
    m.frame(pads)
    assert m.scene == SCENE_RESULTS  # too early: the results screen ignores START for a while
    for i in range(6):
        feed(pads[1], "PRESS START" if i % 2 else "RELEASE START")
        pads[1].update()
        m.frame(pads)
        if m.scene != SCENE_RESULTS:
            break
    assert m.scene == SCENE_CSS


def test_time_out_with_stocks_tied_plays_sudden_death_at_300_percent(tmp_path):
    from tests.dolphin_standin.slp_frames import POST_FRAME, split_events
    import struct

    m = melee(tmp_path, "slippijs_lCancel.slp", frames_limit=200, freeze_frames=2, sudden_death_frames=10)
    pads = {1: pad_with(tmp_path, 1), 2: pad_with(tmp_path, 2)}
    to_game(m, pads)
    writes = [m.frame(pads) for _ in range(200)]
    assert writes[-1][-2][1][:2] == bytes([0x39, END_TIME])  # TIME!
    assert m.frame(pads) == [] and m.frame(pads)[0] == ("start_game",) and m.scene == SCENE_SD
    sd = m.frame(pads)
    menu, batch = sd[0][1], sd[1][1]
    assert menu[0] == 0x3E and menu[1:3] == bytes([0x03, 0x02])  # the menu frame rides first, scene 0x0302
    post = [e for e in split_events(batch, m.game.sizes) if e[0] == POST_FRAME]
    assert post and all(struct.unpack_from(">f", e, 0x16)[0] >= 300.0 for e in post)
    for _ in range(9):
        out = m.frame(pads)
    assert out[-1] == ("end_game",)
