"""Which options each Dolphin build is started with, chosen from libmelee's own version detection.

The executables here are stand-ins that answer ``--version`` as each build does on Linux
(libmelee's ``get_dolphin_version``: stock Ishiiruka exits 255 with its version on stdout, the
ExiAI build exits 1 with ``Faster Melee - Slippi (x) - ExiAI`` on stderr, mainline exits 0 with
a version containing ``mainline``); ``melee.Console`` is built with the chosen options for real.
"""

from __future__ import annotations

import stat
from pathlib import Path

import melee
import pytest

from melee_agent.config import DolphinConfig
from melee_agent.dolphin import DolphinEnv, DolphinError, launch_options
from melee_agent.dolphin.iso import disc_header

VERSIONS = {
    "ishiiruka": "echo 'Faster Melee - Slippi (3.4.0)'; exit 255",
    "exiai": "echo 'Faster Melee - Slippi (3.4.0) - ExiAI' >&2; exit 1",
    "mainline": "echo 'Slippi Dolphin mainline 4.0.0'; exit 0",
}


def fake_dolphin(tmp_path: Path, build: str) -> Path:
    exe = tmp_path / f"dolphin-{build}"
    exe.write_text(f"#!/bin/sh\n{VERSIONS[build]}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_dolphin_stock_slippi_headless_cannot_take_null_video(tmp_path):
    # What the worker used to ask for: libmelee refuses it for the stock Slippi build.
    with pytest.raises(ValueError, match="Null video requires mainline or ExiAI"):
        melee.Console(path=str(fake_dolphin(tmp_path, "ishiiruka")), tmp_home_directory=True, gfx_backend="Null")


def test_dolphin_stock_slippi_needs_a_display_and_says_so_in_one_line(tmp_path, monkeypatch):
    cfg = DolphinConfig(dolphin_path=str(fake_dolphin(tmp_path, "ishiiruka")), headless=True)
    with pytest.raises(DolphinError, match="Xvfb") as e:
        launch_options(cfg, display="")
    assert "\n" not in str(e.value)
    opts = launch_options(cfg, display=":99")
    assert opts.build == "ishiiruka" and "gfx_backend" not in opts.console and opts.run == {}
    console = melee.Console(path=cfg.dolphin_path, tmp_home_directory=True, **opts.console)
    assert not console.is_mainline
    # The environment reports the same error as a DolphinError, not a libmelee traceback.
    iso = tmp_path / "melee.iso"
    iso.write_bytes(disc_header("GALE01", revision=2))
    monkeypatch.delenv("DISPLAY", raising=False)
    with pytest.raises(DolphinError, match="Xvfb"):
        DolphinEnv(DolphinConfig(dolphin_path=cfg.dolphin_path, iso_path=str(iso), headless=True))


def test_dolphin_exiai_build_runs_null_video_with_exi_inputs(tmp_path):
    cfg = DolphinConfig(dolphin_path=str(fake_dolphin(tmp_path, "exiai")), headless=True)
    opts = launch_options(cfg, display="")
    assert opts.build == "exiai"
    assert opts.console["gfx_backend"] == "Null" and opts.console["use_exi_inputs"] and opts.console["enable_ffw"]
    console = melee.Console(path=cfg.dolphin_path, tmp_home_directory=True, **opts.console)
    assert console.gfx_backend == "Null"


def test_dolphin_mainline_headless_uses_the_headless_platform(tmp_path):
    cfg = DolphinConfig(dolphin_path=str(fake_dolphin(tmp_path, "mainline")), headless=True)
    opts = launch_options(cfg, display="")
    assert opts.build == "mainline" and opts.console["gfx_backend"] == "Null" and opts.run == {"platform": "headless"}
    console = melee.Console(path=cfg.dolphin_path, tmp_home_directory=True, **opts.console)
    assert console.is_mainline
    windowed = launch_options(DolphinConfig(dolphin_path=cfg.dolphin_path, headless=False), display="")
    assert "gfx_backend" not in windowed.console and windowed.run == {}


def test_dolphin_an_unknown_executable_is_named_in_the_error(tmp_path):
    exe = tmp_path / "not-dolphin"
    exe.write_text("#!/bin/sh\necho hello; exit 3\n")
    exe.chmod(0o755)
    with pytest.raises(DolphinError, match="cannot tell which Dolphin"):
        launch_options(DolphinConfig(dolphin_path=str(exe)), display=":1")
