"""Which options each Dolphin build is started with, chosen from libmelee's own version detection.

The executables here are stand-ins that answer ``--version`` as each build does on Linux
(libmelee's ``get_dolphin_version``: stock Ishiiruka exits 255 with its version on stdout, the
ExiAI build exits 1 with ``Faster Melee - Slippi (x) - ExiAI`` on stderr, mainline exits 0 with
a version containing ``mainline``) and ``--help`` as mainline's two builds do (project-slippi/dolphin:
only ``DolphinNoGUI/MainNoGUI.cpp`` adds ``-p, --platform``; ``DolphinQt/Main.cpp`` opens the
display before it parses anything, so without one it aborts); ``melee.Console`` is built with the
chosen options for real.
"""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import melee
import pytest

from melee_agent.config import DolphinConfig
from melee_agent.dolphin import DolphinEnv, DolphinError, launch_options
from melee_agent.dolphin.display import VirtualDisplay, find_xvfb
from melee_agent.dolphin.iso import disc_header
from melee_agent.dolphin.scenes import scene_console_class

pytestmark = pytest.mark.usefixtures("temp_in_tmp_path")  # libmelee's Dolphin homes: this test's to count, none in /tmp

NO_DISPLAY = 'if [ -z "$DISPLAY" ]; then echo "qt.qpa.xcb: could not connect to display" >&2; exit 134; fi'
VERSIONS = {
    "ishiiruka": "echo 'Faster Melee - Slippi (3.4.0)'; exit 255",
    "exiai": "echo 'Faster Melee - Slippi (3.4.0) - ExiAI' >&2; exit 1",
    "mainline-nogui": 'if [ "$1" = --help ]; then printf "Options:\\n  -u, --user\\n  -p, --platform\\n"; exit 0; fi; '
                      "echo 'Slippi Dolphin mainline 4.0.0'; exit 0",
    "mainline-qt": NO_DISPLAY + '; if [ "$1" = --help ]; then printf "Options:\\n  -u, --user\\n  -b, --batch\\n"; '
                   "exit 0; fi; echo 'Slippi Dolphin mainline 4.0.0'; exit 0",
}
needs_xvfb = pytest.mark.skipif(find_xvfb() is None, reason="Xvfb is not installed (apt-get install xvfb)")


