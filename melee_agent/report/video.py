"""Writing drawn frames to a GIF or an MP4 as they come (the format picked by the file's extension), atomically.

Frames are streamed, never held: a whole 8-minute game is 14,400 frames at 30 fps, gigabytes as
images. The file is written under a temp name in its folder and renamed once complete
(:func:`melee_agent.io.files.atomic_output`), so an interrupted run leaves no half-written video.

* GIF: one global palette (given, e.g. :func:`melee_agent.report.watch.palette_image`, else the first
  frame's 255 commonest colours; entry 255 is left for transparency), so each frame after the first
  stores only the rectangle that changed, with its unchanged pixels transparent (LZW packs those
  runs to almost nothing). Pillow encodes each frame (``GifImagePlugin.getdata``); the header and
  trailer are written here. GIF delays are in hundredths of a second, so the delays alternate
  (3, 3, 4 at 30 fps) to keep the clip's length right.
* MP4 (H.264): matplotlib's ``FFMpegWriter`` running :func:`ffmpeg_path`'s ffmpeg: one on PATH, else the
  static build ``imageio-ffmpeg`` ships (the ``video`` extra), so MP4 works without a system ffmpeg.

Example::

    >>> import tempfile, pathlib
    >>> from PIL import Image
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "two.gif"
    >>> with open_video(out, (8, 4), fps=30) as video:
    ...     video.add(Image.new("RGB", (8, 4), (16, 21, 34))); video.add(Image.new("RGB", (8, 4), (229, 45, 45)))
    >>> im = Image.open(out); im.n_frames, im.size
    (2, (8, 4))
"""

from __future__ import annotations

import shutil
import struct
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator, Protocol

import numpy as np
from PIL import GifImagePlugin, Image

from melee_agent.io.files import atomic_output
from melee_agent.extras import install_hint

FORMATS = (".gif", ".mp4")
MAX_FPS = 60  # the game's own frame rate: more would repeat frames
MAX_GIF_FPS = 50  # browsers play delays under 2/100 s as 1/10 s
TRANSPARENT = 255  # the GIF palette entry that means "unchanged since the last frame"


class VideoWriter(Protocol):
    def add(self, frame: Image.Image) -> None:
        """Append one RGB frame of the writer's size."""

    def hold_last(self, ms: int) -> None:
        """Show the last frame this much longer (where the format has per-frame delays)."""

    def finish(self) -> None:
        """Complete the file."""

    def abort(self) -> None:
        """Stop after an error (the temp file is removed by the caller)."""


