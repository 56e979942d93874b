import numpy as np
import pytest

from melee_agent.io.slp import ReplayError, encode_replay, read_gamestates
from tests.replays_kit import BROKEN_REPLAYS, replay_path


@pytest.mark.parametrize("name", BROKEN_REPLAYS)
def test_broken_replays_give_a_clear_error_naming_the_file(name):
    path = replay_path(name)
    with pytest.raises(ReplayError) as e:
        encode_replay(path)
    assert name in str(e.value)
    assert "Traceback" not in str(e.value)


def test_missing_file_is_a_replay_error(tmp_path):
    with pytest.raises(ReplayError, match="no such replay file"):
        read_gamestates(tmp_path / "nope.slp")


def test_an_empty_file_is_named_as_such(tmp_path):
    """A replay copied while still being written, or a download cut short, is 0 bytes."""
    (tmp_path / "empty.slp").write_bytes(b"")
    with pytest.raises(ReplayError, match=r"empty\.slp: an empty file \(0 bytes\)"):
        encode_replay(tmp_path / "empty.slp")


def test_encode_replay_returns_every_frame():
    enc = encode_replay(replay_path("peppi_v3.13.slp"))  # ports 1 and 3
    assert enc.shape == (148, 27) and np.isfinite(enc).all()
    with pytest.raises(ReplayError, match="port 2 is not in this game"):
        encode_replay(replay_path("peppi_v3.13.slp"), 1, 2)


def test_cli_style_error_for_a_broken_replay_is_one_line():
    with pytest.raises(ReplayError) as e:
        read_gamestates(replay_path("pyslippi_v0.1.slp"))
    assert "\n" not in str(e.value)


def test_a_rollback_keeps_the_frames_last_version_and_live_the_first():
    """libmelee_test_game_1.slp (netplay) sends 11 frames again after rollbacks, 4 of them changed: the
    played game is each frame's last version (the default); ``live=True`` is what a live console saw."""
    import melee

    path = replay_path("libmelee_test_game_1.slp")
    console = melee.Console(path=str(path), is_dolphin=False, allow_old_version=True, skip_rollback_frames=False)
    console.connect()
    first: dict[int, tuple] = {}
    last: dict[int, tuple] = {}
    while (gs := console.step()) is not None:
        key = tuple((p.action.value, float(p.position.x), float(p.percent)) for _, p in sorted(gs.players.items()))
        first.setdefault(int(gs.frame), key)
        last[int(gs.frame)] = key
    assert sum(first[f] != last[f] for f in last) == 4

    def seen(states):
        return {int(gs.frame): tuple((p.action.value, float(p.position.x), float(p.percent))
                                     for _, p in sorted(gs.players.items())) for gs in states}

    played, live = read_gamestates(path), read_gamestates(path, live=True)
    assert [int(gs.frame) for gs in played] == sorted(last) == [int(gs.frame) for gs in live]
    assert seen(played) == last and seen(live) == first


@pytest.mark.parametrize(("external_stage", "field"), [(2, "_fod_platforms"), (28, "_whispy"),
                                                        (3, "_stadium_transformation")])
def test_stage_events_of_a_3_17_replay_are_readable(external_stage, field):
    """Slippi 3.17.0 writes Fountain of Dreams', Dreamland's and Pokemon Stadium's stage events, but
    libmelee 0.47 sets up their state only from 3.18.0 and raises at the first event (slippi-js's
    FodPlatforms.slp and Whispy.slp, 3.17.0, were unreadable). A 3.17 game start on each stage:"""
    import melee
    from melee.gamestate import GameState

    from melee_agent.io.slp import console_class

    start = bytearray(0x400)  # a game start event: version at 0x1-0x3, the stage (external id) at 0x13
    start[1:4] = bytes((3, 17, 0))
    start[0x13:0x15] = external_stage.to_bytes(2, "big")
    plain = melee.Console(path="unused.slp", is_dolphin=False, allow_old_version=True)
    plain._Console__game_start(GameState(), bytes(start))
    assert getattr(plain, field) is None  # libmelee's own: the first stage event would raise
    ours = console_class()(path="unused.slp", is_dolphin=False, allow_old_version=True)
    ours._Console__game_start(GameState(), bytes(start))
    assert getattr(ours, field) is not None


def _with_unknown_event(src, where: str) -> bytes:
    """The replay ``src`` with an event libmelee does not know (0xFE, 4 bytes, declared in the payload
    table) put in ``where``: right after the table, or before the middle event (inside a frame)."""
    import ubjson

    full = ubjson.loadb(src.read_bytes())
    raw = bytearray(full["raw"])
    assert raw[0] == 0x35  # the payload table: its size, then (command, size) triples
    n = raw[1]
    sizes = {raw[i]: int.from_bytes(raw[i + 1:i + 3], "big") + 1 for i in range(2, 1 + n, 3)}
    at = 1 + n
    if where == "inside a frame":
        starts = []
        i = 1 + n
        while i < len(raw) and raw[i] in sizes:
            starts.append(i)
            i += sizes[raw[i]]
        at = starts[len(starts) // 2]
    raw[at:at] = bytes((0xFE, 1, 2, 3, 4))
    raw[1:2] = bytes((n + 3,))
    raw[1 + n:1 + n] = bytes((0xFE, 0x00, 0x04))  # declared in the table (the event moved on by 3 bytes)
    full["raw"] = bytes(raw)
    return ubjson.dumpb(full)


@pytest.mark.parametrize(("name", "where"), [("libmelee_test_game_1.slp", "after the table"),
                                             ("libmelee_test_game_1.slp", "inside a frame"),
                                             ("pyslippi_game.slp", "inside a frame")])  # 1.0.0: no frame bookends
def test_an_event_libmelee_does_not_know_is_passed_over(tmp_path, name, where):
    """A newer Slippi's event, declared in the replay's payload table (its first event), is passed over
    by its size there; libmelee 0.47 raises on it ("... is not a valid EventType"). A real game with
    such an event put in reads as the game itself."""
    import melee

    src = replay_path(name)
    odd = tmp_path / "unknown_event.slp"
    odd.write_bytes(_with_unknown_event(src, where))

    def seen(states):
        return [(int(gs.frame), tuple((p.action.value, float(p.percent), float(p.position.x))
                                      for _, p in sorted(gs.players.items()))) for gs in states]

    assert seen(read_gamestates(odd)) == seen(read_gamestates(src))
    plain = melee.Console(path=str(odd), is_dolphin=False, allow_old_version=True)
    plain.connect()
    with pytest.raises(ValueError, match="not a valid EventType"):
        while plain.step() is not None:
            pass