def fake_dolphin(tmp_path: Path, build: str) -> Path:
    exe = tmp_path / f"dolphin-{build}"
    exe.write_text(f"#!/bin/sh\n{VERSIONS[build]}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_dolphin_the_console_leaves_no_dolphin_home_when_it_cannot_start(tmp_path, temp_in_tmp_path):
    # libmelee makes its temporary home before it refuses Null video for the stock build, and
    # leaves it there; the worker's console removes it.
    path = str(fake_dolphin(tmp_path, "ishiiruka"))
    with pytest.raises(ValueError, match="Null video requires mainline or ExiAI"):
        melee.Console(path=path, tmp_home_directory=True, gfx_backend="Null")
    assert len(list(temp_in_tmp_path.glob("libmelee_*"))) == 1  # libmelee's own
    with pytest.raises(ValueError, match="Null video requires mainline or ExiAI"):
        scene_console_class()(path=path, tmp_home_directory=True, gfx_backend="Null")
    assert len(list(temp_in_tmp_path.glob("libmelee_*"))) == 1  # none more


def test_dolphin_the_console_removes_its_dolphin_home_when_stop_fails(tmp_path, temp_in_tmp_path):
    console = scene_console_class()(path=str(fake_dolphin(tmp_path, "exiai")), tmp_home_directory=True)
    assert [Path(console.temp_dir)] == list(temp_in_tmp_path.glob("libmelee_*"))

    class DeadStream:
        def shutdown(self) -> None:
            raise BrokenPipeError("the stream's socket is gone")
    console._slippstream = DeadStream()
    dolphin = console._process = subprocess.Popen(["sleep", "60"])  # as if Dolphin ran
    with pytest.raises(BrokenPipeError):
        console.stop()  # libmelee's stop raises before it kills Dolphin and removes the home
    assert dolphin.poll() is not None and console._process is None  # no Dolphin left running on a deleted home
    assert console.temp_dir is None and not list(temp_in_tmp_path.iterdir())


def test_dolphin_stock_slippi_headless_cannot_take_null_video(tmp_path):
    # What the worker used to ask for: libmelee refuses it for the stock Slippi build.
    with pytest.raises(ValueError, match="Null video requires mainline or ExiAI"):
        melee.Console(path=str(fake_dolphin(tmp_path, "ishiiruka")), tmp_home_directory=True, gfx_backend="Null")


def test_dolphin_stock_slippi_gets_a_private_display_or_one_line_saying_what_to_install(tmp_path, monkeypatch):
    cfg = DolphinConfig(dolphin_path=str(fake_dolphin(tmp_path, "ishiiruka")), headless=True)
    with pytest.raises(DolphinError, match="install Xvfb") as e:
        launch_options(cfg, display="", xvfb="")
    assert "\n" not in str(e.value)
    opts = launch_options(cfg, display=":99", xvfb="")  # the user's own display is used as it is
    assert opts.build == "ishiiruka" and "gfx_backend" not in opts.console and opts.run == {}
    assert not opts.private_display
    console = melee.Console(path=cfg.dolphin_path, tmp_home_directory=True, **opts.console)
    assert not console.is_mainline
    # No DISPLAY but Xvfb at hand: every start gets its own display.
    assert launch_options(cfg, display="", xvfb="/usr/bin/Xvfb").private_display
    # The environment reports the missing Xvfb as a DolphinError, not a libmelee traceback.
    iso = tmp_path / "melee.iso"
    iso.write_bytes(disc_header("GALE01", revision=2))
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-xvfb-here"))
    with pytest.raises(DolphinError, match="install Xvfb"):
        DolphinEnv(DolphinConfig(dolphin_path=cfg.dolphin_path, iso_path=str(iso), headless=True))


def test_dolphin_exiai_build_runs_null_video_with_exi_inputs(tmp_path):
    cfg = DolphinConfig(dolphin_path=str(fake_dolphin(tmp_path, "exiai")), headless=True)
    opts = launch_options(cfg, display="", xvfb="")
    assert opts.build == "exiai" and not opts.private_display
    assert opts.console["gfx_backend"] == "Null" and opts.console["use_exi_inputs"] and opts.console["enable_ffw"]
    console = melee.Console(path=cfg.dolphin_path, tmp_home_directory=True, **opts.console)
    assert console.gfx_backend == "Null"


def test_dolphin_mainline_no_gui_build_uses_the_headless_platform(tmp_path):
    cfg = DolphinConfig(dolphin_path=str(fake_dolphin(tmp_path, "mainline-nogui")), headless=True)
    opts = launch_options(cfg, display="", xvfb="")
    assert opts.build == "mainline-nogui" and opts.console["gfx_backend"] == "Null"
    assert opts.run == {"platform": "headless"} and not opts.private_display
    console = melee.Console(path=cfg.dolphin_path, tmp_home_directory=True, **opts.console)
    assert console.is_mainline
    windowed = launch_options(DolphinConfig(dolphin_path=cfg.dolphin_path, headless=False), display="", xvfb="")
    assert "gfx_backend" not in windowed.console and windowed.run == {}


def test_dolphin_mainline_qt_build_is_never_given_the_platform_option(tmp_path):
    # Slippi's mainline AppImage is the Qt build: --platform is not in its parser (it would exit 2).
    cfg = DolphinConfig(dolphin_path=str(fake_dolphin(tmp_path, "mainline-qt")), headless=True)
    opts = launch_options(cfg, display=":5", xvfb="")
    assert opts.build == "mainline-qt" and opts.run == {} and opts.console["gfx_backend"] == "Null"
    assert not opts.private_display
    with pytest.raises(DolphinError, match="install Xvfb"):
        launch_options(cfg, display="", xvfb="")


@needs_xvfb
def test_dolphin_mainline_qt_without_a_display_is_detected_under_a_throwaway_xvfb(tmp_path, monkeypatch):
    # Its --version aborts with no display; the detection runs it again under an Xvfb of its own.
    monkeypatch.delenv("DISPLAY", raising=False)
    cfg = DolphinConfig(dolphin_path=str(fake_dolphin(tmp_path, "mainline-qt")), headless=True)
    opts = launch_options(cfg)
    assert opts.build == "mainline-qt" and opts.private_display and opts.run == {}


@needs_xvfb
def test_a_virtual_display_starts_on_a_free_number_and_stops():
    a, b = VirtualDisplay(find_xvfb()), VirtualDisplay(find_xvfb())
    try:
        da, db = a.start(), b.start()
        assert da != db and da.startswith(":")
        pa = a.process
        a.stop()
        assert pa.poll() is not None
    finally:
        a.stop(), b.stop()


def test_dolphin_an_unknown_executable_is_named_in_the_error(tmp_path):
    exe = tmp_path / "not-dolphin"
    exe.write_text("#!/bin/sh\necho hello; exit 3\n")
    exe.chmod(0o755)
    with pytest.raises(DolphinError, match="cannot tell which Dolphin"):
        launch_options(DolphinConfig(dolphin_path=str(exe)), display=":1", xvfb="")
