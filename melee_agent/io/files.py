"""Writing files so that a crash never leaves one half-written: a temp file, fsync, then a rename.

Example::

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> atomic_write_json(d / "x.json", {"a": 1}); (d / "x.json").read_text()
    '{\\n  "a": 1\\n}\\n'
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


def _read_umask() -> int:
    umask = os.umask(0)  # the only way to read it is to set it: done once, at import, before any thread starts
    os.umask(umask)
    return umask


_UMASK = _read_umask()


def _temp_beside(path: Path, suffix: str) -> Path:
    """A new empty temp file in ``path``'s folder (made if missing), with the permissions any new file gets.

    An error names ``path``, the file the user asked for, not the hidden temp name.
    """
    if path.name in ("", ".", "..") or path.is_dir():
        raise cannot_write(path, IsADirectoryError(21, "it is a folder, not a file name"))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    except OSError as e:
        raise cannot_write(path, e) from None
    os.close(fd)
    try:
        os.chmod(name, 0o666 & ~_UMASK)  # mkstemp makes it private (0600); the file made should be as any other
    except OSError as e:
        os.unlink(name)
        raise cannot_write(path, e) from None
    return Path(name)


def cannot_write(path: str | os.PathLike, e: OSError) -> OSError:
    """``e`` again (its type kept: PermissionError, ...), its message naming ``path`` (also its ``path``)."""
    err = type(e)(e.errno, f"cannot write {path}: {e.strerror or e}")
    err.path = str(path)  # type: ignore[attr-defined]
    return err


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `path` through a temp file in the same folder and a rename."""
    path = Path(path)
    tmp = _temp_beside(path, ".tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        tmp.unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise cannot_write(path, e) from None
        raise


def atomic_write_json(path: str | os.PathLike, obj: Any) -> None:
    atomic_write_bytes(path, (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode())


@contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[Path]:
    """``with atomic_output(path) as tmp:`` write ``tmp`` (any way: a writer, a child process); on
    success it is fsynced and renamed to ``path``, on an error removed. ``tmp`` sits in ``path``'s
    folder (a rename across file systems is not atomic) and keeps its extension (tools such as
    ffmpeg pick the format from it)."""
    path = Path(path)
    tmp = _temp_beside(path, f".tmp{path.suffix}")
    try:
        yield tmp
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    try:
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise cannot_write(path, e) from None
