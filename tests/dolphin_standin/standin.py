"""A Slippi Dolphin stand-in: what libmelee's ``Console`` launches, talks to and stops, minus the emulator.

It is started exactly as Dolphin is (``EXE -e ISO -u USERDIR [--platform headless]``, or
``EXE --version``) and reads what libmelee wrote into ``USERDIR``: ``Config/Dolphin.ini`` (the
spectator port, blocking pipes, the video backend, which ports have a standard controller) and
``Config/GCPadNew.ini`` (each port's ``Pipe/0/slippibotN``). It reads the controller FIFOs
(``Pipes/slippibotN``, libmelee's ``PRESS``/``RELEASE``/``SET``/``FLUSH`` lines) and serves Slippi's
spectator protocol over ENet (``connect_request`` -> ``connect_reply``, then ``menu_event`` and
``game_event`` messages, base64 payloads). With blocking pipes one frame is emulated per ``FLUSH``
from every plugged controller.

"Melee" here is a menu model and recorded games: the character select screen (a cursor per port
that follows its stick, A on a portrait places the coin, A on the HMN/CPU toggle, the CPU level
slider), the stage select screen, the game itself (the frames of a real replay from
``../shared/replays``, patched to show the chosen characters, CPU level and stage; START pauses,
L+R+A+START while paused quits) and the postgame screen (scene 0x0402; START leaves it for the
character select screen, the choices kept).

Settings and faults come from ``EXE.json`` beside the executable::

    {"build": "mainline" (the no-GUI build) | "mainline-qt" | "ishiiruka" | "exiai",
     "replays": ["/abs/a.slp", ...], "frames_limit": 300, "state_dir": "/tmp/x",
     "faults": [{"launch": 1, "kind": "exit" | "hang" | "menu_stall" | "port_taken"
                 | "wrong_cpu_level" | "wrong_character", "game": 1, "frame": 100}]}

``launch`` counts the starts of this executable (a counter in ``state_dir``), ``game`` the games
of that start; ``{"kind": "version_fail", "call": N}`` makes the N-th ``--version`` fail. Each start writes ``state_dir/launch-N.json`` (its command line and what it read)
and appends what happens to ``state_dir/events.log``.
"""

from __future__ import annotations

import base64
import configparser
import fcntl
import json
import os
import select
import socket
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.dolphin_standin.slp_frames import (  # noqa: E402
    GAME_END, Game, Seat, patched, read_game)

VERSIONS = {  # what each build prints for --version, and where (libmelee's get_dolphin_version)
    "ishiiruka": (255, "Faster Melee - Slippi (3.4.0)", ""),
    "exiai": (1, "", "Faster Melee - Slippi (3.4.0) - ExiAI"),
    "mainline": (0, "Slippi Dolphin mainline 4.0.0", ""),  # the no-GUI build (DolphinNoGUI)
    "mainline-qt": (0, "Slippi Dolphin mainline 4.0.0", ""),  # the Qt build Slippi ships as an AppImage
}
# The options each build's parser knows (project-slippi/dolphin: UICommon/CommandLineParse.cpp for all,
# DolphinNoGUI/MainNoGUI.cpp adds -p/--platform; DolphinQt/Main.cpp the GUI ones).
HELP_COMMON = ("-u, --user", "-m, --movie", "-e, --exec", "-n, --nand_title", "-C, --config", "-v, --video_backend",
               "-a, --audio_emulation", "-i, --slippi_input")
HELP = {"mainline": HELP_COMMON + ("-p, --platform",),
        "mainline-qt": HELP_COMMON + ("-d, --debugger", "-l, --logger", "-b, --batch", "-c, --confirm")}
SCENE_CSS, SCENE_SSS, SCENE_GAME, SCENE_POSTGAME = 0x0002, 0x0102, 0x0202, 0x0402
HUMAN, CPU, UNPLUGGED = 0, 1, 3
NO_CHARACTER = 0x21
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
BUTTONS = ("A", "B", "X", "Y", "Z", "L", "R", "START", "D_UP", "D_DOWN", "D_LEFT", "D_RIGHT")


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


