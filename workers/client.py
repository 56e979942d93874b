"""HTTP client for the manager's API: models by ETag, uploads, status.

Failures come in two kinds, so callers can tell "try again later" from "this will never work":
:class:`ManagerUnavailable` (unreachable, 429, 5xx) and :class:`ManagerRefused` (any other 4xx).
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

import httpx

from melee_agent.manager.status import ManagerStatus

log = logging.getLogger("melee_agent.client")


class ManagerError(RuntimeError):
    """The manager refused a request (4xx) or could not be reached after retries."""


class ManagerUnavailable(ManagerError):
    """Unreachable, busy (429) or failing (5xx): worth another try later, after ``retry_after`` if given."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class ManagerRefused(ManagerError):
    """A 4xx other than 429: the request itself is wrong, and sending it again will not help."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def _retry_after(r: httpx.Response) -> float | None:
    try:
        return float(r.headers["retry-after"])
    except (KeyError, ValueError):
        return None


class ManagerClient:
    def __init__(self, url: str, token: str | None = None, timeout: float = 30.0, retries: int = 8):
        self.url = url.rstrip("/")
        token = token if token is not None else os.environ.get("MELEE_AGENT_TOKEN")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=self.url, headers=headers, timeout=httpx.Timeout(timeout, connect=5.0))
        self.retries = retries

    def _request(self, method: str, path: str, retries: int | None = None, **kw: Any) -> httpx.Response:
        """One request, tried ``retries`` more times (default: the client's) while the manager is
        unavailable; raises :class:`ManagerUnavailable` or :class:`ManagerRefused`."""
        retries = self.retries if retries is None else retries
        delay = 0.5
        for attempt in range(retries + 1):
            last = attempt == retries
            try:
                r = self.http.request(method, path, **kw)
            except httpx.TransportError as e:
                if last:
                    raise ManagerUnavailable(f"{method} {self.url}{path}: manager unreachable ({e})") from None
                log.warning("%s %s: %s; retrying in %.1f s", method, path, e, delay)
                time.sleep(delay)
                delay = min(delay * 2, 10.0)
                continue
            if r.status_code == 429 or r.status_code >= 500:
                if last:
                    raise ManagerUnavailable(f"{method} {path}: {r.status_code} {_detail(r)}", _retry_after(r))
                time.sleep(_retry_after(r) or delay)
                delay = min(delay * 2, 10.0)
                continue
            if r.status_code >= 400:
                raise ManagerRefused(f"{method} {path}: {r.status_code} {_detail(r)}", r.status_code)
            return r
        raise AssertionError("unreachable")

    def model(self, etag: str | None = None, retries: int | None = None
              ) -> tuple[bytes | None, str | None, dict[str, str]]:
        """The current model file; ``(None, etag, headers)`` when ``etag`` is still current (304)."""
        headers = {"If-None-Match": etag} if etag else {}
        r = self._request("GET", "/v1/model", retries=retries, headers=headers)
        if r.status_code == 304:
            return None, etag, dict(r.headers)
        return r.content, r.headers.get("etag"), dict(r.headers)

    def meta(self) -> dict[str, Any]:
        return self._request("GET", "/v1/model/meta").json()

    def status(self) -> ManagerStatus:
        return ManagerStatus.from_json(self._request("GET", "/v1/status").json())

    def upload(self, data: bytes, retries: int | None = None) -> dict[str, Any]:
        """POST one batch: ``{"accepted": n}``, or ``{"accepted": 0, "duplicate": true}`` for a batch
        the manager already holds."""
        return self._request("POST", "/v1/experience", retries=retries, content=data,
                             headers={"Content-Type": "application/octet-stream"}).json()

    def wait_ready(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.http.get("/readyz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise ManagerError(f"{self.url} was not ready within {timeout:.0f} s")
            time.sleep(0.5)

    def close(self) -> None:
        self.http.close()


def _detail(r: httpx.Response) -> str:
    try:
        return str(r.json().get("detail", r.text))
    except (ValueError, AttributeError):
        return r.text[:300]
