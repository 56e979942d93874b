"""A Slippi Dolphin stand-in: what libmelee's ``Console`` launches, talks to and stops, minus the emulator.

It is started exactly as Dolphin is (``EXE -e ISO -u USERDIR [--platform headless]``, or
``EXE --version`` / ``--help``, each answered as the build it plays answers them) and reads what
libmelee wrote into ``USERDIR``: ``Config/Dolphin.ini`` (the spectator port, blocking pipes, the
video backend, replays, which ports have a standard controller), ``Config/Logger.ini`` and
``Config/GCPadNew.ini`` (each port's ``Pipe/0/slippibotN``). Builds that open a display check that
an X server answers at ``DISPLAY``.

The pieces, each after the source it models:

- :mod:`.pads`: the controller FIFOs as Ishiiruka's ``Pipes.cpp`` reads them;
- :mod:`.spectate`: Slippi's spectator server (``SlippiSpectate.cpp``) over ENet;
- :mod:`.melee_model`: the menus, the games (real replays from ``../shared/replays``, patched to
  the chosen setup), pause, GAME!/TIME!, sudden death and the results screen.

The frame loop here is Dolphin's: while the game waits for input (``g_needInputForFrame``, set by a
frame bookend, a menu frame or a game start) a frame runs as soon as any port has sent a FLUSH;
otherwise (a paused game, the GAME!/TIME! freeze, blocking pipes off) it runs at 60 frames a second
on whatever the pipes hold. Frames that wait for input run as fast as the worker sends them (real
Dolphin would also hold them to 60 a second), so tests take seconds, not minutes.

Settings and faults come from ``EXE.json`` beside the executable::

    {"build": "mainline" (the no-GUI build) | "mainline-qt" | "ishiiruka" | "exiai",
     "replays": ["/abs/a.slp", ...], "frames_limit": 300, "state_dir": "/tmp/x",
     "boot": "title" | "css", "max_fps": 60, "freeze_frames": 60, "results_frames": 30, "sudden_death_frames": 120,
     "sudden_death_batches": "menu_first" | "frame_first", "lras": "held" | "press",
     "menu_frame": "scene" | "boot",
     "faults": [{"launch": 1, "kind": "exit" | "hang" | "menu_stall" | "port_taken" | "pause_off"
                 | "wrong_cpu_level" | "wrong_character" | "exit_in_results", "game": 1, "frame": 100}]}

``launch`` counts the starts of this executable (a counter in ``state_dir``), ``game`` the games
of that start (no ``game``: every game); ``{"kind": "version_fail", "call": N}`` makes the N-th
``--version`` fail. Each start writes ``state_dir/launch-N.json`` (its command line and what it
read) and appends what happens to ``state_dir/events.log``.
"""

from __future__ import annotations

import configparser
import fcntl
import json
import os
import select
import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.dolphin_standin.melee_model import Log, Melee  # noqa: E402
from tests.dolphin_standin.pads import Pad  # noqa: E402
from tests.dolphin_standin.spectate import SpectateServer, Spectator  # noqa: E402

