"""Frames from the clock's thread to every connected page: one asyncio queue per WebSocket, fed thread-safely.

A page that falls behind (a slow tab) loses its oldest frames, not the newest: a queue keeps at most
:data:`KEEP` frames.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

KEEP = 30  # frames a slow page may have waiting (half a second)


class Hub:
    def __init__(self) -> None:
        self._pages: set[asyncio.Queue[str]] = set()
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def connected(self) -> int:
        return len(self._pages)

    def join(self) -> asyncio.Queue[str]:
        self.loop = asyncio.get_running_loop()
        q: asyncio.Queue[str] = asyncio.Queue()
        self._pages.add(q)
        return q

    def leave(self, q: asyncio.Queue[str]) -> None:
        self._pages.discard(q)

    def emit(self, message: dict[str, Any]) -> None:
        """From any thread: hand ``message`` to every page."""
        loop = self.loop
        if loop is None or not self._pages or loop.is_closed():
            return
        text = json.dumps(message, separators=(",", ":"))
        for q in list(self._pages):
            loop.call_soon_threadsafe(_put, q, text)


def _put(q: asyncio.Queue[str], text: str) -> None:
    while q.qsize() >= KEEP:
        q.get_nowait()
    q.put_nowait(text)


__all__ = ["Hub", "KEEP"]
