"""HTTP client for the manager's API: models by ETag, uploads with retry on 429 and dropped links."""

from __future__ import annotations

import logging
import os
import time
from typing import Any

import httpx

log = logging.getLogger("melee_agent.client")


class ManagerError(RuntimeError):
    """The manager refused a request (4xx) or could not be reached after retries."""


class ManagerClient:
    def __init__(self, url: str, token: str | None = None, timeout: float = 30.0, retries: int = 8):
        self.url = url.rstrip("/")
        token = token if token is not None else os.environ.get("MELEE_AGENT_TOKEN")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout)
        self.retries = retries

    def _request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        delay = 0.5
        for attempt in range(self.retries + 1):
            try:
                r = self.http.request(method, path, **kw)
            except httpx.TransportError as e:
                if attempt == self.retries:
                    raise ManagerError(f"{method} {self.url}{path}: manager unreachable ({e})") from None
                log.warning("%s %s: %s; retrying in %.1f s", method, path, e, delay)
                time.sleep(delay)
                delay = min(delay * 2, 10.0)
                continue
            if r.status_code == 429 and attempt < self.retries:
                wait = float(r.headers.get("retry-after", delay))
                time.sleep(wait)
                continue
            if r.status_code >= 400:
                try:
                    detail = r.json().get("detail", r.text)
                except ValueError:
                    detail = r.text
                raise ManagerError(f"{method} {path}: {r.status_code} {detail}")
            return r
        raise ManagerError(f"{method} {path}: still busy (429) after {self.retries} retries")

    def model(self, etag: str | None = None) -> tuple[bytes | None, str | None, dict[str, str]]:
        """The current model file; ``(None, etag, headers)`` when ``etag`` is still current (304)."""
        headers = {"If-None-Match": etag} if etag else {}
        r = self._request("GET", "/v1/model", headers=headers)
        if r.status_code == 304:
            return None, etag, dict(r.headers)
        return r.content, r.headers.get("etag"), dict(r.headers)

    def meta(self) -> dict[str, Any]:
        return self._request("GET", "/v1/model/meta").json()

    def status(self) -> dict[str, Any]:
        return self._request("GET", "/v1/status").json()

    def upload(self, data: bytes) -> dict[str, Any]:
        return self._request("POST", "/v1/experience", content=data,
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
