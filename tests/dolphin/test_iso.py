"""The ISO check: Slippi's and libmelee's codes exist for Melee NTSC 1.02 only, so any other disc is
named in one line before Dolphin starts (it would otherwise stream nothing and read as a hang).

Disc images are built byte by byte from the GameCube header layout (and, for GCZ and CISO, from
Dolphin's container layouts), so the reader is checked against the formats, not against itself.
"""

from __future__ import annotations

import struct
import zlib

import pytest

from melee_agent.config import DolphinConfig
from melee_agent.dolphin import DolphinError, check_paths
from melee_agent.dolphin import iso as iso_module
from melee_agent.dolphin.iso import check_iso, disc_header
from tests.examples_kit import examples_failed


def image(tmp_path, name: str, data: bytes):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_ntsc_1_02_passes_and_other_versions_are_named(tmp_path):
    assert check_iso(image(tmp_path, "ok.iso", disc_header("GALE01", 2) + bytes(4096))) is None
    cases = {
        ("GALE01", 0): "Melee NTSC-U 1.00 (GALE01 revision 0)",
        ("GALE01", 1): "Melee NTSC-U 1.01 (GALE01 revision 1)",
        ("GALP01", 0): "Melee PAL (GALP01 revision 0)",
        ("GALJ01", 2): "Melee NTSC-J 1.02 (GALJ01 revision 2)",
        ("GMSE01", 0): "not Melee (game id 'GMSE01')",
    }
    for (gid, rev), said in cases.items():
        with pytest.raises(DolphinError) as e:
            check_iso(image(tmp_path, f"{gid}{rev}.iso", disc_header(gid, rev) + bytes(64)))
        assert said in str(e.value) and "\n" not in str(e.value)
        if gid.startswith("GAL"):
            assert "need NTSC 1.02" in str(e.value)
    with pytest.raises(DolphinError, match="not a GameCube disc image"):
        check_iso(image(tmp_path, "zeros.iso", bytes(4096)))
    with pytest.raises(DolphinError, match="not a GameCube disc image"):
        check_iso(image(tmp_path, "short.iso", b"GALE01"))


def test_gcz_and_ciso_headers_are_read_and_other_containers_only_warned(tmp_path):
    disc = disc_header("GALE01", 0) + bytes(0x4000 - 0x20)
    # GCZ (Dolphin CompressedBlob.h): 32-byte header, u64 block pointers, u32 hashes, zlib blocks.
    block = zlib.compress(disc)
    gcz = struct.pack("<IIQQII", 0xB10BC001, 0, len(block), len(disc), len(disc), 1) + struct.pack("<Q", 0) \
        + struct.pack("<I", zlib.adler32(block)) + block
    with pytest.raises(DolphinError, match="NTSC-U 1.00"):
        check_iso(image(tmp_path, "melee.gcz", gcz))
    # CISO (Dolphin CISOBlob.h): "CISO", block size, a 0x8000-byte header with the block map, then blocks.
    ciso_head = b"CISO" + struct.pack("<I", 0x4000) + b"\x01" + bytes(0x8000 - 9)
    assert check_iso(image(tmp_path, "melee.ciso", ciso_head + disc_header("GALE01", 2) + bytes(64))) is None
    for magic, kind in ((b"RVZ\x01", "RVZ"), (b"WIA\x01", "WIA")):
        warning = check_iso(image(tmp_path, f"melee.{kind.lower()}", magic + bytes(256)))
        assert warning and kind in warning and "cannot be read here" in warning


def test_check_paths_refuses_a_1_00_disc_before_dolphin_starts(tmp_path):
    exe = tmp_path / "Slippi_Online-x86_64.AppImage"
    exe.write_text("#!/bin/sh\nexit 0\n")
    iso = image(tmp_path, "melee.iso", disc_header("GALE01", 0) + bytes(64))
    with pytest.raises(DolphinError, match="revision 0"):
        check_paths(DolphinConfig(dolphin_path=str(exe), iso_path=str(iso)))


def test_module_example_runs():
    assert examples_failed(iso_module) == 0