class Pad:
    """One controller port's FIFO: libmelee's text commands, applied at each FLUSH."""

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None
        self.buf = b""
        self.pending: list[bytes] = []  # complete frames (command lines up to a FLUSH)
        self.buttons = {b: False for b in BUTTONS}
        self.prev = dict(self.buttons)
        self.main = (0.5, 0.5)
        self.writer = False

    def open(self) -> None:
        if self.fd is None and self.path.exists():
            self.fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)

    def read(self) -> None:
        self.open()
        if self.fd is None:
            return
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        self.writer = bool(data)  # b"": no writer has the pipe open (yet, or any more)
        self.buf += data
        while b"FLUSH\n" in self.buf:
            frame, self.buf = self.buf.split(b"FLUSH\n", 1)
            self.pending.append(frame)

    def apply_next(self) -> None:
        self.prev = dict(self.buttons)
        frame = self.pending.pop(0) if self.pending else b""
        for line in frame.decode().splitlines():
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "PRESS" and parts[1] in self.buttons:
                self.buttons[parts[1]] = True
            elif parts[0] == "RELEASE" and parts[1] in self.buttons:
                self.buttons[parts[1]] = False
            elif parts[0] == "SET" and parts[1] == "MAIN":
                self.main = (float(parts[2]), float(parts[3]))

    def pressed(self, button: str) -> bool:
        return self.buttons[button] and not self.prev[button]


class Melee:
    """The menus and games, one frame per call of :meth:`frame`; returns the messages to send."""

    def __init__(self, cfg: dict, ports: list[int], log: Log, faults: list[dict]):
        self.cfg, self.ports, self.log, self.faults = cfg, ports, log, faults
        self.replays = [read_game(p) for p in cfg["replays"]]
        self.limit = int(cfg.get("frames_limit", 0)) or None
        self.scene, self.scene_frame = SCENE_CSS, 0
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
        self.hung = False
        for p, seat in cfg.get("css_start", {}).items():  # how the screen looks at boot
            p = int(p)
            self.status[p] = CPU if seat.get("cpu_level") else HUMAN
            self.level[p] = seat.get("cpu_level", 0)
            if seat.get("character"):
                self.character[p], self.coin[p] = CSS_IDS[seat["character"]], True

    def fault(self, kind: str) -> dict | None:
        for f in self.faults:
            if f["kind"] == kind and f.get("game", 1) == self.games + (self.scene != SCENE_GAME):
                return f
        return None

    # --- menus ---
    def _ready(self) -> bool:
        seated = [p for p in range(1, 5) if self.status[p] != UNPLUGGED and self.coin[p]]
        waiting = [p for p in range(1, 5) if self.status[p] != UNPLUGGED and not self.coin[p]
                   and self.status[p] == CPU]
        return len(seated) >= 2 and not waiting

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
        self.log(f"game {self.games} starts: stage {stage}, "
                 + ", ".join(f"port {s.port} {s.character} cpu {s.cpu_level}" for s in seats))

    def _menu_event(self) -> bytes:
        ev = bytearray(0x49)
        ev[0] = 0x3E
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
        struct.pack_into(">i", ev, 0x39, self.scene_frame)
        return bytes(ev)

    # --- one frame ---
    def frame(self, pads: dict[int, Pad]) -> list[dict]:
        if self.scene == SCENE_GAME:
            return self._game_frame(pads)
        if self.scene == SCENE_CSS:
            self._css(pads)
        elif self.scene == SCENE_SSS:
            self._sss(pads)
        elif self.scene == SCENE_POSTGAME:
            if self.scene_frame >= 10 and any(pad.pressed("START") for pad in pads.values()):
                self.log(f"postgame left after {self.scene_frame} frames")
                self._enter(SCENE_CSS)
        if self.scene == SCENE_GAME:  # the stage was just chosen
            return self._game_frame(pads)
        return [self._menu_msg()]

    def _menu_msg(self) -> dict:
        msg = {"type": "menu_event", "payload": base64.b64encode(self._menu_event()).decode()}
        self.scene_frame += 1
        return msg

    def _game_frame(self, pads: dict[int, Pad]) -> list[dict]:
        game = self.game
        assert game is not None
        if self.game_at < 0:  # the frame the stage was chosen: the game start alone
            self.game_at = 0
            return [self._game_msg(game.start)]
        if (f := self.fault("exit")) is not None and self.game_at >= f.get("frame", 0):
            self.log(f"fault: exit in game {self.games} at frame {self.game_at}")
            os._exit(3)
        if (f := self.fault("hang")) is not None and self.game_at >= f.get("frame", 0):
            if not self.hung:
                self.log(f"fault: hang in game {self.games} at frame {self.game_at}")
            self.hung = True
            return []
        for p, pad in pads.items():
            if self.status[p] == HUMAN and pad.pressed("START") and self.paused_by is None:
                self.paused_by = p
                self.log(f"paused by port {p}")
        if self.paused_by is not None:
            b = pads[self.paused_by].buttons
            if b["L"] and b["R"] and b["A"] and b["START"]:
                self.log(f"game {self.games} quit (L+R+A+START) at frame {self.game_at}")
                self.paused_by = None
                self._enter(SCENE_CSS)
                # The game ends and the character select screen shows in the same frame.
                return [self._game_msg(self._game_end(7)), self._menu_msg()]
            # Paused: the frame does not advance (a client skips a repeated frame).
            return [self._game_msg(game.frames[max(0, self.game_at - 1)])]
        batch = game.frames[self.game_at]
        self.game_at += 1
        last = len(game.frames) if self.limit is None else min(len(game.frames), self.limit)
        if self.game_at >= last:  # the last frame and the game end go out in the same frame
            self.log(f"game {self.games} over after {self.game_at} frames")
            self._enter(SCENE_POSTGAME)
            return [self._game_msg(batch), self._game_msg(self._game_end(2))]
        return [self._game_msg(batch)]

    def _game_end(self, method: int) -> bytes:
        size = self.game.sizes.get(GAME_END, 1) if self.game else 1
        ev = bytearray(size + 1)
        ev[0], ev[1] = GAME_END, method
        return bytes(ev)

    def _game_msg(self, payload: bytes) -> dict:
        return {"type": "game_event", "payload": base64.b64encode(payload).decode()}