def video_format(path: str | Path) -> str:
    """``.gif`` or ``.mp4``, from ``path``'s extension; ValueError for any other."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"unknown extension {suffix or '(none)'!r}: use .gif or .mp4")
    return suffix


def check_fps(fmt: str, fps: int) -> None:
    top = MAX_GIF_FPS if fmt == ".gif" else MAX_FPS
    if not 1 <= fps <= top:
        why = " (browsers slow shorter GIF delays; use .mp4 for 60)" if fmt == ".gif" else ""
        raise ValueError(f"must be 1-{top} for {fmt}{why}; got {fps}")


def ffmpeg_path() -> str | None:
    """The ffmpeg that MP4 output runs: one on PATH first (the user's own), else ``imageio-ffmpeg``'s bundled
    build; None where neither is there (``imageio-ffmpeg`` has no build for every platform)."""
    found = shutil.which("ffmpeg")
    if found:
        return found
    try:
        import imageio_ffmpeg  # noqa: PLC0415 (only MP4 needs it)

        return imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError):  # RuntimeError: no bundled binary for this platform
        return None


def ffmpeg_available() -> bool:
    return ffmpeg_path() is not None


NO_FFMPEG = ("writing MP4 needs ffmpeg: none on PATH and none bundled (the 'video' extra bundles one: "
             f"{install_hint('video')}; or install ffmpeg); or write a .gif")


@contextmanager
def open_video(path: str | Path, size: tuple[int, int], fps: int,
               palette: Image.Image | None = None) -> Iterator[VideoWriter]:
    """``with open_video(path, size, fps) as video: video.add(frame)``; the file appears, whole, on exit.

    ``palette`` (a ``P`` image, GIF only): the colours every frame is mapped to; entry 255 must be unused.
    """
    fmt = video_format(path)
    check_fps(fmt, fps)
    if fmt == ".mp4" and not ffmpeg_available():
        raise ValueError(NO_FFMPEG)
    with atomic_output(path) as tmp:
        writer: VideoWriter = GifWriter(tmp, size, fps, palette) if fmt == ".gif" else Mp4Writer(tmp, size, fps)
        try:
            yield writer
        except BaseException:
            writer.abort()
            raise
        writer.finish()


class GifWriter:
    """A looping GIF, written frame by frame (see the module's docstring)."""

    def __init__(self, path: Path, size: tuple[int, int], fps: int, palette: Image.Image | None = None):
        self.size, self.fps = size, fps
        self._palette = palette
        self._f: BinaryIO = open(path, "wb")  # noqa: SIM115 (closed by finish or abort)
        self._prev: np.ndarray | None = None
        self._pending: tuple[Image.Image, tuple[int, int], int | None] | None = None
        self._count = 0
        self._hold = 0

    def _header(self, palette: Image.Image) -> None:
        w, h = self.size
        colors = palette.getpalette() or []
        pal = bytes(colors[:768]) + bytes(768 - min(len(colors), 768))
        # Logical screen: a global 256-colour table (flags 0xF7), background index 0, square pixels.
        self._f.write(b"GIF89a" + struct.pack("<HHBBB", w, h, 0xF7, 0, 0) + pal)
        # NETSCAPE2.0 application extension: loop forever.
        self._f.write(b"!\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", 0) + b"\x00")

    def _delay_ms(self, j: int) -> int:
        """Frame j's delay: whole hundredths of a second that add up to j / fps."""
        return 10 * ((j + 1) * 100 // self.fps - j * 100 // self.fps)

    def add(self, frame: Image.Image) -> None:
        if frame.size != self.size:
            raise ValueError(f"frame size {frame.size} differs from the video's {self.size}")
        rgb = frame.convert("RGB")
        if self._palette is None:
            self._palette = rgb.quantize(colors=TRANSPARENT)  # entries 0-254: 255 stays free
        if self._prev is None:
            self._header(self._palette)
        p = rgb.quantize(palette=self._palette, dither=Image.Dither.NONE)
        a = np.array(p, dtype=np.uint8)
        if self._prev is None:
            part, offset, transparency = p, (0, 0), None
        else:
            changed = a != self._prev
            rows, cols = np.flatnonzero(changed.any(1)), np.flatnonzero(changed.any(0))
            if rows.size == 0:  # nothing changed: one transparent pixel still makes a frame
                r0, r1, c0, c1 = 0, 1, 0, 1
            else:
                r0, r1, c0, c1 = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
            crop = np.where(changed[r0:r1, c0:c1], a[r0:r1, c0:c1], TRANSPARENT).astype(np.uint8)
            part = Image.fromarray(crop)  # an L image of palette indices...
            part.putpalette(self._palette.getpalette())  # ...made a P image with the video's palette
            offset, transparency = (int(c0), int(r0)), TRANSPARENT
        self._flush()
        self._pending = (part, offset, transparency)
        self._prev = a

    def _flush(self, extra_ms: int = 0) -> None:
        if self._pending is None:
            return
        part, offset, transparency = self._pending
        params = {"duration": self._delay_ms(self._count) + extra_ms, "disposal": 1}  # 1: leave it in place
        if transparency is not None:
            params["transparency"] = transparency
        for chunk in GifImagePlugin.getdata(part, offset=offset, **params):
            self._f.write(chunk)
        self._count += 1
        self._pending = None

    def hold_last(self, ms: int) -> None:
        self._hold = int(ms)

    def finish(self) -> None:
        self._flush(self._hold)
        self._f.write(b";")  # trailer
        self._f.close()

    def abort(self) -> None:
        self._f.close()


class Mp4Writer:
    """An H.264 MP4 through matplotlib's FFMpegWriter: each frame shown pixel for pixel in a figure of its size."""

    def __init__(self, path: Path, size: tuple[int, int], fps: int):
        import matplotlib  # noqa: PLC0415
        from matplotlib.animation import FFMpegWriter  # noqa: PLC0415
        from matplotlib.figure import Figure  # noqa: PLC0415 (no pyplot: no GUI backend)

        w, h = size
        self.size = size
        # One pixel per inch: whole-number inches, which FFMpegWriter's even-size check keeps as they are
        # (at 100 dpi it turns 510 pixels into 508).
        dpi = 1
        self._fig = Figure(figsize=(w / dpi, h / dpi), dpi=dpi)
        self._image = self._fig.figimage(np.zeros((h, w, 3), np.uint8), origin="upper")
        self._writer = FFMpegWriter(fps=fps)
        # FFMpegWriter starts the ffmpeg named by this rcParam when it sets up (a bare "ffmpeg" by default).
        with matplotlib.rc_context({"animation.ffmpeg_path": ffmpeg_path() or "ffmpeg"}):
            self._writer.setup(self._fig, str(path), dpi=dpi)

    def add(self, frame: Image.Image) -> None:
        if frame.size != self.size:
            raise ValueError(f"frame size {frame.size} differs from the video's {self.size}")
        self._image.set_data(np.asarray(frame.convert("RGB")))
        self._writer.grab_frame()

    def hold_last(self, ms: int) -> None:
        """An MP4 plays at one rate: nothing to hold (the player stops on the last frame)."""

    def finish(self) -> None:
        self._writer.finish()

    def abort(self) -> None:
        proc = getattr(self._writer, "_proc", None)
        if proc is not None:
            proc.kill()
            proc.wait()
