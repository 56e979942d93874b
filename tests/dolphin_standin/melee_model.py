"""Melee for the stand-in, one frame at a time: the menus, the games and what each frame writes to Slippi.

Scenes (minor, major; slippi-ssbm-asm ``Common/Common.s``): the title screen 0x0000 (START opens the
main menu), the main menu 0x0001 (a cursor the stick moves one item per push; A on "VS Mode", then
on "Melee", opens the character select screen; B goes back), the character select screen 0x0002
(a cursor per port that follows its stick, A on a portrait places the coin, A on the HMN/CPU
toggle, the CPU level slider), the stage select screen 0x0102, the game 0x0202, sudden death
0x0302 and the results screen 0x0402. Every menu frame is written as libmelee's menu-extraction
code sends it (``SendMenuFrame.asm``: every scene but 0x0202 and 0x0208, sudden death included).

A game is the frames of a real replay (patched to show the chosen characters, CPU level and
stage), written as Slippi records them, and it ends as Melee's do:

- on the frame a player loses their last stock (GAME!, end method 2): each real replay that ends
  in a KO ends on that frame, so nothing is recorded after it;
- when the clock runs out (``frames_limit``, or the replay's end; TIME!, method 1): with stocks
  tied, sudden death follows (every player on one stock at 300%; it ends with a KO after
  ``sudden_death_frames``);
- either way a freeze of ``freeze_frames`` follows (GAME!/TIME! on screen) in which nothing is
  written, then the results screen, which START leaves once ``results_frames`` have passed;
- START (a new press by a human port) pauses the game once it is past GO (the first 123 frames
  are the countdown); a paused game writes nothing, and the pausing port quits it with
  L+R+A+START held (``lras = "held"``) or, with ``lras = "press"``, with START newly pressed while
  L+R+A are held (no contest, method 7: straight back to the character select screen); START
  alone unpauses. Fault ``pause_off`` is a game whose rules turn pause off.

:meth:`Melee.frame` returns the frame's writes (``("start_game",)``, ``("end_game",)``,
``("write", bytes)``) for :class:`~tests.dolphin_standin.spectate.SpectateServer`; which of them
make Dolphin wait for input (a bookend, a menu frame, a game start) is the caller's business.
"""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path

from tests.dolphin_standin.pads import Pad
from tests.dolphin_standin.slp_frames import (
    GAME_END, Game, Seat, frame_stocks, patched, read_game, split_events, sudden_death_frame)

SCENE_TITLE, SCENE_MAIN, SCENE_CSS, SCENE_SSS = 0x0000, 0x0001, 0x0002, 0x0102
SCENE_GAME, SCENE_SD, SCENE_RESULTS = 0x0202, 0x0302, 0x0402
MENU_EVENT = 0x3E
HUMAN, CPU, UNPLUGGED = 0, 1, 3
NO_CHARACTER = 0x21
GO_INDEX = 123  # a game's frames start at -123; GO is frame 0
END_TIME, END_GAME, END_NO_CONTEST = 1, 2, 7
# Main menu (libmelee SubMenu): the top level's items, VS mode's items.
MAIN_SUBMENU, VS_SUBMENU = 0, 2
MAIN_ITEMS, VS_ITEMS = 5, 3  # 1P, VS, trophies, options, data; Melee, tournament, special
VS_MODE_ITEM, MELEE_ITEM = 1, 0
# The character select screen's portrait order (the ids its menu event carries).
CSS_IDS = {"DOC": 0, "MARIO": 1, "LUIGI": 2, "BOWSER": 3, "PEACH": 4, "YOSHI": 5, "DK": 6, "CPTFALCON": 7,
           "GANONDORF": 8, "FALCO": 9, "FOX": 10, "NESS": 11, "POPO": 12, "KIRBY": 13, "SAMUS": 14, "ZELDA": 15,
           "LINK": 16, "YLINK": 17, "PICHU": 18, "PIKACHU": 19, "JIGGLYPUFF": 20, "MEWTWO": 21,
           "GAMEANDWATCH": 22, "MARTH": 23, "ROY": 24}
CSS_NAMES = {v: k for k, v in CSS_IDS.items()}
# Stage select: (x, y) of each stage's icon, and Melee's internal stage id (the menu event's byte).
STAGES = {"BATTLEFIELD": ((1.0, -9.0), 0x18), "FINAL_DESTINATION": ((6.7, -9.0), 0x19),
          "DREAMLAND": ((12.5, -9.0), 0x1A), "POKEMON_STADIUM": ((15.0, 3.5), 0x12),
          "YOSHIS_STORY": ((3.5, 15.5), 0x06), "FOUNTAIN_OF_DREAMS": ((10.0, 15.5), 0x08)}
