"""Reading a safetensors file's header without its tensors: what model files and experience batches
are checked against before anything is loaded.

The format: a little-endian u64 ``n``, then ``n`` bytes of JSON (tensor names to dtype, shape and
offsets, plus ``__metadata__``: string to string), then the tensor data.

Example::

    >>> from safetensors.numpy import save
    >>> import numpy as np
    >>> read_header(save({"x": np.zeros(2, np.float32)}, metadata={"k": "v"}))["__metadata__"]
    {'k': 'v'}
"""

from __future__ import annotations

import json
import struct
from typing import Any

#: A header larger than this is refused before it is parsed (real ones are a few hundred bytes).
MAX_HEADER_BYTES = 1_000_000


class HeaderError(ValueError):
    """The bytes are not a safetensors file; the message says why, starting "not a safetensors file"."""


def read_header(data: bytes) -> dict[str, Any]:
    """The parsed JSON header of safetensors bytes; raises :class:`HeaderError` naming the problem."""
    if len(data) < 8:
        raise HeaderError(f"not a safetensors file: {len(data)} bytes is shorter than its 8-byte header length")
    (n,) = struct.unpack("<Q", data[:8])
    if n == 0 or n > len(data) - 8 or n > MAX_HEADER_BYTES:
        raise HeaderError(f"not a safetensors file: header length {n} does not fit a {len(data)}-byte body")
    try:
        header = json.loads(data[8:8 + n])
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise HeaderError("not a safetensors file: its header is not JSON") from None
    if not isinstance(header, dict):
        raise HeaderError("not a safetensors file: its header is not a JSON object")
    return header


def read_metadata(data: bytes) -> dict[str, str]:
    """The ``__metadata__`` strings of safetensors bytes (empty when there are none)."""
    meta = read_header(data).get("__metadata__") or {}
    if not isinstance(meta, dict):
        raise HeaderError("not a safetensors file: its __metadata__ is not a JSON object")
    return dict(meta)
