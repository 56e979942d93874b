"""Puts a stand-in Dolphin executable (and its ``EXE.json`` settings) into a folder for a test."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from melee_agent.dolphin.iso import disc_header

STANDIN = Path(__file__).resolve().parent / "standin.py"


def install_standin(folder: Path, replays: list[str | Path], build: str = "mainline", faults: list[dict] | None = None,
                    frames_limit: int | None = None, css_start: dict | None = None,
                    name: str = "Slippi_Dolphin-x86_64.AppImage", **settings) -> Path:
    """An executable at ``folder/name`` that libmelee launches as Dolphin; state and logs in ``folder/state``.

    ``settings`` go into its ``EXE.json`` as they are (``boot``, ``freeze_frames``, ``lras``...: see standin.py).
    """
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text(f'#!/bin/sh\nSTANDIN_EXE="$0" exec {sys.executable} {STANDIN} "$@"\n')
    exe.chmod(0o755)
    cfg = {"build": build, "replays": [str(p) for p in replays], "faults": faults or [],
           "state_dir": str(folder / "state")}
    if frames_limit:
        cfg["frames_limit"] = frames_limit
    if css_start:
        cfg["css_start"] = css_start
    cfg.update(settings)
    Path(str(exe) + ".json").write_text(json.dumps(cfg))
    # Only its disc header is read (by the worker's ISO check): the stand-in has no emulator.
    (folder / "melee.iso").write_bytes(disc_header("GALE01", revision=2) + bytes(0x400))
    return exe


def events(folder: Path) -> list[str]:
    path = folder / "state" / "events.log"
    return path.read_text().splitlines() if path.exists() else []


def launches(folder: Path) -> list[dict]:
    state = folder / "state"
    return [json.loads((state / f"launch-{i}.json").read_text())
            for i in range(1, 100) if (state / f"launch-{i}.json").exists()]
