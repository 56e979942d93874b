"""Is ``dolphin.iso_path`` the one Melee that Slippi and libmelee work with? Read its disc header and say.

Slippi's Gecko codes (Ishiiruka's ``Data/Sys/GameSettings/GALE01r2.ini``: "Super Smash Bros. Melee
NTSC-U 1.02") and libmelee's own (``melee/GALE01r2.ini``) exist only for game ``GALE01`` revision 2.
Dolphin applies a game's codes by its id and revision, so a 1.00 or 1.01 disc, a PAL (``GALP01``)
or Japanese (``GALJ01``) one boots with none of them: no spectator stream, and the worker sees only
"silent for N s" restarts that never name the disc. :func:`check_iso` names it in one line.

The GameCube disc header (YAGCD, and Dolphin's ``DiscIO/VolumeGC.cpp``): bytes 0-3 the game code,
4-5 the maker, 6 the disc number, 7 the revision, and at 0x1C the magic word ``0xC2339F3D``.
Besides plain ``.iso``/``.gcm`` images, the header is read from the containers whose first block
can be read without a codec library: CISO (Dolphin's ``CISOBlob.h``: a 0x8000-byte header with a
block map, then the stored blocks) and GCZ (``CompressedBlob.h``: zlib blocks). Other compressed
formats (RVZ, WIA, ...) are reported as unchecked, never refused.

Example::

    >>> h = disc_header("GALE01", revision=2)   # what check_iso accepts: NTSC-U, revision 2
    >>> h[:6], h[7]
    (b'GALE01', 2)
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

from melee_agent.dolphin.errors import DolphinError

GC_MAGIC = 0xC2339F3D  # at 0x1C of every GameCube disc header
WANT = ("GALE01", 2)  # NTSC-U, revision 2 = 1.02
REGIONS = {"GALE01": "NTSC-U", "GALJ01": "NTSC-J", "GALP01": "PAL"}
CISO_MAGIC, CISO_HEADER_SIZE = b"CISO", 0x8000
GCZ_MAGIC = 0xB10BC001
OTHER_CONTAINERS = {b"RVZ\x01": "RVZ", b"WIA\x01": "WIA", b"WBFS": "WBFS"}


def disc_header(game_id: str, revision: int) -> bytes:
    """The first 0x20 bytes of a GameCube disc with this id and revision (for tests and examples)."""
    return game_id.encode() + bytes([0, revision]) + bytes(0x14) + struct.pack(">I", GC_MAGIC)


def read_header(path: str | Path) -> bytes | None:
    """The disc's first 0x20 bytes, or None where the image is a container this module cannot open."""
    with open(path, "rb") as f:
        head = f.read(CISO_HEADER_SIZE)
        if head[:4] == CISO_MAGIC:
            # Block 0 holds the disc's start when the map says it is stored (it is then the first one).
            if len(head) < 9 or head[8] != 1:
                return None
            f.seek(CISO_HEADER_SIZE)
            return f.read(0x20)
        if len(head) >= 32 and struct.unpack_from("<I", head)[0] == GCZ_MAGIC:
            return _gcz_first_block(f, head)
    if head[:4] in OTHER_CONTAINERS:
        return None
    return head[:0x20]


def _gcz_first_block(f, head: bytes) -> bytes | None:
    _, _, compressed_size, _, block_size, num_blocks = struct.unpack_from("<IIQQII", head)
    if num_blocks == 0:
        return None
    f.seek(32)
    pointers = struct.unpack(f"<{min(num_blocks, 2)}Q", f.read(8 * min(num_blocks, 2)))
    data_start = 32 + num_blocks * 8 + num_blocks * 4
    uncompressed = bool(pointers[0] & (1 << 63))
    start = pointers[0] & ~(1 << 63)
    end = (pointers[1] & ~(1 << 63)) if num_blocks > 1 else compressed_size
    f.seek(data_start + start)
    block = f.read(max(0, end - start))
    if uncompressed:
        return block[:0x20]
    try:
        return zlib.decompressobj().decompress(block, 0x20)
    except zlib.error:
        return None


def check_iso(path: str | Path) -> str | None:
    """None if ``path`` is Melee NTSC 1.02; a warning when its format cannot be read here;
    a :class:`DolphinError` naming what the disc is otherwise."""
    where = f"dolphin.iso_path {str(path)!r}"
    try:
        header = read_header(path)
    except OSError as e:
        raise DolphinError(f"{where} cannot be read ({e.strerror or e})") from None
    if header is None:
        kind = _container_name(path)
        return (f"{where} is a {kind} image whose disc header cannot be read here: make sure it is Melee NTSC 1.02 "
                "(GALE01 revision 2), the only version Slippi's and libmelee's codes support")
    if len(header) < 0x20 or struct.unpack_from(">I", header, 0x1C)[0] != GC_MAGIC:
        raise DolphinError(f"{where} is not a GameCube disc image (no disc header): point it at your NTSC 1.02 "
                           "Melee ISO")
    game_id = header[:6].decode("ascii", "replace")
    revision = header[7]
    if (game_id, revision) == WANT:
        return None
    if game_id in REGIONS:
        what = f"Melee {REGIONS[game_id]}" + (f" 1.0{revision}" if game_id != "GALP01" else "")
        raise DolphinError(f"{where} is {what} ({game_id} revision {revision}): Slippi and libmelee need NTSC 1.02 "
                           "(GALE01 revision 2); their codes do nothing on another version, and Dolphin then "
                           "streams no frames")
    raise DolphinError(f"{where} is not Melee (game id {game_id!r}): point it at your NTSC 1.02 Melee ISO")


def _container_name(path: str | Path) -> str:
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic in OTHER_CONTAINERS:
        return OTHER_CONTAINERS[magic]
    if magic == CISO_MAGIC:
        return "CISO (its first block not stored)"
    return "compressed GCZ"