CURSOR_SPEED = 1.2  # CSS units per frame at full tilt
# Lengths no source read here gives (guesses; EXE.json can set each):
FREEZE_FRAMES = 60  # GAME!/TIME! on screen before the results
RESULTS_FRAMES = 30  # the results screen ignores START this long
SUDDEN_DEATH_FRAMES = 120  # until a KO ends sudden death


class Log:
    def __init__(self, state_dir: Path, launch: int):
        self.path, self.launch = state_dir / "events.log", launch

    def __call__(self, what: str) -> None:
        with open(self.path, "a") as f:
            f.write(f"{time.time():.3f} launch={self.launch} pid={os.getpid()} {what}\n")


def css_character_at(x: float, y: float) -> int | None:
    """The portrait under a CSS cursor (rows of 7 x 7 units from y = 1, columns from x = -32.5)."""
    if not 1.0 <= y < 22.0 or x < -32.5:
        return None
    shown_row, column = int((y - 1.0) // 7.0), int((x + 32.5) // 7.0)
    row = 2 - shown_row
    if row == 2:
        column -= 1  # the random slot
    if not 0 <= column < 9:
        return None
    cid = row * 9 + column
    return cid if cid in CSS_NAMES else None


class Melee:
    """The menus and games; :meth:`frame` plays one frame and returns what it writes to Slippi."""

    def __init__(self, cfg: dict, ports: list[int], log: Log, faults: list[dict], replay_dir: Path | None = None):
        self.cfg, self.ports, self.log, self.faults = cfg, ports, log, faults
        self.replays = [read_game(p) for p in cfg["replays"]]
        self.limit = int(cfg.get("frames_limit", 0)) or None
        self.freeze_frames = int(cfg.get("freeze_frames", FREEZE_FRAMES))
        self.results_frames = int(cfg.get("results_frames", RESULTS_FRAMES))
        self.sd_frames = int(cfg.get("sudden_death_frames", SUDDEN_DEATH_FRAMES))
        self.sd_menu_first = cfg.get("sudden_death_batches", "menu_first") == "menu_first"
        self.lras = cfg.get("lras", "held")
        # The menu frame's frame word (SendMenuFrame.asm): "scene" counts from each scene's start, so
        # stage select shows a frame 0 (libmelee's MenuHelper forgets its stage choice only there);
        # "boot" counts from boot, as libmelee's GameState.frame docstring ("monotonically increases")
        # reads: a Dolphin whose stage select never shows frame 0.
        self.menu_frame = cfg.get("menu_frame", "scene")
        self.replay_dir = replay_dir
        self.scene, self.scene_frame = (SCENE_TITLE, 0) if cfg.get("boot", "title") == "title" else (SCENE_CSS, 0)
        self.submenu, self.selection = MAIN_SUBMENU, 0
        start_x = {1: -31.5, 2: -16.5, 3: -1.0, 4: 14.0}
        self.cursor = {p: [start_x[p], -10.0] for p in range(1, 5)}
        self.status = {p: HUMAN if p in ports else UNPLUGGED for p in range(1, 5)}
        self.character = {p: NO_CHARACTER for p in range(1, 5)}
        self.coin = {p: False for p in range(1, 5)}
        self.level = {p: 0 for p in range(1, 5)}
        self.holding = {p: False for p in range(1, 5)}
        self.slider_wait = {p: 0 for p in range(1, 5)}
        self.sss = [0.0, 0.0]
        self.games = 0
        self.game: Game | None = None
        self.game_at = 0
        self.paused_by: int | None = None
        self.freeze_left = 0
        self.after_freeze = SCENE_RESULTS
        self.recording = bytearray()  # the game's events, for its .slp when replays are saved
        self.hung = False
        self.frames = 0  # emulated since boot: the log's "(frame N)" (at 60 a second in real Dolphin)
        for p, seat in cfg.get("css_start", {}).items():  # how the screen looks at boot
            p = int(p)
            self.status[p] = CPU if seat.get("cpu_level") else HUMAN
            self.level[p] = seat.get("cpu_level", 0)
            if seat.get("character"):
                self.character[p], self.coin[p] = CSS_IDS[seat["character"]], True

    def fault(self, kind: str) -> dict | None:
        game = self.games + (self.scene not in (SCENE_GAME, SCENE_SD))
        for f in self.faults:
            if f["kind"] == kind and f.get("game", game) == game:
                return f
        return None

    # --- menus ---
    def _ready(self) -> bool:
        seated = [p for p in range(1, 5) if self.status[p] != UNPLUGGED and self.coin[p]]
        waiting = [p for p in range(1, 5) if self.status[p] != UNPLUGGED and not self.coin[p]
                   and self.status[p] == CPU]
        return len(seated) >= 2 and not waiting

    def _title(self, pads: dict[int, Pad]) -> None:
        if any(pad.pressed("START") for pad in pads.values()):
            self.log("title screen left")
            self._enter(SCENE_MAIN)
            self.submenu, self.selection = MAIN_SUBMENU, 0

    def _main_menu(self, pads: dict[int, Pad]) -> None:
        items = MAIN_ITEMS if self.submenu == MAIN_SUBMENU else VS_ITEMS
        for pad in pads.values():  # Melee's menus answer every controller
            if pad.tilted("down"):
                self.selection = (self.selection + 1) % items
            elif pad.tilted("up"):
                self.selection = (self.selection - 1) % items
            elif pad.pressed("A"):
                if self.submenu == MAIN_SUBMENU and self.selection == VS_MODE_ITEM:
                    self.submenu, self.selection = VS_SUBMENU, 0
                elif self.submenu == VS_SUBMENU and self.selection == MELEE_ITEM:
                    self.log("main menu: VS mode, Melee")
                    self._enter(SCENE_CSS)
                    return
                else:  # any other item opens a screen this model does not have: B comes back
                    self.submenu, self.selection = 0xFF, 0
            elif pad.pressed("B") and self.submenu != MAIN_SUBMENU:
                self.submenu, self.selection = MAIN_SUBMENU, VS_MODE_ITEM

    def _css(self, pads: dict[int, Pad]) -> None:
        if self.fault("menu_stall"):
            return
        for p, pad in pads.items():
            x, y = pad.main
            if self.holding[p]:
                self.slider_wait[p] -= 1
                if self.slider_wait[p] <= 0 and abs(x - 0.5) > 0.05:
                    self.level[p] = min(9, max(1, self.level[p] + (1 if x > 0.5 else -1)))
                    self.slider_wait[p] = 4
                if pad.pressed("A"):
                    self.holding[p] = False
                continue
            c = self.cursor[p]
            c[0] += (x - 0.5) * 2 * CURSOR_SPEED
            c[1] += (y - 0.5) * 2 * CURSOR_SPEED
            c[0], c[1] = min(35.0, max(-35.0, c[0])), min(25.0, max(-25.0, c[1]))
            if pad.pressed("A"):
                self._css_click(p, c)
            elif pad.pressed("B"):
                self.coin[p], self.character[p] = False, NO_CHARACTER
            elif pad.pressed("START") and self._ready():
                self._enter(SCENE_SSS)
                self.sss = [0.0, 0.0]
                return

    def _css_click(self, p: int, c: list[float]) -> None:
        for q in range(1, 5):
            if self.status[q] == UNPLUGGED:
                continue
            if abs(c[1] + 2.2) <= 1.5 and abs(c[0] - (-32.2 + 15.82 * (q - 1))) <= 2.5:
                self.status[q] = HUMAN if self.status[q] == CPU else CPU
                self.level[q] = 1 if self.status[q] == CPU else 0
                self.log(f"css port {q} -> {'CPU' if self.status[q] == CPU else 'HMN'}")
                return
            if self.status[q] == CPU and abs(c[1] + 15.12) <= 1.5 and abs(c[0] - (-30.9 + 15.4 * (q - 1))) <= 3.0:
                self.holding[q] = True
                self.slider_wait[q] = 0
                return
        cid = css_character_at(*c)
        if cid is not None:
            self.character[p], self.coin[p] = cid, True

    def _sss(self, pads: dict[int, Pad]) -> None:
        for pad in pads.values():
            x, y = pad.main
            self.sss[0] += (x - 0.5) * 2 * CURSOR_SPEED
            self.sss[1] += (y - 0.5) * 2 * CURSOR_SPEED
        for pad in pads.values():
            if pad.pressed("A"):
                for name, ((sx, sy), _) in STAGES.items():
                    if abs(self.sss[0] - sx) <= 2.0 and abs(self.sss[1] - sy) <= 2.0:
                        self._start_game(name)
                        return

    def _enter(self, scene: int) -> None:
        self.scene, self.scene_frame = scene, 0

    def _start_game(self, stage: str) -> None:
        seats = []
        for p in range(1, 5):
            if self.status[p] != UNPLUGGED and self.coin[p]:
                seats.append(Seat(p, CSS_NAMES[self.character[p]], self.level[p] if self.status[p] == CPU else 0))
        self.games += 1
        self._enter(SCENE_GAME)
        if self.fault("wrong_cpu_level") is not None:
            seats = [Seat(s.port, s.character, s.cpu_level % 9 + 1 if s.cpu_level else 0) for s in seats]
        if self.fault("wrong_character") is not None:
            seats = [Seat(s.port, "FALCO" if s.cpu_level else s.character, s.cpu_level) for s in seats]
        recorded = self.replays[(self.games - 1) % len(self.replays)]
        self.game = patched(recorded, seats, stage)
        self.game_at = -1
        self.paused_by = None
        self.log(f"game {self.games} starts: stage {stage}, "
                 + ", ".join(f"port {s.port} {s.character} cpu {s.cpu_level}" for s in seats)
                 + f" (frame {self.frames})")

    def _menu_event(self) -> bytes:
        ev = bytearray(0x49)
        ev[0] = MENU_EVENT
        struct.pack_into(">H", ev, 0x1, self.scene)
        for p in range(1, 5):
            struct.pack_into(">ff", ev, 0x3 + 8 * (p - 1), *self.cursor[p])
            ev[0x25 + p - 1] = self.status[p]
            ev[0x29 + p - 1] = self.character[p]
            ev[0x2D + p - 1] = 2 if self.coin[p] else 0
            ev[0x41 + p - 1] = self.level[p]
            ev[0x45 + p - 1] = int(self.holding[p])
        ev[0x23] = 0 if self._ready() else 1
        if self.scene == SCENE_SSS:
            under = [sid for (sx, sy), sid in STAGES.values()
                     if abs(self.sss[0] - sx) <= 2.0 and abs(self.sss[1] - sy) <= 2.0]
            ev[0x24] = under[0] if under else 0
            struct.pack_into(">ff", ev, 0x31, *self.sss)
        struct.pack_into(">i", ev, 0x39, self.scene_frame if self.menu_frame == "scene" else self.frames)
        if self.scene == SCENE_MAIN:
            ev[0x3D], ev[0x3E] = self.submenu, self.selection
        return bytes(ev)

    # --- one frame ---
    def frame(self, pads: dict[int, Pad]) -> list[tuple]:
        self.frames += 1
        if self.scene in (SCENE_GAME, SCENE_SD):
            return self._game_frame(pads)
        if self.scene == SCENE_TITLE:
            self._title(pads)
        elif self.scene == SCENE_MAIN:
            self._main_menu(pads)
        elif self.scene == SCENE_CSS:
            self._css(pads)
        elif self.scene == SCENE_SSS:
            self._sss(pads)
        elif self.scene == SCENE_RESULTS:
            if self.fault("exit_in_results") is not None:  # a crash after the game, before the next one
                self.log(f"fault: exit on the results screen after game {self.games}")
                os._exit(3)
            if self.scene_frame >= self.results_frames and any(pad.pressed("START") for pad in pads.values()):
                self.log(f"postgame left after {self.scene_frame} frames")
                self._enter(SCENE_CSS)
        if self.scene == SCENE_GAME:  # the stage was just chosen
            return self._game_frame(pads)
        return [self._menu_write()]

    def _menu_write(self) -> tuple:
        ev = self._menu_event()
        self.scene_frame += 1
        return ("write", ev)

    def _record(self, writes: list[tuple]) -> list[tuple]:
        for w in writes:
            if w[0] == "write" and w[1][0] != MENU_EVENT:
                self.recording += w[1]
        return writes

    def _game_frame(self, pads: dict[int, Pad]) -> list[tuple]:
        game = self.game
        assert game is not None
        if self.freeze_left > 0:  # GAME!/TIME!: the scene is still the game's; nothing is written
            self.freeze_left -= 1
            if self.freeze_left == 0:
                if self.after_freeze == SCENE_SD:
                    return self._start_sudden_death()
                self._enter(SCENE_RESULTS)
            return []
        sd = self.scene == SCENE_SD
        if self.game_at < 0:  # the frame the stage was chosen: the game start alone
            self.game_at = 0
            self.recording = bytearray()
            return self._record([("start_game",), ("write", game.start)])
        if (f := self.fault("exit")) is not None and self.game_at >= f.get("frame", 0):
            self.log(f"fault: exit in game {self.games} at frame {self.game_at}")
            os._exit(3)
        if (f := self.fault("hang")) is not None and self.game_at >= f.get("frame", 0):
            if not self.hung:
                self.log(f"fault: hang in game {self.games} at frame {self.game_at}")
            self.hung = True
            return []
        if self.paused_by is not None:
            return self._paused(pads[self.paused_by])
        if sd or self.game_at >= GO_INDEX:
            for p, pad in pads.items():
                if self.status[p] == HUMAN and pad.pressed("START"):
                    if self.fault("pause_off") is not None:
                        continue
                    self.paused_by = p
                    self.log(f"paused by port {p} in {'sudden death' if sd else f'game {self.games}'}")
                    return []  # the frame does not advance: nothing is recorded
        batch = game.frames[self.game_at % len(game.frames)]
        if sd:
            batch = sudden_death_frame(batch, game.sizes)
        self.game_at += 1
        writes: list[tuple] = [("write", batch)]
        if sd and self.sd_menu_first:
            writes.insert(0, ("write", self._menu_event()))
        elif sd:
            writes.append(("write", self._menu_event()))
        stocks = frame_stocks(batch, game.sizes)
        if sd and self.game_at >= self.sd_frames:
            self.log(f"sudden death over after {self.game_at} frames")
            return self._end(writes, END_GAME, SCENE_RESULTS)
        if not sd and stocks and min(stocks.values()) == 0:
            self.log(f"game {self.games} over (GAME!) after {self.game_at} frames (frame {self.frames})")
            return self._end(writes, END_GAME, SCENE_RESULTS)
        last = len(game.frames) if self.limit is None else min(len(game.frames), self.limit)
        if not sd and self.game_at >= last:
            tied = len(set(stocks.values())) == 1
            self.log(f"game {self.games} over (TIME!) after {self.game_at} frames"
                     + (", stocks tied: sudden death" if tied else "") + f" (frame {self.frames})")
            return self._end(writes, END_TIME, SCENE_SD if tied else SCENE_RESULTS)
        return self._record(writes)

    def _paused(self, pad: Pad) -> list[tuple]:
        lras = pad.held("L", "R", "A", "START") if self.lras == "held" else pad.held("L", "R", "A") and \
            pad.pressed("START")
        if lras:
            self.log(f"game {self.games} quit (L+R+A+START) at frame {self.game_at} (frame {self.frames})")
            self.paused_by = None
            writes = self._record([("write", self._game_end(END_NO_CONTEST)), ("end_game",)])
            self._save_replay()
            self._enter(SCENE_CSS)
            return writes
        if pad.pressed("START") and not pad.held("L", "R", "A"):
            self.paused_by = None
            self.log("unpaused")
        return []

    def _end(self, writes: list[tuple], method: int, then: int) -> list[tuple]:
        writes = self._record(writes + [("write", self._game_end(method))]) + [("end_game",)]
        self._save_replay()
        self.freeze_left, self.after_freeze = max(1, self.freeze_frames), then
        return writes

    def _start_sudden_death(self) -> list[tuple]:
        self._enter(SCENE_SD)
        self.game_at = 0
        self.recording = bytearray()
        self.log(f"sudden death starts after game {self.games}")
        assert self.game is not None
        return self._record([("start_game",), ("write", self.game.start)])

    def events(self, data: bytes) -> list[bytes]:
        """``data`` cut into its events (a menu frame is one; game data by the game's payload sizes)."""
        if data[0] == MENU_EVENT or self.game is None:
            return [data]
        return list(split_events(data, self.game.sizes))

    def _game_end(self, method: int) -> bytes:
        size = self.game.sizes.get(GAME_END, 1) if self.game else 1
        ev = bytearray(size + 1)
        ev[0], ev[1] = GAME_END, method
        return bytes(ev)

    def _save_replay(self) -> None:
        """The game as Slippi saves it (``Game_YYYYMMDDTHHMMSS.slp``: UBJSON with ``raw`` and ``metadata``)."""
        if self.replay_dir is None or not self.recording:
            return
        import ubjson  # noqa: PLC0415 (libmelee's dependency, the format's own encoding)

        self.replay_dir.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%S")
        path = self.replay_dir / f"Game_{stamp}.slp"
        n = 1
        while path.exists():
            n += 1
            path = self.replay_dir / f"Game_{stamp}_{n}.slp"
        data = ubjson.dumpb({"raw": bytes(self.recording),
                             "metadata": {"startAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                          "playedOn": "dolphin", "lastFrame": self.game_at - GO_INDEX - 1}})
        tmp = path.with_suffix(".slp.tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
        self.log(f"replay saved: {path}")