def x_display_alive(display: str) -> bool:
    """An X server accepts connections at ``display`` (":N"): its abstract or file socket answers."""
    if not display.startswith(":"):
        return False
    number = display[1:].split(".")[0]
    for address in (f"\0/tmp/.X11-unix/X{number}", f"/tmp/.X11-unix/X{number}"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            try:
                s.connect(address)
                return True
            except OSError:
                continue
    return False


def read_ini(path: Path) -> configparser.ConfigParser:
    c = configparser.ConfigParser()  # keys lower-cased, as libmelee writes them
    c.read(path)
    return c


def bump(state_dir: Path, counter: str) -> int:
    """Add one to a counter kept in ``state_dir`` (starts of the executable, --version calls)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    with open(state_dir / counter, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        n = int(f.read().strip() or 0) + 1
        f.seek(0)
        f.truncate()
        f.write(str(n))
    return n


def main(argv: list[str]) -> int:
    exe = Path(sys.argv[0]).resolve() if not os.environ.get("STANDIN_EXE") else Path(os.environ["STANDIN_EXE"])
    cfg = json.loads(Path(str(exe) + ".json").read_text())
    build = cfg.get("build", "mainline")
    if build == "mainline-qt" and not x_display_alive(os.environ.get("DISPLAY", "")):
        # DolphinQt/Main.cpp builds its QApplication before it parses a single option.
        print("qt.qpa.xcb: could not connect to display", file=sys.stderr)
        return 134
    state_dir = Path(cfg.get("state_dir") or exe.parent)
    if argv == ["--version"]:
        n = bump(state_dir, "versions")
        if any(f["kind"] == "version_fail" and f.get("call") == n for f in cfg.get("faults", [])):
            # An AppImage that fails to mount (FUSE busy, a half-copied file) answers nothing useful.
            print("fuse: failed to mount the AppImage", file=sys.stderr)
            return 127
        rc, out, err = VERSIONS[build]
        print(out, end="\n" if out else "")
        print(err, end="\n" if err else "", file=sys.stderr)
        return rc
    if argv == ["--help"] and build in HELP:
        print("Usage: dolphin-emu [options]... [FILE]...\n\nOptions:\n" + "\n".join(f"  {o}" for o in HELP[build]))
        return 0
    args = {"-e": None, "-u": None}
    if build in ("mainline", "exiai", "ishiiruka"):
        args["--platform"] = None  # parsed, then refused below for the Ishiiruka builds (libmelee's check)
    i = 0
    while i < len(argv):
        if argv[i] in args and i + 1 < len(argv):
            args[argv[i]] = argv[i + 1]
            i += 2
        else:
            # cpp-optparse (Externals/cpp-optparse) on an option its parser lacks: usage, error, exit 2.
            print(f"Usage: dolphin-emu [options]... [FILE]...\n\ndolphin-emu: error: no such option: {argv[i]}",
                  file=sys.stderr)
            return 2
    args.setdefault("--platform", None)
    launch = bump(state_dir, "launches")
    log = Log(state_dir, launch)
    if not args["-e"] or not Path(args["-e"]).is_file():
        log(f"exit: no ISO at {args['-e']}")
        print(f"standin: -e ISO missing or not a file: {args['-e']}", file=sys.stderr)
        return 1
    if not args["-u"]:
        print("standin: -u USERDIR missing", file=sys.stderr)
        return 1
    if args["--platform"] is not None and build != "mainline":
        print("standin: --platform is mainline-only", file=sys.stderr)
        return 2
    if args["--platform"] not in (None, "headless"):
        print(f"No platform found, or failed to initialize ({args['--platform']})", file=sys.stderr)
        return 1
    user = Path(args["-u"])
    dolphin = read_ini(user / "Config" / "Dolphin.ini")
    pads_ini = read_ini(user / "Config" / "GCPadNew.ini")
    section = "Slippi" if build.startswith("mainline") else "Core"
    key = "" if build.startswith("mainline") else "Slippi"
    port = int(dolphin.get(section, f"{key}SpectatorLocalPort", fallback="51441"))
    blocking = dolphin.get(section, "BlockingPipes", fallback="False") == "True"
    gfx = dolphin.get("Core", "GFXBackend", fallback="")
    if gfx == "Null" and build == "ishiiruka":
        log("exit: Null video backend on stock Ishiiruka")
        return 1
    needs_display = build == "mainline-qt" or (gfx != "Null" and args["--platform"] != "headless")
    if needs_display and not x_display_alive(os.environ.get("DISPLAY", "")):
        log(f"exit: no X display at DISPLAY={os.environ.get('DISPLAY', '')!r}")
        print("standin: Unable to open display", file=sys.stderr)
        return 1
    ports = [p for p in range(1, 5) if dolphin.get("Core", f"SIDevice{p - 1}", fallback="0") == "6"
             and pads_ini.get(f"GCPad{p}", "Device", fallback="") == f"Pipe/0/slippibot{p}"]
    faults = [f for f in cfg.get("faults", []) if f.get("launch", 1) == launch]
    verbosity = read_ini(user / "Config" / "Logger.ini").get("Options", "Verbosity", fallback=None)
    record = {"argv": argv, "build": build, "port": port, "blocking": blocking, "gfx": gfx, "ports": ports,
              "display": os.environ.get("DISPLAY"), "log_verbosity": verbosity,
              "faults": faults, "pid": os.getpid()}
    (state_dir / f"launch-{launch}.json").write_text(json.dumps(record))
    log(f"start {json.dumps(record)}")

    import enet  # noqa: PLC0415 (pyenet, as libmelee's client uses)

    host = None
    if not any(f["kind"] == "port_taken" for f in faults):
        try:
            host = enet.Host(enet.Address(None, port), 4, 0, 0, 0)
        except (OSError, MemoryError) as e:
            log(f"spectator server could not open port {port}: {e}")
    if host is None:
        log(f"spectator server down (port {port} taken); emulation goes on")
    melee = Melee(cfg, ports, log, faults)
    pads = {p: Pad(user / "Pipes" / f"slippibot{p}") for p in ports}
    peers: list = []
    next_frame = time.monotonic()
    frames = 0
    while True:
        if host is not None:
            event = host.service(0)
            while event.type != enet.EVENT_TYPE_NONE:
                if event.type == enet.EVENT_TYPE_RECEIVE:
                    msg = json.loads(bytes(event.packet.data))
                    if msg.get("type") == "connect_request":
                        reply = {"type": "connect_reply", "nick": "stand-in", "version": "3.4.0", "cursor": 0}
                        event.peer.send(0, enet.Packet(json.dumps(reply).encode(), enet.PACKET_FLAG_RELIABLE))
                        peers.append(event.peer)
                        log("spectator connected")
                elif event.type == enet.EVENT_TYPE_DISCONNECT and event.peer in peers:
                    peers.remove(event.peer)
                event = host.service(0)
        fds = [pad.fd for pad in pads.values() if pad.fd is not None and pad.writer]
        if fds:
            select.select(fds, [], [], 0.002)
        else:
            time.sleep(0.002)
        for pad in pads.values():
            pad.read()
        if not peers and frames == 0:
            continue  # still "booting": real Dolphin takes seconds to reach the menus; no frame is lost
        if blocking:
            if not pads or not all(pad.pending for pad in pads.values()):
                continue
        elif time.monotonic() < next_frame:
            continue
        next_frame = time.monotonic() + 1 / 60
        for pad in pads.values():
            pad.apply_next()
        frames += 1
        if frames == 1 or frames % 600 == 0:
            log(f"frame {frames}: scene 0x{melee.scene:04x}, {len(peers)} spectator(s)")
        for msg in melee.frame(pads):
            data = json.dumps(msg).encode()
            for peer in peers:
                peer.send(0, enet.Packet(data, enet.PACKET_FLAG_RELIABLE))
        if host is not None:
            host.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