# The writes that set EXI_DeviceSlippi.cpp's g_needInputForFrame: receive commands (a game's
# start), a frame bookend, a menu frame.
GAME_START_COMMANDS, FRAME_BOOKEND, MENU_FRAME = 0x35, 0x3C, 0x3E
LOG_ERROR = 2  # Dolphin's log levels (Common/Logging/Log.h): NOTICE 1, ERROR 2, WARNING 3, INFO 4, DEBUG 5
SI_READ_GAP_S = 0.002  # between reading port 1 and the next (a guess: the same poll, a little later)

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
    logger = read_ini(user / "Config" / "Logger.ini")
    verbosity = logger.get("Options", "Verbosity", fallback=None)
    # Ishiiruka's EXI_DeviceSlippi.cpp streams a menu frame (0x3E, libmelee's menu-info code), then falls through
    # to its unknown-command error, logged as an error of the SLIPPI type on every menu frame. Dolphin's logger
    # writes to the console (stderr) unless Logger.ini's WriteToConsole is False; libmelee turns SLIPPI on.
    menu_error = (build in ("ishiiruka", "exiai")
                  and logger.get("Options", "WriteToConsole", fallback="True") != "False"
                  and logger.get("Logs", "SLIPPI", fallback="False") == "True"
                  and int(verbosity or 0) >= LOG_ERROR)
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
    saves = dolphin.get(section, f"{key}SaveReplays", fallback="False") == "True"
    replay_dir = Path(dolphin.get(section, f"{key}ReplayDir", fallback=str(Path.home() / "Slippi"))) if saves else None
    melee = Melee(cfg, ports, log, faults, replay_dir)
    pads = {p: Pad(user / "Pipes" / f"slippibot{p}") for p in ports}
    server = SpectateServer()
    spectators: dict = {}  # ENet peer -> Spectator
    need_input = True  # EXI_DeviceSlippi.cpp's g_needInputForFrame
    next_frame = next_lockstep = time.monotonic()
    max_fps = float(cfg.get("max_fps", 0))  # real Dolphin holds every frame to 60 a second; tests need not
    frames = 0
    while True:
        if host is not None:
            event = host.service(0)
            while event.type != enet.EVENT_TYPE_NONE:
                if event.type == enet.EVENT_TYPE_RECEIVE:
                    msg = json.loads(bytes(event.packet.data))
                    if msg.get("type") == "connect_request":
                        spectator = Spectator()
                        reply = server.connect(spectator, int(msg.get("cursor", 0)))
                        event.peer.send(0, enet.Packet(json.dumps(reply).encode(), enet.PACKET_FLAG_RELIABLE))
                        spectators[event.peer] = spectator
                        log("spectator connected")
                elif event.type == enet.EVENT_TYPE_DISCONNECT:
                    spectators.pop(event.peer, None)
                event = host.service(0)
        fds = [pad.fd for pad in pads.values() if pad.fd is not None and pad.writer]
        if fds:
            select.select(fds, [], [], 0.002)
        else:
            time.sleep(0.002)
        for pad in pads.values():
            pad.read()
        if not spectators and frames == 0:
            continue  # still "booting": real Dolphin takes seconds to reach the menus; no frame is lost
        if max_fps and time.monotonic() < next_lockstep:
            continue
        if blocking and need_input:
            # Ports are polled in order and the first polled one blocks until its own FLUSH
            # (Pipes.cpp selects on that pipe); the FLUSH clears the global flag, so the others are
            # read as they are, a moment later (the game reads its SI channels one after another).
            if not pads or not pads[min(pads)].has_flush():
                continue
            grace = time.monotonic() + SI_READ_GAP_S
            while not all(pad.has_flush() for pad in pads.values()) and time.monotonic() < grace:
                time.sleep(0.0002)
                for pad in pads.values():
                    pad.read()
        elif time.monotonic() < next_frame:
            continue
        next_frame = time.monotonic() + 1 / 60
        if max_fps:
            next_lockstep = time.monotonic() + 1 / max_fps
        flushed = False
        for pad in pads.values():
            flushed |= pad.update()
        if flushed:
            need_input = False
        frames += 1
        if frames == 1 or frames % 600 == 0:
            log(f"frame {frames}: scene 0x{melee.scene:04x}, {len(spectators)} spectator(s)")
        for w in melee.frame(pads):
            if w[0] == "start_game":
                server.start_game()
            elif w[0] == "end_game":
                server.end_game()
            else:  # the Slippi device hands the server one event (command) at a time
                for ev in melee.events(w[1]):
                    server.write(ev)
                    if ev[0] in (GAME_START_COMMANDS, FRAME_BOOKEND, MENU_FRAME):
                        need_input = True
                    if ev[0] == MENU_FRAME and menu_error:
                        print(f"{time.strftime('%H:%M:%S')}:000 Core/HW/EXI_DeviceSlippi.cpp E[SLIPPI]: EXI SLIPPI: "
                              f"Invalid command byte: 0x{MENU_FRAME:02X}", file=sys.stderr, flush=True)
        server.pop_events()
        for peer, spectator in spectators.items():
            for data in server.messages_for(spectator):
                peer.send(0, enet.Packet(data.encode(), enet.PACKET_FLAG_RELIABLE))
        if host is not None:
            host.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
